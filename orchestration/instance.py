"""The Dagster instance of a home: `HOME/dagster`, shared by `envfoundry build` and the UI."""

from __future__ import annotations

import os
from pathlib import Path

# Offline by default: no telemetry leaves the machine. Runs launched from the UI wait in the
# queue the daemon (`make ui`) drains: checked every second rather than Dagster's five (a run
# here often takes less), and at most one run per core at once, as `envfoundry build` does
# (a backfill of every environment must not start them all together). CLI builds launch
# their runs directly (orchestration.runs).
_CONFIG = """\
telemetry:
  enabled: false
run_coordinator:
  module: dagster._core.run_coordinator
  class: QueuedRunCoordinator
  config:
    dequeue_interval_seconds: 1
    max_concurrent_runs: {runs}
"""


_EARLIER_CONFIG = "telemetry:\n  enabled: false\n"


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
    # Homes from before the run queue was configured hold only the telemetry line: upgraded.
    if not config.exists() or config.read_text() == _EARLIER_CONFIG:
        config.write_text(_CONFIG.format(runs=parallel_runs()))
    return dagster_home
