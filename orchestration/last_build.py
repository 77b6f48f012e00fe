"""The short way for a build when nothing at all changed since the last one.

A build into a home records, when it ends with nothing failed, a fingerprint of everything it
read: its settings, the catalogue, the sources of foreign environments, this project's code
and data, and the locked dependencies, with the newest run on the instance. The next build
with the same fingerprint, and no run since (nothing launched from the UI in between), has
nothing to make: the staleness check would find every stage current and the dataset too, so
it says so without starting a code server or a run (seconds instead of tens of seconds).
Anything else, or `--full`, takes the normal way. Builds with an LLM endpoint always do:
what a model answers is not an input we can fingerprint.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from assets import _settings
from synthesis import codec
from synthesis.config import LLMSettings
from synthesis.export import datasets
from synthesis.hashing import content_hash, sha256_file

RECORD = "last-build.json"
REPO = Path(__file__).resolve().parents[1]
# What a build's behaviour depends on in this project.
SOURCE_DIRS = (
    "assets",
    "dbt_project",
    "data",
    "orchestration",
    "quality",
    "sandboxes",
    "synthesis",
)
SOURCE_SUFFIXES = {".py", ".sql", ".yml", ".yaml", ".json", ".jsonl", ".sh", ".csv"}
PROJECT_FILES = ("requirements.lock", "pyproject.toml", "workspace.yaml")


@dataclass(frozen=True)
class LastBuild:
    fingerprint: str
    build_id: str
    latest_run: str | None
    environments: int


def fingerprint(values: Mapping[str, Any]) -> str:
    """Everything a build of these settings (assets/_settings.py) reads, hashed."""
    foreign = [_tree_hash(Path(source.partition(":")[0])) for source in sorted(values["envs"])]
    return content_hash(
        {
            "inputs": _settings.inputs_sha256(values),
            "settings": _settings.run_fingerprint(values),
            "foreign": foreign,
            "code": project_hash(),
        }
    )


def unchanged(home: Path, values: Mapping[str, Any], latest_run: str | None) -> LastBuild | None:
    """The last build, when this one would make nothing (see the module's docstring)."""
    if LLMSettings.from_env().enabled or datasets.current_dir(home) is None:
        return None
    if not all(Path(s.partition(":")[0]).exists() for s in values["envs"]):
        return None  # a module by name: its package is not fingerprinted here
    record = _read(home)
    if record is None or record.latest_run != latest_run or latest_run is None:
        return None
    return record if record.fingerprint == fingerprint(values) else None


def remember(
    home: Path, values: Mapping[str, Any], build_id: str, latest_run: str | None, n: int
) -> None:
    record = {
        "fingerprint": fingerprint(values),
        "build_id": build_id,
        "latest_run": latest_run,
        "environments": n,
    }
    codec.write_json(home / RECORD, record)


def forget(home: Path) -> None:
    (home / RECORD).unlink(missing_ok=True)


def _read(home: Path) -> LastBuild | None:
    try:
        value = codec.read_json(home / RECORD)
        return LastBuild(**value)
    except (OSError, ValueError, TypeError):
        return None


def loaded_code(values: Mapping[str, Any]) -> str:
    """The project's files, hashed, but for the catalogue and corpus the build of `values`
    reads: those are what runs read, not what the code location loads, so editing the shipped
    data/topics.json keeps the warm processes (orchestration/fastrun/warm.py)."""
    catalogue, corpus = values["catalogue"], values["corpus"]
    inputs = (_settings.catalogue_path(catalogue), _settings.corpus_path(corpus))
    return project_hash(skip=frozenset(p for p in inputs if p is not None))


def project_hash(skip: frozenset[Path] = frozenset()) -> str:
    """This project's code, data and locked dependencies, hashed, but for the files in
    `skip` (each file is read once per process)."""
    skipped = {str(p.resolve().relative_to(REPO)) for p in skip if p.resolve().is_relative_to(REPO)}
    return content_hash(
        [(name, digest) for name, digest in _project_files() if name not in skipped]
    )


@functools.cache
def _project_files() -> tuple[tuple[str, str], ...]:
    files = [REPO / name for name in PROJECT_FILES if (REPO / name).is_file()]
    for folder in SOURCE_DIRS:
        files += [
            path
            for path in (REPO / folder).rglob("*")
            if path.suffix in SOURCE_SUFFIXES and path.is_file() and "target" not in path.parts
        ]
    return tuple(sorted((str(p.relative_to(REPO)), sha256_file(p)) for p in files))


def _tree_hash(path: Path) -> str | None:
    """A foreign source: one file, or every file under a folder (its states files too)."""
    if path.is_file():
        return sha256_file(path)
    if path.is_dir():
        return content_hash(
            sorted(
                (str(p.relative_to(path)), sha256_file(p))
                for p in path.rglob("*")
                if p.is_file() and "__pycache__" not in p.parts
            )
        )
    return None  # a module name: its package is hashed where it is installed, not here
