"""Refused requests: what the tools' guards refuse in a state, and why, in the reply contract's
terms.

"Cancel my booking for Tuesday" when it is already completed; "order 7 of Sencha" when 4 are
in stock; "book the 10:00 slot" when it is booked. `refused_request` picks a guard and a target
on which exactly that guard fails (read off the predicted state), looks everything up as an
agent would, and ends with the attempt itself (role `refused`): the gold run in the sandbox
must see the compiled tool refuse it and the state stay as it was. `refusal_of` records every
rule that blocks it (several may: 6 units break both a 5-unit cap and a stock of 3), named by
its fact (the status, the stock) or in the words of the rule or the tool's error, and the
rules that do not block it, for the reply contract; a request the state already satisfies
(the comment is already flagged) is never planned.

The infeasible family (infeasible.py) asks for one such request among other goals; the chain
family (chains.py) asks for the tools such requests name (`refusable_here`), done, more often
than it would by their weight alone, so a tool's name tells less of a refused request.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import Any

from synthesis.environments.model import EnvModel, ToolModel
from synthesis.environments.topology import ToolGraph, target_param
from synthesis.models import ToolCall
from synthesis.tasks.decoys import decoy_record
from synthesis.tasks.envfoundry_reward import content_words
from synthesis.tasks.phrasing import field_noun, tool_verb, value_words
from synthesis.tasks.plan import PlanGoal
from synthesis.tasks.planner import Outcome, Planner, mutation_tools
from synthesis.tasks.spec_model import is_number

MAX_TARGETS = 6


def refusable_tools(model: EnvModel, graph: ToolGraph) -> list[str]:
    """The mutation tools a request can be refused by: a status rule on a record's change, or
    a rule on a referenced record's field (stock, availability) when creating one. The
    infeasible family refuses only these; feasible chains ask for them as often."""
    return [
        t
        for t in mutation_tools(model, graph)
        if any(_refusable(model.tool(t).operation, pre.kind) for pre in model.tool(t).preconditions)
    ]


def _refusable(operation: str, kind: str) -> bool:
    if kind == "status_in":
        return operation in ("transition", "update")
    return kind in ("ref_field_equals", "ref_field_gte_param") and operation == "create"


def refusable_here(planner: Planner, tool_name: str) -> bool:
    """Whether some record of the planner's state breaks one of `tool_name`'s refusable
    guards: a record whose status the rule refuses (and the tool does not already leave it
    in), a referenced record whose field the rule refuses. Only such a tool can be an
    infeasible request here, so only such tools weigh as a feasible chain's guarded goal: a
    shop whose alerts are all active refuses only cart lines, and its feasible requests must
    then name cart lines more often."""
    tool = planner.model.tool(tool_name)
    for pre in tool.preconditions:
        if not _refusable(tool.operation, pre.kind):
            continue
        if pre.kind == "status_in":
            ent = planner.model.entity(tool.entity or "")
            status_field = ent.status_field or "status"
            if any(
                r.get(status_field) is not None
                and r[status_field] not in pre.values
                and r[status_field] != tool.target_status
                and planner.free(ent.name, rid)
                for rid, r in planner.world.records(ent.name).items()
            ):
                return True
            continue
        param = next((p for p in tool.params if p.name == pre.param and p.takes), None)
        if param is None:
            continue
        refs = planner.world.records(param.takes or "").values()
        if pre.kind == "ref_field_equals":
            if any(r.get(pre.field or "") != pre.value for r in refs):
                return True
        elif any(is_number(r.get(pre.field or "")) for r in refs):
            return True
    return False


def weighted_order(rng: Any, tools: list[str], graph: ToolGraph) -> list[str]:
    """`tools` in a random order drawn by their goal weights (heavier ones tend to come
    first), without repeats: the order an infeasible request tries tools in is the order a
    chain would draw its first goal in."""
    keys = [(rng.random() ** (1.0 / graph.goal_weight(t)), t) for t in tools]
    return [t for _, t in sorted(keys, key=lambda kt: -kt[0])]


def refused_request(
    planner: Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    model = planner.model
    # Tried in the order a feasible chain draws its first guarded goal in (chains.py): the
    # tools an infeasible request names are as common as in feasible requests.
    for name in weighted_order(planner.rng, refusable_tools(model, graph), graph):
        tool = model.tool(name)
        pres = list(tool.preconditions)
        planner.rng.shuffle(pres)
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


def _refuse_on_record(planner: Planner, tool: ToolModel, pre: Any) -> Outcome | None:
    ent = planner.model.entity(tool.entity or "")
    tp = target_param(tool)
    if tp is None:
        return None
    status_field = ent.status_field or "status"
    recs = planner.world.records(ent.name)
    # A record already in the status the tool moves to is already as asked (no request to
    # refuse); the others the guard refuses are the candidates.
    cands = [
        rid
        for rid in sorted(recs)
        if recs[rid].get(status_field) is not None
        and recs[rid][status_field] not in pre.values
        and recs[rid][status_field] != tool.target_status
        and planner.free(ent.name, rid)  # no earlier goal of the task acted on it
    ]
    planner.rng.shuffle(cands)
    # A target no record like it shares the refusal with first: an agent that acts on the
    # wrong record then changes it, or refuses for the wrong fact (the wrong-record baseline
    # must score 0; a refusal quoting the rule is right whichever record it was about).
    # Then, as a feasible goal's target is, one related to what the task already touched
    # (the same customer's other booking): a refused record picked anywhere brought a new
    # person (and their email) into the request where a feasible one says "the same".
    cands.sort(
        key=lambda rid: (
            _decoy_refused(planner, ent.name, rid, status_field, pre.values),
            not planner.related(ent.name, recs[rid]),
            _fact_shared(planner, ent.name, rid, status_field),
        )
    )
    for rid in cands[:MAX_TARGETS]:
        rec = planner.world.records(ent.name)[rid]
        args: dict[str, Any] = {tp: rid}
        if tool.operation == "update":
            value_param = next((p for p in tool.params if p.name != tp), None)
            value = planner.new_value(tool, rec)
            if value_param is None or value is None:
                return None
            args[value_param.name] = value
        if pre not in planner.world.violated(tool, args, rec):
            continue
        refusal = refusal_of(planner, tool, args, rec, rid)
        if refusal is None:
            continue  # already as asked, or not refused where the user asked
        snap = planner.snapshot()
        desc = planner.name(ent.name, rid)
        if desc is None:
            continue
        if value_words(rec[status_field]).casefold() in desc.casefold():
            planner.restore(snap)  # "cancel the cancelled booking" asks to be refused
            continue
        then = planner.mutation_goal(tool, desc, args)
        # Said as the same request would be said if it were allowed: on the owner's behalf
        # when a lookup found the record through its owner.
        owned = planner.owners.get((ent.name, rid))
        if owned and owned[0] == desc:
            then = then.model_copy(update={"owner": owned[1], "own_target": owned[2]})
        if not planner.attempt(ToolCall(tool=tool.name, args=args)):
            planner.restore(snap)
            continue
        planner.acted.add((ent.name, rid))  # no later goal acts on the refused record
        planner.goals.append(_refuse_goal(tool, desc, then))
        return Outcome(
            goal_tools=[tool.name],
            kind="infeasible",
            include=[value_words(rec[status_field])],
            rule=f"status_in:{status_field}",
            asked=[(ent.name, rid, status_field, f"the {field_noun(status_field)} of {desc}")],
            refusal=refusal,
        )
    return None


def _refuse_create(planner: Planner, tool: ToolModel, pre: Any) -> Outcome | None:
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
    if pre.kind == "ref_field_gte_param":
        # Low stock first: asking one or two more than there is reads as any order does,
        # where 13 of something with 12 in stock gives the request away.
        cands.sort(key=lambda rid: recs[rid].get(pre.field or "") or 0)
    for rid in cands[:MAX_TARGETS]:
        args: dict[str, Any] = {broken.name: rid}
        for p in tool.params:
            if p.takes and p.name not in args:
                refs = planner.world.records(p.takes)
                ok = [o for o in sorted(refs) if planner.ref_ok(tool, p.name, refs[o])]
                if not ok:
                    return None
                # A record related to what the task touched first, as a feasible create
                # picks its references (Planner._plan_create).
                rng.shuffle(ok)
                ok.sort(key=lambda o, takes=p.takes, refs=refs: not planner.related(takes, refs[o]))
                args[p.name] = ok[0]
        for p in tool.params:
            if not p.takes and p.name not in args:
                value = planner.param_value(tool, p, args)
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
            if pre not in planner.world.violated(tool, args, None):
                continue
            refusal = refusal_of(planner, tool, args, None)
            if refusal is None:
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
                            (field_noun(p.field or p.name), value_words(args[p.name]))
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
                        refusal=refusal,
                        asked=[
                            (
                                broken.takes or "",
                                rid,
                                pre.field or "",
                                f"the {field_noun(pre.field or '')} of {broken_words}",
                            )
                        ],
                    )
            planner.restore(snap)
    return None


def _decoy_refused(
    planner: Planner, entity: str, rid: str, fname: str, allowed: Sequence[Any]
) -> bool:
    """Whether the record a careless agent would take for `rid` (the wrong-record baseline's
    decoy, synthesis.tasks.decoys) is refused by the same status rule: then its refusal
    would be as right as the real one, and the task could not tell them apart."""
    recs = planner.world.records(entity)
    decoy = decoy_record(recs, rid, "id")
    return decoy is None or recs[decoy].get(fname) not in allowed


def _fact_shared(planner: Planner, entity: str, rid: str, fname: str) -> bool:
    """Whether a record sharing a reference with `rid` has the same value of `fname`."""
    recs = planner.world.records(entity)
    mine = planner.neighbourhood(entity, recs[rid]) - {(entity, rid)}
    return any(
        oid != rid
        and r.get(fname) == recs[rid].get(fname)
        and mine & planner.neighbourhood(entity, r)
        for oid, r in sorted(recs.items())
    )


def _refuse_goal(tool: ToolModel, desc: str | None, then: PlanGoal) -> PlanGoal:
    return PlanGoal(kind="refuse", tool=tool.name, verb=then.verb, target=desc, then=then)


# --------------------------------------------------------------------------- reasons
# How a rule's fact reads off the state: the record's own field, a referenced record's field,
# or the rule's own number (a cap, a quota).
_OWN_FIELD = ("status_in", "field_in")
_REF_FIELD = ("ref_field_equals", "ref_field_gte_param", "ref_field_in", "ref_field_covers")
_RULE_VALUE = ("param_at_most", "count_below")
# Rules the request alone breaks, whatever the state (a quantity over a fixed cap, a count
# that is not positive, a move to where it comes from): a refusal needs no call to know.
_TOLD_BY_REQUEST = ("param_at_most", "param_positive", "params_differ")


def refusal_of(
    planner: Planner,
    tool: ToolModel,
    args: dict[str, Any],
    rec: dict[str, Any] | None,
    rid: str | None = None,
) -> dict[str, Any] | None:
    """The reply contract's refusal for calling `tool` with `args` (on `rec`) in the planned
    state: every rule that blocks it (its facts, and its words: the tool's error and the
    system prompt's rule line for it), the prompt's rules that do not block it, and the other
    values of each fact's attribute (what a hedge would say). None when the state already is
    what the request asks for (a transition to the status it has, a duplicate of what
    exists): declining that would be no true answer; and when the request would not be
    refused in the state the user asked in (`rid`: the record acted on, which must exist
    there)."""
    world, model = planner.world, planner.model
    # Blocked in the state the user asked in, not only after the task's own earlier goals:
    # the record exists there and a rule refuses the request there too.
    initial_rec = planner.initial.records(tool.entity).get(rid) if rid is not None else None
    if rec is not None and initial_rec is None:
        return None
    for param in tool.params:  # every record the request names exists where it was asked
        value = args.get(param.name)
        if param.takes and value is not None and value not in planner.initial.records(param.takes):
            return None
    refused_there = planner.initial.violated(tool, args, initial_rec)
    if rec is not None and tool.target_status is not None:
        status_field = model.entity(tool.entity).status_field or "status"
        if rec.get(status_field) == tool.target_status:
            return None
    # Every rule that blocks it now blocked it there too: a rule the task's own earlier goals
    # broke (the class it cancelled takes no reminder) may be the one the system gives as
    # its reason, which is no reason the user was refused for, so a right reply could not
    # be told from a wrong one.
    blocking = world.violated(tool, args, rec)
    if not blocking or any(pre not in refused_there for pre in blocking):
        return None
    if any(pre.kind == "no_duplicate" for pre in blocking):
        return None
    reasons: list[dict[str, Any]] = []
    candidates: list[Any] = []
    blocking_lines: set[str] = set()
    for pre in blocking:
        facts, shows = [], []
        for value, attribute, holder in _facts(planner, tool, pre, args, rec):
            facts.append(value)
            if attribute is not None:  # a value of the state, not of the rule
                # Shown only by a result showing that record's field (its id beside it).
                shows.append({"id": holder, "field": attribute[1], "value": value})
                candidates += [v for v in planner.attribute_values(*attribute) if v != value]
        lines = rule_lines_for(pre.error, model.rules)
        blocking_lines.update(lines)
        reasons.append(
            {
                "rule": f"{pre.kind}:{pre.field or pre.param or ''}",
                "facts": facts,
                "texts": [pre.error, *lines],
                # What shows the agent the block (the reply checks hold a reason to it): the
                # request itself, or a call showing a fact of the state, or the tool's error.
                "told": pre.kind in _TOLD_BY_REQUEST,
                "shows": shows,
            }
        )
    facts = {repr(f) for r in reasons for f in r["facts"]}
    return {
        # The first asked value of the task is the refusal's fact (what the oracle states as
        # the reason); a question the task also asks comes after it.
        "asked_facts": 1,
        "reasons": reasons,
        # What a pasted prompt or tool list would state beside the reason: the system's other
        # rules, and what the tools say of themselves (the reply checks drop those the
        # reason's own words state).
        "rules": [line for line in model.rules if line not in blocking_lines],
        "tools": [t.description for t in model.tools if t.description],
        "candidates": _unique([c for c in candidates if repr(c) not in facts]),
    }


def _facts(
    planner: Planner, tool: ToolModel, pre: Any, args: dict[str, Any], rec: dict[str, Any] | None
) -> list[tuple[Any, tuple[str, str] | None, Any]]:
    """(value, (entity, field) it is a value of, or None, the id of the record holding it)
    of each fact that shows `pre` blocks."""
    model, world = planner.model, planner.world
    if pre.kind in _OWN_FIELD and rec is not None:
        fname = pre.field or model.entity(tool.entity).status_field or "status"
        value = rec.get(fname)
        return [(value, (tool.entity, fname), rec.get("id"))] if value is not None else []
    if pre.kind in _REF_FIELD:
        param = next((p for p in tool.params if p.name == pre.param), None)
        takes = param.takes if param is not None else None
        ref_id = args.get(param.name) if param is not None else None
        ref = world.records(takes).get(ref_id) if takes else None
        if ref is not None and ref.get(pre.field or "") is not None:
            return [(ref[pre.field], (takes, pre.field), ref_id)]
        return []
    if pre.kind in _RULE_VALUE and pre.value is not None:
        return [(pre.value, None, None)]
    if pre.kind == "linked_field_gte_field" and rec is not None:
        ref = model.entity(tool.entity).field(pre.param or "").ref
        linked_id = rec.get(pre.param or "")
        linked = world.records(ref).get(linked_id) if ref else None
        if linked is not None and linked.get(pre.field or "") is not None:
            return [(linked[pre.field], (ref, pre.field), linked_id)]
    return []


def rule_lines_for(error: str, lines: list[str]) -> list[str]:
    """The system prompt's rule lines that state the rule a guard's `error` enforces: those
    sharing the most of its distinctive words (not the domain's nouns every line has, like
    "clinic session"). Several may tie: each is then taken for the reason (lenient to a
    right refusal; the other lines still hold a pasted policy to account)."""
    counts = Counter(w for line in lines for w in content_words(line))
    common = {w for w, n in counts.items() if n > max(1, len(lines) // 2)}
    distinct = content_words(error) - common
    scored = [(len(distinct & content_words(line)), line) for line in lines]
    best = max((n for n, _ in scored), default=0)
    return [line for n, line in scored if best and n == best]


def _unique(values: list[Any]) -> list[Any]:
    seen: dict[str, Any] = {}
    for v in values:
        seen.setdefault(repr(v), v)
    return [seen[k] for k in sorted(seen)]
