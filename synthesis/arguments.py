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
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.envmodel import CollectionModel, ParamModel, ToolModel

_ENUM_IN_TEXT = re.compile(r"\[Enum\]:\s*(\[[^\]]*\])", re.IGNORECASE)
_WORDS = (
    "amber",
    "cedar",
    "harbor",
    "maple",
    "north",
    "orchid",
    "silver",
    "summit",
    "willow",
    "coral",
    "granite",
    "meadow",
)
_NOUNS = ("notes", "plan", "report", "draft", "budget", "summary", "agenda", "ideas")
_FIRST = ("Avery", "Blake", "Casey", "Devon", "Emery", "Harper", "Jordan", "Quinn", "Riley")
_LAST = ("Abbott", "Brennan", "Dalton", "Garza", "Hale", "Jensen", "Moreau", "Okoye", "Pryce")
MAX_POOL = 64


def name_tokens(name: str) -> list[str]:
    """`receiverId`, `receiver_id` and `Receiver ID` all give ['receiver', 'id']."""
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]


def singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("ses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3:
        return word[:-1]
    return word


def is_id_name(name: str) -> bool:
    tokens = name_tokens(name)
    return (
        bool(tokens)
        and tokens[-1] in ("id", "ids", "uuid", "key", "token", "number")
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

    def learn(self, value: Any, key: str = "") -> None:
        """Remember every scalar under its key, and keys of dicts under their parent's key."""
        stack = [(key, value, 0)]
        while stack:
            k, v, depth = stack.pop()
            if depth > 12:
                continue
            if isinstance(v, dict):
                for child_key, child in v.items():
                    if isinstance(child, (dict, list)) and k:
                        # Keys of a mapping are values too: file names in `contents`.
                        self._add(k, child_key)
                    stack.append((str(child_key), child, depth + 1))
            elif isinstance(v, list):
                stack.extend((k, item, depth + 1) for item in v)
            elif k and isinstance(v, (str, int, float, bool)) and v != "<cycle>":
                self._add(k, v)

    def _add(self, key: str, value: Any) -> None:
        values = self.by_key.setdefault(key, [])
        if len(values) < MAX_POOL and not any(_same(value, v) for v in values):
            values.append(value)

    def for_param(self, param: ParamModel) -> list[Any]:
        """Values found under keys whose names share the most words with the parameter."""
        wanted = set(name_tokens(param.name)) - {"id"} or set(name_tokens(param.name))
        best: list[tuple[int, str]] = []
        for key in self.by_key:
            tokens = set(name_tokens(key))
            score = len(wanted & tokens) * 2 + (key == param.name) * 5
            if score:
                best.append((score, key))
        best.sort(key=lambda item: (-item[0], item[1]))
        out: list[Any] = []
        for _, key in best[:3]:
            out += [v for v in self.by_key[key] if _fits(param, v)]
        return _distinct(out)


def fresh_value(param: ParamModel, rng: random.Random) -> Any:
    """A plausible new value for a parameter the state cannot supply."""
    tokens = name_tokens(param.name)
    kind = param.type
    if kind == "boolean":
        return rng.random() < 0.5
    if kind == "integer":
        return rng.randint(1, 5)
    if kind == "number":
        return float(rng.randint(2, 40))
    if kind == "array":
        return [_fresh_text(tokens, rng)]
    if kind == "object":
        return {}
    return _fresh_text(tokens, rng)


def _fresh_text(tokens: list[str], rng: random.Random) -> str:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    if "email" in tokens:
        return f"{first}.{last}@example.com".lower()
    if "date" in tokens or "day" in tokens:
        return f"2026-{rng.randint(3, 11):02d}-{rng.randint(1, 28):02d}"
    if "time" in tokens:
        return f"{rng.randint(8, 17):02d}:00"
    if "file" in tokens:
        return f"{rng.choice(_WORDS)}_{rng.choice(_NOUNS)}.txt"
    if {"dir", "folder", "directory"} & set(tokens):
        return f"{rng.choice(_WORDS)}_{rng.choice(_NOUNS)}"
    if {"user", "username", "login"} & set(tokens) and "name" in tokens or "username" in tokens:
        return f"{first.lower()}_{last.lower()}"
    if "name" in tokens or "title" in tokens:
        return f"{rng.choice(_WORDS).title()} {rng.choice(_NOUNS).title()}"
    if {"password", "secret", "pin"} & set(tokens):
        return f"{rng.choice(_WORDS)}{rng.randint(100, 999)}"
    return f"{rng.choice(_WORDS)} {rng.choice(_WORDS)} {rng.choice(_NOUNS)}"


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
    if param.takes and pools.ids.get(param.takes):
        ids = list(pools.ids[param.takes])
        rng.shuffle(ids)
        out += ids[:limit]
    elif is_id_name(param.name):
        # An id nobody has tied to a collection yet: any collection's ids may be the one.
        ids = [rid for name in sorted(pools.ids) for rid in pools.ids[name]]
        rng.shuffle(ids)
        out += ids[:limit]
    pooled = pools.for_param(param)
    rng.shuffle(pooled)
    out += pooled[:limit]
    if param.type == "array" and not out:
        items = [v for v in pools.for_param(param.model_copy(update={"type": None}))]
        if items:
            out.append([rng.choice(items)])
    out.append(fresh_value(param, rng))
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
