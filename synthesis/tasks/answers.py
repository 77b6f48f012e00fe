"""The final answer a scripted agent gives: what its own conversation showed, in plain words.

These answers are what fine-tuning learns to write, so they say only what the agent saw or
did: each change is told from the call that made it (the values the agent sent, the record
its result returned), records are named by the labels and names the tool results showed
(an internal id only when nothing shown names the record), fields by human names, and no
tool name is ever said. Nothing comes from the final state the agent never saw, except an
asked value whose gold run showed it nowhere else (`AskedValue.step` None).

A request the system refused is declined with the refusal's own words and the fact the run
read, that nothing changed, and nothing else. The self-tests build the same answer from each
mutant's own run, so a run that looked at the wrong record reports the wrong value and the
reply checks catch it; for the same reason a refusal's words are given only by a run that
showed the fact explaining them (`_reason`), and are left out when they would trip a reply
guard (`final_answer`). It sits with the tasks, beside the checks it answers: the oracle and
baseline policies (synthesis.rollouts.agents), the self-test and the planner's wrong-record
screen (synthesis.tasks.screens) all build it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

from synthesis.environments.model import CollectionModel, EnvModel, ToolModel
from synthesis.environments.workspace_verbs import MUTATE_VERBS
from synthesis.models import Scenario, ToolCall
from synthesis.tasks.checks import AskedValue, asked_values, is_collection, reply_checks
from synthesis.tasks.envfoundry_reward import (
    WORKSPACE_KEY,
    evaluate_check,
    mentions,
    same_value,
    workspace_tree,
)
from synthesis.tasks.text import values as text_values

NAME_FIELDS = ("name", "full_name", "title", "display_name", "username", "label")
MAX_CHANGES = 6
MAX_FIELDS = 6
MAX_REASON = 200
NOTHING_CHANGED = "Nothing was changed."
NOTHING_DUE = "I checked the records you described; nothing needed to change."
CHANGES_MADE = "I made the changes the request asked for."
# The reply guards a refusal's words may trip (see `final_answer`).
REASON_GUARDS = ("reply_excludes", "reply_states_no_other_rule")
_SNAKE = re.compile(r"^[a-z0-9]+(?:_[a-z0-9]+)+$")
_SNAKE_IN_TEXT = re.compile(r"(?<![\w-])[a-z0-9]+(?:_[a-z0-9]+)+(?![\w-])")
_ISO = re.compile(
    r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$"
)
# Without a model, a tool whose name starts with one of these only reads.
_QUERY_WORDS = frozenset(
    "get find list search lookup query show view read fetch count describe total sum "
    "average min max lowest highest compare ls tree cat head tail wc grep stat".split()
)
_QUERY_OPERATIONS = frozenset({"list", "get", "find", "search", "aggregate", "compare"})
_CREATE_VERBS = frozenset({"create", "add", "new", "make", "open", "book", "place", "submit"})


def oracle_answer(
    scenario: Scenario,
    final_state: dict[str, Any] | None,
    results: Sequence[Any],
    *,
    model: EnvModel | None = None,
    calls: Sequence[ToolCall] | None = None,
) -> str:
    """The answer of an agent that ran (some version of) `scenario`'s gold chain: `results`
    holds the result of each gold step (None for a step that did not run), `calls` the call
    it made at each (by default the gold chain's: a mutant that passes its own is named by
    the records it acted on)."""
    reply = scenario.provenance.get("reply")
    return final_answer(
        scenario.start_state,
        final_state,
        results,
        model=model,
        asked=asked_values(reply),
        infeasible=scenario.kind == "infeasible",
        declined=((reply or {}).get("refusal") or {}).get("declined"),
        calls=scenario.gold_chain if calls is None else calls,
        guards=[
            s
            for s in reply_checks(
                reply, scenario.task_text, len({c.tool for c in scenario.gold_chain})
            )
            if s["type"] in REASON_GUARDS
        ],
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
    calls: Sequence[ToolCall | tuple[str, dict[str, Any]]] = (),
    guards: Sequence[dict[str, Any]] = (),
    declined: dict[str, str] | None = None,
) -> str:
    """The outcome of an episode in a few plain sentences: what the calls (`calls[i]` made
    `results[i]`) did, or why the system refused one, and the asked values the run showed.

    `declined`: work no call refused that the run found it could not do (a report of data
    the folder does not hold: synthesis.tasks.projects.missing_data), {"what": what was not
    done, "because": why, with `{fact}` where the first asked value goes as the run showed
    it}; the reply then says so in place of that value's own sentence.

    `guards` are reply checks (`REASON_GUARDS`) the answer is held to: a refusal's words that
    would make it fail one (restate a rule that does not block the request, name a decoy's
    value) are left out, the fact the run read then being the reason it gives."""
    steps = [
        Step(i, tool, args, results[i] if i < len(results) else None)
        for i, (tool, args) in enumerate(_as_pair(c) for c in calls)
    ]
    names = set(tool_names) | {s.tool for s in steps}
    names |= {t.name for t in model.tools} if model is not None else set()
    words = Words(model, initial_state, final_state or {}, results)
    shown = [value_at(item, results, final_state) for item in asked]
    refused = next((s for s in steps if _failed(s.result)), None)
    if refused is None:
        refused = next((Step(i, "", {}, r) for i, r in enumerate(results) if _failed(r)), None)
    made = [s for s in steps if s.result is not None and not _failed(s.result)]
    made = [s for s in made if words.mutates(s.tool)]
    changes = words.changes(made)
    # Work found undoable by looking (no call refused it): told as declined when the run
    # left everything as it was (a program it ran counts as a call that may have written).
    found_undoable = (
        declined is not None
        and infeasible
        and refused is None
        and bool(asked)
        and final_state is not None
        and final_state == initial_state
    )

    def told(reason: str) -> str:
        sentences: list[str] = []
        if refused is not None and infeasible:
            sentences.append(words.declined(refused, reason))
        elif refused is not None:
            sentences.append(
                "I could not complete every step of the request"
                + (f": {reason}" if reason else "")
                + "."
            )
        elif found_undoable:
            assert declined is not None
            sentences.append(_declined_work(declined, asked[0], shown[0]))
        elif infeasible and not made:
            sentences.append("I did not make the change you asked for.")
        if final_state is None:
            sentences.append("I could not confirm the final state of the system.")
        sentences += changes
        for item, value in list(zip(asked, shown, strict=True))[1 if found_undoable else 0 :]:
            if value is _MISSING:
                sentences.append(f"I could not look up {item.what}.")
            else:
                field = item.path[-1] if item.path and isinstance(item.path[-1], str) else ""
                sentences.append(_capital(f"{item.what} is {say_field(field, value)}."))
        if (refused is not None or infeasible) and not made and final_state is not None:
            sentences.append(NOTHING_CHANGED)
        elif found_undoable:
            sentences.append(NOTHING_CHANGED)
        if not sentences:
            # No call this answer can tell of changed anything; a state that differs anyway
            # (a tool the model takes for a read, results it was not given) is not denied:
            # in a workspace, the files a program wrote are named.
            changed = final_state is not None and final_state != initial_state
            files = _files_changed(initial_state, final_state) if changed else ""
            sentences.append(files or (CHANGES_MADE if changed else NOTHING_DUE))
        return " ".join(sentences)

    reason = ""
    if refused is not None:
        reason = _reason(refused.result, names, asked, shown, words, refusal=infeasible)
    text = told(reason)
    if reason and not _passes(guards, text, initial_state, final_state):
        plain = told("")
        if _passes(guards, plain, initial_state, final_state):
            return plain
    return text


def _files_changed(initial: dict[str, Any], final: dict[str, Any] | None) -> str:
    """'I wrote reports/a.md and changed config/app.ini.': the workspace's files a run
    added, changed or removed (a program run with `run` writes them; no call tells of
    them), or "" when the states have no workspace or no file differs."""
    before, after = workspace_tree(initial), workspace_tree(final)
    if before is None or after is None:
        return ""
    (old, _), (new, _) = before, after
    told = []
    for verb, paths in (
        ("wrote", [p for p in sorted(new) if p not in old]),
        ("changed", [p for p in sorted(new) if p in old and old[p] != new[p]]),
        ("removed", [p for p in sorted(old) if p not in new]),
    ):
        if paths:
            named = paths[:MAX_CHANGES] + (["others"] if len(paths) > MAX_CHANGES else [])
            told.append(f"{verb} {_listed(named)}")
    return f"I {_listed(told)}." if told else ""


def _listed(parts: list[str]) -> str:
    return parts[0] if len(parts) == 1 else ", ".join(parts[:-1]) + " and " + parts[-1]


def _declined_work(declined: dict[str, str], item: AskedValue, value: Any) -> str:
    """'I couldn't write reports/2024-Q3_sales_summary.md: the latest sales ledger in data/ is
    sales_2024-06.csv, so there is none for Q3 2024.', the fact as the run showed it (a run
    that did not look says it could not)."""
    head = f"I couldn't {declined['what']}"
    if value is _MISSING:
        return f"{head}; I could not look up {item.what}."
    fact = value.strip() if isinstance(value, str) else say(value)
    return f"{head}: {declined['because'].format(fact=fact)}."


def _passes(
    guards: Sequence[dict[str, Any]],
    reply: str,
    initial_state: dict[str, Any],
    final_state: dict[str, Any] | None,
) -> bool:
    return all(evaluate_check(spec, initial_state, final_state, reply) for spec in guards)


@dataclass(frozen=True)
class Step:
    """One call of the run and what it returned (None: it did not run)."""

    index: int
    tool: str
    args: dict[str, Any]
    result: Any


def _as_pair(call: ToolCall | tuple[str, dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    if isinstance(call, ToolCall):
        return call.tool, dict(call.args)
    tool, args = call
    return tool, dict(args)


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
        parts = [f"{field_noun(k)} {say(v)}" for k, v in list(value.items())[:MAX_FIELDS]]
        return "; ".join(parts) if parts else "nothing"
    return str(value)


def _date_words(text: str) -> str:
    """'2025-03-04T14:05:00' -> 'March 4, 2025 at 2:05 PM' (the reply normaliser reads both)."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text
    day = f"{moment:%B} {moment.day}, {moment.year}"
    if len(text) <= 10:
        return day
    hour = moment.hour % 12 or 12
    clock = f"{hour}" if moment.minute == 0 else f"{hour}:{moment.minute:02d}"
    return f"{day} at {clock} {'AM' if moment.hour < 12 else 'PM'}"


def field_words(name: str) -> str:
    """'customer_id' -> 'customer', 'dueDate' -> 'due date'."""
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name)).replace("_", " ").lower().split()
    if len(words) > 1 and words[-1] == "id":
        words = words[:-1]
    return " ".join(words) or str(name)


def field_noun(name: str) -> str:
    """A field said as people name what it holds ('available' -> 'quantity available'):
    synthesis.tasks.text.values.field_noun of these words."""
    return text_values.field_noun(field_words(name))


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]


def _failed(result: Any) -> bool:
    return isinstance(result, dict) and (result.get("success") is False or "error" in result)


def _reason(
    result: dict[str, Any],
    tool_names: set[str],
    asked: Sequence[AskedValue],
    shown: Sequence[Any],
    words: Words,
    *,
    refusal: bool,
) -> str:
    """The refusal's own words, made readable, or "" when they cannot be said: they name a
    tool. A refused request's reason is what the tool answered, whatever record the run
    acted on: the conversation showed it, and a refusal quoting it is a right refusal (a
    task whose careless run would be refused alike is not planned). Elsewhere the words are
    left out when they name an asked value the run did not show."""
    text = str(result.get("error") or "").strip().rstrip(".")
    if not text or any(re.search(rf"(?<!\w){re.escape(n)}(?!\w)", text) for n in tool_names if n):
        return ""
    if not refusal:
        for item, value in zip(asked, shown, strict=True):
            unseen = value is _MISSING or not same_value(value, item.value)
            if unseen and mentions(text, item.value):
                return ""
    return words.humanised(text)[:MAX_REASON]


# --------------------------------------------------------------------------- records


class Words:
    """How the answer names records and tells what each call did, from the model's labels and
    the records the tool results showed (`results`); the states only say which collection
    an id belongs to and whether a record is new."""

    def __init__(
        self,
        model: EnvModel | None,
        initial: dict[str, Any],
        final: dict[str, Any],
        results: Sequence[Any] = (),
    ) -> None:
        self.workspace = WORKSPACE_KEY in initial or WORKSPACE_KEY in final
        self.collections: dict[str, CollectionModel] = {}
        self.entities: dict[str, str] = {}
        if model is not None:
            keyed = [c for c in model.collections if c.shape == "keyed"]
            self.collections = {c.attribute: c for c in keyed}
            self.entities = {c.name: c.attribute for c in keyed}
        self.tools = {t.name: t for t in model.tools} if model is not None else {}
        self.results = list(results)
        self.id_fields = {"id"} | {c.id_field for c in self.collections.values()}
        # Every record the conversation showed, by id, its fields as last shown.
        self.seen: dict[str, dict[str, Any]] = {}
        for result in self.results:
            _collect_records(result, self.id_fields, self.seen)
        self._holders = {
            which: _collections_in(state)
            for which, state in (("initial", initial), ("final", final))
        }
        self._labels: dict[tuple[str, str, int], str | None] = {}
        self._orders: dict[str, dict[str, int]] = {}

    # ------------------------------------------------------------------ what calls did

    def mutates(self, tool_name: str) -> bool:
        tool = self.tools.get(tool_name)
        if tool is not None:
            return tool.kind == "mutate" and tool.operation not in _QUERY_OPERATIONS
        if self.workspace:
            return tool_name in MUTATE_VERBS
        return tool_name.split("_")[0].lower() not in _QUERY_WORDS

    def changes(self, steps: Sequence[Step]) -> list[str]:
        """One sentence per change the steps made, in order; the same sentence once."""
        out: list[str] = []
        for step in steps:
            text = self._file_change(step) if self.workspace else self._record_change(step)
            if text and text not in out:
                out.append(text)
        if len(out) > MAX_CHANGES:
            out = out[: MAX_CHANGES - 1] + ["I also made the other changes you asked for."]
        return out

    def declined(self, step: Step, reason: str) -> str:
        """'I couldn't pay the order of artist Ann Lee: only a pending order can be paid.'"""
        what = self._attempt(step)
        return f"I couldn't {what}" + (f": {reason}." if reason else "; the system refused it.")

    def humanised(self, text: str) -> str:
        """An error message with its codes as words and the record ids it names as labels."""
        text = _SNAKE_IN_TEXT.sub(lambda m: m.group(0).replace("_", " "), text)

        def named(m: re.Match[str]) -> str:
            coll = self._collection_of(m.group(0))
            label = self.label(coll, m.group(0)) if coll is not None else None
            # A record nothing names stays as the message wrote it ("order ORD-7").
            return label if label and m.group(0) not in label else m.group(0)

        return re.sub(r"(?<![\w-])[A-Za-z0-9][\w-]*\d[\w-]*(?![\w-])", named, text)

    def _record_change(self, step: Step) -> str | None:
        tool = self.tools.get(step.tool)
        record = _record_of(step.result)
        coll = self.entities.get(tool.entity or "") if tool is not None else None
        if coll is None and record is not None:
            coll = self._collection_of(record.get("id"))
        operation = tool.operation if tool is not None else None
        rid = self._target(tool, step, record)
        if operation == "create" or (
            operation is None and rid is not None and self._is_new(rid) and coll is not None
        ):
            noun = self.noun(coll) if coll is not None else field_words(step.tool)
            return f"I created a new {noun}{self._details(tool, step.args)}."
        label = self.label(coll, rid) if coll is not None and rid is not None else None
        if label is None:
            return None
        if operation == "transition":
            known = self.collections.get(coll or "")
            status_field = known.status_field if known is not None else None
            status = record.get(status_field) if record and status_field else None
            status = status if status is not None else tool.target_status if tool else None
            if status is not None:
                return _capital(f"{label} is now {say(status)}.")
        if operation == "update" and tool is not None and tool.field:
            param = next((p for p in tool.params if p.field == tool.field and not p.takes), None)
            if param is not None and param.name in step.args:
                value = self._value_words(step.args[param.name], tool.field)
                return f"I changed the {field_noun(tool.field)} of {label} to {value}."
        if operation == "delete":
            return f"I removed {label}."
        return self._shown_change(coll, label, step, record)

    def _shown_change(
        self, coll: str | None, label: str, step: Step, record: dict[str, Any] | None
    ) -> str:
        """A change no model names, told from the record as its result showed it against the
        same record as an earlier result showed it: the fields that differ."""
        shown: dict[str, dict[str, Any]] = {}
        for result in self.results[: step.index]:
            _collect_records(result, self.id_fields, shown)
        before = shown.get(str(record.get("id")), {}) if record is not None else {}
        changed = [(f, v) for f, v in (record or {}).items() if f in before and before[f] != v][:2]
        if not changed:
            return f"I updated {label}."
        known = self.collections.get(coll or "")
        status_field = known.status_field if known is not None else "status"
        parts = [
            f"{label} is now {say(v)}"
            if f == status_field
            else f"I changed the {field_noun(f)} of {label} to {self._value_words(v, f)}"
            for f, v in changed
        ]
        return _capital(" and ".join(parts) + ".")

    def _file_change(self, step: Step) -> str | None:
        """A workspace verb's change in words (its paths are the names people use)."""
        args = {k: v for k, v in step.args.items() if isinstance(v, str)}
        path = args.get("path", "")
        folder = args.get("folder", "")
        where = "the top folder" if folder in ("", ".") else folder
        said = {
            "mkdir": f"I created the folder {path}.",
            "mv": f"I moved {path} to {where}.",
            "cp": f"I copied {path} to {where}.",
            "rename": f"I renamed {path} to {args.get('new_name', '')}.",
            "rm": f"I deleted the file {path}.",
            "rmdir": f"I removed the empty folder {path}.",
            "touch": f"I created the empty file {path}.",
            "append": f'I added the line "{args.get("line", "")}" at the end of {path}.',
            "replace": f'In {path}, I changed "{args.get("old", "")}" to "{args.get("new", "")}".',
            "tag": f"I tagged {path} as {args.get('tag', '')}.",
            "untag": f"I took the label {args.get('tag', '')} off {path}.",
            "set_status": f"I marked {path} as {say(args.get('status', ''))}.",
            "archive": f"I archived {path}.",
            "trash": f"I threw {path} away (it can still be brought back).",
            "restore": f"I put {path} back where it was.",
        }
        if step.tool in said and path:
            return said[step.tool]
        return f"I changed {path}." if path else None

    def _attempt(self, step: Step) -> str:
        """What the refused call tried to do, as a verb phrase ('flag the comment of ...')."""
        tool = self.tools.get(step.tool)
        if self.workspace:
            return _file_attempt(step)
        if tool is None:
            return "do that"
        verb, _, rest = tool.name.partition("_")
        # The verb must not itself be a tool's name (a workspace's "restore", say).
        plain_verb = verb.isalpha() and verb not in self.tools
        if tool.operation == "create" and (verb in _CREATE_VERBS or not plain_verb):
            coll = self.entities.get(tool.entity or "")
            return f"create the new {self.noun(coll) if coll else field_words(tool.entity or '')}"
        for p in tool.params:
            if not p.takes or p.name not in step.args:
                continue
            coll = self.entities.get(p.takes)
            if coll is None or rest not in (p.takes, coll):
                continue
            label = self.label(coll, str(step.args[p.name]))
            if plain_verb and label is not None:
                return f"{verb} {_definite(label)}"
        coll = self.entities.get(tool.entity or "")
        rid = self._target(tool, step, None)
        label = self.label(coll, rid) if coll is not None and rid is not None else None
        if label is not None and tool.target_status:
            return f"mark {_definite(label)} as {say(tool.target_status)}"
        if label is not None and tool.operation == "update" and tool.field:
            return f"change the {field_noun(tool.field)} of {_definite(label)}"
        if tool.operation == "create" and coll is not None:
            return f"create the new {self.noun(coll)}"
        return "do that"

    def _target(self, tool: ToolModel | None, step: Step, record: dict[str, Any] | None) -> Any:
        """The id of the record the call acted on: the one its result returned, else the
        argument naming a record of the tool's collection."""
        if record is not None and isinstance(record.get("id"), (str, int)):
            return record["id"]
        if tool is not None:
            for p in tool.params:
                if p.takes and p.takes == tool.entity and p.name in step.args:
                    return step.args[p.name]
        return None

    def _details(self, tool: ToolModel | None, args: dict[str, Any]) -> str:
        """' for customer Ann Lee with quantity 2': the records and values the call sent, in
        the tool's parameter order (its owner first)."""
        refs: list[tuple[str, str]] = []  # (a record's label, the words naming it)
        values: list[str] = []
        params = {p.name: p for p in tool.params} if tool is not None else {}
        order = {name: i for i, name in enumerate(params)}
        for name in sorted(args, key=lambda n: (order.get(n, len(order)), n)):
            value, p = args[name], params.get(name)
            coll = self.entities.get(p.takes or "") if p is not None else None
            if coll is None and isinstance(value, str):
                coll = self._collection_of(value)
            if coll is not None and isinstance(value, (str, int)):
                label = self.label(coll, value)
                # A record another reference already names ("for the comment of reader Ann
                # Lee" beside "for reader Ann Lee") is not named twice.
                if label is not None and not any(label in ref for _, ref in refs):
                    refs = [(lab, ref) for lab, ref in refs if lab not in label]
                    refs.append((label, f"{_preposition(name)} {label}"))
            elif isinstance(value, (int, float, bool)) or (
                isinstance(value, str) and len(value) <= 80
            ):
                field = p.field if p is not None and p.field else name
                values.append(f"{field_noun(field)} {_quoted(value, field)}")
        text = " ".join(ref for _, ref in refs)
        values = values[:MAX_FIELDS]
        if values:
            joined = ", ".join(values[:-1]) + " and " + values[-1] if len(values) > 1 else values[0]
            text += (" " if text else "") + "with " + joined
        return f" {text}" if text else ""

    def _value_words(self, value: Any, field: str = "") -> str:
        if isinstance(value, str):
            coll = self._collection_of(value)
            if coll is not None:
                if self._is_new(value):
                    return f"the new {self.noun(coll)}"
                label = self.label(coll, value)
                if label is not None:
                    return label
        return _quoted(value, field)

    # ------------------------------------------------------------------ naming

    def noun(self, coll: str) -> str:
        known = self.collections.get(coll)
        if known is not None:
            return known.label or known.name
        words = field_words(coll)
        return words[:-1] if words.endswith("s") and not words.endswith("ss") else words

    def label(self, coll: str, rid: Any, *, depth: int = 0) -> str | None:
        """'customer Ann Lee', 'the order of customer Ann Lee', 'time slot on March 4, 2026
        at 2 PM', or 'order ORD-0007' when nothing the conversation showed names it (None
        for an owner named only by its id: a label does not go on with ids)."""
        key = (coll, str(rid), depth)
        if key not in self._labels:
            self._labels[key] = self._label(coll, str(rid), depth)
        return self._labels[key]

    def _label(self, coll: str, rid: str, depth: int) -> str | None:
        noun = self.noun(coll)
        fallback = f"{noun} {rid}" if depth == 0 else None
        record = self.seen.get(rid)
        if record is None:
            return fallback
        name = self._name(coll, record)
        if name:
            twins = self._named_alike(coll, rid, name) if depth == 0 else []
            if not twins:
                return f"{noun} {name}"
            # Another record the conversation showed has the same name ("from wallet Office
            # Wallet to wallet Office Wallet" tells nothing): its owner tells them apart when
            # the twins' owners differ, else its id.
            owner = self._owner(coll, record, depth)
            if owner and all(self._owner(coll, self.seen[t], depth) != owner for t in twins):
                return f"{noun} {name} of {owner}"
            return f"{noun} {name} ({rid})"
        when = next(
            (v for _, v in self._fields(coll, record) if isinstance(v, str) and _ISO.match(v)),
            None,
        )
        if when is not None:
            return f"{noun} on {say(when)}"
        if depth < 2:
            owners = [
                o for c, r in self._refs(coll, record) if (o := self.label(c, r, depth=depth + 1))
            ]
            if owners:
                return f"the {noun} of {owners[0]}" + (
                    f" for {owners[1]}" if len(owners) > 1 else ""
                )
        return fallback

    def _named_alike(self, coll: str, rid: str, name: str) -> list[str]:
        """The other records of `coll` the conversation showed under the same name."""
        return [
            other
            for other, record in self.seen.items()
            if other != rid
            and self._collection_of(other) == coll
            and self._name(coll, record) == name
        ]

    def _owner(self, coll: str, record: dict[str, Any], depth: int) -> str | None:
        """The label of the first record this one belongs to that the conversation named."""
        for c, r in self._refs(coll, record):
            owner = self.label(c, r, depth=depth + 1)
            if owner:
                return owner
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
        """The records this one belongs to, in field order."""
        out = []
        for fname, value in self._fields(coll, record):
            if fname == "id" or not isinstance(value, str):
                continue
            target = self._collection_of(value, besides=coll)
            if target is not None:
                out.append((target, value))
        return out[:2]

    def _collection_of(self, rid: Any, *, besides: str = "") -> str | None:
        if not isinstance(rid, (str, int)) or isinstance(rid, bool):
            return None
        for which in ("initial", "final"):
            for coll, records in self._holders[which]:
                if coll != besides and str(rid) in records:
                    return coll
        return None

    def _is_new(self, rid: Any) -> bool:
        return not any(str(rid) in records for _, records in self._holders["initial"])


def _file_attempt(step: Step) -> str:
    """What a refused workspace call tried to do ('move week-02/a.md into spare'), in the
    words of its own arguments: the call showed them, so saying them back is grounded."""
    args = {k: v for k, v in step.args.items() if isinstance(v, str)}
    path = args.get("path")
    if path is None:
        return "do that"
    folder = args.get("folder")
    where = "the top folder" if folder in ("", ".") else folder
    if step.tool in ("mv", "cp") and where is not None:
        return f"{'move' if step.tool == 'mv' else 'copy'} {path} into {where}"
    if step.tool == "rename" and "new_name" in args:
        # Not "rename": that is the tool's name, which an answer never says.
        return f"give {path} the name {args['new_name']}"
    return f"change {path}"


def _definite(label: str) -> str:
    """'time slot on March 3' -> 'the time slot on March 3' (a label inside a phrase)."""
    return label if label.startswith("the ") else f"the {label}"


def say_field(field: str, value: Any) -> str:
    """`value` of field `field` in words: an amount of money as people write one ("$8.30",
    "$330"), not as the number it is stored as ("8.3"); anything else as `say` words it."""
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if number and field and text_values.is_money(field_words(field)):
        return f"${int(value):,}" if float(value).is_integer() else f"${value:,.2f}"
    return say(value)


def _quoted(value: Any, field: str = "") -> str:
    """A value in words, free text in quotes ('title "Youth work for May"'): a sentence
    must show where a value someone wrote ends. `field`: the value's field, if known."""
    text = say_field(field, value)
    if isinstance(value, str) and not _ISO.match(value) and len(text.split()) >= 3:
        return f'"{text}"'
    return text


def _preposition(param: str) -> str:
    head = param.split("_")[0].lower()
    return head if head in ("from", "to") else "for"


def _record_of(result: Any) -> dict[str, Any] | None:
    """The record a call's result returned (`{"data": {...}}` or the result itself)."""
    data = result.get("data", result) if isinstance(result, dict) else None
    return data if isinstance(data, dict) and "id" in data else None


def _collect_records(value: Any, id_fields: set[str], into: dict[str, dict[str, Any]]) -> None:
    if isinstance(value, dict):
        for field in id_fields:
            rid = value.get(field)
            if isinstance(rid, (str, int)) and not isinstance(rid, bool):
                into[str(rid)] = {**into.get(str(rid), {}), **value}
                break
        for child in value.values():
            if isinstance(child, (dict, list)):
                _collect_records(child, id_fields, into)
    elif isinstance(value, list):
        for child in value:
            _collect_records(child, id_fields, into)


def _collections_in(state: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """(name, records) of the id-keyed collections of `state`, in name order."""
    return [(coll, state[coll]) for coll in sorted(state) if is_collection(state[coll])]
