"""Imported by the launcher tests' run host's warm helper (RUN_HOST_WARM_IMPORTS of
tests/fakes/launcher_jobs.py): writes down the process that imported it, so a test knows which
process imported it, and which runs inherited it."""

import os
from pathlib import Path

IMPORTED_IN = os.getpid()
_directory = os.environ.get("LAUNCHER_TEST_DIR")
if _directory:
    Path(_directory, "warm_import.pid").write_text(str(IMPORTED_IN))
