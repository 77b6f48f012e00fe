"""Infeasible tasks: a request one of the tools' guards refuses in this state, among as many
other goals as a feasible task has.

The refused request itself (its target, the attempt, the reasons that block it) is planned by
refusals.py; this family places it among the goals: after a question or a condition as often
as feasible requests carry one, at any place among the other goals, the goal counts drawn as a
chain's. The right outcome is no change and a reply that declines with a true reason.
"""

from __future__ import annotations

from typing import Any

from synthesis.environments.topology import ToolGraph
from synthesis.tasks.families import conditionals, questions
from synthesis.tasks.families.chains import GOAL_COUNT_WEIGHTS, GOAL_COUNTS, extend_chain
from synthesis.tasks.families.conditionals import plan_condition
from synthesis.tasks.families.questions import ask_one, still_as_asked
from synthesis.tasks.families.refusals import refused_request
from synthesis.tasks.planner import Outcome, Planner

# How often an infeasible request also asks for a value, or sets a condition, as feasible
# requests do (questions and conditionals are a sixth of them each): a request that never
# asked would tell its kind by that.
ASK_RATE = 0.17
CONDITION_RATE = 0.17


def plan_infeasible(
    planner: Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    """An infeasible request among as many other goals as a feasible task has (drawn from
    the same counts, the refused one at any place): a request that always stood alone would
    tell its kind by its size."""
    rng = planner.rng
    # A question first, as often as a feasible request asks one (questions and conditionals):
    # a request that never asked would tell its kind by that. It is asked of the state the
    # user sees, and no later goal may change its answer. The goals after it are as many as
    # that family plans after its question, the refused request one of them; without one,
    # as many as a chain task has.
    question = Outcome(goal_tools=[])
    asked: list[tuple[Any, ...]] = []
    draw = rng.random()
    snap = planner.snapshot()
    n_goals = 0
    if draw < ASK_RATE:
        if ask_one(planner, question, asked) and len(planner.steps) <= max_len:
            n_goals = max(1, rng.choices(questions.EXTRA_GOALS, questions.EXTRA_WEIGHTS)[0])
        else:
            planner.restore(snap)
            question, asked = Outcome(goal_tools=[]), []
    elif draw < ASK_RATE + CONDITION_RATE:
        # Or a conditional goal ("while it is still pending, pay it; if not, tell me its
        # status"), as often as a feasible request has one.
        planned = plan_condition(planner, graph, max_len)
        if planned is not None:
            question, (entity, rid, status) = planned
            if question.asked:
                asked = [(entity, rid, question.asked[0][2], status)]
            weights = conditionals.EXTRA_WEIGHTS
            n_goals = max(1, rng.choices(conditionals.EXTRA_GOALS, weights)[0])
    if not n_goals:
        n_goals = rng.choices(GOAL_COUNTS, weights=GOAL_COUNT_WEIGHTS)[0]
    before = rng.randrange(n_goals)
    first = extend_chain(planner, graph, initial, max_len, before, None) if before else []
    outcome = refused_request(planner, graph, initial, max_len)
    if outcome is None:
        return None
    after = n_goals - 1 - len(first)
    last = outcome.goal_tools[-1]
    then = extend_chain(planner, graph, initial, max_len, after, last) if after > 0 else []
    if not all(still_as_asked(planner, entry) for entry in asked):
        return None
    outcome.goal_tools = [*question.goal_tools, *first, *outcome.goal_tools, *then]
    outcome.conditionals += question.conditionals
    # The refusal's fact is the first asked value (its `asked_facts`), the question's after.
    outcome.asked += question.asked
    outcome.include += question.include
    outcome.exclude += question.exclude
    return outcome
