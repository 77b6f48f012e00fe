"""Long multi-goal tasks: several changes to related records, each looked up its own way.

Goals are added one at a time to a planner (synthesis.tasks.planner.Planner), each on a
record related to what the task already touched (the same customer's other booking, the
product an order is for), so the task reads as one errand, not a list of chores. Two rules
keep it coherent: no record gets a second goal unless the task created it ("create an order,
then pay it" composes; "change it, then cancel it" does not), and no goal may be left out
with the same end state (`redundant`), since no check could tell it was done.
"""

from __future__ import annotations

from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.environments.topology import ToolGraph
from synthesis.models import ToolCall
from synthesis.tasks.families.refusals import refusable_here, refusable_tools, weighted_order
from synthesis.tasks.planner import Outcome, Planner, mutation_tools
from synthesis.tasks.spec_model import SpecModel

# How many goals a chain task asks for (weights): most ask for two to four changes.
GOAL_COUNTS = (1, 2, 3, 4, 5)
GOAL_COUNT_WEIGHTS = (0.5, 2.0, 3.0, 3.5, 2.5)
# Tries per extra goal before settling for fewer: a draw fails when no free, related target
# passes its guards or the chain would grow too long.
TRIES_PER_GOAL = 4
# How often a chain's first goal is drawn among the tools a request can be refused by in this
# state (`refusals.refusable_here`), done on a target the guard lets through. Every infeasible
# task asks for one of those tools; feasible tasks that asked for them only at their natural
# rate gave the infeasible ones away by their nouns ("cart line" in 91% of a shop's infeasible
# requests against 43% of its feasible ones) and by the people such records belong to.
GUARDED_FIRST = 0.6


def plan_chain(
    planner: Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    """Goal tools of a multi-goal task planned into `planner` (None if none fits)."""
    model, rng = planner.model, planner.rng
    mutations = mutation_tools(model, graph)
    if not mutations:
        return None
    n_goals = rng.choices(GOAL_COUNTS, weights=GOAL_COUNT_WEIGHTS)[0]
    guarded = [t for t in refusable_tools(model, graph) if refusable_here(planner, t)]
    first = None
    if guarded and rng.random() < GUARDED_FIRST:
        first = _first_guarded(planner, guarded, graph)
        if first is not None and len(planner.steps) > max_len:
            return None
    if first is None:
        first = rng.choices(mutations, weights=[graph.goal_weight(t) for t in mutations])[0]
        if not planner.plan_mutation(model.tool(first), None) or len(planner.steps) > max_len:
            return None
    goals = [first]
    goals += extend_chain(planner, graph, initial, max_len, n_goals - 1, goals[-1])
    return Outcome(goal_tools=goals)


def _first_guarded(planner: Planner, guarded: list[str], graph: ToolGraph) -> str | None:
    """The first guarded tool, in `weighted_order`, that the planner can ask for on a target
    its guard lets through (planned into `planner`); None if none can."""
    for tool in weighted_order(planner.rng, guarded, graph):
        snap = planner.snapshot()
        if planner.plan_mutation(planner.model.tool(tool), None):
            return tool
        planner.restore(snap)
    return None


def extend_chain(
    planner: Planner,
    graph: ToolGraph,
    initial: dict[str, Any],
    max_len: int,
    n_extra: int,
    last: str | None,
) -> list[str]:
    """Up to `n_extra` more mutation goals on records related to the task's (their tools)."""
    model, rng = planner.model, planner.rng
    mutations = mutation_tools(model, graph)
    added: list[str] = []
    for attempt in range(n_extra * TRIES_PER_GOAL):
        if len(added) >= n_extra or len(planner.steps) >= max_len or not mutations:
            break
        # Follow-ups that depend on the previous goal (pay what was just ordered) weigh more.
        weights = [3.0 if last and graph.depends_on(t, last) else 1.0 for t in mutations]
        tool = rng.choices(mutations, weights=weights)[0]
        snap = planner.snapshot()
        follow = planner.touched[-1] if planner.touched else None
        # Most draws must stay with the records the task is about; the last try per goal
        # may go anywhere, so small states still make long tasks.
        planner.require_related = attempt % TRIES_PER_GOAL != TRIES_PER_GOAL - 1
        ok = planner.plan_mutation(model.tool(tool), follow)
        planner.require_related = False
        if (
            ok
            and len(planner.steps) <= max_len
            and not redundant(model, initial, planner.steps, planner.roles, planner.world.state)
        ):
            added.append(tool)
            last = tool
        else:
            planner.restore(snap)
    return added


def redundant(
    model: EnvModel,
    initial: dict[str, Any],
    steps: list[ToolCall],
    roles: list[str],
    final: dict[str, Any],
) -> bool:
    """Whether some mutation could be left out with the same end state ("pay, then cancel").

    No final-state check can tell whether such a step was done, so the task would ask for
    work nobody can grade.
    """
    # The steps before a left-out mutation are the same for every later one: one model plays
    # them as it goes, and each trial starts from a copy of it (the same calls in the same
    # order as replaying from the initial state each time).
    prefix, played = SpecModel(model, initial), 0
    for i, role in enumerate(roles):
        if role != "mutation":
            continue
        for call in steps[played:i]:
            prefix.call(call.tool, call.args)
        played = max(played, min(i, len(steps)))
        world = prefix.fork()
        for call in steps[i + 1 :]:
            world.call(call.tool, call.args)
        if world.state == final:
            return True
    return False
