"""Fixtures shared across test modules, the two test tiers, and the order modules run in.

Tiers. `make test-fast` runs the tests not marked `slow` (`-m "not slow"`): unit and contract
tests, in about two minutes, the inner loop while changing code. `make test` (and
CI) runs every test. A test is `slow` when it runs a build (`envfoundry build`, the helpers of
tests/build_support.py), reads one (`tiny_home`, or a fixture made from it), starts docker
containers or Postgres, or otherwise takes long: mark its module `pytestmark = pytest.mark.slow`
(or the test itself when the rest of its module is fast). A test not marked slow fails at once
when it builds or asks for `tiny_home`, saying so: a build cannot slip into the fast tier.

Order. `make test` runs the suite on four pytest-xdist workers, a module at a time each
(`--dist loadfile`), on a 2-core machine: the heavy tests mostly wait (on builds in
subprocesses, containers, servers starting, deadlines), and the other workers use the cores
meanwhile. On the same 2-core machine, 2026-12-06: 619 s on two workers, 548 s on three,
475 s on four (earlier: 1889 s in one process against 1409 s on two). The workers take
modules in the order `pytest_collection_modifyitems` leaves them, longest first, so none
starts a long module last and runs alone at the end.
"""

from __future__ import annotations

import fcntl
import os
from pathlib import Path

import pytest

from orchestration.fastrun.warm import IDLE_VARIABLE
from tests.build_support import UNMARKED_TEST, require_slow, run_build, stop_warm

# A build leaves its code server and run host running for the next build of its home
# (orchestration/fastrun/warm.py): hundreds of MB for minutes, for each of the suite's dozens of
# homes.
# The suite's builds do not; tests/orchestration/test_warm.py turns it on where it tests it.
os.environ.setdefault(IDLE_VARIABLE, "0")

TESTS = Path(__file__).resolve().parent
# The modules that keep a worker longest, longest first (measured on a 2-core machine: their
# builds, containers and dbt runs). A module of its own build goes before the readers of the
# shared tiny build, so one worker makes that build while the other makes its own. The others
# follow: slow modules, then the rest, each in collection order. Only the order changes
# with this list; keep it to the modules that take minutes.
LONGEST_FIRST = (
    "test_deploy_local.py",  # make deploy-local: Postgres, images, a build in containers
    "test_build_foreign.py",  # three builds, one of the default profile
    "test_build_safety.py",
    "test_build_with_llm.py",
    "test_build_incremental.py",
    "test_build_tiny.py",  # the first reader of tiny_home here builds it
    "test_dbt_project.py",
    "test_build_workspace.py",
    "test_build_llm_hang.py",
    "test_report.py",
    "orchestration/test_warm.py",
)


def _rank(module: Path, slow: bool) -> tuple[int, int]:
    name = module.relative_to(TESTS).as_posix()
    if name in LONGEST_FIRST:
        return (0, LONGEST_FIRST.index(name))
    return (1, 0) if slow else (2, 0)


def pytest_collection_modifyitems(config, items):
    """Modules in the order above (a module's tests stay together: its module fixtures are
    made once); the workers take them in this order, so a long module never starts last
    and runs alone at the end."""
    slow = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: _rank(item.path, item.path in slow))


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item):
    """A test not marked slow may not build (tests/build_support.py fails it when it tries,
    by this variable) nor read the shared build."""
    if item.get_closest_marker("slow") is not None:
        os.environ.pop(UNMARKED_TEST, None)
        return
    os.environ[UNMARKED_TEST] = item.nodeid
    if "tiny_home" in item.fixturenames:
        require_slow("uses the shared tiny build (the tiny_home fixture)")


@pytest.fixture(scope="session")
def tiny_home(tmp_path_factory) -> tuple[Path, str]:
    """One tiny build (seed 7) run by the CLI as a user runs it: (home, console output).

    Shared by every module that only reads a finished build, so the suite pays for it once:
    under pytest-xdist the first worker to ask builds it in the run's common temporary folder
    while the other waits on the lock. Tests that change the home work on a copy
    (`build_support.copy_home`). It is built as a user's build is, with warm servers (the UI
    tests then see the runs such a build makes), which are stopped right after.
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
