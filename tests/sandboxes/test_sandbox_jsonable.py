"""The worker's state conversion, tested in-process (it is plain stdlib code)."""

from __future__ import annotations

import datetime
import decimal
import enum
from collections import deque
from dataclasses import dataclass

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
