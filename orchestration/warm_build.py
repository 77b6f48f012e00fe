"""A CLI build run by the home's warm run host, so that the CLI need not import Dagster.

Before its first run, a CLI build spends about 2 s of the 2-core machine importing Dagster and
its storage and opening the instance, whatever it then builds. The home's warm run host
(orchestration/warm.py, orchestration/runhost.py) has all of that imported. So once the CLI
knows that something changed, and the home's warm processes are the ones this build would
adopt (`warm.adoptable`, checked without Dagster), it asks the run host to fork the build. The
child gets the CLI's environment and working directory, the build's log as its stdout and
stderr, and the CLI's terminal for its progress bars and summary; it runs what the CLI would
have run (`cli.build_served`) and sends back its exit code.

The CLI stays the build process. It holds the home's lock until the child has ended. Its pid
is the lifeline every process of the build watches (orchestration/lifeline.py), the child's
included, so a CLI killed with SIGKILL takes the child and its runs along. A Ctrl-C at its
terminal goes to the child, which stops as a CLI build stops. If the host cannot be reached
or will not fork, the CLI builds itself, as it did before.

Protocol, over the run host's socket (orchestration/runhost.py), after its greeting:
  CLI → host  {"build": request, "env", "cwd", "stdio": 4} with four descriptors: the log
              (stdout, stderr), the terminal and the CLI's end of the result channel
  host → CLI  {"pid", "start"} of the build's process, or {"error": why}
  child → CLI {"exit": code} on the result channel, once the build is done
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
from typing import Any

from orchestration import lifeline
from orchestration.runhost import send_line

# A warm host greets at once; one that does not is stuck or busy importing: build here.
_GREETING_TIMEOUT_S = 10.0
# After a Ctrl-C, how long the child may take to stop its runs before it is killed.
_STOP_TIMEOUT_S = 60.0


def ask(servers: Any, request: dict, terminal: int) -> int | None:
    """The exit code of the build the warm run host of `servers` ran for `request`, or None
    when it would not run it (the caller then builds itself). `terminal`: the descriptor of
    the CLI's console."""
    mine, theirs = socket.socketpair()
    with mine:
        try:
            with theirs, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as host:
                host.settimeout(_GREETING_TIMEOUT_S)
                host.connect(servers.host_socket)
                if "ready" not in _read_line(host):
                    return None
                message = {"build": request, "env": dict(os.environ), "cwd": os.getcwd()}
                send_line(host, {**message, "stdio": 4}, [1, 2, terminal, theirs.fileno()])
                answer = _read_line(host)
        except (OSError, ValueError):
            return None
        if "pid" not in answer:
            return None
        child = (int(answer["pid"]), str(answer["start"]))
        # Into the build's log (this process's stdout during a build).
        print(
            f"build process: pid {child[0]}, forked by the warm run host (pid {servers.host_pid})"
        )
        sys.stdout.flush()
        try:
            result = _read_line(mine)
        except KeyboardInterrupt:
            _stop(child, mine)
            raise
    if "exit" in result:
        return int(result["exit"])
    print(
        f"envfoundry build: the build process the warm run host forked (pid {child[0]}) "
        "ended without a result; its log is the build's",
        file=sys.stderr,
    )
    return 1


def serve(request: dict, terminal: int, result: int) -> int:
    """In the process the run host forked for `ask`: the build, its exit code sent back."""
    from orchestration import cli

    lifeline.hold_on()  # the CLI is the build: killed, it takes this process along
    with socket.socket(fileno=result) as back:
        code = cli.build_served(request, terminal, host=os.getppid())
        with contextlib.suppress(OSError):  # the CLI is gone: nobody to tell
            send_line(back, {"exit": code})
    return code


def _stop(child: tuple[int, str], channel: socket.socket) -> None:
    """A Ctrl-C at the CLI: the child gets it too, and stops as a CLI build stops (its runs
    with it); killed if it has not after `_STOP_TIMEOUT_S` or a second Ctrl-C."""
    pid, start = child
    try:
        if lifeline.running(pid, start):
            os.kill(pid, signal.SIGINT)
        channel.settimeout(_STOP_TIMEOUT_S)
        with contextlib.suppress(OSError, ValueError):
            _read_line(channel)  # its end: a result or, interrupted, none
    finally:
        if lifeline.running(pid, start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _read_line(sock: socket.socket) -> dict:
    """One JSON line from `sock`; {} if it closed first."""
    data = b""
    while not data.endswith(b"\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            return {}
        data += chunk
    return json.loads(data)
