"""Conditional tasks: a read decides which way the task goes.

"If the booking for Ada is still confirmed, cancel it; otherwise tell me its status." The
planner reads the record's status in the state, so it knows the branch: when the tool's
guard holds, the mutation is in the gold chain (a state task); when it does not, nothing
changes and the reply must carry the status read (a reply task). Either branch may come with
a few changes to related records.
"""

from __future__ import annotations

from typing import Any

from synthesis.environments.topology import ToolGraph, from_statuses, target_param
from synthesis.models import ToolCall
from synthesis.tasks.families.chains import extend_chain
from synthesis.tasks.phrasing import value_words
from synthesis.tasks.plan import PlanGoal
from synthesis.tasks.planner import Outcome, Planner, mutation_tools

EXTRA_GOALS = (0, 1, 2, 3)
EXTRA_WEIGHTS = (0.25, 0.3, 0.25, 0.2)
# The share of draws that aim at the "otherwise" branch (the guard fails in the state).
OTHERWISE_SHARE = 0.5


def plan_conditional(
    planner: Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    """A conditional goal, then a few changes to related records."""
    rng = planner.rng
    planned = plan_condition(planner, graph, max_len)
    if planned is None:
        return None
    outcome, (entity, rid, status) = planned
    n_extra = rng.choices(EXTRA_GOALS, weights=EXTRA_WEIGHTS)[0]
    before = planner.snapshot()
    extra = extend_chain(planner, graph, initial, max_len, n_extra, outcome.goal_tools[0])
    # The "otherwise" branch reports a status: no later change may alter it.
    if outcome.asked and recs_status(planner, entity, rid) != status:
        planner.restore(before)
        extra = []
    outcome.goal_tools += extra
    return outcome


def plan_condition(
    planner: Planner, graph: ToolGraph, max_len: int
) -> tuple[Outcome, tuple[str, str, Any]] | None:
    """One conditional goal planned into `planner`, and (entity, record id, the status read)
    of the record it reads (None if none fits). The "otherwise" branch asks for the status:
    then `outcome.asked` holds it, and no later goal may change it."""
    model, rng = planner.model, planner.rng
    tools = [
        t
        for t in mutation_tools(model, graph)
        if model.tool(t).operation == "transition" and from_statuses(model, model.tool(t))
    ]
    rng.shuffle(tools)
    want_otherwise = rng.random() < OTHERWISE_SHARE
    for name in tools:
        tool = model.tool(name)
        ent = model.entity(tool.entity or "")
        tp = target_param(tool)
        if tp is None or not ent.status_field:
            continue
        allowed = from_statuses(model, tool)
        recs = planner.world.records(ent.name)
        cands = [
            rid
            for rid in sorted(recs)
            if planner.free(ent.name, rid)
            and recs[rid].get(ent.status_field) is not None
            and recs[rid].get(ent.status_field) != tool.target_status
            and _branch(planner, tool, tp, recs[rid], allowed) == want_otherwise
        ]
        rng.shuffle(cands)
        for rid in cands[:6]:
            recs = planner.world.records(ent.name)  # restore() replaces the state object
            snap = planner.snapshot()
            desc = planner.name(ent.name, rid)
            if desc is None:
                continue
            status = recs[rid][ent.status_field]
            if value_words(status).casefold() in desc.casefold():
                planner.restore(snap)  # naming it by its status would give the branch away
                continue
            then = planner.mutation_goal(tool, "it", {tp: rid})
            outcome = Outcome(goal_tools=[name], conditionals=1)
            if not want_otherwise:
                if planner.run(ToolCall(tool=name, args={tp: rid}), "mutation") is None:
                    planner.restore(snap)
                    continue
            else:
                outcome.include.append(value_words(status))
                outcome.asked.append((ent.name, rid, ent.status_field, f"the status of {desc}"))
            planner.goals.append(
                PlanGoal(
                    kind="conditional",
                    tool=name,
                    verb=then.verb,
                    target=desc,
                    condition=" or ".join(value_words(s) for s in allowed),
                    otherwise="its status",
                    then=then,
                )
            )
            planner.acted.add((ent.name, rid))
            planner.touched.append((ent.name, rid))
            planner.names[(ent.name, rid)] = f"that {ent.label}"
            if len(planner.steps) > max_len:
                planner.restore(snap)
                continue
            return outcome, (ent.name, rid, status)
    return None


def _branch(planner: Planner, tool: Any, tp: str, rec: dict[str, Any], allowed: Any) -> Any:
    """True: the "otherwise" branch (status outside the condition, so the guard refuses);
    False: the mutation is done; None: neither holds cleanly (the guard refuses for another
    reason), so the record is not used."""
    status = rec.get(planner.model.entity(tool.entity).status_field or "status")
    refused = planner.world.guard_error(tool, {tp: rec["id"]}, rec) is not None
    if status not in allowed and refused:
        return True
    if status in allowed and not refused:
        return False
    return None


def recs_status(planner: Planner, entity: str, rid: str) -> Any:
    ent = planner.model.entity(entity)
    return planner.world.records(entity).get(rid, {}).get(ent.status_field or "status")
