"""Infeasible tasks: a request one of the tool's guards refuses in this state.

"Cancel my booking for Tuesday" when it is already completed; "order 7 of Sencha" when 4 are
in stock; "book the 10:00 slot" when it is booked. The planner picks a guard and a target on
which exactly that guard fails (read off the predicted state), looks everything up as an agent
would, and ends the gold chain with the attempt itself (role `refused`): the gold run in the
sandbox must see the compiled tool refuse it and the state stay as it was. The right outcome
is no change plus a reply naming the rule's fact from the state (the status, the stock, the
slot's status), which the reply contract's `include` carries with the rule's name.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from synthesis.environments.model import ToolModel
from synthesis.models import ToolCall
from synthesis.tasks.chains import Outcome, mutation_tools
from synthesis.tasks.phrasing import field_words, tool_verb, value_words
from synthesis.tasks.plan import PlanGoal
from synthesis.tasks.spec_model import is_number
from synthesis.tasks.topology import ToolGraph, target_param

if TYPE_CHECKING:
    from synthesis.tasks.scenarios import _Planner

MAX_TARGETS = 6


def plan_infeasible(
    planner: _Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    model, rng = planner.model, planner.rng
    tools = mutation_tools(model, graph)
    rng.shuffle(tools)
    for name in tools:
        tool = model.tool(name)
        pres = list(tool.preconditions)
        rng.shuffle(pres)
        for pre in pres:
            outcome = None
            if pre.kind == "status_in" and tool.operation in ("transition", "update"):
                outcome = _refuse_on_record(planner, tool, pre)
            elif pre.kind in ("ref_field_equals", "ref_field_gte_param") and (
                tool.operation == "create"
            ):
                outcome = _refuse_create(planner, tool, pre)
            if outcome is not None and len(planner.steps) <= max_len:
                return outcome
    return None


def _refuse_on_record(planner: _Planner, tool: ToolModel, pre: Any) -> Outcome | None:
    ent = planner.model.entity(tool.entity or "")
    tp = target_param(tool)
    if tp is None:
        return None
    status_field = ent.status_field or "status"
    recs = planner.world.records(ent.name)
    cands = [
        rid
        for rid in sorted(recs)
        if recs[rid].get(status_field) is not None and recs[rid][status_field] not in pre.values
    ]
    planner.rng.shuffle(cands)
    # A target whose status no record like it shares first: an agent that refuses for the
    # wrong record then names the wrong fact (the wrong-record baseline must score 0).
    cands.sort(key=lambda rid: _fact_shared(planner, ent.name, rid, status_field))
    for rid in cands[:MAX_TARGETS]:
        rec = planner.world.records(ent.name)[rid]
        args: dict[str, Any] = {tp: rid}
        if tool.operation == "update":
            value_param = next((p for p in tool.params if p.name != tp), None)
            value = planner._new_value(tool, rec)
            if value_param is None or value is None:
                return None
            args[value_param.name] = value
        if planner.world.guard_error(tool, args, rec) != pre.error:
            continue  # another guard refuses first: the reply could not name this rule
        snap = planner.snapshot()
        desc = planner.name(ent.name, rid)
        if desc is None:
            continue
        if value_words(rec[status_field]).casefold() in desc.casefold():
            planner.restore(snap)  # "cancel the cancelled booking" asks to be refused
            continue
        then = planner._mutation_goal(tool, desc, args)
        if not planner.attempt(ToolCall(tool=tool.name, args=args)):
            planner.restore(snap)
            continue
        planner.goals.append(_refuse_goal(tool, desc, then))
        return Outcome(
            goal_tools=[tool.name],
            kind="infeasible",
            include=[value_words(rec[status_field])],
            rule=f"status_in:{status_field}",
            asked=[(ent.name, rid, status_field, f"the {field_words(status_field)} of {desc}")],
        )
    return None


def _refuse_create(planner: _Planner, tool: ToolModel, pre: Any) -> Outcome | None:
    rng = planner.rng
    broken = next((p for p in tool.params if p.name == pre.param and p.takes), None)
    if broken is None:
        return None
    recs = planner.world.records(broken.takes or "")
    if pre.kind == "ref_field_equals":
        cands = [rid for rid in sorted(recs) if recs[rid].get(pre.field or "") != pre.value]
    else:
        cands = [rid for rid in sorted(recs) if is_number(recs[rid].get(pre.field or ""))]
    rng.shuffle(cands)
    for rid in cands[:MAX_TARGETS]:
        args: dict[str, Any] = {broken.name: rid}
        for p in tool.params:
            if p.takes and p.name not in args:
                ok = [
                    o
                    for o in sorted(planner.world.records(p.takes))
                    if planner._ref_ok(tool, p.name, planner.world.records(p.takes)[o])
                ]
                if not ok:
                    return None
                args[p.name] = rng.choice(ok)
        for p in tool.params:
            if not p.takes and p.name not in args:
                value = planner._param_value(tool, p, args)
                if value is None:
                    break
                args[p.name] = value
        else:
            have = recs[rid].get(pre.field or "")
            if pre.kind == "ref_field_gte_param":
                need = next((p for p in tool.params if p.name == pre.other), None)
                if need is None or need.type not in ("integer", "number"):
                    return None
                args[need.name] = int(have) + rng.randint(1, 3)
            if planner.world.guard_error(tool, args, None) != pre.error:
                continue
            snap = planner.snapshot()
            refs: list[str] = []
            broken_words = ""
            for p in tool.params:
                if p.takes:
                    words = planner.name(p.takes, args[p.name])
                    # "the slot with status booked" would ask to be refused
                    if words is None or (
                        p.name == broken.name and value_words(have).casefold() in words.casefold()
                    ):
                        break
                    refs.append(words)
                    if p.name == broken.name:
                        broken_words = words
            else:
                if planner.attempt(ToolCall(tool=tool.name, args=args)):
                    label = planner.model.entity(tool.entity or "").label
                    then = PlanGoal(
                        kind="create",
                        tool=tool.name,
                        verb=tool_verb(tool.name),
                        label=label,
                        refs=refs,
                        values=[
                            (field_words(p.field or p.name), value_words(args[p.name]))
                            for p in tool.params
                            if not p.takes
                        ],
                    )
                    planner.goals.append(_refuse_goal(tool, None, then))
                    return Outcome(
                        goal_tools=[tool.name],
                        kind="infeasible",
                        include=[value_words(have)],
                        rule=f"{pre.kind}:{pre.field}",
                        asked=[
                            (
                                broken.takes or "",
                                rid,
                                pre.field or "",
                                f"the {field_words(pre.field or '')} of {broken_words}",
                            )
                        ],
                    )
            planner.restore(snap)
    return None


def _fact_shared(planner: _Planner, entity: str, rid: str, fname: str) -> bool:
    """Whether a record sharing a reference with `rid` has the same value of `fname`."""
    recs = planner.world.records(entity)
    mine = planner._neighbourhood(entity, recs[rid]) - {(entity, rid)}
    return any(
        oid != rid
        and r.get(fname) == recs[rid].get(fname)
        and mine & planner._neighbourhood(entity, r)
        for oid, r in sorted(recs.items())
    )


def _refuse_goal(tool: ToolModel, desc: str | None, then: PlanGoal) -> PlanGoal:
    return PlanGoal(kind="refuse", tool=tool.name, verb=then.verb, target=desc, then=then)
