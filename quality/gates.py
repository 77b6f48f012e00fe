"""Several tables' gates at once, shared between this process and one forked child.

Great Expectations runs a suite as Python on one core, about 10 ms per expectation plus its
per-row work, and a publish has nothing else to do while its gates run: on the 2-core
machine its eight warehouse suites (108 expectations) took 1.5 s one after another. The
child (`synthesis/forked.py`: why that is safe) inherits the tables and sends back its
verdicts, which are plain data (`GateResult`).

The verdicts are the same as one suite after another: each suite sees the same frame. A
child that cannot be forked, dies, or answers with anything but its verdicts leaves its
suites to this process, which runs them as if there had been no child.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from quality.expectations import GateResult, suite_specs, validate
from synthesis import forked

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
    ours = [name for name in names if name not in theirs]
    mine, answered = forked.shared(lambda share: {name: one(name) for name in share}, ours, theirs)
    results = {**mine, **answered}
    return {name: results[name] for name in names}


def _their_share(tables: Mapping[str, Any]) -> list[str]:
    """The suites for the child: the work shared in two halves by weight (`forked.halves`)."""

    def weight(name: str) -> float:
        data = tables[name]
        rows = data.num_rows if hasattr(data, "num_rows") else len(data)
        return len(suite_specs(name)) + rows / _ROWS_PER_EXPECTATION

    return forked.halves({name: weight(name) for name in tables})[1]
