"""Work shared with one forked child: the child runs a function on what it inherited and sends
back the pickled result, while this process does its own share.

A publish does its heavy steps (validating the tables, reading the trajectories, sketching
the tasks for deduplication) on one core while the other has nothing to do; a child inherits
the data (nothing is copied or pickled to it) and returns plain data. A child that cannot be
forked, dies, or answers with anything but its result gives `answer(...) == (False, None)`:
the caller then does that share itself, as if there had been no child (`shared` does all of
that for work split in two).

The forking process may have threads (a run's lifeline watcher, DuckDB's workers). The child
is safe all the same because it only computes from what it inherited: it needs no lock another
thread may hold (Python re-creates its import and logging locks in a child), frees nothing it
inherited (`gc.freeze` first: a parent's DuckDB connection collected in the child would wait
for worker threads the child does not have) and leaves through `os._exit`.
"""

from __future__ import annotations

import gc
import os
import pickle
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar

T = TypeVar("T")
R = TypeVar("R")


@dataclass(frozen=True)
class Child:
    pid: int
    read: int


def fork(work: Callable[[], Any]) -> Child | None:
    """A child that runs `work` and writes its pickled result; None when none can be forked."""
    read, write = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read)
        os.close(write)
        return None
    if pid == 0:  # the child's whole life
        code = 1
        try:
            os.close(read)
            gc.freeze()
            payload = pickle.dumps(work(), protocol=pickle.HIGHEST_PROTOCOL)
            with os.fdopen(write, "wb") as out:
                out.write(payload)
            code = 0
        except BaseException:  # noqa: BLE001 - the child must end here whatever happened
            traceback.print_exc()
        finally:
            os._exit(code)
    os.close(write)
    return Child(pid, read)


def answer(child: Child) -> tuple[bool, Any]:
    """(True, the child's result), or (False, None) when it failed; the child is reaped either
    way (call it also when this process's own share raised, so no zombie is left)."""
    with os.fdopen(child.read, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(child.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return False, None
    try:
        return True, pickle.loads(payload)  # noqa: S301 - our own child's, through our pipe
    except Exception:  # noqa: BLE001 - a cut-off answer: the caller does that share itself
        return False, None


def halves(weights: dict[str, float]) -> tuple[list[str], list[str]]:
    """(ours, theirs): the keys shared in two halves of about equal weight, the heaviest
    first, each to the side with less so far (ties to ours)."""
    ours: list[str] = []
    theirs: list[str] = []
    load = [0.0, 0.0]
    for key in sorted(weights, key=lambda k: (-weights[k], k)):
        side = 0 if load[0] <= load[1] else 1
        (ours, theirs)[side].append(key)
        load[side] += weights[key]
    return ours, theirs


def shared(work: Callable[[list[T]], R], ours: list[T], theirs: list[T]) -> tuple[R, R]:
    """(work(ours), work(theirs)): a forked child does `theirs` while this process does
    `ours`; when there is no child or it fails, this process does `theirs` after its own."""
    child = fork(lambda: work(theirs)) if theirs else None
    try:
        mine = work(ours)
    finally:  # reaped even when our own share raised
        answered, value = answer(child) if child is not None else (False, None)
    return mine, (value if answered else work(theirs))
