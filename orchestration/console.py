"""The terminal a command prints to: a build's progress bars, refusals and summary.

During a build, stdout and stderr go into the build log (`output_into`), so `terminal` is
rebound to a copy of the real one; a build the warm run host forks prints to the CLI's
(`terminal_at`). Read it as `console.terminal` each time, never bound once at import.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TextIO

from rich.console import Console

terminal = Console(file=sys.stdout, soft_wrap=True)


@contextlib.contextmanager
def output_into(log_file: TextIO) -> Iterator[None]:
    """Everything written to stdout and stderr from here on, by this process and every process
    it starts (the code server, the runs, dbt), goes into the build log; the terminal keeps
    the progress bars and the summary through `terminal`, bound to a copy of its stdout."""
    global terminal
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    saved = {fd: os.dup(fd) for fd in (1, 2)}
    before, terminal = terminal, Console(file=os.fdopen(os.dup(saved[1]), "w"), soft_wrap=True)
    try:
        for fd in saved:
            os.dup2(log_file.fileno(), fd)
        yield
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        for fd, copy in saved.items():
            os.dup2(copy, fd)
            os.close(copy)
        terminal.file.close()
        terminal = before


@contextlib.contextmanager
def terminal_at(fd: int, width: int | None) -> Iterator[None]:
    """`terminal` is the one open at descriptor `fd` (a CLI's, passed to the process the warm
    run host forked for its build; `width`: the CLI's, as this process has no terminal of its
    own to measure). Flushed at the end, and left open: the process ends next."""
    global terminal
    terminal = Console(file=os.fdopen(fd, "w"), soft_wrap=True, width=width)
    try:
        yield
    finally:
        terminal.file.flush()
