"""Checks from a gold run's state diff, kept as JSON data and graded by a pure interpreter.

A check never executes code: `evaluate_check` reads a JSON spec, the initial and final state
and the agent's final reply. Derived checks are what the gold run changed (field values,
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
from functools import partial
from typing import Any

import orjson

from synthesis import codec
from synthesis.environments.model import EnvModel
from synthesis.hashing import ID_HEX_MANY, short_id
from synthesis.models import Check, Scenario
from synthesis.tasks.replies import mentions, same_value
from synthesis.tasks.workspace_checks import (
    WORKSPACE_CHECK_TYPES,
    WORKSPACE_EVALUATORS,
    WORKSPACE_KEY,
    describe_workspace_check,
    workspace_check_specs,
)

CHECK_TYPES = (
    "field_equals",
    "field_absent",
    "field_refers_to_new",
    "record_matching",
    "record_absent",
    "attribute_equals",
    "no_collateral_changes",
    "reply_contains",
    "reply_excludes",
    *WORKSPACE_CHECK_TYPES,
)
GOAL, GUARD = "goal", "guard"
ROLES = (GOAL, GUARD)
# The role a spec without one gets: what was asked for is a goal, what must not happen a guard.
DEFAULT_ROLES = {
    "no_collateral_changes": GUARD,
    "no_other_file_changes": GUARD,
    "reply_excludes": GUARD,
}


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


def is_collection(value: Any) -> bool:
    """An id-keyed dict of record dicts (an empty dict counts: records may appear later)."""
    # map() keeps the per-record test in C: every diff and grade asks this of every key.
    return isinstance(value, dict) and all(map(_is_dict, value.values()))


_is_dict = partial(type.__instancecheck__, dict)


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
    specs += workspace_check_specs(scenario.start_state, scenario.final_state)
    specs.extend(reply_checks(scenario.provenance.get("reply")))
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


def changed_paths(before: Any, after: Any, prefix: Sequence[Any] = ()) -> list[list[Any]]:
    """Where two JSON values differ, as paths as deep as the difference goes (a list whose
    length changed differs as a whole)."""
    if type(before) is type(after) and before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        out: list[list[Any]] = []
        for key in sorted(set(before) | set(after), key=str):
            if (key in before) != (key in after):
                out.append([*prefix, key])
            else:
                out += changed_paths(before[key], after[key], [*prefix, key])
        return out
    if isinstance(before, list) and isinstance(after, list) and len(before) == len(after):
        out = []
        for i, (a, b) in enumerate(zip(before, after, strict=True)):
            out += changed_paths(a, b, [*prefix, i])
        return out
    return [list(prefix)]


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


def reply_request(asked: Sequence[AskedValue], decoys: Sequence[Any] = ()) -> dict[str, Any]:
    """What a planner stores at `scenario.provenance["reply"]` for a task whose answer must
    state looked-up values: `derive_checks` makes the reply checks from it, the oracle's
    answer states the values. `decoys` are the same facts of the records a careless agent
    would pick (same surname, similar title); one equal to an asked value is dropped."""
    if not asked:
        raise ValueError("a reply request needs at least one asked value")
    kept = [d for d in decoys if not any(same_value(d, a.value) for a in asked)]
    unique: dict[str, Any] = {codec.dumps_str(d): d for d in kept}
    return {
        "asked": [a.to_json() for a in asked],
        "decoys": [unique[k] for k in sorted(unique)],
    }


def asked_values(request: dict[str, Any] | None) -> list[AskedValue]:
    """The asked values of a stored reply request (none for a task without one)."""
    if not request:
        return []
    return [
        AskedValue(a["what"], a.get("value"), a.get("step"), tuple(a.get("path") or ()))
        for a in request.get("asked", [])
    ]


def reply_checks(request: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Check specs for a reply request: one `reply_contains` goal per asked value, one
    `reply_excludes` guard over the decoys' values."""
    specs: list[dict[str, Any]] = [
        {
            "type": "reply_contains",
            "role": GOAL,
            "what": a.what,
            "value": a.value,
            "step": a.step,
            "path": list(a.path),
        }
        for a in asked_values(request)
    ]
    decoys = (request or {}).get("decoys") or []
    if decoys:
        specs.append({"type": "reply_excludes", "role": GUARD, "values": list(decoys)})
    return specs


def role_of(spec: dict[str, Any]) -> str:
    role = spec.get("role", DEFAULT_ROLES.get(spec.get("type", ""), GOAL))
    if role not in ROLES:
        raise ValueError(f"unknown check role {role!r}")
    return role


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
        values = ", ".join(_v(v) for v in spec["values"])
        return f"The final reply states none of the other records' values ({values})."
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


def evaluate_check(
    spec: dict[str, Any],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> bool:
    """Whether the episode that ended in `final_state` with the final `reply` satisfies the
    JSON check `spec` (pure; never raises on odd data)."""
    kind = spec.get("type")
    if kind not in CHECK_TYPES:
        raise ValueError(f"unknown check type {kind!r}")
    if kind in _REPLY_EVALUATORS:
        return bool(_REPLY_EVALUATORS[kind](spec, reply if isinstance(reply, str) else ""))
    if not isinstance(final_state, dict):
        return False
    try:
        return bool(_EVALUATORS[kind](spec, initial_state or {}, final_state))
    except (KeyError, TypeError, AttributeError, IndexError):
        # A malformed final state (an agent may leave anything behind) fails the check.
        return False


def evaluate_checks(
    checks: Iterable[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> list[bool]:
    return [evaluate_check(_spec_of(c), initial_state, final_state, reply) for c in checks]


@dataclass(frozen=True)
class Grade:
    """An episode's verdicts, reward and success under the reward rule (see `grade`)."""

    reward: float
    success: bool
    verdicts: tuple[bool, ...]
    guard_failed: bool = False


def grade(
    checks: Sequence[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    reply: str = "",
) -> Grade:
    """The reward rule, the one every episode, self-test and export is scored by.

    * any guard fails (collateral damage, a forbidden change, a decoy's value in the reply):
      reward 0;
    * otherwise the share of the goals the agent achieved, counting only goals that did not
      already hold before it acted (the initial state and an empty reply), so doing nothing
      earns 0. A goal that held before and fails after was undone: damage, reward 0;
    * success: every check passes. No checks: reward 0, no success (nothing was proven).
    """
    specs = [_spec_of(c) for c in checks]
    verdicts = tuple(evaluate_check(s, initial_state, final_state, reply) for s in specs)
    if not specs:
        return Grade(0.0, False, verdicts)
    earned: list[bool] = []
    for spec, ok in zip(specs, verdicts, strict=True):
        if role_of(spec) == GUARD:
            if not ok:
                return Grade(0.0, False, verdicts, guard_failed=True)
        elif evaluate_check(spec, initial_state, initial_state, ""):
            if not ok:
                return Grade(0.0, False, verdicts, guard_failed=True)
        else:
            earned.append(ok)
    value = sum(earned) / len(earned) if earned else 0.0
    return Grade(value, all(verdicts), verdicts)


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
        for spec in map(_spec_of, checks)
        if spec.get("type") not in _REPLY_EVALUATORS
    )


def _spec_of(check: Check | dict[str, Any]) -> dict[str, Any]:
    return check.spec if isinstance(check, Check) else check


def _record(state: dict[str, Any], coll: str, rid: str) -> dict[str, Any] | None:
    records = state.get(coll)
    rec = records.get(rid) if isinstance(records, dict) else None
    return rec if isinstance(rec, dict) else None


def _eq(a: Any, b: Any) -> bool:
    """Whether actual `a` is what expected `b` asks for (`b` may hold forms, see value_form)."""
    if isinstance(b, dict) and len(b) == 1 and FORM in b:
        return matches_form(a, b[FORM])
    if isinstance(b, dict):
        return isinstance(a, dict) and a.keys() == b.keys() and all(_eq(a[k], b[k]) for k in b)
    if isinstance(b, list):
        return isinstance(a, list) and len(a) == len(b) and all(map(_eq, a, b))
    # JSON has one number type: 25 and 25.0 are the same value; True is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


# --------------------------------------------------------------------------- generated values

FORM = "$form"


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


def matches_form(value: Any, form: str) -> bool:
    if form == "bool":
        return isinstance(value, bool)
    if form == "int":
        return isinstance(value, int) and not isinstance(value, bool)
    if form == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if form == "list":
        return isinstance(value, list)
    if form == "object":
        return isinstance(value, dict)
    if form.startswith("re:"):
        return isinstance(value, str) and re.fullmatch(form[3:], value) is not None
    return value is not None


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


def _field_equals(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return rec is not None and spec["field"] in rec and _eq(rec[spec["field"]], spec["value"])


def _field_absent(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return rec is not None and spec["field"] not in rec


def _new_ids(initial, final, coll: str) -> set[str]:
    before = initial.get(coll) if isinstance(initial.get(coll), dict) else {}
    after = final.get(coll) if isinstance(final.get(coll), dict) else {}
    return {rid for rid in after if rid not in before}


def _field_refers_to_new(spec, initial, final) -> bool:
    rec = _record(final, spec["collection"], spec["id"])
    return rec is not None and rec.get(spec["field"]) in _new_ids(
        initial, final, spec["target_collection"]
    )


def _record_matching(spec, initial, final) -> bool:
    coll = spec["collection"]
    matches = 0
    for rid in sorted(_new_ids(initial, final, coll)):
        rec = final[coll][rid]
        if not isinstance(rec, dict):
            continue
        if not all(k in rec and _eq(rec[k], v) for k, v in spec["fields"].items()):
            continue
        if all(rec.get(k) in _new_ids(initial, final, t) for k, t in spec["new_refs"].items()):
            matches += 1
    return matches >= spec.get("count", 1)


def _record_absent(spec, initial, final) -> bool:
    records = final.get(spec["collection"])
    return isinstance(records, dict) and spec["id"] not in records


def _attribute_equals(spec, initial, final) -> bool:
    if not spec.get("present", True):
        return spec["attribute"] not in final
    return spec["attribute"] in final and _eq(final[spec["attribute"]], spec["value"])


def _covered(path: list[Any], allowed: set[tuple[Any, ...]]) -> bool:
    return any(tuple(path[:n]) in allowed for n in range(1, len(path) + 1))


def _no_collateral_changes(spec, initial, final) -> bool:
    touched = {tuple(t) for t in spec["touched"]}
    deleted = {tuple(t) for t in spec["deleted"]}
    created: dict[str, int] = spec["created"]
    created_refs: dict[str, list[dict[str, Any]]] | None = spec.get("created_refs")
    allowed_attrs = set(spec["attributes"])
    # Older specs name only the fields; then any change inside a touched field is allowed.
    paths = {tuple(p) for p in spec["paths"]} if "paths" in spec else None
    for key in (set(initial) | set(final)) - {WORKSPACE_KEY}:
        before, after = initial.get(key), final.get(key)
        if key in allowed_attrs:
            if paths is not None and key in initial and key in final:
                if not all(_covered(p, paths) for p in changed_paths(before, after, [key])):
                    return False
            continue
        if (key in initial) != (key in final):
            return False
        if _unchanged(before, after):
            # Nothing in it changed; a collection may still lack the records a task makes.
            if is_collection(before) and created_refs is None and created.get(key, 0):
                return False
            continue
        if not (is_collection(before) and is_collection(after)):
            if before != after:
                return False
            continue
        same = _unchanged_records(before, after)
        for rid, old in before.items():
            if rid not in after:
                if (key, rid) not in deleted:
                    return False
                continue
            if rid in same:
                continue
            new = after[rid]
            for fname in set(old) | set(new):
                if (fname in old) == (fname in new) and (
                    fname not in old or _eq(old[fname], new[fname])
                ):
                    continue
                if (key, rid, fname) not in touched:
                    return False
                if paths is not None and fname in old and fname in new:
                    where = changed_paths(old[fname], new[fname], [key, rid, fname])
                    if not all(_covered(p, paths) for p in where):
                        return False
        new_records = [after[rid] for rid in sorted(after) if rid not in before]
        if created_refs is None:
            if len(new_records) != created.get(key, 0):
                return False
        elif not _assignable(new_records, created_refs.get(key, [])):
            return False
    return True


def _unchanged(before: Any, after: Any) -> bool:
    """Whether `after` is exactly `before`, so no field of it differs under `_eq`: the fast
    path of the collateral check (it grades every episode of every self-test and rollout).

    Equal JSON bytes mean the same keys, values and types (`True` is not `1`, `1` is not
    `1.0`), which is where `_eq` is stricter than `==`; `==` itself rules out a tuple posing
    as a list. A `$form` anywhere (a value `_eq` reads as a pattern) is left to the walk.
    """
    if not before == after:
        return False
    try:
        dumped = orjson.dumps(after)
        return orjson.dumps(before) == dumped and b'"$form"' not in dumped
    except TypeError:  # not JSON (an int key, a huge int): the walk decides
        return False


def _unchanged_records(before: dict[str, Any], after: dict[str, Any]) -> set[Any]:
    """The ids of the records of a collection that `_unchanged` would pass: the equal ones,
    proven strictly equal together in one go (record by record only when that fails)."""
    equal = [rid for rid, old in before.items() if rid in after and old == after[rid]]
    if _unchanged({r: before[r] for r in equal}, {r: after[r] for r in equal}):
        return set(equal)
    return {rid for rid in equal if _unchanged(before[rid], after[rid])}


def _assignable(records: list[Any], slots: list[dict[str, Any]]) -> bool:
    """Whether every new record can be paired with its own gold record whose references to
    existing records it shares (bipartite matching; a handful of records at most)."""
    if len(records) > len(slots):
        return False
    fits = [
        [j for j, slot in enumerate(slots) if isinstance(rec, dict) and _refs_match(rec, slot)]
        for rec in records
    ]
    owner: dict[int, int] = {}

    def place(i: int, seen: set[int]) -> bool:
        for j in fits[i]:
            if j in seen:
                continue
            seen.add(j)
            if j not in owner or place(owner[j], seen):
                owner[j] = i
                return True
        return False

    return all(place(i, set()) for i in range(len(records)))


def _refs_match(record: dict[str, Any], slot: dict[str, Any]) -> bool:
    return all(k in record and record[k] == v for k, v in slot.items())


def _reply_contains(spec, reply: str) -> bool:
    return mentions(reply, spec["value"])


def _reply_excludes(spec, reply: str) -> bool:
    return not any(mentions(reply, v) for v in spec["values"])


_REPLY_EVALUATORS = {"reply_contains": _reply_contains, "reply_excludes": _reply_excludes}
_EVALUATORS = {
    "field_equals": _field_equals,
    "field_absent": _field_absent,
    "field_refers_to_new": _field_refers_to_new,
    "record_matching": _record_matching,
    "record_absent": _record_absent,
    "attribute_equals": _attribute_equals,
    "no_collateral_changes": _no_collateral_changes,
    **WORKSPACE_EVALUATORS,
}
