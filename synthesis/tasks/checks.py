"""Checks from a gold run's state diff, kept as JSON data and graded by a pure interpreter.

A check never executes code: `evaluate_check` (of the shipped `envfoundry_reward.py`, the one
implementation of the reward rule) reads a JSON spec, the initial and final state and the
agent's final reply. Derived checks are what the gold run changed (field values,
created records, deletions), what the reply must state (`reply_contains`) and must not
(`reply_excludes`), plus one collateral-damage check that everything else stayed as it was.

Every spec has a role: a *goal* is what the task asks for, a *guard* is what must not happen
(collateral damage, a forbidden change, a decoy's value in the reply). `grade` is the one
reward rule (episodes, self-tests and exports all use it): 0 when any guard fails, else the
share of the goals the agent achieved, where a goal that already held before the agent did
anything earns nothing; success is every check passing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis import codec
from synthesis.environments.model import EnvModel
from synthesis.hashing import ID_HEX_MANY, short_id
from synthesis.models import Check, Scenario
from synthesis.tasks.envfoundry_reward import (
    CHECK_TYPES,
    DEFAULT_ROLES,
    FORM,
    GOAL,
    GUARD,
    REPLY_CHECK_TYPES,
    ROLES,
    WORKSPACE_KEY,
    Grade,
    changed_paths,
    evaluate_check,
    fact_value,
    grade_episode,
    is_collection,
    matches_form,
    mentions,
    pastes_text,
    role_of,
    same_value,
    spec_of,
    states_rule,
)
from synthesis.tasks.workspace_checks import (
    WORKSPACE_CHECK_TYPES,
    describe_workspace_check,
    workspace_check_specs,
)

__all__ = [  # the evaluators' names, as the engine has always imported them from here
    "CHECK_TYPES",
    "DEFAULT_ROLES",
    "FORM",
    "GOAL",
    "GUARD",
    "REPLY_CHECK_TYPES",
    "ROLES",
    "Grade",
    "evaluate_check",
    "grade",
    "is_collection",
    "matches_form",
    "mentions",
    "role_of",
]


# --------------------------------------------------------------------------- diff


@dataclass
class StateDiff:
    """What changed between two states, in the record-collection view of the contract."""

    changed: list[tuple[str, str, str, Any]] = field(default_factory=list)
    """(collection, id, field, new value) for fields of surviving records; removed fields
    carry the `REMOVED` marker."""
    created: list[tuple[str, str, dict[str, Any]]] = field(default_factory=list)
    deleted: list[tuple[str, str]] = field(default_factory=list)
    attributes: list[tuple[str, Any]] = field(default_factory=list)
    """Top-level attributes that are not id-keyed collections, with their new value."""

    @property
    def empty(self) -> bool:
        return not (self.changed or self.created or self.deleted or self.attributes)


REMOVED = {"$removed": True}


def diff_states(initial: dict[str, Any], final: dict[str, Any]) -> StateDiff:
    d = StateDiff()
    # The workspace file tree has checks of its own (synthesis.tasks.workspace_checks).
    for key in sorted((set(initial) | set(final)) - {WORKSPACE_KEY}):
        before, after = initial.get(key), final.get(key)
        # Equal values have no difference (states are JSON: no NaN, whose `!=` would differ):
        # C-speed equality skips the field-by-field walk for what a run left alone.
        if key in initial and key in final and before == after:
            continue
        if key in initial and key in final and is_collection(before) and is_collection(after):
            for rid in sorted(set(before) | set(after)):
                if rid not in after:
                    d.deleted.append((key, rid))
                elif rid not in before:
                    d.created.append((key, rid, after[rid]))
                else:
                    old, new = before[rid], after[rid]
                    if old == new:
                        continue
                    for fname in sorted(set(old) | set(new)):
                        if fname not in new:
                            d.changed.append((key, rid, fname, REMOVED))
                        elif fname not in old or old[fname] != new[fname]:
                            d.changed.append((key, rid, fname, new[fname]))
        elif (key in initial) != (key in final) or before != after:
            d.attributes.append((key, after if key in final else REMOVED))
    return d


# --------------------------------------------------------------------------- derivation


def derive_checks(
    scenario: Scenario,
    *,
    model: EnvModel | None = None,
    alternate_final: dict[str, Any] | None = None,
) -> list[Check]:
    """Checks that pass on the gold run and grade any agent's episode.

    Goals are what the gold run changed, plus the reply checks of the planner's reply
    request (`scenario.provenance["reply"]`, see `reply_request`); the guard is the
    collateral-damage check. Every spec carries its role.

    `alternate_final` is the gold chain's final state in another world (another clock and
    random seed): values that differ there were generated (ids, timestamps), so the checks
    ask for their form, not their exact value.
    """
    if scenario.final_state is None:
        raise ValueError(f"scenario {scenario.scenario_id} has no gold final state to diff")
    diff = diff_states(scenario.start_state, scenario.final_state)
    if alternate_final is not None:
        diff = _generated_as_forms(diff, diff_states(scenario.start_state, alternate_final))
    new_ids = {rid: coll for coll, rid, _ in diff.created}
    specs: list[dict[str, Any]] = []
    for coll, rid, fname, value in diff.changed:
        if value is REMOVED:
            specs.append({"type": "field_absent", "collection": coll, "id": rid, "field": fname})
        elif isinstance(value, str) and value in new_ids:
            # The agent's new record may carry another id; what matters is that it points
            # at a record this episode created.
            specs.append(
                {
                    "type": "field_refers_to_new",
                    "collection": coll,
                    "id": rid,
                    "field": fname,
                    "target_collection": new_ids[value],
                }
            )
        else:
            specs.append(
                {
                    "type": "field_equals",
                    "collection": coll,
                    "id": rid,
                    "field": fname,
                    "value": value,
                }
            )
    groups: Counter[str] = Counter()
    shapes: dict[str, dict[str, Any]] = {}
    created_refs: dict[str, list[dict[str, Any]]] = {}
    existing = _existing_ids(scenario.start_state)
    for coll, _rid, record in diff.created:
        fields, new_refs = {}, {}
        for fname, value in sorted(record.items()):
            if fname == "id":
                continue
            if isinstance(value, str) and value in new_ids:
                new_refs[fname] = new_ids[value]
            else:
                fields[fname] = value
        # Which existing records a new one hangs off (its customer, its slot): the guard
        # holds an agent to these, so a record created for the wrong customer is damage.
        created_refs.setdefault(coll, []).append(
            {k: v for k, v in fields.items() if isinstance(v, str) and v in existing}
        )
        shape = {
            "type": "record_matching",
            "collection": coll,
            "fields": fields,
            "new_refs": new_refs,
        }
        key = codec.dumps_str(shape)
        groups[key] += 1
        shapes[key] = shape
    for key in sorted(groups):
        specs.append({**shapes[key], "count": groups[key]})
    for coll, rid in diff.deleted:
        specs.append({"type": "record_absent", "collection": coll, "id": rid})
    for key, value in diff.attributes:
        specs.append(
            {
                "type": "attribute_equals",
                "attribute": key,
                "value": value,
                "present": value is not REMOVED,
            }
        )
    specs += workspace_check_specs(
        scenario.start_state,
        scenario.final_state,
        outputs=(scenario.provenance or {}).get("outputs") or [],
    )
    tools_used = len({call.tool for call in scenario.gold_chain})
    specs.extend(
        reply_checks(
            scenario.provenance.get("reply"),
            scenario.task_text,
            tools_used,
            results=scenario.gold_results,
        )
    )
    specs.append(concise_check(scenario, diff))
    finals = [scenario.final_state] + ([alternate_final] if alternate_final is not None else [])
    if set(scenario.start_state) | set(scenario.final_state) != {WORKSPACE_KEY}:
        # A pure workspace has its own guard (no_other_file_changes).
        specs.append(
            {
                "type": "no_collateral_changes",
                "touched": [[c, r, f] for c, r, f, _ in diff.changed],
                "deleted": [[c, r] for c, r in diff.deleted],
                "created": dict(sorted(Counter(c for c, _, _ in diff.created).items())),
                "created_refs": {c: created_refs[c] for c in sorted(created_refs)},
                "attributes": [k for k, _ in diff.attributes],
                "paths": _allowed_paths(scenario.start_state, finals, diff),
            }
        )
    for spec in specs:
        spec.setdefault("role", DEFAULT_ROLES.get(spec["type"], GOAL))
    labels = _labels(model)
    return [
        Check(
            check_id=short_id("check", scenario.scenario_id, s, length=ID_HEX_MANY),
            scenario_id=scenario.scenario_id,
            description=describe_check(s, labels),
            spec=_jsonable(s),
        )
        for s in specs
    ]


def _existing_ids(state: dict[str, Any]) -> set[str]:
    return {
        rid
        for value in state.values()
        if is_collection(value)
        for rid in value
        if isinstance(rid, str)
    }


def _allowed_paths(
    initial: dict[str, Any], finals: Sequence[dict[str, Any]], diff: StateDiff
) -> list[list[Any]]:
    """Every path inside the touched fields and attributes that the gold run changed (in
    this world or the other one): changes anywhere else inside them are collateral."""
    paths: dict[str, list[Any]] = {}
    for final in finals:
        for coll, rid, fname, _ in diff.changed:
            old = initial.get(coll, {}).get(rid, {})
            new = final.get(coll, {}).get(rid, {}) if isinstance(final.get(coll), dict) else {}
            if isinstance(new, dict) and fname in old and fname in new:
                found = changed_paths(old[fname], new[fname], [coll, rid, fname])
            else:
                found = [[coll, rid, fname]]
            for p in found or [[coll, rid, fname]]:
                paths[codec.dumps_str(p)] = p
        for key, _ in diff.attributes:
            if key in initial and key in final:
                found = changed_paths(initial[key], final[key], [key]) or [[key]]
            else:
                found = [[key]]
            for p in found:
                paths[codec.dumps_str(p)] = p
    return [paths[k] for k in sorted(paths)]


# --------------------------------------------------------------------------- reply checks


@dataclass(frozen=True)
class AskedValue:
    """A value the task asks the agent to report, and where the gold run shows it.

    `step` is the gold step whose result holds it at `path` (None: the final state holds it
    at `path`). The oracle's answer and every mutant's answer read it from there, so a run
    that looked at another record reports that record's value.
    """

    what: str
    """Human words for it: 'the balance of the account of Ann Lee'."""
    value: Any
    step: int | None
    path: tuple[Any, ...]

    def to_json(self) -> dict[str, Any]:
        return {"what": self.what, "value": self.value, "step": self.step, "path": list(self.path)}


def reply_request(
    asked: Sequence[AskedValue],
    decoys: Sequence[Any] = (),
    *,
    candidates: Sequence[Any] = (),
    refusal: dict[str, Any] | None = None,
    rules: Sequence[str] = (),
    tools: Sequence[str] = (),
) -> dict[str, Any]:
    """What a planner stores at `scenario.provenance["reply"]` for a task whose answer is
    graded: `derive_checks` makes the reply checks from it, the oracle's answer states the
    values. `decoys` are the same facts of the records a careless agent would pick (same
    surname, similar title); `candidates` every other value the asked attributes take (what
    a hedge would list); one equal to an asked value is dropped. `refusal` (an infeasible
    request): every rule that blocks it with its facts and words, and the rules that do not
    (synthesis.tasks.families.refusals.refusal_of); `rules` and `tools`: the system's rules
    and its tools' descriptions, which a question's answer does not recite."""
    if not asked:
        raise ValueError("a reply request needs at least one asked value")

    def others(values: Sequence[Any]) -> list[Any]:
        kept = [v for v in values if not any(same_value(v, a.value) for a in asked)]
        unique: dict[str, Any] = {codec.dumps_str(v): v for v in kept}
        return [unique[k] for k in sorted(unique)]

    out: dict[str, Any] = {"asked": [a.to_json() for a in asked], "decoys": others(decoys)}
    if candidates:
        out["candidates"] = others(candidates)
    if refusal is not None:
        out["refusal"] = {k: v for k, v in refusal.items() if k != "candidates"}
    else:
        if rules:
            out["rules"] = list(rules)
        if tools:
            out["tools"] = list(tools)
    return out


def asked_values(request: dict[str, Any] | None) -> list[AskedValue]:
    """The asked values of a stored reply request (none for a task without one)."""
    if not request:
        return []
    return [
        AskedValue(a["what"], a.get("value"), a.get("step"), tuple(a.get("path") or ()))
        for a in request.get("asked", [])
    ]


def reply_checks(
    request: dict[str, Any] | None,
    task_text: str = "",
    tools_used: int = 0,
    results: Sequence[Any] | None = None,
) -> list[dict[str, Any]]:
    """Check specs for a reply request (the reply contract of the shipped module):

    * a question: one `reply_contains` goal per asked value;
    * an infeasible request: one `reply_refuses` goal (declined, nothing claimed done, a true
      reason: any blocking rule's fact or words) and a `reply_states_no_other_rule` guard
      over the system prompt's rules that do not block it;
    * both: a `reply_excludes` guard over the decoys' values and the other candidate values
      of what was asked (a hedge), except values the request or a blocking rule's error
      states (quoting "only a pending or paid order can be cancelled" is a true reason); a
      rule line of the prompt that names them is read as a quotation (`quoted`), cut out
      of the reply before the guard looks.

    `task_text` is the request: a fact it states shows nothing the agent learnt (no reason),
    and its own words never count as stating a rule. `tools_used`: how many tools the gold
    chain calls; a reply may word as many tool descriptions (telling what each call did), a
    pasted tool list words them all. `results`: the gold run's, where an asked value is a
    record's field: a reply earns for it only where a call showed that record (`record`)."""
    if not request:
        return []
    specs: list[dict[str, Any]] = []
    refusal = request.get("refusal")
    said_by_reasons: list[str] = [task_text]
    quoted: list[str] = []
    if refusal is not None:
        reasons = [
            {
                "rule": r["rule"],
                "facts": [f for f in r["facts"] if _learnt(f, r, task_text)],
                "texts": list(r["texts"]),
                # What shows the block (`block_shown` of the shipped module): a reason the
                # episode never saw earns nothing, however true.
                "told": bool(r.get("told")),
                "shows": list(r.get("shows") or ()),
            }
            for r in refusal["reasons"]
        ]
        # The tool's error (each reason's first text) is what a right refusal says: the values
        # it names are no hedge. A rule line of the system prompt may name every value of the
        # field ("orders move pending -> paid -> shipped -> delivered"): quoted word for word
        # it is a true reason too, so the guard reads the reply with those quotations cut out
        # rather than give up the values they name.
        said_by_reasons += [r["texts"][0] for r in reasons if r["texts"]]
        quoted = [t for r in reasons for t in r["texts"][1:]]
        alone = bool(refusal.get("alone", True))
        specs.append(
            {
                "type": "reply_refuses",
                "role": GOAL,
                "reasons": reasons,
                "request": task_text,
                "alone": alone,
            }
        )
        # A rule the reason's own words already state cannot be told apart from the reason
        # ("only a completed booking can be reviewed" reads as "only confirmed bookings can
        # be cancelled, completed or changed"): it is not held against the reply.
        texts = [t for r in reasons for t in r["texts"]]

        def told_apart(items: Sequence[str]) -> list[str]:
            # Neither worded nor pasted by a reason: "only a resolved work order can be
            # closed" repeats six words of "a resolved work order can be reopened …".
            return [
                i
                for i in items
                if not any(
                    states_rule(t, i, task_text) or pastes_text(t, i, task_text) for t in texts
                )
            ]

        others, tools = (
            told_apart(refusal.get("rules") or ()),
            told_apart(refusal.get("tools") or ()),
        )
        # A question the task also asks is answered as any question is.
        questions = asked_values(request)[int(refusal.get("asked_facts", 1)) :]
        specs += _contains_checks(questions, results)
        # Refused alone and asked nothing else, the reply is the refusal: no other rule may be
        # worded. Beside changes it tells or an answer it gives (which share words with the
        # rules they follow), none may be pasted.
        plain = alone and not questions
        if others or tools:
            specs.append(
                {
                    "type": "reply_states_no_other_rule",
                    "role": GUARD,
                    "rules": others,
                    "tools": tools,
                    "request": task_text,
                    "match": "words" if plain else "verbatim",
                    "tolerate_tools": tools_used,
                }
            )
    else:
        # A question's answer restates no more than one rule of the system (saying what a
        # change did may echo one): the system prompt pasted into a reply states them all,
        # and with them every status word its rules mention.
        if request.get("rules") or request.get("tools"):
            specs.append(
                {
                    "type": "reply_states_no_other_rule",
                    "role": GUARD,
                    "rules": list(request.get("rules") or ()),
                    "tools": list(request.get("tools") or ()),
                    "request": task_text,
                    "match": "verbatim",
                }
            )
        specs += _contains_checks(asked_values(request), results)
    facts = [f for r in (refusal or {}).get("reasons", []) for f in r["facts"]]
    excluded = [
        v
        for v in [*(request.get("decoys") or []), *(request.get("candidates") or [])]
        if not any(mentions(text, v) for text in said_by_reasons)
        and not any(same_value(v, f) for f in facts)
    ]
    if excluded:
        unique = {codec.dumps_str(v): v for v in excluded}
        values = [unique[k] for k in sorted(unique)]
        spec: dict[str, Any] = {"type": "reply_excludes", "role": GUARD, "values": values}
        lines = [t for t in quoted if any(mentions(t, v) for v in values)]
        if lines:
            spec["quoted"] = lines
        specs.append(spec)
    return specs


def _learnt(fact: Any, reason: dict[str, Any], task_text: str) -> bool:
    """Whether a refusal's `fact` can show the agent learnt the block: one the request does not
    state, or one it states ("the slot booked for Wednesday") that a call shows on its
    record (`shows`): the reply must then say it in its own words, not inside the request's
    (`said_beyond_echo` of the shipped module). A rule's figure the request states shows
    nothing."""
    if not mentions(task_text, fact):
        return True
    return any(same_value(fact, fact_value(s)) for s in reason.get("shows") or ())


def _contains_checks(
    asked: Sequence[AskedValue], results: Sequence[Any] | None = None
) -> list[dict[str, Any]]:
    specs = []
    for a in asked:
        spec = {
            "type": "reply_contains",
            "role": GOAL,
            "what": a.what,
            "value": a.value,
            "step": a.step,
            "path": list(a.path),
        }
        record = _record_shown(a, results)
        if record is not None:
            spec["record"] = record
        specs.append(spec)
    return specs


def _record_shown(asked: AskedValue, results: Sequence[Any] | None) -> dict[str, Any] | None:
    """{"id", "field"} of the record whose field the gold step's result shows as the asked
    value (None for a figure a step computed, or a value no record of a result holds)."""
    if results is None or asked.step is None or not 0 <= asked.step < len(results):
        return None
    if len(asked.path) < 2 or not isinstance(asked.path[-1], str):
        return None
    holder: Any = results[asked.step]
    for key in asked.path[:-1]:
        try:
            holder = holder[key]
        except (KeyError, IndexError, TypeError):
            return None
    if not isinstance(holder, dict) or not isinstance(holder.get("id"), (str, int)):
        return None
    return {"id": holder["id"], "field": asked.path[-1]}


# How many values of the state a reply may state beyond what the request and a right answer
# need (names of the records it acted on, the values it set and replaced, the asked facts).
CONCISE_EXTRA_VALUES = 8


def concise_check(scenario: Scenario, diff: StateDiff) -> dict[str, Any]:
    """The guard every reply is held to: it states at most CONCISE_EXTRA_VALUES values of
    the state besides those the request states and those a right answer would give (asked
    values, a refusal's facts, the records the gold run changed, made or removed, what it
    set and what it replaced)."""
    allowed: list[Any] = [a.value for a in asked_values(scenario.provenance.get("reply"))]
    refusal = (scenario.provenance.get("reply") or {}).get("refusal") or {}
    allowed += [f for r in refusal.get("reasons", []) for f in r.get("facts", [])]
    for coll, rid, fname, value in diff.changed:
        allowed += [rid, value, scenario.start_state.get(coll, {}).get(rid, {}).get(fname)]
    for _coll, _rid, record in diff.created:
        allowed += list(record.values())
    allowed += [rid for _coll, rid in diff.deleted]
    allowed += [value for _key, value in diff.attributes]
    scalars = [v for v in allowed if v is not REMOVED and isinstance(v, (str, int, float))]
    unique = {codec.dumps_str(v): v for v in scalars if not isinstance(v, bool)}
    return {
        "type": "reply_concise",
        "role": GUARD,
        "limit": CONCISE_EXTRA_VALUES,
        "request": scenario.task_text,
        "allowed": [unique[k] for k in sorted(unique)],
    }


def _jsonable(spec: dict[str, Any]) -> dict[str, Any]:
    # REMOVED is a marker object; in stored JSON it is the literal {"$removed": true}.
    return codec.loads(codec.dumps(spec))


def _labels(model: EnvModel | None) -> dict[str, str]:
    return {c.attribute: c.label for c in model.collections} if model is not None else {}


def _v(value: Any) -> str:
    return codec.dumps_str(value)


def describe_check(spec: dict[str, Any], labels: dict[str, str] | None = None) -> str:
    """Plain-English statement of what the check requires."""
    labels = labels or {}
    kind = spec["type"]
    if kind in WORKSPACE_CHECK_TYPES:
        return describe_workspace_check(spec)
    coll = spec.get("collection", "")
    noun = labels.get(coll, f"{coll} record")
    if kind == "field_equals":
        return f"The {spec['field']} of {noun} {spec['id']} is {_v(spec['value'])}."
    if kind == "field_absent":
        return f"The {noun} {spec['id']} no longer has a {spec['field']}."
    if kind == "field_refers_to_new":
        target = labels.get(spec["target_collection"], spec["target_collection"])
        return f"The {spec['field']} of {noun} {spec['id']} points to a newly created {target}."
    if kind == "record_matching":
        parts = [f"{k} {_v(v)}" for k, v in spec["fields"].items()]
        parts += [f"{k} pointing to a new {labels.get(t, t)}" for k, t in spec["new_refs"].items()]
        many = "" if spec.get("count", 1) == 1 else f" ({spec['count']} of them)"
        return f"A new {noun} exists{many} with " + ", ".join(parts) + "."
    if kind == "record_absent":
        return f"The {noun} {spec['id']} has been removed."
    if kind == "attribute_equals":
        if not spec.get("present", True):
            return f"The state no longer has {spec['attribute']!r}."
        return f"The state's {spec['attribute']} is {_v(spec['value'])}."
    if kind == "reply_contains":
        return f"The final reply states {spec['what']}: {_v(spec['value'])}."
    if kind == "reply_excludes":
        values = ", ".join(_v(v) for v in spec["values"][:12])
        more = f" and {len(spec['values']) - 12} more" if len(spec["values"]) > 12 else ""
        return f"The final reply states none of the other candidate values ({values}{more})."
    if kind == "reply_refuses":
        reasons = "; ".join(r["texts"][0] for r in spec["reasons"] if r["texts"])
        return (
            "The final reply declines, claims nothing was done, and gives a true reason "
            f"(any of: {reasons})."
        )
    if kind == "reply_states_no_other_rule":
        n = len(spec.get("rules") or ()) + len(spec.get("tools") or ())
        if spec.get("match") == "verbatim":
            return f"The final reply pastes none of the system's {n} rules and tool descriptions."
        return (
            f"The final reply states none of the system's {n} rules and tool descriptions "
            "that do not word the rule blocking this request."
        )
    if kind == "reply_concise":
        return (
            f"The final reply states at most {spec['limit']} values of the records beyond "
            "the request and the answer."
        )
    if kind == "no_collateral_changes":
        created = ", ".join(f"{n} new {labels.get(c, c)}" for c, n in spec["created"].items())
        extra = f" besides {created}" if created else ""
        return (
            f"Nothing else changed: only the {len(spec['touched'])} field(s) the task "
            f"requires were modified{extra}, new records belong to the records the task "
            "names, and no other record was added or removed."
        )
    raise ValueError(f"unknown check type {kind!r}")


# --------------------------------------------------------------------------- evaluation
# The evaluators and the reward rule are the shipped module's (synthesis/tasks/
# envfoundry_reward.py): one implementation for the engine and every trainer.


def evaluate_checks(
    checks: Iterable[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> list[bool]:
    return [evaluate_check(spec_of(c), initial_state, final_state, reply) for c in checks]


# The engine's name for the rule: a `Grade` (reward, success, verdicts, guard_failed).
grade = grade_episode


def reward(
    checks: Sequence[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> float:
    """The episode's reward under the rule of `grade`."""
    return grade(checks, initial_state, final_state, reply).reward


def failing_checks(
    checks: Sequence[Check],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> list[Check]:
    verdicts = evaluate_checks(checks, initial_state, final_state, reply)
    return [c for c, ok in zip(checks, verdicts, strict=True) if not ok]


def fails_on_state(
    checks: Sequence[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
) -> bool:
    """Whether a check that reads no reply fails on `final_state`: then no reply can make the
    episode a success under `grade`, and the reply need not be worked out to know it."""
    return any(
        not evaluate_check(spec, initial_state, final_state)
        for spec in map(spec_of, checks)
        if spec.get("type") not in REPLY_CHECK_TYPES
    )


# --------------------------------------------------------------------------- generated values


def value_form(value: Any) -> dict[str, str]:
    """What a generated value looks like, as a check asks for it: `{"$form": ...}`.

    Text keeps its punctuation and the length of each run of letters and digits
    ('TX-4821' -> [0-9A-Za-z]{2}-[0-9A-Za-z]{4}), numbers their type.
    """
    if isinstance(value, bool):
        return {FORM: "bool"}
    if isinstance(value, int):
        return {FORM: "int"}
    if isinstance(value, float):
        return {FORM: "number"}
    if isinstance(value, str):
        parts = []
        for run in re.findall(r"[0-9A-Za-z]+|[^0-9A-Za-z]+", value):
            if run[0].isalnum():
                parts.append(f"[0-9A-Za-z]{{{len(run)}}}")
            else:
                parts.append(re.escape(run))
        return {FORM: "re:" + "".join(parts)}
    return {
        FORM: "list" if isinstance(value, list) else "object" if isinstance(value, dict) else "any"
    }


def _masked(value: Any, other: Any) -> Any:
    """`value` with every part that differs in `other` replaced by its form."""
    if value == other and type(value) is type(other):
        return value
    if isinstance(value, dict) and isinstance(other, dict) and value.keys() == other.keys():
        return {k: _masked(value[k], other[k]) for k in value}
    if isinstance(value, list) and isinstance(other, list) and len(value) == len(other):
        return [_masked(a, b) for a, b in zip(value, other, strict=True)]
    return value_form(value)


def _generated_as_forms(diff: StateDiff, other: StateDiff) -> StateDiff:
    """The gold diff with values generated differently in `other` replaced by their forms."""
    changed_other = {(c, r, f): v for c, r, f, v in other.changed}
    attrs_other = dict(other.attributes)
    created_other: dict[str, list[dict[str, Any]]] = {}
    for coll, _rid, record in other.created:
        created_other.setdefault(coll, []).append(record)
    out = StateDiff(deleted=list(diff.deleted))
    for coll, rid, fname, value in diff.changed:
        alt = changed_other.get((coll, rid, fname), value)
        out.changed.append((coll, rid, fname, value if value is REMOVED else _masked(value, alt)))
    seen: dict[str, int] = {}
    for coll, rid, record in diff.created:
        # New records are paired in the order they were made: their ids may be the very
        # values that were generated.
        i = seen.get(coll, 0)
        seen[coll] = i + 1
        peers = created_other.get(coll, [])
        alt = peers[i] if i < len(peers) else record
        masked = {k: (v if k == "id" else _masked(v, alt.get(k, v))) for k, v in record.items()}
        out.created.append((coll, rid, masked))
    for key, value in diff.attributes:
        alt = attrs_other.get(key, value)
        out.attributes.append((key, value if value is REMOVED else _masked(value, alt)))
    return out
