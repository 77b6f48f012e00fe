"""The ledger, inventory and catalogue_search archetypes: every topic gives a valid, working
environment with proven tasks, and environments of one archetype differ in program shape."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from synthesis import codec
from synthesis.environments.archetypes import PLANNED_ARCHETYPES, supported_archetypes
from synthesis.environments.archetypes.features import feature_set
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.models import Topic
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.synthesis.gold_in_model import proven_enough
from tests.synthesis.tool_schemas import assert_valid_tools

ARCHETYPES = ("ledger", "inventory", "catalogue_search")
TOPICS = [t for t in load_catalogue() if t.archetype in ARCHETYPES]


def test_the_catalogue_has_a_dozen_topics_per_archetype_and_none_waits():
    for archetype in ARCHETYPES:
        assert sum(t.archetype == archetype for t in TOPICS) >= 12, archetype
        assert archetype in supported_archetypes()
        assert archetype not in PLANNED_ARCHETYPES


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_tool_is_a_valid_function_definition_and_reads_are_there(topic):
    spec = generate_spec(topic)
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    operations = {t.operation for t in spec.tools}
    assert {"get", "search", "aggregate", "create", "transition"} <= operations, operations
    assert_valid_tools(spec, env)


# brokerage_cash's state names three cash accounts "Dividend Sweep" with the same status: the
# planner must not ask what a look-alike shares (it predicts the wrong-record baseline).
@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_topic_loads_plans_and_proves_its_tasks(topic):
    from quality.selftest import selftest_scenarios

    spec = generate_spec(topic)
    env = build_environment(spec)
    model = from_spec(spec, env)
    state = build_initial_state(env, seed=5, index=0, records_per_entity=3)
    made = {
        e.collection
        for e in spec.entities
        if any(t.entity == e.name and t.operation == "create" for t in spec.tools)
    }
    assert any(state.state[c] for c in made), "the history created no records"
    planned = plan_scenarios(env, state, seed=5, count=3, max_chain_length=6, model=model)
    assert planned, topic.topic_id
    executed = execute_gold(env, planned, model=model)
    published = [s for s in executed if s.status == "published"]
    assert published, [s.reason for s in executed]
    items = [(s, derive_checks(s, model=model)) for s in published]
    results = selftest_scenarios(env, items, model=model)
    proven_enough(results, at_least=1)


# --------------------------------------------------------------------------- program shapes


class _Abstract(ast.NodeTransformer):
    """Identifiers and constants replaced by placeholders: what is left is program shape."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_arg(self, node):
        node.arg, node.annotation = "_", None
        return node

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(value=0), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = "_"
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.name, node.returns = "_", None
        return node

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        node.name = "_"
        return node


def program_shape(code: str) -> str:
    return ast.dump(_Abstract().visit(ast.parse(code)))


@pytest.mark.parametrize("archetype", ARCHETYPES)
def test_environments_of_one_archetype_differ_in_program_shape(archetype):
    topics = [t for t in TOPICS if t.archetype == archetype]
    shapes = {program_shape(compile_spec(generate_spec(t))) for t in topics}
    # Renaming alone would give one shape; features chosen per topic give (nearly) one each.
    assert len(shapes) >= len(topics) - 2, (archetype, len(shapes), len(topics))
    tool_counts = {len(generate_spec(t).tools) for t in topics}
    assert len(tool_counts) >= 3, tool_counts


def test_features_are_a_deterministic_function_of_the_topic_and_can_be_listed():
    topic, ledger = TOPICS[0], feature_set("ledger")
    first = ledger.choose(topic)
    assert first == ledger.choose(topic)
    assert len(first) >= 3
    others = {ledger.choose(t) for t in TOPICS}
    assert len(others) > 3  # topics differ
    listed = topic.model_copy(
        update={"vocabulary": {**topic.vocabulary, "features": ["limits", "memos"]}}
    )
    assert ledger.choose(listed) == {"limits", "memos"}


def _without_optional_features(topic: Topic) -> Topic:
    """An order_lifecycle topic without its optional features: the program it always had.
    (Its features bring search and aggregate tools; booking has no optional features.)"""
    if topic.archetype != "order_lifecycle":
        return topic
    return topic.model_copy(update={"vocabulary": {**topic.vocabulary, "features": []}})


def test_specs_without_the_new_features_serialise_as_before():
    # Specs of the older archetypes keep their bytes: the new keys are left out while unset.
    for topic in map(_without_optional_features, load_catalogue()):
        if topic.archetype in ("booking", "order_lifecycle"):
            # Without their optional features (which use the new keys on purpose).
            vocab = {**topic.vocabulary, "features": []}
            topic = topic.model_copy(update={"vocabulary": vocab})
            text = codec.dumps_str(generate_spec(topic).model_dump(mode="json"))
            for key in ('"role"', '"digits"', '"mapping"', '"aggregate"', '"fixed"'):
                assert key not in text, (topic.topic_id, key)
            model_text = codec.dumps_str(from_spec(generate_spec(topic)).model_dump(mode="json"))
            assert '"role"' not in model_text and '"aggregate"' not in model_text


def test_generated_values_fit_the_domain():
    topic = next(t for t in TOPICS if t.archetype == "catalogue_search")
    spec = generate_spec(topic)
    from synthesis.environments.states import base_state

    state = base_state(spec, seed=3, records_per_entity=6)
    rows = {row[0]: row for row in topic.vocabulary["products"]}
    products = next(iter(v for k, v in state.items() if v and "price" in next(iter(v.values()))))
    for record in products.values():
        name, category, brand, price = rows[record["name"]]
        assert (record["category"], record["brand"], record["price"]) == (category, brand, price)
        assert 2.5 <= record["rating"] <= 5


def test_a_topic_missing_vocabulary_is_a_clear_error():
    from synthesis.environments.specgen import SpecError

    topic = Topic(topic_id="bare_ledger", title="Bare", archetype="ledger", vocabulary={})
    with pytest.raises(SpecError, match="vocabulary entry"):
        generate_spec(topic)


# Compiled by the compiler as it was before search, aggregate and the new guards existed,
# from the two topics as the catalogue had them then (kept in tests/data: the catalogue's
# vocabularies have grown since, which changes the code for reasons of their own); pinned
# again when every tool came to check its arguments' forms (typed fields, field_forms.py).
_TOPICS_BEFORE_READ_TOOLS = Path(__file__).parents[2] / "data" / "topics_before_read_tools.json"
_CODE_BEFORE_READ_TOOLS = {
    "bookshop": "0190ec579620f3bf04a5c5f78c63f3d9f40e463b81ccba10dddbe7947571a947",
    "dental_clinic": "abcc6085141200e06ae2266ecd69ea7869900fd84933742117f43ad55ef60682",
}


@pytest.mark.parametrize("topic_id", sorted(_CODE_BEFORE_READ_TOOLS))
def test_specs_without_new_features_compile_to_the_same_bytes(topic_id):
    from synthesis.hashing import sha256_text

    topics = load_catalogue(_TOPICS_BEFORE_READ_TOOLS)
    topic = _without_optional_features(next(t for t in topics if t.topic_id == topic_id))
    assert sha256_text(compile_spec(generate_spec(topic))) == _CODE_BEFORE_READ_TOOLS[topic_id]


def test_malformed_read_tools_and_guards_are_named_by_validation():
    from synthesis.environments.specgen import validate_spec

    spec = generate_spec(next(t for t in TOPICS if t.archetype == "catalogue_search"))
    search = next(t for t in spec.tools if t.operation == "search")
    aggregate = next(t for t in spec.tools if t.operation == "aggregate")
    create = next(t for t in spec.tools if t.name == "add_to_wishlist")
    sort_by = next(p for p in search.params if p.role == "sort_by")
    sort_by.enum = ["price", "colourway"]
    next(p for p in search.params if p.role == "min").field = "name"
    aggregate.field = "brand"
    create.preconditions[0].param = "nobody_id"
    problems = " | ".join(validate_spec(spec))
    assert "sort parameter sort_by must list fields (unknown: ['colourway'])" in problems
    assert "range filter min_price on non-numeric field 'name'" in problems
    assert "aggregate over 'brand', not a numeric field" in problems
    assert "precondition names unknown parameter 'nobody_id'" in problems
