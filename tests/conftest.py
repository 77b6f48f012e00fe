"""Fixtures shared across test modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.build_support import run_build


@pytest.fixture(scope="session")
def tiny_home(tmp_path_factory) -> tuple[Path, str]:
    """One tiny build (seed 7) run by the CLI as a user runs it: (home, console output).

    Shared by every module that only reads a finished build, so the suite pays for it once.
    Tests that change the home must work on a copy (shutil.copytree).
    """
    home = tmp_path_factory.mktemp("tiny-home")
    proc = run_build(home)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-4000:]
    return home, proc.stdout
