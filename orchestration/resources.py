"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend)."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from synthesis import warehouse
from synthesis.config import Profile, envfoundry_home, get_profile
from synthesis.topics import CATALOGUE_PATH


class BuildSettings(dg.ConfigurableResource):
    """One build's knobs. Defaults come from the environment so the UI and the CLI agree."""

    profile: str = "default"
    seed: int = 0
    home: str = "var"
    sandbox_backend: str = "auto"
    catalogue: str = ""  # a topics.json of your own; empty means the shipped data/topics.json

    @classmethod
    def from_env(cls) -> BuildSettings:
        return cls(
            profile=os.environ.get("ENVFOUNDRY_PROFILE", "default"),
            seed=int(os.environ.get("ENVFOUNDRY_SEED", "0")),
            home=str(envfoundry_home()),
            sandbox_backend=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
            catalogue=os.environ.get("ENVFOUNDRY_CATALOGUE", ""),
        )

    @property
    def profile_obj(self) -> Profile:
        return get_profile(self.profile)

    @property
    def catalogue_path(self) -> Path:
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
