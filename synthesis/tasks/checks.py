"""Checks from a gold run's state diff, kept as JSON data and graded by a pure interpreter.

A check never executes code: `evaluate_check` reads a JSON spec and two state dicts. Derived
checks are what the gold run changed (field values, created records, deletions) plus one
collateral-damage check that everything else stayed as it was.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis import codec
from synthesis.environments.model import EnvModel
from synthesis.hashing import short_id
from synthesis.models import Check, Scenario
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
    *WORKSPACE_CHECK_TYPES,
)


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
    return isinstance(value, dict) and all(isinstance(v, dict) for v in value.values())


def diff_states(initial: dict[str, Any], final: dict[str, Any]) -> StateDiff:
    d = StateDiff()
    # The workspace file tree has checks of its own (synthesis.tasks.workspace_checks).
    for key in sorted((set(initial) | set(final)) - {WORKSPACE_KEY}):
        before, after = initial.get(key), final.get(key)
        if key in initial and key in final and is_collection(before) and is_collection(after):
            for rid in sorted(set(before) | set(after)):
                if rid not in after:
                    d.deleted.append((key, rid))
                elif rid not in before:
                    d.created.append((key, rid, after[rid]))
                else:
                    old, new = before[rid], after[rid]
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
    """Checks that pass on the gold final state and grade any agent's final state.

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
    for coll, _rid, record in diff.created:
        fields, new_refs = {}, {}
        for fname, value in sorted(record.items()):
            if fname == "id":
                continue
            if isinstance(value, str) and value in new_ids:
                new_refs[fname] = new_ids[value]
            else:
                fields[fname] = value
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
    if set(scenario.start_state) | set(scenario.final_state) != {WORKSPACE_KEY}:
        specs.append(
            {
                "type": "no_collateral_changes",
                "touched": [[c, r, f] for c, r, f, _ in diff.changed],
                "deleted": [[c, r] for c, r in diff.deleted],
                "created": dict(sorted(Counter(c for c, _, _ in diff.created).items())),
                "attributes": [k for k, _ in diff.attributes],
            }
        )
    labels = _labels(model)
    return [
        Check(
            check_id=short_id("check", scenario.scenario_id, s),
            scenario_id=scenario.scenario_id,
            description=describe_check(s, labels),
            spec=_jsonable(s),
        )
        for s in specs
    ]


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
    if kind == "no_collateral_changes":
        created = ", ".join(f"{n} new {labels.get(c, c)}" for c, n in spec["created"].items())
        extra = f" besides {created}" if created else ""
        return (
            f"Nothing else changed: only the {len(spec['touched'])} field(s) the task "
            f"requires were modified{extra}, and no other record was added or removed."
        )
    raise ValueError(f"unknown check type {kind!r}")


# --------------------------------------------------------------------------- evaluation


def evaluate_check(
    spec: dict[str, Any], initial_state: dict[str, Any], final_state: dict[str, Any] | None
) -> bool:
    """Whether `final_state` satisfies the JSON check `spec` (pure; never raises on odd data)."""
    kind = spec.get("type")
    if kind not in CHECK_TYPES:
        raise ValueError(f"unknown check type {kind!r}")
    if not isinstance(final_state, dict):
        return False
    try:
        return bool(_EVALUATORS[kind](spec, initial_state or {}, final_state))
    except (KeyError, TypeError, AttributeError):
        # A malformed final state (an agent may leave anything behind) fails the check.
        return False


def evaluate_checks(
    checks: Iterable[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
) -> list[bool]:
    return [evaluate_check(_spec_of(c), initial_state, final_state) for c in checks]


def reward(
    checks: Sequence[Check | dict[str, Any]],
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
) -> float:
    """Fraction of checks passed (0.0 with no checks: an unchecked task proves nothing)."""
    if not checks:
        return 0.0
    verdicts = evaluate_checks(checks, initial_state, final_state)
    return sum(verdicts) / len(verdicts)


def failing_checks(
    checks: Sequence[Check], initial_state: dict[str, Any], final_state: dict[str, Any] | None
) -> list[Check]:
    verdicts = evaluate_checks(checks, initial_state, final_state)
    return [c for c, ok in zip(checks, verdicts, strict=True) if not ok]


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


def _no_collateral_changes(spec, initial, final) -> bool:
    touched = {tuple(t) for t in spec["touched"]}
    deleted = {tuple(t) for t in spec["deleted"]}
    created: dict[str, int] = spec["created"]
    allowed_attrs = set(spec["attributes"])
    for key in (set(initial) | set(final)) - {WORKSPACE_KEY}:
        if key in allowed_attrs:
            continue
        before, after = initial.get(key), final.get(key)
        if (key in initial) != (key in final):
            return False
        if not (is_collection(before) and is_collection(after)):
            if before != after:
                return False
            continue
        for rid, old in before.items():
            if rid not in after:
                if (key, rid) not in deleted:
                    return False
                continue
            new = after[rid]
            for fname in set(old) | set(new):
                if (key, rid, fname) in touched:
                    continue
                if (fname in old) != (fname in new) or (
                    fname in old and not _eq(old[fname], new[fname])
                ):
                    return False
        if sum(1 for rid in after if rid not in before) != created.get(key, 0):
            return False
    return True


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
