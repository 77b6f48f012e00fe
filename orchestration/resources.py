"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

from synthesis.config import Profile, envfoundry_home, get_profile
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export import datasets, warehouse
from synthesis.hashing import content_hash, sha256_file


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
    # The CLI build these runs belong to (empty for runs launched from the UI): the publish
    # phase takes only the environments this build made.
    build_id: str = ""

    @classmethod
    def from_env(cls) -> BuildSettings:
        return cls(
            profile=os.environ.get("ENVFOUNDRY_PROFILE", "default"),
            seed=int(os.environ.get("ENVFOUNDRY_SEED", "0")),
            home=str(envfoundry_home()),
            sandbox_backend=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
            catalogue=os.environ.get("ENVFOUNDRY_CATALOGUE", ""),
            envs=envs_from_env(),
            build_id=os.environ.get("ENVFOUNDRY_BUILD_ID", ""),
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

    # The published (current) dataset, as readers see it at the home's root.
    @property
    def warehouse_path(self) -> Path:
        return warehouse.warehouse_path(self.home_path)

    @property
    def shards_dir(self) -> Path:
        return self.home_path / "shards"

    @property
    def reports_dir(self) -> Path:
        return self.home_path / "reports"

    def staged(self, run_id: str) -> Path:
        """The dataset a publish run builds beside the published one (synthesis.export.datasets)."""
        return datasets.staging_dir(self.home_path, run_id)

    @property
    def inputs_sha256(self) -> str:
        """What this build was asked to build: profile, catalogue content and sources."""
        path = self.catalogue_path
        catalogue = sha256_file(path) if path is not None and path.is_file() else "none"
        return content_hash([self.profile, catalogue, sorted(self.envs)])


def envs_from_env() -> list[str]:
    """`ENVFOUNDRY_ENVS`: a JSON list of environment sources (what `--envs` sets)."""
    raw = os.environ.get("ENVFOUNDRY_ENVS", "")
    if not raw:
        return []
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("ENVFOUNDRY_ENVS must be a JSON list of strings")
    return value
