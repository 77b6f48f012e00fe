"""The order_lifecycle archetype's optional features: its catalogue topics compile to many
program shapes (so the split can hold some out), and every topic's environment loads, plans
and proves tasks in which the feature tools take part."""

from __future__ import annotations

from functools import cache

import pytest

from synthesis.environments.archetypes.order_lifecycle import FEATURES, optional
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.shape import program_shape
from synthesis.environments.specgen import generate_spec
from synthesis.environments.splits import held_out_shapes
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.models import Topic
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.synthesis.gold_in_model import proven_enough
from tests.synthesis.tool_schemas import assert_valid_tools

TOPICS = [t for t in load_catalogue() if t.archetype == "order_lifecycle"]


def _with(topic: Topic, features: list[str]) -> Topic:
    """`topic` with the features listed (as a catalogue author may list them)."""
    return topic.model_copy(update={"vocabulary": {**topic.vocabulary, "features": features}})


def _bare(topic: Topic) -> Topic:
    return _with(topic, [])


def _tool_names(topic: Topic) -> set[str]:
    return {t.name for t in generate_spec(topic).tools}


def _feature_of_tool(topic: Topic) -> dict[str, str]:
    """Tool name -> the feature that brings it, for this topic's features."""
    base = _tool_names(_bare(topic))
    return {
        name: feature
        for feature in optional.choose(topic)
        for name in _tool_names(_with(topic, [feature])) - base
    }


@cache
def _run(topic_id: str):
    """Spec → environment → state → planned, executed, self-tested tasks (as the build)."""
    from quality.selftest import selftest_scenarios

    (topic,) = [t for t in TOPICS if t.topic_id == topic_id]
    spec = generate_spec(topic)
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    model = from_spec(spec, env)
    state = build_initial_state(env, seed=5, index=0, records_per_entity=3)
    planned = plan_scenarios(env, state, seed=5, count=3, max_chain_length=6, model=model)
    executed = execute_gold(env, planned, model=model)
    published = [s for s in executed if s.status == "published"]
    items = [(s, derive_checks(s, model=model)) for s in published]
    results = selftest_scenarios(env, items, model=model)
    return spec, env, state, planned, executed, published, results


def test_order_topics_compile_to_many_shapes_and_some_are_test():
    shapes = {}
    for topic in TOPICS:
        env = build_environment(generate_spec(topic))
        shapes[topic.topic_id] = program_shape(env.code, env.class_name)
    distinct = set(shapes.values())
    assert len(TOPICS) >= 30
    assert len(distinct) >= 15, len(distinct)
    assert held_out_shapes("order_lifecycle", distinct), "no order_lifecycle shape is test"


def test_features_are_deterministic_per_topic_and_can_be_listed():
    for topic in TOPICS:
        assert generate_spec(topic) == generate_spec(topic)
        assert len(optional.choose(topic)) >= 3
    refunds = _tool_names(_with(TOPICS[0], ["refunds"])) - _tool_names(_bare(TOPICS[0]))
    assert refunds == {"refund_order"}


def test_every_feature_is_used_by_some_topic_and_states_its_rule():
    used = set()
    for topic in TOPICS:
        features = optional.choose(topic)
        used |= features
        spec, bare = generate_spec(topic), generate_spec(_bare(topic))
        # Every feature but the read-only reports adds a rule in plain words.
        assert len(spec.rules) == len(bare.rules) + len(features - {"reports"}), topic.topic_id
    assert used == set(FEATURES)


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_tool_is_a_valid_function_definition(topic):
    spec, env, *_ = _run(topic.topic_id)
    assert_valid_tools(spec, env)


# The planner drops a task the wrong-record baseline would answer (an "order more than is in
# stock" refused whichever customer orders): every topic's planned tasks are proven.
@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_topic_loads_plans_and_proves_its_tasks(topic):
    spec, env, state, planned, executed, published, results = _run(topic.topic_id)
    assert state.state["orders"], "the history created no orders"
    assert planned, topic.topic_id
    assert published, [s.reason for s in executed]
    proven_enough(results, at_least=1)


def test_feature_tools_take_part_in_published_tasks():
    exercised: dict[str, set[str]] = {}
    for topic in TOPICS:
        *_, published, results = _run(topic.topic_id)
        proven = {r.scenario_id for r in results if r.proven}
        feature_of = _feature_of_tool(topic)
        for scenario in published:
            if scenario.scenario_id in proven:
                for call in scenario.gold_chain:
                    if call.tool in feature_of:
                        exercised.setdefault(feature_of[call.tool], set()).add(topic.topic_id)
    # The features are live code: most of them take part in proven tasks somewhere.
    assert len(exercised) >= 5, exercised
    assert {
        "delivery_options",
        "refunds",
        "shipments",
        "price_changes",
        "restock",
        "reports",
    } <= set(exercised), exercised


def test_order_ledger_compositions_leave_refunds_to_their_link():
    from synthesis.environments.archetypes.composition import _part_vocabulary
    from synthesis.environments.specgen import SpecError

    joined = [
        t
        for t in load_catalogue()
        if t.archetype == "composition" and t.vocabulary["parts"] == ["order_lifecycle", "ledger"]
    ]
    assert joined
    for topic in joined:
        # The link refunds paid orders to the account; the part's own refunds would clash.
        assert "refunds" not in _part_vocabulary(topic, "order_lifecycle")["features"]
        refund = [t for t in generate_spec(topic).tools if t.name == "refund_order"]
        assert [t.preconditions[0].values for t in refund] == [["paid"]]
    part = {**joined[0].vocabulary["order_lifecycle"], "features": ["refunds"]}
    listed = joined[0].model_copy(
        update={"vocabulary": {**joined[0].vocabulary, "order_lifecycle": part}}
    )
    with pytest.raises(SpecError, match="'refunds' is what this composition's link does"):
        generate_spec(listed)
