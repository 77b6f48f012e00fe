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
# Run inside the sandbox, not imported here: part of the code version of every stage that
# runs a sandbox (synthesis/code_versions.py).
VERSIONED_FILES = ("inside",)
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
    cache_worker_bytecode()
    mounts = [Mount(str(HOST_WORKER_DIR), WORKER_DIR)]
    spec = importlib.util.find_spec("orjson")
    if spec is not None and spec.submodule_search_locations:
        mounts.append(
            Mount(os.path.realpath(spec.submodule_search_locations[0]), f"{LIB_DIR}/orjson")
        )
    return tuple(mounts), (LIB_DIR,)


def cache_worker_bytecode() -> None:
    """Write the bytecode cache of the modules a worker imports, so it loads rather than
    compiles them (~1 ms each, per episode). Written even under PYTHONDONTWRITEBYTECODE, which
    governs imports in this process, not the worker's files; a read-only install just goes
    without. worker.py runs as a script, which Python never loads from a cache."""
    for source in sorted(HOST_WORKER_DIR.glob("*.py")):
        if source.name == "worker.py":
            continue
        cached = Path(importlib.util.cache_from_source(str(source)))
        if not _stale(source, cached):
            continue
        import py_compile

        try:
            py_compile.compile(str(source), cfile=str(cached), doraise=True)
        except (OSError, py_compile.PyCompileError):
            continue


def _stale(source: Path, cached: Path) -> bool:
    """Whether the import system would reject `cached` for `source` (a timestamp-based pyc)."""
    try:
        header = cached.read_bytes()[:16]
        info = source.stat()
    except OSError:
        return True
    return (
        header[:4] != importlib.util.MAGIC_NUMBER
        or int.from_bytes(header[4:8], "little") != 0
        or int.from_bytes(header[8:12], "little") != int(info.st_mtime) & 0xFFFFFFFF
        or int.from_bytes(header[12:16], "little") != info.st_size & 0xFFFFFFFF
    )
