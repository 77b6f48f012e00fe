"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

from synthesis.config import Profile, envfoundry_home, get_profile
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export import warehouse


class BuildSettings(dg.ConfigurableResource):
    """One build's knobs. Defaults come from the environment so the UI and the CLI agree."""

    profile: str = "default"
    seed: int = 0
    home: str = "var"
    sandbox_backend: str = "auto"
    # A topics.json of your own; empty means the shipped data/topics.json, "none" no catalogue
    # (only the environments given in `envs`).
    catalogue: str = ""
    # Foreign environment sources (`file.py`, `file.py:Class`, a directory, `pkg.mod:Class`).
    envs: list[str] = []

    @classmethod
    def from_env(cls) -> BuildSettings:
        return cls(
            profile=os.environ.get("ENVFOUNDRY_PROFILE", "default"),
            seed=int(os.environ.get("ENVFOUNDRY_SEED", "0")),
            home=str(envfoundry_home()),
            sandbox_backend=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
            catalogue=os.environ.get("ENVFOUNDRY_CATALOGUE", ""),
            envs=envs_from_env(),
        )

    @property
    def profile_obj(self) -> Profile:
        return get_profile(self.profile)

    @property
    def catalogue_path(self) -> Path | None:
        if self.catalogue.lower() == "none":
            return None
        return Path(self.catalogue) if self.catalogue else CATALOGUE_PATH

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve()

    @property
    def warehouse_path(self) -> Path:
        return warehouse.warehouse_path(self.home_path)

    @property
    def shards_dir(self) -> Path:
        return self.home_path / "shards"

    @property
    def reports_dir(self) -> Path:
        return self.home_path / "reports"


def envs_from_env() -> list[str]:
    """`ENVFOUNDRY_ENVS`: a JSON list of environment sources (what `--envs` sets)."""
    raw = os.environ.get("ENVFOUNDRY_ENVS", "")
    if not raw:
        return []
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("ENVFOUNDRY_ENVS must be a JSON list of strings")
    return value
