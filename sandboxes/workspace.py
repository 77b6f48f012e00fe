"""Per-episode workspace directories on the host: create, hand to a sandbox uid, give back, remove.

The files themselves are seeded and snapshotted by the worker, inside the sandbox (see
sandboxes/inside/workspace_tools.py): the parent never follows a path the environment could
have planted. What the parent does here walks by file descriptor with O_NOFOLLOW, so a
symlink swapped in by a dying sandbox cannot redirect it.
"""

from __future__ import annotations

import os
import shutil
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from sandboxes.errors import SandboxError
from sandboxes.layout import HOST_WORKER_DIR

WORKSPACE_KEY = "__workspace__"
WORKSPACE_TOOL_CLASS = "WorkspaceTools"
# The built-in tools that start a process in the sandbox (inside/workspace_tools.py). A
# process the worker did not start itself may outlive the episode or tamper with the worker,
# so a warm worker that ran one plays no other episode (sandboxes/warm.py).
PROCESS_TOOLS = frozenset({"run_shell"})
_MAX_ENTRIES = 200_000


def workspace_tools_source() -> tuple[str, str]:
    """(source, class name) of the built-in workspace tools, to derive their schemas by analysis."""
    return (HOST_WORKER_DIR / "workspace_tools.py").read_text(), WORKSPACE_TOOL_CLASS


# Every workspace episode seeds, snapshots and empties its tree: a few hundred small-file
# operations, ~20% of such an episode's time on a disk-backed /tmp. A memory filesystem does
# them faster; the trees are small (capped by the worker's message budget).
_MEMORY_DIR = Path("/dev/shm")


def _memory_dir() -> str | None:
    """/dev/shm when it is a writable directory here, else the default temporary directory
    (also when TMPDIR is set: the user chose where temporary files go)."""
    if os.environ.get("TMPDIR"):
        return None
    try:
        info = _MEMORY_DIR.stat()
    except OSError:
        return None
    if stat.S_ISDIR(info.st_mode) and os.access(_MEMORY_DIR, os.W_OK | os.X_OK):
        return str(_MEMORY_DIR)
    return None


@dataclass
class HostWorkspace:
    path: Path
    temporary: bool
    owner: tuple[int, int]
    lent_to: int | None = None

    @classmethod
    def prepare(cls, path: Path | None) -> HostWorkspace:
        if path is None:
            return cls(
                Path(tempfile.mkdtemp(prefix="envfoundry-workspace-", dir=_memory_dir())),
                True,
                (os.getuid(), os.getgid()),
            )
        path = Path(path)
        try:
            path.mkdir(parents=True, exist_ok=True)
            info = path.lstat()
        except OSError as exc:
            raise SandboxError(f"cannot use workspace {path}: {exc}") from exc
        if not stat.S_ISDIR(info.st_mode):
            raise SandboxError(f"workspace {path} is not a directory (symlinks are refused)")
        return cls(path.resolve(), False, (info.st_uid, info.st_gid))

    def lend(self, uid: int) -> None:
        """Make the tree writable by the sandbox uid (and only by it, besides us)."""
        chown_tree(self.path, uid, uid)
        self.lent_to = uid

    def release(self) -> None:
        if self.temporary:
            # rmtree works by descriptor on Linux, so planted symlinks are removed, not followed.
            shutil.rmtree(self.path, ignore_errors=True)
        elif self.lent_to is not None:
            chown_tree(self.path, *self.owner)
            self.lent_to = None


def chown_tree(root: Path, uid: int, gid: int) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        _chown_dir(fd, uid, gid, [0])
    finally:
        os.close(fd)


def _chown_dir(fd: int, uid: int, gid: int, seen: list[int]) -> None:
    os.chown(fd, uid, gid)
    with os.scandir(fd) as entries:
        for entry in entries:
            seen[0] += 1
            if seen[0] > _MAX_ENTRIES:
                return
            try:
                if entry.is_dir(follow_symlinks=False):
                    sub = os.open(
                        entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd
                    )
                    try:
                        _chown_dir(sub, uid, gid, seen)
                    finally:
                        os.close(sub)
                else:
                    os.chown(entry.name, uid, gid, dir_fd=fd, follow_symlinks=False)
            except OSError:
                continue
