"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend)."""

from __future__ import annotations

from pathlib import Path

import dagster as dg

from orchestration import settings
from synthesis.config import Profile, get_profile
from synthesis.export import datasets, warehouse


class BuildSettings(dg.ConfigurableResource):
    """One build's knobs. Defaults come from the environment so the UI and the CLI agree."""

    profile: str = "default"
    seed: int = 0
    home: str = "var"
    sandbox_backend: str = "auto"
    # A topics.json of your own; empty means the shipped data/topics.json, "none" no catalogue
    # (only the environments given in `envs`).
    catalogue: str = ""
    # A JSONL of user requests the `topic` stage mines topics from (read only with an LLM
    # endpoint); empty means the shipped data/task_corpus.jsonl, "none" no corpus.
    corpus: str = ""
    # Foreign environment sources (`file.py`, `file.py:Class`, a directory, `pkg.mod:Class`).
    envs: list[str] = []
    # Archetypes whose environments are all test (`--holdout-archetypes`): generalization to
    # a kind of environment never trained on.
    holdout_archetypes: list[str] = []

    @classmethod
    def from_env(cls) -> BuildSettings:
        """ENVFOUNDRY_* variables first, then the settings of the home's last CLI build (so
        `make ui` on a home launches runs like the build's), then the defaults."""
        return cls(**settings.values_from_env())

    @property
    def profile_obj(self) -> Profile:
        return get_profile(self.profile)

    @property
    def catalogue_path(self) -> Path | None:
        return settings.catalogue_path(self.catalogue)

    @property
    def corpus_path(self) -> Path | None:
        return settings.corpus_path(self.corpus)

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
        return settings.inputs_sha256(self.model_dump())

    @property
    def run_fingerprint(self) -> str:
        return settings.run_fingerprint(self.model_dump())


# Where `envfoundry build` writes its settings, read back by `from_env` (orchestration/settings.py).
SETTINGS_FILE = settings.SETTINGS_FILE
