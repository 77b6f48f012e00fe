"""`envfoundry ui`: the Dagster UI on a home's instance, where its builds' runs are.

The webserver serves the code location of `workspace.yaml` with the settings of the home's
last build (BuildSettings.from_env reads them), so a run launched from the UI does the same
work as the CLI's. With the daemon (the default), runs launched from the UI leave the queue
and schedules tick; `--no-daemon` serves the webserver alone (enough to browse and for tests).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from orchestration import instance
from orchestration.runs import WORKSPACE_FILE
from synthesis import codec


def command(home: Path, port: int, host: str, daemon: bool) -> tuple[list[str], dict[str, str]]:
    """The command line and environment that serve `home` (exec'd by `ui_main`)."""
    bin_dir = Path(sys.executable).parent
    program = "dagster" if daemon else "dagster-webserver"
    executable = shutil.which(program, path=str(bin_dir)) or shutil.which(program) or program
    args = ["dev"] if daemon else []
    argv = [executable, *args, "-w", str(WORKSPACE_FILE), "-h", host, "-p", str(port)]
    env = {
        **os.environ,
        "ENVFOUNDRY_HOME": str(home),
        "DAGSTER_HOME": str(instance.prepare(home)),
        "DO_NOT_TRACK": "1",
    }
    return argv, env


def ui_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="envfoundry ui",
        description="Serve the Dagster UI on a home's instance (its builds' runs, assets, "
        "checks and lineage).",
    )
    parser.add_argument(
        "--home",
        type=Path,
        default=Path(os.environ.get("ENVFOUNDRY_HOME", "var")),
        help="the home a build wrote (default: $ENVFOUNDRY_HOME or ./var)",
    )
    parser.add_argument("--port", type=int, default=int(os.environ.get("PORT", "3000")))
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument(
        "--no-daemon",
        dest="daemon",
        action="store_false",
        help="the webserver alone: browse, but runs launched from the UI stay queued",
    )
    options = parser.parse_args(argv)
    if not 0 < options.port < 65536:
        parser.error(f"--port {options.port} is not a port number (1-65535)")
    home = options.home.resolve()
    if home.exists() and not home.is_dir():
        parser.error(f"--home {home} is a file, not a folder")
    argv, env = command(home, options.port, options.host, options.daemon)
    sys.stdout.write(f"EnvFoundry UI on http://{options.host}:{options.port} (home {home})\n")
    sys.stdout.flush()
    stoppable_by_sigterm()
    os.execvpe(argv[0], argv, env)
    return 0  # not reached: exec replaces this process


def stoppable_by_sigterm() -> None:
    """Let the UI's processes stop on SIGTERM, however this one was started.

    `dagster dev` stops its webserver and daemon on SIGTERM by handling it as it handles
    SIGINT, whatever that handler is. A shell starts a background job (`make ui &`) with SIGINT
    ignored, and an ignored disposition survives exec: Python then never installs its
    KeyboardInterrupt handler, so `dagster dev` ignored SIGTERM too (make forwards it, and the
    7 processes outlived it). Both signals get their default back before the exec."""
    for number in (signal.SIGINT, signal.SIGTERM):
        signal.signal(number, signal.SIG_DFL)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def served(home: Path, *, daemon: bool = False, log: Path | None = None) -> Iterator[str]:
    """The UI on `home` in a child process (on a free port); yields its base URL once its code
    location has loaded, and stops it on exit. For scripts: benchmarks, screenshots, tests."""
    port = free_port()
    argv, env = command(home.resolve(), port, "127.0.0.1", daemon)
    out = log.open("w") if log is not None else subprocess.DEVNULL
    process = subprocess.Popen(
        argv,
        env=env,
        stdout=out,
        stderr=subprocess.STDOUT,
        start_new_session=True,  # the webserver's code server goes with it
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 180
        while True:
            with contextlib.suppress(OSError):
                # Ready once the code location has loaded, not just the HTTP server.
                entries = graphql(url, _LOADED)["workspaceOrError"].get("locationEntries")
                if entries and all(e["loadStatus"] == "LOADED" for e in entries):
                    break
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the webserver did not start (exit {process.poll()})")
            time.sleep(0.5)
        yield url
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


_LOADED = "{ workspaceOrError { ... on Workspace { locationEntries { loadStatus } } } }"


def graphql(url: str, query_text: str, variables: dict | None = None) -> dict:
    """One query to the webserver's GraphQL endpoint (what the UI itself asks)."""
    body = codec.dumps({"query": query_text, "variables": variables or {}})
    request = urllib.request.Request(
        f"{url}/graphql", data=body, headers={"Content-Type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        payload = codec.loads(response.read())
    if payload.get("errors"):
        raise RuntimeError(f"GraphQL errors: {payload['errors']}")
    return payload["data"]
