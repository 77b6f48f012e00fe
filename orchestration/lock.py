"""One build per home at a time: an exclusive lock held for the whole build.

The lock is an flock on `$ENVFOUNDRY_HOME/.build.lock`, so the kernel releases it however
the holder ends (an exception, Ctrl-C, kill -9): a lock file left behind by a dead build is
never mistaken for a live one. The file records who holds it, so a refused build can say.
"""

from __future__ import annotations

import fcntl
import json
import os
import socket
import sys
import time
from pathlib import Path

LOCK_NAME = ".build.lock"


class HomeLocked(RuntimeError):
    """Another build holds this home; the message names it."""


class BuildLock:
    def __init__(self, home: Path) -> None:
        self.path = home / LOCK_NAME
        self._fd: int | None = None

    def acquire(self) -> BuildLock:
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = _read_holder(fd)
            os.close(fd)
            raise HomeLocked(
                f"{self.path.parent} is being built by another build ({holder}); wait for it "
                "to finish or stop it, or build into another --home"
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, json.dumps(_me()).encode())
        self._fd = fd
        return self

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None

    def __enter__(self) -> BuildLock:
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
