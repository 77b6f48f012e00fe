"""What the fast-run code names above itself (orchestration/fastrun/entrypoints.py) exists:
a name that went stale would surface only when a warm run host first needed it."""

from __future__ import annotations

import importlib

from orchestration import build_process
from orchestration.fastrun import entrypoints


def test_every_entry_point_is_a_function_of_the_build_process():
    assert entrypoints.entry_point("build") is build_process.build_served
    for target in entrypoints.ENTRY_POINTS.values():
        assert callable(entrypoints.resolve(target)), target


def test_every_preload_names_a_module_and_its_function():
    for target in (*entrypoints.RUN_PRELOADS, *entrypoints.ENTRY_PRELOADS):
        module, _, function = target.partition(":")
        loaded = importlib.import_module(module)
        assert not function or callable(getattr(loaded, function, None)), target
