"""Sandbox backends by name, and which of them this host can run."""

from __future__ import annotations

import threading

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess
from sandboxes.errors import SandboxError

BACKEND_NAMES = ("bwrap", "process", "docker")
_instances: dict[str, Backend] = {}
_lock = threading.Lock()


def get_backend(name: str = "auto") -> Backend:
    """The backend called `name` ("auto": bwrap when usable, else process); raises if unusable."""
    if name == "auto":
        name = default_backend()
    if name not in BACKEND_NAMES:
        raise SandboxError(f"unknown sandbox backend {name!r}; choose one of {BACKEND_NAMES}")
    backend = _instance(name)
    reason = backend.unavailable_reason()
    if reason is not None:
        raise SandboxError(f"sandbox backend {name!r} is not available here: {reason}")
    return backend


def default_backend() -> str:
    return "bwrap" if _instance("bwrap").unavailable_reason() is None else "process"


def available_backends() -> list[str]:
    return [name for name in BACKEND_NAMES if _instance(name).unavailable_reason() is None]


def unavailable_reason(name: str) -> str | None:
    return _instance(name).unavailable_reason()


def _instance(name: str) -> Backend:
    with _lock:
        if name not in _instances:
            if name == "bwrap":
                from sandboxes.backends.bwrap import BwrapBackend as cls
            elif name == "process":
                from sandboxes.backends.process import ProcessBackend as cls
            else:
                from sandboxes.backends.docker import DockerBackend as cls
            _instances[name] = cls()
        return _instances[name]


__all__ = [
    "Backend",
    "LaunchSpec",
    "WorkerProcess",
    "get_backend",
    "default_backend",
    "available_backends",
    "unavailable_reason",
    "BACKEND_NAMES",
]
