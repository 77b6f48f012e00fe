"""Warm builds: a build's code server and run host stay up for the next build of its home.

A build starts a code server (the code location, for run snapshots and plans) and a run host
(which forks the runs). Both import Dagster, dbt and the code location: about 8 s of the
2-core machine before the first run, in a one-topic rebuild of ~30 s. So a CLI build leaves
them running for `ENVFOUNDRY_WARM_S` seconds (600 by default; 0: never) and the next build of
the same home adopts them, if it would have started the same ones: the same interpreter,
working directory, project code, settings and ENVFOUNDRY_*/OPENAI_* variables (`warm_key`).
Any difference stops them and starts new ones; so does `envfoundry stop`.

They stay the build's servants, not a second build: the CLI remains the build process (its
lock, its Ctrl-C, its lifeline), even when the run host forks the build's own work for it, so
that the CLI need not import Dagster (warm_build.py). Every run forked for a build gets that
build's environment and with it the lifeline (lifeline.py), so a killed build still takes its
runs, dbt and sandboxes with it; the warm processes themselves carry no lifeline and end by
themselves: the code server when no build has sent a heartbeat for its idle time, the run host
after as long with no launcher connected and no run of its own (runhost.py).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from orchestration.fastrun import lifeline
from orchestration.fastrun.lifeline import start_time
from orchestration.fastrun.runhost import host_command
from synthesis import codec
from synthesis.hashing import content_hash

IDLE_VARIABLE = "ENVFOUNDRY_WARM_S"
DEFAULT_IDLE_S = 600
RECORD = "warm.json"  # in DAGSTER_HOME
# Variables the code location reads when it loads (settings, executor, model endpoint).
_KEY_PREFIXES = ("ENVFOUNDRY_", "OPENAI_")
_NOT_KEYS = {lifeline.BUILD_PROCESS, IDLE_VARIABLE}
_READY_TIMEOUT_S = 600.0  # imports take seconds; on a loaded machine, tens of them
_STOP_TIMEOUT_S = 10.0
_ADOPT_TIMEOUT_S = 10.0  # a warm code server answers at once, unless something is wrong
_started: list[subprocess.Popen] = []


def idle_seconds(environ: Mapping[str, str] | None = None) -> int:
    """How long the warm processes of a build wait for the next one (0: not kept)."""
    raw = (os.environ if environ is None else environ).get(IDLE_VARIABLE, "").strip()
    if not raw:
        return DEFAULT_IDLE_S
    try:
        value = int(raw)
    except ValueError:
        value = -1
    if value < 0:
        raise ValueError(f"{IDLE_VARIABLE} must be 0 (off) or a whole number of seconds: {raw!r}")
    return value


@dataclass(frozen=True)
class WarmServers:
    """A home's warm code server and run host, as `warm.json` records them."""

    key: str
    build_id: str  # the build that started them
    dagster_home: str  # whose they are: a copied home's record names another home's
    directory: str  # their sockets
    code_pid: int
    code_start: str
    host_pid: int
    host_start: str
    location: str  # the code location's name
    log: str
    # The code location's module: with this process's interpreter and working directory, what
    # a CLI build checks the key against before it asks the run host to run the build.
    module: str = ""

    @property
    def code_socket(self) -> str:
        return str(Path(self.directory) / "code.sock")

    @property
    def host_socket(self) -> str:
        return str(Path(self.directory) / "run-host.sock")

    def alive(self) -> bool:
        code, host = (self.code_pid, self.code_start), (self.host_pid, self.host_start)
        return lifeline.running(*code) and lifeline.running(*host)


def warm_key(values: Mapping[str, Any], code: str, module_key: tuple[str, str, str]) -> str:
    """What the warm processes were started with: interpreter, working directory and module
    (`module_key`), the project's code (`code`, a hash), the build's settings (`values`) and
    the variables the code location reads."""
    variables = {
        k: v
        for k, v in sorted(os.environ.items())
        if k.startswith(_KEY_PREFIXES) and k not in _NOT_KEYS
    }
    return content_hash(
        {
            "origin": list(module_key),
            "code": code,
            "settings": dict(values),
            "variables": variables,
            "dagster_home": os.environ.get("DAGSTER_HOME", ""),
        }
    )


def read(dagster_home: Path) -> WarmServers | None:
    try:
        return WarmServers(**codec.read_json(dagster_home / RECORD))
    except (OSError, ValueError, TypeError):
        return None


def stop(dagster_home: Path) -> WarmServers | None:
    """End the home's warm processes, if any are running: the ones stopped. A record copied
    with the home from another is only forgotten: its processes are the other home's."""
    record = read(dagster_home)
    (dagster_home / RECORD).unlink(missing_ok=True)
    if record is None or Path(record.dagster_home) != dagster_home.resolve():
        return None
    stopped = False
    for pid, start in ((record.code_pid, record.code_start), (record.host_pid, record.host_start)):
        if lifeline.running(pid, start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGTERM)
            stopped = True
    deadline = time.monotonic() + _STOP_TIMEOUT_S
    for pid, start in ((record.code_pid, record.code_start), (record.host_pid, record.host_start)):
        while lifeline.running(pid, start) and time.monotonic() < deadline:
            time.sleep(0.05)
        if lifeline.running(pid, start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    shutil.rmtree(record.directory, ignore_errors=True)
    return record if stopped else None


def memory_held(servers: WarmServers) -> int:
    """Bytes of memory the warm processes hold while they wait: the proportional set size
    (shared pages split between the processes sharing them) of the code server, the run host
    and whatever of theirs is still running, so that nothing is counted twice."""
    roots = {servers.code_pid, servers.host_pid}
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
    held, frontier = set(), [pid for pid in roots if pid in parents]
    while frontier:
        pid = frontier.pop()
        held.add(pid)
        frontier += [child for child, parent in parents.items() if parent == pid]
    return sum(_proportional_size(pid) for pid in held)


def _proportional_size(pid: int) -> int:
    with contextlib.suppress(OSError, ValueError):
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1]) * 1024
    with contextlib.suppress(OSError, ValueError):  # a kernel without smaps_rollup
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def start(
    dagster_home: Path,
    key: str,
    build_id: str,
    origin: Any,
    instance_ref: str,
    idle_s: int,
    log: Path,
) -> WarmServers:
    """Start a code server for the workspace's code location `origin` and a run host for its
    module, both detached from this build (own session, no lifeline), and record them. They
    load at the same time; `code_server_ready` and the run host's greeting say when."""
    target = origin.loadable_target_origin
    # Only this user may connect (mkdtemp makes it 0700): the run host forks whatever run a
    # connected launcher asks for.
    directory = Path(tempfile.mkdtemp(prefix="envfoundry-warm-"))
    env = {k: v for k, v in os.environ.items() if k != lifeline.BUILD_PROCESS}
    log.parent.mkdir(parents=True, exist_ok=True)
    working_directory = target.working_directory or os.getcwd()
    with open(log, "ab") as out, contextlib.ExitStack() as undo:
        code = subprocess.Popen(
            [
                target.executable_path or sys.executable, "-m", "dagster", "api", "grpc",
                "--socket", str(directory / "code.sock"),
                "--heartbeat", "--heartbeat-timeout", str(idle_s),
                # As a workspace's own server: a code location that fails to load is said
                # by the build as such, not as a server that never answered.
                "--lazy-load-user-code",
                "--log-level", "warning",
                "--location-name", origin.location_name,
                "--instance-ref", instance_ref,
                *target.get_cli_args(),
            ],
            cwd=working_directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,  # a Ctrl-C at the terminal is the build's, not theirs
        )  # fmt: skip
        undo.callback(code.kill)  # if the host cannot start, no server is left alone
        host = subprocess.Popen(
            host_command(
                target.executable_path or sys.executable,
                "--listen", str(directory / "run-host.sock"), "--idle", str(idle_s),
                target.module_name, working_directory,
            ),
            cwd=working_directory,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            start_new_session=True,
        )  # fmt: skip
        undo.pop_all()
    servers = WarmServers(
        key=key,
        build_id=build_id,
        dagster_home=str(dagster_home.resolve()),
        directory=str(directory),
        code_pid=code.pid,
        code_start=start_time(code.pid),
        host_pid=host.pid,
        host_start=start_time(host.pid),
        location=origin.location_name,
        log=str(log),
        module=target.module_name,
    )
    codec.write_json(dagster_home / RECORD, asdict(servers))
    _started.extend((code, host))  # this process never waits for them; init reaps them
    return servers


@dataclass(frozen=True)
class KeepWarm:
    """A build's wish to reuse a home's warm processes, or leave its own for the next."""

    build_id: str
    idle_s: int
    values: Mapping[str, Any]  # the build's settings (assets/_settings.py)
    # The project's code the warm processes load, hashed (last_build.loaded_code).
    code: str


def adoptable(dagster_home: Path, keep: KeepWarm) -> WarmServers | None:
    """The home's warm processes, if a build with `keep` would adopt them as they are (see
    `servers_for`), found without importing Dagster: their code location is a module loaded
    by this interpreter from this working directory, as the project's workspace says."""
    current = read(dagster_home)
    if current is None or not current.module:
        return None
    if Path(current.dagster_home) != dagster_home.resolve():
        return None
    key = warm_key(keep.values, keep.code, (sys.executable, os.getcwd(), current.module))
    return current if current.key == key and current.alive() else None


def servers_for(
    dagster_home: Path, keep: KeepWarm, origin: Any, module_key: tuple, instance_ref: str
) -> tuple[WarmServers, str]:
    """The home's warm processes for this build: the running ones if they were started with
    the same key, else new ones (any others stopped). With what was done, in words."""
    key = warm_key(keep.values, keep.code, module_key)
    current = read(dagster_home)
    if current is not None and current.key == key and current.alive():
        try:
            code_server_ready(current, timeout_s=_ADOPT_TIMEOUT_S)
            return current, (
                f"adopted from build {current.build_id}; kept warm {keep.idle_s} s more for the "
                "next build"
            )
        except (RuntimeError, TimeoutError):
            pass  # ending as we came, or stuck: replaced like any other
    why = ""
    if current is not None and stop(dagster_home) is not None:
        why = (
            " (the warm ones were of other code or settings)"
            if current.key != key
            else " (the warm ones did not answer)"
        )
    log = dagster_home / "warm-servers.log"  # beside their record; logs/ is the builds'
    servers = start(dagster_home, key, keep.build_id, origin, instance_ref, keep.idle_s, log)
    code_server_ready(servers)
    return servers, (
        f"started{why}; kept warm {keep.idle_s} s for the next build (`envfoundry stop` ends "
        "them; `--no-warm` or ENVFOUNDRY_WARM_S=0 keeps none)"
    )


def code_server_ready(servers: WarmServers, timeout_s: float = _READY_TIMEOUT_S) -> None:
    """Wait until the code server answers (it has loaded the code location)."""
    from orchestration.fastrun.dagster_internals import DagsterGrpcClient

    client = DagsterGrpcClient(socket=servers.code_socket)
    deadline = time.monotonic() + timeout_s
    while True:
        if not lifeline.running(servers.code_pid, servers.code_start):
            raise RuntimeError(f"the code server ended before it answered; its log: {servers.log}")
        if Path(servers.code_socket).exists():
            with contextlib.suppress(Exception):
                client.ping("")
                return
        if time.monotonic() > deadline:
            raise TimeoutError(f"the code server did not answer in {timeout_s:.0f} s")
        time.sleep(0.05)


@contextlib.contextmanager
def heartbeats(servers: WarmServers, every_s: float) -> Iterator[None]:
    """Tell the code server a build is using it, now, every `every_s` and at the end: it ends
    `idle_s` after the last one."""
    from orchestration.fastrun.dagster_internals import DagsterGrpcClient

    client = DagsterGrpcClient(socket=servers.code_socket)
    done = threading.Event()

    def beat() -> None:
        while True:
            with contextlib.suppress(Exception):  # a missed beat is retried; it has minutes
                client.heartbeat("envfoundry build")
            if done.wait(every_s):
                return

    thread = threading.Thread(target=beat, name="warm-heartbeat", daemon=True)
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join(timeout=5)
        with contextlib.suppress(Exception):
            client.heartbeat("envfoundry build")
