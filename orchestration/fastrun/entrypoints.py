"""What the fast-run code calls above itself, named by module path and function.

A warm run host forks a CLI's whole build (warm_build.py), and a run host loads what its runs
and that build would otherwise each import. Both are code of the build process, above this
package, which starts the host and must not be imported by it: the names here are resolved
(imported) in the host when it needs them. tests/orchestration/test_entrypoints.py holds each
to a module and function that exist.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any

# What a CLI may ask a warm run host to fork, by name: `function(request, terminal, host)`
# runs the request in the forked process, whose console is the CLI's `terminal`, and returns
# its exit code (`host`: the pid of the run host that forked it).
ENTRY_POINTS = {
    "build": "orchestration.build_process:build_served",
}

# Loaded by every run host before it forks a run: the storage of the instances our homes
# make, which each run opens (~0.15 s of imports and migration scripts otherwise).
RUN_PRELOADS = ("orchestration.storage:preload",)

# Loaded by a warm run host too: what the entry points import as they run (~0.3 s a build).
ENTRY_PRELOADS = (
    "orchestration.build_process",
    "orchestration.build",
    "orchestration.summary",
)


def resolve(target: str) -> Callable[..., Any]:
    """The function `module:function` names, its module imported."""
    module, _, function = target.partition(":")
    return getattr(importlib.import_module(module), function)


def entry_point(name: str) -> Callable[..., int]:
    """The function of entry point `name` (KeyError: there is none)."""
    return resolve(ENTRY_POINTS[name])


def load(target: str) -> None:
    """Import `module`; for `module:function`, also call the function."""
    if ":" in target:
        resolve(target)()
    else:
        importlib.import_module(target)
