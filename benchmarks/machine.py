"""A yardstick of the machine a benchmark runs on, printed beside its figures.

Two 2-core machines this project is measured on differ by a factor of about two (the whole
test suite: 13 minutes on one, 23 on the other; a full build: 13.2 and 25.8 minutes), so a
figure without its machine cannot be compared with a goal or with an older figure. Before
and after its own measurements, a benchmark prints what a fixed piece of work cost here: pure
interpreter work (most of a build's host CPU and of its sandboxes' is Python) and the start
of an interpreter (every sandbox worker is one). Each is the best of a few tries, so a
moment's load on a shared machine weighs less.

    python benchmarks/machine.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

_TRIES = 5


def _python_work() -> float:
    """Seconds for a fixed mix of what the engine does most: dicts, strings, JSON, calls."""
    started = time.perf_counter()
    rows = []
    for i in range(20_000):
        row = {"id": f"r{i:05d}", "n": i, "tags": [str(i % 7), str(i % 11)], "ok": i % 3 == 0}
        rows.append(row)
    text = json.dumps(rows, sort_keys=True)
    back = json.loads(text)
    sum(len(r["tags"]) + r["n"] for r in back if r["ok"] or r["n"] % 5 == 0)
    return time.perf_counter() - started


def _interpreter_start() -> float:
    """Seconds to start and end this interpreter without site imports (as a worker starts)."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-S", "-c", "pass"], check=True)
    return time.perf_counter() - started


def yardstick() -> str:
    """One line: the machine's cores and what the fixed work cost here."""
    work = min(_python_work() for _ in range(_TRIES))
    start = min(_interpreter_start() for _ in range(_TRIES))
    return (
        f"machine: {os.cpu_count()} cores, fixed Python work {work * 1e3:.0f} ms, "
        f"interpreter start {start * 1e3:.1f} ms (best of {_TRIES})"
    )


if __name__ == "__main__":
    print(yardstick())
