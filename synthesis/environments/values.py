"""Field value generators for initial states, registered by the name a `FieldSpec.generator` uses.

A generator string is `name` or `name:argument`; the text after the first colon belongs to
the generator (`price:2:45`, `lookup:name:{"Baguette": "bread"}`). Values that must agree
with the domain read the spec itself (an item's category and price travel in the spec as
lookup tables), so an initial state stays a pure function of (spec, seed) and needs no
catalogue at run time. Adding one is a decorated function:

    @value_generator("iban")
    def _iban(draw: Draw) -> str:
        return draw.fake.iban()
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from faker import Faker

from synthesis import codec
from synthesis.environments.free_text import free_text, text_topic
from synthesis.models import EntitySpec, EnvSpec, FieldSpec

# A fixed calendar origin (a Monday): initial states must not depend on the day they were built.
CALENDAR_START = dt.date(2026, 3, 2)
CALENDAR_DAYS = 21  # three weeks of business days ahead of the origin
WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")


@dataclass
class Draw:
    """What a generator sees: the field, the record made so far (fields in spec order), the
    state made so far, seeded randomness, and `memo`, scratch space that lives as long as the
    state (calendars, counters)."""

    entity: EntitySpec
    field: FieldSpec
    record: dict[str, Any]
    state: dict[str, dict]
    spec: EnvSpec
    rng: random.Random
    fake: Faker
    memo: dict[Any, Any]
    arg: str = ""

    @property
    def index(self) -> int:
        """How many records of this entity the state already holds (0 for the first)."""
        return len(self.state.get(self.entity.collection, {}))


ValueGenerator = Callable[[Draw], Any]


@dataclass(frozen=True)
class _Registered:
    make: ValueGenerator
    draws_from_values: bool  # unique draws from `FieldSpec.values`: at most len(values) records


_GENERATORS: dict[str, _Registered] = {}


def value_generator(
    name: str, *, draws_from_values: bool = False
) -> Callable[[ValueGenerator], ValueGenerator]:
    """Register a generator under `name` (the part of `FieldSpec.generator` before any ':').

    `draws_from_values`: the generator picks from the field's `values`, so a unique field
    using it caps how many records its entity gets.
    """

    def register(make: ValueGenerator) -> ValueGenerator:
        if name in _GENERATORS:
            raise ValueError(f"value generator {name!r} is registered twice")
        _GENERATORS[name] = _Registered(make, draws_from_values)
        return make

    return register


def generator_names() -> list[str]:
    return sorted(_GENERATORS)


def split_generator(generator: str | None) -> tuple[str, str]:
    name, _, arg = (generator or "").partition(":")
    return name, arg


def value_pool_size(f: FieldSpec) -> int | None:
    """How many distinct values a unique field can take, when its generator bounds it."""
    name, _ = split_generator(f.generator)
    registered = _GENERATORS.get(name)
    if f.unique and registered is not None and registered.draws_from_values:
        return len(f.values)
    return None


def lookup_generator(source_field: str, table: dict[str, Any], name: str = "lookup") -> str:
    """A generator string reading `table[record[source_field]]` (canonical, sorted JSON)."""
    return f"{name}:{source_field}:{codec.dumps_str(table)}"


class ValueMaker:
    """Seeded field values; one instance per state so uniqueness is tracked per state."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.used: dict[tuple[str, str], set] = {}
        self.memo: dict[Any, Any] = {}

    def value(
        self, entity: EntitySpec, f: FieldSpec, record: dict, state: dict, spec: EnvSpec
    ) -> Any:
        for _ in range(50):
            v = self.draw(entity, f, record, state, spec)
            if not f.unique:
                return v
            seen = self.used.setdefault((entity.name, f.name), set())
            if v not in seen:
                seen.add(v)
                return v
        raise ValueError(f"cannot draw unique values for {entity.name}.{f.name}")

    def draw(
        self, entity: EntitySpec, f: FieldSpec, record: dict, state: dict, spec: EnvSpec
    ) -> Any:
        name, arg = split_generator(f.generator)
        draw = Draw(entity, f, record, state, spec, self.rng, self.fake, self.memo, arg)
        if f.type == "ref":
            return self.rng.choice(sorted(state[spec.entity(f.ref).collection]))
        # A status with no generator of its own starts where the status machine starts; one
        # with a generator (`weighted:`) is a realistic mix of base records' statuses.
        if f.type == "enum" and entity.status_field == f.name and entity.initial_status:
            if not name:
                return entity.initial_status
        if name:
            registered = _GENERATORS.get(name)
            if registered is None:
                raise ValueError(
                    f"{entity.name}.{f.name}: unknown value generator {name!r} "
                    f"(known: {', '.join(generator_names())})"
                )
            return registered.make(draw)
        return _by_type(draw)


# --------------------------------------------------------------------------- type fallbacks


def _by_type(draw: Draw) -> Any:
    f, rng = draw.field, draw.rng
    if f.type == "enum":
        return rng.choice(f.values)
    if f.type == "int":
        return rng.randint(0, 100)
    if f.type == "float":
        return round(rng.uniform(0, 100), 2)
    if f.type == "bool":
        return rng.random() < 0.5
    if f.type == "datetime":
        return _business_time(draw)
    return _free_text(draw)


def _free_text(draw: Draw) -> str:
    """Text a person wrote in the field (a subject, a message, a memo), about what the record
    and the records it refers to are about."""
    spec = draw.spec
    topic = text_topic(
        spec.entities,
        draw.entity.name,
        draw.record,
        lambda name: draw.state.get(spec.entity(name).collection, {}),
    )
    return free_text(draw.rng, draw.field.name, topic)


# --------------------------------------------------------------------------- people


def _surname(name: str) -> str:
    return name.split()[-1] if name.split() else name


@value_generator("person_name")
def _person_name(draw: Draw) -> str:
    """First and last name; every fourth person shares an earlier one's surname (a decoy a
    careless agent confuses: "Ms Garza" is not enough to tell two people apart)."""
    first, last = draw.fake.first_name(), draw.fake.last_name()
    earlier = [
        r.get(draw.field.name)
        for _, r in sorted(draw.state.get(draw.entity.collection, {}).items())
        if isinstance(r.get(draw.field.name), str)
    ]
    if earlier and draw.index % 4 == 2:
        kin = draw.rng.choice(earlier)
        last = _surname(kin)
        while first == kin.split()[0]:
            first = draw.fake.first_name()
    while first == last:  # "Dean Dean": Faker's first and last names share some words
        first = draw.fake.first_name()
    return f"{first} {last}"


@value_generator("email")
def _email(draw: Draw) -> str:
    local = re.sub(r"[^a-z]+", ".", str(draw.record.get("name", "user")).lower()).strip(".")
    return f"{local}{draw.rng.randint(1, 99)}@{draw.fake.free_email_domain()}"


@value_generator("phone")
def _phone(draw: Draw) -> str:
    return draw.fake.numerify("+1-###-###-####")


@value_generator("city")
def _city(draw: Draw) -> str:
    return draw.fake.city()


# --------------------------------------------------------------------------- names of things


@value_generator("choice", draws_from_values=True)
def _choice(draw: Draw) -> str:
    values = list(draw.field.values)
    if draw.field.unique:
        # Draw among the values no record holds yet: rejection sampling from a list barely
        # longer than the records wanted (13 titles for 12 books) gives up by bad luck.
        taken = {
            r.get(draw.field.name)
            for r in draw.state.get(draw.entity.collection, {}).values()
            if isinstance(r, dict)
        }
        values = [v for v in values if v not in taken] or values
    return draw.rng.choice(values)


_STOP_WORDS = frozenset({"the", "and", "with", "for", "set", "pack", "box", "of", "a"})


def name_words(name: str) -> set[str]:
    """The words that make two names look alike (no stop words, at least 3 letters)."""
    words = re.findall(r"[^\W\d_]+", name.casefold())
    return {w for w in words if len(w) >= 3 and w not in _STOP_WORDS}


def similar_names(a: str, b: str) -> bool:
    """Two different names a reader could mix up: they share a significant word."""
    return a != b and bool(name_words(a) & name_words(b))


@value_generator("item", draws_from_values=True)
def _item(draw: Draw) -> str:
    """A catalogue name from `values`; until the state holds two look-alike names it prefers
    one that resembles a name already drawn ("Sourdough Loaf" beside "Sourdough Rolls")."""
    values = draw.field.values
    taken = [
        r.get(draw.field.name)
        for _, r in sorted(draw.state.get(draw.entity.collection, {}).items())
        if r.get(draw.field.name) is not None
    ]
    has_pair = any(similar_names(a, b) for i, a in enumerate(taken) for b in taken[i + 1 :])
    if taken and not has_pair:
        lookalikes = [
            v for v in values if v not in taken and any(similar_names(v, t) for t in taken)
        ]
        if lookalikes:
            return draw.rng.choice(lookalikes)
    return draw.rng.choice(values)


@value_generator("lookup")
def _lookup(draw: Draw) -> Any:
    """`lookup:<field>:<json table>`: the table's entry for the record's `<field>` (an item's
    category, a room's size); a record the table does not list gets a random enum value."""
    source, table = _table_arg(draw)
    key = draw.record.get(source)
    if key in table:
        return table[key]
    return _by_type(draw)


# --------------------------------------------------------------------------- amounts


def price_point(rng: random.Random, low: float, high: float) -> float:
    """A shelf price in [low, high]: cheap goods end in .49/.99 or .50, dearer ones in .99 or
    whole units ending in 9, the way price tags read."""
    if high <= low:
        return round(low, 2)
    x = rng.uniform(low, high)
    if x < 20:
        candidates = [math.floor(x) + 0.99, math.floor(x) + 0.49, math.floor(x) + 0.5]
    elif x < 200:
        candidates = [math.floor(x) + 0.99, float(math.floor(x)), math.floor(x) - 0.01]
    else:
        base = math.floor(x / 10) * 10
        candidates = [base + 9.0, base + 9.99, float(base)]
    fitting = [round(c, 2) for c in candidates if low <= c <= high]
    return rng.choice(fitting) if fitting else round(x, 2)


@value_generator("price")
def _price(draw: Draw) -> float:
    """`price:<low>:<high>`: a shelf price in the range."""
    low, high = (float(x) for x in draw.arg.split(":"))
    return price_point(draw.rng, low, high)


@value_generator("item_price")
def _item_price(draw: Draw) -> float:
    """`item_price:<field>:<json {name: [low, high]}>`: a price in the record's item's range."""
    source, table = _table_arg(draw)
    low, high = table[draw.record[source]]
    return price_point(draw.rng, float(low), float(high))


@value_generator("stock")
def _stock(draw: Draw) -> int:
    # Some items out of stock, so "not enough stock" is a state the agent can meet.
    return draw.rng.choice([0, 1, 3, 5, 8, 12, 15, 20, 25, 40])


QUANTITIES = (1, 1, 1, 1, 2, 2, 3)  # most people buy one; a few two or three


@value_generator("quantity")
def _quantity(draw: Draw) -> int:
    return draw.rng.choice(QUANTITIES)


def _table_arg(draw: Draw) -> tuple[str, dict[str, Any]]:
    source, _, table = draw.arg.partition(":")
    try:
        parsed = codec.loads(table)
    except ValueError as exc:
        raise ValueError(f"{draw.entity.name}.{draw.field.name}: bad table: {exc}") from exc
    return source, parsed


# --------------------------------------------------------------------------- business hours


@dataclass(frozen=True)
class BusinessHours:
    """When a place is open: weekdays, opening times (minutes after midnight), slot length."""

    days: tuple[int, ...] = (0, 1, 2, 3, 4)
    times: tuple[tuple[int, int], ...] = ((9 * 60, 12 * 60), (13 * 60, 17 * 60))
    slot_minutes: int = 60

    @classmethod
    def parse(cls, raw: Any) -> BusinessHours:
        """From a vocabulary's `hours`: {"days": "mon-fri", "times": ["09:00-17:00"],
        "slot_minutes": 60}; every key optional. Raises ValueError saying what is wrong."""
        if not isinstance(raw, dict):
            raise ValueError(f"hours must be an object, not {type(raw).__name__}")
        unknown = sorted(set(raw) - {"days", "times", "slot_minutes"})
        if unknown:
            raise ValueError(f"hours has unknown keys {unknown} (days, times, slot_minutes)")
        default = cls()
        days = _parse_days(raw["days"]) if "days" in raw else default.days
        times = _parse_times(raw["times"]) if "times" in raw else default.times
        slot = raw.get("slot_minutes", default.slot_minutes)
        if not isinstance(slot, int) or isinstance(slot, bool) or not 5 <= slot <= 480:
            raise ValueError(f"hours.slot_minutes must be minutes from 5 to 480, not {slot!r}")
        hours = cls(days, times, slot)
        if not hours.starts():
            raise ValueError(f"hours leave no room for a {slot}-minute slot")
        return hours

    def to_arg(self) -> str:
        return codec.dumps_str(
            {
                "days": ",".join(WEEKDAYS[d] for d in self.days),
                "times": [f"{_hhmm(a)}-{_hhmm(b)}" for a, b in self.times],
                "slot_minutes": self.slot_minutes,
            }
        )

    def starts(self) -> list[int]:
        """Start times (minutes after midnight) of the slots one open day holds."""
        return [
            m for a, b in self.times for m in range(a, b - self.slot_minutes + 1, self.slot_minutes)
        ]

    def calendar(self) -> list[str]:
        """Every slot start in the calendar window, in order, as ISO local times."""
        out = []
        for n in range(CALENDAR_DAYS):
            day = CALENDAR_START + dt.timedelta(days=n)
            if day.weekday() in self.days:
                out += [f"{day.isoformat()}T{_hhmm(m)}" for m in self.starts()]
        return out

    def holds(self, when: str) -> bool:
        """Whether an ISO time starts a whole slot inside opening hours."""
        moment = dt.datetime.fromisoformat(when)
        minute = moment.hour * 60 + moment.minute
        return moment.weekday() in self.days and any(
            a <= minute and minute + self.slot_minutes <= b for a, b in self.times
        )


def _hhmm(minutes: int) -> str:
    return f"{minutes // 60:02d}:{minutes % 60:02d}"


def _parse_days(raw: Any) -> tuple[int, ...]:
    parts = raw.split(",") if isinstance(raw, str) else raw
    if not isinstance(parts, list) or not parts:
        raise ValueError(f"hours.days must be like 'mon-fri' or ['mon', 'wed'], not {raw!r}")
    days: set[int] = set()
    for part in parts:
        ends = str(part).strip().lower().split("-")
        if len(ends) > 2 or any(e not in WEEKDAYS for e in ends):
            raise ValueError(f"hours.days: {part!r} is not a weekday or a range like 'mon-fri'")
        first, last = WEEKDAYS.index(ends[0]), WEEKDAYS.index(ends[-1])
        if last < first:
            raise ValueError(f"hours.days: {part!r} runs backwards")
        days.update(range(first, last + 1))
    return tuple(sorted(days))


def _parse_times(raw: Any) -> tuple[tuple[int, int], ...]:
    ranges = [raw] if isinstance(raw, str) else raw
    if not isinstance(ranges, list) or not ranges:
        raise ValueError(f"hours.times must be like ['09:00-17:00'], not {raw!r}")
    out = []
    for text in ranges:
        match = re.fullmatch(r"(\d{1,2}):(\d{2})-(\d{1,2}):(\d{2})", str(text).strip())
        if not match:
            raise ValueError(f"hours.times: {text!r} is not a range like '09:00-17:00'")
        h1, m1, h2, m2 = (int(g) for g in match.groups())
        start, end = h1 * 60 + m1, h2 * 60 + m2
        if not (m1 < 60 and m2 < 60 and 0 <= start < end <= 24 * 60):
            raise ValueError(f"hours.times: {text!r} is not a range within one day")
        out.append((start, end))
    return tuple(sorted(out))


def _hours_of(draw: Draw) -> BusinessHours:
    key = ("hours", draw.arg)
    if key not in draw.memo:
        draw.memo[key] = BusinessHours.parse(codec.loads(draw.arg)) if draw.arg else BusinessHours()
    return draw.memo[key]


@value_generator("slot_start")
def _slot_start(draw: Draw) -> str:
    """`slot_start[:<json hours>]`: the next start in opening hours of the record's owner (the
    record's first reference, e.g. its provider), up to a day on from the owner's last one;
    an owner's slots never overlap."""
    hours = _hours_of(draw)
    calendar = _calendar(draw, hours)
    owner = next((draw.record.get(f.name) for f in draw.entity.fields if f.type == "ref"), None)
    used = draw.memo.setdefault(("slot_used", draw.entity.name, draw.field.name, owner), set())
    key = ("slot_cursor", draw.entity.name, draw.field.name, owner)
    # Steps of up to a day: an owner's free slots spread over the coming days.
    cursor = draw.memo.get(key, -1) + draw.rng.randint(1, max(2, len(hours.starts())))
    while cursor in used or cursor >= len(calendar):
        if cursor >= len(calendar):  # the window is full: take the first free start
            free = [i for i in range(len(calendar)) if i not in used]
            if not free:
                raise ValueError(f"{draw.entity.name}.{draw.field.name}: no free slot start left")
            cursor = free[0]
        else:
            cursor += 1
    draw.memo[key] = cursor
    used.add(cursor)
    return calendar[cursor]


def _calendar(draw: Draw, hours: BusinessHours) -> list[str]:
    key = ("calendar", hours)
    if key not in draw.memo:
        draw.memo[key] = hours.calendar()
    return draw.memo[key]


def _business_time(draw: Draw) -> str:
    """Any datetime field without a generator: a slot start in ordinary office hours."""
    return draw.rng.choice(_calendar(draw, BusinessHours()))


def calendar_of(f: FieldSpec) -> tuple[str, ...]:
    """The moments a datetime field's values are drawn from, in order: the slot starts of the
    opening hours its generator names (ordinary office hours without any)."""
    name, arg = split_generator(f.generator)
    if name in ("slot_start", "business_time") and arg:
        return _hours_calendar(arg)
    return _hours_calendar("")


@functools.lru_cache(maxsize=64)
def _hours_calendar(arg: str) -> tuple[str, ...]:
    hours = BusinessHours.parse(codec.loads(arg)) if arg else BusinessHours()
    return tuple(hours.calendar())


@value_generator("business_time")
def _business_time_generator(draw: Draw) -> str:
    """`business_time[:<json hours>]`: a random moment in the given opening hours."""
    return draw.rng.choice(_calendar(draw, _hours_of(draw)))


__all__ = [
    "BusinessHours",
    "CALENDAR_START",
    "Draw",
    "ValueMaker",
    "calendar_of",
    "generator_names",
    "lookup_generator",
    "name_words",
    "price_point",
    "similar_names",
    "split_generator",
    "value_generator",
    "value_pool_size",
]


# --------------------------------------------------------------------------- numbers and codes
# Ledger, inventory and catalogue-search records: amounts, limits, account numbers, SKUs.


@value_generator("by")
def _by_field(draw: Draw) -> Any:
    """`by:<field>`: the value `FieldSpec.mapping` gives for the record's `<field>` (a
    product's category and price follow its name); any mapped value when it has none."""
    mapping = draw.field.mapping or {}
    key = str(draw.record.get(draw.arg))
    if key in mapping:
        return mapping[key]
    return draw.rng.choice(sorted(mapping.values(), key=str))


def _numbers(draw: Draw) -> list[str]:
    return draw.arg.split(":") if draw.arg else []


@value_generator("int")
def _int_between(draw: Draw) -> int:
    """`int:lo:hi`."""
    low, high = _numbers(draw)[:2]
    return draw.rng.randint(int(low), int(high))


@value_generator("decimal")
def _decimal_between(draw: Draw) -> float:
    """`decimal:lo:hi:digits`."""
    low, high, digits = _numbers(draw)[:3]
    return round(draw.rng.uniform(float(low), float(high)), int(digits))


@value_generator("steps")
def _round_amount(draw: Draw) -> int | float:
    """`steps:lo:hi:step`: round amounts such as credit limits (500, 1000, 1500 …)."""
    low, high, step = (int(x) for x in _numbers(draw)[:3])
    value = draw.rng.randrange(low, high + 1, step)
    return float(value) if draw.field.type == "float" else value


@value_generator("code")
def _code(draw: Draw) -> str:
    """`code:PREFIX:digits`: account numbers, SKUs."""
    prefix, digits = _numbers(draw)[:2]
    n = int(digits)
    return f"{prefix}-{draw.rng.randint(10 ** (n - 1), 10**n - 1)}"


@value_generator("weighted")
def _weighted(draw: Draw) -> str:
    """`weighted:value=weight:...`: a realistic mix (most accounts active, a few frozen)."""
    pairs = [a.rsplit("=", 1) for a in _numbers(draw)]
    return draw.rng.choices([v for v, _ in pairs], weights=[float(w) for _, w in pairs])[0]


@value_generator("zero")
def _zero(draw: Draw) -> int | float:
    return 0.0 if draw.field.type == "float" else 0


# --------------------------------------------------------------------------- workflow records
# Ticketing, scheduling, approvals and messaging.


@value_generator("hours_free")
def _hours_free(draw: Draw) -> int:
    """An agent's free hours: some have none left, so workload guards meet real refusals."""
    return draw.rng.choice([0, 1, 2, 4, 6, 8])


@value_generator("capacity")
def _capacity(draw: Draw) -> int:
    """Seats in a room: small rooms make capacity matter."""
    return draw.rng.choice([2, 4, 6, 8, 12, 20])


@value_generator("one_of")
def _one_of(draw: Draw) -> float:
    """`one_of:a,b,c`: numbers from a fixed ladder (approval limits)."""
    return draw.rng.choice([float(x) for x in draw.arg.split(",")])


@value_generator("handle")
def _handle(draw: Draw) -> str:
    """A chat handle from the person's name."""
    base = re.sub(r"[^a-z]+", "", str(draw.record.get("name", "user")).lower())[:12]
    return f"@{base or 'user'}{draw.rng.randint(1, 99)}"
