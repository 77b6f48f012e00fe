"""Foreign sources: how `--envs` and catalogue `source` entries find a class, without running it."""

from __future__ import annotations

import importlib.util
import random
import textwrap
from pathlib import Path

import pytest

from synthesis.environments.foreign import (
    SourceError,
    distinct_ids,
    env_id_for,
    foreign_environment,
    resolve_sources,
    third_party_imports,
)
from synthesis.environments.foreign_states import augment_state
from synthesis.environments.inference import find_collections
from synthesis.hashing import sha256_text

FOREIGN = Path(__file__).resolve().parents[2] / "fakes" / "foreign"
BFCL = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"

TWO_CLASSES = textwrap.dedent('''
    from dataclasses import dataclass

    @dataclass
    class Room:
        number: int
        floor: int

    class Hotel:
        def __init__(self):
            self.rooms = {}

        def list_rooms(self) -> list:
            """List rooms."""
            return list(self.rooms)

        def add_room(self, number: int) -> dict:
            """Add a room."""
            self.rooms[number] = {"floor": number // 100}
            return {"ok": True}
''')


def test_a_file_with_several_classes_takes_the_one_that_holds_the_state(tmp_path):
    path = tmp_path / "hotel.py"
    path.write_text(TWO_CLASSES)
    (source,) = resolve_sources(str(path))
    assert source.class_name == "Hotel" and source.env_id == "hotel"
    (named,) = resolve_sources(f"{path}:Hotel")
    assert named.class_name == "Hotel"
    env = foreign_environment(source)
    assert env.source == "foreign" and env.status == "accepted"
    assert [t.name for t in env.tools] == ["list_rooms", "add_room"]  # in source order
    assert env.origin.kind == "code" and env.origin.requires == []


def test_a_directory_gives_one_environment_per_file_with_its_states_file():
    sources = resolve_sources(str(FOREIGN))
    assert len(sources) == len(list(FOREIGN.glob("*.py"))) >= 12
    by_id = {s.env_id: s for s in sources}
    assert len(by_id) == len(sources)
    library = next(s for s in sources if s.class_name == "LibraryLoans")
    assert library.states_path and library.states_path.endswith("library_loans.py.states.json")


@pytest.mark.skipif(importlib.util.find_spec("bfcl_eval") is None, reason="bfcl-eval missing")
def test_a_module_source_is_located_by_path_and_loaded_by_name():
    (source,) = resolve_sources(f"{BFCL}.ticket_api:TicketAPI")
    assert source.module == f"{BFCL}.ticket_api" and source.class_name == "TicketAPI"
    env = foreign_environment(source)
    assert env.origin.kind == "module"
    assert "bfcl_eval" not in env.origin.requires  # its own package is mounted, not required
    assert "close_ticket" in [t.name for t in env.tools]


def test_classes_of_one_name_from_two_places_get_ids_of_where_they_live(tmp_path):
    # ACEBench's MessageApi beside BFCL's MessageAPI are both `message_api`: each is named
    # after its folder (a module source: its package), the rest keep their ids.
    for folder in ("phone_platform", "func_source_code"):
        (tmp_path / folder).mkdir()
        (tmp_path / folder / "message_api.py").write_text(
            "class MessageApi:\n    def send(self, to: str) -> dict:\n        return {}\n"
        )
    ace, bfcl = (
        resolve_sources(str(tmp_path / folder / "message_api.py"))[0]
        for folder in ("phone_platform", "func_source_code")
    )
    (car,) = resolve_sources(str(FOREIGN / "car_rental.py"))
    assert ace.env_id == bfcl.env_id == "message_api"
    renamed = distinct_ids([ace, car, bfcl], set())
    assert [s.env_id for s in renamed] == [
        "phone_platform-message_api",
        "car_rental",
        "func_source_code-message_api",
    ]
    # An id the build's generated environments hold is taken; an index kept keeps its id;
    # the same class given twice is left as it is (the build refuses it, saying so).
    assert distinct_ids([car], {"car_rental"})[0].env_id == "foreign-car_rental"
    assert distinct_ids([ace, bfcl], set(), keep={0})[0].env_id == "message_api"
    assert [s.env_id for s in distinct_ids([car, car], set())] == ["car_rental", "car_rental"]


def test_a_base_class_in_another_module_gives_its_tools(tmp_path, monkeypatch):
    # ACEBench's FoodPlatform(BaseApi): BaseApi's turn_on_wifi lives in base_api.py, and
    # logging in needs it; as a module source (relative import) and as a file source.
    package = tmp_path / "phone"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "base_api.py").write_text(
        "class BaseApi:\n"
        "    def __init__(self):\n        self.wifi = False\n\n"
        "    def turn_on_wifi(self):\n        self.wifi = True\n\n"
        "    def login_device(self):\n        self.logged_in = True\n"
    )
    food = (
        "from {dots}base_api import BaseApi\n\n\n"
        "class Food(BaseApi):\n"
        "    def order(self, item: str) -> dict:\n"
        '        """Order an item once the wifi is on."""\n'
        "        return {{'ok': self.wifi}}\n"
    )
    (package / "food.py").write_text(food.format(dots="."))
    (package / "food_script.py").write_text(food.format(dots=""))
    monkeypatch.syspath_prepend(str(tmp_path))
    for spec in ("phone.food:Food", str(package / "food_script.py")):
        (source,) = resolve_sources(spec)
        env = foreign_environment(source)
        assert [t.name for t in env.tools] == ["order", "turn_on_wifi", "login_device"], spec
        assert {t.name: t.kind for t in env.tools}["turn_on_wifi"] == "mutate"
        assert env.code_sha256 != sha256_text(source.code)  # the base is part of the class
    aliased = food.replace(
        "from {dots}base_api import BaseApi", "import phone.base_api as api"
    ).format()
    (package / "aliased.py").write_text(aliased.replace("Food(BaseApi)", "Food(api.BaseApi)"))
    (source,) = resolve_sources(str(package / "aliased.py"))
    assert [t.name for t in foreign_environment(source).tools][1:] == [
        "turn_on_wifi",
        "login_device",
    ]
    # A package that re-exports its base (`from phone import BaseApi`).
    (package / "__init__.py").write_text("from .base_api import BaseApi\n")
    (package / "reexported.py").write_text(
        food.replace("from {dots}base_api", "from phone").format()
    )
    (source,) = resolve_sources(str(package / "reexported.py"))
    assert [t.name for t in foreign_environment(source).tools][1:] == [
        "turn_on_wifi",
        "login_device",
    ]
    (package / "alone.py").write_text(food.format(dots=".nowhere."))
    (alone,) = resolve_sources(str(package / "alone.py"))
    assert [t.name for t in foreign_environment(alone).tools] == ["order"]


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("no/such/file.py", "no such file"),
        ("no_such_package_xyz.mod:Cls", "no module named 'no_such_package_xyz'"),
        ("  ", "empty environment source"),
    ],
)
def test_sources_that_cannot_be_found_say_why(spec, message):
    with pytest.raises(SourceError, match=message):
        resolve_sources(spec)


def test_two_equally_likely_classes_must_be_named(tmp_path):
    path = tmp_path / "twins.py"
    body = '''
class {name}:
    def ping(self) -> str:
        """Ping."""
        return "pong"
'''
    path.write_text(body.format(name="Left") + body.format(name="Right"))
    with pytest.raises(SourceError, match=r"several classes .*'Left', 'Right'.*name one"):
        resolve_sources(str(path))


def test_third_party_imports_are_listed_and_the_stdlib_is_not():
    code = (
        "import os, json\nimport pandas as pd\nfrom requests.adapters import X\nfrom . import y\n"
    )
    assert third_party_imports(code) == ["pandas", "requests"]
    assert env_id_for("ticket_api", "TicketAPI") == "ticket_api"
    assert env_id_for("bank", "BankLedger") == "bank-bank_ledger"


def test_imports_inside_any_block_are_found():
    """Imports nested in classes, functions and every kind of block (the walk visits
    statements only, never expressions)."""
    code = """
class Store:
    import aa
    def load(self):
        if self.x:
            import bb
        else:
            from cc import z
        for _ in range(2):
            pass
        else:
            import dd
        try:
            import ee
        except ImportError:
            import ff
        else:
            import gg
        finally:
            import hh
        with open("x") as f:
            while f:
                import ii
        match self.kind:
            case "a":
                import jj
        async def inner():
            async with self.lock:
                import kk
        return lambda: __import__("ll")
"""
    expected = ["aa", "bb", "cc", "dd", "ee", "ff", "gg", "hh", "ii", "jj", "kk"]
    assert third_party_imports(code) == expected


def test_augmented_states_add_records_in_the_collections_own_form():
    state = {
        "members": {
            "MB-0001": {"id": "MB-0001", "name": "Ada Byron", "email": "ada@x.org", "plan": "gold"},
            "MB-0002": {
                "id": "MB-0002",
                "name": "Alan Turing",
                "email": "alan@y.org",
                "plan": "basic",
            },
        },
        "visits": [
            {"id": 1, "member_id": "MB-0001", "minutes": 30},
            {"id": 2, "member_id": "MB-0002", "minutes": 45},
        ],
        "open": True,
    }
    variant = augment_state(state, random.Random(3))
    assert variant != state and variant["open"] is True
    members, visits = variant["members"], variant["visits"]
    new_members = sorted(set(members) - set(state["members"]))
    assert new_members and all(m.startswith("MB-000") for m in new_members)
    for rid in new_members:
        assert members[rid]["id"] == rid
        assert members[rid]["plan"] in {"gold", "basic"}
    names = [m["name"].casefold() for m in members.values()]
    assert len(set(names)) == len(names)  # lookup fields stay unique
    assert [v["id"] for v in visits] == list(range(1, len(visits) + 1))
    assert all(v["member_id"] in {"MB-0001", "MB-0002"} for v in visits)  # references intact
    assert find_collections([variant])  # still the same shapes
    assert augment_state(state, random.Random(3)) == variant  # seeded


def test_a_states_file_is_named_after_an_at_sign_in_json_or_toml(tmp_path):
    from orchestration.build_process import _absolute_source
    from synthesis.environments.foreign_states import read_states_file

    path = tmp_path / "hotel.py"
    path.write_text(TWO_CLASSES)
    (tmp_path / "rooms.toml").write_text("[rooms.101]\nfloor = 1\n[rooms.202]\nfloor = 2\n")
    (tmp_path / "rooms.json").write_text('[{"rooms": {}}, {"rooms": {"7": {"floor": 0}}}]')
    (source,) = resolve_sources(f"{path}:Hotel@{tmp_path / 'rooms.toml'}")
    assert source.class_name == "Hotel" and source.states_path == str(tmp_path / "rooms.toml")
    assert read_states_file(source.states_path) == [
        {"rooms": {"101": {"floor": 1}, "202": {"floor": 2}}}
    ]
    (relative,) = resolve_sources("hotel.py@rooms.json", base=tmp_path)
    assert len(read_states_file(relative.states_path)) == 2
    # The command line makes both parts absolute, as it does a source path.
    absolute = _absolute_source(f"{path}:Hotel@{tmp_path / 'rooms.json'}")
    assert absolute == f"{path}:Hotel@{tmp_path / 'rooms.json'}"
    for spec, message in [
        (f"{path}@{tmp_path / 'missing.json'}", "no states file"),
        (f"{path}@{path}", r"a states file is \.json or \.toml"),
        (f"{path}@", "expected SOURCE@STATEFILE"),
    ]:
        with pytest.raises(SourceError, match=message):
            resolve_sources(spec)


def test_a_class_that_loads_from_no_listed_state_says_why_each_failed(tmp_path):
    from synthesis.environments.foreign_states import ForeignStateError, build_foreign_states

    models = Path(__file__).resolve().parents[2] / "fakes" / "foreign_models.py"
    bad = tmp_path / "shop.json"
    bad.write_text('[{"shop": "no orders"}]')
    (source,) = resolve_sources(f"{models}:ShopTools@{bad}")
    env = foreign_environment(source)
    with pytest.raises(ForeignStateError) as refused:
        build_foreign_states(env, seed=0, count=3, states_path=source.states_path)
    message = str(refused.value)
    assert message.startswith("the class's default: ")  # ShopDB needs its fields
    assert "state 0 of shop.json: " in message and "orders" in message
    good = tmp_path / "good.json"
    good.write_text('{"shop": "s", "orders": {"O1": {"order_id": "O1", "item": "cup", '
                    '"status": "pending"}}}')  # fmt: skip
    states = build_foreign_states(env, seed=0, count=3, states_path=str(good))
    assert states[0].state["orders"]["O1"]["item"] == "cup"
    assert states[0].dump == {"db": states[0].state}  # reported as the class holds it
