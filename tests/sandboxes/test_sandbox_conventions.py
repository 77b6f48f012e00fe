"""One tool rule (sandboxes/inside/conventions.py): the worker applies it to the live class,
the analysis to its source and also tells helpers apart by what they do, which a live class
cannot show; a session told the analysis's tools offers exactly those."""

from __future__ import annotations

import textwrap

import pytest

from sandboxes import EnvSource, open_session
from sandboxes.inside import conventions
from synthesis.environments.analysis import analyze_class

SOURCE = textwrap.dedent('''
    import functools


    class Base:
        def inherited(self) -> dict:
            """A tool defined in a base class."""
            return {"success": True, "data": "base"}

        def shadowed(self) -> dict:
            """A tool here, but a property in the subclass."""
            return {"success": True}

        def reset(self):
            """State protocol: never a tool."""


    class Env(Base):
        class Nested:
            pass

        shadowed = property(lambda self: 1)

        def __init__(self):
            self.count = 0

        def tool(self, n: int) -> dict:
            """A documented tool."""
            self.count += n
            return {"success": True, "data": self.count}

        def typed(self, n: int) -> int:
            return n

        def bare_helper(self, amount):
            return amount

        @functools.lru_cache(maxsize=None)
        def cached(self) -> dict:
            """Cached, still a tool."""
            return {"success": True}

        @staticmethod
        def static(x):
            """A staticmethod."""

        @classmethod
        def klass(cls):
            """A classmethod."""

        @property
        def prop(self):
            """A property."""
            return 1

        async def later(self) -> dict:
            """Async: the worker cannot await it."""

        def get_state(self) -> dict:
            """A dumper, not a tool."""
            return {}

        def assert_invariants(self) -> None:
            """A test hook."""

        def _private(self) -> dict:
            """Private."""
''')
TOOLS = ["cached", "inherited", "tool", "typed"]


def test_the_rule_on_a_live_class():
    # `bare_helper` (no docstring, no annotation, never touching self) is a helper only by
    # what its source shows.
    namespace: dict = {}
    exec(compile(SOURCE, "<conventions test>", "exec"), namespace)
    assert sorted(conventions.tool_names(namespace["Env"])) == sorted([*TOOLS, "bare_helper"])


def test_the_analysis_applies_the_same_rule_to_the_source():
    assert sorted(tool["name"] for tool in analyze_class(SOURCE, "Env")) == TOOLS


def test_the_worker_exposes_exactly_those_tools(backend):
    source = EnvSource(code=SOURCE, class_name="Env", tools=tuple(TOOLS))
    with open_session(source, {}, backend=backend) as session:
        assert session.tools == TOOLS
        assert session.call("inherited", {}).result == {"success": True, "data": "base"}
        assert session.call("typed", {"n": 3}).result == 3
        for name in ("bare_helper", "static", "prop", "later", "get_state", "reset", "Nested"):
            assert session.call(name, {}).error == f"unknown tool: {name!r}"


BOOKINGS = textwrap.dedent('''
    class Bookings:
        """ACEBench's Travel in small: documented helpers, undocumented bookings."""

        def __init__(self):
            self.users = {"u1": {"password": "pw", "cash": 100}}
            self.flights = {"F1": {"price": 40}}

        def get_user(self, user_id: str) -> dict:
            """Read a user."""
            return self.users[user_id]

        def list_flights(self):
            """Every flight number (called by reserve too, still a tool)."""
            return ["F1", "F2"]

        def authenticate(self, user_id, password):
            return self.users[user_id]["password"] == password

        def pay(self, user, amount):
            """Take `amount` from a user record."""
            user["cash"] -= amount

        def fee(self, bags):
            return 10 * bags

        def reserve(self, user_id, password, flight_no):
            if flight_no not in self.list_flights() or not self.authenticate(user_id, password):
                return "refused"
            self.pay(self.users[user_id], self.flights[flight_no]["price"] + self.fee(0))
            return "booked"
''')


def test_helpers_are_told_apart_by_what_they_do_not_by_their_docstrings(backend):
    # A record parameter another method fills (pay), an undocumented method another calls
    # (authenticate), an undocumented function of its arguments (fee): helpers. The
    # undocumented booking and the documented lister that reserve also calls: tools.
    tools = [tool["name"] for tool in analyze_class(BOOKINGS)]
    assert tools == ["get_user", "list_flights", "reserve"]
    source = EnvSource(code=BOOKINGS, tools=tuple(tools))
    with open_session(source, {}, backend=backend) as session:
        assert session.tools == sorted(tools)
        assert session.call("pay", {"user": {"cash": 0}, "amount": -500}).error == (
            "unknown tool: 'pay'"
        )
        booking = {"user_id": "u1", "password": "pw", "flight_no": "F1"}
        assert session.call("reserve", booking).result == "booked"
        assert session.final_state()["users"]["u1"]["cash"] == 60


def test_without_any_docstring_every_public_function_is_a_tool():
    code = "class Plain:\n    def a(self):\n        pass\n\n    def b(self, x):\n        return x\n"
    namespace: dict = {}
    exec(compile(code, "<plain>", "exec"), namespace)
    assert conventions.tool_names(namespace["Plain"]) == ["a", "b"]
    assert [tool["name"] for tool in analyze_class(code)] == ["a", "b"]


def _class(code: str) -> type:
    namespace: dict = {}
    exec(compile(textwrap.dedent(code), "<loader test>", "exec"), namespace)
    return namespace["Env"]


STATE = {"owner": "kim", "rest": 1}


@pytest.mark.parametrize(
    "init, loader, call",
    [
        ("pass", "attributes", ((), {}, STATE)),
        ("def __init__(self):\n        pass", "attributes", ((), {}, STATE)),
        ("def __init__(self, config, /):\n        pass", "constructor", ((STATE,), {}, {})),
        ("def __init__(self, *, state):\n        pass", "constructor", ((), {"state": STATE}, {})),
        (
            "def __init__(self, data=None, verbose=False):\n        pass",
            "constructor",
            ((STATE,), {}, {}),
        ),
        (
            "def __init__(self, owner, config=None):\n        pass",
            "constructor",
            ((), {"owner": "kim"}, {"rest": 1}),
        ),
        ("def __init__(self, verbose=False):\n        pass", "attributes", ((), {}, STATE)),
        ("def __init__(self, **options):\n        pass", "attributes", ((), STATE, {})),
        (
            "def __init__(self, owner, /, rest=0):\n        pass",
            "constructor",
            ((), {"rest": 1}, {"owner": "kim"}),
        ),
    ],
)
def test_loader_choice_and_constructor_arguments(init, loader, call):
    cls = _class(f"class Env:\n    {init}\n")
    assert conventions.choose_loader(cls) == loader
    assert conventions.constructor_call(cls, STATE) == call


def test_constructor_without_state_and_dataclasses():
    required = _class("class Env:\n    def __init__(self, owner):\n        pass\n")
    optional = _class("class Env:\n    def __init__(self, config=None):\n        pass\n")
    assert conventions.constructor_call(required, None) == (({},), {}, {})
    assert conventions.constructor_call(optional, None) == ((), {}, {})
    fields = _class(
        """
        from dataclasses import dataclass, field

        @dataclass
        class Env:
            owner: str
            books: list = field(default_factory=list)
        """
    )
    assert conventions.choose_loader(fields) == "constructor"
    assert conventions.constructor_call(fields, {"owner": "kim", "books": ["Dune"]}) == (
        (),
        {"owner": "kim", "books": ["Dune"]},
        {},
    )
