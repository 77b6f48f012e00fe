"""Resources: the build settings every asset reads (profile, seed, home, sandbox backend)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dagster as dg

from synthesis import codec
from synthesis.config import LLMSettings, Profile, envfoundry_home, get_profile
from synthesis.environments.splits import parse_holdout
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export import datasets, warehouse
from synthesis.hashing import content_hash, sha256_file
from synthesis.llm.topic_mining import CORPUS_PATH


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
        home = envfoundry_home()
        last = _last_build_settings(home)
        envs = envs_from_env() if "ENVFOUNDRY_ENVS" in os.environ else last.get("envs", [])
        return cls(
            profile=os.environ.get("ENVFOUNDRY_PROFILE", last.get("profile", "default")),
            seed=int(os.environ.get("ENVFOUNDRY_SEED", last.get("seed", 0))),
            home=str(home),
            sandbox_backend=os.environ.get(
                "ENVFOUNDRY_SANDBOX", last.get("sandbox_backend", "auto")
            ),
            catalogue=os.environ.get("ENVFOUNDRY_CATALOGUE", last.get("catalogue", "")),
            corpus=os.environ.get("ENVFOUNDRY_CORPUS", last.get("corpus", "")),
            envs=envs,
            holdout_archetypes=(
                holdout_from_env()
                if "ENVFOUNDRY_HOLDOUT_ARCHETYPES" in os.environ
                else last.get("holdout_archetypes", [])
            ),
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
    def corpus_path(self) -> Path | None:
        if self.corpus.lower() == "none":
            return None
        return Path(self.corpus) if self.corpus else CORPUS_PATH

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
        asked = [self.profile, catalogue, sorted(self.envs)]
        # Held-out archetypes change every split; a build without them hashes as before.
        if self.holdout_archetypes:
            asked.append({"holdout_archetypes": sorted(self.holdout_archetypes)})
        # The corpus is read only by the `topic` stage, so only an online build is made
        # from it; an offline build hashes as before.
        corpus = self.corpus_path
        if LLMSettings.from_env().enabled and corpus is not None:
            asked.append({"corpus": sha256_file(corpus) if corpus.is_file() else "missing"})
        return content_hash(asked)

    @property
    def run_fingerprint(self) -> str:
        """What every environment's artifacts depend on besides the environment's own
        definition: the profile, the seed, held-out archetypes, the sandbox (foreign code is
        refused without a real one) and the model when one is configured. A change of any of
        them makes every stage of every environment stale (assets._util.versioned)."""
        llm = LLMSettings.from_env()
        return content_hash(
            {
                "profile": self.profile,
                "seed": self.seed,
                "holdout_archetypes": sorted(self.holdout_archetypes),
                "sandbox": self.sandbox_backend,
                "model": llm.model if llm.enabled else None,
            }
        )[:32]


# Written by `envfoundry build` into its home: the settings its runs used.
SETTINGS_FILE = "build-settings.json"


def _last_build_settings(home: Path) -> dict:
    path = home / SETTINGS_FILE
    if not path.is_file():
        return {}
    try:
        value = codec.read_json(path)
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path} is not a settings file of envfoundry build: {exc}") from exc
    return value if isinstance(value, dict) else {}


def envs_from_env() -> list[str]:
    """`ENVFOUNDRY_ENVS`: a JSON list of environment sources (what `--envs` sets)."""
    raw = os.environ.get("ENVFOUNDRY_ENVS", "")
    if not raw:
        return []
    value = json.loads(raw)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ValueError("ENVFOUNDRY_ENVS must be a JSON list of strings")
    return value


def holdout_from_env() -> list[str]:
    """`ENVFOUNDRY_HOLDOUT_ARCHETYPES`: archetype names, comma-separated (what
    `--holdout-archetypes` sets)."""
    return parse_holdout(os.environ.get("ENVFOUNDRY_HOLDOUT_ARCHETYPES", ""))
