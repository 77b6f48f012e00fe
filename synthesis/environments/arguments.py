"""Argument values for tools of code without a spec, drawn from what the state already holds.

A tool's parameters are matched to the state by name: `file_name` takes values found under
keys like `name`, `receiver_id` takes ids of the collection whose records it names,
`priority` takes the priorities records already have. Free text the state cannot supply
(a message, a new title) is made up from a small word bank; enumerations come from the
schema or from the `[Enum]: [...]` lists foreign docstrings carry. Everything draws from the
caller's rng, so a probe or a plan is a pure function of its seed.
"""

from __future__ import annotations

import ast
import functools
import random
import re
import threading
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import CollectionModel, ParamModel, ToolModel
from synthesis.wordbank import FIRST_NAMES, LAST_NAMES, NOUNS, WORDS

_ENUM_IN_TEXT = re.compile(r"\[Enum\]:\s*(\[[^\]]*\])", re.IGNORECASE)
_FIELD_IN_TEXT = re.compile(r"(?:^|\s)-\s*(\w+)\s*\((str|int|float|bool)\)")
_PY_TYPES = {"str": "string", "int": "integer", "float": "number", "bool": "boolean"}
MAX_POOL = 64


_COMPOUND_TAILS = ("name", "id")


@functools.lru_cache(maxsize=4096)
def _tokens(name: str) -> tuple[str, ...]:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    out: list[str] = []
    for token in re.split(r"[^A-Za-z0-9]+", spaced.lower()):
        # `username`, `filename`, `userid` are two words written as one.
        tail = next(
            (t for t in _COMPOUND_TAILS if token.endswith(t) and len(token) > len(t) + 2), None
        )
        out += [token[: -len(tail)], tail] if tail else [token] if token else []
    return tuple(out)


def name_tokens(name: str) -> list[str]:
    """`receiverId`, `receiver_id` and `Receiver ID` all give ['receiver', 'id']."""
    return list(_tokens(name))


@functools.lru_cache(maxsize=4096)
def words_of(name: str) -> tuple[str, ...]:
    """A name's words in singular, so `location` finds values kept under `locations`."""
    return tuple(singular(t) for t in _tokens(name))


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("ses"):
        return word[:-1]  # courses, cases, houses
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def is_id_name(name: str) -> bool:
    tokens = name_tokens(name)
    # `product_id_a`, `cityA`, `card_id_2`: a trailing letter or number only tells them apart.
    while len(tokens) > 1 and (len(tokens[-1]) == 1 or tokens[-1].isdigit()):
        tokens = tokens[:-1]
    return (
        bool(tokens)
        and tokens[-1] in ("id", "ids", "uuid", "key", "token", "number", "code")
        and (len(tokens) > 1 or tokens[-1] in ("id", "uuid"))
    )


def enum_of(param: ParamModel) -> list[Any] | None:
    """Allowed values: the schema's enum, else an `[Enum]: [...]` list in the description."""
    if param.enum:
        return list(param.enum)
    match = _ENUM_IN_TEXT.search(param.description or "")
    if match:
        try:
            values = ast.literal_eval(match.group(1))
        except (ValueError, SyntaxError):
            return None
        if isinstance(values, (list, tuple)) and values:
            return list(values)
    return None


@dataclass
class ValuePools:
    """Scalars seen in states and results, by the key they were found under."""

    by_key: dict[str, list[Any]] = field(default_factory=dict)
    ids: dict[str, list[Any]] = field(default_factory=dict)
    result_keys: set[str] = field(default_factory=set)

    @classmethod
    def from_states(
        cls, states: Iterable[dict[str, Any]], collections: Iterable[CollectionModel] = ()
    ) -> ValuePools:
        pools = cls()
        for state in states:
            pools.learn(state)
        for coll in collections:
            found: list[Any] = []
            for state in states:
                found += coll.ids_in(state)
            pools.ids[coll.name] = _distinct(found)
        return pools

    def learn(self, value: Any, key: str = "", *, result: bool = False) -> None:
        """Remember every scalar under its key, and keys of dicts under their parent's key.

        `result`: the value is a tool's answer, not state (its texts are messages as often
        as names, so they come last when any text will do)."""
        before = set(self.by_key)
        stack = [(key, value, 0)]
        while stack:
            k, v, depth = stack.pop()
            if depth > 12:
                continue
            if isinstance(v, dict):
                # Keys of a mapping of records are values too: file names in `contents`.
                keyed = bool(v) and all(isinstance(child, dict) for child in v.values())
                for child_key, child in v.items():
                    if keyed and k:
                        self._add(k, child_key)
                    stack.append((str(child_key), child, depth + 1))
            elif isinstance(v, list):
                stack.extend((k, item, depth + 1) for item in v)
            elif k and isinstance(v, (str, int, float, bool)) and v != "<cycle>":
                self._add(k, v)
        if result:
            self.result_keys |= set(self.by_key) - before

    def add(self, key: str, value: Any) -> None:
        """Remember one value under `key` (what `learn` does for each scalar it finds)."""
        self._add(key, value)

    def _add(self, key: str, value: Any) -> None:
        # Newest last: the latest session token is the one that still works. A key's values
        # are distinct, so a value seen before is moved to the end; one that is the newest
        # already changes nothing (the common case: a large state learned again).
        values = self.by_key.get(key)
        if values is None:
            values = self.by_key[key] = []
        elif values and _same(values[-1], value):
            return
        else:
            values = [v for v in values if not _same(value, v)]
            self.by_key[key] = values
        values.append(value)
        if len(values) > MAX_POOL:
            del values[: len(values) - MAX_POOL]

    def exact(self, param: ParamModel) -> list[Any]:
        """Values found under the parameter's own name, newest first."""
        return [v for v in reversed(self.by_key.get(param.name, [])) if _fits(param, v)]

    def any_texts(self, limit: int = 24) -> list[str]:
        """Short texts from anywhere, a few from each key, the state's before results'."""
        out: list[str] = []
        for key in sorted(self.by_key, key=lambda k: (k in self.result_keys, k)):
            newest = self.by_key[key][::-1][:4]
            out += [v for v in newest if isinstance(v, str) and 0 < len(v) <= 40]
        return _distinct(out)[:limit]

    def for_param(self, param: ParamModel) -> list[Any]:
        """Values found under keys whose names share the most words with the parameter."""
        wanted = set(words_of(param.name)) - {"id"} or set(words_of(param.name))
        best: list[tuple[int, str]] = []
        for key in self.by_key:
            tokens = set(words_of(key))
            score = len(wanted & tokens) * 2 + (key == param.name) * 5
            if score:
                best.append((score, key))
        best.sort(key=lambda item: (-item[0], item[1]))
        out: list[Any] = []
        for _, key in best[:3]:
            out += [v for v in self.by_key[key] if _fits(param, v)]
        return _distinct(out)


def fresh_value(param: ParamModel, rng: random.Random, pools: ValuePools | None = None) -> Any:
    """A plausible new value for a parameter the state cannot supply."""
    tokens = name_tokens(param.name)
    kind = param.type
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.choice((1, 2, 3, 5, 10))
    if kind == "number":
        # Fractions and sizes both: a pedal position is 0..1, a fuel amount tens.
        return rng.choice((0.5, 1.0, 2.5, 10.0, 25.0))
    if kind == "array":
        return [_fresh_text(tokens, rng)]
    if kind == "object":
        # Fields to update, say: one the docstring lists (`- title (str): ...`), else one
        # records have, with a new value.
        listed = _FIELD_IN_TEXT.findall(param.description or "")
        if listed:
            key, hint = rng.choice(listed)
            sub = ParamModel(name=key, type=_PY_TYPES.get(hint.lower()))
            return {key: fresh_value(sub, rng)}
        keys = sorted(k for k, v in (pools.by_key if pools else {}).items() if v)
        if not keys:
            return {}
        key = rng.choice(keys)
        return {key: fresh_value(ParamModel(name=key, type=_json_type(pools.by_key[key][0])), rng)}
    return _fresh_text(tokens, rng)


def _json_type(value: Any) -> str | None:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string" if isinstance(value, str) else None


# Parts of a postal address a parameter may be named for, and the Faker provider of each: a
# new country is a country ("Bhutan"), never words made up for one.
_PLACES = (
    ("country", "country"),
    ("city", "city"),
    ("zip", "postcode"),
    ("zipcode", "postcode"),
    ("postcode", "postcode"),
    ("postal", "postcode"),
    ("street", "street_address"),
    ("address", "street_address"),
)


# One Faker (making one costs milliseconds), seeded per value under a lock: threads probing
# at once must not draw from each other's seeds.
_FAKER_LOCK = threading.Lock()


@functools.cache
def _faker() -> Any:
    from faker import Faker

    return Faker("en_US")


def _place(tokens: list[str], rng: random.Random) -> str | None:
    """A new value of the address part `tokens` names (seeded by `rng`), else None."""
    bare = [t.rstrip("0123456789") for t in tokens]  # address1, address2
    for word, provider in _PLACES:
        if word in bare:
            if word == "address" and "address2" in tokens:
                provider = "secondary_address"
            seed = rng.getrandbits(32)
            with _FAKER_LOCK:
                fake = _faker()
                fake.seed_instance(seed)
                return str(getattr(fake, provider)())
    return None


def _fresh_text(tokens: list[str], rng: random.Random) -> str:
    """New text for a parameter named `tokens`: its kind's form where the name says it (a
    first name, an email, a date, a token, a part of an address), else a few plain words."""
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    words = set(tokens)
    if "first" in words and "name" in words:
        return first
    if ("last" in words or "surname" in words) and ("name" in words or "surname" in words):
        return last
    if words & {"token", "secret", "key", "code"} or (words & {"client", "api"} and "id" in words):
        return "".join(rng.choice("abcdefghjkmnpqrstuvwxyz23456789") for _ in range(10))
    if words & {"amount", "price", "total", "cost", "fee", "sum", "balance"}:
        return f"{rng.randint(5, 120)}.00"
    if "email" in tokens:
        return f"{first}.{last}@example.com".lower()
    if "date" in tokens or "day" in tokens:
        return f"2026-{rng.randint(3, 11):02d}-{rng.randint(1, 28):02d}"
    if "time" in tokens:
        return f"{rng.randint(8, 17):02d}:00"
    if "file" in tokens:
        return f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}.txt"
    if {"dir", "folder", "directory"} & set(tokens):
        return f"{rng.choice(WORDS)}_{rng.choice(NOUNS)}"
    if {"user", "username", "login"} & set(tokens) and "name" in tokens or "username" in tokens:
        return f"{first.lower()}_{last.lower()}"
    if "name" in tokens or "title" in tokens:
        return f"{rng.choice(WORDS).title()} {rng.choice(NOUNS).title()}"
    if {"password", "secret", "pin"} & set(tokens):
        return f"{rng.choice(WORDS)}{rng.randint(100, 999)}"
    place = _place(tokens, rng)
    if place is not None:
        return place
    return f"{' '.join(rng.sample(WORDS, 2))} {rng.choice(NOUNS)}"


_MADE_UP_WORDS = frozenset(WORDS) | frozenset(NOUNS)


def made_up(value: Any) -> bool:
    """Whether `value` is the last resort of fresh_value: words put together for a probe
    ("meadow willow report"), or a list holding one. A probe may send it; a task never says
    it, as a person would never write it."""
    if isinstance(value, list):
        return any(made_up(item) for item in value)
    if isinstance(value, dict):
        return any(made_up(item) for item in value.values())
    if not isinstance(value, str):
        return False
    found = re.findall(r"[a-z]+", value.lower())
    return len(found) >= 2 and all(w in _MADE_UP_WORDS for w in found)


def candidates(
    tool: ToolModel,
    param: ParamModel,
    pools: ValuePools,
    rng: random.Random,
    *,
    limit: int = 4,
) -> list[Any]:
    """Values worth trying for `param`, most promising first (ids, enums, pooled, fresh)."""
    enum = enum_of(param)
    if enum:
        values = list(enum)
        rng.shuffle(values)
        if param.type == "array":
            return [[v] for v in values[:limit]]
        return values[:limit]
    out: list[Any] = []
    exact = pools.exact(param)
    if param.takes and pools.ids.get(param.takes):
        ids = list(pools.ids[param.takes])
        rng.shuffle(ids)
        out += ids[:limit]
    elif exact:
        # The state keeps a value under this very name (an access token): the newest first.
        out += exact[:2]
    elif is_id_name(param.name):
        # An id nobody has tied to a collection yet: any collection's ids may be the one.
        ids = [rid for name in sorted(pools.ids) for rid in pools.ids[name]]
        rng.shuffle(ids)
        out += ids[:limit]
    pooled = pools.for_param(param)
    if not pooled and param.type in ("string", None):
        # No key is named like the parameter (`source` for a file in `contents`): any short
        # text the state holds may be what it wants.
        pooled = pools.any_texts()
    if param.type == "string":
        # Money kept as Decimal reports as a number; a tool that takes it as text wants "12.5".
        pooled += [
            str(v) for v in pooled if isinstance(v, (int, float)) and not isinstance(v, bool)
        ]
    rng.shuffle(pooled)
    out += pooled[:limit]
    if param.type == "array" and not out:
        items = [v for v in pools.for_param(param.model_copy(update={"type": None}))]
        if items:
            out.append([rng.choice(items)])
    out.append(fresh_value(param, rng, pools))
    if param.type == "object":
        out += [fresh_value(param, rng, pools) for _ in range(limit)]
    return _distinct([v for v in out if _fits(param, v)])[: limit + 1]


def _fits(param: ParamModel, value: Any) -> bool:
    kind = param.type
    if kind is None:
        return True
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True


def _same(a: Any, b: Any) -> bool:
    return type(a) is type(b) and a == b


def _distinct(values: Iterable[Any]) -> list[Any]:
    out: list[Any] = []
    for v in values:
        if not any(_same(v, seen) for seen in out):
            out.append(v)
    return out


def record_args(
    tool: ToolModel,
    coll: CollectionModel,
    record: dict[str, Any],
    key: Any,
    names: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Arguments taken together from one record, for parameters that name its fields.

    `login(username, password)` only works with a user's own password: drawing each value
    on its own almost never pairs them. The record's id stands in for parameters named
    after the collection (`user_id`), and `names` (from a name -> id index pointing at this
    collection, `user_map`) for parameters naming it (`username`).
    """
    label = "_".join(name_tokens(coll.label))
    view = dict(record)
    if names and str(key) in names:
        for alias in ("name", f"{label}_name", f"{label}name"):
            view[alias] = names[str(key)]
    # A collection keyed by its records' names (ACEBench's users: {"Eve": {"password": ...}})
    # gives its key to `username` as well as `user_id`.
    for alias in (
        coll.id_field,
        label,
        f"{label}_id",
        f"{label}_name",
        f"{label}name",
        f"{label}_key",
    ):
        view.setdefault(alias, key)
    out: dict[str, Any] = {}
    for p in tool.params:
        wanted = words_of(p.name)
        best = [k for k in view if words_of(k) == wanted]
        if best and _fits(p, view[best[0]]) and not isinstance(view[best[0]], (dict, list)):
            out[p.name] = view[best[0]]
    return out


def argument_groups(
    tool: ToolModel, state: dict[str, Any], *, least: int = 3, budget: int = 20_000
) -> list[dict[str, Any]]:
    """Arguments to take together, one dict per object of the state, at any depth, whose
    keys name `least` or more of the tool's plain parameters: an address (`address1`,
    `city`, `state`, `zip`) stays one address rather than a city of one record with
    another's state. At most `budget` values of a large state are looked at."""
    names = {p.name for p in tool.params if not p.takes}
    if len(names) < least:
        return []
    found: list[dict[str, Any]] = []
    stack: list[tuple[Any, int]] = [(state, 0)]
    looked = 0
    while stack and looked < budget:
        value, depth = stack.pop()
        looked += 1
        if isinstance(value, dict):
            keys = sorted(names & {k for k in value if isinstance(k, str)})
            scalar = all(isinstance(value[k], (str, int, float)) for k in keys)
            if len(keys) >= least and scalar:
                found.append({k: value[k] for k in keys})
            if depth < 6:
                stack.extend((child, depth + 1) for child in reversed(list(value.values())))
        elif isinstance(value, list) and depth < 6:
            stack.extend((child, depth + 1) for child in reversed(value[:50]))
    return found


def coherent_args(
    tool: ToolModel,
    collections: Iterable[CollectionModel],
    state: dict[str, Any],
    rng: random.Random,
) -> dict[str, Any]:
    """Arguments from one random record that fills two or more of the tool's parameters
    ({} when no collection's records speak to that many of them)."""
    collections = list(collections)
    # Names an index gives the records it points at: {"USR001": "alice"}.
    names: dict[str, Any] = {}
    for index in (c for c in collections if c.shape == "index"):
        names.update({str(r["id"]): r["name"] for r in index.records_in(state)})
    options = []
    for coll in collections:
        records = coll.records_in(state)
        ids = coll.ids_in(state)
        if not records or len(records) != len(ids):
            continue
        probe = record_args(tool, coll, records[0], ids[0], names)
        if len(probe) >= min(2, len(tool.params)) and probe:
            options.append((coll, records, ids))
    if not options:
        return {}
    coll, records, ids = rng.choice(options)
    i = rng.randrange(len(records))
    return record_args(tool, coll, records[i], ids[i], names)
