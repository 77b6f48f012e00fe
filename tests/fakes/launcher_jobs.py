"""A code location of three trivial jobs for the run launcher's tests: each run writes down the
process it ran in (LAUNCHER_TEST_DIR/<run id>.json); `sleepy` then waits to be killed or
terminated; `warm` is forked by the run host's warm helper."""

from __future__ import annotations

import gc
import json
import os
import sys
import threading
import time
from pathlib import Path

import dagster as dg

from orchestration.fastrun import lifeline

# The run host's warm helper imports it and calls its warm_up, and forks the `warm` runs,
# which then have both.
WARM_IMPORT = "tests.fakes.launcher_warm_import"
RUN_HOST_WARM_IMPORTS = (WARM_IMPORT, f"{WARM_IMPORT}:warm_up")
RUN_HOST_WARM_JOBS = ("warm",)

# Set each time the module is executed: in a forked run, the run's own pid if the child
# re-executed the code location as it must.
EXECUTED_IN = os.getpid()


def _record(run_id: str) -> None:
    record = {
        "pid": os.getpid(),
        "ppid": os.getppid(),
        "executed_in": EXECUTED_IN,
        "cmdline": Path("/proc/self/cmdline").read_bytes().decode(errors="replace"),
        "threads": sorted(t.name for t in threading.enumerate()),
        "marker": os.environ.get("LAUNCHER_TEST_MARKER", ""),
        "warm_import_in": getattr(sys.modules.get(WARM_IMPORT), "IMPORTED_IN", None),
        "warmed_in": getattr(sys.modules.get(WARM_IMPORT), "WARMED_IN", None),
        "gc_threshold": gc.get_threshold()[0],
        "gc_frozen": gc.get_freeze_count(),
    }
    out = Path(os.environ["LAUNCHER_TEST_DIR"]) / f"{run_id}.json"
    out.with_suffix(".tmp").write_text(json.dumps(record))
    out.with_suffix(".tmp").rename(out)


@dg.op
def record(context) -> None:
    _record(context.run_id)


@dg.op
def record_and_wait(context) -> None:
    _record(context.run_id)
    time.sleep(120)


@dg.job
def quick() -> None:
    record()


@dg.job
def sleepy() -> None:
    record_and_wait()


@dg.job
def warm() -> None:
    record()


lifeline.hold_on()
defs = dg.Definitions(jobs=[quick, sleepy, warm], executor=dg.in_process_executor)
