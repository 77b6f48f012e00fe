"""Running project tasks in the sandbox, as the build's self-test does, for the tests of
the project kinds (tests/synthesis/tasks/projects, tests/synthesis/llm/test_project_topics.py)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from sandboxes import WorkerPool
from synthesis.environments.projects.ledgers import HALVES, MONTH_NAMES, YEAR, quarter_months


def run_gold_and_mistakes(cases: Iterable[tuple[Any, dict, Any]]) -> list[tuple]:
    """Each task's gold chain and every one of its mistakes, run in the sandbox (a pool of
    two workers): `(task, initial, label, result)` in order, `label` "gold" or the mistake's.
    `cases`: `(source, initial state, task)` of each task."""
    episodes, owners = [], []
    for source, initial, task in cases:
        for label, chain in [("gold", task.gold_chain)] + [
            (m.label, m.chain) for m in task.mistakes
        ]:
            episodes.append((source, initial, [(c["tool"], c["args"]) for c in chain]))
            owners.append((task, initial, label))
    with WorkerPool(2) as pool:
        results = pool.run_episodes(episodes)
    return [(*owner, result) for owner, result in zip(owners, results, strict=True)]


_MONTH_NUMBERS = {name: n for n, name in enumerate(MONTH_NAMES, 1)}
_SAID = re.compile(
    r"\b(?P<name>" + "|".join(MONTH_NAMES) + r")\b"
    r"|(?<![A-Za-z])Q(?P<quarter>[1-4])(?!\d)"
    r"|(?<![A-Za-z])H(?P<half>[12])(?!\d)|\b(?P<ordinal>first|second) half\b"
    rf"|(?<!\d){YEAR}-(?P<month>\d\d)(?!\d)"
)


def months_said(text: str) -> set[int]:
    """The months of the year a request (or a path) names, whichever way it names them:
    "March", "Q3 2024", "2024-Q3", "the second half", "2024-H2", "sales_2024-07.csv"."""
    months: set[int] = set()
    for found in _SAID.finditer(text):
        if found["name"]:
            months.add(_MONTH_NUMBERS[found["name"]])
        elif found["quarter"]:
            months |= set(quarter_months(int(found["quarter"])))
        elif found["half"] or found["ordinal"]:
            half = found["half"] or ("first", "second").index(found["ordinal"]) + 1
            months |= set(HALVES[int(half)])
        else:
            months.add(int(found["month"]))
    return months
