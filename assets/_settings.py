"""A build's settings as plain values, without Dagster.

`BuildSettings` (assets/_resources.py) is the Dagster resource every asset reads, and
declares the fields. Where their values come from and what they hash to are here, as functions
of the values (`values_from_env()`, or a resource's `model_dump()`), so the CLI can tell that
nothing changed since the last build (orchestration/last_build.py) before it imports Dagster,
which would be most of that answer's time.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.config import LLMSettings, Profile, envfoundry_home, get_profile
from synthesis.environments.splits import parse_holdout
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export import datasets
from synthesis.hashing import content_hash, sha256_file
from synthesis.llm.topic_mining import CORPUS_PATH

# Written by `envfoundry build` into its home: the settings its runs used.
SETTINGS_FILE = "build-settings.json"


def values_from_env() -> dict[str, Any]:
    """Every field of `BuildSettings`: ENVFOUNDRY_* variables first, then the settings of the
    home's last CLI build (so `make ui` on a home launches runs like the build's), then the
    defaults."""
    home = envfoundry_home()
    last = _last_build_settings(home)
    envs = envs_from_env() if "ENVFOUNDRY_ENVS" in os.environ else last.get("envs", [])
    return {
        "profile": os.environ.get("ENVFOUNDRY_PROFILE", last.get("profile", "default")),
        "seed": int(os.environ.get("ENVFOUNDRY_SEED", last.get("seed", 0))),
        "home": str(home),
        "sandbox_backend": os.environ.get(
            "ENVFOUNDRY_SANDBOX", last.get("sandbox_backend", "auto")
        ),
        "catalogue": os.environ.get("ENVFOUNDRY_CATALOGUE", last.get("catalogue", "")),
        "corpus": os.environ.get("ENVFOUNDRY_CORPUS", last.get("corpus", "")),
        "envs": envs,
        "holdout_archetypes": (
            holdout_from_env()
            if "ENVFOUNDRY_HOLDOUT_ARCHETYPES" in os.environ
            else last.get("holdout_archetypes", [])
        ),
    }


def catalogue_path(catalogue: str) -> Path | None:
    """Empty: the shipped data/topics.json; "none": no catalogue."""
    if catalogue.lower() == "none":
        return None
    return Path(catalogue) if catalogue else CATALOGUE_PATH


def corpus_path(corpus: str) -> Path | None:
    """Empty: the shipped data/task_corpus.jsonl; "none": no corpus."""
    if corpus.lower() == "none":
        return None
    return Path(corpus) if corpus else CORPUS_PATH


def profile(name: str) -> Profile:
    return get_profile(name)


def warehouse_path(home: Path) -> Path:
    """The published (current) dataset's warehouse, as readers see it at the home's root."""
    from synthesis.export import warehouse  # duckdb and pyarrow: not before the CLI needs them

    return warehouse.warehouse_path(home)


def staging_dir(home: Path, run_id: str) -> Path:
    """The dataset a publish run builds beside the published one (synthesis.export.datasets)."""
    return datasets.staging_dir(home, run_id)


def inputs_sha256(values: Mapping[str, Any]) -> str:
    """What a build was asked to build: profile, catalogue content and sources."""
    path = catalogue_path(values["catalogue"])
    catalogue = sha256_file(path) if path is not None and path.is_file() else "none"
    asked = [values["profile"], catalogue, sorted(values["envs"])]
    # Held-out archetypes change every split; a build without them hashes as before.
    if values["holdout_archetypes"]:
        asked.append({"holdout_archetypes": sorted(values["holdout_archetypes"])})
    # The corpus is read only by the `topic` stage, so only an online build is made from it;
    # an offline build hashes as before.
    corpus = corpus_path(values["corpus"])
    if LLMSettings.from_env().enabled and corpus is not None:
        asked.append({"corpus": sha256_file(corpus) if corpus.is_file() else "missing"})
    return content_hash(asked)


def run_fingerprint(values: Mapping[str, Any]) -> str:
    """What every environment's artifacts depend on besides the environment's own definition:
    the profile, the seed, held-out archetypes, the sandbox (foreign code is refused without a
    real one) and the model when one is configured. A change of any of them makes every stage
    of every environment stale (assets._util.versioned)."""
    llm = LLMSettings.from_env()
    return content_hash(
        {
            "profile": values["profile"],
            "seed": values["seed"],
            "holdout_archetypes": sorted(values["holdout_archetypes"]),
            "sandbox": values["sandbox_backend"],
            "model": llm.model if llm.enabled else None,
        }
    )[:32]


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
