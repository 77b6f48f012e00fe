"""A run launcher that forks each run from a run host which has the code location loaded.

Dagster's default launcher asks the code server to start a run, and the code server spawns a
fresh interpreter that imports Dagster and the code location again: ~3.5 s of CPU per run, 170
times in a full build. Here the process that launches (the build, the daemon, the webserver)
starts one run host per code origin on its first launch (runhost.py) and asks it to fork a
child per run, which starts in tens of milliseconds. Runs are created, submitted,
queued, listed and terminated as before; if no run host can be had, the run goes to the default
launcher, and the run's log says why.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from orchestration.fastrun import lifeline, runhost
from orchestration.fastrun.dagster_internals import (
    ConfigurableClass,
    ConfigurableClassData,
    JobPythonOrigin,
    LaunchRunContext,
    ModuleCodePointer,
    RunLauncher,
    location_origins_from_yaml_paths,
)
from orchestration.fastrun.wire import Inbox, send_line

PROCESS_TAG = "envfoundry/run_process"  # "pid:start time" of the run's forked process
# Importing the code location takes seconds; on a loaded machine, tens of them.
_READY_TIMEOUT_S = 600.0
_REPLY_TIMEOUT_S = 60.0

log = logging.getLogger(__name__)


class RunHostUnavailable(Exception):
    """No run host for this run: why, in one line."""


class RunHostConnection:
    """Talking to a run host over a connected socket (see runhost.py)."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._answers = Inbox(sock)
        self._lock = threading.Lock()

    @property
    def alive(self) -> bool:
        raise NotImplementedError

    def _ended(self) -> str:
        """Why the host closed its end."""
        raise NotImplementedError

    def _await_ready(self) -> None:
        self._sock.settimeout(_READY_TIMEOUT_S)
        try:
            ready = self._receive()
        except RunHostUnavailable:
            self.close()
            raise
        if "ready" not in ready:
            self.close()
            raise RunHostUnavailable(ready.get("error", f"unexpected answer {ready}"))
        self._sock.settimeout(_REPLY_TIMEOUT_S)

    def _receive(self) -> dict[str, Any]:
        try:
            answer = self._answers.next_line()
        except OSError as error:  # a timeout included
            raise RunHostUnavailable(f"the run host did not answer: {error}") from error
        if answer is None:
            raise RunHostUnavailable(self._ended())
        return answer

    def start_run(
        self, run_id: str, instance_ref: str, env: Mapping[str, str], job: str = ""
    ) -> str:
        """Fork a child that executes the run: its "pid:start time". The job's name says
        whether the host's warm helper forks it (runhost.py)."""
        request = {
            "run_id": run_id,
            "instance_ref": instance_ref,
            "env": dict(env),
            "cwd": os.getcwd(),  # as a code server started by this process would have it
            "job": job,
            "stdio": 2,  # this process's stdout and stderr, passed along: the run's
        }
        with self._lock:
            try:
                send_line(self._sock, request, (1, 2))
            except OSError as error:
                raise RunHostUnavailable(f"the run host is gone: {error}") from error
            reply = self._receive()
        if "pid" not in reply:
            raise RunHostUnavailable(reply.get("error", f"unexpected answer {reply}"))
        return f"{reply['pid']}:{reply['start']}"

    def close(self) -> None:
        self._sock.close()


class RunHostProcess(RunHostConnection):
    """A run host this process started, and the socket it is talked to over."""

    def __init__(self, executable: str, working_directory: str, module: str):
        mine, theirs = socket.socketpair()
        # The host imports the code location without the build's lifeline (a thread, which a
        # fork would not copy); each child gets the launcher's environment back, and with it
        # the lifeline.
        env = {k: v for k, v in os.environ.items() if k != lifeline.BUILD_PROCESS}
        try:
            self.process = subprocess.Popen(
                runhost.host_command(executable, str(theirs.fileno()), module, working_directory),
                pass_fds=[theirs.fileno()],
                cwd=working_directory or None,
                env=env,
            )  # fmt: skip
        except OSError as error:
            mine.close()
            raise RunHostUnavailable(f"the run host did not start: {error}") from error
        finally:
            theirs.close()
        super().__init__(mine)
        self._await_ready()

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def _ended(self) -> str:
        return f"the run host ended (exit {self.process.wait()})"

    def close(self) -> None:
        """End the host (its running children go on, as runs do when a code server ends)."""
        super().close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


class WarmRunHost(RunHostConnection):
    """A warm run host (warm.py), connected to over its socket file on the first run (it may
    still be importing). It outlives this process; closing only hangs up."""

    def __init__(self, servers: Any):
        """`servers`: the home's warm processes (warm.WarmServers)."""
        self.path, self.pid = servers.host_socket, servers.host_pid
        self.start, self.log = servers.host_start, servers.log
        super().__init__(socket.socket(socket.AF_UNIX, socket.SOCK_STREAM))
        self._connected = False

    @property
    def alive(self) -> bool:
        return lifeline.running(self.pid, self.start)

    def _ended(self) -> str:
        return f"the warm run host (pid {self.pid}) ended; its log: {self.log}"

    def start_run(
        self, run_id: str, instance_ref: str, env: Mapping[str, str], job: str = ""
    ) -> str:
        with self._lock:
            if not self._connected:
                try:
                    self._sock.connect(self.path)
                except OSError as error:
                    raise RunHostUnavailable(f"no warm run host at {self.path}: {error}") from None
                self._await_ready()
                self._connected = True
        return super().start_run(run_id, instance_ref, env, job)


# One run host per code origin in this process, or why there is none (tried once: a host that
# cannot import the code location would cost seconds per run to fail again).
_hosts: dict[tuple[str, str, str], RunHostConnection | str] = {}
_hosts_pid = os.getpid()
_hosts_lock = threading.Lock()


def origin_key(origin: JobPythonOrigin | None) -> tuple[str, str, str]:
    if origin is None:
        raise RunHostUnavailable("the run has no Python origin")
    repository = origin.repository_origin
    pointer = repository.code_pointer
    if not isinstance(pointer, ModuleCodePointer):
        raise RunHostUnavailable(f"a run host loads modules, not {type(pointer).__name__}")
    return repository.executable_path, pointer.working_directory or "", pointer.module


def _forget_the_parents_hosts() -> None:
    """In a forked copy of a launcher (a build the warm run host forked, a run), the hosts
    the parent started or adopted are not this process's. Called with `_hosts_lock` held."""
    global _hosts_pid
    if _hosts_pid != os.getpid():
        _hosts.clear()
        _hosts_pid = os.getpid()


def run_host(key: tuple[str, str, str]) -> RunHostConnection:
    """This process's run host for a code origin, started if it has none (or it ended)."""
    with _hosts_lock:
        _forget_the_parents_hosts()
        host = _hosts.get(key)
        if isinstance(host, str):
            raise RunHostUnavailable(host)
        if host is None or not host.alive:
            try:
                host = _hosts[key] = RunHostProcess(*key)
            except RunHostUnavailable as reason:
                _hosts[key] = str(reason)
                raise
        return host


def module_origins(workspace_file: Path) -> list[tuple[Any, tuple[str, str, str]]]:
    """Each module code location `workspace_file` names, with the key `origin_key` finds in
    its code server's runs (their interpreter and working directory are this process's
    unless the workspace names others)."""
    found = []
    for origin in location_origins_from_yaml_paths([str(workspace_file)]):
        target = getattr(origin, "loadable_target_origin", None)
        if target is None or not target.module_name:
            continue
        key = (
            target.executable_path or sys.executable,
            target.working_directory or os.getcwd(),
            target.module_name,
        )
        found.append((origin, key))
    return found


def prestart_hosts(instance: Any, workspace_file: Path) -> None:
    """Start the run host of each module code location `workspace_file` names, in a thread,
    when the instance forks its runs: the host's imports (seconds) then overlap the code
    server's, which a build starts at the same time, instead of delaying its first run."""
    if not isinstance(instance.run_launcher, ForkingRunLauncher):
        return
    for _, key in module_origins(workspace_file):
        starter = threading.Thread(target=_start_host, args=(key,), name="run-host-start")
        starter.daemon = True
        starter.start()


def _start_host(key: tuple[str, str, str]) -> None:
    # A host that cannot start is remembered with why; the first run says it.
    with contextlib.suppress(RunHostUnavailable):
        run_host(key)


def adopt_host(key: tuple[str, str, str], host: RunHostConnection) -> None:
    """Start this process's runs of code origin `key` from `host` (a warm run host)."""
    with _hosts_lock:
        _forget_the_parents_hosts()  # else the first run would forget `host` with them
        _hosts[key] = host


def forget_host(key: tuple[str, str, str], host: RunHostConnection) -> None:
    with _hosts_lock:
        if _hosts.get(key) is host:
            del _hosts[key]


def stop_run_hosts() -> None:
    """End this process's run hosts (tests; a process's hosts otherwise end with it)."""
    with _hosts_lock:
        hosts = [h for h in _hosts.values() if isinstance(h, RunHostConnection)]
        _hosts.clear()
    for host in hosts:
        host.close()


class ForkingRunLauncher(RunLauncher, ConfigurableClass):
    """Starts each run in a child forked from a run host (see the module's docstring)."""

    def __init__(self, inst_data: ConfigurableClassData | None = None):
        self._inst_data = inst_data
        self._fallback = dg.DefaultRunLauncher()
        self._run_ids: set[str] = set()
        super().__init__()

    @property
    def inst_data(self) -> ConfigurableClassData | None:
        return self._inst_data

    @classmethod
    def config_type(cls) -> dict:
        return {}

    @classmethod
    def from_config_value(
        cls, inst_data: ConfigurableClassData, config_value: Mapping[str, Any]
    ) -> ForkingRunLauncher:
        return cls(inst_data=inst_data)

    def register_instance(self, instance) -> None:
        super().register_instance(instance)
        self._fallback.register_instance(instance)

    def launch_run(self, context: LaunchRunContext) -> None:
        run = context.dagster_run
        try:
            process = self._fork(run.run_id, run.job_code_origin, run.job_name)
        except RunHostUnavailable as reason:
            log.warning("run %s goes to the code server: %s", run.run_id, reason)
            self._instance.report_engine_event(
                f"No run host ({reason}): the code server starts this run.",
                run,
                cls=self.__class__,
            )
            self._fallback.launch_run(context)
            return
        self._instance.add_run_tags(run.run_id, {PROCESS_TAG: process})
        self._run_ids.add(run.run_id)

    def _fork(self, run_id: str, origin: JobPythonOrigin | None, job: str) -> str:
        key = origin_key(origin)
        instance_ref = dg.serialize_value(self._instance.get_ref())
        env = dict(os.environ)
        host = run_host(key)
        try:
            return host.start_run(run_id, instance_ref, env, job)
        except RunHostUnavailable:
            # The host ended since its last run: one fresh host, then the fallback.
            forget_host(key, host)
            return run_host(key).start_run(run_id, instance_ref, env, job)

    def terminate(self, run_id: str) -> bool:
        """Interrupt the run's process (SIGINT, as the code server's termination thread does):
        Dagster ends the run CANCELED."""
        run = self._instance.get_run_by_id(run_id)
        if run is None or run.is_finished:
            return False
        process = run.tags.get(PROCESS_TAG)
        if not process:
            return self._fallback.terminate(run_id)
        self._instance.report_run_canceling(run)
        pid_text, _, start = process.partition(":")
        pid = int(pid_text)
        if not lifeline.running(pid, start):
            self._instance.report_engine_event(
                f"The run's process (pid {pid}) is gone: nothing to interrupt.",
                run,
                cls=self.__class__,
            )
            return False
        os.kill(pid, signal.SIGINT)
        return True

    def join(self, timeout: float = 30) -> None:
        self._fallback.join(timeout)
        deadline = time.monotonic() + timeout
        while True:
            active = [
                run_id
                for run_id in self._run_ids
                if (run := self._instance.get_run_by_id(run_id)) and not run.is_finished
            ]
            if not active:
                return
            if time.monotonic() > deadline:
                raise TimeoutError(f"runs still going after {timeout} s: {active}")
            time.sleep(0.05)
