"""Built-in workspace tools (files and a shell), seeding and snapshotting, run inside the sandbox.

Paths are relative to the workspace root. The sandbox is what keeps writes inside the
workspace; the path checks here only make a confused agent's mistakes readable (and are the
last guard under the reduced-isolation process backend).
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

TOOL_NAMES = ("list_files", "read_file", "write_file", "delete_file", "run_shell")
MAX_READ_BYTES = 256 * 1024
MAX_SHELL_OUTPUT = 64 * 1024
SNAPSHOT_MAX_FILE_BYTES = 256 * 1024
SNAPSHOT_MAX_ENTRIES = 10_000
SHELL_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LANG": "C.UTF-8", "TMPDIR": "/tmp"}


def _fail(message: str) -> dict[str, Any]:
    return {"success": False, "error": message}


class WorkspaceTools:
    """The tools every workspace environment has; environment classes add their own verbs."""

    def __init__(self, root: str, shell_timeout_cap_s: float) -> None:
        self.root = os.path.realpath(root)
        self.shell_timeout_cap_s = shell_timeout_cap_s

    def _resolve(self, path: Any) -> str:
        full = os.path.realpath(os.path.join(self.root, _relative(path)))
        if full != self.root and not full.startswith(self.root + os.sep):
            raise ValueError(f"path escapes the workspace: {path!r}")
        return full

    def list_files(self, path: str = ".") -> dict[str, Any]:
        """List the files under a directory of the workspace, recursively.

        Args:
            path: directory relative to the workspace root.
        """
        try:
            base = self._resolve(path)
        except ValueError as exc:
            return _fail(str(exc))
        if not os.path.isdir(base):
            return _fail(f"not a directory: {path}")
        found = []
        for current, dirs, files in os.walk(base):
            dirs.sort()
            for name in sorted(files):
                found.append(os.path.relpath(os.path.join(current, name), self.root))
            if len(found) > SNAPSHOT_MAX_ENTRIES:
                return {
                    "success": True,
                    "data": sorted(found)[:SNAPSHOT_MAX_ENTRIES],
                    "truncated": True,
                }
        return {"success": True, "data": sorted(found)}

    def read_file(self, path: str) -> dict[str, Any]:
        """Read a text file of the workspace.

        Args:
            path: file path relative to the workspace root.
        """
        try:
            full = self._resolve(path)
            with open(full, "rb") as handle:
                data = handle.read(MAX_READ_BYTES + 1)
        except (ValueError, OSError) as exc:
            return _fail(str(exc))
        text = data[:MAX_READ_BYTES].decode("utf-8", "replace")
        return {"success": True, "data": text, "truncated": len(data) > MAX_READ_BYTES}

    def write_file(self, path: str, content: str) -> dict[str, Any]:
        """Create or overwrite a text file in the workspace (parent directories are created).

        Args:
            path: file path relative to the workspace root.
            content: the full new text of the file.
        """
        if not isinstance(content, str):
            return _fail("content must be a string")
        try:
            full = self._resolve(path)
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w", encoding="utf-8") as handle:
                handle.write(content)
        except (ValueError, OSError) as exc:
            return _fail(str(exc))
        return {"success": True, "message": f"wrote {len(content)} characters to {path}"}

    def delete_file(self, path: str) -> dict[str, Any]:
        """Delete a file (or an empty directory) of the workspace.

        Args:
            path: path relative to the workspace root.
        """
        try:
            full = self._resolve(path)
            if full == self.root:
                return _fail("refusing to delete the workspace root")
            if os.path.isdir(full) and not os.path.islink(full):
                os.rmdir(full)
            else:
                os.unlink(full)
        except (ValueError, OSError) as exc:
            return _fail(str(exc))
        return {"success": True, "message": f"deleted {path}"}

    def run_shell(self, command: str, timeout_s: float = 10.0) -> dict[str, Any]:
        """Run a shell command with the workspace as the working directory.

        Args:
            command: the /bin/sh command line.
            timeout_s: seconds before the command is killed.
        """
        if not isinstance(command, str) or not command.strip():
            return _fail("command must be a non-empty string")
        if not isinstance(timeout_s, (int, float)) or timeout_s <= 0:
            return _fail("timeout_s must be a positive number")
        return _run_shell(command, self.root, min(float(timeout_s), self.shell_timeout_cap_s))


def _run_shell(command: str, cwd: str, timeout_s: float) -> dict[str, Any]:
    import select
    import signal
    import subprocess
    import time

    try:
        proc = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            env=dict(SHELL_ENV, HOME=cwd),
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        return _fail(f"cannot start the shell: {exc}")
    deadline = time.monotonic() + timeout_s
    chunks, size, timed_out, truncated = [], 0, False, False
    fd = proc.stdout.fileno()
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        ready, _, _ = select.select([fd], [], [], remaining)
        if not ready:
            continue
        chunk = os.read(fd, 65536)
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
        if size > MAX_SHELL_OUTPUT:
            truncated = True
            break
    if timed_out or truncated:
        # The whole process group: a command's children must not outlive the call.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
    proc.stdout.close()
    code = proc.wait()
    output = b"".join(chunks)[:MAX_SHELL_OUTPUT].decode("utf-8", "replace")
    data = {"exit_code": code, "output": output, "truncated": truncated, "timed_out": timed_out}
    if timed_out:
        return {"success": False, "error": f"command timed out after {timeout_s:g}s", "data": data}
    return {"success": True, "data": data}


def seed(root: str, spec: Any) -> None:
    """Create the initial workspace tree: {"files": {path: text}, "dirs": [path, ...]}.

    Every episode of a workspace environment starts here, so it is written by descriptor:
    each path is checked as text (relative, never above the root) and each directory opened
    from its parent without following a symlink, then the file created in it, instead of
    resolving every path on disk the way the tools do (a state of 36 files: 0.9 ms instead of
    5.4 ms). Nothing a symlink in the tree points to is ever written: seeding makes none, and one
    already there (a workspace the caller gave) makes the path that crosses it fail.
    """
    if not isinstance(spec, dict):
        raise ValueError("__workspace__ must be an object with 'files' and/or 'dirs'")
    dirs = spec.get("dirs") or []
    if not isinstance(dirs, list):
        raise ValueError("__workspace__.dirs must list paths")
    files = spec.get("files") or {}
    if not isinstance(files, dict):
        raise ValueError("__workspace__.files must map paths to text")
    top = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    # The directory the last file went into, kept open for the next: files come sorted, so
    # a directory's files come together. Few handles at once: the worker may have 64.
    current, current_rel = top, ""

    def directory(rel: str) -> int:
        nonlocal current, current_rel
        if rel != current_rel:
            handle = _descend(top, rel) if rel else top
            if current != top:
                os.close(current)
            current, current_rel = handle, rel
        return current

    def write(rel: str, content: Any) -> None:
        if not isinstance(content, str):
            raise ValueError("content must be a string")
        where = _seed_path(rel)
        if not where:
            raise ValueError("it is the workspace itself")
        data = memoryview(content.encode("utf-8"))
        parent, _, name = where.rpartition("/")
        handle = os.open(name, _OPEN_FILE, 0o666, dir_fd=directory(parent))
        try:
            while data:
                data = data[os.write(handle, data) :]
        finally:
            os.close(handle)

    try:
        for rel in dirs:
            with _seeding(rel):
                directory(_seed_path(rel))
        for rel, content in sorted(files.items()):
            with _seeding(rel):
                write(rel, content)
    finally:
        if current != top:
            os.close(current)
        os.close(top)


def _descend(top: int, rel: str) -> int:
    """A handle on directory `rel` under `top`, each missing directory on the way made, no
    symlink followed; never more than two handles open."""
    at = top
    try:
        for name in rel.split("/"):
            try:
                handle = os.open(name, _OPEN_DIRECTORY, dir_fd=at)
            except FileNotFoundError:
                os.mkdir(name, dir_fd=at)
                handle = os.open(name, _OPEN_DIRECTORY, dir_fd=at)
            if at != top:
                os.close(at)
            at = handle
    except BaseException:
        if at != top:
            os.close(at)
        raise
    return at


@contextmanager
def _seeding(rel: Any) -> Iterator[None]:
    """What goes wrong seeding `rel`, as the one error seeding raises."""
    try:
        yield
    except OSError as exc:
        raise ValueError(f"cannot seed {rel!r}: {exc.strerror}") from None
    except ValueError as exc:  # a refused path, text that is not UTF-8
        raise ValueError(f"cannot seed {rel!r}: {exc}") from None


_OPEN_DIRECTORY = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_OPEN_FILE = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC


def _relative(path: Any) -> str:
    """`path`, if it is a path relative to the workspace; the tools' refusal otherwise."""
    if not isinstance(path, str) or not path or "\x00" in path:
        raise ValueError("path must be a non-empty string")
    if os.path.isabs(path):
        raise ValueError(f"path must be relative to the workspace: {path!r}")
    return path


def _seed_path(path: Any) -> str:
    """`path` relative to the root, normalised ("" for the root itself), if it stays inside
    the workspace as text; the tools' refusals otherwise."""
    normal = os.path.normpath(_relative(path))
    if normal == ".." or normal.startswith("../"):
        raise ValueError(f"path escapes the workspace: {path!r}")
    return "" if normal == "." else normal


# What a final workspace's text files may hold in all: a workspace is files an agent worked
# on, not a database, so its snapshot stays small whatever the message limit (which is set
# for the large states of foreign classes); the shipped reward module assumes the same.
SNAPSHOT_BUDGET_BYTES = 500_000


def snapshot(root: str, budget_bytes: int) -> dict[str, Any]:
    """The final workspace: text files (within limits), directories, symlinks, what was skipped.

    Symlinks are recorded, never followed: a link may point anywhere, and following it would
    put content from outside the workspace into the state.
    """
    files: dict[str, str] = {}
    dirs: list[str] = []
    links: dict[str, str] = {}
    skipped: dict[str, str] = {}
    entries = 0
    for current, subdirs, names in os.walk(root):
        subdirs.sort()
        for name in sorted(subdirs) + sorted(names):
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root)
            entries += 1
            if entries > SNAPSHOT_MAX_ENTRIES:
                skipped["..."] = f"more than {SNAPSHOT_MAX_ENTRIES} entries"
                return _snapshot(files, dirs, links, skipped)
            try:
                info = os.lstat(full)
            except OSError as exc:
                skipped[rel] = f"unreadable: {exc.strerror}"
                continue
            if stat.S_ISLNK(info.st_mode):
                links[rel] = os.readlink(full)
            elif stat.S_ISDIR(info.st_mode):
                dirs.append(rel)
            elif not stat.S_ISREG(info.st_mode):
                skipped[rel] = "not a regular file"
            elif info.st_size > SNAPSHOT_MAX_FILE_BYTES:
                skipped[rel] = f"too large ({info.st_size} bytes)"
            elif info.st_size > budget_bytes:
                skipped[rel] = "snapshot size budget exhausted"
            else:
                text = _read_text(full, info.st_size)
                if text is None:
                    skipped[rel] = f"binary or unreadable ({info.st_size} bytes)"
                else:
                    files[rel] = text
                    budget_bytes -= info.st_size
    return _snapshot(files, dirs, links, skipped)


def _read_text(path: str, size: int) -> str | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, size + 1)[:SNAPSHOT_MAX_FILE_BYTES]
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _snapshot(files: dict, dirs: list, links: dict, skipped: dict) -> dict[str, Any]:
    return {"files": files, "dirs": sorted(dirs), "symlinks": links, "skipped": skipped}
