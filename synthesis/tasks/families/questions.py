"""Information-seeking tasks: the goal is a value read from the state, and nothing changes.

"What is the status of the order for Sencha?", "What is the price of the product of that
order?", "How many bookings does Ada Lovelace have?" The planner looks the record up the way
an agent must (the gold chain), reads the asked value off the predicted state, and records it
in the reply contract (`include`); the same field of the records an agent could confuse with
the target (the same customer's other orders) goes to `exclude`, so answering about the wrong
record fails. A question may come with a few changes to other, related records; no change may
alter a value that was asked for.
"""

from __future__ import annotations

import re
from typing import Any

from synthesis.environments.topology import ToolGraph, target_param
from synthesis.models import ToolCall
from synthesis.tasks.families.chains import extend_chain
from synthesis.tasks.phrasing import field_noun, value_words
from synthesis.tasks.plan import PlanGoal
from synthesis.tasks.planner import STEP_RESULT, Outcome, Planner

# Field types whose values read back verbatim in a reply (dates are left to the reply
# normaliser's owner: a reply says "March 4", the state "2025-03-04T10:00").
ASKABLE_TYPES = ("str", "enum", "int", "float")
NAME_LIKE = ("name", "full_name", "title", "display_name", "label", "email")
MAX_DECOYS = 3
QUESTION_COUNTS = (1, 2)
QUESTION_WEIGHTS = (0.7, 0.3)
EXTRA_GOALS = (0, 1, 2, 3)
EXTRA_WEIGHTS = (0.25, 0.3, 0.25, 0.2)
# What an aggregate computes, in a question's words ("count" asks for "the number of").
FUNCTION_WORDS = {"sum": "total", "min": "lowest", "max": "highest", "average": "average"}
AGGREGATE_TRIES = 4
# A reference named for its direction (`to_account_id`, `from_account_id`) reads "to <it>".
_PREPOSITIONS = ("to", "from", "for", "by", "with")


def plan_questions(
    planner: Planner, graph: ToolGraph, initial: dict[str, Any], max_len: int
) -> Outcome | None:
    rng = planner.rng
    outcome = Outcome(goal_tools=[])
    asked: list[tuple[str, str, str, Any]] = []
    for _ in range(rng.choices(QUESTION_COUNTS, weights=QUESTION_WEIGHTS)[0]):
        snap = planner.snapshot()
        marks = (len(outcome.include), len(outcome.exclude), len(outcome.goal_tools), len(asked))
        if not ask_one(planner, outcome, asked) or len(planner.steps) > max_len:
            planner.restore(snap)
            del outcome.include[marks[0] :], outcome.exclude[marks[1] :]
            del outcome.goal_tools[marks[2] :], asked[marks[3] :]
    if not asked:
        return None
    # Values asked come from the state as it was read; a later change must not alter them.
    snap = planner.snapshot()
    n_extra = rng.choices(EXTRA_GOALS, weights=EXTRA_WEIGHTS)[0]
    extra = extend_chain(planner, graph, initial, max_len, n_extra, None)
    if any(not still_as_asked(planner, entry) for entry in asked):
        planner.restore(snap)
        extra = []
    outcome.goal_tools += extra
    return outcome


def still_as_asked(planner: Planner, entry: tuple[Any, ...]) -> bool:
    """Whether an asked value is the same in the predicted final state."""
    if entry[0] == "#count":
        _, tool, args, count = entry
        return len(planner.world.call(tool, args).get("data") or []) == count
    if entry[0] == "#aggregate":
        _, tool, args, value = entry
        return (planner.world.call(tool, args).get("data") or {}).get("value") == value
    entity, rid, fname, value = entry
    return planner.world.records(entity).get(rid, {}).get(fname) == value


def ask_one(planner: Planner, outcome: Outcome, asked: list) -> bool:
    rng = planner.rng
    # Counts ("how many bookings does Ann have") wait for the reply contract to point at a
    # listing's length; `_ask_count` plans them.
    kinds = ["field", "referenced", "aggregate"]
    rng.shuffle(kinds)
    for kind in kinds:
        if kind == "field" and _ask_field(planner, outcome, asked):
            return True
        if kind == "referenced" and _ask_referenced(planner, outcome, asked):
            return True
        if kind == "aggregate" and _ask_aggregate(planner, outcome, asked):
            return True
        if kind == "count" and _ask_count(planner, outcome, asked):
            return True
    return False


def askable_fields(planner: Planner, entity: str, rec: dict[str, Any]) -> list[str]:
    ent = planner.model.entity(entity)
    out = []
    for f in ent.fields:
        value = rec.get(f.name)
        if (
            f.type in ASKABLE_TYPES
            and f.name not in NAME_LIKE
            and f.name != ent.lookup_field
            and f.name not in ent.lookup_fields
            and value is not None
            and not isinstance(value, bool)
            and value_words(value).strip()
        ):
            out.append(f.name)
    planner.rng.shuffle(out)
    # Status and numbers are what people ask about most.
    out.sort(key=lambda n: (n != ent.status_field, ent.field(n).type not in ("int", "float")))
    return out


def _candidates(planner: Planner) -> list[tuple[str, str]]:
    out = []
    for coll in planner.model.collections:
        if coll.shape != "keyed":
            continue
        for rid in sorted(planner.world.records(coll.name)):
            if planner.free(coll.name, rid):
                out.append((coll.name, rid))
    planner.rng.shuffle(out)
    out.sort(key=lambda er: not planner.related(er[0], planner.world.records(er[0])[er[1]]))
    return out[:12]


def _ask_field(planner: Planner, outcome: Outcome, asked: list) -> bool:
    for entity, rid in _candidates(planner):
        rec = planner.world.records(entity)[rid]
        fields = askable_fields(planner, entity, rec)
        if not fields:
            continue
        mark = planner.mark()
        desc = planner.name(entity, rid)
        if desc is None:
            continue
        for fname in fields:
            if record_question(planner, outcome, asked, entity, rid, fname, desc, None):
                return True
        planner.rollback(mark)
    return False


def _ask_referenced(planner: Planner, outcome: Outcome, asked: list) -> bool:
    """Ask about the record another one points at, read with a get-by-id tool."""
    model = planner.model
    gets = {t.entity: t for t in model.tools if t.kind == "query" and t.operation == "get"}
    for entity, rid in _candidates(planner):
        rec = planner.world.records(entity)[rid]
        refs = [
            f
            for f in model.entity(entity).fields
            if f.type == "ref" and f.ref in gets and rec.get(f.name) is not None
        ]
        if not refs:
            continue
        mark = planner.mark()
        owner_desc = planner.name(entity, rid)
        if owner_desc is None:
            continue
        for f in refs:
            ref_entity, ref_id = f.ref or "", rec[f.name]
            target = planner.world.records(ref_entity).get(ref_id)
            tool = gets[ref_entity]
            tp = target_param(tool)
            if target is None or tp is None or not planner.free(ref_entity, ref_id):
                continue
            fields = askable_fields(planner, ref_entity, target)
            if not fields or _named_through(owner_desc, target):
                # "the card of the hold on card Party Card" asks about what the words
                # already name: ask that record's own question instead (_ask_field).
                continue
            inner = planner.mark()
            if planner.run(ToolCall(tool=tool.name, args={tp: ref_id}), "lookup") is None:
                planner.rollback(inner)
                continue
            desc = f"the {model.entity(ref_entity).label} of {owner_desc}"
            for fname in fields:
                if record_question(
                    planner, outcome, asked, ref_entity, ref_id, fname, desc, (entity, rid)
                ):
                    return True
            planner.rollback(inner)
        planner.rollback(mark)
    return False


def _named_through(desc: str, record: dict) -> bool:
    """Whether `desc` names a record through `record` itself (its name, code or address:
    the values with a capital, a digit or an @; statuses and plain words are shared)."""
    return any(
        isinstance(v, str) and len(v) >= 4 and re.search(r"[A-Z0-9@]", v) and v in desc
        for k, v in record.items()
        if k != "id"
    )


def record_question(
    planner: Planner,
    outcome: Outcome,
    asked: list,
    entity: str,
    rid: str,
    fname: str,
    desc: str,
    via: tuple[str, str] | None,
) -> bool:
    value = planner.world.records(entity)[rid][fname]
    answer = value_words(value)
    if answer.casefold() in desc.casefold():
        return False  # the words naming the record already give the answer away
    decoys = _decoys(planner, entity, rid, fname, answer, via)
    label = planner.model.entity(entity).label
    planner.goals.append(
        PlanGoal(
            kind="ask",
            tool=planner.steps[-1].tool if planner.steps else "",
            verb="tell",
            target=desc,
            label=label,
            question=f"the {field_noun(fname)} of {desc}",
        )
    )
    planner.acted.add((entity, rid))
    planner.touched.append((entity, rid))
    outcome.include.append(answer)
    outcome.asked.append((entity, rid, fname, f"the {field_noun(fname)} of {desc}"))
    outcome.exclude += [d for d in decoys if d not in outcome.exclude]
    outcome.goal_tools.append(planner.steps[-1].tool if planner.steps else "")
    asked.append((entity, rid, fname, value))
    return True


def _decoys(
    planner: Planner,
    entity: str,
    rid: str,
    fname: str,
    answer: str,
    via: tuple[str, str] | None,
) -> list[str]:
    """The asked field's values on the records an agent could take for the target."""
    world = planner.world
    if via is None:
        anchor_entity, anchor_id = entity, rid
    else:
        anchor_entity, anchor_id = via
    anchor = world.records(anchor_entity)[anchor_id]
    shared = planner.neighbourhood(anchor_entity, anchor) - {(anchor_entity, anchor_id)}
    siblings = [
        r
        for oid, r in sorted(world.records(anchor_entity).items())
        if oid != anchor_id and shared & planner.neighbourhood(anchor_entity, r)
    ]
    if via is not None:
        ref_field = next(
            f.name
            for f in planner.model.entity(anchor_entity).fields
            if f.type == "ref" and f.ref == entity and anchor.get(f.name) == rid
        )
        siblings = [
            world.records(entity)[r[ref_field]]
            for r in siblings
            if r.get(ref_field) in world.records(entity) and r.get(ref_field) != rid
        ]
    out: list[str] = []
    for r in siblings:
        words = value_words(r.get(fname)) if r.get(fname) is not None else ""
        a, b = words.casefold(), answer.casefold()
        # A decoy that contains the answer (or is inside it) could never be told apart.
        if words and a not in b and b not in a and words not in out:
            out.append(words)
    return out[:MAX_DECOYS]


def _ask_aggregate(planner: Planner, outcome: Outcome, asked: list) -> bool:
    """ "The number of available time slots of Tom Ford", "the average price of the products
    with the category lenses": an aggregate read tool with filters set, its value reported.

    The value is read off the aggregate step's result, so a run that filtered by another
    record reports that record's figure (and the planner's wrong-record screen drops a task
    whose look-alike owner has the same figure)."""
    tools = [t for t in planner.model.tools if t.kind == "query" and t.operation == "aggregate"]
    planner.rng.shuffle(tools)
    for tool in tools:
        for _ in range(AGGREGATE_TRIES):
            mark = planner.mark()
            if _aggregate_question(planner, outcome, asked, tool):
                return True
            planner.rollback(mark)
    return False


def _aggregate_question(planner: Planner, outcome: Outcome, asked: list, tool: Any) -> bool:
    model, rng = planner.model, planner.rng
    args: dict[str, Any] = {}
    chooser = next((p for p in tool.params if p.role == "function"), None)
    function = rng.choice(list(chooser.enum or [])) if chooser is not None else tool.aggregate
    if function is None or (function != "count" and not tool.field):
        return False
    if chooser is not None:
        args[chooser.name] = function
    owners = [p for p in tool.params if p.role in (None, "eq") and p.takes]
    enums = [p for p in tool.params if p.role in (None, "eq") and p.enum and not p.takes]
    owner_words, owner, owner_desc = "", None, ""
    if owners:
        p = rng.choice(owners)
        ids = [
            i
            for i in sorted(planner.world.records(p.takes or ""))
            if planner.free(p.takes or "", i)
        ]
        if not ids:
            return False
        owner = (p.takes or "", rng.choice(ids))
        desc = planner.name(*owner)
        if desc is None:
            return False
        owner_desc = desc
        args[p.name] = owner[1]
        base = p.name[:-3] if p.name.endswith("_id") else p.name
        entity_words = model.entity(p.takes or "").label.replace(" ", "_")
        head, _, rest = base.partition("_")
        if base == entity_words:
            owner_words = f" of {desc}"  # "the time slots of mechanic Ann Lee"
        elif head in _PREPOSITIONS and rest:
            owner_words = f" {head} {desc}"  # "the transfers to cash account IRA Cash"
        else:
            owner_words = f" whose {field_noun(base)} is {desc}"

    chosen = rng.sample(enums, k=min(len(enums), rng.choice((0, 1)) if owners else 1))
    if not owners and not chosen:
        return False
    entity = model.entity(tool.entity or "")
    adjective, phrases = "", []
    for p in chosen:
        value = rng.choice(list(p.enum or []))
        args[p.name] = value
        if p.field == entity.status_field:
            adjective = f"{value_words(value)} "
        else:
            phrases.append(f" with the {field_noun(p.field or p.name)} {value_words(value)}")
    result = planner.run(ToolCall(tool=tool.name, args=args), "lookup")
    data = (result or {}).get("data") or {}
    if not data.get("count") or data.get("value") is None:
        return False  # nothing matched: "the average price of no products" asks nothing
    value = data["value"]
    answer = value_words(value)
    labels = plural(entity.label)
    kept = f"{adjective}{labels}{''.join(phrases)}{owner_words}"
    question = (
        f"the number of {kept}"
        if function == "count"
        else f"the {FUNCTION_WORDS[function]} {field_noun(tool.field)} of the {kept}"
    )
    if owner is not None and answer.casefold() in owner_words.casefold():
        return False  # the words naming the owner already hold the figure
    planner.goals.append(
        PlanGoal(
            kind="ask",
            tool=tool.name,
            verb="tell",
            target=owner_desc,
            label=entity.label,
            question=question,
        )
    )
    if owner is not None:
        planner.acted.add(owner)
        planner.touched.append(owner)
    outcome.include.append(answer)
    outcome.asked.append((STEP_RESULT, len(planner.steps) - 1, ("data", "value"), question))
    outcome.goal_tools.append(tool.name)
    asked.append(("#aggregate", tool.name, args, value))
    return True


def _ask_count(planner: Planner, outcome: Outcome, asked: list) -> bool:
    """ "How many <records> does <owner> have": a list filtered by a reference, counted."""
    model, rng = planner.model, planner.rng
    lists = [
        (t, p)
        for t in model.tools
        if t.kind == "query" and t.operation == "list"
        for p in t.params
        if p.takes and p.takes != t.entity
    ]
    rng.shuffle(lists)
    for tool, p in lists:
        owners = [
            oid
            for oid in sorted(planner.world.records(p.takes or ""))
            if planner.free(p.takes or "", oid)
        ]
        rng.shuffle(owners)
        for owner_id in owners[:6]:
            args: dict[str, Any] = {p.name: owner_id}
            listed = planner.world.call(tool.name, args).get("data") or []
            if not listed:
                continue
            mark = planner.mark()
            owner_desc = planner.name(p.takes or "", owner_id)
            if owner_desc is None or not planner.run(ToolCall(tool=tool.name, args=args), "lookup"):
                planner.rollback(mark)
                continue
            label = model.entity(tool.entity or "").label
            planner.goals.append(
                PlanGoal(
                    kind="ask",
                    tool=tool.name,
                    verb="count",
                    target=owner_desc,
                    label=label,
                    question=f"how many {plural(label)} {owner_desc} has",
                )
            )
            planner.acted.add((p.takes or "", owner_id))
            planner.touched.append((p.takes or "", owner_id))
            outcome.include.append(str(len(listed)))
            outcome.goal_tools.append(tool.name)
            asked.append(("#count", tool.name, args, len(listed)))
            return True
    return False


def plural(noun: str) -> str:
    """English plural of a (last) word: slot -> slots, class -> classes, party -> parties."""
    if noun.endswith(("s", "x", "z", "ch", "sh")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in "aeiou":
        return noun[:-1] + "ies"
    return noun + "s"
