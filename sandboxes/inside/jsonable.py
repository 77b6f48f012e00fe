"""Convert an environment object's public state to plain JSON data, cutting reference cycles."""

from __future__ import annotations

import enum
import types
from typing import Any

CYCLE = "<cycle>"
TOO_DEEP = "<too deep>"
# 64-bit is what orjson can encode; larger ints become strings rather than failing the state.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


class StateTooLarge(ValueError):
    """The state graph has more nodes than we are willing to walk (e.g. a hostile DAG)."""


def public_state(obj: Any, *, max_depth: int = 100, max_nodes: int = 1_000_000) -> dict:
    """The object's public instance attributes as JSON data (the environment contract's state)."""
    walker = _Walker(max_depth, max_nodes)
    walker.ancestors.add(id(obj))
    return {name: walker.convert(value, 1) for name, value in _public_attributes(obj)}


def to_jsonable(value: Any, *, max_depth: int = 100, max_nodes: int = 1_000_000) -> Any:
    return _Walker(max_depth, max_nodes).convert(value, 0)


def _public_attributes(obj: Any) -> list[tuple[str, Any]]:
    # Instance storage only: walking dir() would run properties, i.e. untrusted code paths
    # that are not state.
    items: dict[str, Any] = {}
    try:
        items.update(object.__getattribute__(obj, "__dict__"))
    except AttributeError:
        pass
    for klass in type(obj).__mro__:
        for slot in klass.__dict__.get("__slots__", ()):
            if isinstance(slot, str) and slot not in items:
                try:
                    items[slot] = object.__getattribute__(obj, slot)
                except AttributeError:
                    continue
    return sorted((k, v) for k, v in items.items() if isinstance(k, str) and not k.startswith("_"))


def _key(key: Any) -> str:
    # The same spellings json.dumps uses for non-string keys, so states compare across codecs.
    if isinstance(key, str):
        return str.__str__(key)
    if key is True:
        return "true"
    if key is False:
        return "false"
    if key is None:
        return "null"
    if isinstance(key, enum.Enum):
        return _key(key.value)
    if isinstance(key, (int, float)):
        return repr(key)
    return str(key)


class _Walker:
    def __init__(self, max_depth: int, max_nodes: int) -> None:
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.nodes = 0
        self.ancestors: set[int] = set()

    def convert(self, value: Any, depth: int) -> Any:
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise StateTooLarge(f"state has more than {self.max_nodes} nodes")
        if value is None or value is True or value is False:
            return value
        kind = type(value)
        if kind is str or kind is float:
            return value
        if kind is int:
            return value if _INT_MIN <= value <= _INT_MAX else str(value)
        if isinstance(value, enum.Enum):
            return self.convert(value.value, depth)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, int):
            return self.convert(int(value), depth)
        if isinstance(value, float):
            return float(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        scalar = _scalar(value)
        if scalar is not _NOT_SCALAR:
            return scalar
        if depth >= self.max_depth:
            return TOO_DEEP
        marker = id(value)
        if marker in self.ancestors:
            return CYCLE
        self.ancestors.add(marker)
        try:
            return self._container(value, depth + 1)
        finally:
            self.ancestors.discard(marker)

    def _container(self, value: Any, depth: int) -> Any:
        if isinstance(value, dict):
            return {_key(k): self.convert(v, depth) for k, v in dict.items(value)}
        if isinstance(value, (set, frozenset)):
            items = [self.convert(v, depth) for v in value]
            try:
                return sorted(items)
            except TypeError:
                return sorted(items, key=repr)
        if isinstance(value, (list, tuple)) or _is_sequence(value):
            return [self.convert(v, depth) for v in value]
        if isinstance(value, _OPAQUE):
            return repr(value)[:200]
        attributes = _public_attributes(value)
        if attributes or hasattr(value, "__dict__"):
            return {name: self.convert(v, depth) for name, v in attributes}
        return repr(value)[:200]


_NOT_SCALAR = object()
# Code objects are not state; their attributes would drag whole modules into the snapshot.
_OPAQUE = (
    type,
    types.FunctionType,
    types.MethodType,
    types.ModuleType,
    types.BuiltinFunctionType,
    types.CodeType,
    types.FrameType,
    types.GeneratorType,
)


def _scalar(value: Any) -> Any:
    module = type(value).__module__
    if module == "datetime":
        if hasattr(value, "isoformat"):
            return value.isoformat()
        if hasattr(value, "total_seconds"):
            return value.total_seconds()
    if module == "decimal":
        number = float(value)
        return number if number == number and abs(number) != float("inf") else str(value)
    if module in ("uuid", "pathlib", "fractions"):
        return str(value)
    return _NOT_SCALAR


def _is_sequence(value: Any) -> bool:
    # deque and array are the sequence types environments actually keep state in.
    return type(value).__name__ in ("deque", "array") and type(value).__module__ in (
        "collections",
        "array",
    )
