"""Several tables' gates at once, shared between this process and one forked child.

Great Expectations runs a suite as Python on one core, about 10 ms per expectation plus its
per-row work, and a publish has nothing else to do while its gates run: on the 2-core
machine its eight warehouse suites (108 expectations) took 1.5 s one after another. The
child inherits the tables (nothing is copied or pickled to it) and sends back its verdicts,
which are plain data (`GateResult`).

The verdicts are the same as one suite after another: each suite sees the same frame. A
child that cannot be forked, dies, or answers with anything but its verdicts leaves its
suites to this process, which runs them as if there had been no child.

The forking process may have threads (a run's lifeline watcher, DuckDB's workers). The child
is safe all the same because it only validates frames it inherited: it needs no lock another
thread may hold (Python re-creates its import and logging locks in a child), frees nothing it
inherited (`gc.freeze` first: a parent's DuckDB connection collected in the child would wait
for worker threads the child does not have) and leaves through `os._exit`.
"""

from __future__ import annotations

import gc
import os
import pickle
import traceback
from collections.abc import Callable, Mapping
from typing import Any

from quality.expectations import GateResult, suite_specs, validate

# A suite's weight when sharing them out: its expectations, and its rows at about 1/200 of
# an expectation each (a row costs GE ~50 µs across a suite's column checks).
_ROWS_PER_EXPECTATION = 200


def validate_tables(
    tables: Mapping[str, Any],
    related: Mapping[str, Mapping[str, Any]] | None = None,
    processes: int = 2,
) -> dict[str, GateResult]:
    """`validate(name, data, related=related.get(name))` for every table in `tables`, in its
    order; with `processes=2` the suites are shared with a forked child (the module says
    why, and why it is safe)."""
    related = related or {}

    def one(name: str) -> GateResult:
        return validate(name, tables[name], related=related.get(name))

    names = list(tables)
    theirs = _their_share(tables) if processes > 1 and len(names) > 1 else []
    child = _fork(lambda: {name: one(name) for name in theirs}) if theirs else None
    try:
        results = {name: one(name) for name in names if name not in theirs}
    finally:  # reaped even when a suite here raises
        answered = _answer(child) if child is not None else {}
    for name in theirs:
        results[name] = answered[name] if name in answered else one(name)
    return {name: results[name] for name in names}


def _their_share(tables: Mapping[str, Any]) -> list[str]:
    """The suites for the child: the work shared in two halves, the heaviest suite first,
    each to the side with less so far."""

    def weight(name: str) -> float:
        data = tables[name]
        rows = data.num_rows if hasattr(data, "num_rows") else len(data)
        return len(suite_specs(name)) + rows / _ROWS_PER_EXPECTATION

    ours, theirs, load = [], [], [0.0, 0.0]
    for name in sorted(tables, key=lambda n: (-weight(n), n)):
        side = 0 if load[0] <= load[1] else 1
        (ours, theirs)[side].append(name)
        load[side] += weight(name)
    return theirs


def _fork(work: Callable[[], dict[str, GateResult]]) -> tuple[int, int] | None:
    """(pid, read end) of a child that runs `work` and writes its pickled result; None when
    no child can be forked."""
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
    return pid, read


def _answer(child: tuple[int, int]) -> dict[str, GateResult]:
    """The child's verdicts, or {} when it failed (its suites are then run again here)."""
    pid, read = child
    with os.fdopen(read, "rb") as pipe:
        payload = pipe.read()
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        return {}
    try:
        return pickle.loads(payload)  # noqa: S301 - our own child's, through our pipe
    except Exception:  # noqa: BLE001 - a cut-off answer: the suites run here instead
        return {}
