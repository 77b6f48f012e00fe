"""Published datasets: each build's outputs are made beside the last good ones, then swapped in.

A dataset is the warehouse, the training shards (with their manifest) and the report of one
build: `$ENVFOUNDRY_HOME/datasets/<run>/`. The home's `current` link points at the last
dataset that passed every gate; `warehouse.duckdb`, `shards` and `reports` at the home's root
are links through `current`. Publishing is one atomic rename of `current`, so readers see the
old dataset or the new one, whole, never half of each; a build that fails or is killed before
that rename leaves the last good dataset exactly as it was.

The publish floor: a dataset with fewer tasks than the build's floor (the profile's
`min_published`, or the build's own; synthesis.config.publish_floor) is not swapped in
either: the rename does not happen, the last good dataset stays current, and the dataset
that fell short is left in `datasets/<run>/` to read (the next publish prunes it).
"""

from __future__ import annotations

import os
import shutil
import signal
from collections.abc import Callable
from pathlib import Path

DATASETS = "datasets"
CURRENT = "current"
# What a dataset holds, and the names under which the home shows the current one.
PARTS = {"warehouse": "warehouse.duckdb", "shards": "shards", "reports": "reports"}
# Datasets kept besides the current one (the previous one helps compare two builds).
KEEP_PREVIOUS = 1
# In a dataset the publish floor refused: it was never published (pruned first).
UNPUBLISHED = ".unpublished"


class PublishError(RuntimeError):
    """A dataset that cannot be published; the last good one stays."""


class BelowFloor(PublishError):
    """A dataset with fewer tasks than the build's floor: not published; the last good one
    stays. `tasks`: what it holds; `floor`: the fewest it needed."""

    def __init__(self, message: str, *, tasks: int, floor: int, why: str = ""):
        super().__init__(message)
        self.tasks = tasks
        self.floor = floor
        self.why = why


def published_tasks(dataset: Path) -> int:
    """The tasks a dataset publishes: the lines of its RL shards, as its manifest counts them
    (one task a line; every published task has one)."""
    import json

    manifest = json.loads((dataset / PARTS["shards"] / "manifest.json").read_text())
    return sum(f.get("rows") or 0 for f in manifest["files"] if f.get("kind") == "rl_tasks")


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


def publish(
    home: Path,
    staged: Path,
    *,
    floor: int = 0,
    why_short: Callable[[int], str] | None = None,
) -> None:
    """Make `staged` the home's current dataset in one rename, and show it at the root.

    `floor`: the fewest tasks it may hold (0: any number, none included); below it nothing
    is renamed and BelowFloor says why, with `why_short(tasks)` when given (which stage of
    the build lost the tasks)."""
    staged = staged.resolve()
    if not (staged / PARTS["warehouse"]).is_file():
        raise PublishError(f"{staged} holds no warehouse: nothing to publish")
    if floor > 0:
        tasks = published_tasks(staged)
        if tasks < floor:
            why = why_short(tasks) if why_short is not None else ""
            _keep_one_unpublished(home, staged)
            raise BelowFloor(
                f"{tasks} task(s), under the publish floor of {floor}{': ' + why if why else ''}",
                tasks=tasks,
                floor=floor,
                why=why,
            )
    fault_point("before_swap")
    previous = current_dir(home)
    link = home / CURRENT
    temporary = home / f".{CURRENT}.{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(Path(DATASETS) / staged.name)
    os.replace(temporary, link)  # the moment the new dataset becomes the published one
    _show_at_root(home)
    _prune(home, keep={staged.name}, previous=previous)


def _keep_one_unpublished(home: Path, staged: Path) -> None:
    """Mark `staged` as a dataset its publish refused (it stays to be read) and remove the
    ones refused before it: never published, they hold nothing the home needs."""
    current = current_dir(home)
    for other in (home / DATASETS).iterdir():
        if other.resolve() not in (staged, current) and (other / UNPUBLISHED).is_file():
            shutil.rmtree(other, ignore_errors=True)
    (staged / UNPUBLISHED).write_text("refused by the publish floor: never published\n")


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


def _prune(home: Path, keep: set[str], previous: Path | None = None) -> None:
    """Every dataset but those in `keep` and the KEEP_PREVIOUS newest others, the dataset
    that was current before this publish (`previous`) first: a dataset a failed or refused
    publish left since then is newer, but it was never published."""
    datasets = home / DATASETS
    others = sorted(
        (d for d in datasets.iterdir() if d.is_dir() and d.name not in keep),
        key=lambda d: (
            (d / UNPUBLISHED).is_file(),
            previous is None or d.resolve() != previous,
            -d.stat().st_mtime,
        ),
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
