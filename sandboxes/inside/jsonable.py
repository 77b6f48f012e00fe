"""Convert an environment's state or a tool's result to plain JSON data, cutting reference cycles.

Runs inside the worker, so it imports nothing that is not loaded already (typing alone would
cost ~5 ms per episode). Types from libraries (numpy, decimal, datetime, fractions, uuid) are
recognised by their module's name, never imported.
"""

from __future__ import annotations

import enum
import types

CYCLE = "<cycle>"
TOO_DEEP = "<too deep>"
# 64-bit is what orjson can encode; larger ints become strings rather than failing the state.
_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


class StateTooLarge(ValueError):
    """The state graph has more nodes than we are willing to walk (e.g. a hostile DAG)."""


def public_state(obj, *, max_depth=100, max_nodes=1_000_000):
    """The object's public instance attributes as JSON data (the environment contract's state)."""
    walker = _Walker(max_depth, max_nodes, strict=False)
    walker.ancestors.add(id(obj))
    return {name: walker.convert(value, 1) for name, value in public_attributes(obj)}


def to_jsonable(value, *, strict=False, max_depth=100, max_nodes=1_000_000):
    """`value` as JSON data: JSON types as they are, sets sorted, tuples (namedtuples too) as
    lists, enums as their values, dataclasses and pydantic models as their public fields,
    numbers from decimal, fractions and numpy as numbers, numpy arrays as lists, dates and
    times in ISO 8601, timedeltas in seconds; NaN and infinities become null, as orjson
    writes them.

    Lenient (for states): any other object becomes its public attributes, a cycle CYCLE, too
    deep TOO_DEEP and anything else its repr. `strict` (for tool results) raises TypeError for
    a value with no JSON reading, ValueError for a cycle or too deep a nesting.
    """
    return _Walker(max_depth, max_nodes, strict=strict).convert(value, 0)


def public_attributes(obj):
    # Instance storage only: walking dir() would run properties, i.e. untrusted code paths
    # that are not state.
    items = {}
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


def _dataclass_fields(obj):
    """(name, value) of a dataclass instance's public fields in declaration order, else None."""
    fields = getattr(type(obj), "__dataclass_fields__", None)
    if not isinstance(fields, dict):
        return None
    # ClassVar and InitVar pseudo-fields hold no per-instance value.
    names = [
        name
        for name, spec in fields.items()
        if getattr(getattr(spec, "_field_type", None), "name", "_FIELD") == "_FIELD"
    ]
    return _stored(obj, names)


def _stored(obj, names):
    """(name, value) of the public `names` the instance holds, read as stored (no property
    or __getattr__ of the environment runs)."""
    found = []
    for name in names:
        if not isinstance(name, str) or name.startswith("_"):
            continue
        try:
            found.append((name, object.__getattribute__(obj, name)))
        except AttributeError:
            continue
    return found


def _pydantic_dump(obj):
    """A pydantic 2 model as JSON data through pydantic's own compiled serializer, when the
    class keeps pydantic's `model_dump` (a database of 10^5 values: ~20 ms, where walking its
    fields here takes ~20 times as long); else _NOT_SCALAR. Its output is JSON data by
    construction (mode "json"), so it is not walked again."""
    dump = getattr(type(obj), "model_dump", None)
    if (
        getattr(dump, "__qualname__", None) != "BaseModel.model_dump"
        or getattr(dump, "__module__", None) != "pydantic.main"
    ):
        return _NOT_SCALAR
    try:
        return dump(obj, mode="json")
    except Exception:  # a serializer that fails: read the fields instead
        return _NOT_SCALAR


def _pydantic_fields(obj):
    """(name, value) of a pydantic model's public fields in declaration order, else None, read
    as stored: for a model whose class overrides model_dump, or whose serializer failed."""
    fields = getattr(type(obj), "__pydantic_fields__", None)  # pydantic 2
    if not isinstance(fields, dict):
        fields = getattr(type(obj), "__fields__", None)  # pydantic 1
        if not isinstance(fields, dict) or not hasattr(type(obj), "__config__"):
            return None
    return _stored(obj, list(fields))


def _key(key):
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
    def __init__(self, max_depth, max_nodes, *, strict):
        self.max_depth = max_depth
        self.max_nodes = max_nodes
        self.strict = strict
        self.nodes = 0
        self.ancestors = set()

    def convert(self, value, depth):
        self.nodes += 1
        if self.nodes > self.max_nodes:
            raise StateTooLarge(f"more than {self.max_nodes} values to convert")
        if value is None or value is True or value is False:
            return value
        kind = type(value)
        if kind is str:
            return value
        if kind is float:
            return value if value - value == 0.0 else None
        if kind is int:
            return value if _INT_MIN <= value <= _INT_MAX else str(value)
        if isinstance(value, enum.Enum):
            return self.convert(value.value, depth)
        if isinstance(value, str):
            return str.__str__(value)
        if isinstance(value, int):
            return self.convert(int(value), depth)
        if isinstance(value, float):
            return self.convert(float(value), depth)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value).decode("utf-8", "replace")
        module = kind.__module__
        if module == "numpy" or isinstance(module, str) and module.startswith("numpy."):
            return self._numpy(value, depth)
        scalar = _scalar(value, module)
        if scalar is not _NOT_SCALAR:
            return scalar
        if depth >= self.max_depth:
            if self.strict:
                raise ValueError(f"nested more than {self.max_depth} levels deep")
            return TOO_DEEP
        marker = id(value)
        if marker in self.ancestors:
            if self.strict:
                raise ValueError("circular reference")
            return CYCLE
        self.ancestors.add(marker)
        try:
            return self._container(value, depth + 1)
        finally:
            self.ancestors.discard(marker)

    def _numpy(self, value, depth):
        # tolist() turns arrays into nested lists and scalars into Python numbers.
        for method in ("tolist", "item"):
            convert = getattr(value, method, None)
            if callable(convert):
                plain = convert()
                if plain is not value:
                    return self.convert(plain, depth)
        return self._unknown(value)

    def _container(self, value, depth):
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
            return self._unknown(value)
        dumped = _pydantic_dump(value)
        if dumped is not _NOT_SCALAR:
            return dumped
        fields = _dataclass_fields(value)
        if fields is None:
            fields = _pydantic_fields(value)
        if fields is not None:
            return {name: self.convert(v, depth) for name, v in fields}
        if self.strict:
            return self._unknown(value)
        attributes = public_attributes(value)
        if attributes or hasattr(value, "__dict__"):
            return {name: self.convert(v, depth) for name, v in attributes}
        return repr(value)[:200]

    def _unknown(self, value):
        if self.strict:
            raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
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


def _scalar(value, module):
    if module == "datetime":
        if hasattr(value, "isoformat"):
            return value.isoformat()
        if hasattr(value, "total_seconds"):
            return value.total_seconds()
    if module in ("decimal", "fractions"):
        try:
            number = float(value)
        except (OverflowError, ValueError):
            return str(value)
        return number if number - number == 0.0 else str(value)
    if module in ("uuid", "pathlib"):
        return str(value)
    return _NOT_SCALAR


def _is_sequence(value):
    # deque and array are the sequence types environments actually keep state in.
    return type(value).__name__ in ("deque", "array") and type(value).__module__ in (
        "collections",
        "array",
    )
