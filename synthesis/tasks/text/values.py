"""Values as people write them: dates and times in words, money, codes of the enum kind as
words. Never an ISO timestamp or a snake_case token.

`value_words` is one rendering per value (no rng): the planner records it as a fact the text
must carry, and the phrasing writes the same words, so the two always agree.
"""

from __future__ import annotations

import datetime as dt
import re
from typing import Any

from synthesis.environments.free_text import holds_text

_ISO = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$"
)
# A code of the enum kind: lower-case words joined by underscores (in_progress, dog_walk).
_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
_MONEY_WORDS = (
    "price",
    "cost",
    "fee",
    "amount",
    "total",
    "balance",
    "budget",
    "rate",
    "salary",
    "fare",
    "deposit",
    "limit",
    "payment",
    "refund",
)


def field_words(name: str) -> str:
    """A field or tool name in words: 'due_date' -> 'due date'."""
    return re.sub(r"\s+", " ", name.replace("_", " ")).strip()


# Field names that are not nouns ("the available of the stock level"), said as people name
# what the field holds. Other one-word participles and adjectives get "setting".
_FIELD_NOUNS = {
    "available": "quantity available",
    "reserved": "quantity reserved",
    "held": "amount held",
    "due at": "due time",
    "starts at": "start time",
    "ends at": "end time",
    "minutes before": "reminder lead time",
    "hours free": "free hours",
    "repeat": "repeat setting",
    "average available": "average quantity available",
    "highest available": "highest quantity available",
    "lowest available": "lowest quantity available",
    "total reserved": "total quantity reserved",
}
_NOT_NOUN = re.compile(r"^(?:\w+ed|active|visible|enabled|open|closed|archived|public|private)$")
_ED_NOUNS = frozenset({"need", "speed", "feed", "seed", "bed", "red", "shed", "breed", "creed"})


def field_noun(name: str) -> str:
    """A field's name as a noun phrase people say: 'stock_level' -> 'stock level', but
    'available' -> 'quantity available' and 'pinned' -> 'pinned setting'."""
    words = field_words(name)
    # `flight_no`, `seat_num`: the abbreviation people spell out.
    words = re.sub(r" (no|num|nbr)$", " number", words)
    if words in _FIELD_NOUNS:
        return _FIELD_NOUNS[words]
    if _NOT_NOUN.match(words) and words not in _ED_NOUNS:
        return f"{words} setting"
    return words


def value_words(v: Any) -> str:
    """One value in words: booleans as yes/no, timestamps as dates, codes as words."""
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, float):
        return f"{v:.2f}" if round(v, 2) == v and v != int(v) else _number(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, str):
        when = parse_iso(v)
        if when is not None:
            return date_words(*when)
        if _SNAKE.match(v):
            return v.replace("_", " ")
    return str(v)


def _number(v: float) -> str:
    return str(int(v)) if v == int(v) else str(v)


def parse_iso(text: str) -> tuple[dt.date, dt.time | None] | None:
    """(date, time or None) of an ISO date or timestamp; None for anything else."""
    m = _ISO.match(text.strip())
    if not m:
        return None
    try:
        day = dt.date(int(m[1]), int(m[2]), int(m[3]))
        at = dt.time(int(m[4]), int(m[5])) if m[4] is not None else None
    except ValueError:
        return None
    return day, at


def date_words(day: dt.date, at: dt.time | None = None) -> str:
    """'Tuesday 3 March 2026 at 2 pm': the weekday, the date with its year, the time."""
    text = f"{day.strftime('%A')} {day.day} {day.strftime('%B')} {day.year}"
    return text + (f" at {time_words(at)}" if at is not None else "")


def time_words(at: dt.time) -> str:
    """'2 pm', '9:30 am', 'noon', 'midnight'."""
    if at.hour == 12 and at.minute == 0:
        return "noon"
    if at.hour == 0 and at.minute == 0:
        return "midnight"
    hour = at.hour % 12 or 12
    half = "am" if at.hour < 12 else "pm"
    return f"{hour} {half}" if at.minute == 0 else f"{hour}:{at.minute:02d} {half}"


def is_money(what: str) -> bool:
    """Whether a field, by its words, holds an amount of money."""
    words = set(what.lower().split())
    return bool(words & set(_MONEY_WORDS))


def value_in_context(what: str, said: str) -> str:
    """A value's words where its field is known: amounts of money get their currency sign,
    text in its writer's own words its quotes."""
    if is_money(what) and re.fullmatch(r"\d+(?:\.\d{1,2})?", said):
        return f"${said}"
    return quoted_text(what, said)


def quoted_text(what: str, said: str) -> str:
    """Free text (a subject, a message's body, a note) in quotes where a task states it, so
    it reads apart from the request around it: 'with body "Moving the fiction discussion to
    Monday if nobody minds"'. One word needs none."""
    if holds_text(what) and " " in said.strip() and not said.startswith('"'):
        return f'"{said}"'
    return said


def has_iso_timestamp(text: str) -> bool:
    return bool(re.search(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2})?\b", text))


_EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")


def snake_case_tokens(text: str) -> list[str]:
    """The snake_case tokens of `text` (outside email addresses)."""
    text = _EMAIL.sub(" ", text)
    # A file name ('final_report.pdf') is a name people write as it is, not a code; so is a
    # name in double quotes (a JSON key a report must carry: "first_seen").
    return re.findall(r'(?<![\w.@/"-])[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?![\w@/"-]|\.\w)', text)
