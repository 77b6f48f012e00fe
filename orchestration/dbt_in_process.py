"""dbt run in the publish run's own process, behind the subprocess interface dagster-dbt reads.

dagster-dbt starts `dbt` as a subprocess and reads its JSON log lines from its stdout. That
subprocess is a fresh interpreter: it imports dbt and loads the project before its first
node, 5–6 s of a publish on the 2-core machine, in every build and every one-topic rebuild.
A publish run forked from the run host (orchestration/runhost.py) already has dbt imported,
and the project was parsed once per change of its files (`assets.dbt.ensure_manifest`). So
here dbt runs in a thread of the run's process, handed that parsed manifest (it parses
nothing), and each event it fires becomes the JSON line its CLI would have printed: everything
dagster-dbt does with them (materializations, asset checks, errors) stays as it is.

A build killed with SIGKILL takes dbt with it, as the subprocess did through `setpriv
--pdeathsig`: it is a thread of the killed process. An interrupted run (terminated from the
UI) cannot stop a thread; its process ends right after, and the dataset dbt was writing is a
staged one, which is never published (synthesis/export/datasets.py).
"""

from __future__ import annotations

import queue
import signal
import threading
import traceback
from collections.abc import Iterator, Mapping, Sequence
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


def invocation_args(argv: Sequence[str], env: Mapping[str, str]) -> list[str]:
    """dbt's arguments (without the executable) for what dagster-dbt asked of its subprocess.

    Every event reaches us through a callback (`DbtThread`), which writes dbt.log itself, so
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
        if self._file is not None:
            with self._lock:
                self._file.write(text + "\n")
        return text

    def close(self) -> None:
        if self._file is not None:
            self._file.close()


class _Lines:
    """The dbt "process"'s stdout: its events as JSON lines, until dbt returns."""

    def __init__(self, lines: queue.SimpleQueue) -> None:
        self._lines = lines
        self.closed = False

    def __iter__(self) -> Iterator[bytes]:
        while not self.closed:
            line = self._lines.get()
            if line is None:
                self.closed = True
                return
            yield line

    def __enter__(self) -> _Lines:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.closed = True


class DbtThread:
    """dbt invoked in a thread of this process, shaped as the `subprocess.Popen` dagster-dbt's
    DbtCliInvocation reads: `args`, `stdout`, `wait`, `returncode`, `send_signal`."""

    def __init__(self, argv: Sequence[str], env: Mapping[str, str], manifest: Any) -> None:
        self.args = list(argv)
        self.returncode: int | None = None
        self._lines: queue.SimpleQueue = queue.SimpleQueue()
        self.stdout = _Lines(self._lines)
        self._thread = threading.Thread(
            target=self._invoke,
            args=(invocation_args(argv, env), manifest),
            name="dbt",
            daemon=True,  # an interrupted run's process must not wait for it to end
        )
        self._thread.start()

    def _invoke(self, args: list[str], manifest: Any) -> None:
        from dbt.cli.main import dbtRunner

        log = DbtLog(log_file(args))

        def forward(message: Any) -> None:
            line = log.line(message)
            # The CLI's stdout log is at info level: debug events go to dbt.log only.
            if message.info.level != "debug":
                self._lines.put(line.encode())

        code = _EXIT_ERROR
        try:
            result = dbtRunner(manifest=manifest, callbacks=[forward]).invoke(args)
            if result.exception is not None:
                self._lines.put(f"dbt failed: {result.exception!r}".encode())
            elif result.success:
                code = _EXIT_SUCCESS
            else:
                code = _EXIT_FAILURE
        except BaseException:  # dbt's own failure, said where the CLI would print it
            self._lines.put(traceback.format_exc().encode())
        finally:
            release_warehouse()
            log.close()
            self.returncode = code
            self._lines.put(None)

    def wait(self, timeout: float | None = None) -> int | None:
        self._thread.join(timeout)
        return self.returncode

    def send_signal(self, sig: int) -> None:
        """dagster-dbt forwards an interrupt here; a thread cannot take one (see the module
        docstring), so the run ends without waiting for dbt."""
        if sig not in (signal.SIGINT, signal.SIGTERM):
            raise ValueError(f"dbt runs in process here and takes no signal {sig}")


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
