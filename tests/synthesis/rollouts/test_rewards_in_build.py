"""Honest rewards in a whole build: every published task's baselines earn 0, the oracle 1,
and the oracle's answers (the SFT targets) name no tool (read from the shared tiny build)."""

from __future__ import annotations

import re
from collections import defaultdict

import pytest

from synthesis import codec
from synthesis.tasks.checks import GOAL, GUARD
from tests.build_support import query

pytestmark = pytest.mark.slow


def test_baselines_earn_nothing_on_every_published_task(tiny_home):
    home, _ = tiny_home
    published = {
        sid for (sid,) in query(home, "SELECT scenario_id FROM scenarios WHERE status='published'")
    }
    assert published
    runs: dict[str, dict[str, tuple[float, bool]]] = defaultdict(dict)
    for sid, policy, reward, success in query(
        home, "SELECT scenario_id, policy, reward, success FROM trajectories"
    ):
        runs[policy][sid] = (reward, success)
    for policy in ("oracle", "noop", "refuse_always"):
        assert set(runs[policy]) == published, policy  # every task, beside the oracle
    assert all(r == (1.0, True) for r in runs["oracle"].values())
    for policy in ("noop", "refuse_always", "wrong_record"):
        assert all(r == (0.0, False) for r in runs[policy].values()), policy
    # Wherever the task's record has a decoy (it has, in these seeded states).
    assert runs["wrong_record"] and set(runs["wrong_record"]) <= published


def test_every_check_has_a_role_and_every_task_a_guard_and_a_goal(tiny_home):
    home, _ = tiny_home
    roles: dict[str, set[str]] = defaultdict(set)
    for sid, spec_json in query(home, "SELECT scenario_id, spec_json FROM checks"):
        roles[sid].add(codec.loads(spec_json)["role"])
    assert roles and all(r == {GOAL, GUARD} for r in roles.values())


def test_oracle_answers_state_the_outcome_without_tool_names(tiny_home):
    home, _ = tiny_home
    tools = {name for (name,) in query(home, "SELECT DISTINCT tool_name FROM tools")}
    answers = [
        codec.loads(m)[-1]["content"]
        for (m,) in query(home, "SELECT messages_json FROM trajectories WHERE policy='oracle'")
    ]
    assert answers and tools
    pattern = re.compile(r"(?<!\w)(" + "|".join(map(re.escape, sorted(tools))) + r")(?!\w)")
    named = [a for a in answers if pattern.search(a)]
    assert not named, named[:3]
    # Said from the run: the answers are about their own records, not one sentence for all.
    assert len(set(answers)) > len(answers) // 2
