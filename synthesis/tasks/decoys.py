"""Decoys: for a record a task is about, the record a careless agent would take instead.

A decoy is another record of the same collection, preferably one that shares a name part
(same surname, similar title) or a field value (same customer, same status) with the
target. The wrong-record baseline (synthesis.rollouts.agents) swaps the target for it, and
the planner predicts that baseline's run with the same swaps (synthesis.tasks.screens); the
self-tests' mutants of reply tasks look it up the same way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.models import Scenario, ToolCall
from synthesis.tasks.answers import NAME_FIELDS
from synthesis.tasks.checks import asked_values, diff_states, is_collection


def pick_decoys(scenario: Scenario, model: EnvModel | None) -> dict[Any, Any] | None:
    """target -> decoy for every record the task acts on, or None when one has no decoy.

    A target is the value naming a record in a step that matters (an id, or the email or
    name it is looked up by): in the step whose result the task asks about, and in every
    changing step. Its decoy is the same value of another record of its collection that the
    task does not name, preferring one that shares a name part or field values with it (the
    same surname, the same customer, the same status). Every target is swapped, so the
    baseline achieves none of the task's goals honestly.
    """
    state = scenario.start_state
    chain = scenario.gold_chain
    writes = model.mutating_tools() if model is not None else None
    asked = sorted({a.step for a in asked_values(scenario.provenance.get("reply"))} - {None})
    order = [i for i in asked if i < len(chain)]
    order += [
        i for i, c in enumerate(chain) if i not in order and (writes is None or c.tool in writes)
    ]
    seen: dict[str, tuple[str, str, str] | None] = {}

    def named_by(value: Any) -> tuple[str, str, str] | None:
        # Each argument is looked up twice below; a lookup scans every record.
        if not isinstance(value, str):
            return record_named_by(state, value)
        if value not in seen:
            seen[value] = record_named_by(state, value)
        return seen[value]

    named = {
        found[1]
        for call in chain
        for value in call.args.values()
        if (found := named_by(value)) is not None
    }
    if scenario.final_state is not None:
        diff = diff_states(state, scenario.final_state)
        named |= {rid for _, rid, _, _ in diff.changed} | {rid for _, rid in diff.deleted}
    swaps: dict[Any, Any] = {}
    for i in order:
        # An argument that is a record's id names the record the step acts on; only a step
        # without one names it by a field (an email, a name). A value such as a reason code
        # that happens to occur in one record is not the record the step is about.
        named_args = [
            (value, found)
            for _param, value in sorted(chain[i].args.items())
            if (found := named_by(value)) is not None
        ]
        named_args.sort(key=lambda item: item[1][2] != "id")
        for value, found in named_args:
            if value not in swaps:
                coll, rid, fname = found
                other = decoy_record(state[coll], rid, fname, exclude=named)
                if other is None:
                    return None
                swaps[value] = other if fname == "id" else state[coll][other][fname]
                named.add(other)
            break  # one record per step: the first argument that names one
    return swaps or None


def swapped_chain(chain: Sequence[ToolCall], swaps: dict[Any, Any]) -> list[ToolCall]:
    """`chain` with every argument that is a target (`pick_decoys`) replaced by its decoy."""
    return [
        ToolCall(tool=c.tool, args={k: _swapped(v, swaps) for k, v in c.args.items()})
        for c in chain
    ]


def _swapped(value: Any, swaps: dict[Any, Any]) -> Any:
    return swaps.get(value, value) if isinstance(value, str) else value


def record_named_by(state: dict[str, Any], value: Any) -> tuple[str, str, str] | None:
    """(collection, record id, field) of the one record `value` names: its id, else a field
    only that record has this value in."""
    if not isinstance(value, str) or not value:
        return None
    for coll in sorted(state):
        records = state[coll]
        # The key lookup first: it spares scanning every collection that lacks the id.
        if isinstance(records, dict) and value in records and is_collection(records):
            return coll, value, "id"
    for coll in sorted(state):
        records = state[coll]
        if not is_collection(records):
            continue
        # Only a single hit names a record, so the scan needs no order and stops at two.
        hits = []
        for rid, rec in records.items():
            for f, v in rec.items():
                if v == value and f != "id":
                    hits.append((rid, f))
            if len(hits) > 1:
                break
        if len(hits) == 1:
            return coll, hits[0][0], hits[0][1]
    return None


def best_decoy(
    records: dict[str, Any], target: str, fname: str, *, exclude: set[str] = frozenset()
) -> Any:
    """Another record's value of `fname` (its id for "id"), most like the target first;
    records in `exclude` (the ones the task names) are never decoys."""
    rid = decoy_record(records, target, fname, exclude=exclude)
    if rid is None:
        return None
    return rid if fname == "id" else records[rid][fname]


def decoy_record(
    records: dict[str, Any], target: str, fname: str, *, exclude: set[str] = frozenset()
) -> str | None:
    """The id of the record `best_decoy` takes its value from."""
    base = records[target]
    base_parts = _name_parts(base)
    best: tuple[int, str] | None = None
    for rid, rec in sorted(records.items()):
        if rid == target or rid in exclude or not isinstance(rec, dict):
            continue
        value = rid if fname == "id" else rec.get(fname)
        if value is None or value == (target if fname == "id" else base.get(fname)):
            continue
        score = 2 * bool(base_parts & _name_parts(rec)) + sum(
            1
            for k, v in rec.items()
            if k not in ("id", fname) and k in base and base[k] == v and not isinstance(v, bool)
        )
        if best is None or score > best[0]:
            best = (score, rid)
    return best[1] if best is not None else None


def _name_parts(record: dict[str, Any]) -> set[str]:
    words: set[str] = set()
    for fname in NAME_FIELDS:
        value = record.get(fname)
        if isinstance(value, str):
            words |= {w for w in value.lower().split() if len(w) > 2}
    return words
