"""The final answer a scripted agent gives: the outcome in words, read from the episode.

What changed comes from the initial and final state, the values the task asked for from
the tool results (or the final state) where the gold run found them, records are named by
their labels and names (never only by an internal id when words exist), fields by human
names, and no tool name is ever said: these answers are what fine-tuning learns to write.
The self-tests build the same answer from each mutant's own run, so a run that looked at
the wrong record reports the wrong value and the reply checks catch it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from synthesis.environments.model import CollectionModel, EnvModel
from synthesis.models import Scenario
from synthesis.tasks.checks import REMOVED, AskedValue, asked_values, diff_states, is_collection

NAME_FIELDS = ("name", "full_name", "title", "display_name", "username", "label")
MAX_SENTENCES = 8
MAX_FIELDS = 6
_SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)


def oracle_answer(
    scenario: Scenario,
    final_state: dict[str, Any] | None,
    results: Sequence[Any],
    *,
    model: EnvModel | None = None,
) -> str:
    """The answer of an agent that ran (some version of) `scenario`'s gold chain."""
    return final_answer(
        scenario.start_state,
        final_state,
        results,
        model=model,
        asked=asked_values(scenario.provenance.get("reply")),
        infeasible=scenario.kind == "infeasible",
        tool_names=[c.tool for c in scenario.gold_chain],
    )


def final_answer(
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
    results: Sequence[Any],
    *,
    model: EnvModel | None = None,
    asked: Sequence[AskedValue] = (),
    infeasible: bool = False,
    tool_names: Iterable[str] = (),
) -> str:
    """The outcome of an episode in a few plain sentences."""
    names = set(tool_names) | ({t.name for t in model.tools} if model is not None else set())
    words = Words(model, initial_state, final_state or {})
    sentences: list[str] = []
    failures = [r for r in results if _failed(r)]
    if failures:
        # An infeasible task's answer names the rule's fact through its asked values; the
        # tool's own error words ("only an active hold can be captured") would name the
        # asked value ("captured") even when the run read the wrong record, or none.
        reason = "" if infeasible and asked else _error_text(failures[0], names)
        sentences.append(
            "I could not complete every step of the request"
            + (f": {reason}" if reason else "")
            + "."
        )
    if final_state is None:
        sentences.append("I could not confirm the final state of the system.")
        changes: list[str] = []
    else:
        changes = words.changes()
    if infeasible and not changes:
        sentences.append("I did not make the change you asked for, so nothing was modified.")
    elif failures and final_state is not None and not changes:
        sentences.append("Nothing was changed.")
    sentences += changes
    for item in asked:
        value = value_at(item, results, final_state)
        if value is _MISSING:
            sentences.append(f"I could not find {item.what}.")
        else:
            sentences.append(_capital(f"{item.what} is {say(value)}."))
    if not sentences:
        sentences.append("I checked the records you described; nothing needed to change.")
    return " ".join(sentences)


# --------------------------------------------------------------------------- values

_MISSING = object()


def value_at(item: AskedValue, results: Sequence[Any], final_state: dict[str, Any] | None) -> Any:
    """The asked value where the run shows it (step result or final state), else _MISSING."""
    if item.step is None:
        where: Any = final_state
    elif 0 <= item.step < len(results):
        where = results[item.step]
    else:
        return _MISSING
    for key in item.path:
        if isinstance(where, dict) and key in where:
            where = where[key]
        elif isinstance(where, list) and isinstance(key, int) and -len(where) <= key < len(where):
            where = where[key]
        else:
            return _MISSING
    return where


def say(value: Any) -> str:
    """A JSON value in words: dates as dates, snake_case as words, numbers with separators."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return "none"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if value.is_integer():
            return f"{int(value):,}"
        return format(Decimal(repr(value)), ",")
    if isinstance(value, str):
        if _ISO.match(value):
            return _date_words(value)
        return value.replace("_", " ") if _SNAKE.match(value) else value
    if isinstance(value, list):
        shown = [say(v) for v in value[:MAX_FIELDS]]
        more = len(value) - len(shown)
        return ", ".join(shown) + (f" and {more} more" if more > 0 else "") if shown else "none"
    if isinstance(value, dict):
        parts = [f"{field_words(k)} {say(v)}" for k, v in list(value.items())[:MAX_FIELDS]]
        return "; ".join(parts) if parts else "nothing"
    return str(value)


def _date_words(text: str) -> str:
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    day = f"{moment:%B} {moment.day}, {moment.year}"
    if len(text) <= 10:
        return day
    return f"{day} at {moment:%H:%M}"


def field_words(name: str) -> str:
    """'customer_id' -> 'customer', 'dueDate' -> 'due date'."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name)).replace("_", " ").lower().split()
    if len(words) > 1 and words[-1] == "id":
        words = words[:-1]
    return " ".join(words) or str(name)


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _failed(result: Any) -> bool:
    return isinstance(result, dict) and (result.get("success") is False or "error" in result)


def _error_text(result: dict[str, Any], tool_names: set[str]) -> str:
    text = str(result.get("error") or "").strip().rstrip(".")
    # The environment's own message says why, but it may name a tool; then leave it out.
    if not text or any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in tool_names):
        return ""
    return text[:200]


# --------------------------------------------------------------------------- records


class Words:
    """How the answer names records and states changes, from the model's labels."""

    def __init__(
        self, model: EnvModel | None, initial: dict[str, Any], final: dict[str, Any]
    ) -> None:
        self.initial, self.final = initial, final
        self.collections: dict[str, CollectionModel] = {}
        if model is not None:
            self.collections = {c.attribute: c for c in model.collections if c.shape == "keyed"}
        # The id-keyed collections of each state in name order, found once: every record a
        # sentence names is looked up in them.
        self._holders: dict[str, list[tuple[str, dict[str, Any]]]] = {}
        # Names and field orders, worked out once per answer (a record is named in every
        # sentence about one of its fields; neither state changes while the answer is built).
        self._labels: dict[tuple[str, str, int], str] = {}
        self._orders: dict[str, dict[str, int]] = {}

    def noun(self, coll: str) -> str:
        known = self.collections.get(coll)
        if known is not None:
            return known.label or known.name
        words = field_words(coll)
        return words[:-1] if words.endswith("s") and not words.endswith("ss") else words

    def label(self, coll: str, rid: str, *, depth: int = 0) -> str:
        """'customer Ann Lee', 'the order of customer Ann Lee', or 'order ORD-0007'."""
        key = (coll, rid, depth)
        if key not in self._labels:
            self._labels[key] = self._label(coll, rid, depth)
        return self._labels[key]

    def _label(self, coll: str, rid: str, depth: int) -> str:
        record = self._record(coll, rid)
        noun = self.noun(coll)
        if record is None:
            return f"{noun} {rid}"
        name = self._name(coll, record)
        if name:
            return f"{noun} {name}"
        when = next(
            (v for _, v in self._fields(coll, record) if isinstance(v, str) and _ISO.match(v)),
            None,
        )
        if when is not None:
            return f"{noun} on {say(when)}"
        refs = self._refs(coll, record) if depth == 0 else []
        if refs:
            owners = [self.label(c, r, depth=1) for c, r in refs[:2]]
            return f"the {noun} of {owners[0]}" + (f" for {owners[1]}" if len(owners) > 1 else "")
        return f"{noun} {rid}"

    def changes(self) -> list[str]:
        diff = diff_states(self.initial, self.final)
        out: list[str] = []
        for coll, rid, fname, value in diff.changed:
            label = self.label(coll, rid)
            old = self.initial[coll][rid].get(fname, REMOVED)
            known = self.collections.get(coll)
            if value is REMOVED:
                out.append(_capital(f"{label} no longer has a {field_words(fname)}."))
            elif known is not None and fname == known.status_field:
                was = "" if old is REMOVED else f" (it was {say(old)})"
                out.append(_capital(f"{label} is now {say(value)}{was}."))
            else:
                new = self._value_words(coll, fname, value)
                was = "" if old is REMOVED else f" (it was {self._value_words(coll, fname, old)})"
                out.append(_capital(f"the {field_words(fname)} of {label} is now {new}{was}."))
        for coll, rid, record in diff.created:
            out.append(f"I created a new {self.noun(coll)}{self._details(coll, rid, record)}.")
        for coll, rid in diff.deleted:
            out.append(f"I removed {self.label(coll, rid)}.")
        for key, value in diff.attributes:
            if value is REMOVED:
                out.append(f"I cleared the {field_words(key)}.")
            elif isinstance(value, (str, int, float, bool)):
                out.append(_capital(f"the {field_words(key)} is now {say(value)}."))
            else:
                out.append(f"I updated the {field_words(key)}.")
        if len(out) > MAX_SENTENCES:
            rest = len(out) - MAX_SENTENCES + 1
            out = out[: MAX_SENTENCES - 1] + [f"I also made {rest} other changes."]
        return out

    # ------------------------------------------------------------------ internals

    def _record(self, coll: str, rid: str) -> dict[str, Any] | None:
        for state in (self.initial, self.final):
            records = state.get(coll)
            if isinstance(records, dict) and isinstance(records.get(rid), dict):
                return records[rid]
        return None

    def _name(self, coll: str, record: dict[str, Any]) -> str | None:
        known = self.collections.get(coll)
        fields = list(NAME_FIELDS)
        if known is not None:
            fields += [f for f in [known.lookup_field, *known.lookup_fields] if f]
        for fname in fields:
            value = record.get(fname)
            if isinstance(value, str) and value.strip():
                return value
        return None

    def _fields(self, coll: str, record: dict[str, Any]) -> list[tuple[str, Any]]:
        """The record's fields in the model's order (the spec's: owner first), else by name."""
        if coll not in self._orders:
            known = self.collections.get(coll)
            self._orders[coll] = (
                {f.name: i for i, f in enumerate(known.fields)} if known is not None else {}
            )
        order = self._orders[coll]
        return sorted(record.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))

    def _refs(self, coll: str, record: dict[str, Any]) -> list[tuple[str, str]]:
        """The existing records this one belongs to, in field order."""
        out = []
        for fname, value in self._fields(coll, record):
            if fname == "id" or not isinstance(value, str):
                continue
            target = self._collection_holding(value, besides=coll)
            if target is not None:
                out.append((target, value))
        return out

    def _collections(self, which: str) -> list[tuple[str, dict[str, Any]]]:
        if which not in self._holders:
            self._holders[which] = _collections_in(getattr(self, which))
        return self._holders[which]

    def _collection_holding(self, rid: str, *, besides: str) -> str | None:
        for coll, records in self._collections("initial"):
            if coll != besides and rid in records:
                return coll
        return None

    def _value_words(self, coll: str, fname: str, value: Any) -> str:
        if isinstance(value, str):
            target = self._collection_holding(value, besides="")
            if target is not None:
                return self.label(target, value, depth=1)
            for other, records in self._collections("final"):
                if value in records:
                    return f"the new {self.noun(other)}"
        return say(value)

    def _details(self, coll: str, rid: str, record: dict[str, Any]) -> str:
        parts = []
        known = self.collections.get(coll)
        id_field = known.id_field if known is not None else "id"
        for fname, value in self._fields(coll, record):
            if fname in ("id", id_field) or value == rid:
                continue
            if isinstance(value, str) and self._collection_holding(value, besides=coll):
                parts.append(f"for {self._value_words(coll, fname, value)}")
            elif isinstance(value, (int, float, bool)) or (
                isinstance(value, str) and len(value) <= 60
            ):
                parts.append(f"{field_words(fname)} {say(value)}")
        refs = [p for p in parts if p.startswith("for ")]
        rest = [p for p in parts if not p.startswith("for ")][:MAX_FIELDS]
        text = " ".join(refs)
        if rest:
            text += (" " if text else "") + "with " + ", ".join(rest)
        return f" {text}" if text else ""


def _collections_in(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, records) of the id-keyed collections of `state`, in name order."""
    return [(coll, state[coll]) for coll in sorted(state) if is_collection(state[coll])]
