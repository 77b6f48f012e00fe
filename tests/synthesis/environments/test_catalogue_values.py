"""Values that agree with the domain, initial states with a working mix and deliberate decoys.

Base states are generated without the sandbox (fast, every topic); the status mix and the
decoys need the seeded history, which runs in the sandbox for two topics only.
"""

from __future__ import annotations

import collections
import random

import pytest

from synthesis import codec
from synthesis.environments import values
from synthesis.environments.archetypes import known_archetypes, supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import base_state, build_initial_state
from synthesis.environments.topics import (
    ITEM_LISTS,
    CatalogueError,
    business_hours,
    load_catalogue,
    vocabulary_items,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Topic

CATALOGUE = load_catalogue(known=known_archetypes())
# The archetypes whose items carry their own facts (topics.ITEM_LISTS); the others' values
# are checked by their own archetype tests.
BUILT = [
    t for t in CATALOGUE if t.archetype in ITEM_LISTS and t.archetype in supported_archetypes()
]
BY_ID = {t.topic_id: t for t in CATALOGUE}
DEFAULT_RECORDS = 8  # the default profile's records_per_entity


def test_the_catalogue_has_thirty_topics_per_built_archetype_each_with_its_own_items():
    counts = collections.Counter(t.archetype for t in BUILT)
    assert counts["booking"] >= 30 and counts["order_lifecycle"] >= 30
    assert [t.topic_id for t in CATALOGUE] == sorted(t.topic_id for t in CATALOGUE)
    products = [
        tuple(i.name for i in vocabulary_items(t, "products"))
        for t in BUILT
        if t.archetype == "order_lifecycle"
    ]
    assert len(set(products)) == len(products)  # no two shops sell the same list


@pytest.mark.parametrize("topic", BUILT, ids=lambda t: t.topic_id)
def test_records_agree_with_the_topic_vocabulary(topic):
    spec = generate_spec(topic)
    state = base_state(spec, seed=5, records_per_entity=DEFAULT_RECORDS)
    if topic.archetype == "order_lifecycle":
        items = {i.name: i for i in vocabulary_items(topic, "products")}
        records = state[spec.entities[1].collection]
        assert records
        for record in records.values():
            item = items[record["name"]]
            assert item.category in topic.vocabulary["categories"]
            assert record["category"] == item.category, record
            low, high = item.price
            assert low <= record["price"] <= high, record
    else:
        hours = business_hours(topic)
        provider = spec.entities[1]
        named = (
            {i.name: i for i in vocabulary_items(topic, "provider_names")}
            if ("provider_names" in topic.vocabulary)
            else {}
        )
        for record in state[provider.collection].values():
            if record["name"] in named and named[record["name"]].specialty:
                assert record["specialty"] == named[record["name"]].specialty
        slots = state["slots"].values()
        assert slots
        assert all(hours.holds(s["start"]) for s in slots), [s["start"] for s in slots]
        owned = [(s[f"{provider.name}_id"], s["start"]) for s in slots]
        assert len(owned) == len(set(owned))  # a provider is never in two slots at once


def test_opening_hours_decide_the_slot_times():
    hours = business_hours(BY_ID["restaurant_tables"])
    assert hours.days == (1, 2, 3, 4, 5, 6)  # closed on Mondays
    starts = {s[11:] for s in hours.calendar()}
    assert "12:00" in starts and "21:30" in starts
    assert not starts & {"11:30", "15:00", "16:00", "22:00"}  # shut between services
    assert not hours.holds("2026-03-02T19:00")  # a Monday
    assert hours.holds("2026-03-03T19:00") and not hours.holds("2026-03-03T14:45")


def test_plain_string_items_still_work_with_a_shared_price_range():
    topic = Topic(
        topic_id="corner_shop",
        title="Corner shop",
        archetype="order_lifecycle",
        vocabulary={
            "customer": "customer",
            "product": "item",
            "products": ["Milk", "Bread", "Eggs"],
            "categories": ["dairy", "bakery"],
            "price_range": [1, 4],
        },
    )
    spec = generate_spec(topic)
    state = base_state(spec, seed=1, records_per_entity=5)
    assert {r["name"] for r in state["items"].values()} == {"Milk", "Bread", "Eggs"}
    for record in state["items"].values():
        assert record["category"] in {"dairy", "bakery"}
        assert 1 <= record["price"] <= 4


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"products": [{"category": "bread"}]}, r"'products'\[0\] needs a 'name'"),
        (
            {"products": [{"name": "Baguette", "category": "cake"}]},
            r"'products'\[0\] \('Baguette'\): category 'cake' is not one of the topic's "
            r"categories \(bread, pastry\)",
        ),
        (
            {"products": [{"name": "Baguette", "price": [5, 2]}]},
            r"price must be a number \(0 or more\) or a \[low, high\] range, not \[5, 2\]",
        ),
        ({"products": [{"name": "Baguette", "colour": "gold"}]}, r"unknown keys \['colour'\]"),
        ({"products": ["Baguette", "baguette"]}, r"duplicate name 'baguette'"),
        ({"products": [3]}, r"must be a name or an object with a 'name', not int"),
        ({"products": "Baguette"}, r"'products' must be a list, not str"),
        ({"hours": {"days": "fri-mon"}}, r"'hours': hours.days: 'fri-mon' runs backwards"),
        ({"hours": {"times": ["9-17"]}}, r"'9-17' is not a range like '09:00-17:00'"),
        (
            {"hours": {"times": ["09:00-09:30"], "slot_minutes": 60}},
            r"leave no room for a 60-minute slot",
        ),
    ],
)
def test_a_malformed_vocabulary_is_a_catalogue_error_naming_the_topic(tmp_path, change, message):
    vocabulary = {
        "customer": "customer",
        "product": "bake",
        "categories": ["bread", "pastry"],
        "products": [{"name": "Baguette", "category": "bread", "price": [2, 4]}],
        **change,
    }
    entry = {
        "topic_id": "bakery",
        "title": "B",
        "archetype": "order_lifecycle",
        "vocabulary": vocabulary,
    }
    path = tmp_path / "topics.json"
    codec.write_json(path, {"schema_version": 1, "topics": [entry]})
    with pytest.raises(CatalogueError, match=message) as info:
        load_catalogue(path, known=known_archetypes())
    assert "topic 'bakery'" in str(info.value) and str(path) in str(info.value)


def test_a_service_duration_must_be_whole_minutes(tmp_path):
    topic = Topic(
        topic_id="spa",
        title="S",
        archetype="booking",
        vocabulary={"services": [{"name": "massage", "duration": 1.5}]},
    )
    with pytest.raises(CatalogueError, match=r"topic 'spa'.*duration must be whole minutes"):
        vocabulary_items(topic, "services")


# --------------------------------------------------------------------------- generators


def _spec(*fields: FieldSpec) -> EnvSpec:
    entity = EntitySpec(
        name="thing", collection="things", id_prefix="THG", label="thing", fields=list(fields)
    )
    return EnvSpec(
        env_id="t",
        topic_id="t",
        archetype="x",
        class_name="T",
        title="T",
        description="",
        entities=[entity],
        tools=[],
    )


def test_every_generator_name_in_use_before_the_registry_still_draws_values():
    spec = _spec(
        FieldSpec(name="name", type="str", generator="person_name"),
        FieldSpec(name="email", type="str", generator="email", unique=True),
        FieldSpec(name="phone", type="str", generator="phone"),
        FieldSpec(name="city", type="str", generator="city"),
        FieldSpec(name="kind", type="str", generator="choice", values=["a", "b"]),
        FieldSpec(name="price", type="float", generator="price:2:45"),
        FieldSpec(name="stock", type="int", generator="stock"),
        FieldSpec(name="quantity", type="int", generator="quantity"),
        FieldSpec(name="start", type="datetime", generator="slot_start"),
        FieldSpec(name="size", type="enum", values=["s", "m"]),
        FieldSpec(name="count", type="int"),
        FieldSpec(name="ratio", type="float"),
        FieldSpec(name="flag", type="bool"),
        FieldSpec(name="when", type="datetime"),
        FieldSpec(name="word", type="str"),
    )
    records = list(base_state(spec, seed=3, records_per_entity=6)["things"].values())
    office = values.BusinessHours()
    for r in records:
        assert len(r["name"].split()) == 2 and "@" in r["email"]
        assert r["phone"].startswith("+1-") and r["city"] and r["kind"] in {"a", "b"}
        assert 2 <= r["price"] <= 45 and r["stock"] >= 0 and 1 <= r["quantity"] <= 3
        assert office.holds(r["start"]) and office.holds(r["when"])
        assert r["size"] in {"s", "m"} and isinstance(r["flag"], bool)
        assert isinstance(r["count"], int) and isinstance(r["ratio"], float) and r["word"]
    assert len({r["email"] for r in records}) == len(records)
    surnames = collections.Counter(r["name"].split()[-1] for r in records)
    assert max(surnames.values()) >= 2  # people sharing a surname


def test_a_registered_generator_is_used_and_an_unknown_one_is_named():
    @values.value_generator("test_constant")
    def _constant(draw: values.Draw) -> str:
        return f"{draw.arg}-{draw.index}"

    try:
        spec = _spec(FieldSpec(name="code", type="str", generator="test_constant:x"))
        state = base_state(spec, seed=1, records_per_entity=3)
        assert [r["code"] for r in state["things"].values()] == ["x-0", "x-1", "x-2"]
    finally:
        del values._GENERATORS["test_constant"]
    with pytest.raises(ValueError, match=r"thing.code: unknown value generator 'nope'"):
        base_state(_spec(FieldSpec(name="code", type="str", generator="nope")), 1, 2)


def test_prices_read_like_price_tags_and_stay_in_range():
    rng = random.Random(0)
    for low, high in [(2, 3.5), (8, 16), (45, 95), (250, 450), (4, 4)]:
        for _ in range(200):
            price = values.price_point(rng, low, high)
            assert low <= price <= high
            assert round(price, 2) == price


# --------------------------------------------------------------------------- histories


@pytest.fixture(scope="module", params=["dental_clinic", "bakery_orders"])
def histories(request):
    topic = BY_ID[request.param]
    if topic.archetype == "booking":
        # The base status machine's mix: a quota feature refuses some of the history's
        # bookings, and 31 records then may hold no side exit by chance.
        topic = topic.model_copy(update={"vocabulary": {**topic.vocabulary, "features": []}})
    env = build_environment(generate_spec(topic))
    assert env.status == "accepted", env.reason
    states = [
        build_initial_state(env, seed=11, index=i, records_per_entity=DEFAULT_RECORDS)
        for i in range(4)
    ]
    return env, states


def _made_by_tools(env):
    created = {t.entity for t in env.spec.tools if t.operation == "create"}
    return next(e for e in env.spec.entities if e.name in created)


def test_most_records_are_live_and_few_are_cancelled(histories):
    env, states = histories
    entity = _made_by_tools(env)
    ends = {
        s
        for s in env.spec.entity(entity.name).field("status").values
        if not entity.transitions.get(s)
    }
    statuses = [r["status"] for s in states for r in s.state[entity.collection].values()]
    assert len(statuses) >= 4 * DEFAULT_RECORDS * 0.6
    cancelled = statuses.count("cancelled")
    live = sum(1 for s in statuses if s not in ends)
    assert cancelled <= len(statuses) / 3, collections.Counter(statuses)
    assert live >= len(statuses) / 2, collections.Counter(statuses)
    assert len(set(statuses)) >= 3  # the history walked the status machine


def test_states_carry_decoys_without_breaking_unique_lookups(histories):
    env, states = histories
    entity = _made_by_tools(env)
    person = env.spec.entities[0]
    for initial in states:
        decoys = initial.provenance["decoys"]
        kinds = {g["kind"] for g in decoys["groups"]}
        assert {"same_surname", "same_owner"} <= kinds
        if env.spec.archetype == "order_lifecycle":
            assert "similar_name" in kinds
        emails = [r["email"] for r in initial.state[person.collection].values()]
        assert len(emails) == len(set(emails))
        ids = {rid for records in initial.state.values() for rid in records}
        for rid, others in decoys["decoys_of"].items():
            assert rid in ids and others and rid not in others
            for other in others:
                assert rid in decoys["decoys_of"][other]  # decoys of each other
                assert other.split("-")[0] == rid.split("-")[0]  # same collection
        owner = next(g for g in decoys["groups"] if g["kind"] == "same_owner")
        assert owner["collection"] == entity.collection and len(owner["records"]) >= 2
        held = {initial.state[entity.collection][r][owner["field"]] for r in owner["records"]}
        assert held == {owner["shared"]}


def test_the_same_seed_gives_the_same_state_bytes(histories):
    env, states = histories
    again = build_initial_state(env, seed=11, index=0, records_per_entity=DEFAULT_RECORDS)
    assert codec.dumps(again.model_dump(mode="json")) == codec.dumps(
        states[0].model_dump(mode="json")
    )
    assert states[1].state != states[0].state


def test_a_unique_name_list_barely_longer_than_the_records_still_fills_every_state():
    # The full profile asks 12 records of each entity; a catalogue's own item list is often
    # only a few names longer. Rejection sampling gave up on these four topics' third state.
    for topic_id in ("bookstore_catalogue", "coffee_roastery", "spare_parts_depot"):
        topic = next(t for t in load_catalogue() if t.topic_id == topic_id)
        env = build_environment(generate_spec(topic))
        for index in range(4):
            state = build_initial_state(env, seed=0, index=index, records_per_entity=12)
            items = [c for c in state.state.values() if isinstance(c, dict) and len(c) == 12]
            names = [r.get("name") for c in items for r in c.values() if r.get("name")]
            assert len(names) == len(set(names)) > 0
