"""The processes of a CLI build end with it.

`envfoundry build` starts a code server, which starts one process per run, which start dbt
and sandboxes. Killed with SIGKILL, the build process cannot tell them; left alone they would
go on writing into a home whose lock is gone. So the build exports its identity and every
process that loads the code location for it watches that process and ends itself when it is
gone (dbt and the sandboxes already die with their parent). Runs launched from the UI carry no
build identity and are not watched.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from pathlib import Path

BUILD_PROCESS = "ENVFOUNDRY_BUILD_PROCESS"
_POLL_S = 0.25


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the parenthesised command name (which may hold
    spaces): field 3 (the state) is the first."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()
    except OSError:
        return None


def start_time(pid: int) -> str:
    """The process's start time in clock ticks ("" if it is gone): with the pid it names one
    process for good, as a pid alone may be reused by a new process."""
    fields = _stat(pid)
    return fields[19] if fields else ""  # field 22


def running(pid: int, start: str) -> bool:
    """Process `pid`, started at `start` (clock ticks), is there and has not ended: an ended
    process stays a zombie until its parent reaps it."""
    fields = _stat(pid)
    return bool(start) and fields is not None and fields[19] == start and fields[0] != "Z"


def export_build_process() -> None:
    """Called by the build process: children started from now on watch this process."""
    pid = os.getpid()
    os.environ[BUILD_PROCESS] = f"{pid}:{start_time(pid)}"


def build_process() -> int | None:
    """The pid of the build this process works for, if any."""
    value = os.environ.get(BUILD_PROCESS, "")
    pid, _, _ = value.partition(":")
    return int(pid) if pid.isdigit() else None


def _alive(pid: int, start: str) -> bool:
    if start:
        return running(pid, start)
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def hold_on() -> None:
    """In a process working for a build: end this process as soon as the build is gone."""
    value = os.environ.get(BUILD_PROCESS, "")
    pid_text, _, start = value.partition(":")
    if not pid_text.isdigit() or int(pid_text) == os.getpid():
        return
    pid = int(pid_text)

    def watch() -> None:
        while _alive(pid, start):
            time.sleep(_POLL_S)
        os.kill(os.getpid(), signal.SIGKILL)

    threading.Thread(target=watch, name="envfoundry-lifeline", daemon=True).start()
