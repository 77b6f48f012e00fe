"""A workspace EnvSpec → the source of a class whose state is the sandbox's workspace directory.

The class holds no state of its own: the worker makes the episode's workspace its working
directory (sandboxes/inside/worker.py), every verb reads and writes real files there, and
the state dump is the worker's snapshot of that tree under "__workspace__" — which is what
checks read. The verbs are the source of `WorkspaceVerbs` (synthesis.environments.
workspace_verbs), only those the topic's features call for, so environments of this
archetype differ in program shape; the disk backend below is the same for all.
"""

from __future__ import annotations

import inspect

from synthesis.environments.workspace_verbs import HELPERS, WorkspaceVerbs
from synthesis.models import EnvSpec

_DISK_INIT = r"""
    def __init__(self) -> None:
        # The worker has made the episode's workspace the working directory.
        self._root = os.getcwd()
"""

# The line a class with the code-tests dumper adds to its __init__ (see _CODE_TESTS_DUMPER).
_CODE_INIT = r"""        # The team's code as the episode's state seeded it (see get_state).
        self._seeded_code = self._code_digest()
"""

_DISK_BACKEND = r"""
    def _full(self, path: str) -> str:
        return os.path.join(self._root, path)

    def _read(self, path: str) -> str:
        # What a text-mode file object would return (strict UTF-8, universal newlines), for
        # two thirds of its cost: grep reads every file of the tree.
        with open(self._full(path), "rb", buffering=0) as handle:
            text = handle.read().decode("utf-8")
        return text.replace("\r\n", "\n").replace("\r", "\n") if "\r" in text else text

    def _write(self, path: str, text: str) -> None:
        os.makedirs(os.path.dirname(self._full(path)), exist_ok=True)
        with open(self._full(path), "w", encoding="utf-8") as handle:
            handle.write(text)

    def _is_file(self, path: str) -> bool:
        try:
            return S_ISREG(os.lstat(self._full(path)).st_mode)  # a symlink is not a file
        except (OSError, ValueError):
            return False

    def _is_dir(self, path: str) -> bool:
        try:
            return S_ISDIR(os.lstat(self._full(path)).st_mode)  # nor a folder
        except (OSError, ValueError):
            return False

    def _listdir(self, path: str) -> list:
        return sorted(os.listdir(self._full(path)))

    def _entries(self, path: str) -> list:
        # The kind of each entry comes with the listing: no stat per entry.
        with os.scandir(self._full(path)) as found:
            return sorted((entry.name, entry.is_dir(follow_symlinks=False)) for entry in found)

    def _remove(self, path: str) -> None:
        os.remove(self._full(path))

    def _mkdir(self, path: str) -> None:
        os.makedirs(self._full(path), exist_ok=True)

    def _rmdir(self, path: str) -> None:
        os.rmdir(self._full(path))
"""


# The `run` verb's backend, only in the classes that have the verb. It is written out here, not
# imported from the worker's own shell tool (sandboxes/inside/workspace_tools.py): the class
# is shipped to trainers and runs wherever they load it, so it carries what it needs.
_RUN_BACKEND = r"""
    def _run(self, command: str, timeout_s: int) -> dict:
        # A fixed environment (C locale, UTC, the system's PATH) so a command's output is the
        # same in every sandbox; its own session, so a timeout stops everything it started.
        # `_command_prefix`: what the command runs under where this class is not already in a
        # sandbox (the shipped reward module sets it to a bubblewrap launcher); none here.
        import select
        import signal
        import subprocess
        import time

        env = {
            "PATH": "/usr/local/bin:/usr/bin:/bin",
            "LC_ALL": "C",
            "TZ": "UTC",
            "HOME": self._root,
            "TMPDIR": "/tmp",
        }
        try:
            proc = subprocess.Popen(
                [*getattr(self, "_command_prefix", ()), "/bin/sh", "-c", command],
                cwd=self._root,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                start_new_session=True,
            )
        except OSError as exc:
            return {"exit_code": None, "output": f"cannot start the shell: {exc}"}
        deadline = time.monotonic() + timeout_s
        chunks, size, stopped = [], 0, ""
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                stopped = f"stopped after {timeout_s} s"
                break
            if not select.select([proc.stdout], [], [], min(left, 0.05))[0]:
                if proc.poll() is not None:
                    break  # the shell is done: what it left behind holds no call open
                continue
            chunk = os.read(proc.stdout.fileno(), 65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > 65536:
                stopped = "output over 64 KB: stopped"
                break
        # What it left running in the background goes too: a call is over when it returns.
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except OSError:
            pass
        proc.stdout.close()
        code = proc.wait()
        output = b"".join(chunks)[:65536].decode("utf-8", "replace")
        done = {"exit_code": None if stopped else code, "output": output}
        if stopped:
            done["stopped"] = stopped
        return done
"""


# The state dumper of a project folder that holds the team's code (synthesis.environments.
# projects.code_project): the state is the files, plus whether the project's tests and the
# held-back cases pass, run with the class's own `run` backend. That is how a code fix is
# graded: by running it. Only the verdict is state (the run's output holds timings), and
# only while it holds ("passing"; a folder's code always starts with its bug, so a fresh
# folder reports its files alone, as the worker seeded them).
#
# While the code's folder is byte for byte what the episode's state seeded (every entry:
# sources, links, byte code), the verdict is the one that state carried, and the tests are
# not run: they read nothing but that folder (the interpreter ignores the user site and the
# environment), so they would say the same, and running them cost an interpreter start per
# episode, most of a project episode's time in the build's self-test. Any change to the
# folder, or one that cannot be read, runs them.
_CODE_TESTS_DUMPER = r"""
    def get_state(self) -> dict:
        code = self._code_digest()
        if code is not None and code == self._seeded_code:
            passing = getattr(self, self.CODE_STATE, None) == "passing"
        else:
            done = self._run(self.CODE_CHECK, 10)
            self._drop_byte_code()
            output = done.get("output") or ""
            passing = done.get("exit_code") == 0 and output.endswith(
                "\n" + self.CODE_PASSED + "\n"
            )
        return {self.CODE_STATE: "passing"} if passing else {}

    def _code_digest(self):
        # Every entry under the code's folder by its path and kind: a file by its bytes, a
        # link by its target (never followed). None when any of it cannot be read.
        import hashlib
        from stat import S_ISLNK

        digest = hashlib.sha256()
        top = self._full(self.CODE_ROOT)
        try:
            pending = [""]
            while pending:
                rel = pending.pop()
                path = os.path.join(top, rel) if rel else top
                mode = os.lstat(path).st_mode
                digest.update(("\0%s\0%o\0" % (rel, mode)).encode())
                if S_ISDIR(mode):
                    for name in sorted(os.listdir(path), reverse=True):
                        pending.append(os.path.join(rel, name) if rel else name)
                elif S_ISREG(mode):
                    with open(path, "rb") as handle:
                        digest.update(handle.read())
                elif S_ISLNK(mode):
                    digest.update(os.readlink(path).encode("utf-8", "surrogateescape"))
        except (OSError, ValueError):
            return None
        return digest.hexdigest()

    def _drop_byte_code(self) -> None:
        # Running the tests leaves __pycache__ folders: the interpreter's, not the team's,
        # and no change a task asks for or forbids.
        import shutil

        for folder, subdirs, _files in os.walk(self._root):
            if "__pycache__" in subdirs:
                subdirs.remove("__pycache__")
                cache = os.path.join(folder, "__pycache__")
                if not os.path.islink(cache):
                    shutil.rmtree(cache, ignore_errors=True)
"""


def code_check_constants(spec: EnvSpec) -> dict[str, object]:
    """The constants of the code-tests dumper (none for a spec whose folder holds no code)."""
    ws = spec.workspace or {}
    if ws.get("family") != "project" or not any(t.name == "run" for t in spec.tools):
        return {}
    from synthesis.environments.projects import code_project
    from synthesis.environments.projects.folder import PARTS

    if "code_project" not in dict(PARTS):
        return {}
    return {
        "CODE_CHECK": code_project.verification_command(ws),
        "CODE_PASSED": code_project.PASSED,
        "CODE_STATE": code_project.STATE_KEY,
        "CODE_ROOT": code_project.ROOT,
    }


def workspace_constants(spec: EnvSpec) -> dict[str, object]:
    """The class constants of a workspace spec (header prefix, statuses, tags, folders, log)."""
    ws = spec.workspace or {}
    return {
        "HEADER_PREFIX": ws.get("header_prefix", ""),
        "STATUSES": tuple(ws.get("statuses", ())),
        "TAGS": tuple(ws.get("tags", ())),
        "ARCHIVE": ws.get("archive", "archive"),
        "TRASH": ws.get("trash", ".trash"),
        "LOG": ws.get("log", ""),
    }


def compile_workspace(spec: EnvSpec) -> str:
    """Python source of the workspace class for `spec` (deterministic for equal specs)."""
    if spec.kind != "workspace" or spec.workspace is None:
        raise ValueError(f"spec {spec.env_id} is not a workspace spec")
    lines = [
        f'"""{_doc(spec.title)}: {_doc(spec.description)}',
        "",
        f"Generated by EnvFoundry from spec {spec.env_id} (archetype {spec.archetype}, "
        f"schema v{spec.schema_version}).",
        '"""',
        "",
        "import os",
        "import posixpath",
        "from stat import S_ISDIR, S_ISREG",
        "",
        "",
        f"class {spec.class_name}:",
        f'    """{_doc(spec.description)}',
        "",
        "    The state is the workspace directory itself: every tool reads and writes files.",
    ]
    if spec.rules:
        lines += ["", "    Rules:"] + [f"    - {_doc(rule)}" for rule in spec.rules]
    lines += ['    """', ""]
    code_check = code_check_constants(spec)
    for name, value in {**workspace_constants(spec), **code_check}.items():
        lines.append(f"    {name} = {value!r}")
    body = [(_DISK_INIT + (_CODE_INIT if code_check else "")).rstrip("\n")]
    body[0] += "\n" + _DISK_BACKEND.rstrip("\n")
    if any(t.name == "run" for t in spec.tools):
        body.append(_RUN_BACKEND.strip("\n"))
    if code_check:
        body.append(_CODE_TESTS_DUMPER.strip("\n"))
    for name in (*HELPERS, *(t.name for t in spec.tools)):
        body.append(inspect.getsource(getattr(WorkspaceVerbs, name)).rstrip("\n"))
    return "\n".join(lines) + "\n" + "\n\n".join(body) + "\n"


def _doc(text: str) -> str:
    """Text for a docstring line: no quotes that end it, no line breaks, no backslashes."""
    return " ".join(text.replace("\\", "/").replace('"""', "'''").split())
