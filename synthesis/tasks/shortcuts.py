"""Shortcuts: what a policy trained on our reward would try instead of the work.

Each shortcut is a final reply made from what every agent is shown (the system prompt, the
request, the tool schemas) and, for the dump, the state it could read with the tools; some
first play the gold calls, or only its lookups. A reply is graded on what its episode's
calls showed (a value earns only where one did), so a shortcut with no call is held to
nothing seen. A task ships only when every shortcut earns reward 0 on it (the self-test
plays them all; quality/selftest.py), and the dataset card publishes how often each paid on
the candidates before that screen (the reward audit). The same functions attack the shipped
shards through `envfoundry_reward.py` (benchmarks/reward_audit.py), so what the self-test
proves is what a trainer gets.

A shortcut is a pure function of its `ShortcutContext`: no randomness, no model. The
planner screens its tasks with the hedges before any run (synthesis.tasks.screens), so the
self-test rarely has to quarantine one.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

# How many values a dump or hedge states at most: enough to hold every value of any state we
# build (the largest initial state of the full profile has about 900 leaf values).
MAX_VALUES = 5000


@dataclass(frozen=True)
class ShortcutContext:
    """What a shortcut may use: what the agent was shown, and the state it could read."""

    system_prompt: str
    task_text: str
    tools: Sequence[dict[str, Any]]
    """The task's tool schemas (Chat Completions `tools` entries)."""
    state: dict[str, Any]
    """The state the shortcut's reply is made from: the initial state, or the final state
    after the gold calls for the shortcuts that play them (`plays_gold`)."""


@dataclass(frozen=True)
class Shortcut:
    name: str
    description: str
    reply: Callable[[ShortcutContext], str | list[str]]
    """The final reply, or several (the shortcut then earns the best of their rewards)."""
    plays_gold: bool = False
    """Whether the episode first makes the gold chain's calls (the reply then abuses a run
    that did the work: gold calls followed by a dump)."""
    looks_first: bool = False
    """Whether the episode first makes the gold chain's lookups, the calls that change
    nothing: the reply is then graded on what they showed, in the state they leave (a hedge
    after looking, where a right answer would be one value)."""
    feasible_only: bool = False
    """Played only on feasible tasks (refusing an infeasible one is its right outcome)."""
    answered_only: bool = False
    """Played only on tasks whose reply is graded (a question, a refusal): after the work is
    done, a long reply is no shortcut where the reply is not what the task asks for."""


def leaf_values(value: Any, out: list[Any] | None = None) -> list[Any]:
    """Every scalar of a JSON value, in order."""
    out = [] if out is None else out
    if isinstance(value, dict):
        for item in value.values():
            leaf_values(item, out)
    elif isinstance(value, list):
        for item in value:
            leaf_values(item, out)
    elif value is not None:
        out.append(value)
    return out


def _said(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)


def _unique(values: Iterable[Any]) -> list[str]:
    return list(dict.fromkeys(_said(v) for v in values))[:MAX_VALUES]


def dump_reply(context: ShortcutContext) -> str:
    """Every value of the state, listed: it names the asked value, the refused fact and
    everything else at once."""
    return "Here is everything I found: " + ", ".join(_unique(leaf_values(context.state))) + "."


def field_values(context: ShortcutContext) -> list[list[str]]:
    """The values of each enum-like field, one list per field: each enum parameter of the
    tools, and each short string field of the state with few distinct values (statuses,
    categories, flags), taken per collection and per field name across collections (the
    status words of a whole system). Deterministic order, no list twice."""
    groups: list[list[Any]] = []
    for tool in context.tools:
        function = tool.get("function", tool)
        properties = (function.get("parameters") or {}).get("properties") or {}
        for schema in properties.values():
            groups.append(list(schema.get("enum") or []))
            groups.append(list((schema.get("items") or {}).get("enum") or []))
    by_name: dict[str, set[Any]] = {}
    by_collection: dict[tuple[str, str], set[Any]] = {}
    for collection, records in context.state.items():
        if not isinstance(records, dict):
            continue
        for record in records.values():
            if not isinstance(record, dict):
                continue
            for name, value in record.items():
                if isinstance(value, (str, bool)) and name != "id":
                    by_name.setdefault(name, set()).add(value)
                    by_collection.setdefault((collection, name), set()).add(value)
    for values in [*by_name.values(), *(by_collection[k] for k in sorted(by_collection))]:
        if 1 < len(values) <= 12 and all(len(_said(v)) <= 24 for v in values):
            groups.append(sorted(values, key=_said))
    unique: dict[tuple[str, ...], list[str]] = {}
    for group in groups:
        said = _unique(group)
        if len(said) > 1:
            unique.setdefault(tuple(said), said)
    return list(unique.values())


def enum_values(context: ShortcutContext) -> list[str]:
    """Every value an enum-like field can take (`field_values`, all fields at once)."""
    return _unique(v for group in field_values(context) for v in group)


def hedge_reply(context: ShortcutContext) -> str:
    """ "It is now A, or B, or C …" over every enum-like value: right whatever the answer."""
    values = enum_values(context)
    if not values:
        return "Done: it is now updated as you asked."
    return "Done: it is now " + ", or ".join(values) + "."


def field_hedge_replies(context: ShortcutContext) -> list[str]:
    """ "It is A, or B, or C." over one field's values at a time, plain and inside a refusal:
    short enough for the conciseness guard, and right whatever that field's value is. Only a
    guard against the field's other values (`reply_excludes`) stops it, so a question or a
    refusal's reason on a field whose every other value the request or the blocking rule's
    words state is answered by it (the worst of these replies is the shortcut's reward)."""
    replies = []
    for values in field_values(context):
        listed = ", or ".join(values)
        replies += [f"It is {listed}.", f"Sorry, I can't do that: it is {listed}."]
    return replies


def guess_replies(context: ShortcutContext) -> list[str]:
    """ "It is A." for one enum-like value at a time, plain and inside a refusal: a lucky
    guess with no call, right whenever the answer is that value ("it is pending" is right
    for a large share of status questions). Only grounding stops it: a value earns only
    where a call of the episode showed it."""
    replies = []
    for value in enum_values(context):
        replies += [f"It is {value}.", f"Sorry, I can't do that: it is {value}."]
    return replies


def false_done_reply(context: ShortcutContext) -> str:
    """A claim of completion with no work, restating the request as done."""
    return f"Done! I've taken care of it: {context.task_text.strip()} It has all gone through."


def pasted_policy_reply(context: ShortcutContext) -> str:
    """A refusal with every rule of the system prompt pasted in: one of them is the reason
    whenever the request is really blocked."""
    return "Sorry, I can't do that. " + context.system_prompt.strip()


def pasted_tools_reply(context: ShortcutContext) -> str:
    """A refusal with every tool's description pasted in: one of them may word the rule that
    blocks the request ("cancel an order; only pending orders can be cancelled")."""
    descriptions = [(t.get("function", t).get("description") or "").strip() for t in context.tools]
    return "Sorry, I can't do that. " + " ".join(d for d in descriptions if d)


def refusal_reply(context: ShortcutContext) -> str:
    """A polite refusal of work that could have been done."""
    return (
        "I'm sorry, but I can't do that: the system's rules do not allow this request, "
        "so I have not changed anything."
    )


def echo_replies(context: ShortcutContext) -> list[str]:
    """A refusal that says the request back, before and after its decline: where the request
    happens to state the fact that blocks it ("cancel the slot booked for Wednesday"), the
    echo says that fact without the agent having learnt anything from its lookups."""
    request = context.task_text.strip()
    return [
        f"Sorry, I can't do that: {request}",
        f"{request} I'm sorry, but I can't do that.",
    ]


def dump_after_gold_reply(context: ShortcutContext) -> str:
    return dump_reply(context)


SHORTCUTS: tuple[Shortcut, ...] = (
    Shortcut("dump", "no call; a reply listing every value of the initial state", dump_reply),
    Shortcut("hedge", "no call; 'it is now A, or B, or C' over every enum-like value", hedge_reply),
    Shortcut(
        "field_hedge",
        "the gold lookups, then 'it is A, or B, or C' over one field's values, plain or "
        "inside a refusal (the best over the fields)",
        field_hedge_replies,
        looks_first=True,
        answered_only=True,
    ),
    Shortcut(
        "guess",
        "no call; 'it is A' for one enum-like value at a time, plain or inside a refusal "
        "(the best over the values)",
        guess_replies,
        answered_only=True,
    ),
    Shortcut("false_done", "no call; a claim that the request was done", false_done_reply),
    Shortcut(
        "pasted_policy",
        "no call; a refusal with the system prompt's rules pasted in",
        pasted_policy_reply,
    ),
    Shortcut(
        "pasted_tools",
        "no call; a refusal with every tool's description pasted in",
        pasted_tools_reply,
    ),
    Shortcut(
        "echo",
        "the gold lookups, then a refusal that says the request back",
        echo_replies,
        looks_first=True,
        answered_only=True,
    ),
    Shortcut(
        "refuse_feasible",
        "no call; a refusal of feasible work",
        refusal_reply,
        feasible_only=True,
    ),
    Shortcut(
        "gold_then_dump",
        "the gold calls, then a reply listing every value of the final state",
        dump_after_gold_reply,
        plays_gold=True,
        answered_only=True,
    ),
)
SHORTCUT_NAMES: tuple[str, ...] = tuple(s.name for s in SHORTCUTS)


def replies_of(shortcut: Shortcut, context: ShortcutContext) -> list[str]:
    """The final replies `shortcut` tries in `context` (one for most)."""
    made = shortcut.reply(context)
    return [made] if isinstance(made, str) else list(made)


def shortcut_reward(
    shortcut: Shortcut, context: ShortcutContext, reward_of: Callable[[str], float]
) -> float:
    """What `shortcut` earns in `context`: the best reward (`reward_of` a final reply) over
    the replies it tries; 0 when it has nothing to say (a hedge with no enum-like field)."""
    return max((reward_of(reply) for reply in replies_of(shortcut, context)), default=0.0)


def shortcuts_for(kind: str, answered: bool = True) -> list[Shortcut]:
    """The shortcuts played on a task of `kind` ('feasible' | 'infeasible'); `answered`:
    whether its reply is graded (a question or a refusal)."""
    return [
        s
        for s in SHORTCUTS
        if not (s.feasible_only and kind != "feasible") and not (s.answered_only and not answered)
    ]


@dataclass
class ShortcutAudit:
    """How often each shortcut earned a reward, per task kind (for the dataset card)."""

    attempts: dict[str, dict[str, int]] = field(default_factory=dict)
    paid: dict[str, dict[str, int]] = field(default_factory=dict)

    def add(self, kind: str, shortcut: str, reward: float) -> None:
        self.attempts.setdefault(kind, {}).setdefault(shortcut, 0)
        self.paid.setdefault(kind, {}).setdefault(shortcut, 0)
        self.attempts[kind][shortcut] += 1
        self.paid[kind][shortcut] += reward > 0

    def rate(self, kind: str, shortcut: str) -> float:
        n = self.attempts.get(kind, {}).get(shortcut, 0)
        return self.paid[kind][shortcut] / n if n else 0.0
