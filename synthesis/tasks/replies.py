"""Whether a value is stated in an agent's final reply, deterministically and stdlib only.

Reply checks compare *normalised* text, so an answer is not failed for how it writes a value:
case and whitespace, snake_case words ("in_progress" = "in progress"), number formats
(1200 = 1,200 = 1200.00 = $1,200.00), dates (2025-03-04 = March 4, 2025 = 4 March 2025 =
03/04/2025, month first), times (14:00 = 2:00 PM = 2 pm) and booleans (true = yes). A value
matches when each of its pieces appears in the reply as whole tokens: "1200" is not found
in "11200", nor "Ann" in "Anne".
"""

from __future__ import annotations

import re
import unicodedata
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any

_MONTHS = {
    name: i
    for i, names in enumerate(
        (
            ("january", "jan"),
            ("february", "feb"),
            ("march", "mar"),
            ("april", "apr"),
            ("may",),
            ("june", "jun"),
            ("july", "jul"),
            ("august", "aug"),
            ("september", "sep", "sept"),
            ("october", "oct"),
            ("november", "nov"),
            ("december", "dec"),
        ),
        start=1,
    )
    for name in names
}
_MONTH = "(" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_WEEKDAY = r"(?:(?:mon|tues?|wed(?:nes)?|thu(?:rs)?|fri|sat(?:ur)?|sun)(?:day)?\.?,?\s+)?"
_DAY = r"(\d{1,2})(?:st|nd|rd|th)?"

_ISO = re.compile(
    r"(?<![\w-])(\d{4})-(\d{2})-(\d{2})"
    r"(?:[t ](\d{2}):(\d{2})(?::\d{2}(?:\.\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?(?![\w-])"
)
_MONTH_FIRST = re.compile(rf"(?<!\w){_WEEKDAY}{_MONTH}\s+{_DAY},?\s+(\d{{4}})(?!\w)")
_DAY_FIRST = re.compile(rf"(?<!\w){_WEEKDAY}{_DAY}\s+(?:of\s+)?{_MONTH},?\s+(\d{{4}})(?!\w)")
_SLASHED = re.compile(r"(?<![\w/])(\d{1,2})/(\d{1,2})/(\d{4})(?![\w/])")
_CLOCK_12 = re.compile(r"(?<![\w:])(\d{1,2})(?::(\d{2}))?\s*([ap])\.?\s?m\.?(?!\w)")
_CLOCK_24 = re.compile(r"(?<![\w:])(\d{1,2}):(\d{2})(?::\d{2})?(?![\w:])")
_NUMBER = re.compile(r"^[$€£¥]?([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)%?$")
_DATE_TOKEN = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_TIME_TOKEN = re.compile(r"^\d{2}:\d{2}$")
# Punctuation a token may carry at its ends in running text ("is 314.07." / "(paid)").
_EDGE = "\"'`.,;:!?()[]{}<>«»“”‘’*"


def _date(year: str, month: int, day: str) -> str:
    return f"{int(year):04d}-{month:02d}-{int(day):02d}"


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


def _iso(m: re.Match[str]) -> str:
    date = f"{m.group(1)}-{m.group(2)}-{m.group(3)}"
    return date if m.group(4) is None else f"{date} {_clock(int(m.group(4)), int(m.group(5)))}"


def _twelve_hour(m: re.Match[str]) -> str:
    hour, minute = int(m.group(1)) % 12, int(m.group(2) or 0)
    return _clock(hour + (12 if m.group(3) == "p" else 0), minute)


def normalise(text: str) -> str:
    """`text` with dates, times, case, snake_case and spacing written one way."""
    text = unicodedata.normalize("NFKC", text).lower().replace("_", " ")
    text = _ISO.sub(_iso, text)
    text = _MONTH_FIRST.sub(lambda m: _date(m.group(3), _MONTHS[m.group(1)], m.group(2)), text)
    text = _DAY_FIRST.sub(lambda m: _date(m.group(3), _MONTHS[m.group(2)], m.group(1)), text)
    text = _SLASHED.sub(lambda m: _date(m.group(3), int(m.group(1)), m.group(2)), text)
    text = _CLOCK_12.sub(_twelve_hour, text)
    text = _CLOCK_24.sub(lambda m: _clock(int(m.group(1)), int(m.group(2))), text)
    return " ".join(text.split())


def _number(token: str) -> str:
    m = _NUMBER.match(token)
    if m is None:
        return token
    try:
        value = Decimal(m.group(1).replace(",", ""))
    except InvalidOperation:
        return token
    # 1200, 1200.0 and 1,200.00 are one number; normalize() may write 1E+3, so format it.
    text = format(value.normalize(), "f")
    return "0" if text in ("-0", "+0") else text.lstrip("+")


def tokens(text: str) -> list[str]:
    """The reply's words after normalising: numbers canonical, edge punctuation dropped."""
    out = []
    for raw in normalise(text).split():
        token = raw.strip(_EDGE)
        if token:
            out.append(_number(token))
    return out


def _pieces(value: Any) -> list[list[str]]:
    """What must appear for `value`: its tokens, with each date and time on its own (a reply
    may write "March 4, 2025 at 2 PM" for 2025-03-04T14:00)."""
    pieces: list[list[str]] = []
    run: list[str] = []
    for token in tokens(value_text(value)):
        if _DATE_TOKEN.match(token) or _TIME_TOKEN.match(token):
            if run:
                pieces.append(run)
                run = []
            pieces.append([token])
        else:
            run.append(token)
    if run:
        pieces.append(run)
    return pieces


def value_text(value: Any) -> str:
    """A JSON value as the words a reply would use for it."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if value is None:
        return ""
    if isinstance(value, list):
        return " ".join(value_text(v) for v in value)
    return str(value)


def _variants(value: Any) -> list[Any]:
    # A yes/no value may be written either way.
    if isinstance(value, bool):
        return [value, "true" if value else "false"]
    return [value]


def _has_run(haystack: list[str], needle: list[str]) -> bool:
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def mentions(reply: str, value: Any) -> bool:
    """Whether `reply` states `value` (normalised; every piece as whole tokens)."""
    words = list(_reply_tokens(reply or ""))
    for variant in _variants(value):
        pieces = _scalar_pieces(variant) if type(variant) in _SCALARS else _pieces(variant)
        if pieces and all(_has_run(words, list(piece)) for piece in pieces):
            return True
    return False


_SCALARS = frozenset({str, int, float, bool})


@lru_cache(maxsize=4096)
def _scalar_pieces_typed(kind: type, value: Any) -> tuple[tuple[str, ...], ...]:
    return tuple(tuple(piece) for piece in _pieces(value))


def _scalar_pieces(value: Any) -> tuple[tuple[str, ...], ...]:
    # Every grade reads the same few asked and decoy values (the self-test grades a task's
    # replies a dozen times): their words are worked out once. Keyed by type too, since
    # 1 == 1.0 == True would otherwise share one entry.
    return _scalar_pieces_typed(type(value), value)


@lru_cache(maxsize=1024)
def _reply_tokens(reply: str) -> tuple[str, ...]:
    # A reply is read by every reply check of every grade of it (the self-test grades the
    # same gold answer many times): normalising it once saves most of the regex work.
    return tuple(tokens(reply))


def same_value(a: Any, b: Any) -> bool:
    """Whether two values read the same once normalised (a decoy equal to the answer is no
    decoy)."""
    return _pieces(a) == _pieces(b)
