"""Reset and score an EnvFoundry RL task with nothing but the Python standard library.

Shipped verbatim beside the shards (listed in their manifest) so a trainer can use a task
line of `rl/<split>.jsonl` with no EnvFoundry installed:

    import json, envfoundry_reward as efr
    task = json.loads(open("rl/train.jsonl").readline())
    env = efr.load_env(task)                 # the task's environment, in its initial state
    result = efr.step(env, "list_things", {"limit": 5})   # what the agent sees
    efr.score(task, env, final_reply="...")  # {"reward": 1.0, "success": True}

`load_env` runs the environment's code in THIS process, without a sandbox. It loads an
environment EnvFoundry compiled itself from a spec (`environment.compiled_by_us`); any other
code (foreign classes, LLM-written code) is refused unless the caller passes `trust=True`,
and the refusal names what that code `requires` beyond the standard library. A workspace
environment (its state is a file tree) works in a temporary folder, which its file tools
never leave. Its `run` tool (a shell command) runs each command under bubblewrap where
bwrap is usable (probed once per process): only that folder and the system's programs are
visible, with no network, a private /tmp, /proc and pid namespace, and limits on time,
output, memory, processes and file size. Where bwrap is not usable, an environment with
`run` is refused unless `trust=True`, and its commands then run unsandboxed as this
process's user. To play untrusted environments, run them in EnvFoundry's sandbox instead.
The sandbox also gives each episode a seeded clock and randomness; here the code reads the
real ones, so ids and times it generates differ from the recorded episodes' (checks ask only
for the form of generated values, so the rewards agree).

The reward rule is the project's own: EnvFoundry's engine grades with this very file
(`grade_episode`). 0 when any guard fails (collateral damage, a forbidden change, a reply
that is not specific: another candidate value, a rule that does not block the request, a
dump of values) or when a goal that held before the agent acted no longer holds; else the
share of the goals achieved, counting only goals that did not already hold before the agent
acted (so doing nothing earns 0). A question's answer must state the asked value, however
it is written; a refusal must decline, give a true reason and claim nothing was done. A
reply is grounded: a value earns only where a call of the episode showed it (`step` records
the calls in `env.shown`, which `score` reads), and a reason only where the episode showed
the block, so a lucky guess with no call earns nothing. Success: every check passes. No
checks: reward 0.
"""

from __future__ import annotations

import configparser
import copy
import csv
import dataclasses
import datetime
import decimal
import enum
import hashlib
import inspect
import io
import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
import types
import unicodedata
import weakref
from collections.abc import Callable, Sequence
from decimal import Decimal, InvalidOperation
from functools import lru_cache, partial
from typing import Any

# 2: the reply contract (a question's answer specific, a refusal with a true reason and no
# other rule, every reply concise; values compared as people write them).
# 3: `reply_excludes` reads a reply with its word-for-word quotations of the blocking rule's
# lines (`quoted`) cut out: an older module would hold those quotations against the reply.
# 4: grounded replies: a value a reply must state earns only where a tool result of the same
# episode showed it, and a refusal's reason only where the episode showed the block (or the
# request alone tells it); `score` reads the calls `step` recorded.
# 5: a refusal's fact that the request states ("the slot booked for Wednesday", refused for
# being booked) is kept where a call shows it on its record, and earns only said in the
# reply's own words, not inside words copied from the request: an older module would pay an
# echo of the request.
# 6: `file_table` and `file_json` read a report the task asks for by its format (a project
# folder's work): an older module does not know them and cannot grade such a task.
# 7: `file_ini` reads a configuration file a task changes by its values, as configparser
# reads it: an older module does not know it and cannot grade such a task.
REWARD_RULE_VERSION = 7
__all__ = [
    "REWARD_RULE_VERSION",
    "Env",
    "UntrustedEnvironment",
    "bwrap_unusable_reason",
    "check_trust",
    "evaluate_check",
    "grade",
    "load_env",
    "observation",
    "run_sandbox_prefix",
    "score",
    "score_state",
    "state",
    "step",
]


class UntrustedEnvironment(RuntimeError):
    """`load_env` refused to run code EnvFoundry did not compile (pass trust=True to run it)."""


# --------------------------------------------------------------------------- environments


@dataclasses.dataclass
class Env:
    """A live environment of one task: the instance, its tools and the state it started in."""

    task_id: str
    instance: Any
    tools: dict[str, Any]
    initial_state: dict[str, Any]
    dumper: str = "attributes"
    steps: int = 0
    workspace: str | None = None
    """The temporary folder a workspace environment works in (None for the others)."""
    commands: str | None = None
    """Where the `run` tool's commands run: "bwrap" (a sandbox per command), "unsandboxed"
    (trust=True where bwrap is not usable), None (no `run` tool, or code we did not compile,
    which runs its commands as it does)."""
    shown: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    """Every call of the episode and what it showed the agent (`observation`s, in order): a
    reply is held to them (a value it states must have been shown)."""


def check_trust(task: dict[str, Any], trust: bool = False) -> None:
    """Raise `UntrustedEnvironment` when `load_env(task, trust)` would refuse the task's
    environment (without reading or running its code); ValueError for an unknown kind."""
    spec = task.get("environment") or {}
    env_id = str(task.get("env_id", "?"))
    requires = list(task.get("requires") or [])
    kind = spec.get("kind", "tool")
    if kind not in ("tool", "workspace"):
        raise ValueError(f"environment {env_id}: unknown kind {kind!r}")
    if not spec.get("compiled_by_us") and not trust:
        needs = ", ".join(requires) if requires else "nothing beyond the standard library"
        raise UntrustedEnvironment(
            f"refused to load environment {env_id}: its code was not compiled by EnvFoundry "
            f"(source: {spec.get('source', 'unknown')}), and load_env would run it in this "
            f"process with no sandbox. It requires: {needs}. Pass trust=True to run it "
            "anyway, or play it in EnvFoundry's sandbox."
        )
    # A workspace environment we compiled without `run` loads like any compiled class: its
    # file tools are our code, take only paths inside its folder (and `_confined` holds
    # them there), and start no process. With `run`, it needs a sandbox for the commands.
    if kind == "workspace" and not trust and _runs_commands(task):
        why = bwrap_unusable_reason()
        if why is not None:
            raise UntrustedEnvironment(
                f"refused to load environment {env_id}: its `run` tool runs shell commands, "
                f"which load_env runs only under bubblewrap, and bwrap is not usable here "
                f"({why}). Install bubblewrap on a machine that allows unprivileged user "
                "namespaces, pass trust=True to run the commands unsandboxed as this "
                "process's user (in a temporary folder), or play it in EnvFoundry's sandbox."
            )


def load_env(task: dict[str, Any], trust: bool = False, root: str | None = None) -> Env:
    """The environment of `task` (one parsed line of an RL shard), loaded in its initial state.

    The code is read from the bundled file the line names (`environment.path`, relative to
    `root`: by default the folder this module was shipped in) and checked against its sha256.
    It runs in the caller's process: code EnvFoundry did not compile is refused unless
    `trust=True`, and so is a workspace environment with the `run` tool where bwrap is not
    usable (with bwrap, each command runs in a sandbox of its own: `run_sandbox_prefix`).
    """
    check_trust(task, trust)
    spec = task.get("environment") or {}
    env_id = str(task.get("env_id", "?"))
    kind = spec.get("kind", "tool")
    code = _read_code(spec, root, env_id)
    cls = _load_class(code, spec.get("class_name"), env_id, spec.get("module"))
    initial = _copy(task.get("initial_state"))
    workspace, commands = None, None
    if kind == "workspace":
        # The class works in the folder it is made in (its state is that file tree), as in
        # the sandbox: a fresh temporary folder seeded with the initial tree.
        tree = initial.pop(WORKSPACE_KEY, None) if isinstance(initial, dict) else None
        workspace = tempfile.mkdtemp(
            prefix="envfoundry-reward-workspace-", dir=_workspaces_folder()
        )
        _seed_workspace(workspace, tree)
        here = os.getcwd()
        os.chdir(workspace)
        try:
            instance = _construct(cls, spec.get("loader") or "auto", initial)
        finally:
            os.chdir(here)
        if spec.get("compiled_by_us"):
            commands = _sandbox_workspace(instance, workspace, _runs_commands(task))
    else:
        instance = _construct(cls, spec.get("loader") or "auto", initial)
    tools = {}
    for tool in task.get("tools") or ():
        name = (tool.get("function") or tool).get("name")
        method = getattr(instance, name, None) if isinstance(name, str) else None
        if callable(method) and not name.startswith("_"):
            tools[name] = method
    env = Env(
        task_id=str(task.get("scenario_id", "")),
        instance=instance,
        tools=tools,
        initial_state={},
        dumper=_dumper_name(instance, spec.get("dumper") or "auto"),
        workspace=workspace,
        commands=commands,
    )
    if workspace is not None:  # removed with the Env
        weakref.finalize(env, shutil.rmtree, workspace, True)
    # The checks compare against the state the environment reports before step one, as the
    # project's episodes do (a class may normalise what it was loaded from).
    env.initial_state = state(env) or {}
    return env


def step(env: Env, name: str, arguments: Any = None) -> Any:
    """Call tool `name` with `arguments` (an object, or its JSON text as in an OpenAI tool
    call): the tool's result as JSON data, or {"success": False, "error": ...} when the call
    fails (unknown tool, bad arguments, an exception), as the agent would see it. The call
    and its result are recorded in `env.shown`, which `score` holds the reply to."""
    env.steps += 1
    result = _call(env, name, arguments)
    try:  # as sent, whatever the caller does with its arguments later
        sent = _copy(arguments)
    except Exception:  # noqa: BLE001 - an object that cannot be copied is read as text
        sent = str(arguments)
    env.shown.append(observation(name, sent, result))
    return result


def observation(tool: Any, arguments: Any, result: Any) -> dict[str, Any]:
    """One call of an episode as the reply checks read it: the tool, the arguments as the
    agent sent them (an object or its JSON text) and what the call returned."""
    return {"tool": tool, "arguments": arguments, "result": result}


def _call(env: Env, name: str, arguments: Any) -> Any:
    method = env.tools.get(name) if isinstance(name, str) else None
    if method is None:
        return _failure(f"unknown tool: {str(name)[:200]}")
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError as exc:
            return _failure(f"arguments are not valid JSON: {exc}")
    if arguments is None:
        arguments = {}
    if not isinstance(arguments, dict):
        return _failure("TypeError: arguments must be a JSON object")
    try:
        value = method(**_copy(arguments))
    except Exception as exc:  # noqa: BLE001 - a failing tool is the agent's observation
        return _failure(_describe(exc))
    try:
        return _plain(value, strict=True)
    except (TypeError, ValueError) as exc:
        return _failure(f"result is not JSON-serialisable: {_describe(exc)}")


def state(env: Env) -> dict[str, Any] | None:
    """The environment's state as JSON data (None when it cannot be read: every state check
    then fails)."""
    try:
        if env.dumper == "attributes":
            data = {k: _plain(v) for k, v in _public_attributes(env.instance)}
        else:
            dumped = getattr(env.instance, env.dumper)()
            if not isinstance(dumped, dict):
                return None
            data = _plain(dumped)
        if env.workspace is not None:
            data[WORKSPACE_KEY] = _snapshot_workspace(env.workspace)
        return data
    except Exception:  # noqa: BLE001 - a state that cannot be read fails the checks
        return None


def score(task: dict[str, Any], env: Env, final_reply: str = "") -> dict[str, Any]:
    """The episode's reward and success under the reward rule: the task's checks on the
    environment's state now, the agent's `final_reply` (its last text message) and the calls
    `step` made (what they showed)."""
    return score_state(task, env.initial_state, state(env), final_reply, shown=env.shown)


def score_state(
    task: dict[str, Any],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    final_reply: str = "",
    *,
    shown: Sequence[Any] = (),
) -> dict[str, Any]:
    """`score` of an environment whose states were read elsewhere (a tool server in another
    process): `initial_state` before step one, `final_state` now (None: unreadable), `shown`
    the episode's calls (`observation`s; `Env.shown` of the server's environment). With no
    calls given, the reply is graded as one made with no call: a value it states was shown
    by nothing, and earns nothing."""
    checks = [c.get("spec", c) for c in task.get("checks") or ()]
    reward, success, _ = grade(checks, initial_state, final_state, final_reply, shown=shown)
    return {"reward": reward, "success": success}


def _failure(error: str) -> dict[str, Any]:
    return {"success": False, "error": error}


def _describe(exc: BaseException) -> str:
    message = str(exc)
    text = f"{type(exc).__name__}: {message}" if message else type(exc).__name__
    return text if len(text) <= 2000 else text[:2000] + "..."


def _read_code(spec: dict[str, Any], root: str | None, env_id: str) -> str:
    rel = spec.get("path")
    if not isinstance(rel, str) or rel.startswith("/") or ".." in rel.split("/"):
        raise ValueError(f"environment {env_id}: bad code path {rel!r}")
    base = root if root is not None else os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(base, *rel.split("/")), "rb") as handle:
        data = handle.read()
    digest = hashlib.sha256(data).hexdigest()
    if spec.get("sha256") and digest != spec["sha256"]:
        raise ValueError(
            f"environment {env_id}: {rel} has sha256 {digest}, the task says {spec['sha256']}"
        )
    return data.decode("utf-8")


def _load_class(code: str, class_name: str | None, env_id: str, dotted: Any = None) -> type:
    module = types.ModuleType(f"envfoundry_env_{re.sub(r'[^0-9A-Za-z_]', '_', env_id)}")
    module.__file__ = f"<environment {env_id}>"
    if isinstance(dotted, str) and "." in dotted:
        # A class of a package (`requires` names it): its relative imports resolve there.
        module.__package__ = dotted.rpartition(".")[0]
    # Registered, as an imported module is: a @dataclass under string annotations (and
    # pickle, typing.get_type_hints) looks its class's module up in sys.modules.
    sys.modules[module.__name__] = module
    exec(compile(code, module.__file__, "exec"), module.__dict__)  # noqa: S102 - see load_env
    cls = getattr(module, class_name or "", None)
    if not isinstance(cls, type):
        raise LookupError(f"environment {env_id}: no class named {class_name!r} in its code")
    return cls


# A workspace as the sandbox seeds and snapshots it (sandboxes/inside/workspace_tools.py).
_SNAPSHOT_MAX_FILE_BYTES = 256 * 1024
_SNAPSHOT_MAX_ENTRIES = 10_000
_SNAPSHOT_BUDGET_BYTES = 500_000


def _inside(root: str, rel: Any) -> str:
    if not isinstance(rel, str) or not rel or "\x00" in rel or os.path.isabs(rel):
        raise ValueError(f"workspace path must be relative: {rel!r}")
    full = os.path.realpath(os.path.join(root, rel))
    if full != root and not full.startswith(root + os.sep):
        raise ValueError(f"workspace path escapes the workspace: {rel!r}")
    return full


def _seed_workspace(root: str, tree: Any) -> None:
    root = os.path.realpath(root)
    if tree is None:
        return
    if not isinstance(tree, dict) or not isinstance(tree.get("files") or {}, dict):
        raise ValueError("__workspace__ must be an object with 'files' and/or 'dirs'")
    for rel in tree.get("dirs") or []:
        os.makedirs(_inside(root, rel), exist_ok=True)
    for rel, text in sorted((tree.get("files") or {}).items()):
        full = _inside(root, rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "w", encoding="utf-8") as handle:
            handle.write(text)


def _snapshot_workspace(root: str) -> dict[str, Any]:
    """The final workspace as the sandbox's worker snapshots it for the build's checks
    (sandboxes/inside/workspace_tools.py): a trainer's rollouts are graded on the same view
    (tests/synthesis/tasks/test_reward_snapshot.py holds the two equal)."""
    files: dict[str, str] = {}
    dirs: list[str] = []
    links: dict[str, str] = {}
    skipped: dict[str, str] = {}
    budget, entries = _SNAPSHOT_BUDGET_BYTES, 0
    for current, subdirs, names in os.walk(root):
        subdirs.sort()
        for name in sorted(subdirs) + sorted(names):
            full = os.path.join(current, name)
            rel = os.path.relpath(full, root)
            entries += 1
            if entries > _SNAPSHOT_MAX_ENTRIES:
                skipped["..."] = f"more than {_SNAPSHOT_MAX_ENTRIES} entries"
                return {"files": files, "dirs": sorted(dirs), "symlinks": links, "skipped": skipped}
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
            elif info.st_size > _SNAPSHOT_MAX_FILE_BYTES:
                skipped[rel] = f"too large ({info.st_size} bytes)"
            elif info.st_size > budget:
                skipped[rel] = "snapshot size budget exhausted"
            else:
                text = _read_text(full, info.st_size)
                if text is None:
                    skipped[rel] = f"binary or unreadable ({info.st_size} bytes)"
                else:
                    files[rel] = text
                    budget -= info.st_size
    return {"files": files, "dirs": sorted(dirs), "symlinks": links, "skipped": skipped}


def _read_text(path: str, size: int) -> str | None:
    """A file's text, never through a symlink swapped in since it was looked at."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        data = os.read(fd, size + 1)[:_SNAPSHOT_MAX_FILE_BYTES]
    except OSError:
        return None
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


# --------------------------------------------------------------------------- commands
# A workspace environment's `run` tool (a shell command in its folder) as it runs here:
# EnvFoundry's compiled class starts `/bin/sh -c command` after its `_command_prefix`, which
# `_sandbox_workspace` sets to a bubblewrap launcher. Inside EnvFoundry's own sandbox the
# class has no prefix: it already runs in one.

# The bounds of one command: those EnvFoundry's sandbox gives a workspace episode
# (sandboxes/limits.py), so a command that works there works here, and a hostile one stops
# at the same place. The output (64 KB) and time (1 to 30 s) bounds are the class's own.
RUN_PROCESSES = 64
RUN_ADDRESS_SPACE_BYTES = 1024 * 1024 * 1024
RUN_FILE_SIZE_BYTES = 16 * 1024 * 1024
RUN_OPEN_FILES = 64
RUN_TMP_BYTES = 16 * 1024 * 1024
# As root, commands run as this uid: the kernel never holds the host's uid 0 to RLIMIT_NPROC,
# and a user namespace made by root maps its processes to that uid, so a fork bomb would run
# to the machine's pid limit. Each command gets a user namespace of its own, where the process
# limit counts only that command's processes, so concurrent environments can share the uid.
RUN_UID_AS_ROOT = 61000
# Where the folder is inside a command's sandbox: where EnvFoundry's sandbox has it
# (sandboxes/layout.py WORKSPACE), so commands print the same paths there and here.
RUN_WORKSPACE = "/workspace"
# Applies the bounds inside the sandbox, then becomes the shell: RLIMIT_NPROC must be set
# inside the command's user namespace to count its processes alone (outside, it would
# count every process of the trainer's user). python3 is one of the tools a command has.
_SANDBOX_PYTHON = "/usr/bin/python3"
_LIMITS_PROGRAM = """\
import os, resource, sys
for name, value in zip(("NPROC", "AS", "FSIZE", "NOFILE", "CORE"), sys.argv[1:6]):
    resource.setrlimit(getattr(resource, "RLIMIT_" + name), (int(value), int(value)))
os.execv(sys.argv[6], sys.argv[6:])
"""
# As root, before bwrap: the workspace goes to RUN_UID_AS_ROOT (the file tools, in this
# process, wrote as root since the last command), then the launcher becomes that uid. No
# command of the folder runs meanwhile (the last one's pid namespace is gone), and the walk
# follows no symlink.
_AS_ROOT_PROGRAM = """\
import os, sys
workspace, uid = sys.argv[1], int(sys.argv[2])
os.lchown(workspace, uid, uid)
for folder, dirs, files in os.walk(workspace):
    for name in dirs + files:
        os.lchown(os.path.join(folder, name), uid, uid)
os.setgroups([])
os.setgid(uid)
os.setuid(uid)
os.execv(sys.argv[3], sys.argv[3:])
"""
# The environment a command sees, as the class sets it (C locale, UTC, the system's PATH).
_COMMAND_ENV = {"PATH": "/usr/local/bin:/usr/bin:/bin", "LC_ALL": "C", "TZ": "UTC"}


def _runs_commands(task: dict[str, Any]) -> bool:
    """Whether the task's tools include `run` (a tool the task does not list is never called)."""
    return any((t.get("function") or t).get("name") == "run" for t in task.get("tools") or ())


@lru_cache(maxsize=1)
def _bwrap() -> tuple[str, tuple[str, ...]] | None:
    """The bwrap executable and the options this version has beyond the basic ones."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        usage = subprocess.run(
            [found, "--help"], capture_output=True, text=True, timeout=10, env=_COMMAND_ENV
        ).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    # No user namespace inside the sandbox (bwrap 0.8): one less door into the kernel.
    return found, (("--disable-userns",) if "--disable-userns" in usage else ())


@lru_cache(maxsize=1)
def bwrap_unusable_reason() -> str | None:
    """Why `run` commands cannot run under bubblewrap on this machine (None: they can).
    Probed once per process, by running one command as `load_env` would."""
    if _bwrap() is None:
        return "bubblewrap (bwrap) is not installed"
    if not os.access(_SANDBOX_PYTHON, os.X_OK):
        return f"{_SANDBOX_PYTHON}, which applies a command's limits in the sandbox, is missing"
    made = tempfile.mkdtemp(prefix="envfoundry-reward-probe-", dir=_workspaces_folder())
    folder = os.path.realpath(made)
    argv = [*run_sandbox_prefix(folder), "/bin/sh", "-c", "echo ok > probe && cat probe"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=30, cwd=folder, env=_COMMAND_ENV)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bwrap did not run: {exc}"
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    if done.returncode != 0 or done.stdout != b"ok\n":
        said = (done.stderr or done.stdout).decode("utf-8", "replace").strip()[:300]
        return f"bwrap cannot make a sandbox here: {said or f'exit {done.returncode}'}"
    return None


def _workspaces_folder() -> str | None:
    """Where workspace folders are made: the temporary folder (None), except as root when its
    path is closed to other users (a verifiers tool server's TMPDIR is its private workdir):
    bwrap, run as RUN_UID_AS_ROOT, can bind only a folder that uid can reach; then /tmp."""
    if os.geteuid() != 0:
        return None
    path = os.path.realpath(tempfile.gettempdir())
    while True:
        try:
            if not os.stat(path).st_mode & stat.S_IXOTH:
                return "/tmp"
        except OSError:
            return "/tmp"
        if path == os.path.dirname(path):
            return None
        path = os.path.dirname(path)


def run_sandbox_prefix(workspace: str) -> list[str]:
    """The argv a `run` command (`/bin/sh -c command`) of the workspace folder `workspace`
    (a real path) is started under: bwrap with every namespace of its own (no network, its
    own pids), the system's programs read-only, the folder read-write at RUN_WORKSPACE (its
    working directory and HOME, as in EnvFoundry's sandbox, so a traceback or a `pwd` prints
    the paths the training data shows), a private /tmp, /proc and /dev, nothing else of the
    host; then the command's limits."""
    executable, extra = _bwrap() or ("bwrap", ())
    argv = [
        executable,
        "--unshare-all",
        "--unshare-user",  # required, not tried: the process limit counts in its namespace
        *extra,
        "--die-with-parent",
        "--new-session",
        "--cap-drop",
        "ALL",
        *_system_mounts(),
        "--proc",
        "/proc",
        "--dev",
        "/dev",
        "--perms",
        "1777",
        "--size",
        str(RUN_TMP_BYTES),
        "--tmpfs",
        "/tmp",
        # After /tmp: a folder under /tmp would be hidden by a tmpfs mounted later.
        "--bind",
        workspace,
        RUN_WORKSPACE,
        "--chdir",
        RUN_WORKSPACE,
        "--setenv",
        "HOME",
        RUN_WORKSPACE,
        "--",
        _SANDBOX_PYTHON,
        "-I",
        "-S",
        "-c",
        _LIMITS_PROGRAM,
        *map(
            str,
            (
                RUN_PROCESSES,
                RUN_ADDRESS_SPACE_BYTES,
                RUN_FILE_SIZE_BYTES,
                RUN_OPEN_FILES,
                0,  # no core files
            ),
        ),
    ]
    if os.geteuid() == 0:
        root_step = [sys.executable, "-I", "-S", "-c", _AS_ROOT_PROGRAM, workspace]
        argv = [*root_step, str(RUN_UID_AS_ROOT), *argv]
    return argv


def _system_mounts() -> list[str]:
    """The system's programs and libraries, read-only; of /etc only the alternatives some
    tools are links into (Debian's awk); no home, no /root, no other folder of the host."""
    mounts = ["--ro-bind", "/usr", "/usr"]
    for name in ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives"):
        if os.path.islink(name):
            mounts += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            mounts += ["--ro-bind", name, name]
    return mounts


def _sandbox_workspace(instance: Any, workspace: str, has_run: bool) -> str | None:
    """Hold a compiled workspace class's file tools to its folder and put its `run`
    commands under bwrap where it is usable; where the commands run ("bwrap",
    "unsandboxed": `check_trust` let that through only with trust=True; None: no `run`)."""
    root = os.path.realpath(getattr(instance, "_root", workspace))
    if callable(getattr(instance, "_full", None)):
        instance._full = partial(_confined, root)
    if not has_run:
        return None
    if bwrap_unusable_reason() is not None:
        return "unsandboxed"
    instance._command_prefix = run_sandbox_prefix(root)
    return "bwrap"


def _confined(root: str, path: str) -> str:
    """The class's `_full(path)`, refusing a path that leads out of the workspace through a
    symlink (a command may have made `data -> /home`) or names a fifo or device (reading one
    would hang this process): the file tools run here, outside the sandbox. Nothing runs in
    the folder while a tool does, so what is checked is what the tool then opens."""
    full = os.path.join(root, path)
    real = os.path.realpath(full)
    if real != root and not real.startswith(root + os.sep):
        raise ValueError(f"{path} leads out of the workspace")
    try:
        mode = os.stat(real).st_mode
    except OSError:
        return full  # not there (yet): the tool says so, or makes it
    if not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
        raise ValueError(f"{path} is not a file or a folder")
    return full


# How a class takes its state and gives it back: the sandbox's conventions (the project's
# sandboxes/inside/conventions.py), for the classes `trust=True` admits.
_DUMPER_NAMES = ("get_env_state", "get_state", "dump_state", "export_state")
_CONFIG_PARAM_NAMES = (
    "config",
    "init_config",
    "initial_config",
    "env_config",
    "state",
    "initial_state",
    "scenario",
    "data",
)


def _init_params(cls: type) -> list[inspect.Parameter] | None:
    if cls.__init__ is object.__init__:
        return []
    try:
        return list(inspect.signature(cls.__init__).parameters.values())[1:]
    except (TypeError, ValueError):
        return None


def _construct(cls: type, loader: str, initial: Any) -> Any:
    params = _init_params(cls)
    if loader == "auto":
        if callable(getattr(cls, "_load_scenario", None)):
            loader = "load_scenario"
        elif params and (
            any(_required(p) for p in params) or params[0].name in _CONFIG_PARAM_NAMES
        ):
            loader = "constructor"
        else:
            loader = "attributes"
    if loader == "constructor":
        model = _model_parameter(cls, params)
        if model is not None:
            args, kwargs, attributes = _model_call(model, initial)
        else:
            args, kwargs, attributes = _constructor_call(params, initial)
        obj = cls(*args, **kwargs)
    elif loader == "load_scenario":
        obj, attributes = cls(), {}
        if initial is not None:
            obj._load_scenario(initial)
        else:
            try:
                obj._load_scenario({})
            except Exception:  # noqa: BLE001 - the class's own default, as the sandbox does
                obj = cls()
            default = _module_default(cls)
            held = getattr(obj, "__dict__", None) or {}
            if default is not None and not any(
                value for name, value in held.items() if not name.startswith("_")
            ):
                # An empty world after {}, with the module's DEFAULT_STATE: as the sandbox.
                obj = cls()
                obj._load_scenario(copy.deepcopy(default))
    elif loader == "attributes":
        obj, attributes = cls(), initial or {}
    else:
        raise ValueError(f"unknown loader {loader!r}")
    for key, value in attributes.items():
        setattr(obj, key, value)
    return obj


def _model_parameter(
    cls: type, params: list[inspect.Parameter] | None
) -> tuple[inspect.Parameter, type] | None:
    """The constructor's one required parameter when it is annotated with a model class (a
    pydantic model or a dataclass), as the sandbox finds it (tau2's `RetailTools(db:
    RetailDB)`), with that class; else None."""
    required = [p for p in params or () if _required(p)]
    if len(required) != 1:
        return None
    param, annotation = required[0], required[0].annotation
    if isinstance(annotation, str):
        try:
            annotation = eval(annotation, getattr(cls.__init__, "__globals__", {}))  # noqa: S307
        except Exception:  # noqa: BLE001 - an annotation that names nothing here
            return None
    if isinstance(annotation, type) and (
        callable(getattr(annotation, "model_validate", None))
        or dataclasses.is_dataclass(annotation)
    ):
        return param, annotation
    return None


def _model_call(model: tuple[inspect.Parameter, type], initial: Any) -> tuple:
    """The constructor's arguments when it takes the state as a model: the state is the
    model's data, or {name: data} as the class reports it back."""
    param, kind = model
    reported = isinstance(initial, dict) and set(initial) == {param.name}
    data = initial[param.name] if reported else initial
    data = {} if data is None else data
    validate = getattr(kind, "model_validate", None)
    value = validate(data) if callable(validate) else kind(**data)
    if param.kind == param.KEYWORD_ONLY:
        return (), {param.name: value}, {}
    return (value,), {}, {}


def _module_default(cls: type) -> dict[str, Any] | None:
    """The dict a class's module keeps as its default state, as the sandbox finds it."""
    module = sys.modules.get(getattr(cls, "__module__", None) or "")
    for name in ("DEFAULT_STATE", "DEFAULT_SCENARIO"):
        value = getattr(module, name, None)
        if isinstance(value, dict) and value:
            return value
    return None


def _required(p: inspect.Parameter) -> bool:
    return p.default is p.empty and p.kind in (
        p.POSITIONAL_ONLY,
        p.POSITIONAL_OR_KEYWORD,
        p.KEYWORD_ONLY,
    )


def _constructor_call(params: list[inspect.Parameter] | None, initial: Any) -> tuple:
    if initial is None:
        return ((), {}, {}) if not params or not any(map(_required, params)) else (({},), {}, {})
    if params is None:
        return (initial,), {}, {}
    names = [p.name for p in params if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    configs = [n for n in names if n in _CONFIG_PARAM_NAMES]
    required = [p.name for p in params if _required(p)]
    if len(configs) == 1 and all(n == configs[0] for n in required):
        p = next(p for p in params if p.name == configs[0])
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and names[:1] == [p.name]:
            return (initial,), {}, {}
        if p.kind != p.POSITIONAL_ONLY:
            return (), {p.name: initial}, {}
    if any(p.kind == p.VAR_KEYWORD for p in params):
        return (), dict(initial), {}
    keyword = {p.name for p in params if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    kwargs = {k: v for k, v in initial.items() if k in keyword}
    return (), kwargs, {k: v for k, v in initial.items() if k not in keyword}


def _dumper_name(obj: Any, name: str) -> str:
    if name != "auto":
        return name
    for candidate in _DUMPER_NAMES:
        method = getattr(obj, candidate, None)
        if callable(method):
            try:
                params = inspect.signature(method).parameters.values()
            except (TypeError, ValueError):
                continue
            if not any(_required(p) for p in params):
                return candidate
    return "attributes"


def _public_attributes(obj: Any) -> list[tuple[str, Any]]:
    items = dict(getattr(obj, "__dict__", {}))
    for klass in type(obj).__mro__:
        for slot in klass.__dict__.get("__slots__", ()):
            if isinstance(slot, str) and slot not in items and hasattr(obj, slot):
                items[slot] = getattr(obj, slot)
    return sorted((k, v) for k, v in items.items() if isinstance(k, str) and not k.startswith("_"))


def _copy(value: Any) -> Any:
    return copy.deepcopy(value)


def _plain(value: Any, *, strict: bool = False, depth: int = 0) -> Any:
    """`value` as JSON data, as the sandbox reports states and results: sets sorted, tuples as
    lists, enums as values, dataclasses and pydantic models as fields, dates in ISO 8601,
    decimals as numbers; `strict` (results) refuses other objects, else they become their
    public attributes."""
    if depth > 100:
        if strict:
            raise ValueError("nested more than 100 levels deep")
        return "<too deep>"
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, enum.Enum):
        return _plain(value.value, strict=strict, depth=depth)
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value) if value - value == 0.0 else None
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, datetime.timedelta):
        return value.total_seconds()
    if isinstance(value, decimal.Decimal):
        return float(value)
    if isinstance(value, dict):
        return {_key(k): _plain(v, strict=strict, depth=depth + 1) for k, v in value.items()}
    if isinstance(value, (set, frozenset)):
        items = [_plain(v, strict=strict, depth=depth + 1) for v in value]
        try:
            return sorted(items)
        except TypeError:
            return sorted(items, key=repr)
    if isinstance(value, (list, tuple)):
        return [_plain(v, strict=strict, depth=depth + 1) for v in value]
    dump = getattr(type(value), "model_dump", None)
    if (
        getattr(dump, "__qualname__", None) == "BaseModel.model_dump"
        and getattr(dump, "__module__", None) == "pydantic.main"
    ):
        # A pydantic model, as the sandbox reports it: through pydantic's own serializer.
        try:
            return dump(value, mode="json")
        except Exception:  # noqa: BLE001 - its fields, below, as the sandbox falls back
            pass
    fields = getattr(type(value), "__pydantic_fields__", None)
    if isinstance(fields, dict) and not isinstance(value, type):
        return {
            name: _plain(getattr(value, name), strict=strict, depth=depth + 1)
            for name in fields
            if isinstance(name, str) and not name.startswith("_")
        }
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {
            f.name: _plain(getattr(value, f.name), strict=strict, depth=depth + 1)
            for f in dataclasses.fields(value)
            if not f.name.startswith("_")
        }
    if strict:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    if hasattr(value, "__dict__"):
        return {k: _plain(v, depth=depth + 1) for k, v in _public_attributes(value)}
    return repr(value)[:200]


def _key(key: Any) -> str:
    if isinstance(key, str):
        return key
    if isinstance(key, bool) or key is None:
        return json.dumps(key)
    if isinstance(key, enum.Enum):
        return _key(key.value)
    return repr(key) if isinstance(key, (int, float)) else str(key)


# --------------------------------------------------------------------------- the reward rule
# The one implementation of the reward rule: EnvFoundry's engine imports these functions from
# this file (synthesis/tasks/checks.py derives the check specs they read), so the self-test,
# the recorded episodes and a trainer's scores come from the same code. Pure functions of
# JSON: a check never executes code.

try:  # the engine has orjson: a faster exact-equality test of big states (json otherwise)
    import orjson as _orjson
except ImportError:  # pragma: no cover - a trainer's environment without it
    _orjson = None

GOAL, GUARD = "goal", "guard"
ROLES = (GOAL, GUARD)
WORKSPACE_KEY = "__workspace__"
# The role a spec without one gets: what was asked for is a goal, what must not happen a guard.
DEFAULT_ROLES = {
    "no_collateral_changes": GUARD,
    "no_other_file_changes": GUARD,
    "reply_excludes": GUARD,
    "reply_states_no_other_rule": GUARD,
    "reply_concise": GUARD,
}
FORM = "$form"


@dataclasses.dataclass(frozen=True)
class Grade:
    """An episode's verdicts, reward and success under the reward rule (see `grade`)."""

    reward: float
    success: bool
    verdicts: tuple[bool, ...]
    guard_failed: bool = False


def grade(
    checks: Sequence[dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
    *,
    shown: Sequence[Any] | Seen | None = None,
) -> tuple[float, bool, list[bool]]:
    """(reward, success, one verdict per check) of an episode under the reward rule."""
    graded = grade_episode(checks, initial_state, final_state, reply, shown=shown)
    return graded.reward, graded.success, list(graded.verdicts)


def grade_episode(
    checks: Sequence[Any],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
    *,
    shown: Sequence[Any] | Seen | None = None,
) -> Grade:
    """The reward rule, the one every episode, self-test and export is scored by.

    * any guard fails (collateral damage, a forbidden change, a decoy's value in the reply):
      reward 0;
    * otherwise the share of the goals the agent achieved, counting only goals that did not
      already hold before it acted (the initial state and an empty reply), so doing nothing
      earns 0. A goal that held before and fails after was undone: damage, reward 0;
    * success: every check passes. No checks: reward 0, no success (nothing was proven).

    `checks` are specs (dicts) or objects with a `spec` (EnvFoundry's Check). `shown`: the
    episode's calls (`observation`s); a reply's values earn only where they showed them
    (`Seen`). None grades the reply without them: for a state graded with no episode behind
    it (a plan's predicted states), never for an agent's episode.
    """
    return grade_replies(checks, initial_state, final_state, shown=shown)(reply)


def grade_replies(
    checks: Sequence[Any],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    *,
    shown: Sequence[Any] | Seen | None = None,
) -> Callable[[str], Grade]:
    """`grade_episode` of one episode for any final reply: what reads no reply (the checks
    of the state, which goals held before the agent acted, what the calls showed) is worked
    out once, so each of many candidate replies (the self-test's shortcuts) costs only its
    reply checks."""
    specs = [spec_of(c) for c in checks]
    seen = Seen.of(shown)
    roles = [role_of(s) for s in specs]
    fixed = [
        None
        if s.get("type") in _REPLY_EVALUATORS
        else evaluate_check(s, initial_state, final_state, "", seen)
        for s in specs
    ]
    # A goal that held before the agent acted (the initial state, no reply) earns nothing,
    # and failing after, it was undone: damage.
    held = [
        role != GUARD and evaluate_check(s, initial_state, initial_state, "")
        for s, role in zip(specs, roles, strict=True)
    ]

    def grade_of(reply: str = "") -> Grade:
        verdicts = tuple(
            ok if ok is not None else evaluate_check(s, initial_state, final_state, reply, seen)
            for s, ok in zip(specs, fixed, strict=True)
        )
        if not specs:
            return Grade(0.0, False, verdicts)
        earned: list[bool] = []
        for role, was, ok in zip(roles, held, verdicts, strict=True):
            if role == GUARD or was:
                if not ok:
                    return Grade(0.0, False, verdicts, guard_failed=True)
            else:
                earned.append(ok)
        value = sum(earned) / len(earned) if earned else 0.0
        return Grade(value, all(verdicts), verdicts)

    return grade_of


def spec_of(check: Any) -> dict[str, Any]:
    """A check's JSON spec: the check itself, or its `spec` (an RL line's or a Check's)."""
    if isinstance(check, dict):
        return check
    return check.spec


def role_of(spec: dict[str, Any]) -> str:
    role = spec.get("role", DEFAULT_ROLES.get(spec.get("type", ""), GOAL))
    if role not in ROLES:
        raise ValueError(f"unknown check role {role!r}")
    return role


def evaluate_check(
    spec: dict[str, Any],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
    shown: Sequence[Any] | Seen | None = None,
) -> bool:
    """Whether the episode that ended in `final_state` with the final `reply`, having made
    the calls `shown` (see `grade_episode`), satisfies the JSON check `spec` (pure; never
    raises on odd data)."""
    kind = spec.get("type")
    if kind in _REPLY_EVALUATORS:
        text = reply if isinstance(reply, str) else ""
        seen = Seen.of(shown)
        try:
            return bool(_REPLY_EVALUATORS[kind](spec, text, initial_state or {}, final_state, seen))
        except (KeyError, TypeError, AttributeError, IndexError, ValueError):
            return False
    if kind not in _EVALUATORS:
        raise ValueError(f"unknown check type {kind!r}")
    if not isinstance(final_state, dict):
        return False
    try:
        return bool(_EVALUATORS[kind](spec, initial_state or {}, final_state))
    except (KeyError, TypeError, AttributeError, IndexError):
        # A malformed final state (an agent may leave anything behind) fails the check.
        return False


def is_collection(value: Any) -> bool:
    """An id-keyed dict of record dicts (an empty dict counts: records may appear later)."""
    # map() keeps the per-record test in C: every diff and grade asks this of every key.
    return isinstance(value, dict) and all(map(_is_dict, value.values()))


_is_dict = partial(type.__instancecheck__, dict)


def _record(state: dict[str, Any], coll: str, rid: str) -> dict[str, Any] | None:
    records = state.get(coll)
    rec = records.get(rid) if isinstance(records, dict) else None
    return rec if isinstance(rec, dict) else None


def values_equal(a: Any, b: Any) -> bool:
    """Whether actual `a` is what expected `b` asks for (`b` may hold `$form`s)."""
    if isinstance(b, dict) and len(b) == 1 and FORM in b:
        return matches_form(a, b[FORM])
    if isinstance(b, dict):
        return (
            isinstance(a, dict)
            and a.keys() == b.keys()
            and all(values_equal(a[k], b[k]) for k in b)
        )
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(map(values_equal, a, b))
    # JSON has one number type: 25 and 25.0 are the same value; True is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def matches_form(value: Any, form: str) -> bool:
    """Whether a generated `value` has the form a check asks for (`{"$form": form}`)."""
    if form == "bool":
        return isinstance(value, bool)
    if form == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if form == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if form == "list":
        return isinstance(value, list)
    if form == "object":
        return isinstance(value, dict)
    if form.startswith("re:"):
        return isinstance(value, str) and re.fullmatch(form[3:], value) is not None
    return value is not None


def changed_paths(before: Any, after: Any, prefix: Sequence[Any] = ()) -> list[list[Any]]:
    """Where two JSON values differ, as paths as deep as the difference goes (a list whose
    length changed differs as a whole)."""
    if type(before) is type(after) and before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[list[Any]] = []
        for key in sorted(set(before) | set(after), key=str):
            if (key in before) != (key in after):
                out.append([*prefix, key])
            else:
                out += changed_paths(before[key], after[key], [*prefix, key])
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = []
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            out += changed_paths(a, b, [*prefix, i])
        return out
    return [list(prefix)]


def _field_equals(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return (
        rec is not None and spec["field"] in rec and values_equal(rec[spec["field"]], spec["value"])
    )


def _field_absent(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return rec is not None and spec["field"] not in rec


def _new_ids(initial, final, coll: str) -> set[str]:
    before = initial.get(coll) if isinstance(initial.get(coll), dict) else {}
    after = final.get(coll) if isinstance(final.get(coll), dict) else {}
    return {rid for rid in after if rid not in before}


def _field_refers_to_new(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return rec is not None and rec.get(spec["field"]) in _new_ids(
        initial, final, spec["target_collection"]
    )


def _record_matching(spec, initial, final) -> bool:
    coll = spec["collection"]
    matches = 0
    for rid in sorted(_new_ids(initial, final, coll)):
        rec = final[coll][rid]
        if not isinstance(rec, dict):
            continue
        if not all(k in rec and values_equal(rec[k], v) for k, v in spec["fields"].items()):
            continue
        if all(rec.get(k) in _new_ids(initial, final, t) for k, t in spec["new_refs"].items()):
            matches += 1
    return matches >= spec.get("count", 1)


def _record_absent(spec, initial, final) -> bool:
    records = final.get(spec["collection"])
    return isinstance(records, dict) and spec["id"] not in records


def _attribute_equals(spec, initial, final) -> bool:
    if not spec.get("present", True):
        return spec["attribute"] not in final
    return spec["attribute"] in final and values_equal(final[spec["attribute"]], spec["value"])


def _covered(path: list[Any], allowed: set[tuple[Any, ...]]) -> bool:
    return any(tuple(path[:n]) in allowed for n in range(1, len(path) + 1))


def _no_collateral_changes(spec, initial, final) -> bool:
    touched = {tuple(t) for t in spec["touched"]}
    deleted = {tuple(t) for t in spec["deleted"]}
    created: dict[str, int] = spec["created"]
    created_refs: dict[str, list[dict[str, Any]]] | None = spec.get("created_refs")
    allowed_attrs = set(spec["attributes"])
    # Older specs name only the fields; then any change inside a touched field is allowed.
    paths = {tuple(p) for p in spec["paths"]} if "paths" in spec else None
    for key in (set(initial) | set(final)) - {WORKSPACE_KEY}:
        before, after = initial.get(key), final.get(key)
        if key in allowed_attrs:
            if paths is not None and key in initial and key in final:
                if not all(_covered(p, paths) for p in changed_paths(before, after, [key])):
                    return False
            continue
        if (key in initial) != (key in final):
            return False
        if _unchanged(before, after):
            # Nothing in it changed; a collection may still lack the records a task makes.
            if is_collection(before) and created_refs is None and created.get(key, 0):
                return False
            continue
        if not (is_collection(before) and is_collection(after)):
            if before != after:
                return False
            continue
        same = _unchanged_records(before, after)
        for rid, old in before.items():
            if rid not in after:
                if (key, rid) not in deleted:
                    return False
                continue
            if rid in same:
                continue
            new = after[rid]
            for fname in set(old) | set(new):
                if (fname in old) == (fname in new) and (
                    fname not in old or values_equal(old[fname], new[fname])
                ):
                    continue
                if (key, rid, fname) not in touched:
                    return False
                if paths is not None and fname in old and fname in new:
                    where = changed_paths(old[fname], new[fname], [key, rid, fname])
                    if not all(_covered(p, paths) for p in where):
                        return False
        new_records = [after[rid] for rid in sorted(after) if rid not in before]
        if created_refs is None:
            if len(new_records) != created.get(key, 0):
                return False
        elif not _assignable(new_records, created_refs.get(key, [])):
            return False
    return True


def _dumped(value: Any) -> bytes | str:
    if _orjson is not None:
        return _orjson.dumps(value)
    return json.dumps(value, allow_nan=False, sort_keys=False)


def _unchanged(before: Any, after: Any) -> bool:
    """Whether `after` is exactly `before`, so no field of it differs under `values_equal`:
    the fast path of the collateral check (it grades every episode of every self-test).

    Equal JSON text means the same keys, values and types (`True` is not `1`, `1` is not
    `1.0`), which is where `values_equal` is stricter than `==`; `==` itself rules out a
    tuple posing as a list. A `$form` anywhere (a value read as a pattern) is left to the walk.
    """
    if not before == after:
        return False
    try:
        dumped = _dumped(after)
        marker = b'"$form"' if isinstance(dumped, bytes) else '"$form"'
        return _dumped(before) == dumped and marker not in dumped
    except (TypeError, ValueError):  # not JSON (an int key, a huge int): the walk decides
        return False


def _unchanged_records(before: dict[str, Any], after: dict[str, Any]) -> set[Any]:
    """The ids of the records of a collection that `_unchanged` would pass: the equal ones,
    proven strictly equal together in one go (record by record only when that fails)."""
    equal = [rid for rid, old in before.items() if rid in after and old == after[rid]]
    if _unchanged({r: before[r] for r in equal}, {r: after[r] for r in equal}):
        return set(equal)
    return {rid for rid in equal if _unchanged(before[rid], after[rid])}


def _assignable(records: list[Any], slots: list[dict[str, Any]]) -> bool:
    """Whether every new record can be paired with its own gold record whose references to
    existing records it shares (bipartite matching; a handful of records at most)."""
    if len(records) > len(slots):
        return False
    fits = [
        [j for j, slot in enumerate(slots) if isinstance(rec, dict) and _refs_match(rec, slot)]
        for rec in records
    ]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(place(i, set()) for i in range(len(records)))


def _refs_match(record: dict[str, Any], slot: dict[str, Any]) -> bool:
    return all(k in record and record[k] == v for k, v in slot.items())


# --------------------------------------------------------------------------- workspace checks
# Checks that read the final workspace: the file tree the sandbox snapshots as "__workspace__".


def workspace_tree(state: dict[str, Any] | None) -> tuple[dict[str, Any], set[str]] | None:
    """(files path → text, folders) of a state's workspace, or None when it has none."""
    ws = state.get(WORKSPACE_KEY) if isinstance(state, dict) else None
    if not isinstance(ws, dict):
        return None
    files, dirs = ws.get("files"), ws.get("dirs")
    if not isinstance(files, dict) or not isinstance(dirs, list):
        return None
    return files, {d for d in dirs if isinstance(d, str)}


def _file_content(spec, initial, final) -> bool:
    tree = workspace_tree(final)
    return tree is not None and tree[0].get(spec["path"]) == spec["text"]


def _file_absent(spec, initial, final) -> bool:
    tree = workspace_tree(final)
    return tree is not None and spec["path"] not in tree[0]


def _folder_present(spec, initial, final) -> bool:
    tree = workspace_tree(final)
    return tree is not None and spec["path"] in tree[1]


def _folder_absent(spec, initial, final) -> bool:
    tree = workspace_tree(final)
    return tree is not None and spec["path"] not in tree[1]


def _no_other_file_changes(spec, initial, final) -> bool:
    before, after = workspace_tree(initial), workspace_tree(final)
    if before is None or after is None:
        return False
    allowed_files, allowed_dirs = set(spec["files"]), set(spec["folders"])
    for path in set(before[0]) | set(after[0]):
        if path not in allowed_files and before[0].get(path) != after[0].get(path):
            return False
    return (before[1] ^ after[1]) <= allowed_dirs


# Checks that read an output file by its format (`file_table`, `file_json`). A report is
# graded by what it says, not how it is typeset: `file_content` would score a correct table 0
# for writing 1,234.50 for 1234.5 or listing its rows in another order. These parse the file
# (a CSV/TSV or a Markdown pipe table; JSON or JSON lines) and compare values: a number to
# within half a cent, a word case-folded. What they never relax: the header must be the asked
# one and the rows exactly the asked ones, no more, no fewer (a table listing every candidate
# row earns nothing), and anything unreadable fails.

# Thousands groups of three digits, one separator kind per number: "1,5" is refused rather
# than misread as 15 (a decimal comma), and "1,234 567" is no number.
_GROUPED_NUMBER = re.compile(
    r"(?:\d{1,3}(?:,\d{3})+|\d{1,3}(?:[ _\u00a0\u2009\u202f]\d{3})+|\d+)(?:\.\d+)?|\.\d+"
)
_CURRENCY_SIGNS = ("$", "€", "£")
# What an empty cell of a report says: nothing, a dash or "n/a".
_EMPTY_CELLS = frozenset({"", "-", "n/a"})
# A GitHub table's separator cell: dashes, with a colon at either end for alignment.
_MD_SEPARATOR_CELL = re.compile(r":?-+:?")
# A cell boundary: a pipe not escaped as "\|" (a literal pipe inside a cell).
_MD_PIPE = re.compile(r"(?<!\\)\|")


def _is_number(value: Any) -> bool:
    # JSON's numbers: True and False are no 1 and 0, though Python says they are.
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _numbers_equal(actual: int | float, expected: int | float) -> bool:
    """Whether two numbers are the same figure: to within half a cent (a report rounds money
    to cents; 1234.5 == 1234.50 == 1234.504), plus a relative hair for big floats. Two whole
    numbers exactly: an id or a count 10 digits long is no nearly-right figure."""
    if isinstance(actual, int) and isinstance(expected, int):
        return actual == expected
    try:
        return abs(actual - expected) <= 0.005 + 1e-9 * abs(expected)
    except OverflowError:  # an int too big for a float against a float
        return False


def _cell_number(cell: str) -> int | float | None:
    """The number a table cell writes as people write it ("$1,234.50", "-€5", "1 234",
    "12.5%" read as 12.5), or None when the cell is no number (a word, "1,5", "nan")."""
    text = cell.strip().replace("\u2212", "-")  # a typographic minus
    if len(text) > 64:
        return None
    sign = ""
    if text[:1] in ("+", "-"):
        sign, text = text[0], text[1:].lstrip()
    if text[:1] in _CURRENCY_SIGNS:
        text = text[1:].lstrip()
    elif text[-1:] in _CURRENCY_SIGNS:
        text = text[:-1].rstrip()
    if not sign and text[:1] in ("+", "-"):  # "$-5"
        sign, text = text[0], text[1:]
    if text.endswith("%"):
        text = text[:-1].rstrip()
    if _GROUPED_NUMBER.fullmatch(text) is None:
        return None
    digits = sign + re.sub(r"[^\d.]", "", text)
    return float(digits) if "." in digits else int(digits)


def _words(text: str) -> str:
    return " ".join(text.split()).casefold()


def _cell_matches(cell: str, expected: Any) -> bool:
    """Whether a table cell states `expected`, read by the expected value's type: a number
    by its value, a string case-folded (runs of whitespace as one space), None as an empty
    cell, a boolean as true/yes or false/no."""
    if expected is None:
        return _words(cell) in _EMPTY_CELLS
    if isinstance(expected, bool):
        return _words(cell) in (("true", "yes") if expected else ("false", "no"))
    if _is_number(expected):
        number = _cell_number(cell)
        return number is not None and _numbers_equal(number, expected)
    if isinstance(expected, str):
        return _words(cell) == _words(expected)
    return False


def _header_key(name: str) -> str:
    # "Total revenue", "total_revenue" and "Total-Revenue" name one column.
    return re.sub(r"[\s_-]+", " ", name).strip().casefold()


def _same_header(header: list[str], columns: list[str]) -> bool:
    return len(header) == len(columns) and all(
        _header_key(h) == _header_key(c) for h, c in zip(header, columns, strict=True)
    )


def _md_cells(line: str) -> list[str] | None:
    """A pipe-table line's cells (its leading and trailing pipes optional, "\\|" a literal
    pipe), or None when the line has no pipe (it is no table line)."""
    text = line.strip()
    if _MD_PIPE.search(text) is None:
        return None
    if text.startswith("|"):
        text = text[1:]
    if text.endswith("|") and not text.endswith("\\|"):
        text = text[:-1]
    return [cell.strip().replace("\\|", "|") for cell in _MD_PIPE.split(text)]


def _markdown_tables(text: str):
    """Each GitHub-style pipe table of a Markdown text, in order, as (header, rows): a header
    line, a separator line of as many dash cells, then the rows up to the first line with no
    pipe: a blank line or prose right under the table ends it (GitHub would make such prose a
    one-cell row, which would fail the table as ragged). Headings and prose around the tables
    are skipped."""
    lines = text.splitlines()
    i = 0
    while i + 1 < len(lines):
        header, separator = _md_cells(lines[i]), _md_cells(lines[i + 1])
        if (
            header is None
            or separator is None
            or len(separator) != len(header)
            or not all(_MD_SEPARATOR_CELL.fullmatch(c) for c in separator)
        ):
            i += 1
            continue
        rows: list[list[str]] = []
        i += 2
        while i < len(lines):
            cells = _md_cells(lines[i])
            if cells is None:
                break
            rows.append(cells)
            i += 1
        yield header, rows


def _table_rows(path: str, text: str, columns: list[str]) -> list[list[str]] | None:
    """The rows of the table a file holds under the header `columns`, or None when it holds
    none or its rows are ragged. A .csv (.tsv: tab-separated) file is the table, its first
    row the header. Any other file is read as Markdown, and the first pipe table whose header
    matches is the one read: a later table cannot mend a wrong first one (a report that
    writes two answers has not given one)."""
    text = text.removeprefix("\ufeff")
    lower = path.lower()
    if lower.endswith((".csv", ".tsv")):
        delimiter = "\t" if lower.endswith(".tsv") else ","
        try:
            parsed = [
                row
                for row in csv.reader(io.StringIO(text), delimiter=delimiter)
                if row and not (len(row) == 1 and not row[0].strip())  # a blank line
            ]
        except csv.Error:
            return None
        if not parsed or not _same_header(parsed[0], columns):
            return None
        rows = parsed[1:]
    else:
        found = next((t for t in _markdown_tables(text) if _same_header(t[0], columns)), None)
        if found is None:
            return None
        rows = found[1]
    if any(len(row) != len(columns) for row in rows):
        return None
    return rows


def _all_paired(fits: list[list[int]], n: int) -> bool:
    """Whether each of the items i can have its own partner among fits[i] (0..n-1): a
    bipartite matching by augmenting paths, searched breadth-first (no recursion however
    many rows). A row may fit two expected rows (numbers a cent apart), so a greedy pairing
    could refuse a table that a fairer pairing accepts."""
    owner = [-1] * n  # partner j -> the item holding it
    partner = [-1] * len(fits)  # item i -> its partner
    for start in range(len(fits)):
        reached: dict[int, int] = {}  # partner j -> the item it was reached from
        frontier, free = [start], -1
        while frontier and free < 0:
            following = []
            for i in frontier:
                for j in fits[i]:
                    if j in reached:
                        continue
                    reached[j] = i
                    if owner[j] < 0:
                        free = j
                        break
                    following.append(owner[j])
                if free >= 0:
                    break
            frontier = following
        if free < 0:
            return False
        j = free
        while True:  # shift the partners along the path found
            i = reached[j]
            previous = partner[i]
            owner[j], partner[i] = i, j
            if i == start:
                break
            j = previous
    return True


def _workspace_file(state: dict[str, Any] | None, path: Any) -> str | None:
    tree = workspace_tree(state)
    if tree is None or not isinstance(path, str):
        return None
    text = tree[0].get(path)
    return text if isinstance(text, str) else None


def _file_table(spec, initial, final) -> bool:
    columns, expected = spec["columns"], spec["rows"]
    if (
        not isinstance(columns, list)
        or not columns
        or not all(isinstance(c, str) for c in columns)
        or not isinstance(expected, list)
        or not all(isinstance(r, list) and len(r) == len(columns) for r in expected)
    ):
        return False  # a malformed spec proves nothing
    text = _workspace_file(final, spec["path"])
    rows = _table_rows(spec["path"], text, columns) if text is not None else None
    if rows is None or len(rows) != len(expected):
        return False

    def fits(row: list[str], want: list[Any]) -> bool:
        return all(map(_cell_matches, row, want))

    if spec.get("ordered", False):
        return all(map(fits, rows, expected))
    return _all_paired(
        [[j for j, want in enumerate(expected) if fits(row, want)] for row in rows],
        len(expected),
    )


def _json_matches(actual: Any, expected: Any) -> bool:
    """JSON equality by value: objects by their keys (any order), arrays in order, numbers
    as `_numbers_equal` reads them (2 == 2.0), strings, booleans and null exactly."""
    if isinstance(expected, dict):
        return (
            isinstance(actual, dict)
            and actual.keys() == expected.keys()
            and all(_json_matches(actual[k], v) for k, v in expected.items())
        )
    if isinstance(expected, list):
        return (
            isinstance(actual, list)
            and len(actual) == len(expected)
            and all(map(_json_matches, actual, expected))
        )
    if _is_number(expected):
        return _is_number(actual) and _numbers_equal(actual, expected)
    return type(actual) is type(expected) and actual == expected


def _file_json(spec, initial, final) -> bool:
    expected, path = spec["value"], spec["path"]
    text = _workspace_file(final, path)
    if text is None:
        return False
    text = text.removeprefix("\ufeff")
    try:
        if path.lower().endswith((".jsonl", ".ndjson")):  # one value a line
            actual = [json.loads(line) for line in text.splitlines() if line.strip()]
        else:
            actual = json.loads(text)
        return _json_matches(actual, expected)
    except (ValueError, RecursionError):  # not JSON, or nested past any report's depth
        return False


# `file_ini` reads an INI file as the program it configures does: Python's configparser with
# its defaults (keys case-insensitive, `;` and `#` lines comments, no inline comments, a
# repeated section or key an error), interpolation off. Every section and key of the
# expected mapping must be there and nothing else (a key dropped from a section silently
# falls back to another value; a key added changes what the program does); a value
# compares by the expected value's type: a whole number as `getint` reads it, a float as
# `getfloat` (to within half a cent), a boolean as `getboolean` ("yes", "on", "1" are true;
# a word it does not read fails), text as the stripped text, exactly (a path or a time is
# no word to case-fold). Comments, blank lines, key order and the spaces around "=" are
# free; section names are exact, as configparser's are. "[DEFAULT]" is no special section
# here: its keys would reach every section of the program's reading, so it is read as a
# section of its own, and fails as an extra one unless expected.
_INI_NO_DEFAULT_SECTION = "\n"  # a name no section header can hold (a header is one line)


def _ini_sections(text: str) -> dict[str, dict[str, str]] | None:
    """Each section's own keys and values as configparser reads them, or None when the
    text is no INI file it reads (a key outside a section, a repeated section or key)."""
    parser = configparser.ConfigParser(
        interpolation=None, default_section=_INI_NO_DEFAULT_SECTION, strict=True
    )
    try:
        parser.read_string(text.removeprefix("\ufeff"))
        return {name: dict(parser.items(name, raw=True)) for name in parser.sections()}
    except (configparser.Error, ValueError):
        return None


def _ini_value_matches(text: str, expected: Any) -> bool:
    if isinstance(expected, bool):
        return configparser.ConfigParser.BOOLEAN_STATES.get(text.strip().lower()) is expected
    if isinstance(expected, int):
        try:
            return int(text) == expected
        except ValueError:
            return False
    if isinstance(expected, float):
        try:
            return _numbers_equal(float(text), expected)
        except (ValueError, OverflowError):
            return False
    return isinstance(expected, str) and text.strip() == expected.strip()


def _file_ini(spec, initial, final) -> bool:
    expected = spec["sections"]
    if (
        not isinstance(expected, dict)
        or not expected
        or not all(isinstance(values, dict) for values in expected.values())
    ):
        return False  # a malformed spec proves nothing
    text = _workspace_file(final, spec["path"])
    actual = _ini_sections(text) if text is not None else None
    if actual is None or actual.keys() != expected.keys():
        return False
    for name, values in expected.items():
        want = {key.lower(): value for key, value in values.items()}
        have = actual[name]
        if have.keys() != want.keys():
            return False
        if not all(_ini_value_matches(have[key], value) for key, value in want.items()):
            return False
    return True


# --------------------------------------------------------------------------- reply checks
# Whether a value is stated in the final reply, deterministically: reply checks compare
# *normalised* text, so an answer is not failed for how it writes a value: case and
# whitespace, snake_case words ("in_progress" = "in progress"), number formats (1200 = 1,200
# = 1200.00 = $1,200.00), dates (2025-03-04 = March 4, 2025 = 4 March 2025 = 03/04/2025,
# month first), times (14:00 = 2:00 PM = 2 pm) and booleans (true = yes). A value matches
# when each of its pieces appears in the reply as whole tokens: "1200" is not found in
# "11200", nor "Ann" in "Anne".

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\.?,?\s+)?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"

_ISO = re.compile(
    r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})"
    r"(?:[t ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?(?![\w-])"
)
_MONTH_FIRST = re.compile(rf"(?<!\w){_WEEKDAY}{_MONTH}\s+{_DAY},?\s+(\d{{4}})(?!\w)")
_DAY_FIRST = re.compile(rf"(?<!\w){_WEEKDAY}{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})(?!\w)")
_SLASHED = re.compile(r"(?<![\w/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/])")
_CLOCK_12 = re.compile(r"(?<![\w:])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\.?(?!\w)")
_CLOCK_24 = re.compile(r"(?<![\w:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\w:])")
# A North American number with or without its +1, in the usual groupings.
_PHONE = re.compile(
    r"(?<![\w+])(?:\+?1[\s.-]?)?(?P<national>\(?\d{3}\)?[\s.-]?\d{3}[\s.-]?\d{4})(?!\w)"
)
# A month and day with no year after them (full dates are read first). "May" is left out: in
# lower case it is mostly the verb ("orders may 5 …" is no date).
_MONTH_NO_MAY = "(" + "|".join(m for m in sorted(_MONTHS, key=len, reverse=True) if m != "may")
_MONTH_DAY = re.compile(rf"(?<![\w-]){_WEEKDAY}{_MONTH_NO_MAY})\.?\s+{_DAY}(?![\w:/-])")
_DAY_MONTH = re.compile(rf"(?<![\w-]){_DAY}\s+(?:of\s+)?{_MONTH_NO_MAY})\.?(?![\w-])")
_NOON = re.compile(r"\b(?:noon|midday|midnight)\b")
_YEARLESS_TOKEN = re.compile(r"^--\d{2}-\d{2}$")
# Currency codes said beside an amount: "USD 1,200" and "$1,200" state the same amount.
_CURRENCY_WORDS = frozenset({"usd", "eur", "gbp", "jpy", "cad", "aud", "chf", "us$"})
# Number words a person writes for small numbers; read as digits when a reply is searched for
# a value it must state (never when it is searched for values it must not: "the one I asked
# about" is no hedge over the number 1).
_NUMBER_WORDS = {
    word: str(i)
    for i, word in enumerate(
        "zero one two three four five six seven eight nine ten eleven twelve thirteen "
        "fourteen fifteen sixteen seventeen eighteen nineteen twenty".split()
    )
}
_NUMBER = re.compile(r"^[$€£¥]?([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)%?$")
_DATE_TOKEN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME_TOKEN = re.compile(r"^\d{2}:\d{2}$")
# Punctuation a token may carry at its ends in running text ("is 314.07." / "(paid)").
_EDGE = "\"'`.,;:!?()[]{}<>«»“”‘’*@"


def _date(year: str, month: int, day: str) -> str:
    return f"{int(year):04d}-{month:02d}-{int(day):02d}"


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _iso(m: re.Match[str]) -> str:
    date = f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    return date if m.group(4) is None else f"{date} {_clock(int(m.group(4)), int(m.group(5)))}"


def _twelve_hour(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
    return _clock(hour + (12 if m.group(3) == "p" else 0), minute)


# A grade reads the same texts again and again (the self-test grades each reply of a task's
# runs against every check; the refusal and the do-nothing answer recur in every task): each
# is normalised once.
@lru_cache(maxsize=8192)
def normalise(text: str) -> str:
    """`text` with phone numbers, dates, times, case, snake_case and spacing written one way."""
    text = unicodedata.normalize("NFKC", text).lower().replace("_", " ")
    text = text.replace("\u2019", "'")
    text = _PHONE.sub(_phone, text)
    text = _ISO.sub(_iso, text)
    text = _MONTH_FIRST.sub(lambda m: _date(m.group(3), _MONTHS[m.group(1)], m.group(2)), text)
    text = _DAY_FIRST.sub(lambda m: _date(m.group(3), _MONTHS[m.group(2)], m.group(1)), text)
    text = _SLASHED.sub(lambda m: _date(m.group(3), int(m.group(1)), m.group(2)), text)
    # "on March 4" for 2026-03-04: a date without its year (`mentions` reads it as the date).
    text = _MONTH_DAY.sub(lambda m: _yearless(_MONTHS[m.group(1)], m.group(2)), text)
    text = _DAY_MONTH.sub(lambda m: _yearless(_MONTHS[m.group(2)], m.group(1)), text)
    text = _NOON.sub(lambda m: "12:00" if m.group(0) in ("noon", "midday") else "00:00", text)
    text = _CLOCK_12.sub(_twelve_hour, text)
    text = _CLOCK_24.sub(lambda m: _clock(int(m.group(1)), int(m.group(2))), text)
    return " ".join(text.split())


def _phone(m: re.Match[str]) -> str:
    # One token for a phone number however it is written: +1-546-076-1028, (546) 076-1028,
    # 546.076.1028 and 5460761028 all read "tel5460761028" (the national number).
    return " tel" + re.sub(r"\D", "", m.group("national")) + " "


def _yearless(month: int, day: str) -> str:
    return f"--{month:02d}-{int(day):02d}"


def _number(token: str) -> str:
    m = _NUMBER.match(token)
    if m is None:
        return token
    try:
        value = Decimal(m.group(1).replace(",", ""))
    except InvalidOperation:
        return token
    # 1200, 1200.0 and 1,200.00 are one number; normalize() may write 1E+3, so format it.
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "+0") else text.lstrip("+")


def tokens(text: str) -> list[str]:
    """The reply's words after normalising: numbers canonical, edge punctuation (and a
    handle's "@") dropped, currency codes left out."""
    out = []
    for raw in normalise(text).split():
        token = raw.strip(_EDGE)
        if token and token not in _CURRENCY_WORDS:
            out.append(_number(token))
    return out


def _pieces(value: Any) -> list[list[str]]:
    """What must appear for `value`: its tokens, with each date and time on its own (a reply
    may write "March 4, 2025 at 2 PM" for 2025-03-04T14:00)."""
    pieces: list[list[str]] = []
    run: list[str] = []
    for token in tokens(value_text(value)):
        if _DATE_TOKEN.match(token) or _TIME_TOKEN.match(token):
            if run:
                pieces.append(run)
                run = []
            pieces.append([token])
        else:
            run.append(token)
    if run:
        pieces.append(run)
    return pieces


def value_text(value: Any) -> str:
    """A JSON value as the words a reply would use for it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(value_text(v) for v in value)
    return str(value)


def _variants(value: Any) -> list[Any]:
    # A yes/no value may be written either way.
    if isinstance(value, bool):
        return [value, "true" if value else "false"]
    return [value]


def _has_run(haystack: Sequence[str], needle: Sequence[str]) -> bool:
    n = len(needle)
    if n == 1:
        if needle[0] in haystack:
            return True
        # A date said without its year ("on March 4") states that date.
        return _DATE_TOKEN.match(needle[0]) is not None and "--" + needle[0][5:] in haystack
    # Compared only where the first word stands, each found at C speed: a long reply holds a
    # run's first word a few times, not at every position.
    first, rest, at = needle[0], list(needle[1:]), -1
    last = len(haystack) - n
    while True:
        try:
            at = haystack.index(first, at + 1, last + 1)
        except ValueError:
            return False
        if list(haystack[at + 1 : at + n]) == rest:
            return True


# Words in a row that a reply shares with the request to be read as copied from it: three
# is longer than the "it is booked" a reason says in its own words, shorter than any echo.
ECHO_WORDS = 3


def said_beyond_echo(reply: str, value: Any, request: str) -> bool:
    """Whether `reply` states `value` outside the runs of `ECHO_WORDS` or more words it
    copies from `request` ("I can't: cancel the slot booked for Wednesday" says "booked"
    only inside the request's words; "that slot is already booked" says it in its own)."""
    words = list(_spoken_tokens(reply or ""))
    asked = _spoken_tokens(request or "")
    n = ECHO_WORDS
    runs = {tuple(asked[i : i + n]) for i in range(len(asked) - n + 1)}
    copied = [False] * len(words)
    for i in range(len(words) - n + 1):
        if tuple(words[i : i + n]) in runs:
            copied[i : i + n] = [True] * n
    # A copied word is blanked (not dropped): the words around it must not join into a
    # run of the value's words that the reply never said.
    own = [w if not c else "\x00" for w, c in zip(words, copied, strict=True)]
    return _mentioned(own, value, spoken=True)


def mentions(reply: str, value: Any, spoken: bool = False) -> bool:
    """Whether `reply` states `value` (normalised; every piece as whole tokens). `spoken`:
    small numbers written as words count too ("six" for 6), for values a reply must state."""
    return _mentioned((_spoken_tokens if spoken else _reply_tokens)(reply or ""), value, spoken)


def _mentioned(words: Sequence[str], value: Any, spoken: bool = False) -> bool:
    """`mentions` over a reply already read into words."""
    for variant in _variants(value):
        pieces = _scalar_pieces(variant) if type(variant) in _SCALARS else _pieces(variant)
        if spoken:  # "tier one" is said "tier one" or "tier 1": both sides read as digits
            pieces = tuple(tuple(_NUMBER_WORDS.get(t, t) for t in piece) for piece in pieces)
        if pieces and all(_has_run(words, piece) for piece in pieces):
            return True
    return False


_SCALARS = frozenset({str, int, float, bool})


@lru_cache(maxsize=4096)
def _scalar_pieces_typed(kind: type, value: Any) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(piece) for piece in _pieces(value))


def _scalar_pieces(value: Any) -> tuple[tuple[str, ...], ...]:
    # Every grade reads the same few asked and decoy values (the self-test grades a task's
    # replies a dozen times): their words are worked out once. Keyed by type too, since
    # 1 == 1.0 == True would otherwise share one entry.
    return _scalar_pieces_typed(type(value), value)


@lru_cache(maxsize=1024)
def _reply_tokens(reply: str) -> tuple[str, ...]:
    # A reply is read by every reply check of every grade of it (the self-test grades the
    # same gold answer many times): normalising it once saves most of the regex work.
    return tuple(tokens(reply))


@lru_cache(maxsize=1024)
def _spoken_tokens(reply: str) -> tuple[str, ...]:
    return tuple(_NUMBER_WORDS.get(t, t) for t in _reply_tokens(reply))


def same_value(a: Any, b: Any) -> bool:
    """Whether two values read the same once normalised (a decoy equal to the answer is no
    decoy)."""
    return _pieces(a) == _pieces(b)


# --------------------------------------------------------------------------- the reply contract
# A reply earns only for a specific, grounded answer (docs/reward.md says why this shape):
#
# * a question's reply states the asked value (`reply_contains`) and no other candidate value
#   of the same attribute: the other records' values and the field's other allowed values
#   (`reply_excludes`), so neither a hedge over every status nor a dump of the state pays;
# * a refusal (`reply_refuses`) declines, claims nothing was done, and gives a true reason:
#   one of the rules that really block the request, by its fact (the stock, the status) or
#   in the words of the rule or the tool's error; it states no rule that does not block it
#   (`reply_states_no_other_rule`: pasting the system prompt's rules is a shortcut);
# * every reply is concise (`reply_concise`): it states at most a few values of the state
#   beyond what the request and a right answer need, so a dump never pays after real work.


class Seen:
    """What an episode's calls showed the agent, read once for all the reply checks of a
    grade: a reply earns for a value only where a call showed it (a grounded answer), so a
    lucky guess with no call ("it is pending") earns nothing, however often it is right.

    A value is shown when one scalar of a call's result states it, as `mentions` reads it
    ("2026-03-04" in "2026-03-04T10:00", 1200 in 1200.0), and the call's own words (its
    tool's name, its arguments) do not: an error that echoes what the agent sent ("unknown
    order: pending") shows nothing the agent did not say itself.

    A record's field (the asked order's status, the refused product's stock) is shown only
    by a result showing that record: its id and the field beside it. A value seen on another
    record ("pending" in someone else's order) grounds no answer about this one.
    """

    __slots__ = ("_by_word", "_errors", "_records")

    def __init__(self, calls: Sequence[Any] = ()) -> None:
        # word → (the words of a result's scalar holding it, the words of its call)
        self._by_word: dict[str, list[tuple[tuple[str, ...], tuple[str, ...]]]] = {}
        # (an error a call answered with, its call's own text)
        self._errors: list[tuple[str, str]] = []
        # a record's id → (a record a result showed under that id, the words of its call)
        self._records: dict[str, list[tuple[dict[str, Any], tuple[str, ...]]]] = {}
        for call in calls:
            if isinstance(call, dict) and "result" in call:
                own_text = _own_text(call.get("tool"), call.get("arguments"))
                result = call["result"]
            else:  # a bare result: nothing of its call is known
                own_text, result = "", call
            own = _reply_tokens(own_text)
            scalars, records = _result_parts(result)
            for scalar in scalars:
                words = _reply_tokens(value_text(scalar))
                for word in set(words):
                    self._by_word.setdefault(word, []).append((words, own))
            for rid, record in records:
                self._records.setdefault(rid, []).append((record, own))
            error = _error_of(result)
            if error:
                self._errors.append((error, own_text))

    @classmethod
    def of(cls, shown: Sequence[Any] | Seen | None) -> Seen | None:
        """`shown` read (None stays None: nothing is held to calls)."""
        if shown is None or isinstance(shown, Seen):
            return shown
        return cls(shown)

    def states(self, value: Any) -> bool:
        """Whether a call of the episode showed `value` (every item of a list)."""
        if isinstance(value, list):
            return bool(value) and all(self.states(v) for v in value)
        for variant in _variants(value):
            pieces = _scalar_pieces(variant) if type(variant) in _SCALARS else _pieces(variant)
            if not pieces:
                continue
            for words, own in self._by_word.get(pieces[0][0], ()):
                if all(_has_run(words, p) for p in pieces) and not all(
                    _has_run(own, p) for p in pieces
                ):
                    return True
        return False

    def shows_field(self, record_id: Any, field: str, value: Any) -> bool:
        """Whether a call showed record `record_id` with `value` in its `field` (a result
        holding the record under its id), other than by echoing the call's own words."""
        for record, own in self._records.get(str(record_id), ()):
            if field in record and not isinstance(record[field], (dict, list)):
                words = _reply_tokens(value_text(record[field]))
                if _mentioned(words, value) and not _mentioned(own, value):
                    return True
        return False

    def shows(self, fact: Any) -> bool:
        """Whether a call showed `fact`: a record's field ({"id", "field", "value"}) where it
        names the record, else the value anywhere (`states`)."""
        if isinstance(fact, dict) and "value" in fact:
            if fact.get("id") is not None and fact.get("field"):
                return self.shows_field(fact["id"], fact["field"], fact["value"])
            return self.states(fact["value"])
        return self.states(fact)

    def answered_with(self, error: str) -> bool:
        """Whether a call was answered with `error` (every meaningful word of it), other than
        by echoing the call's own words."""
        words = content_words(error)
        return bool(words) and any(
            words <= content_words(text) and not words <= content_words(own)
            for text, own in self._errors
        )


def _own_text(tool: Any, arguments: Any) -> str:
    """A call's own words: its tool's name and its arguments (keys and values)."""
    if not isinstance(arguments, str):
        try:
            arguments = json.dumps(arguments, default=str, sort_keys=True)
        except (TypeError, ValueError):
            arguments = str(arguments)
    return f"{tool} {arguments}"


def _result_parts(value: Any) -> tuple[list[Any], list[tuple[str, dict[str, Any]]]]:
    """Every scalar of a result, with the keys of its objects (an id may key a record), and
    every record it shows: (its id, the record) for each object with an "id", and for each
    object an id keys."""
    scalars: list[Any] = []
    records: list[tuple[str, dict[str, Any]]] = []
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if "id" in item and isinstance(item["id"], (str, int)):
                records.append((str(item["id"]), item))
            for key, inner in item.items():
                if isinstance(key, str):
                    scalars.append(key)
                    if isinstance(inner, dict):
                        records.append((key, inner))
            stack.extend(item.values())
        elif isinstance(item, (list, tuple)):
            stack.extend(item)
        elif item is not None:
            scalars.append(item)
    return scalars, records


def _error_of(result: Any) -> str:
    """The error a call answered with ({"success": false, "error": ...}, or a foreign tool's
    bare {"error": ...} or message text), else ""."""
    if isinstance(result, str):
        return result
    if isinstance(result, dict):
        for key in ("error", "message"):
            if isinstance(result.get(key), str):
                return result[key]
    return ""


def _reply_contains(spec, reply: str, initial, final, seen: Seen | None = None) -> bool:
    if not mentions(reply, spec["value"], spoken=True):
        return False
    if seen is None:
        return True
    record = spec.get("record")  # the asked record's field, where the gold run showed one
    if isinstance(record, dict):
        return seen.shows_field(record.get("id"), record.get("field", ""), spec["value"])
    return seen.states(spec["value"])


def _reply_excludes(spec, reply: str, initial, final, seen: Seen | None = None) -> bool:
    words = _unquoted(_reply_tokens(reply or ""), spec.get("quoted") or ())
    return not any(_mentioned(words, v) for v in spec["values"])


# Stands where a quotation was cut out: no value's words contain it, so no value is read
# across the cut either.
_CUT = "\x00"


def _unquoted(words: Sequence[str], quoted: Sequence[str]) -> tuple[str, ...]:
    """`words` with every verbatim quotation of a `quoted` text cut out. A rule line may name
    every value of a field ("orders move pending -> paid -> shipped -> delivered"): quoting it
    as the reason states none of them as the record's, a hedge over them does."""
    out = tuple(words)
    for text in quoted:
        needle = _reply_tokens(text)  # the same few rule lines are read for every grade
        n = len(needle)
        if not n or needle[0] not in out:
            continue
        i, kept = 0, []
        while i < len(out):
            if out[i : i + n] == needle:
                kept.append(_CUT)
                i += n
            else:
                kept.append(out[i])
                i += 1
        out = tuple(kept)
    return out


# Words that decline (after normalising: lower case, ’ as '); a refusal needs one.
_DECLINE = re.compile(
    r"\b(?:can't|cannot|can not|couldn't|could not|unable|not able|wasn't able|was not able|"
    r"isn't possible|is not possible|not possible|impossible|won't|will not|wouldn't|"
    r"would not|refuse[ds]?|declined?|rejected|not allowed|isn't allowed|not permitted|"
    r"didn't|did not|haven't|have not|hasn't|has not|no longer|not go through|"
    r"doesn't allow|does not allow|don't allow|do not allow|blocked|denied|failed|"
    r"sorry|unfortunately)\b"
)
# Words that claim the request was carried out: no refusal may carry one.
_CLAIM = re.compile(
    r"\b(?:done|all set|successfully|taken care of|went through|has gone through|"
    r"completed your request|request is complete)\b"
)
_NEGATION = re.compile(r"(?:\bnot\b|n't\b|\bnever\b|\bno\b|\bnothing\b)")
_STOP_WORDS = frozenset(
    "a an the of to in on at by for from with and or but if then so as is are was were be "
    "been being it its this that these those there their they them he she his her we our "
    "you your i me my can may must only any each every all more most less least other than "
    "when while once up down into out over under per at has have had do does did not no "
    "will would should could one also just which who whom what where how".split()
)


def decline_cue(reply: str) -> bool:
    """Whether the reply declines (can't, unable, not allowed, did not …)."""
    return _DECLINE.search(_normalised_reply(reply)) is not None


def completion_claim(reply: str) -> bool:
    """Whether the reply claims the request was done ("Done", "all set", "successfully"),
    other than in a negation ("nothing was done", "not successfully")."""
    text = _normalised_reply(reply)
    for match in _CLAIM.finditer(text):
        before = text[max(0, match.start() - 24) : match.start()]
        if not _NEGATION.search(before):
            return True
    return False


@lru_cache(maxsize=8192)
def content_words(text: str) -> frozenset[str]:
    """The words of `text` that carry meaning, stemmed lightly ("orders" = "order"). Cached:
    the same rules and requests are read for every reply graded against them."""
    return frozenset(
        _stem(t) for t in _reply_tokens(text or "") if t not in _STOP_WORDS and _wordy(t)
    )


def _wordy(token: str) -> bool:
    return any(c.isalnum() for c in token)


def _stem(word: str) -> str:
    for suffix in ("ies", "es", "s", "ed", "ing"):
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return word


def states_text(reply: str, text: str, ignore: Sequence[str] = (), share: float = 0.6) -> bool:
    """Whether `reply` states the rule or message `text`: at least `share` of its meaningful
    words not in `ignore` (the request's own words) appear in the reply, and at least one."""
    words = content_words(text) - {_stem(w) for w in ignore}
    if not words:
        return False
    said = content_words(reply)
    found = len(words & said)
    return found >= 1 and found >= share * len(words)


def _reply_refuses(spec, reply: str, initial, final, seen: Seen | None = None) -> bool:
    # A request refused alone is never done: a claim that it was is false. Beside other
    # goals (`alone` false) the reply may say those were done.
    if not decline_cue(reply) or (spec.get("alone", True) and completion_claim(reply)):
        return False
    request = spec.get("request") or ""
    for reason in spec.get("reasons") or ():
        if seen is not None and not block_shown(reason, seen):
            continue  # a reason the agent never saw is a guess, however true
        shows = reason.get("shows") or ()
        for fact in reason.get("facts") or ():
            if not mentions(reply, fact, spoken=True):
                continue
            if mentions(request, fact, spoken=True) and not said_beyond_echo(reply, fact, request):
                continue  # the request's own words said back: no reason learnt
            # A fact of the state (the status, the stock) must have been shown itself. A
            # rule's own figure (a cap of 5) is the system prompt's, and a reason only said
            # with the rule it caps: a bare number, or one inside a name ("Marathon Pro
            # 5"), or a list of numbers, names no rule.
            of_state = [s for s in shows if same_value(fact, fact_value(s))]
            if not of_state:
                if _says_rule_word(reply, reason, request):
                    return True
            elif seen is None or any(seen.shows(s) for s in of_state):
                return True
        for text in reason.get("texts") or ():
            if states_text(reply, text) and _adds_to(reply, text, request):
                return True
    return False


# Words that say a figure is a bound, whatever the rule's own words ("the limit is 5").
_BOUND_WORDS = frozenset(
    _stem(w) for w in "limit limits maximum max cap capped exceed exceeds over above".split()
)


def _says_rule_word(reply: str, reason: dict[str, Any], request: str) -> bool:
    """Whether the reply says a word of the reason's rule ("units", "per cart line") that is
    no number and that the request does not say, or a word of a bound ("the limit is 5")."""
    asked = content_words(request)
    words = {
        w
        for text in reason.get("texts") or ()
        for w in content_words(text)
        if w not in asked and _NUMBER.match(w) is None
    }
    return bool((words | _BOUND_WORDS) & content_words(reply))


def fact_value(fact: Any) -> Any:
    """A fact of `shows`: a record's field ({"id", "field", "value"}) or a bare value."""
    return fact["value"] if isinstance(fact, dict) and "value" in fact else fact


def block_shown(reason: dict[str, Any], seen: Seen) -> bool:
    """Whether the episode showed that `reason` blocks the request: the request alone tells
    it (`told`: a quantity over a fixed cap), a call showed one of the state's facts that
    make it block (`shows`: the order's status, the product's stock, each on its record), or
    a call was answered with the rule's error (its first text)."""
    if reason.get("told"):
        return True
    if any(seen.shows(fact) for fact in reason.get("shows") or ()):
        return True
    texts = reason.get("texts") or ()
    return bool(texts) and seen.answered_with(texts[0])


# Words that say nothing of a rule: a refusal's own words and articles.
_NOT_A_REASON = frozenset(
    "a an the i i'm i've it it's this that sorry can't cannot couldn't unable not".split()
)


def error_tells(reasons: Sequence[dict[str, Any]], request: str) -> bool:
    """Whether the tool's own error (the first reason's first text: the guard the tool checks
    first) says a word the request does not: a refusal quoting it is then a reason, not an
    echo of the request."""
    texts = reasons[0].get("texts") if reasons else None
    if not texts:
        return False
    asked = set(_reply_tokens(request))
    return any(t not in asked and t not in _NOT_A_REASON for t in _reply_tokens(texts[0]))


def _adds_to(reply: str, text: str, request: str) -> bool:
    """Whether the reply says a word of rule `text` that the request does not: echoing the
    request ("I can't remove the cart line") is no reason, "only an in-cart line can be
    removed" is, though every other word of it is the request's."""
    said = set(_reply_tokens(reply))
    asked = set(_reply_tokens(request))
    return any(t in said for t in _reply_tokens(text) if t not in asked and t not in _NOT_A_REASON)


def _reply_states_no_other_rule(spec, reply: str, initial, final, seen: Seen | None = None) -> bool:
    ignore = {_stem(w) for w in spec.get("ignore") or ()}
    request = spec.get("request") or ""
    # `tolerate`: how many rules may be stated (a question's answer, or a refusal beside
    # other goals, may echo the one rule a change it made follows); `tolerate_tools`: how
    # many tool descriptions (telling what each call did may word the tool's own).
    # A reply that tells what changes it made (a question's, or a refusal's beside other
    # goals) shares words with the rules those changes follow: there only a rule pasted word
    # for word counts (`match` "verbatim"); a refusal alone is held to every rule it words.
    if spec.get("match") == "verbatim":
        texts = [*(spec.get("rules") or ()), *(spec.get("tools") or ())]
        return not any(pastes_text(reply, text, request) for text in texts)
    rules = sum(states_rule(reply, rule, request, ignore) for rule in spec.get("rules") or ())
    tools = sum(states_rule(reply, tool, request, ignore) for tool in spec.get("tools") or ())
    return rules <= int(spec.get("tolerate", 0)) and tools <= int(spec.get("tolerate_tools", 0))


# How many words in a row of a rule a reply must repeat to have pasted it.
PASTED_RUN = 6


def pastes_text(reply: str, text: str, request: str = "") -> bool:
    """Whether `reply` repeats a run of PASTED_RUN words of `text` (all of it, for a text of
    four or five words) that the request does not."""
    words = _reply_tokens(text or "")
    n = min(PASTED_RUN, len(words))
    if n < 4:
        return False
    said, asked = _runs(reply or "", n), _runs(request or "", n)
    return any(
        words[i : i + n] in said and words[i : i + n] not in asked
        for i in range(len(words) - n + 1)
    )


@lru_cache(maxsize=4096)
def _runs(text: str, n: int) -> frozenset[tuple[str, ...]]:
    """Every run of `n` words of `text` (a reply is read against every rule)."""
    words = _reply_tokens(text)
    return frozenset(words[i : i + n] for i in range(len(words) - n + 1))


def states_rule(reply: str, rule: str, request: str = "", ignore: set[str] = frozenset()) -> bool:
    """Whether `reply` states `rule`: most of the rule's own words (not the request's) are in
    it, two at least, so one shared noun ("order") never counts as stating a rule."""
    words = content_words(rule) - content_words(request) - ignore
    return len(words) >= 2 and len(words & content_words(reply)) >= max(2, 0.6 * len(words))


def _reply_concise(spec, reply: str, initial, final, seen: Seen | None = None) -> bool:
    limit = int(spec.get("limit", 8))
    words = _reply_tokens(reply or "")
    if len(words) <= limit:
        return True  # cannot state more values than it has words
    allowed = {_value_key(v) for v in spec.get("allowed") or ()}
    request = spec.get("request") or ""  # what the user said may be said back
    extra: set[tuple[tuple[str, ...], ...]] = set()
    for key, value in _values_said(initial, final, words):
        if key in allowed or key in extra:
            continue
        if mentions(reply, value) and not mentions(request, value):
            extra.add(key)
            if len(extra) > limit:
                return False
    return True


def _value_key(value: Any) -> tuple[tuple[str, ...], ...]:
    if type(value) in _SCALARS:
        return _scalar_pieces(value)
    return tuple(tuple(p) for p in _pieces(value))


def _values_said(
    initial: Any, final: Any, words: Sequence[str]
) -> list[tuple[tuple[tuple[str, ...], ...], Any]]:
    """(key, value) of the informative scalars of an episode's states whose first word the
    reply says (the others cannot be stated in it). The initial state is indexed by first
    word once per process (every reply of a task is graded against the same initial state,
    which nothing changes); a final state's changed parts are read every time (a caller may
    grade a state, change it and grade it again)."""
    said = set(words)
    found: list[tuple[tuple[tuple[str, ...], ...], Any]] = []
    if isinstance(initial, (dict, list)):
        index = _initial_index(initial)
        for word in said:
            found += index.get(word, ())
    if isinstance(final, dict) and isinstance(initial, dict):
        # Only what differs from the initial state can add a value (equal parts compare
        # at C speed; an episode changes a few records).
        later = _informative_scalars(_changed_parts(initial, final))
    elif isinstance(final, (dict, list)):
        later = _informative_scalars(final)
    else:
        later = []
    for value in later:
        key = _value_key(value)
        if key and _first_words(key) & said:
            found.append((key, value))
    return found


def _first_words(key: tuple[tuple[str, ...], ...]) -> set[str]:
    """The words a reply stating a value of this key must say first (a date may be said
    without its year: "--03-04")."""
    first = key[0][0]
    return {first, "--" + first[5:]} if _DATE_TOKEN.match(first) else {first}


def _changed_parts(initial: dict[str, Any], final: dict[str, Any]) -> list[Any]:
    parts: list[Any] = []
    for key, after in final.items():
        before = initial.get(key)
        if key in initial and before == after:
            continue
        if isinstance(before, dict) and isinstance(after, dict):
            parts += [rec for rid, rec in after.items() if before.get(rid) != rec]
        else:
            parts.append(after)
    return parts


# An initial state's values by first word, by the state's id, with the state itself to tell
# a reused id apart.
_INDEX_MEMO: dict[int, tuple[Any, dict[str, list[Any]]]] = {}
_INDEX_MEMO_SIZE = 256


def _initial_index(state: Any) -> dict[str, list[Any]]:
    held = _INDEX_MEMO.get(id(state))
    if held is not None and held[0] is state:
        return held[1]
    index: dict[str, list[Any]] = {}
    seen: set[tuple[tuple[str, ...], ...]] = set()
    for value in _informative_scalars(state):
        key = _value_key(value)
        if not key or key in seen:
            continue
        seen.add(key)
        for word in _first_words(key):
            index.setdefault(word, []).append((key, value))
    if len(_INDEX_MEMO) >= _INDEX_MEMO_SIZE:
        _INDEX_MEMO.pop(next(iter(_INDEX_MEMO)))
    _INDEX_MEMO[id(state)] = (state, index)
    return index


def _informative_scalars(state: Any) -> list[Any]:
    """Names, emails, amounts, dates, statuses; not booleans, small counts or one- and
    two-letter strings, which any reply may say."""
    out: list[Any] = []
    stack = [state]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, list):
            stack.extend(value)
        elif isinstance(value, bool) or value is None:
            continue
        elif isinstance(value, (int, float)):
            if abs(value) >= 100 or (isinstance(value, float) and not value.is_integer()):
                out.append(value)
        elif isinstance(value, str) and len(value.strip()) >= 3:
            out.append(value)
    return out


def _normalised_reply(reply: str) -> str:
    return " ".join(_reply_tokens((reply or "").replace("\u2019", "'")))


_REPLY_EVALUATORS = {
    "reply_contains": _reply_contains,
    "reply_excludes": _reply_excludes,
    "reply_refuses": _reply_refuses,
    "reply_states_no_other_rule": _reply_states_no_other_rule,
    "reply_concise": _reply_concise,
}
REPLY_CHECK_TYPES = tuple(_REPLY_EVALUATORS)
_EVALUATORS = {
    "field_equals": _field_equals,
    "field_absent": _field_absent,
    "field_refers_to_new": _field_refers_to_new,
    "record_matching": _record_matching,
    "record_absent": _record_absent,
    "attribute_equals": _attribute_equals,
    "no_collateral_changes": _no_collateral_changes,
    "file_content": _file_content,
    "file_absent": _file_absent,
    "folder_present": _folder_present,
    "folder_absent": _folder_absent,
    "no_other_file_changes": _no_other_file_changes,
    "file_table": _file_table,
    "file_json": _file_json,
    "file_ini": _file_ini,
}
CHECK_TYPES = (*_EVALUATORS, *_REPLY_EVALUATORS)
