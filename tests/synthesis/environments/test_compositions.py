"""Compositions of two archetypes: every composition topic joins both parts into one valid
environment (one shared person, 8–30 tools) that plans proven tasks; each pair's cross-part link
refuses and moves what it must (compiled code and SpecModel agree); a composition is a program
neither part is alone.
"""

from __future__ import annotations

import ast
import copy

import pytest

from synthesis.environments.archetypes.composition import part_specs, supported_pairs
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.model import model_of
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.environments.states import base_state
from synthesis.environments.topics import load_catalogue
from synthesis.models import Topic
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.environments.test_workflow_archetypes import (
    _Abstract,
    _initial,
    _load,
    program_shape,
)
from tests.synthesis.gold_in_model import assert_gold_earns_one_and_noop_zero, proven_enough
from tests.synthesis.tool_schemas import assert_valid_tools

TOPICS = [t for t in load_catalogue() if t.archetype == "composition"]


def _spec(topic_id: str):
    return generate_spec(next(t for t in TOPICS if t.topic_id == topic_id))


def _run(spec, state: dict, calls: list[tuple[str, dict]]) -> tuple[list[dict], dict]:
    """Run `calls` on the compiled class and on SpecModel: both answer alike and end in the
    same state, which is returned with the compiled results."""
    instance = _load(spec)
    for entity in spec.entities:
        setattr(instance, entity.collection, copy.deepcopy(state.get(entity.collection, {})))
    model = SpecModel(model_of(build_environment(spec)), state)
    results = []
    for tool, args in calls:
        real = getattr(instance, tool)(**args)
        predicted = model.call(tool, args)
        assert real == predicted or (not real["success"] and real["error"] == predicted["error"]), (
            tool,
            real,
            predicted,
        )
        results.append(real)
    final = {e.collection: getattr(instance, e.collection) for e in spec.entities}
    assert final == {e.collection: model.state.get(e.collection, {}) for e in spec.entities}
    return results, final


# --------------------------------------------------------------------------- catalogue


def test_four_kinds_of_pairs_with_three_topics_each():
    pairs = supported_pairs()
    assert len(pairs) >= 4
    for pair in pairs:
        topics = [t for t in TOPICS if tuple(t.vocabulary["parts"]) == pair]
        assert len(topics) >= 3, pair
    assert len(TOPICS) >= 12


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_composition_joins_both_parts_and_plans_tasks_proven_in_the_model(topic):
    spec = generate_spec(topic)
    first, second = part_specs(topic)
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    assert_valid_tools(spec, env)
    # One person shared by both parts: the second part's person is the first part's, with
    # its fields; every other entity and every state-changing tool of both parts is there.
    person, person_b = first.entities[0], second.entities[0]
    merged = spec.entity(person.name)
    assert {f.name for f in person_b.fields} <= {f.name for f in merged.fields}
    assert len(spec.entities) == len(first.entities) + len(second.entities) - 1
    finds = [t for t in spec.tools if t.operation == "find" and t.entity == person.name]
    assert len({t.field for t in finds}) == len(finds)  # one lookup per field, not two
    mutating = [t for t in spec.tools if t.kind == "mutate"]
    assert len(mutating) >= sum(1 for p in (first, second) for t in p.tools if t.kind == "mutate")
    initial = _initial(env)
    scenarios = plan_scenarios(env, initial, seed=0, count=4, max_chain_length=6)
    assert scenarios, topic.topic_id
    for s in scenarios:
        assert_gold_earns_one_and_noop_zero(s, model_of(env))


def test_a_composition_needs_a_known_pair_and_each_parts_vocabulary():
    base = next(t for t in TOPICS if t.vocabulary["parts"] == ["booking", "ledger"])
    unknown = base.model_copy(
        update={"vocabulary": {**base.vocabulary, "parts": ["booking", "messaging"]}}
    )
    with pytest.raises(SpecError, match="is not a known pair"):
        generate_spec(unknown)
    missing = base.model_copy(
        update={"vocabulary": {k: v for k, v in base.vocabulary.items() if k != "ledger"}}
    )
    with pytest.raises(SpecError, match="'ledger'"):
        generate_spec(missing)
    short = copy.deepcopy(base.vocabulary)
    del short["ledger"]["account"]
    with pytest.raises(SpecError, match="ledger.account"):
        generate_spec(Topic(**{**base.model_dump(), "vocabulary": short}))


def _variant(topic_id: str, part: str, **words) -> Topic:
    topic = next(t for t in TOPICS if t.topic_id == topic_id)
    vocab = copy.deepcopy(topic.vocabulary)
    vocab[part].update(words)
    return topic.model_copy(update={"vocabulary": vocab})


def test_the_second_parts_person_becomes_the_first_parts_under_any_noun():
    spec = generate_spec(_variant("spa_prepaid_wallets", "ledger", holder="wallet holder"))
    names = {e.name for e in spec.entities}
    assert "guest" in names and "wallet_holder" not in names
    assert spec.entity("spa_wallet").field("guest_id").ref == "guest"
    assert "list_guest_spa_wallets" in {t.name for t in spec.tools}
    finds = [t.name for t in spec.tools if t.operation == "find" and t.entity == "guest"]
    assert finds == ["find_guest_by_email"]
    assert "city" in {f.name for f in spec.entity("guest").fields}  # the holder's own field
    assert build_environment(spec).status == "accepted"


def test_clashing_entity_names_get_the_second_parts_prefix():
    # The booking noun "deposit" clashes with the ledger's deposits (and their id prefix).
    spec = generate_spec(_variant("spa_prepaid_wallets", "booking", booking="deposit"))
    assert {"deposit", "ledger_deposit"} <= {e.name for e in spec.entities}
    prefixes = [e.id_prefix for e in spec.entities]
    assert len(set(prefixes)) == len(prefixes)
    tools = {t.name: t for t in spec.tools}
    assert tools["create_deposit"].entity == "deposit"
    assert tools["ledger_deposit_to_spa_wallet"].entity == "ledger_deposit"
    assert tools["list_spa_wallet_ledger_deposits"].entity == "ledger_deposit"
    assert build_environment(spec).status == "accepted"
    assert spec == generate_spec(_variant("spa_prepaid_wallets", "booking", booking="deposit"))


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize(
    "topic_id",
    ["spa_prepaid_wallets", "campus_store_cards", "lab_instrument_time", "saas_support_chat"],
)
def test_sandboxed_states_gold_runs_and_selftests_prove_the_checks(topic_id):
    from quality.selftest import selftest_scenarios
    from synthesis.environments.states import build_initial_state
    from synthesis.tasks.gold import execute_gold

    env = build_environment(_spec(topic_id))
    assert env.status == "accepted", env.reason
    initial = build_initial_state(env, seed=1, index=0, records_per_entity=5)
    ran = execute_gold(env, plan_scenarios(env, initial, seed=0, count=4, max_chain_length=6))
    published = [s for s in ran if s.status == "published"]
    assert len(published) >= 2, [s.reason for s in ran]
    model = model_of(env)
    selftests = selftest_scenarios(env, [(s, derive_checks(s, model=model)) for s in published])
    proven_enough(selftests)


# --------------------------------------------------------------------------- links


def _first(records: dict, **where) -> str:
    return next(
        i for i, r in sorted(records.items()) if all(r.get(k) == v for k, v in where.items())
    )


def test_a_booking_is_refused_when_the_wallet_is_short_charged_when_made_refunded_when_cancelled():
    spec = _spec("spa_prepaid_wallets")
    state = base_state(spec, 3, 4)
    wallet = _first(state["spa_wallets"], status="active")
    state["spa_wallets"][wallet]["balance"] = 50.0
    slot = _first(state["slots"], status="available")
    book = {
        "guest_id": sorted(state["guests"])[0],
        "slot_id": slot,
        "service": "massage",
        "spa_wallet_id": wallet,
        "fee": 80.0,
    }
    if any(p.name == "reminder" for p in spec.tool("create_treatment").params):
        book["reminder"] = "email"  # the booking part's reminders feature
    results, final = _run(
        spec,
        state,
        [
            ("create_treatment", book),
            ("create_treatment", {**book, "fee": 30.0}),
            ("cancel_treatment", {"treatment_id": "TRT-0001"}),
        ],
    )
    assert [r["success"] for r in results] == [False, True, True]
    assert results[0]["error"] == "insufficient balance: the spa wallet does not cover the fee"
    assert results[1]["data"]["fee"] == 30.0
    assert final["spa_wallets"][wallet]["balance"] == 50.0  # charged 30, refunded 30
    assert final["slots"][slot]["status"] == "available"
    _, charged = _run(spec, state, [("create_treatment", {**book, "fee": 30.0})])
    assert charged["spa_wallets"][wallet]["balance"] == 20.0


def test_an_order_is_paid_from_its_card_when_the_balance_covers_it_and_refunded_not_cancelled():
    spec = _spec("campus_store_cards")
    state = base_state(spec, 3, 4)
    card = _first(state["campus_cards"], status="active")
    supply = _first(state["supplies"])
    state["supplies"][supply]["stock"] = 10
    state["campus_cards"][card]["balance"] = 1.0
    order = {
        "student_id": sorted(state["students"])[0],
        "campus_card_id": card,
        "supply_id": supply,
        "quantity": 2,
    }
    total = round(state["supplies"][supply]["price"] * 2, 2)
    results, _ = _run(
        spec, state, [("create_order", order), ("pay_order", {"order_id": "ORD-0001"})]
    )
    assert [r["success"] for r in results] == [True, False]
    assert results[1]["error"].startswith("insufficient balance")
    state["campus_cards"][card]["balance"] = 500.0
    results, final = _run(
        spec,
        state,
        [
            ("create_order", order),
            ("pay_order", {"order_id": "ORD-0001"}),
            ("cancel_order", {"order_id": "ORD-0001"}),
            ("refund_order", {"order_id": "ORD-0001"}),
        ],
    )
    assert [r["success"] for r in results] == [True, True, False, True]
    assert results[2]["error"] == "only a pending order can be cancelled"
    assert final["orders"]["ORD-0001"]["status"] == "refunded"
    assert final["campus_cards"][card]["balance"] == 500.0
    assert final["supplies"][supply]["stock"] == 10
    _, after_pay = _run(
        spec, state, [("create_order", order), ("pay_order", {"order_id": "ORD-0001"})]
    )
    assert after_pay["campus_cards"][card]["balance"] == round(500.0 - total, 2)


def test_an_event_needs_an_available_approver_whose_limit_covers_the_rooms_hire_cost():
    spec = _spec("studio_stage_permits")  # approvers can be away (delegation)
    state = base_state(spec, 3, 4)
    stage = sorted(state["stages"])[0]
    state["stages"][stage]["hire_cost"] = 300.0
    low, high, away = sorted(state["studio_managers"])[:3]
    state["studio_managers"][low].update(approval_limit=250.0, status="available")
    state["studio_managers"][high].update(approval_limit=1000.0, status="available")
    state["studio_managers"][away].update(approval_limit=1000.0, status="away")
    shoot = {
        "organizer_producer_id": sorted(state["producers"])[0],
        "stage_id": stage,
        "title": "Night exterior",
        "start": "2026-03-07T14:00",
        "signed_off_by_studio_manager_id": low,
    }
    book = next(t.name for t in spec.tools if t.entity == "shoot" and t.operation == "create")
    shoot = {p.name: shoot[p.name] for p in spec.tool(book).params if p.name in shoot} | {
        p.name: p.enum[0] for p in spec.tool(book).params if p.name not in shoot and p.enum
    }
    results, final = _run(
        spec,
        state,
        [
            (book, shoot),
            (book, {**shoot, "signed_off_by_studio_manager_id": away}),
            (book, {**shoot, "signed_off_by_studio_manager_id": high}),
            ("list_shoots_signed_off_by_studio_manager", {"studio_manager_id": high}),
        ],
    )
    assert [r["success"] for r in results] == [False, False, True, True]
    assert results[0]["error"] == (
        "the studio manager's approval limit does not cover the stage's hire cost"
    )
    assert results[1]["error"] == "the studio manager is away"
    assert [r["id"] for r in results[3]["data"]] == [results[2]["data"]["id"]]
    assert final["shoots"][results[2]["data"]["id"]]["signed_off_by_studio_manager_id"] == high


def test_a_ticket_is_raised_only_in_a_public_channel_and_listed_by_channel():
    spec = _spec("saas_support_chat")
    state = base_state(spec, 3, 4)
    customer = sorted(state["customers"])[0]
    public, private = sorted(state["support_channels"])[:2]
    state["support_channels"][public]["visibility"] = "public"
    state["support_channels"][private]["visibility"] = "private"
    case = {
        "customer_id": customer,
        "subject": "Cannot log in",
        "category": "login problem",
        "tag": "mobile",
        "support_channel_id": private,
    }
    results, final = _run(
        spec,
        state,
        [
            ("open_support_case", case),
            ("open_support_case", {**case, "support_channel_id": public}),
            ("list_support_channel_support_cases", {"support_channel_id": public}),
            ("list_support_channel_support_cases", {"support_channel_id": private}),
        ],
    )
    assert [r["success"] for r in results] == [False, True, True, True]
    assert results[0]["error"] == "a support case can only be raised in a public support channel"
    assert [r["id"] for r in results[2]["data"]] == [results[1]["data"]["id"]]
    assert results[3]["data"] == []
    assert final["support_cases"][results[1]["data"]["id"]]["support_channel_id"] == public


# --------------------------------------------------------------------------- program shapes


def _tool_shapes(code: str) -> set[str]:
    """The abstract shape of each tool method of a compiled class."""
    cls = next(n for n in ast.parse(code).body if isinstance(n, ast.ClassDef))
    return {ast.dump(_Abstract().visit(f)) for f in cls.body if isinstance(f, ast.FunctionDef)}


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_a_composition_is_a_program_neither_part_is(topic):
    first, second = part_specs(topic)
    joined = compile_spec(generate_spec(topic))
    alone = [compile_spec(first), compile_spec(second)]
    assert program_shape(joined) not in {program_shape(code) for code in alone}
    # The link rewrote tool bodies: some tool of the composition is in neither part.
    assert _tool_shapes(joined) - (_tool_shapes(alone[0]) | _tool_shapes(alone[1]))


def test_compositions_differ_in_program_shape():
    shapes = {program_shape(compile_spec(generate_spec(t))) for t in TOPICS}
    assert len(shapes) >= 10


def _linked_tools(topic) -> set[str]:
    """Tools the link made or rewrote: new, or changed from the first part's tool."""
    spec, (first, second) = generate_spec(topic), part_specs(topic)
    before = {t.name: t for t in first.tools}
    known = set(before) | {t.name for t in second.tools}
    return {
        t.name
        for t in spec.tools
        if (t.name in before and t != before[t.name]) or t.name not in known
    } - {t.name for t in second.tools}


@pytest.mark.parametrize("pair", supported_pairs(), ids="+".join)
def test_planned_tasks_use_the_cross_part_link(pair):
    used: set[str] = set()
    for topic in (t for t in TOPICS if tuple(t.vocabulary["parts"]) == pair):
        env = build_environment(generate_spec(topic))
        linked = _linked_tools(topic)
        assert linked, topic.topic_id
        for s in plan_scenarios(env, _initial(env), seed=0, count=6, max_chain_length=6):
            used |= {c.tool for c in s.gold_chain} & linked
    assert used, pair
