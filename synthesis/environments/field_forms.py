"""What a record field's values look like, read off its type and generator: a date and time as
the environment writes them, an email address or phone number in the form values.py gives
them, an amount of money in the topic's range, a count, an enum value.

Compiled tools refuse an argument in another form (synthesis.environments.compiler writes the
tests below into each tool), and SpecModel predicts the same refusals from `argument_error`:
both read `param_forms`, so the two never disagree about which arguments a tool takes.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from synthesis import codec
from synthesis.environments.values import CALENDAR_START, split_generator
from synthesis.models import FieldSpec

FormKind = Literal["datetime", "email", "phone", "money", "count", "enum"]

# Every date and time values.py writes (BusinessHours.calendar): minutes, no seconds, no zone.
DATETIME_FORMAT = "%Y-%m-%dT%H:%M"
DATETIME_EXAMPLE = f"{CALENDAR_START.isoformat()}T09:00"
# values.py's `email` (jane.doe42@gmail.com) and a planner's new address (a.b@example.com).
EMAIL_PATTERN = r"[a-z0-9._%+-]+@[a-z0-9-]+(?:\.[a-z0-9-]+)*\.[a-z]{2,}"
EMAIL_EXAMPLE = "jane.doe42@example.com"
# values.py's `phone`.
PHONE_PATTERN = r"\+1-[0-9]{3}-[0-9]{3}-[0-9]{4}"
PHONE_EXAMPLE = "+1-555-014-2368"
# An amount with no range of its own (a deposit, a request): only nonsense is refused.
MONEY_CEILING = 1_000_000
# A field whose topic gives a range (shelf prices 2-45) may leave it downwards (a sale, a
# waiver) and upwards to twice its dearest value (a rise); a slipped digit (450 for 45) may not.
MONEY_HEADROOM = 2

_EMAIL = re.compile(EMAIL_PATTERN, re.IGNORECASE)
_PHONE = re.compile(PHONE_PATTERN)
# Operations whose arguments become field values: every form applies to them. A lookup or an
# equality filter only has to be written the way the field's values are.
_WRITES = ("create", "update")
_WRITTEN_FORMS = ("datetime", "email", "phone")


@dataclass(frozen=True)
class FieldForm:
    """The form of one field's values; `high` bounds money, `values` lists an enum's."""

    kind: FormKind
    high: float | None = None
    values: tuple[str, ...] = ()

    def admits(self, value: Any) -> bool:
        """Whether `value` has this form (a value of the wrong JSON type never has)."""
        if self.kind == "datetime":
            return isinstance(value, str) and is_datetime(value)
        if self.kind == "email":
            return isinstance(value, str) and _EMAIL.fullmatch(value.strip()) is not None
        if self.kind == "phone":
            return isinstance(value, str) and _PHONE.fullmatch(value.strip()) is not None
        if self.kind == "enum":
            return value in self.values
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            return False
        if self.kind == "count":
            return value >= 0
        return 0 <= value <= self.ceiling

    def expected(self) -> str:
        """The form in words, for the error a tool answers with."""
        if self.kind == "datetime":
            return f"a date and time written like {DATETIME_EXAMPLE}"
        if self.kind == "email":
            return f"an email address like {EMAIL_EXAMPLE}"
        if self.kind == "phone":
            return f"a phone number written like {PHONE_EXAMPLE}"
        if self.kind == "count":
            return "a whole number of 0 or more"
        if self.kind == "enum":
            return f"one of {list(self.values)}"
        return f"an amount of money from 0 to {number_text(self.ceiling)}"

    @property
    def ceiling(self) -> float:
        return self.high if self.high is not None else MONEY_CEILING

    def error(self, param: str) -> str:
        return f"{param} must be {self.expected()}"


def is_datetime(value: str) -> bool:
    """Whether `value` is a real date and time written exactly as the environment writes them."""
    try:
        return dt.datetime.fromisoformat(value).strftime(DATETIME_FORMAT) == value
    except ValueError:
        return False


def number_text(x: float) -> str:
    """A bound as people write it: 90, not 90.0."""
    return str(int(x)) if float(x).is_integer() else str(x)


def field_form(f: FieldSpec) -> FieldForm | None:
    """The form of `f`'s values, or None for text of any kind (names, subjects, notes)."""
    name, _ = split_generator(f.generator)
    if f.type == "datetime":
        return FieldForm("datetime")
    if f.type == "str" and name in ("email", "phone"):
        return FieldForm(name)
    if f.type == "enum" and f.values:
        return FieldForm("enum", values=tuple(f.values))
    if f.type == "int":
        return FieldForm("count")
    if f.type == "float" and name != "decimal":  # decimals are measures (a rating), not money
        mapping = codec.dumps_str(f.mapping) if name == "by" and f.mapping else ""
        high = _topic_high(f.generator or "", mapping)
        return FieldForm("money", high=None if high is None else high * MONEY_HEADROOM)
    return None


def money_range(f: FieldSpec) -> tuple[float, float] | None:
    """The (low, high) range the topic gives a money field's values, if it gives one."""
    name, arg = split_generator(f.generator)
    parts = arg.split(":")
    if name in ("price", "steps") and len(parts) >= 2:
        return float(parts[0]), float(parts[1])
    if name == "item_price":
        ranges = codec.loads(arg.partition(":")[2]).values()
        return min(float(lo) for lo, _ in ranges), max(float(hi) for _, hi in ranges)
    values = _numbers(f)
    return (min(values), max(values)) if values else None


def _numbers(f: FieldSpec) -> list[float]:
    name, arg = split_generator(f.generator)
    if name == "one_of":
        return [float(x) for x in arg.split(",")]
    if name == "by":
        mapped = (f.mapping or {}).values()
        return [float(v) for v in mapped if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return []


@functools.lru_cache(maxsize=1024)
def _topic_high(generator: str, mapping: str) -> float | None:
    # Cached by the spec's own text: SpecModel asks for every call the planner predicts, and
    # an item_price table is JSON to parse.
    table = codec.loads(mapping) if mapping else None
    f = FieldSpec(name="_", type="float", generator=generator or None, mapping=table)
    bounds = money_range(f)
    return bounds[1] if bounds is not None and bounds[1] > 0 else None


def param_forms(tool: Any, fields: Iterable[FieldSpec]) -> dict[str, FieldForm]:
    """Parameter name -> the form its argument must have, for a tool (ToolSpec or ToolModel)
    of an entity with `fields`. A value a create or update writes gets every form; a lookup
    (find by email) or an equality filter only the written forms. A parameter with its own
    enum is checked against that list already, so it gets no second enum test."""
    by_name = {f.name: f for f in fields}
    out: dict[str, FieldForm] = {}
    for p in tool.params:
        fname = p.field or (tool.field if tool.operation == "find" else None)
        f = by_name.get(fname or "")
        if f is None or f.type == "ref":
            continue
        form = field_form(f)
        if form is None or (form.kind == "enum" and p.enum):
            continue
        if tool.operation in _WRITES or (
            form.kind in _WRITTEN_FORMS and getattr(p, "role", None) in (None, "eq")
        ):
            out[p.name] = form
    return out


def argument_error(tool: Any, fields: Iterable[FieldSpec], args: Mapping[str, Any]) -> str | None:
    """The error a compiled tool answers an argument out of its enum or form with, or None.
    Checked in the compiled order (required parameters first, each one's enum before its
    form), so the first broken one is named alike."""
    forms = param_forms(tool, fields)
    for p in sorted(tool.params, key=lambda p: not p.required):
        value = args.get(p.name)
        if value is None:
            continue
        if p.enum and value not in p.enum:
            return f"{p.name} must be one of {list(p.enum)}"
        form = forms.get(p.name)
        if form is not None and not form.admits(value):
            return form.error(p.name)
    return None
