"""The Dagster instance of a home: `HOME/dagster`, shared by `envfoundry build` and the UI."""

from __future__ import annotations

import os
from pathlib import Path

# Offline by default: no telemetry leaves the machine. Runs launched from the UI wait in the
# queue the daemon (`make ui`) drains: checked every second rather than Dagster's five (a run
# here often takes less), and at most one run per core at once, as `envfoundry build` does
# (a backfill of every environment must not start them all together). CLI builds launch
# their runs directly (orchestration.runs). Either way a run starts in a process forked from
# a run host that has the code location loaded (orchestration.launcher), not in a fresh
# interpreter that imports it again.
_QUEUE = """\
telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
    max_concurrent_runs: {runs}
"""
_CONFIG = (
    _QUEUE
    + """\
run_launcher:
  module: orchestration.launcher
  class: ForkingRunLauncher
"""
)


def _earlier_configs() -> set[str]:
    """What earlier versions wrote: the telemetry line alone, then the queue (with the run
    count of the machine that wrote it)."""
    return {"telemetry:\n  enabled: false\n"} | {_QUEUE.format(runs=n) for n in range(1, 65)}


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
    # Homes holding exactly what an earlier version wrote are upgraded.
    if not config.exists() or config.read_text() in _earlier_configs():
        config.write_text(_CONFIG.format(runs=parallel_runs()))
    return dagster_home
