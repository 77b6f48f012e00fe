"""Imported by the launcher tests' run host while it is idle (RUN_HOST_IDLE_IMPORTS of
tests/fakes/launcher_jobs.py): writes down the process that imported it, so a test knows the
host imported it before it forked a run."""

import os
from pathlib import Path

IMPORTED_IN = os.getpid()
_directory = os.environ.get("LAUNCHER_TEST_DIR")
if _directory:
    Path(_directory, "idle_import.pid").write_text(str(IMPORTED_IN))
