"""The command-line verbs of workspace environments, written once over an abstract file tree.

A workspace environment's class (synthesis.environments.workspace_code) is assembled from
the source of the verbs its topic uses plus a backend that reads and writes the real
workspace directory in the sandbox; the planner runs the very same verbs over an in-memory
tree (`MemoryTree`) to predict outcomes without running generated code. One implementation,
two backends: the prediction cannot drift from the class, and the sandboxed gold run stays
the judge.

Files are text. A document keeps "Key: value" header lines at its top (after the topic's
comment prefix, e.g. "# " in a code repository); `tag`, `set_status` and friends edit those.
Every verb validates its arguments and answers `{"success": ..., "data"|"message"|"error"}`.
"""

from __future__ import annotations

import posixpath
from typing import Any

# Verbs that only read, and those that change the tree (the spec's kinds).
QUERY_VERBS = ("ls", "tree", "cat", "head", "tail", "wc", "grep", "find", "stat")
MUTATE_VERBS = (
    "mkdir",
    "mv",
    "cp",
    "rename",
    "rm",
    "rmdir",
    "touch",
    "append",
    "replace",
    "tag",
    "untag",
    "set_status",
    "archive",
    "trash",
    "restore",
    "write",
    "run",
)
# Private helpers each verb needs besides the backend (assembled with it into the class).
HELPERS = ("_fail", "_ok", "_clean", "_into_folder", "_header", "_set_header", "_log")


class WorkspaceVerbs:
    """Verbs over a file tree; a subclass supplies the backend (`_read`, `_write`, ...,
    `_entries`: a folder's (name, is a folder) pairs sorted by name, a symlink never a folder)."""

    HEADER_PREFIX = ""
    STATUSES: tuple[str, ...] = ()
    TAGS: tuple[str, ...] = ()
    ARCHIVE = "archive"
    TRASH = ".trash"
    LOG = ""

    # ------------------------------------------------------------------ helpers

    def _fail(self, message: str) -> dict:
        return {"success": False, "error": message}

    def _ok(self, message: str) -> dict:
        self._log(message)
        return {"success": True, "message": message}

    def _clean(self, path: Any, what: str = "path", writing: bool = True) -> str:
        """A normalised relative path, or ValueError naming what is wrong with it (the
        activity log may be read, never written by a verb's own arguments)."""
        if not isinstance(path, str) or not path.strip():
            raise ValueError(f"{what} must be a non-empty string")
        text = path.strip().replace("\\", "/")
        if text.startswith("/") or "\x00" in text:
            raise ValueError(f"{what} must be relative to the workspace: {path!r}")
        clean = posixpath.normpath(text)
        if clean == ".." or clean.startswith("../"):
            raise ValueError(f"{what} leaves the workspace: {path!r}")
        if writing and self.LOG and clean == self.LOG:
            raise ValueError(f"{what} is the activity log, which only the tools write")
        return clean

    def _header(self, text: str, key: str) -> tuple[int, str | None]:
        """(line index, value) of header `key` in `text`; (-1, None) when it has none."""
        lead = f"{self.HEADER_PREFIX}{key}:"
        for i, line in enumerate(text.split("\n")):
            if not line.strip():
                break
            if line.startswith(lead):
                return i, line[len(lead) :].strip()
        return -1, None

    def _set_header(self, text: str, key: str, value: str | None) -> str:
        """`text` with header `key` set to `value` (None: removed), added after the others."""
        lines = text.split("\n")
        index, _ = self._header(text, key)
        line = f"{self.HEADER_PREFIX}{key}: {value}"
        if index >= 0:
            if value is None:
                del lines[index]
            else:
                lines[index] = line
        elif value is not None:
            end = next((i for i, x in enumerate(lines) if not x.strip()), len(lines))
            lines.insert(end, line)
        return "\n".join(lines)

    def _log(self, message: str) -> None:
        if self.LOG:
            old = self._read(self.LOG) if self._is_file(self.LOG) else ""
            self._write(self.LOG, old + message + "\n")

    # ------------------------------------------------------------------ reading verbs

    def ls(self, folder: str = ".") -> dict:
        """List the entries of a folder (sub-folders end with '/').

        Args:
            folder: folder relative to the workspace root ('.' is the root).
        """
        try:
            folder = self._clean(folder, "folder", writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not self._is_dir(folder):
            return self._fail(f"no such folder: {folder}")
        entries = [name + "/" if is_dir else name for name, is_dir in self._entries(folder)]
        return {"success": True, "data": entries}

    def tree(self, folder: str = ".") -> dict:
        """List every file under a folder, recursively, as paths from the workspace root.

        Args:
            folder: folder relative to the workspace root ('.' is the root).
        """
        try:
            folder = self._clean(folder, "folder", writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not self._is_dir(folder):
            return self._fail(f"no such folder: {folder}")
        found, pending = [], [folder]
        while pending:
            current = pending.pop()
            for name, is_dir in self._entries(current):
                full = posixpath.join(current, name) if current != "." else name
                (pending if is_dir else found).append(full)
        return {"success": True, "data": sorted(found)}

    def cat(self, path: str) -> dict:
        """Print the whole text of a file.

        Args:
            path: file path relative to the workspace root.
        """
        try:
            path = self._clean(path, writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        return {"success": True, "data": self._read(path)}

    def head(self, path: str, lines: int = 5) -> dict:
        """Print the first lines of a file.

        Args:
            path: file path relative to the workspace root.
            lines: how many lines to print (at least 1).
        """
        try:
            path = self._clean(path, writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(lines, int) or isinstance(lines, bool) or lines < 1:
            return self._fail("lines must be a positive integer")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        return {"success": True, "data": self._read(path).split("\n")[:lines]}

    def tail(self, path: str, lines: int = 5) -> dict:
        """Print the last lines of a file.

        Args:
            path: file path relative to the workspace root.
            lines: how many lines to print (at least 1).
        """
        try:
            path = self._clean(path, writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(lines, int) or isinstance(lines, bool) or lines < 1:
            return self._fail("lines must be a positive integer")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        return {"success": True, "data": self._read(path).rstrip("\n").split("\n")[-lines:]}

    def wc(self, path: str) -> dict:
        """Count the lines, words and characters of a file.

        Args:
            path: file path relative to the workspace root.
        """
        try:
            path = self._clean(path, writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        counts = {"lines": text.count("\n"), "words": len(text.split()), "chars": len(text)}
        return {"success": True, "data": counts}

    def grep(self, pattern: str, folder: str = ".") -> dict:
        """Find the lines containing a text (ignoring case) in every file under a folder.

        Args:
            pattern: the text to look for.
            folder: folder to search, relative to the workspace root ('.' is the root).
        """
        if not isinstance(pattern, str) or not pattern.strip():
            return self._fail("pattern must be a non-empty string")
        listed = self.tree(folder)
        if not listed["success"]:
            return listed
        wanted = pattern.strip().casefold()
        hits = []
        for path in listed["data"]:
            try:
                text = self._read(path)
            except (UnicodeDecodeError, OSError):
                # Not text (a compiled .pyc) or not readable (a dangling link): passed over,
                # as grep -I passes over binary files and grep -s over unreadable ones.
                continue
            # Case folding maps each character on its own, so a line holds the text only if
            # the whole file does: most files are passed over without splitting them.
            if wanted not in text.casefold():
                continue
            for number, line in enumerate(text.split("\n"), start=1):
                if wanted in line.casefold():
                    hits.append(f"{path}:{number}:{line}")
        return {"success": True, "data": hits}

    def find(self, name: str, folder: str = ".") -> dict:
        """Find the files whose name contains a text (ignoring case) under a folder.

        Args:
            name: part of the file name to look for.
            folder: folder to search, relative to the workspace root ('.' is the root).
        """
        if not isinstance(name, str) or not name.strip():
            return self._fail("name must be a non-empty string")
        listed = self.tree(folder)
        if not listed["success"]:
            return listed
        wanted = name.strip().casefold()
        paths = [p for p in listed["data"] if wanted in posixpath.basename(p).casefold()]
        return {"success": True, "data": paths}

    def stat(self, path: str) -> dict:
        """Show what a path is: a folder (with its number of entries) or a file (its size).

        Args:
            path: path relative to the workspace root.
        """
        try:
            path = self._clean(path, writing=False)
        except ValueError as exc:
            return self._fail(str(exc))
        if self._is_dir(path):
            return {
                "success": True,
                "data": {"type": "folder", "entries": len(self._listdir(path))},
            }
        if not self._is_file(path):
            return self._fail(f"no such file or folder: {path}")
        text = self._read(path)
        return {"success": True, "data": {"type": "file", "chars": len(text)}}

    # ------------------------------------------------------------------ changing verbs

    def mkdir(self, path: str) -> dict:
        """Create a folder (and any missing parent folders).

        Args:
            path: the new folder, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if path == "." or self._is_dir(path) or self._is_file(path):
            return self._fail(f"already exists: {path}")
        self._mkdir(path)
        return self._ok(f"mkdir {path}")

    def _into_folder(self, path: Any, folder: Any) -> tuple[str, str]:
        """(file, where it lands) for a file put into an existing folder under its own name;
        ValueError saying what is wrong (mv and cp share the checks)."""
        path, folder = self._clean(path), self._clean(folder, "folder")
        if not self._is_file(path):
            raise ValueError(f"no such file: {path}")
        if not self._is_dir(folder):
            raise ValueError(f"no such folder: {folder}")
        target = posixpath.normpath(posixpath.join(folder, posixpath.basename(path)))
        if self._is_file(target) or self._is_dir(target):
            raise ValueError(f"already exists: {target}")
        return path, target

    def mv(self, path: str, folder: str) -> dict:
        """Move a file into another existing folder, keeping its name.

        Args:
            path: the file to move, relative to the workspace root.
            folder: the destination folder ('.' is the root).
        """
        try:
            path, target = self._into_folder(path, folder)
        except ValueError as exc:
            return self._fail(str(exc))
        self._write(target, self._read(path))
        self._remove(path)
        return self._ok(f"mv {path} {target}")

    def cp(self, path: str, folder: str) -> dict:
        """Copy a file into another existing folder, keeping its name.

        Args:
            path: the file to copy, relative to the workspace root.
            folder: the destination folder ('.' is the root).
        """
        try:
            path, target = self._into_folder(path, folder)
        except ValueError as exc:
            return self._fail(str(exc))
        self._write(target, self._read(path))
        return self._ok(f"cp {path} {target}")

    def rename(self, path: str, new_name: str) -> dict:
        """Rename a file within its folder.

        Args:
            path: the file to rename, relative to the workspace root.
            new_name: the new file name (a name, not a path).
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(new_name, str) or not new_name.strip():
            return self._fail("new_name must be a non-empty string")
        new_name = new_name.strip()
        if "/" in new_name or "\\" in new_name or new_name in (".", ".."):
            return self._fail("new_name must be a file name, not a path")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        target = posixpath.join(posixpath.dirname(path), new_name).lstrip("/")
        if self._is_file(target) or self._is_dir(target):
            return self._fail(f"already exists: {target}")
        self._write(target, self._read(path))
        self._remove(path)
        return self._ok(f"rename {path} {target}")

    def rm(self, path: str) -> dict:
        """Delete a file for good.

        Args:
            path: the file to delete, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        self._remove(path)
        return self._ok(f"rm {path}")

    def rmdir(self, path: str) -> dict:
        """Delete an empty folder.

        Args:
            path: the folder to delete, relative to the workspace root.
        """
        try:
            path = self._clean(path, "folder")
        except ValueError as exc:
            return self._fail(str(exc))
        if path == "." or not self._is_dir(path):
            return self._fail(f"no such folder: {path}")
        if self._listdir(path):
            return self._fail(f"folder is not empty: {path}")
        self._rmdir(path)
        return self._ok(f"rmdir {path}")

    def touch(self, path: str) -> dict:
        """Create a new empty file (its folder must exist).

        Args:
            path: the new file, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if self._is_file(path) or self._is_dir(path):
            return self._fail(f"already exists: {path}")
        if not self._is_dir(posixpath.dirname(path) or "."):
            return self._fail(f"no such folder: {posixpath.dirname(path)}")
        self._write(path, "")
        return self._ok(f"touch {path}")

    def append(self, path: str, line: str) -> dict:
        """Add a line of text at the end of a file.

        Args:
            path: the file, relative to the workspace root.
            line: the text of the new line.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(line, str) or not line.strip() or "\n" in line:
            return self._fail("line must be one non-empty line of text")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        if text and not text.endswith("\n"):
            text += "\n"
        self._write(path, text + line.strip() + "\n")
        return self._ok(f"append {path}")

    def replace(self, path: str, old: str, new: str) -> dict:
        """Replace every occurrence of a text in a file by another text.

        Args:
            path: the file, relative to the workspace root.
            old: the text to replace (it must occur in the file).
            new: the replacement text.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(old, str) or not old or not isinstance(new, str):
            return self._fail("old must be a non-empty string and new a string")
        if "\n" in old or "\n" in new or old == new:
            return self._fail("old and new must be different single-line texts")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        if old not in text:
            return self._fail(f"text not found in {path}: {old!r}")
        self._write(path, text.replace(old, new))
        return self._ok(f"replace {path}")

    def write(self, path: str, text: str) -> dict:
        """Write a file whole: create it, or replace what it holds (its folders are made).

        Args:
            path: the file, relative to the workspace root.
            text: the file's new text.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(text, str):
            return self._fail("text must be a string")
        if self._is_dir(path):
            return self._fail(f"{path} is a folder")
        self._write(path, text)
        return self._ok(f"write {path}")

    def run(self, command: str, timeout_s: int = 10) -> dict:
        """Run a shell command in the workspace folder: sh with coreutils, grep, sed, awk,
        find, python3 and sqlite3, no network. Its output (stdout and stderr, at most 64 KB)
        and exit code come back; files it writes stay.

        Args:
            command: the command line, run by /bin/sh.
            timeout_s: seconds before the command is stopped (1 to 30).
        """
        if not isinstance(command, str) or not command.strip():
            return self._fail("command must be a non-empty string")
        if isinstance(timeout_s, bool) or not isinstance(timeout_s, int):
            return self._fail("timeout_s must be a whole number of seconds")
        if not 1 <= timeout_s <= 30:
            return self._fail("timeout_s must be between 1 and 30")
        done = self._run(command, timeout_s)
        self._log(f"run {command.splitlines()[0][:80]}")
        return {"success": True, "data": done}

    def tag(self, path: str, tag: str) -> dict:
        """Add a tag to a document (its 'Tags' header line).

        Args:
            path: the document, relative to the workspace root.
            tag: the tag to add (one of the workspace's tags).
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if tag not in self.TAGS:
            return self._fail(f"tag must be one of {list(self.TAGS)}")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        _, current = self._header(text, "Tags")
        tags = [t.strip() for t in (current or "").split(",") if t.strip()]
        if tag in tags:
            return self._fail(f"{path} is already tagged {tag}")
        self._write(path, self._set_header(text, "Tags", ", ".join(sorted(tags + [tag]))))
        return self._ok(f"tag {path} {tag}")

    def untag(self, path: str, tag: str) -> dict:
        """Remove a tag from a document (its 'Tags' header line).

        Args:
            path: the document, relative to the workspace root.
            tag: the tag to remove.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if not isinstance(tag, str) or not tag.strip():
            return self._fail("tag must be a non-empty string")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        _, current = self._header(text, "Tags")
        tags = [t.strip() for t in (current or "").split(",") if t.strip()]
        if tag not in tags:
            return self._fail(f"{path} is not tagged {tag}")
        rest = [t for t in tags if t != tag]
        self._write(path, self._set_header(text, "Tags", ", ".join(rest) if rest else None))
        return self._ok(f"untag {path} {tag}")

    def set_status(self, path: str, status: str) -> dict:
        """Set the status of a document (its 'Status' header line).

        Args:
            path: the document, relative to the workspace root.
            status: the new status (one of the workspace's statuses).
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if status not in self.STATUSES:
            return self._fail(f"status must be one of {list(self.STATUSES)}")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        text = self._read(path)
        if self._header(text, "Status")[1] == status:
            return self._fail(f"{path} is already {status}")
        self._write(path, self._set_header(text, "Status", status))
        return self._ok(f"set_status {path} {status}")

    def archive(self, path: str) -> dict:
        """Move a file into the archive, under the same folder path it had.

        Args:
            path: the file to archive, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if path.split("/")[0] in (self.ARCHIVE, self.TRASH):
            return self._fail(f"{path} is already archived or in the trash")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        target = posixpath.join(self.ARCHIVE, path)
        if self._is_file(target) or self._is_dir(target):
            return self._fail(f"already exists: {target}")
        self._write(target, self._read(path))
        self._remove(path)
        return self._ok(f"archive {path} {target}")

    def trash(self, path: str) -> dict:
        """Move a file into the trash (it can be restored until the trash is emptied).

        Args:
            path: the file to throw away, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        if path.split("/")[0] == self.TRASH:
            return self._fail(f"{path} is already in the trash")
        if not self._is_file(path):
            return self._fail(f"no such file: {path}")
        target = posixpath.join(self.TRASH, path)
        if self._is_file(target):
            return self._fail(f"the trash already holds {path}")
        self._write(target, self._read(path))
        self._remove(path)
        return self._ok(f"trash {path}")

    def restore(self, path: str) -> dict:
        """Put a file from the trash back where it was.

        Args:
            path: the file's original path, relative to the workspace root.
        """
        try:
            path = self._clean(path)
        except ValueError as exc:
            return self._fail(str(exc))
        source = posixpath.join(self.TRASH, path)
        if not self._is_file(source):
            return self._fail(f"the trash holds no {path}")
        if self._is_file(path) or self._is_dir(path):
            return self._fail(f"already exists: {path}")
        self._write(path, self._read(source))
        self._remove(source)
        return self._ok(f"restore {path}")


class MemoryTree(WorkspaceVerbs):
    """The verbs over an in-memory tree: how the planner predicts a chain without the sandbox.

    `files` maps paths to text, `dirs` holds every folder; the backend below keeps the
    invariants the disk gives (a file's parent folders exist, names are unique in a folder).
    """

    def __init__(self, files: dict[str, str], dirs: list[str], constants: dict[str, Any]):
        for key, value in constants.items():
            setattr(self, key, value)
        self.files = dict(files)
        self.dirs = set(dirs)
        for path in self.files:
            self._add_parents(path)

    def _add_parents(self, path: str) -> None:
        parent = posixpath.dirname(path)
        while parent:
            self.dirs.add(parent)
            parent = posixpath.dirname(parent)

    def _read(self, path: str) -> str:
        return self.files[path]

    def _write(self, path: str, text: str) -> None:
        self.files[path] = text
        self._add_parents(path)

    def _is_file(self, path: str) -> bool:
        return path in self.files

    def _is_dir(self, path: str) -> bool:
        return path == "." or path in self.dirs

    def _listdir(self, path: str) -> list[str]:
        prefix = "" if path == "." else path + "/"
        names = {
            p[len(prefix) :].split("/")[0]
            for p in list(self.files) + list(self.dirs)
            if p.startswith(prefix) and p != path
        }
        return sorted(names)

    def _entries(self, path: str) -> list[tuple[str, bool]]:
        prefix = "" if path == "." else path + "/"
        return [(name, prefix + name in self.dirs) for name in self._listdir(path)]

    def _remove(self, path: str) -> None:
        del self.files[path]

    def _mkdir(self, path: str) -> None:
        self.dirs.add(path)
        self._add_parents(path)

    def _rmdir(self, path: str) -> None:
        self.dirs.discard(path)

    def _run(self, command: str, timeout_s: int) -> dict:
        # Commands run only in the sandbox; the planner predicts nothing a command does.
        raise NotImplementedError("a memory tree runs no commands")

    def call(self, verb: str, args: dict[str, Any]) -> dict:
        """One verb call, as the sandbox would make it (unknown or bad arguments fail)."""
        try:
            return getattr(self, verb)(**args)
        except TypeError as exc:
            return {"success": False, "error": str(exc)}
