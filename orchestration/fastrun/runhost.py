"""The run host: a process that has imported Dagster and a code location once, and forks one
child per run (launcher.py starts it and talks to it).

Spawning a run process costs seconds of imports (`import orchestration.definitions` is ~3.5 s
of CPU, most of it dagster_dbt); a fork of a process that has done them costs milliseconds.
Forking is only safe from a process with one thread and no open database connections, so the
host never opens the instance and starts no thread: each child opens its own instance from the
run's InstanceRef, re-executes the code location module (so it sees the launcher's current
ENVFOUNDRY_* settings and starts its own lifeline thread) and executes the run as
`dagster api execute_run` does.

What only some runs need (the code location's `RUN_HOST_WARM_IMPORTS`, e.g. Great
Expectations and dbt for publish runs: seconds each; an entry `module:function` is also
called, to warm what the runs would each build again) is imported by a warm helper: a child the
host forks once it has the code location, which imports them and then forks the runs of the
jobs that need them (`RUN_HOST_WARM_JOBS`). The host itself never imports them: an import
cannot be interrupted, and a build's first runs, asked for a moment after the host is ready,
waited behind the 4 s of `import great_expectations` when the host imported it while idle.
Should the helper be gone or refuse (an import started a thread), the host forks such a run
itself, and the run imports what it needs.

Protocol, one JSON object per line (wire.py) over the socket whose fd the launcher passes:
  host → launcher  {"ready": pid} once imported, or {"error": why} before exiting
  launcher → host  {"run_id", "instance_ref" (serialized), "env", "cwd", "job", "stdio"}
  host → launcher  {"pid", "start"} of the child that runs it, or {"error": why}
A request with "stdio": 2 comes with two file descriptors (SCM_RIGHTS), the launcher's stdout
and stderr, which become the run's: a build's runs write into its log, as a process it spawned
would, even when the host was started by an earlier build.
The host passes the requests of warm jobs to its helper over a socket pair, in the same
protocol, and the helper's answer back. A request with "entry" instead of "run_id" asks for
an entry point of a CLI (entrypoints.py; its whole build, warm_build.py): the host forks it
itself, with four descriptors (the build's log twice, the CLI's terminal, the CLI's end of the
result channel).
The host ends when the launcher's end closes (the launcher ended, however it ended): the
equivalent of PR_SET_PDEATHSIG, which would fire when the launching *thread* ends (a daemon's
or webserver's worker thread), not the process. A child that ends without finishing its run
(killed, crashed) is reported by a short-lived forked reporter that opens the instance.

A warm host (warm.py) outlives the build that started it: it listens on a Unix
socket instead, greets each launcher that connects with {"ready": pid}, answers each on its own
connection, and ends once it has had no launcher and no running child for its idle time, or
when its socket file is removed (`envfoundry stop`, or a build that replaced it).
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import os
import random
import select
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from orchestration.fastrun import entrypoints, lifeline, warm_build
from orchestration.fastrun.wire import Inbox, send_line

REPO = Path(__file__).resolve().parents[2]
# A host's program: `main` in a fresh interpreter, with the repository first on its path (its
# working directory is the code location's, which may be another).
BOOT = (
    "import sys; sys.path.insert(0, sys.argv[1]); "
    "from orchestration.fastrun.runhost import main; main(sys.argv[2:])"
)
# How long a host without a warm helper waits for a request before it imports a warm import
# itself: the first runs of a build are asked for at once.
_IDLE_S = 0.3
# How often a warm host with nothing to do checks its idle time and its socket file.
_WARM_CHECK_S = 1.0


@dataclass
class _Child:
    pidfd: int
    run_id: str = ""
    instance_ref: str = ""
    # No run to report failed if it ends early: a reporter's, or a CLI's build (its CLI says).
    unreported: bool = False


def host_command(executable: str, *args: str) -> list[str]:
    """The command line of a run host (`main`'s arguments: `args`)."""
    return [executable, "-c", BOOT, str(REPO), *args]


@dataclass
class RunHost:
    sock: socket.socket | None  # the launcher's end, for a host one launcher started
    module: str
    children: dict[int, _Child] = field(default_factory=dict)
    idle_imports: list[str] = field(default_factory=list)  # without a helper, when idle
    broken: str = ""  # why this host no longer forks (an import started a thread)
    warm: WarmHelper | None = None  # forks the runs of `warm_jobs`, imports done
    warm_jobs: frozenset[str] = frozenset()
    # A warm host: launchers connect here, and it ends after `idle_s` without any.
    listener: socket.socket | None = None
    idle_s: float = 0.0
    listener_inode: int = 0
    launchers: dict[int, Inbox] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.sock is not None:
            self.launchers[self.sock.fileno()] = Inbox(self.sock)

    def send(self, message: dict, to: socket.socket | None = None) -> None:
        send_line(to or self.sock, message)

    def serve(self) -> None:
        """Start runs on request and reap children until the launcher's end closes (a warm
        host: until it has been idle for `idle_s`, or its socket file is gone)."""
        idle_since = time.monotonic()
        while True:
            fds = [*self.launchers, *(c.pidfd for c in self.children.values())]
            if self.listener is not None:
                fds.append(self.listener.fileno())
            readable, _, _ = select.select(fds, [], [], self._timeout())
            self.reap()
            if self.listener is not None and self.listener.fileno() in readable:
                self.accept()
            for fd in [fd for fd in readable if fd in self.launchers]:
                if not self.read_requests(self.launchers[fd]):
                    self.launchers.pop(fd).sock.close()
                    if self.listener is None:
                        return
            if not readable and self.idle_imports:
                self.import_when_idle(self.idle_imports.pop(0))
            if self.listener is not None:
                if self.launchers or self.children:
                    idle_since = time.monotonic()
                elif time.monotonic() - idle_since > self.idle_s or not self.still_listening():
                    return

    def _timeout(self) -> float | None:
        if self.idle_imports:
            return _IDLE_S
        # A warm host looks at its clock and its socket file now and then.
        return _WARM_CHECK_S if self.listener is not None else None

    def accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        conn.setblocking(True)
        self.launchers[conn.fileno()] = Inbox(conn)
        try:
            self.send({"ready": os.getpid()}, to=conn)
        except OSError:
            self.launchers.pop(conn.fileno()).sock.close()

    def refuse(self, why: str) -> None:
        """Before exiting: tell the launcher (or, warm, those already waiting) why."""
        if self.sock is not None:
            self.send({"error": why})
            return
        self.listener.setblocking(False)
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                break
            with conn:
                conn.setblocking(True)
                with contextlib.suppress(OSError):
                    self.send({"error": why}, to=conn)
        self.stop_listening()

    def stop_listening(self) -> None:
        """A warm host's socket file goes with it, unless another host has it now."""
        if self.listener is None:
            return
        if self.still_listening():
            with contextlib.suppress(OSError):
                os.unlink(self.listener.getsockname())
        self.listener.close()

    def still_listening(self) -> bool:
        """Whether the socket file is still this host's: stopping a warm host removes it, and
        a host started in its place binds a new one."""
        try:
            return os.stat(self.listener.getsockname()).st_ino == self.listener_inode
        except OSError:
            return False

    def import_when_idle(self, name: str) -> None:
        """Import one module a later run would import itself, or, for `module:function`, also
        call that function (a warm-up: what the runs would otherwise each build for
        themselves, such as dbt's per-process caches). One that fails is left to the runs
        (which then say why); one that leaves a thread makes the host unable to fork safely,
        so it answers every later request with why (a warm helper's host then forks the run
        itself; a launcher starts it elsewhere)."""
        try:
            entrypoints.load(name)
        except Exception as error:  # noqa: BLE001 - the runs importing it will report it
            print(f"run host: idle import of {name} failed: {error}", file=sys.stderr)
            self.idle_imports.clear()
            return
        if threading.active_count() > 1:
            names = sorted(t.name for t in threading.enumerate())
            self.broken = f"the run host has threads after importing {name}: {names}"
            self.idle_imports.clear()
        gc.freeze()  # what it loaded is shared with the runs, as the code location is

    def read_requests(self, launcher: Inbox) -> bool:
        """Start the runs `launcher` asked for; False once it has closed its end."""
        try:
            if not launcher.receive():
                return False
        except OSError:
            return False
        for request, stdio in launcher.requests():
            try:
                self.start_run(request, to=launcher.sock, stdio=stdio)
            except OSError:  # it went away before the answer: its runs go on
                return False
            finally:
                for fd in stdio:  # the child (or the helper) has its own copies
                    os.close(fd)
        return True

    def start_run(
        self, request: dict, to: socket.socket | None = None, stdio: list[int] = ()
    ) -> None:
        if "entry" in request:
            self.start_entry(request, to, stdio)
            return
        if self.warm is not None and request.get("job") in self.warm_jobs:
            answer = self.warm.forward(request, stdio)
            if answer is not None and "pid" in answer:
                self.send(answer, to)
                return
            if answer is None:  # the helper is gone
                self.warm = None
            # Refused or gone: forked here, the run imports what it needs itself.
        if self.broken:
            self.send({"error": self.broken}, to)
            return
        self._fork(
            lambda: _run_child(self.module, request, stdio),
            to,
            run_id=request["run_id"],
            instance_ref=request["instance_ref"],
        )

    def start_entry(self, request: dict, to: socket.socket | None, stdio: list[int]) -> None:
        """Fork a CLI's entry point (its build: warm_build.py): forked here, not by the warm
        helper, which holds dbt and Great Expectations the build itself never uses."""
        if request["entry"] not in entrypoints.ENTRY_POINTS:
            self.send({"error": f"no entry point {request['entry']!r}"}, to)
            return
        if self.broken or len(stdio) != 4:
            self.send({"error": self.broken or "an entry point comes with four descriptors"}, to)
            return
        self._fork(lambda: _entry_child(request, stdio), to, unreported=True)

    def _fork(self, child_main: Callable[[], None], to: socket.socket | None, **child: Any) -> None:
        """Fork a child that runs `child_main` (which never returns), keep it among the
        children (`child`: its `_Child` fields but the pidfd) and tell `to` which it is."""
        try:
            pid = os.fork()
        except OSError as error:
            self.send({"error": f"fork failed: {error}"}, to)
            return
        if pid == 0:
            self.close_inherited()
            child_main()
        self.children[pid] = _Child(pidfd=os.pidfd_open(pid), **child)
        self.send({"pid": pid, "start": lifeline.start_time(pid)}, to)

    def reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            child = self.children.pop(pid, None)
            if child is None:
                continue
            os.close(child.pidfd)
            if status != 0 and not child.unreported:
                self.report(pid, status, child)

    def report(self, pid: int, status: int, child: _Child) -> None:
        why = f"its process (pid {pid}) {describe_exit(status)} before the run finished"
        try:
            reporter = os.fork()
        except OSError as error:  # the run stays "started" until a build marks it abandoned
            print(f"run host: could not report run {child.run_id}: {error}", file=sys.stderr)
            return
        if reporter == 0:
            self.close_inherited()
            _report_child(child.run_id, child.instance_ref, why)  # never returns
        self.children[reporter] = _Child(
            os.pidfd_open(reporter), child.run_id, child.instance_ref, unreported=True
        )

    def close_inherited(self) -> None:
        """In a child: let go of the launchers' sockets, the warm host's listening one, the
        helper's (the helper ends when the host does, not when the last run it forked does)
        and the other children's pidfds."""
        for launcher in self.launchers.values():
            launcher.sock.close()
            launcher.close_fds()  # sent along with requests not read yet
        if self.listener is not None:
            self.listener.close()
        if self.warm is not None:
            self.warm.sock.close()
        for child in self.children.values():
            os.close(child.pidfd)


class WarmHelper:
    """The host's end of its warm helper (`start_warm_helper`)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._answers = Inbox(sock)

    def forward(self, request: dict, stdio: list[int] = ()) -> dict | None:
        """The helper's answer to a run request (it may first finish its imports), or None
        when it is gone."""
        try:
            send_line(self.sock, request, stdio)
            return self._answers.next_line()
        except OSError:
            return None


def start_warm_helper(host: RunHost, imports: list[str]) -> WarmHelper | None:
    """Fork the helper that imports `imports` and then forks the runs the host passes it; it
    ends when the host's end of their socket closes. None if it cannot be forked."""
    mine, theirs = socket.socketpair()
    try:
        pid = os.fork()
    except OSError as error:
        print(f"run host: no warm helper ({error}); imports when idle", file=sys.stderr)
        mine.close()
        theirs.close()
        return None
    if pid == 0:
        code = 1
        try:
            mine.close()
            for launcher in host.launchers.values():
                launcher.sock.close()
            if host.listener is not None:
                host.listener.close()
            helper = RunHost(theirs, host.module)
            for name in imports:
                if helper.broken:
                    break
                helper.import_when_idle(name)
            helper.serve()
            code = 0
        except BaseException:  # noqa: BLE001 - the helper must end here whatever happened
            traceback.print_exc()
        finally:
            _exit(code)
    theirs.close()
    return WarmHelper(mine)


def describe_exit(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = str(number)
        return f"was killed by signal {name}"
    return f"exited with code {os.waitstatus_to_exitcode(status)}"


def _exit(code: int) -> None:
    """Leave a forked child without running the host's exit handlers twice."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def _fresh_process_state(env: dict[str, str], cwd: str, stdio: list[int] = ()) -> None:
    """What a spawned run process would start with: the launcher's environment, working
    directory, stdout and stderr (when it sent them), default signal handlers, random
    generators seeded from the OS rather than copies of the host's."""
    if stdio:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        for fd, target in zip(stdio, (1, 2), strict=False):
            os.dup2(fd, target)
            os.close(fd)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    random.seed()
    numpy = sys.modules.get("numpy")
    if numpy is not None:
        numpy.random.seed()


def _run_child(module: str, request: dict, stdio: list[int]) -> None:
    code = 1
    try:
        _fresh_process_state(request["env"], request["cwd"], stdio)
        # Re-executes the code location: its settings come from ENVFOUNDRY_* and the home's
        # build-settings.json at import, and its lifeline thread did not survive the fork.
        importlib.reload(sys.modules[module])
        execute_run(request["run_id"], request["instance_ref"])
        code = 0
    except BaseException:  # noqa: BLE001 - the child must end here whatever happened
        traceback.print_exc()
    finally:
        _exit(code)


def _entry_child(request: dict, stdio: list[int]) -> None:
    code = 1
    try:
        _fresh_process_state(request["env"], request["cwd"], stdio[:2])
        code = warm_build.serve(request["entry"], request["request"], *stdio[2:])
    except BaseException:  # noqa: BLE001 - the child must end here whatever happened
        traceback.print_exc()
    finally:
        _exit(code)


def execute_run(run_id: str, instance_ref: str) -> None:
    """As `dagster api execute_run` (dagster/_cli/api.py) executes a run."""
    import dagster as dg

    from orchestration.fastrun import dagster_internals as internals

    ref = dg.deserialize_value(instance_ref, internals.InstanceRef)
    with internals.capture_interrupts(), dg.DagsterInstance.from_ref(ref) as instance:
        internals.execute_run_command_body(
            run_id, instance, lambda _event: None, set_exit_code_on_failure=False
        )


def _report_child(run_id: str, instance_ref: str, why: str) -> None:
    code = 1
    try:
        report_unfinished(run_id, instance_ref, why)
        code = 0
    except BaseException:  # noqa: BLE001
        traceback.print_exc()
    finally:
        _exit(code)


def report_unfinished(run_id: str, instance_ref: str, why: str) -> None:
    """Mark a run whose process ended early failed (canceled, if a cancel was asked)."""
    import dagster as dg

    from orchestration.fastrun.dagster_internals import InstanceRef

    ref = dg.deserialize_value(instance_ref, InstanceRef)
    with dg.DagsterInstance.from_ref(ref) as instance:
        run = instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return
        if run.status == dg.DagsterRunStatus.CANCELING:
            instance.report_run_canceled(run, message=f"Run canceled: {why}.")
        else:
            instance.report_run_failed(run, message=f"Run failed: {why}.")


# The collector's first generation is examined after this many allocations net of frees
# (CPython: 700). A run allocates millions of short-lived objects (parsed artifacts, models,
# sandbox messages); at 700 the collector took about a fifth of the stages' CPU on
# full-profile environments. Collection order never changes what a run makes.
_GC_GEN0_THRESHOLD = 50_000


def tune_gc() -> None:
    """Collect rarely, and never examine what is already loaded (the imported code location,
    shared with every forked run: `gc.freeze` also spares those pages from copy-on-write)."""
    gc.freeze()
    gc.set_threshold(_GC_GEN0_THRESHOLD, 20, 100)


def _preload(module: str, working_directory: str) -> None:
    """Everything a run imports anyway, imported once here."""
    if working_directory and working_directory not in sys.path:
        sys.path.insert(0, working_directory)
    # The run's execution and the default instance's storage.
    import orchestration.fastrun.dagster_internals  # noqa: F401

    for target in entrypoints.RUN_PRELOADS:
        entrypoints.load(target)
    importlib.import_module(module)


def main(argv: list[str] | None = None) -> None:
    """`FD MODULE WORKING_DIRECTORY`: a host for the launcher at the other end of FD.
    `--listen PATH --idle SECONDS MODULE WORKING_DIRECTORY`: a warm host (see the module's
    docstring), listening on the Unix socket PATH."""
    args = list(argv or sys.argv[1:])
    if args[0] == "--listen":
        path, idle, module, working_directory = args[1], float(args[3]), args[4], args[5]
        host = RunHost(None, module, idle_s=idle)
        # Bound before the imports: launchers may connect at once and wait for the greeting.
        host.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        host.listener.bind(path)
        host.listener.listen(16)
        host.listener_inode = os.stat(path).st_ino
    else:
        fd, module, working_directory = args
        host = RunHost(socket.socket(fileno=int(fd)), module)
    try:
        _preload(module, working_directory)
        if host.listener is not None:  # a warm host: CLI builds ask it for their work too
            for target in entrypoints.ENTRY_PRELOADS:
                entrypoints.load(target)
    except BaseException as error:  # noqa: BLE001 - said to the launcher, which falls back
        lines = traceback.format_exception_only(type(error), error)
        host.refuse(f"the run host could not import {module}: {lines[-1].strip()}")
        raise SystemExit(1) from error
    if threading.active_count() > 1:  # a fork would copy a thread's locks, not the thread
        names = sorted(t.name for t in threading.enumerate())
        host.refuse(f"the run host has threads after importing {module}: {names}")
        raise SystemExit(1)
    # A terminal's Ctrl-C reaches the whole process group; the runs decide for themselves.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    location = sys.modules[module]
    warm_imports = list(getattr(location, "RUN_HOST_WARM_IMPORTS", ()))
    host.warm_jobs = frozenset(getattr(location, "RUN_HOST_WARM_JOBS", ()))
    tune_gc()
    if warm_imports and host.warm_jobs:
        host.warm = start_warm_helper(host, warm_imports)
    if host.warm is None:
        host.idle_imports = warm_imports
    if host.sock is not None:
        host.send({"ready": os.getpid()})
    try:
        host.serve()
    finally:
        host.stop_listening()
