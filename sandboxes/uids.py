"""Leases of unprivileged uids, one per live sandbox, distinct across every process on the host.

RLIMIT_NPROC counts all processes of a uid host-wide, so two sandboxes sharing a uid would
share one process budget (and one fork bomb would starve the other). A lease is an flock on a
per-uid file, so it is released by the kernel even if the holder dies.
"""

from __future__ import annotations

import fcntl
import itertools
import os
import pwd
import tempfile
import threading
from functools import cache
from pathlib import Path

from sandboxes.errors import SandboxError

UID_BASE = 60000
UID_COUNT = 1000
_counter = itertools.count()
_counter_lock = threading.Lock()


class UidLease:
    def __init__(self, uid: int, fd: int) -> None:
        self.uid = uid
        self._fd: int | None = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None


def lease_uid() -> UidLease:
    lock_dir = lease_dir()
    taken = _system_uids()
    with _counter_lock:
        # Rotating the starting point keeps a just-released uid (whose processes may still be
        # dying) from being handed straight to the next sandbox.
        start = (os.getpid() * 31 + next(_counter) * 7) % UID_COUNT
    for step in range(UID_COUNT):
        uid = UID_BASE + (start + step) % UID_COUNT
        if uid in taken:
            continue
        fd = os.open(lock_dir / str(uid), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        return UidLease(uid, fd)
    raise SandboxError(f"all {UID_COUNT} sandbox uids from {UID_BASE} are in use")


@cache
def lease_dir() -> Path:
    """The folder of this host's uid leases for sandboxes started by this euid (made if
    missing). A container that starts sandboxes on the same kernel mounts it, so that its
    leases and the host's are one set."""
    base = Path("/run") if os.access("/run", os.W_OK) else Path(tempfile.gettempdir())
    path = base / f"envfoundry-sandbox-uids-{os.geteuid()}"
    path.mkdir(mode=0o700, exist_ok=True)
    if path.stat().st_uid != os.geteuid() or path.is_symlink():
        raise SandboxError(f"uid lock directory {path} is not owned by us")
    return path


@cache
def _system_uids() -> frozenset[int]:
    # Never hand out a uid that belongs to a real account on this host.
    try:
        return frozenset(entry.pw_uid for entry in pwd.getpwall())
    except OSError:
        return frozenset()
