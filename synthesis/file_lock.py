"""An exclusive lock on a file, held by one process at a time, that names its holder.

The lock is an flock, so the kernel releases it however the holder ends (an exception,
Ctrl-C, kill -9): a lock file left behind by a dead process is never mistaken for a live
one. The file records who holds it (pid, host, since when, the command), so a refused
caller can say who it waits for. A build holds its home's lock (orchestration/lock.py), an
evaluation its home's evaluations' lock (synthesis/evaluation/store.py).
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from pathlib import Path


class Locked(RuntimeError):
    """Another process holds the lock; the message names it."""


class FileLock:
    """`acquire` takes the lock or raises `error(busy(holder))`, where holder describes the
    process holding it."""

    def __init__(
        self,
        path: Path,
        busy: Callable[[str], str] | None = None,
        error: type[Locked] = Locked,
    ) -> None:
        self.path = Path(path)
        self.busy = busy or (lambda holder: f"{self.path} is locked by {holder}")
        self.error = error
        self._fd: int | None = None

    def acquire(self) -> FileLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise self.error(self.busy(holder)) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(_me()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> FileLock:
        return self.acquire()

    def __exit__(self, *exc_info: object) -> None:
        self.release()


def _me() -> dict:
    return {
        "pid": os.getpid(),
        "host": socket.gethostname(),
        "since": time.strftime("%Y-%m-%d %H:%M:%S", time.localtime()),
        "command": " ".join(["envfoundry", *sys.argv[1:]])[:300],
    }


def _read_holder(fd: int) -> str:
    try:
        holder = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return "holder unknown"
    return (
        f"pid {holder.get('pid')} on {holder.get('host')} since {holder.get('since')}: "
        f"{holder.get('command')}"
    )
