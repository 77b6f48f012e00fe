"""Free text a person writes into a record: a ticket's subject, a message's body, a note on an
approval, a transfer's memo, an event's title.

Worded with the environment's own vocabulary (the record's noun, the categories, services and
names its fields hold, preferring those of the record being written) in templates of the
shape such a field takes, and drawn from the caller's seeded rng, so the same seed gives the
same words. Texts carry no sentence punctuation a task sentence would trip on (no full stop,
comma or question mark inside): they sit in task text as values ("subject: X, category: Y").

The order of every tuple here is part of what a seed means (`rng.choice` indexes it).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from synthesis.models import FieldSpec

# Field names by the kind of text people write there.
HEADLINE_FIELDS = frozenset({"subject", "title", "headline", "summary", "topic", "caption"})
MESSAGE_FIELDS = frozenset(
    {"body", "message", "text", "comment", "content", "description", "details", "reply"}
)
NOTE_FIELDS = frozenset({"note", "notes", "reason", "remark", "resolution", "feedback"})
MEMO_FIELDS = frozenset({"memo", "reference", "purpose"})
TEXT_FIELDS = HEADLINE_FIELDS | MESSAGE_FIELDS | NOTE_FIELDS | MEMO_FIELDS
# Enum fields whose values are things records are about ("delayed bag", "repairs", "haircut");
# others (status, visibility, priority, colour) describe a record rather than name a subject.
_SUBJECT_ENUMS = ("category", "service", "specialty", "kind", "type", "department", "team")
# Generators whose values name things (a channel, a room, a product).
_NAMING_GENERATORS = ("choice", "item")

_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
_MONTHS = ("March", "April", "May", "June")
_WHEN = (
    "this afternoon",
    "tomorrow morning",
    "later today",
    "on Friday",
    "first thing tomorrow",
    "by the end of the week",
)
_SEASONS = ("spring", "summer", "autumn")

# {thing}: what the record is about; {Thing} the same, capitalised; {label}: its noun.
_SUBJECTS = (
    "{Thing} — still waiting for an update",
    "Question about my {label}",
    "Follow-up on the {thing} from {day}",
    "Update on the {thing} please",
    "{Thing} — second request",
    "Still no news on the {thing}",
    "Problem with the {thing} since {day}",
    "Urgent — {thing}",
    "Need help with the {thing} before {day}",
    "{Thing} reported {when_past}",
)
_WHEN_PAST = ("this morning", "yesterday", "on Monday", "last night", "at the weekend")
_EVENT_TITLES = (
    "{Day} {thing}",
    "Weekly {thing}",
    "Morning {thing}",
    "Afternoon {thing}",
    "Extra {thing} slot",
    "{Thing} — {month} block",
    "{Month} {thing}",
    "{Thing} catch-up",
)
_REQUEST_TITLES = (
    "{Thing} for {month}",
    "{Month} {thing} costs",
    "{Thing} — supplier quote",
    "{Thing} for the {season} term",
    "{Thing} costs for {day}'s visit",
    "Extra {thing} budget for {month}",
)
_TITLES = (
    "{Thing} plan for {month}",
    "Notes on the {thing}",
    "{Thing} — {month}",
    "{Thing} for {day}",
)
_MESSAGES = (
    "Quick update on the {thing} — more {when}",
    "Thanks everyone — the {thing} is sorted now",
    "Please confirm the {thing} before {day}",
    "Still waiting to hear back about the {thing}",
    "I will look into the {thing} {when}",
    "Adding the {thing} to the agenda for {day}",
    "Moving the {thing} to {day} if nobody minds",
    "Heads up — the {thing} changes from {day}",
    "Happy to help with the {thing} {when}",
    "Posted the details for the {thing} in the shared folder",
    "Checked again and the {thing} looks fine now",
    "Please send me the paperwork for the {thing} by {day}",
    "Spoke to the team about the {thing} and it is on track",
    "Happy to go over the {thing} on {day}",
)
_NOTES = (
    "Approved as discussed on {day}",
    "Fine by me — go ahead",
    "Agreed — thanks for the detail",
    "Approved for the {thing}",
    "OK from my side — please share the outcome afterwards",
    "Checked against the {month_before} figures — looks right",
    "Agreed — please keep the paperwork for the {thing}",
    "Go ahead — send the invoice when it arrives",
    "Approved — within the {month} budget",
    "Signed off on {day} — thanks",
    "Approved — tell me if the {thing} runs over",
    "Fine — please book it before {day}",
    "Agreed for {month} only",
    "Happy to approve — the {thing} is worth it",
    "Approved on condition the receipts follow by {day}",
)
_MONTHS_BEFORE = ("January", "February")
_MEMOS = (
    "Top-up for {month}",
    "Paying you back for {day}",
    "Share of the {thing}",
    "Birthday money",
    "Weekend spending",
    "Savings for {month}",
    "Refund for {day}",
    "Monthly allowance",
    "Split for the {day} outing",
    "For the {thing}",
    "Rent share for {month}",
    "Dinner on {day}",
    "Covering the {thing}",
    "Back pay for {month}",
    "Top-up before {day}",
    "Tickets for {day}",
)


@dataclass(frozen=True)
class TextTopic:
    """What a text is written about: the record's noun, the things its own fields name (an
    event's kind), the things the records it refers to are about or called (a note's
    ticket's category, a message's channel), and those the record being written holds."""

    label: str
    things: tuple[str, ...] = ()
    related: tuple[str, ...] = ()
    preferred: tuple[str, ...] = ()
    preferred_related: tuple[str, ...] = ()
    dated: bool = False  # the record is an event (it has a date and time)
    priced: bool = False  # the record asks for money

    def thing(self, rng: random.Random, own: bool = False) -> str:
        """What one text is about: mostly what the record being written names, else one of
        the things such records name, else the record's noun. `own`: only what the record
        names itself (an event is not called after its room)."""
        preferred = self.preferred if own else self.preferred + self.preferred_related
        pool = self.things if own else self.things or self.related
        if preferred and (not pool or rng.random() < 0.7):
            return rng.choice(preferred)
        return rng.choice(pool) if pool else self.label


def is_free_text(f: FieldSpec) -> bool:
    """Whether people write `f`'s values in their own words (no generator, no form)."""
    return f.type == "str" and not f.generator


def holds_text(field_name: str) -> bool:
    """Whether a field called `field_name` ('body', 'due at' in words too) holds free text."""
    return bool(set(field_name.lower().replace("_", " ").split()) & TEXT_FIELDS)


def text_kind(field_name: str) -> str:
    """headline, message, note or memo: the kind of text a field called `field_name` holds."""
    words = set(field_name.lower().split("_"))
    for kind, names in (
        ("memo", MEMO_FIELDS),
        ("note", NOTE_FIELDS),
        ("message", MESSAGE_FIELDS),
        ("headline", HEADLINE_FIELDS),
    ):
        if words & names:
            return kind
    return "headline"


def free_text(rng: random.Random, field_name: str, topic: TextTopic) -> str:
    """A text a person would write in field `field_name` of a record about `topic`."""
    kind = text_kind(field_name)
    own = False
    if kind == "memo":
        template = rng.choice(_MEMOS)
    elif kind == "note":
        template = rng.choice(_NOTES)
    elif kind == "message":
        template = rng.choice(_MESSAGES)
    elif "subject" in field_name or "summary" in field_name:
        template = rng.choice(_SUBJECTS)
    elif topic.dated:
        template, own = rng.choice(_EVENT_TITLES), True
    elif topic.priced:
        template = rng.choice(_REQUEST_TITLES)
    else:
        template = rng.choice(_TITLES)
    thing = topic.thing(rng, own=own)
    return template.format(
        thing=thing,
        Thing=thing[:1].upper() + thing[1:],
        label=topic.label,
        day=rng.choice(_DAYS),
        Day=rng.choice(_DAYS),
        month=rng.choice(_MONTHS),
        Month=rng.choice(_MONTHS),
        month_before=rng.choice(_MONTHS_BEFORE),
        when=rng.choice(_WHEN),
        when_past=rng.choice(_WHEN_PAST),
        season=rng.choice(_SEASONS),
    )


def text_topic(
    entities: Iterable[Any],
    entity: str,
    record: Mapping[str, Any] | None = None,
    records_of: Callable[[str], Mapping[str, Any]] | None = None,
) -> TextTopic:
    """The topic of a text in a record of `entity` (an EntitySpec or CollectionModel name
    among `entities`), given the fields the record being written holds so far (`record`;
    the records it refers to are read through `records_of`: entity name -> {id: record})."""
    by_name = {e.name: e for e in entities}
    own = by_name[entity]
    record = record or {}
    subjects = [f for f in own.fields if _names_a_subject(f, own=True)]
    related: list[str] = []
    preferred_related: list[str] = []
    for f in own.fields:
        if f.type != "ref" or f.ref not in by_name:
            continue
        target = by_name[f.ref]
        related += [t for g in target.fields for v in g.values for t in _about(target, {g.name: v})]
        linked = (records_of(f.ref) if records_of else {}).get(record.get(f.name))
        if isinstance(linked, dict):
            preferred_related += _about(target, linked)
    return TextTopic(
        label=own.label,
        things=tuple(dict.fromkeys(v for f in subjects for v in f.values)),
        related=tuple(dict.fromkeys(related)),
        preferred=tuple(
            dict.fromkeys(record[f.name] for f in subjects if record.get(f.name) in f.values)
        ),
        preferred_related=tuple(dict.fromkeys(preferred_related)),
        dated=any(f.type == "datetime" for f in own.fields),
        priced=any(f.type == "float" for f in own.fields),
    )


def _names_a_subject(f: FieldSpec, own: bool) -> bool:
    # A referenced record's kind describes it ("a standard account"), it is no subject.
    names = _SUBJECT_ENUMS if own else tuple(n for n in _SUBJECT_ENUMS if n != "kind")
    return f.type == "enum" and f.name in names and bool(f.values)


def _about(entity: Any, values: Mapping[str, Any]) -> list[str]:
    """What a referenced record with `values` is about or called: its subject enums, and its
    name when a naming generator drew it, said with the entity's noun when the name is a
    common word ("the poetry discussion")."""
    out = []
    for f in entity.fields:
        value = values.get(f.name)
        if not isinstance(value, str):
            continue
        if _names_a_subject(f, own=False):
            out.append(value)
        elif f.type == "str" and (f.generator or "").split(":")[0] in _NAMING_GENERATORS:
            out.append(f"{value} {entity.label}" if value.islower() else value)
    return out
