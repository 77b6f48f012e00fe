"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend), and
the sandboxes one run's steps share."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import dagster as dg

from assets import _settings
from sandboxes import SandboxError, WorkerPool

if TYPE_CHECKING:
    from synthesis.config import Profile


class BuildSettings(dg.ConfigurableResource):
    """One build's knobs. Defaults come from the environment so the UI and the CLI agree.

    What it computes, it asks of `_settings` (the plain values) by the module's name: a
    stage's code version follows the names an asset uses into the helpers of assets/
    (synthesis/code_versions.py), and the settings are the build's, not a stage's code, so
    their engine modules must not be counted in every stage's version."""

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
    # The publish floor: the fewest tasks a dataset may hold to be published (None: the
    # profile's, synthesis.config.publish_floor; 0: publish even an empty one, --allow-empty).
    min_published: int | None = None

    @classmethod
    def from_env(cls) -> BuildSettings:
        """ENVFOUNDRY_* variables first, then the settings of the home's last CLI build (so
        `make ui` on a home launches runs like the build's), then the defaults."""
        return cls(**_settings.values_from_env())

    @property
    def profile_obj(self) -> Profile:
        return _settings.profile(self.profile)

    def publish_floor(self, environments: int) -> tuple[int, str]:
        """(the fewest tasks this build may publish over `environments` environments, where
        that number comes from), for the publish's floor (synthesis.export.datasets)."""
        return _settings.publish_floor(self.model_dump(), environments)

    @property
    def catalogue_path(self) -> Path | None:
        return _settings.catalogue_path(self.catalogue)

    @property
    def corpus_path(self) -> Path | None:
        return _settings.corpus_path(self.corpus)

    @property
    def home_path(self) -> Path:
        return Path(self.home).resolve()

    # The published (current) dataset, as readers see it at the home's root.
    @property
    def warehouse_path(self) -> Path:
        return _settings.warehouse_path(self.home_path)

    @property
    def shards_dir(self) -> Path:
        return self.home_path / "shards"

    @property
    def reports_dir(self) -> Path:
        return self.home_path / "reports"

    def staged(self, run_id: str) -> Path:
        """The dataset a publish run builds beside the published one (synthesis.export.datasets)."""
        return _settings.staging_dir(self.home_path, run_id)

    @property
    def inputs_sha256(self) -> str:
        return _settings.inputs_sha256(self.model_dump())

    @property
    def run_fingerprint(self) -> str:
        return _settings.run_fingerprint(self.model_dump())


# Sandboxes a run keeps at once: two cores, and a run's batches (self-tests, rollouts) keep
# both busy while its host side waits on one of them.
SANDBOX_WORKERS = 2


@dg.resource(
    required_resource_keys={"settings"},
    description="The sandboxes of one run, shared by its steps: an environment's stages take "
    "their sessions and episodes from one WorkerPool, so its sandboxes are started once per "
    "run, not once per state, stage and batch.",
)
def sandbox_pool(init_context: dg.InitResourceContext) -> Iterator[WorkerPool | None]:
    """A WorkerPool of the settings' backend for the run, closed (its sandboxes ended) when the
    run's steps are done. Starting a sandbox costs tens of milliseconds of CPU (an
    interpreter, its imports, the class); an environment's run started about fourteen
    (a session per initial state, another per audited state, a pool per batch) where it now
    starts one per worker and hands out kept ones, reset between uses (sandboxes/pool.py says
    which are reused how). None when no pool can be made here (the backend is unusable): each
    session then starts, and fails, as it would have with no pool, saying why."""
    backend = init_context.resources.settings.sandbox_backend
    try:
        pool = WorkerPool(SANDBOX_WORKERS, backend=backend)
    except SandboxError:
        yield None
        return
    with pool:
        yield pool
