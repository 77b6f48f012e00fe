"""dbt run in a child forked from the publish run, behind the subprocess interface
dagster-dbt reads.

dagster-dbt starts `dbt` as a subprocess and reads its JSON log lines from its stdout. That
subprocess is a fresh interpreter: it imports dbt and loads the project before its first
node, 5–6 s of a publish on the 2-core machine, in every build and every one-topic rebuild.
A publish run forked from the run host (orchestration/fastrun/runhost.py) already has dbt imported,
the project's parsed manifest loaded (`assets.dbt.ensure_manifest` parses it once per change
of its files) and dbt's per-process caches built (`assets.dbt.warm_up`). So the run forks,
and the child runs dbt on that manifest (it parses nothing) and writes each event it fires,
as the JSON line the CLI would have printed, into the pipe the run reads as dbt's stdout:
everything dagster-dbt does with them (materializations, asset checks, errors) stays as it is.

A child rather than a thread of the run: it has a GIL of its own, so dbt's next node does not
wait while Dagster stores the last one's events (the dbt step of a one-topic rebuild: 9.3 s
in a thread, 8.4 s forked, the mean of four each), and it takes signals: an interrupted run
(terminated from the UI) stops dbt with SIGINT, as dagster-dbt intends. A build killed with
SIGKILL takes it along: the child dies with the process that forked it (PR_SET_PDEATHSIG), as
the subprocess did through `setpriv --pdeathsig`.

The run has threads when it forks (its lifeline watcher, DuckDB's workers). The child is safe
all the same because it only runs dbt: it needs no lock another thread may have held (Python
re-creates its import and logging locks in a child), frees nothing it inherited (`gc.freeze`
first: a parent's DuckDB connection collected in the child would wait for worker threads the
child does not have), opens only its own database, and leaves through `os._exit`.
"""

from __future__ import annotations

import contextlib
import ctypes
import gc
import os
import signal
import subprocess
import threading
import time
import traceback
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

# What dagster-dbt passes its dbt subprocess through the environment, as the options they are
# (in process, dbt reads this process's environment, which must not change under other steps).
_ENV_OPTIONS = {
    "DBT_PROJECT_DIR": "--project-dir",
    "DBT_PROFILES_DIR": "--profiles-dir",
    "DBT_TARGET_PATH": "--target-path",
    "DBT_LOG_PATH": "--log-path",
    "DBT_INDIRECT_SELECTION": "--indirect-selection",
}
# dbt's exit codes: 0 success, 1 a node failed, 2 dbt itself failed.
_EXIT_SUCCESS, _EXIT_FAILURE, _EXIT_ERROR = 0, 1, 2
_PR_SET_PDEATHSIG = 1  # linux/prctl.h
# How often `DbtFork.wait` with a timeout looks whether the child has ended.
_WAIT_POLL_S = 0.05


def invocation_args(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """dbt's arguments (without the executable) for what dagster-dbt asked of its subprocess.

    Every event reaches us through a callback (`invoke`), which writes dbt.log itself, so
    dbt's own loggers are switched off.
    """
    args = list(argv[1:])
    for variable, option in _ENV_OPTIONS.items():
        if env.get(variable) and option not in args:
            args += [option, env[variable]]
    return [*args, "--log-level", "none", "--log-level-file", "none"]


def log_file(args: Sequence[str]) -> Path | None:
    """Where dbt would write its file log for these arguments: `--log-path`/dbt.log."""
    if "--log-path" not in args:
        return None
    return Path(args[list(args).index("--log-path") + 1]) / "dbt.log"


class DbtLog:
    """dbt.log as dbt's own file logger writes it (every event, debug level, as a JSON line
    with secrets scrubbed), but written by the event callback. dbt's logger goes through
    Python's logging, a rotating handler that looks at the file twice per line and a lock the
    dbt threads queue on: 28% of a publish's dbt step on the 2-core machine (py-spy)."""

    def __init__(self, path: Path | None) -> None:
        from dbt_common.exceptions.base import env_secrets

        self._secrets = env_secrets()  # read once: dbt reads the whole environment per line
        self._lock = threading.Lock()
        self._file = None
        if path is not None:
            path.parent.mkdir(parents=True, exist_ok=True)
            self._file = open(path, "a", encoding="utf-8")  # noqa: SIM115 - closed in close()

    def line(self, message: Any) -> str:
        """The event's JSON line, written to the log."""
        from dbt_common.events.functions import msg_to_json
        from dbt_common.exceptions.base import scrub_secrets

        text = msg_to_json(message)
        if self._secrets:
            text = scrub_secrets(text, self._secrets)
        with self._lock:
            if self._file is not None:
                self._file.write(text + "\n")
        return text

    def close(self) -> None:
        # dbt keeps the invocation's callbacks until its next one: events fired in between
        # (rare, and nobody's to read) are not written, rather than failing whoever fired them.
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


def invoke(args: list[str], manifest: Any, emit: Callable[[bytes], None]) -> int:
    """Run dbt with `args` on `manifest`, in this process; every event of info level or above
    goes to `emit` as the JSON line dbt's CLI prints (dbt.log gets them all). dbt's exit
    code."""
    from dbt.cli.main import dbtRunner

    log = DbtLog(log_file(args))

    def forward(message: Any) -> None:
        line = log.line(message)
        # The CLI's stdout log is at info level: debug events go to dbt.log only.
        if message.info.level != "debug":
            emit(line.encode())

    code = _EXIT_ERROR
    try:
        result = dbtRunner(manifest=manifest, callbacks=[forward]).invoke(args)
        if result.exception is not None:
            emit(f"dbt failed: {result.exception!r}".encode())
        elif result.success:
            code = _EXIT_SUCCESS
        else:
            code = _EXIT_FAILURE
    except BaseException:  # dbt's own failure, said where the CLI would print it
        emit(traceback.format_exc().encode())
    finally:
        release_warehouse()
        log.close()
    return code


class DbtFork:
    """dbt invoked in a child forked from this process (the module docstring says why and why
    it is safe), shaped as the `subprocess.Popen` dagster-dbt's DbtCliInvocation reads:
    `args`, `stdout` (the child's event lines), `wait`, `returncode` and `send_signal`: all
    dagster-dbt 0.29 uses of it."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], manifest: Any) -> None:
        self.args = list(argv)
        self.returncode: int | None = None
        args = invocation_args(argv, env)
        read, write = os.pipe()
        parent = os.getpid()
        self.pid = os.fork()
        if self.pid == 0:
            os.close(read)
            _child(write, parent, args, manifest)
        os.close(write)
        self.stdout = os.fdopen(read, "rb")

    def wait(self, timeout: float | None = None) -> int | None:
        deadline = None if timeout is None else time.monotonic() + timeout
        while self.returncode is None:
            pid, status = os.waitpid(self.pid, 0 if deadline is None else os.WNOHANG)
            if pid:
                self.returncode = os.waitstatus_to_exitcode(status)
            elif time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(self.args, timeout)
            else:
                time.sleep(_WAIT_POLL_S)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        if self.returncode is None:
            os.kill(self.pid, sig)


def _child(write: int, parent: int, args: list[str], manifest: Any) -> None:
    """The forked child's whole life: dbt, its events into `write`, then `os._exit`."""
    code = _EXIT_ERROR
    try:
        gc.freeze()
        _die_with(parent)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        out = os.fdopen(write, "wb")
        lock = threading.Lock()  # dbt's threads fire events at once

        def emit(line: bytes) -> None:
            with lock:
                if out.closed:
                    return
                try:
                    out.write(line.rstrip(b"\n") + b"\n")
                    out.flush()
                except BrokenPipeError:
                    # The run stopped reading (dagster-dbt closes the pipe before it sends
                    # SIGINT): dbt goes on to its end or its interruption, into dbt.log only.
                    out.close()

        code = invoke(args, manifest, emit)
        with contextlib.suppress(BrokenPipeError):
            out.close()
    except BaseException:  # noqa: BLE001 - the child must end here whatever happened
        with contextlib.suppress(OSError):
            os.write(write, traceback.format_exc().encode())
    finally:
        os._exit(code)


def _die_with(parent: int) -> None:
    """SIGKILL this process when `parent` ends (it may have ended already). Strictly, when
    the thread that forked it ends: the run's steps, dbt's among them, run in its main
    thread."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_PDEATHSIG) failed")
    if os.getppid() != parent:
        os._exit(_EXIT_ERROR)


def release_warehouse() -> None:
    """Close the DuckDB database dbt-duckdb keeps open for its process after the invocation:
    the run's next steps open the warehouse themselves (some read-only), which DuckDB refuses
    while this process holds it with another configuration."""
    from dbt.adapters.duckdb.connections import DuckDBConnectionManager

    with DuckDBConnectionManager._LOCK:
        environment = DuckDBConnectionManager._ENV
        DuckDBConnectionManager._ENV = None
    if environment is not None:
        environment.close()
