"""Decoys: for a record a task is about, the record a careless agent would take instead.

A decoy is another record of the same collection, preferably one that shares a name part
(same surname, similar title) or a field value (same customer, same status) with the
target. The wrong-record baseline swaps the target for it; the self-tests' mutants of reply
tasks look it up the same way.
"""

from __future__ import annotations

from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.models import Scenario
from synthesis.rollouts.answers import NAME_FIELDS
from synthesis.tasks.checks import asked_values, is_collection


def pick_decoy(scenario: Scenario, model: EnvModel | None) -> tuple[Any, Any] | None:
    """(target, decoy): the value naming the record the task is about (an id, or the email
    or name it is looked up by) and the same value of another record of its collection,
    preferring one that shares a name part or a field value with the target.

    The target is an argument of the step whose result the task asks about, else of the
    first changing step that names a record.
    """
    state = scenario.start_state
    writes = model.mutating_tools() if model is not None else None
    steps = sorted({a.step for a in asked_values(scenario.provenance.get("reply"))} - {None})
    order = [i for i in steps if i < len(scenario.gold_chain)]
    order += [
        i
        for i, c in enumerate(scenario.gold_chain)
        if i not in order and (writes is None or c.tool in writes)
    ]
    for i in order:
        for _param, value in sorted(scenario.gold_chain[i].args.items()):
            found = record_named_by(state, value)
            if found is None:
                continue
            coll, rid, fname = found
            decoy = best_decoy(state[coll], rid, fname)
            if decoy is not None:
                return value, decoy
    return None


def record_named_by(state: dict[str, Any], value: Any) -> tuple[str, str, str] | None:
    """(collection, record id, field) of the one record `value` names: its id, else a field
    only that record has this value in."""
    if not isinstance(value, str) or not value:
        return None
    for coll in sorted(state):
        records = state[coll]
        if is_collection(records) and value in records:
            return coll, value, "id"
    for coll in sorted(state):
        records = state[coll]
        if not is_collection(records):
            continue
        hits = [
            (rid, f)
            for rid, rec in sorted(records.items())
            for f, v in sorted(rec.items())
            if v == value and f != "id"
        ]
        if len(hits) == 1:
            return coll, hits[0][0], hits[0][1]
    return None


def best_decoy(records: dict[str, Any], target: str, fname: str) -> Any:
    """Another record's value of `fname` (its id for "id"), most like the target first."""
    base = records[target]
    best: tuple[int, str] | None = None
    for rid, rec in sorted(records.items()):
        if rid == target or not isinstance(rec, dict):
            continue
        value = rid if fname == "id" else rec.get(fname)
        if value is None or value == (target if fname == "id" else base.get(fname)):
            continue
        score = 2 * bool(_name_parts(base) & _name_parts(rec)) + sum(
            1
            for k, v in rec.items()
            if k not in ("id", fname) and k in base and base[k] == v and not isinstance(v, bool)
        )
        if best is None or score > best[0]:
            best = (score, rid)
    if best is None:
        return None
    return best[1] if fname == "id" else records[best[1]][fname]


def _name_parts(record: dict[str, Any]) -> set[str]:
    words: set[str] = set()
    for fname in NAME_FIELDS:
        value = record.get(fname)
        if isinstance(value, str):
            words |= {w for w in value.lower().split() if len(w) > 2}
    return words
