"""Helpers shared by the sandbox tests (a unique module name: test dirs are not packages)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from sandboxes import EnvSource, Limits
from sandboxes.backends import unavailable_reason

FAKES = Path(__file__).resolve().parent.parent / "fakes"
HOSTILE = FAKES / "hostile_envs"
ALL_BACKENDS = ("bwrap", "process", "docker")
# Short enough to keep the suite fast, long enough for a loaded 2-core machine.
FAST = Limits(call_timeout_s=1.0)


def backend_params(names=ALL_BACKENDS):
    """One parameter a backend, skipped where it cannot run; docker's is slow (its sandboxes
    are containers: tests/conftest.py keeps them out of the fast tier)."""
    params = []
    for name in names:
        reason = unavailable_reason(name)
        marks = [pytest.mark.skip(reason=f"{name}: {reason}")] if reason else []
        if name == "docker":
            marks.append(pytest.mark.slow)
        params.append(pytest.param(name, marks=marks, id=name))
    return params


def fake(name: str, class_name: str, **kwargs) -> EnvSource:
    return EnvSource(path=str(FAKES / name), class_name=class_name, **kwargs)


def hostile(module: str, class_name: str) -> EnvSource:
    return EnvSource(path=str(HOSTILE / f"{module}.py"), class_name=class_name)


def processes_of(uid: int) -> list[int]:
    pids = []
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                if entry.stat().st_uid == uid:
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))
