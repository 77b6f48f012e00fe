"""Well-behaved (and clumsy, but not hostile) environments for the sandbox tests.

Loaded by path with `EnvSource(path=..., class_name=...)`; nothing here is imported by pytest.
"""

import time


class Counter:
    """The environment contract in miniature: dict/scalar state, tools returning success dicts."""

    def __init__(self):
        self.count = 0
        self.log = []
        self._secret = "private attributes are not state"

    def increment(self, by: int = 1) -> dict:
        """Add to the counter."""
        if not isinstance(by, int):
            return {"success": False, "error": "by must be an integer"}
        self.count += by
        self.log.append(by)
        return {"success": True, "data": self.count}

    def get_count(self) -> dict:
        """Read the counter."""
        return {"success": True, "data": self.count}

    def fail(self, message: str = "boom") -> dict:
        """Raise instead of returning (a contract violation the sandbox must contain)."""
        raise ValueError(message)


class Clumsy:
    """Mistakes generated code makes: prints, slow calls, non-JSON results, exits."""

    def __init__(self):
        self.calls = 0

    def chatty(self) -> dict:
        print("debug output that must not reach the protocol")
        import sys

        sys.stderr.write("and neither must this\n")
        self.calls += 1
        return {"success": True, "data": "said a lot"}

    def sleep(self, seconds: float) -> dict:
        time.sleep(seconds)
        self.calls += 1
        return {"success": True, "data": seconds}

    def returns_set(self) -> dict:
        return {"success": True, "data": {1, 2, 3}}

    def returns_object(self) -> object:
        return object()

    def returns_rich(self) -> dict:
        """Values a hand-written environment returns that JSON has no type for."""
        import datetime
        import decimal
        import enum
        import fractions
        import uuid
        from collections import namedtuple
        from dataclasses import dataclass, field

        class Colour(enum.Enum):
            RED = "red"

        @dataclass
        class Seat:
            row: int
            tags: frozenset = field(default_factory=frozenset)
            _hold: str = "private"

        point = namedtuple("Point", "x y")
        return {
            "set": {3, 1, 2},
            "tuple": (1, "a"),
            "point": point(1, 2),
            "when": datetime.datetime(2026, 3, 2, 9, 30),
            "day": datetime.date(2026, 3, 2),
            "clock": datetime.time(9, 30),
            "span": datetime.timedelta(minutes=90),
            "price": decimal.Decimal("2.50"),
            "ratio": fractions.Fraction(1, 4),
            "colour": Colour.RED,
            "seat": Seat(4, frozenset({"aisle"})),
            "id": uuid.UUID(int=1),
            "nan": float("nan"),
        }

    def returns_cycle(self) -> list:
        loop = []
        loop.append(loop)
        return loop

    def returns_nan(self) -> dict:
        return {"success": True, "data": float("nan")}

    def returns_big(self, size: int) -> dict:
        return {"success": True, "data": "x" * size}

    def returns_int_keys(self) -> dict:
        return {"success": True, "data": {1: "one", 2: "two"}}

    def calls_exit(self) -> dict:
        raise SystemExit(3)

    def dies(self) -> dict:
        """The process ends under the call: nothing after this line runs in it."""
        import os

        os._exit(3)

    def keyboard_interrupt(self) -> dict:
        raise KeyboardInterrupt


class Broken:
    """A constructor that raises: the environment never loads."""

    def __init__(self):
        raise RuntimeError("cannot construct")

    def tool(self) -> dict:
        return {"success": True}


class Notes:
    """A workspace environment: its own verbs next to the sandbox's file and shell tools."""

    def __init__(self):
        self.opened = 0

    def count_words(self, path: str) -> dict:
        """Count the words of a workspace file with `wc`, run inside the sandbox."""
        import subprocess

        self.opened += 1
        done = subprocess.run(["wc", "-w", path], capture_output=True, text=True, timeout=5)
        if done.returncode != 0:
            return {"success": False, "error": done.stderr.strip()}
        return {"success": True, "data": int(done.stdout.split()[0])}
