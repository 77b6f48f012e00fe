"""One build per home at a time: an exclusive lock held for the whole build.

The lock is an flock on `$ENVFOUNDRY_HOME/.build.lock` (synthesis/file_lock.py), so the
kernel releases it however the holder ends: a lock file left behind by a dead build is never
mistaken for a live one. A refused build names the holder.
"""

from __future__ import annotations

from pathlib import Path

from synthesis.file_lock import FileLock, Locked

LOCK_NAME = ".build.lock"


class HomeLocked(Locked):
    """Another build holds this home; the message names it."""


class BuildLock(FileLock):
    def __init__(self, home: Path) -> None:
        super().__init__(
            Path(home) / LOCK_NAME,
            busy=lambda holder: (
                f"{home} is being built by another build ({holder}); wait "
                "for it to finish or stop it, or build into another --home"
            ),
            error=HomeLocked,
        )
