"""The `envfoundry` program itself: what it runs, and how it leaves."""

from __future__ import annotations

import gc
from importlib.metadata import entry_points

from orchestration import cli


def test_the_program_is_main_with_the_heap_frozen_before_python_exits(monkeypatch):
    """`envfoundry` (the console script, and `python -m orchestration.cli`) runs `cli.run`:
    main's exit code, with the heap frozen so that Python's exit does not collect garbage
    over everything a build imported."""
    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "envfoundry"]
    assert script.load() is cli.run
    monkeypatch.setattr(cli, "main", lambda: 3)
    gc.unfreeze()  # earlier tests of this worker may have frozen it
    try:
        assert cli.run() == 3
        assert gc.get_freeze_count() > 0
    finally:
        gc.unfreeze()
