"""Where things live inside a sandbox, and the read-only mounts every worker needs."""

from __future__ import annotations

import importlib.util
import os
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path

SANDBOX_ROOT = "/sbx"
WORKER_DIR = "/sbx/inside"
WORKER_SCRIPT = "/sbx/inside/worker.py"
LIB_DIR = "/sbx/lib"
WORKSPACE = "/workspace"
HOST_WORKER_DIR = Path(__file__).resolve().parent / "inside"
# The whole environment a worker sees: the parent's (API keys included) never crosses over.
# A fixed hash seed makes set and dict-of-set iteration orders the same in every episode; a
# fixed zone, local times the same on every host.
SANDBOX_ENV = {
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "LANG": "C.UTF-8",
    "TMPDIR": "/tmp",
    "HOME": "/tmp",
    "PYTHONHASHSEED": "0",
    "TZ": "UTC",
}


@dataclass(frozen=True)
class Mount:
    """A host path made visible read-only at `inside` (always under SANDBOX_ROOT)."""

    host: str
    inside: str


@dataclass(frozen=True)
class Interpreter:
    executable: str
    # The installation prefix to bind, or None when it already lies under /usr.
    prefix: str | None
    # The base interpreter's own site-packages: hidden, since `-S` means the worker never needs it.
    site_packages: str | None


@cache
def interpreter() -> Interpreter:
    executable = os.path.realpath(sys.executable)
    prefix = os.path.realpath(sys.base_prefix)
    if not executable.startswith(prefix + os.sep):
        prefix = os.path.dirname(os.path.dirname(executable))
    version = f"python{sys.version_info.major}.{sys.version_info.minor}"
    site = os.path.join(prefix, "lib", version, "site-packages")
    under_usr = prefix == "/usr" or prefix.startswith("/usr/")
    return Interpreter(
        executable, None if under_usr else prefix, site if os.path.isdir(site) else None
    )


@cache
def runtime_mounts() -> tuple[tuple[Mount, ...], tuple[str, ...]]:
    """The worker's own code and orjson, with the sys.path entries that make them importable."""
    mounts = [Mount(str(HOST_WORKER_DIR), WORKER_DIR)]
    spec = importlib.util.find_spec("orjson")
    if spec is not None and spec.submodule_search_locations:
        mounts.append(
            Mount(os.path.realpath(spec.submodule_search_locations[0]), f"{LIB_DIR}/orjson")
        )
    return tuple(mounts), (LIB_DIR,)

