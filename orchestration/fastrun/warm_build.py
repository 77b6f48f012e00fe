"""A CLI build run by the home's warm run host, so that the CLI need not import Dagster.

Before its first run, a CLI build spends about 2 s of the 2-core machine importing Dagster and
its storage and opening the instance, whatever it then builds. The home's warm run host
(warm.py, runhost.py) has all of that imported. So once the CLI knows that something changed,
and the home's warm processes are the ones this build would adopt (`warm.adoptable`, checked
without Dagster), it asks the run host to fork the build. The child gets the CLI's environment
and working directory, the build's log as its stdout and stderr, and the CLI's terminal for its
progress bars and summary; it runs what the CLI would have run (the "build" entry point,
entrypoints.py) and sends back its exit code.

The CLI stays the build process. It holds the home's lock until the child has ended. Its pid
is the lifeline every process of the build watches (lifeline.py), the child's included, so a
CLI killed with SIGKILL takes the child and its runs along. A Ctrl-C at its terminal goes to
the child, which stops as a CLI build stops. If the host cannot be reached
or will not fork, the CLI builds itself, as it did before.

Protocol (wire.py), over the run host's socket (runhost.py), after its greeting:
  CLI → host  {"entry": "build", "request", "env", "cwd", "stdio": 4} with four descriptors:
              the log (stdout, stderr), the terminal and the child's end of a channel to the CLI
  host → CLI  {"pid", "start"} of the build's process, or {"error": why}
then over the channel:
  child → CLI {"ready": pid, "start"}, and waits
  CLI → child {"go": true}; or the CLI closes the channel and builds itself
  child → CLI {"exit": code}, once the build is done
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
from typing import Any

from orchestration.fastrun import entrypoints, lifeline
from orchestration.fastrun.wire import Inbox, send_line

# A warm host greets and answers at once; one that does not is stuck: the CLI builds itself.
_ANSWER_TIMEOUT_S = 10.0
# After a Ctrl-C, how long the child may take to stop its runs before it is killed.
_STOP_TIMEOUT_S = 60.0


def ask(servers: Any, request: dict, terminal: int, entry: str = "build") -> int | None:
    """The exit code of the build the warm run host of `servers` ran for `request` (by entry
    point `entry`), or None when it would not run it (the caller then builds itself).
    `terminal`: the descriptor of the CLI's console.

    Until this process says "go", the forked child only waits: had the host answered too late
    or not at all, this process builds itself and the child, finding the channel closed,
    ends without building. So exactly one of them builds."""
    mine, theirs = socket.socketpair()
    with mine:
        try:
            with theirs, socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as host:
                host.settimeout(_ANSWER_TIMEOUT_S)
                host.connect(servers.host_socket)
                answers = Inbox(host)
                if "ready" not in (answers.next_line() or {}):
                    return None
                message = {
                    "entry": entry,
                    "request": request,
                    "env": dict(os.environ),
                    "cwd": os.getcwd(),
                    "stdio": 4,
                }
                send_line(host, message, [1, 2, terminal, theirs.fileno()])
                if "pid" not in (answers.next_line() or {}):
                    return None  # refused: it says why in its own log
            mine.settimeout(_ANSWER_TIMEOUT_S)
            channel = Inbox(mine)
            hello = channel.next_line() or {}
            if "ready" not in hello:
                return None
            child = (int(hello["ready"]), str(hello["start"]))
            send_line(mine, {"go": True})
        except (OSError, ValueError):
            return None
        mine.settimeout(None)
        # Into the build's log (this process's stdout during a build).
        print(
            f"build process: pid {child[0]}, forked by the warm run host (pid {servers.host_pid})"
        )
        sys.stdout.flush()
        result: dict = {}
        try:
            result = channel.next_line() or {}
            channel.next_line()  # and its end, which closes the channel
        except KeyboardInterrupt:
            said = _stop(child, channel)
            if said is None and "exit" in result:
                said = int(result["exit"])  # it had finished: the Ctrl-C came at its end
            if said is None:
                raise  # killed before it said how it ended: the CLI says what it can
            return said  # it stopped as a CLI build stops, and said what it kept
    if "exit" not in result:
        raise BuildLost(
            f"the build process the warm run host forked (pid {child[0]}) ended without a result"
        )
    return int(result["exit"])


class BuildLost(RuntimeError):
    """The warm run host's child ended before it said how the build went."""


def serve(entry: str, request: dict, terminal: int, result: int) -> int:
    """In the process the run host forked for `ask`: entry point `entry` run for `request`
    once the CLI says "go", and its exit code sent back. Without a "go" (the CLI gave up
    waiting and builds itself) it builds nothing."""
    lifeline.hold_on()  # the CLI is the build: killed, it takes this process along
    # `result` stays open until this process exits: the CLI takes the channel's end for this
    # process's end, and holds the home's lock until then (an interrupted build still writes
    # its trace, for one). A duplicate carries the messages.
    with socket.fromfd(result, socket.AF_UNIX, socket.SOCK_STREAM) as back:
        try:
            send_line(back, {"ready": os.getpid(), "start": lifeline.start_time(os.getpid())})
            if not (Inbox(back).next_line() or {}).get("go"):
                return 1
        except (OSError, ValueError):
            return 1
        # The warm host imported it (entrypoints.ENTRY_PRELOADS).
        code = entrypoints.entry_point(entry)(request, terminal, host=os.getppid())
        with contextlib.suppress(OSError):  # the CLI is gone: nobody to tell
            send_line(back, {"exit": code})
    return code


def _stop(child: tuple[int, str], channel: Inbox) -> int | None:
    """A Ctrl-C at the CLI: the child gets it too, and stops as a CLI build stops (its runs
    with it, and one line on what it kept); killed if it has not after `_STOP_TIMEOUT_S` or a
    second Ctrl-C. Its exit code, or None when it ended without one."""
    pid, start = child
    code = None
    try:
        if lifeline.running(pid, start):
            os.kill(pid, signal.SIGINT)
        channel.sock.settimeout(_STOP_TIMEOUT_S)
        with contextlib.suppress(OSError, ValueError):
            # Its end closes the channel; its result comes first, if it got that far.
            while (message := channel.next_line()) is not None:
                if "exit" in message:
                    code = int(message["exit"])
    finally:
        if lifeline.running(pid, start):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    return code
