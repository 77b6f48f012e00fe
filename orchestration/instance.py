"""The Dagster instance of a home: `HOME/dagster`, shared by `envfoundry build` and the UI."""

from __future__ import annotations

import contextlib
import json
import os
import re
import sqlite3
from pathlib import Path

# Offline by default: no telemetry leaves the machine. Runs launched from the UI wait in the
# queue the daemon (`make ui`) drains: checked every second rather than Dagster's five (a run
# here often takes less), and at most one run per core at once, as `envfoundry build` does
# (a backfill of every environment must not start them all together). CLI builds launch
# their runs directly (orchestration.runs). Either way a run starts in a process forked from
# a run host that has the code location loaded (orchestration.fastrun.launcher), not in a
# fresh interpreter that imports it again. The storage is Dagster's SQLite storage (the same
# files) with one database engine per file instead of one per event stored
# (orchestration.storage). Dagster's classes are named by their public module. Runs tagged
# as writers of the home's evaluations (the eval_job's) start one at a time: the others wait
# in the queue instead of being refused by the evaluations' lock (synthesis/evaluation/store.py).
EVALS_WRITER_TAG = "envfoundry/evals"
_QUEUE_BEFORE_EVALS = """\
telemetry:
  enabled: false
run_coordinator:
  module: dagster
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
    max_concurrent_runs: {runs}
"""
_QUEUE = (
    _QUEUE_BEFORE_EVALS
    + f"""\
    tag_concurrency_limits:
      - key: {EVALS_WRITER_TAG}
        limit: 1
"""
)
_LAUNCHER = """\
run_launcher:
  module: orchestration.fastrun.launcher
  class: ForkingRunLauncher
"""
# The storage's directory is this home's Dagster directory, written out: the config class
# cannot see where its dagster.yaml is. A home copied or moved elsewhere still names the old
# one; the storage refuses to open there (orchestration.storage), and `prepare` rewrites it.
_STORAGE = """\
storage:
  custom:
    module: orchestration.storage
    class: SqliteStorage
    config:
      base_dir: {base_dir}
"""
_CONFIG = _QUEUE + _LAUNCHER + _STORAGE
_BASE_DIR_LINE = re.compile(r"^(      base_dir: ).*$", re.MULTILINE)

# What earlier versions wrote, upgraded as this version's is: the telemetry line alone, then
# the queue (with the run count of the machine that wrote it), then the queue and the
# launcher, then the storage too; all naming the run coordinator by its private module and
# (but the first two) the launcher by its path before orchestration/fastrun/; then this
# version's without the evaluations' writer limit.
_EARLIER_QUEUE = _QUEUE_BEFORE_EVALS.replace(
    "module: dagster\n", "module: dagster._core.run_coordinator\n"
)
_EARLIER_LAUNCHER = _LAUNCHER.replace("orchestration.fastrun.launcher", "orchestration.launcher")
_EARLIER = (
    "telemetry:\n  enabled: false\n",
    _EARLIER_QUEUE,
    _EARLIER_QUEUE + _EARLIER_LAUNCHER,
    _EARLIER_QUEUE + _EARLIER_LAUNCHER + _STORAGE,
    _QUEUE_BEFORE_EVALS + _LAUNCHER + _STORAGE,
)


def parallel_runs() -> int:
    """Runs at once: one per core (each run is one process; its sandboxes wait on process
    start-up as much as they compute), at least two, at most eight."""
    return max(2, min(8, os.cpu_count() or 2))


def prepare(home: Path) -> Path:
    """DAGSTER_HOME for `home`, with an instance config if it has none (a user's own
    dagster.yaml there is kept)."""
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    config = dagster_home / "dagster.yaml"
    # Homes holding exactly what this or an earlier version wrote are upgraded (or, when
    # copied or moved, pointed at where they are now).
    if not config.exists() or _generated(config.read_text()):
        base_dir = json.dumps(str(dagster_home.resolve()))
        config.write_text(_CONFIG.format(runs=parallel_runs(), base_dir=base_dir))
    return dagster_home


def _generated(text: str) -> bool:
    """Whether `text` is a config this or an earlier version wrote (for any run count, and
    any home's directory)."""
    unplaced = _BASE_DIR_LINE.sub(r"\g<1>@", text)
    return any(
        unplaced == config.format(runs=n, base_dir="@")
        for config in (_CONFIG, *_EARLIER)
        for n in range(1, 65)
    )


class RunsUnknown(LookupError):
    """The home's runs cannot be read without Dagster (its own config, or no runs database)."""


def latest_run_id(dagster_home: Path) -> str | None:
    """The newest run of a home whose instance config is ours, read straight from its runs
    database: a build with nothing to do asks only this, and opening the instance through
    Dagster costs it half a second of imports. The table is Dagster's (`runs`, newest
    first by `id`, as `get_runs` orders them); anything else raises RunsUnknown, and the
    caller asks Dagster."""
    config = dagster_home / "dagster.yaml"
    try:
        text = config.read_text()
    except OSError as error:
        raise RunsUnknown(f"no instance config: {error}") from error
    if not _generated(text) or json.dumps(str(dagster_home.resolve())) not in text:
        raise RunsUnknown("the instance config is not the one this home was prepared with")
    database = dagster_home / "history" / "runs.db"
    if not database.is_file():
        raise RunsUnknown("no runs database")
    try:
        with contextlib.closing(sqlite3.connect(f"{database.as_uri()}?mode=ro", uri=True)) as db:
            row = db.execute("SELECT run_id FROM runs ORDER BY id DESC LIMIT 1").fetchone()
    except sqlite3.Error as error:
        raise RunsUnknown(f"the runs database: {error}") from error
    return row[0] if row else None
