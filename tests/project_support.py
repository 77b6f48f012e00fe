"""Running project tasks in the sandbox, as the build's self-test does, for the tests of
the project kinds (tests/synthesis/tasks/projects, tests/synthesis/llm/test_project_topics.py)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sandboxes import WorkerPool


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
