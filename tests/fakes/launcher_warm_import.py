"""Imported by the launcher tests' run host's warm helper (RUN_HOST_WARM_IMPORTS of
tests/fakes/launcher_jobs.py), which then calls its `warm_up`: writes down the process that
imported it, so a test knows which process imported and warmed it, and which runs inherited
both."""

import os
from pathlib import Path

IMPORTED_IN = os.getpid()
_directory = os.environ.get("LAUNCHER_TEST_DIR")
if _directory:
    Path(_directory, "warm_import.pid").write_text(str(IMPORTED_IN))

WARMED_IN: int | None = None


def warm_up() -> None:
    global WARMED_IN
    WARMED_IN = os.getpid()


def failing_warm_up() -> None:
    raise RuntimeError("this warm-up fails on purpose")
