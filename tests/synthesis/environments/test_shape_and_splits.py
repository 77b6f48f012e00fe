"""Program shapes, tool-graph shapes, and the train/test split they decide."""

from __future__ import annotations

import ast
import random
import re
from pathlib import Path

import pytest

from synthesis.environments.archetypes import known_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.shape import (
    environment_tool_graph_shape,
    program_shape,
    tool_graph_shape,
)
from synthesis.environments.specgen import generate_spec
from synthesis.environments.splits import (
    build_shapes,
    held_out_shapes,
    parse_holdout,
    single_shape_archetypes,
    split_for,
    split_problems,
    with_split,
)
from synthesis.environments.topics import load_catalogue
from synthesis.models import Environment, EnvSpec

# --------------------------------------------------------------------------- program shape

CODE = '''
"""A tea shop."""
import copy


class TeaShop:
    """Sells tea."""

    def __init__(self):
        self.orders = {}
        self.statuses = ("pending", "paid")

    def pay_order(self, order_id: str) -> dict:
        """Pay an order."""
        if order_id not in self.orders:
            return {"success": False, "error": f"no order {order_id}"}
        self.orders[order_id]["status"] = "paid"
        return {"success": True, "data": copy.deepcopy(self.orders[order_id])}

    def list_orders(self) -> dict:
        return {"success": True, "data": sorted(self.orders)}
'''

# The same program: other names, strings, numbers, docstrings, enum length and method order.
RENAMED = '''
import json


class BikeRental:
    """Rents bikes, with a much longer docstring than the other one."""

    def __init__(self):
        self.rentals = {}
        self.statuses = ("open", "returned", "lost")

    def list_rentals(self) -> dict:
        return {"ok": True, "items": sorted(self.rentals)}

    def close_rental(self, rental_id: str) -> dict:
        if rental_id not in self.rentals:
            return {"ok": False, "why": f"unknown rental {rental_id}!"}
        self.rentals[rental_id]["state"] = "returned"
        return {"ok": True, "items": json.loads(self.rentals[rental_id])}
'''

WITH_A_TOOL_MORE = (
    CODE
    + """
    def cancel_order(self, order_id: str) -> dict:
        self.orders[order_id]["status"] = "cancelled"
        return {"success": True}
"""
)


def test_shape_ignores_names_strings_docstrings_and_member_order():
    assert program_shape(CODE) == program_shape(RENAMED)
    assert len(program_shape(CODE)) == 16


def test_shape_changes_with_a_tool_or_a_different_statement():
    assert program_shape(WITH_A_TOOL_MORE) != program_shape(CODE)
    guarded = CODE.replace('        self.orders[order_id]["status"] = "paid"\n', "")
    assert program_shape(guarded) != program_shape(CODE)


def test_shape_of_code_that_does_not_parse_is_none():
    assert program_shape("def broken(:\n") is None


def test_class_name_picks_one_class_of_a_file_with_its_bases():
    two = CODE + "\n\nclass Other:\n    def a(self):\n        return 1\n"
    assert program_shape(two, "TeaShop") == program_shape(CODE, "TeaShop")
    assert program_shape(two, "Other") != program_shape(two, "TeaShop")
    derived = CODE + "\n\nclass Strict(TeaShop):\n    pass\n"
    # The base class stays: its tools are the derived class's tools.
    assert program_shape(derived, "Strict") != program_shape("class Strict:\n    pass\n")


def _catalogue_spec(topic_id: str) -> EnvSpec:
    (topic,) = [t for t in load_catalogue(known=known_archetypes()) if t.topic_id == topic_id]
    return generate_spec(topic)


def test_the_shapes_a_build_records_are_its_environments_shapes_workspaces_too():
    # The split of an environment is decided by its program shape: the shapes the build
    # records must be those of the code it runs (a workspace class is the workspace
    # compiler's, not the tool compiler's), or no environment ever matches a held-out shape.
    specs = [_catalogue_spec(t) for t in ("regional_sales_reports", "team_expense_claims")]
    envs = [build_environment(spec) for spec in specs]
    assert build_shapes(specs) == {"project": {program_shape(e.code, e.class_name) for e in envs}}


def _renamed(spec: EnvSpec) -> EnvSpec:
    """The spec with every name and text changed consistently (nothing else)."""
    words = {"reader": "patron", "Reader": "Patron", "book": "tome", "Book": "Tome"}
    text = spec.model_dump_json()
    text = re.sub("|".join(words), lambda m: words[m.group(0)], text)
    text = text.replace("Online", "Neighbourhood")
    return EnvSpec.model_validate_json(text)


def _with_extra_tool(spec: EnvSpec) -> EnvSpec:
    query = next(t for t in spec.tools if t.operation == "list")
    extra = query.model_copy(update={"name": f"{query.name}_again"})
    return spec.model_copy(update={"tools": [*spec.tools, extra]})


@pytest.fixture(scope="module")
def bookshop() -> EnvSpec:
    return _catalogue_spec("bookshop")


def test_compiled_specs_differing_only_in_names_share_a_shape(bookshop):
    renamed = _renamed(bookshop)
    a, b = build_environment(bookshop), build_environment(renamed)
    assert a.status == b.status == "accepted"
    assert a.code != b.code and a.class_name != b.class_name
    assert program_shape(a.code, a.class_name) == program_shape(b.code, b.class_name)
    c = build_environment(_with_extra_tool(bookshop))
    assert c.status == "accepted"
    assert program_shape(c.code, c.class_name) != program_shape(a.code, a.class_name)


# --------------------------------------------------------------------------- tool graphs


def _relabelled(nodes, edges, rng):
    names = list(nodes)
    shuffled = names[:]
    rng.shuffle(shuffled)
    rename = dict(zip(names, shuffled, strict=True))
    new_nodes = {rename[n]: label for n, label in nodes.items()}
    new_edges = [(rename[s], rename[d], label) for s, d, label in edges]
    rng.shuffle(new_edges)
    return new_nodes, new_edges


def _random_graph(rng, n=9):
    nodes = {f"t{i}": rng.choice(["query:list", "query:find", "mutate:create"]) for i in range(n)}
    edges = [
        (f"t{rng.randrange(n)}", f"t{rng.randrange(n)}", rng.choice(["data", "state"]))
        for _ in range(2 * n)
    ]
    return nodes, edges


def test_isomorphic_tool_graphs_have_one_shape():
    rng = random.Random(3)
    for _ in range(20):
        nodes, edges = _random_graph(rng)
        assert tool_graph_shape(nodes, edges) == tool_graph_shape(*_relabelled(nodes, edges, rng))


def test_different_tool_graphs_have_different_shapes():
    nodes = {"a": "query:find", "b": "mutate:transition", "c": "mutate:transition"}
    chain = [("a", "b", "data"), ("b", "c", "state")]
    fork = [("a", "b", "data"), ("a", "c", "data")]
    assert tool_graph_shape(nodes, chain) != tool_graph_shape(nodes, fork)
    # Same edges, one edge's kind changed; one node's label changed.
    assert tool_graph_shape(nodes, chain) != tool_graph_shape(
        nodes, [("a", "b", "data"), ("b", "c", "data")]
    )
    assert tool_graph_shape(nodes, chain) != tool_graph_shape({**nodes, "c": "query:get"}, chain)


def test_environment_tool_graph_ignores_names(bookshop):
    renamed = _renamed(bookshop)
    shape = environment_tool_graph_shape(from_spec(bookshop))
    assert shape == environment_tool_graph_shape(from_spec(renamed))
    assert shape != environment_tool_graph_shape(from_spec(_with_extra_tool(bookshop)))


# --------------------------------------------------------------------------- splits


def _shapes(rng, n):
    return [f"{rng.getrandbits(64):016x}" for _ in range(n)]


def test_an_archetype_with_two_or_more_shapes_has_test_and_train_shapes():
    rng = random.Random(5)
    n_test = n_all = 0
    for n in range(2, 40):
        for archetype in ("booking", "ledger", "inventory"):
            shapes = _shapes(rng, n)
            test = held_out_shapes(archetype, shapes)
            assert 1 <= len(test) < n
            n_test, n_all = n_test + len(test), n_all + n
    assert 0.15 < n_test / n_all < 0.3  # about TEST_PERCENT


def test_split_is_a_pure_function_and_never_splits_a_shape():
    rng = random.Random(8)
    shapes = _shapes(rng, 12)
    envs = [("ledger", rng.choice(shapes)) for _ in range(200)]
    siblings = [shape for _, shape in envs]
    seen: dict[str, str] = {}
    for archetype, shape in envs:
        split = split_for(archetype, shape, siblings)
        assert seen.setdefault(shape, split) == split
        # The order in which the build lists its environments does not matter.
        assert split_for(archetype, shape, list(reversed(siblings))) == split
    assert set(seen.values()) == {"train", "test"}


def test_a_single_shape_archetype_is_train_and_a_held_out_one_is_test():
    assert split_for("booking", "aaaa", ["aaaa", "aaaa"]) == "train"
    assert split_for("booking", "aaaa", ["aaaa"], holdout=["booking"]) == "test"
    rng = random.Random(2)
    shapes = _shapes(rng, 10)
    held = {split_for("ledger", s, shapes, holdout=["ledger"]) for s in shapes}
    assert held == {"test"}
    # Holding out one archetype leaves the others' splits as they were.
    assert [split_for("inventory", s, shapes, holdout=["ledger"]) for s in shapes] == [
        split_for("inventory", s, shapes) for s in shapes
    ]


def test_parse_holdout():
    assert parse_holdout(" ledger, inventory,,ledger ") == ["inventory", "ledger"]
    assert parse_holdout("") == []


def _env(env_id, archetype, shape, split, status="accepted") -> Environment:
    return Environment(
        env_id=env_id,
        topic_id=env_id,
        archetype=archetype,
        class_name="X",
        code="",
        code_sha256="0" * 64,
        tools=[],
        status=status,
        program_shape=shape,
        split=split,
    )


def test_split_problems_name_an_archetype_without_test_environments():
    envs = [
        _env("l1", "ledger", "s1", "train"),
        _env("l2", "ledger", "s2", "train"),
        _env("l3", "ledger", "s3", "test", status="quarantined"),
        _env("b1", "booking", "s9", "train"),
        _env("b2", "booking", "s9", "train"),
    ]
    booking, ledger = split_problems(envs)
    assert "'ledger'" in ledger and "no test environment" in ledger and "l1" in ledger
    # Two environments of one program shape differ only in names: nothing can be held out.
    assert "'booking'" in booking and "share one program shape" in booking and "b2" in booking
    assert single_shape_archetypes(envs) == ["booking"]
    # Held out, or with one test environment accepted, an archetype passes; so does a lone
    # environment (a tiny build's, which no split can divide).
    envs[2] = _env("l3", "ledger", "s3", "test")
    assert split_problems(envs, holdout=["booking"]) == []
    assert split_problems(envs[:4]) == []


def test_split_problems_name_a_shape_on_both_sides():
    envs = [_env("a", "inventory", "s1", "train"), _env("b", "inventory", "s1", "test")]
    (problem,) = split_problems(envs)
    assert "s1" in problem and "in train (a)" in problem and "in test (b)" in problem


def test_with_split_decides_by_the_archetypes_shapes_in_the_build(bookshop):
    specs = [bookshop, _renamed(bookshop), _with_extra_tool(bookshop)]
    renamed_twice = _renamed(bookshop).model_copy(update={"env_id": "other-bookshop"})
    specs.append(renamed_twice)
    shapes = build_shapes(specs)
    assert len(shapes[bookshop.archetype]) == 2
    envs = [with_split(build_environment(s), shapes) for s in specs]
    by_shape: dict[str, set[str]] = {}
    for env in envs:
        by_shape.setdefault(env.program_shape, set()).add(env.split)
    assert all(len(splits) == 1 for splits in by_shape.values())
    assert {s for splits in by_shape.values() for s in splits} == {"train", "test"}
    assert split_problems(envs) == []
    held = [with_split(build_environment(s), shapes, holdout=[s.archetype]) for s in specs]
    assert {e.split for e in held} == {"test"}


def test_the_shapes_dump_is_what_ast_dump_writes():
    """A shape hashes the AST's text; `_dump` makes each definition's text once, and must
    write exactly what `ast.dump` writes (fields left at None omitted, an empty list kept,
    constants of every kind), or every environment's shape and split would move."""
    from synthesis.environments import shape

    code = (
        "import os as o\nfrom . import x\n"
        "class A(B, metaclass=M):\n"
        "    '''doc'''\n"
        "    k: int = 3\n"
        "    def f(self, a, /, b=None, *c, d: 'T' = 1.5, **e) -> None:\n"
        "        global g\n"
        "        return [x async for x in y if x] or {1: b'x', ...: (None, True)}\n"
        "    async def h(self):\n"
        "        try:\n            pass\n"
        "        except (E, F) as err:\n            raise X from err\n"
        "        match p:\n            case [1, *rest] if rest: pass\n"
        "        return f'{a!r:>{w}}' + (lambda: 0j)\n"
    )
    for source in (code, Path(shape.__file__).read_text(), Path(ast.__file__).read_text()):
        tree = ast.parse(source)
        assert shape._dump(tree, {}) == ast.dump(tree)
