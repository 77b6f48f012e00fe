"""Checks: derived from the gold diff, pass on gold, fail on no-op, catch collateral damage."""

from __future__ import annotations

import copy

import pytest

from synthesis import codec
from synthesis.environments.model import from_spec, model_of
from synthesis.models import Scenario, ToolCall
from synthesis.tasks.checks import (
    REPLY_CHECK_TYPES,
    derive_checks,
    diff_states,
    evaluate_check,
    evaluate_checks,
    reward,
)
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.spec_model import SpecModel


def _gold(spec, initial, calls):
    model = SpecModel(from_spec(spec), initial)
    for tool, args in calls:
        assert model.call(tool, args)["success"], (tool, args)
    return Scenario(
        scenario_id="sc-test",
        env_id=spec.env_id,
        state_id="st",
        task_text="t",
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        final_state=model.state,
    )


@pytest.fixture
def order_then_cancel(shop_spec, hand_worlds):
    return _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        [
            ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 2}),
            ("cancel_order", {"order_id": "ORD-0001"}),
        ],
    )


def _types(checks):
    return sorted(c.spec["type"] for c in checks)


def test_checks_follow_the_diff_and_pass_on_gold_fail_on_noop(order_then_cancel):
    s = order_then_cancel
    checks = derive_checks(s)
    assert _types(checks) == ["field_equals"] * 3 + [
        "no_collateral_changes",
        "record_matching",
        "reply_concise",
    ]
    # ORD-0001 cancelled gives its 2 Sencha back (10 -> 12); the new order takes 2 Earl Grey.
    fields = {
        (c.spec["collection"], c.spec["id"], c.spec["field"]): c.spec["value"]
        for c in checks
        if c.spec["type"] == "field_equals"
    }
    assert fields == {
        ("orders", "ORD-0001", "status"): "cancelled",
        ("products", "PRD-0001", "stock"): 12,
        ("products", "PRD-0002", "stock"): 1,
    }
    assert all(evaluate_checks(checks, s.initial_state, s.final_state))
    assert not all(evaluate_checks(checks, s.initial_state, s.initial_state))
    assert reward(checks, s.initial_state, s.final_state) == 1.0
    assert reward(checks, s.initial_state, s.initial_state) < 1.0


def test_stock_change_of_created_order_is_checked(shop_spec, hand_worlds):
    s = _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        [
            ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 2}),
        ],
    )
    checks = derive_checks(s)
    stock = [c for c in checks if c.spec["type"] == "field_equals"]
    assert [(c.spec["id"], c.spec["field"], c.spec["value"]) for c in stock] == [
        ("PRD-0002", "stock", 1)
    ]
    (match,) = [c for c in checks if c.spec["type"] == "record_matching"]
    assert match.spec["fields"] == {
        "customer_id": "CUS-0002",
        "product_id": "PRD-0002",
        "quantity": 2,
        "total": 16.0,
        "status": "pending",
    }
    assert "id" not in match.spec["fields"]


def test_created_record_may_carry_another_id(shop_spec, hand_worlds):
    s = _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        [
            ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 2}),
        ],
    )
    checks = derive_checks(s)
    agent = copy.deepcopy(s.final_state)
    rec = agent["orders"].pop("ORD-0006")
    agent["orders"]["ORD-9999"] = {**rec, "id": "ORD-9999"}
    assert all(evaluate_checks(checks, s.initial_state, agent))
    wrong = copy.deepcopy(agent)
    wrong["orders"]["ORD-9999"]["quantity"] = 3
    verdicts = dict(
        zip(
            [c.spec["type"] for c in checks],
            evaluate_checks(checks, s.initial_state, wrong),
            strict=True,
        )
    )
    assert verdicts["record_matching"] is False


def test_collateral_check_catches_extra_changes(order_then_cancel):
    s = order_then_cancel
    checks = derive_checks(s)
    collateral = next(c for c in checks if c.spec["type"] == "no_collateral_changes")
    others = [c for c in checks if c is not collateral]

    touched_elsewhere = copy.deepcopy(s.final_state)
    touched_elsewhere["customers"]["CUS-0004"]["email"] = "hacked@example.com"
    assert all(evaluate_checks(others, s.initial_state, touched_elsewhere))
    assert not evaluate_check(collateral.spec, s.initial_state, touched_elsewhere)

    extra_record = copy.deepcopy(s.final_state)
    extra_record["orders"]["ORD-0042"] = dict(extra_record["orders"]["ORD-0006"], id="ORD-0042")
    assert not evaluate_check(collateral.spec, s.initial_state, extra_record)

    deleted = copy.deepcopy(s.final_state)
    del deleted["orders"]["ORD-0005"]
    assert not evaluate_check(collateral.spec, s.initial_state, deleted)

    new_field = copy.deepcopy(s.final_state)
    new_field["orders"]["ORD-0002"]["note"] = "x"
    assert not evaluate_check(collateral.spec, s.initial_state, new_field)

    new_attribute = dict(s.final_state, audit_log=["x"])
    assert not evaluate_check(collateral.spec, s.initial_state, new_attribute)

    assert evaluate_check(collateral.spec, s.initial_state, s.final_state)


def test_field_equals_is_exact_about_values(order_then_cancel):
    s = order_then_cancel
    status = next(c for c in derive_checks(s) if c.spec.get("field") == "status")
    wrong = copy.deepcopy(s.final_state)
    wrong["orders"]["ORD-0001"]["status"] = "Cancelled"
    assert not evaluate_check(status.spec, s.initial_state, wrong)
    int_float = copy.deepcopy(s.final_state)
    int_float["products"]["PRD-0001"]["stock"] = 12.0
    stock = next(c for c in derive_checks(s) if c.spec.get("field") == "stock")
    assert evaluate_check(stock.spec, s.initial_state, int_float)
    as_bool = copy.deepcopy(s.final_state)
    as_bool["products"]["PRD-0001"]["stock"] = True
    assert not evaluate_check(stock.spec, s.initial_state, as_bool)


def test_references_to_new_records_and_deletions():
    initial = {
        "slots": {"S1": {"id": "S1", "booking": None}},
        "bookings": {},
        "notes": {"N1": {"id": "N1"}},
        "counter": 1,
    }
    final = {
        "slots": {"S1": {"id": "S1", "booking": "B7"}},
        "bookings": {"B7": {"id": "B7", "slot": "S1"}},
        "notes": {},
        "counter": 2,
    }
    s = Scenario(
        scenario_id="x",
        env_id="e",
        state_id="s",
        task_text="t",
        initial_state=initial,
        gold_chain=[],
        final_state=final,
    )
    checks = derive_checks(s)
    assert _types(checks) == [
        "attribute_equals",
        "field_refers_to_new",
        "no_collateral_changes",
        "record_absent",
        "record_matching",
        "reply_concise",
    ]
    assert all(evaluate_checks(checks, initial, final))
    other_id = {
        "slots": {"S1": {"id": "S1", "booking": "B1"}},
        "bookings": {"B1": {"id": "B1", "slot": "S1"}},
        "notes": {},
        "counter": 2,
    }
    assert all(evaluate_checks(checks, initial, other_id))
    dangling = copy.deepcopy(other_id)
    dangling["slots"]["S1"]["booking"] = "B-nope"
    assert not all(evaluate_checks(checks, initial, dangling))
    assert not all(evaluate_checks(checks, initial, initial))


def test_checks_are_json_data_with_plain_english_descriptions(order_then_cancel):
    s = order_then_cancel
    checks = derive_checks(s)
    for c in checks:
        assert codec.loads(codec.dumps(c.spec)) == c.spec
        assert c.description.endswith(".") and "{" not in c.description
        assert c.check_id and c.scenario_id == s.scenario_id
    status = next(c for c in checks if c.spec.get("field") == "status")
    assert status.description == 'The status of orders record ORD-0001 is "cancelled".'
    assert derive_checks(s) == derive_checks(s)


def test_labels_from_the_spec_read_naturally(order_then_cancel, shop_spec):
    checks = derive_checks(order_then_cancel, model=from_spec(shop_spec))
    texts = " ".join(c.description for c in checks)
    assert 'The status of order ORD-0001 is "cancelled".' in texts
    assert "A new order exists with" in texts


def test_interpreter_is_defensive_and_strict_about_types(order_then_cancel):
    s = order_then_cancel
    # An unreadable final state fails every check that reads the state (the reply's own
    # checks read the reply).
    checks = [c for c in derive_checks(s) if c.spec["type"] not in REPLY_CHECK_TYPES]
    assert evaluate_checks(checks, s.initial_state, None) == [False] * len(checks)
    assert not any(evaluate_checks(checks[:-1], s.initial_state, {"orders": "garbage"}))
    with pytest.raises(ValueError, match="unknown check type"):
        evaluate_check({"type": "exec", "code": "1"}, {}, {})
    assert reward([], s.initial_state, s.final_state) == 0.0


def test_derive_needs_a_gold_final_state(order_then_cancel):
    with pytest.raises(ValueError, match="no gold final state"):
        derive_checks(order_then_cancel.model_copy(update={"final_state": None}))


def test_diff_is_empty_for_equal_states(hand_worlds):
    assert diff_states(hand_worlds.SHOP_STATE, copy.deepcopy(hand_worlds.SHOP_STATE)).empty


def test_planned_scenarios_get_checks_that_prove_themselves_in_the_model(world):
    env, state = world
    for s in plan_scenarios(env, state, seed=9, count=10, max_chain_length=5):
        model = SpecModel(model_of(env), s.initial_state)
        for c in s.gold_chain:
            model.call(c.tool, c.args)
        s = s.model_copy(update={"final_state": model.state})
        checks = derive_checks(s, model=model_of(env))
        # The oracle's reply states what the task asked for (nothing, for a state task); an
        # infeasible one declines with the blocking fact.
        reply = " ".join((s.expected_reply or {}).get("include", []))
        if s.kind == "infeasible":
            reply = f"I can't do that: it is {reply}."
        assert all(evaluate_checks(checks, s.initial_state, s.final_state, reply=reply))
        assert not all(evaluate_checks(checks, s.initial_state, s.initial_state, reply=""))


def test_generated_values_are_checked_for_their_form_not_their_value():
    from synthesis.tasks.checks import matches_form, value_form

    initial = {"bookings": {}, "log": []}
    gold = {
        "bookings": {"BK-4821": {"id": "BK-4821", "seat": "12A", "at": "2026-03-02T09:00:01"}},
        "log": ["booked at 2026-03-02T09:00:01"],
    }
    other_world = {
        "bookings": {"BK-7730": {"id": "BK-7730", "seat": "12A", "at": "2026-03-05T14:12:09"}},
        "log": ["booked at 2026-03-05T14:12:09"],
    }
    scenario = Scenario(
        scenario_id="s-gen",
        env_id="e",
        state_id="st",
        task_text="Book seat 12A.",
        initial_state=initial,
        gold_chain=[],
        final_state=gold,
    )
    checks = derive_checks(scenario, alternate_final=other_world)
    made = next(c.spec for c in checks if c.spec["type"] == "record_matching")
    assert made["fields"]["seat"] == "12A"  # the same in both worlds: an exact value
    assert made["fields"]["at"] == value_form("2026-03-02T09:00:01")
    # An agent whose world stamped another time still passes; a wrong seat or shape fails.
    agent = {
        "bookings": {"BK-0001": {"id": "BK-0001", "seat": "12A", "at": "2026-04-01T10:30:00"}},
        "log": ["booked at 2026-04-01T10:30:00"],
    }
    assert all(evaluate_checks(checks, initial, agent))
    wrong_seat = copy.deepcopy(agent)
    wrong_seat["bookings"]["BK-0001"]["seat"] = "14C"
    assert not all(evaluate_checks(checks, initial, wrong_seat))
    no_time = copy.deepcopy(agent)
    no_time["bookings"]["BK-0001"]["at"] = "soon"
    assert not all(evaluate_checks(checks, initial, no_time))
    assert not all(evaluate_checks(checks, initial, initial))
    assert matches_form(7, "int") and not matches_form(True, "int")
    # Without another world every value is exact, as for compiled environments.
    exact = derive_checks(scenario)
    assert not all(evaluate_checks(exact, initial, agent))
