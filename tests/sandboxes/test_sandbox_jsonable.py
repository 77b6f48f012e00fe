"""The worker's state conversion, tested in-process (it is plain stdlib code)."""

from __future__ import annotations

import datetime
import decimal
import enum
from collections import deque
from dataclasses import dataclass
from typing import ClassVar

import pytest

from sandboxes.inside.jsonable import (
    CYCLE,
    TOO_DEEP,
    StateTooLarge,
    public_state,
    to_jsonable,
)


class Color(enum.Enum):
    RED = "red"


@dataclass
class Point:
    x: int
    y: int


class Slotted:
    __slots__ = ("name", "_hidden")

    def __init__(self):
        self.name = "slots"
        self._hidden = "no"


class Env:
    def __init__(self):
        self.items = {2: "two", True: "yes", None: "none", Color.RED: "enum key", 1.5: "x"}
        self.tags = {"b", "a"}
        self.queue = deque([1, 2])
        self.when = datetime.date(2025, 1, 2)
        self.price = decimal.Decimal("1.50")
        self.color = Color.RED
        self.point = Point(1, 2)
        self.slotted = Slotted()
        self.blob = b"\xffbytes"
        self.big = 2**80
        self.func = len
        self._private = "hidden"

    @property
    def computed(self):
        raise AssertionError("properties are not state and must not run")


def test_public_state_converts_everything_to_json_data():
    state = public_state(Env())
    assert state == {
        "items": {"2": "two", "true": "yes", "null": "none", "red": "enum key", "1.5": "x"},
        "tags": ["a", "b"],
        "queue": [1, 2],
        "when": "2025-01-02",
        "price": 1.5,
        "color": "red",
        "point": {"x": 1, "y": 2},
        "slotted": {"name": "slots"},
        "blob": "\ufffdbytes",
        "big": str(2**80),
        "func": "<built-in function len>",
    }


def test_cycles_are_cut_but_shared_references_are_kept():
    shared = {"v": 1}
    node = {"name": "a", "shared": shared, "again": shared}
    node["self"] = node
    assert to_jsonable(node) == {"name": "a", "shared": {"v": 1}, "again": {"v": 1}, "self": CYCLE}

    class Obj:
        pass

    env = Obj()
    env.me = env
    env.children = [env]
    assert public_state(env) == {"me": CYCLE, "children": [CYCLE]}


def test_depth_and_size_are_bounded():
    deep = []
    for _ in range(500):
        deep = [deep]
    converted = to_jsonable(deep, max_depth=10)
    for _ in range(10):
        converted = converted[0]
    assert converted == TOO_DEEP
    # A DAG that doubles at every level would take 2**40 steps to expand.
    layer = [1]
    for _ in range(40):
        layer = [layer, layer]
    with pytest.raises(StateTooLarge):
        to_jsonable(layer, max_nodes=10_000)


def test_numbers_times_and_containers_from_common_libraries():
    import fractions
    from collections import namedtuple
    from dataclasses import field

    @dataclass
    class Booking:
        seat: tuple
        when: datetime.datetime
        kind: ClassVar[str] = "class-level, not a field"
        _hold: bool = field(default=True)

    pair = namedtuple("Pair", "a b")
    value = {
        "ratio": fractions.Fraction(3, 4),
        "huge": fractions.Fraction(10**400, 3),
        "clock": datetime.time(7, 5),
        "span": datetime.timedelta(hours=1, seconds=1),
        "pair": pair(1, frozenset({"y", "x"})),
        "booking": Booking((1, 2), datetime.datetime(2026, 3, 2, 9)),
        "inf": float("inf"),
        "bad": decimal.Decimal("NaN"),
    }
    assert to_jsonable(value, strict=True) == {
        "ratio": 0.75,
        "huge": str(fractions.Fraction(10**400, 3)),
        "clock": "07:05:00",
        "span": 3601.0,
        "pair": [1, ["x", "y"]],
        "booking": {"seat": [1, 2], "when": "2026-03-02T09:00:00"},
        "inf": None,
        "bad": "NaN",
    }


def test_numpy_values_become_plain_numbers_and_lists():
    numpy = pytest.importorskip("numpy")
    value = {
        "int": numpy.int64(7),
        "float": numpy.float32(0.5),
        "nan": numpy.float64("nan"),
        "flag": numpy.bool_(True),
        "matrix": numpy.arange(4).reshape(2, 2),
        "scalar_array": numpy.array(3.0),
    }
    assert to_jsonable(value, strict=True) == {
        "int": 7,
        "float": 0.5,
        "nan": None,
        "flag": True,
        "matrix": [[0, 1], [2, 3]],
        "scalar_array": 3.0,
    }

    class Holder:
        pass

    holder = Holder()
    holder.value = value
    assert public_state(holder) == {"value": to_jsonable(value)}


def test_strict_conversion_refuses_what_has_no_json_reading():
    class Opaque:
        def __init__(self):
            self.inner = 1

    for bad in (object(), Opaque(), len, [lambda: 1]):
        with pytest.raises(TypeError, match="is not JSON serializable"):
            to_jsonable(bad, strict=True)
    loop: list = []
    loop.append(loop)
    with pytest.raises(ValueError, match="circular reference"):
        to_jsonable(loop, strict=True)
    assert to_jsonable(loop) == [CYCLE]
    assert to_jsonable(Opaque()) == {"inner": 1}  # lenient: an object is its public attributes


def test_pydantic_models_are_their_fields_through_pydantic_or_as_stored():
    import enum

    from pydantic import BaseModel

    class Kind(enum.Enum):
        A = "a"

    class Item(BaseModel):
        name: str
        kind: Kind
        _secret: str = "hidden"

    class Box(BaseModel):
        items: dict[str, Item]
        tags: tuple[str, ...]

    class Odd(Box):
        def model_dump(self, **kwargs):  # the class's own serializer: not trusted to be data
            return {"not": "the fields"}

    box = Box(items={"i1": Item(name="lamp", kind=Kind.A)}, tags=("x",))
    expected = {"items": {"i1": {"name": "lamp", "kind": "a"}}, "tags": ["x"]}
    assert to_jsonable(box, strict=True) == expected
    assert to_jsonable(Odd(**box.model_dump()), strict=True) == expected
