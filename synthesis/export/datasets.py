"""Published datasets: each build's outputs are made beside the last good ones, then swapped in.

A dataset is the warehouse, the training shards (with their manifest) and the report of one
build: `$ENVFOUNDRY_HOME/datasets/<run>/`. The home's `current` link points at the last
dataset that passed every gate; `warehouse.duckdb`, `shards` and `reports` at the home's root
are links through `current`. Publishing is one atomic rename of `current`, so readers see the
old dataset or the new one, whole, never half of each; a build that fails or is killed before
that rename leaves the last good dataset exactly as it was.
"""

from __future__ import annotations

import os
import shutil
import signal
from pathlib import Path

DATASETS = "datasets"
CURRENT = "current"
# What a dataset holds, and the names under which the home shows the current one.
PARTS = {"warehouse": "warehouse.duckdb", "shards": "shards", "reports": "reports"}
# Datasets kept besides the current one (the previous one helps compare two builds).
KEEP_PREVIOUS = 1


class PublishError(RuntimeError):
    """A dataset that cannot be published; the last good one stays."""


def staging_dir(home: Path, run_id: str) -> Path:
    """The dataset a run builds, started from the current one so partial runs stay whole.

    A run that rebuilds only the marts (from the UI, say) still publishes a complete dataset:
    what it does not rebuild is carried over from the current one.
    """
    staged = home / DATASETS / run_id
    if staged.exists():
        return staged
    staged.parent.mkdir(parents=True, exist_ok=True)
    building = staged.with_name(f".{run_id}.partial")
    shutil.rmtree(building, ignore_errors=True)
    building.mkdir()
    current = current_dir(home)
    if current is not None:
        for name in PARTS.values():
            source = current / name
            if source.is_dir():
                shutil.copytree(source, building / name)
            elif source.is_file() and (name != PARTS["warehouse"] or opens(source)):
                # A warehouse that does not open (truncated, not DuckDB) is not carried over:
                # every table is rebuilt from the artifacts, which repairs it.
                shutil.copy2(source, building / name)
    building.rename(staged)
    return staged


def opens(warehouse_file: Path) -> bool:
    """Whether a file is a DuckDB database that can be read."""
    import duckdb

    try:
        con = duckdb.connect(str(warehouse_file), read_only=True)
    except duckdb.Error:
        return False
    try:
        con.execute("select 1").fetchall()
        return True
    except duckdb.Error:
        return False
    finally:
        con.close()


def current_dir(home: Path) -> Path | None:
    link = home / CURRENT
    return link.resolve() if link.is_symlink() and link.resolve().is_dir() else None


def publish(home: Path, staged: Path) -> None:
    """Make `staged` the home's current dataset in one rename, and show it at the root."""
    staged = staged.resolve()
    if not (staged / PARTS["warehouse"]).is_file():
        raise PublishError(f"{staged} holds no warehouse: nothing to publish")
    fault_point("before_swap")
    link = home / CURRENT
    temporary = home / f".{CURRENT}.{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(Path(DATASETS) / staged.name)
    os.replace(temporary, link)  # the moment the new dataset becomes the published one
    _show_at_root(home)
    _prune(home, keep={staged.name})


def _show_at_root(home: Path) -> None:
    """`warehouse.duckdb`, `shards` and `reports` at the root, as links through `current`.

    A home from before datasets existed holds real files there: they are moved into a dataset
    of their own (`datasets/legacy`) rather than deleted, and pruned later like any old one.
    """
    legacy = home / DATASETS / "legacy"
    for name in PARTS.values():
        root = home / name
        target = Path(CURRENT) / name
        if root.is_symlink():
            if Path(os.readlink(root)) == target:
                continue
            root.unlink()
        elif root.exists():
            legacy.mkdir(parents=True, exist_ok=True)
            root.rename(legacy / name)
        root.symlink_to(target)


def _prune(home: Path, keep: set[str]) -> None:
    datasets = home / DATASETS
    others = sorted(
        (d for d in datasets.iterdir() if d.is_dir() and d.name not in keep),
        key=lambda d: d.stat().st_mtime,
        reverse=True,
    )
    for old in others[KEEP_PREVIOUS:]:
        shutil.rmtree(old, ignore_errors=True)


def fault_point(step: str, partition: str | None = None) -> None:
    """The fault-injection hook the build tests use; does nothing unless asked.

    `ENVFOUNDRY_KILL_AT=<step>` kills the build there, as `kill -9` would: the build's process
    (named by ENVFOUNDRY_BUILD_PROCESS, see orchestration/fastrun/lifeline.py) and this one (a build
    killed at any publish step must leave the last good dataset untouched);
    `ENVFOUNDRY_FAIL_AT=<step>:<partition>` makes that step fail for one environment (its
    older artifacts must then not be published).
    """
    if os.environ.get("ENVFOUNDRY_KILL_AT") == step:
        build, _, _ = os.environ.get("ENVFOUNDRY_BUILD_PROCESS", "").partition(":")
        if build.isdigit():
            os.kill(int(build), signal.SIGKILL)
        os.kill(os.getpid(), signal.SIGKILL)
    if partition is not None and os.environ.get("ENVFOUNDRY_FAIL_AT") == f"{step}:{partition}":
        raise RuntimeError(f"injected failure at {step} for {partition} (ENVFOUNDRY_FAIL_AT)")
