"""The fast tier holds no build: a test not marked slow that builds, or reads the shared
build, fails at once saying how to mark it (tests/conftest.py), and a slow one may."""

from __future__ import annotations

import os
import subprocess
import sys

from tests.build_support import REPO

# The suite's own hooks and fixture, in a conftest of a throwaway test folder.
CONFTEST = "from tests.conftest import pytest_runtest_setup, tiny_home  # noqa: F401\n"
TESTS = """
import pytest
from tests.build_support import require_slow, run_build


def test_unmarked_builds(tmp_path):
    run_build(tmp_path / "home")


def test_unmarked_reads_the_shared_build(tiny_home):
    pass


@pytest.mark.slow
def test_marked_may_build():
    require_slow("runs `envfoundry build`")
"""


def test_a_test_not_marked_slow_cannot_build(tmp_path):
    (tmp_path / "conftest.py").write_text(CONFTEST)
    (tmp_path / "test_tiers.py").write_text(TESTS)
    environment = {**os.environ, "PYTHONPATH": str(REPO)}
    environment.pop("ENVFOUNDRY_TEST_NOT_SLOW", None)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "-p",
            "no:xdist",
            "-o",
            "markers=slow",
            "--rootdir",
            str(tmp_path),
            str(tmp_path),
        ],
        cwd=tmp_path,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
    out = done.stdout
    # The build fails in the test, the shared build in its set-up (an error); the slow test
    # passes.
    assert "1 failed, 1 passed" in out and "1 error" in out, out[-3000:]
    assert "test_unmarked_builds runs `envfoundry build`, which only the slow tier" in out
    assert "uses the shared tiny build (the tiny_home fixture)" in out
    assert "pytestmark = pytest.mark.slow" in out
    # Nothing was built: the guard stopped the build before it started.
    assert not (tmp_path / "home").exists()
