"""Fixtures shared across test modules, and the order `make test` runs modules in.

`make test` runs the suite on two pytest-xdist workers, a module at a time each
(`--dist loadfile`): in one process the heavy tests left a core idle while they waited on
subprocesses, containers and sandboxes starting (the suite took 1889 s in one process and
1409 s on two workers, on the same 2-core machine).
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from orchestration.fastrun.warm import IDLE_VARIABLE
from tests.build_support import run_build, stop_warm

# A build leaves its code server and run host running for the next build of its home
# (orchestration/fastrun/warm.py): hundreds of MB for minutes, for each of the suite's dozens of
# homes.
# The suite's builds do not; tests/orchestration/test_warm.py turns it on where it tests it.
os.environ.setdefault(IDLE_VARIABLE, "0")


def pytest_collection_modifyitems(config, items):
    """Modules with a slow test first, in their collection order, then the rest: the workers
    take modules in this order, so a long module never starts last and runs alone at the end.
    A module's tests stay together (its module fixtures are made once)."""
    slow = {item.module for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.module not in slow)


@pytest.fixture(scope="session")
def tiny_home(tmp_path_factory) -> tuple[Path, str]:
    """One tiny build (seed 7) run by the CLI as a user runs it: (home, console output).

    Shared by every module that only reads a finished build, so the suite pays for it once:
    under pytest-xdist the first worker to ask builds it in the run's common temporary folder
    while the other waits on the lock. Tests that change the home must work on a copy
    (shutil.copytree). It is built as a user's build is, with warm servers (the UI tests
    then see the runs such a build makes), which are stopped right after.
    """
    root = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        root = root.parent  # each worker's folder sits in the run's
    home, output = root / "tiny-home", root / "tiny-home.out"
    with open(root / "tiny-home.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not output.exists():
            proc = run_build(home, env={IDLE_VARIABLE: "600"})
            assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
            assert "Code server and run host: started" in proc.stdout
            stop_warm(home)
            output.write_text(proc.stdout)
    return home, output.read_text()
