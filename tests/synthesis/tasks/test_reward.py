"""The reward rule: guards zero it, goals give partial credit, doing nothing earns nothing."""

from __future__ import annotations

import copy

import pytest

from synthesis.environments.model import from_spec
from synthesis.models import Scenario, ToolCall
from synthesis.tasks.checks import (
    GOAL,
    GUARD,
    AskedValue,
    derive_checks,
    evaluate_check,
    grade,
    reply_checks,
    reply_request,
    reward,
    role_of,
)
from synthesis.tasks.spec_model import SpecModel


def _gold(spec, initial, calls, **extra):
    model = SpecModel(from_spec(spec), initial)
    results = [model.call(tool, args) for tool, args in calls]
    assert all(r["success"] for r in results), results
    return Scenario(
        scenario_id="sc-reward",
        env_id=spec.env_id,
        state_id="st",
        task_text="t",
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        gold_results=results,
        final_state=model.state,
        **extra,
    )


def _run(spec, initial, calls):
    model = SpecModel(from_spec(spec), initial)
    for tool, args in calls:
        model.call(tool, args)
    return model.state


PAY_AND_SHIP = [("pay_order", {"order_id": "ORD-0004"}), ("ship_order", {"order_id": "ORD-0004"})]
CANCEL_TWO = [
    ("cancel_order", {"order_id": "ORD-0004"}),
    ("cancel_order", {"order_id": "ORD-0005"}),
]


def test_every_check_has_a_role_guards_are_the_damage_checks(shop_spec, hand_worlds):
    s = _gold(shop_spec, hand_worlds.SHOP_STATE, CANCEL_TWO)
    checks = derive_checks(s)
    roles = {c.spec["type"]: c.spec["role"] for c in checks}
    assert roles == {
        "field_equals": GOAL,
        "no_collateral_changes": GUARD,
        "reply_concise": GUARD,
    }
    assert all(c.spec["role"] in (GOAL, GUARD) for c in checks)
    # Specs stored before roles existed get the role of their type.
    assert role_of({"type": "no_collateral_changes"}) == GUARD
    assert role_of({"type": "field_equals"}) == GOAL
    with pytest.raises(ValueError, match="role"):
        role_of({"type": "field_equals", "role": "bonus"})


def test_gold_earns_1_doing_nothing_0_half_the_work_partial_credit(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    s = _gold(shop_spec, initial, CANCEL_TWO)
    checks = derive_checks(s)
    gold = grade(checks, s.start_state, s.final_state, "done")
    assert gold.reward == 1.0 and gold.success and not gold.guard_failed
    idle = grade(checks, s.start_state, s.start_state, "")
    assert idle.reward == 0.0 and not idle.success
    # One of the two cancellations: its goals count, the other's are missing.
    half = _run(shop_spec, initial, CANCEL_TWO[:1])
    graded = grade(checks, s.start_state, half)
    goals = [c for c in checks if c.spec["role"] == GOAL]
    achieved = sum(evaluate_check(c.spec, s.start_state, half) for c in goals)
    assert 0 < graded.reward < 1 and graded.reward == achieved / len(goals)
    assert not graded.success
    assert reward(checks, s.start_state, half) == graded.reward


def test_acting_on_the_wrong_record_earns_0(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    s = _gold(shop_spec, initial, PAY_AND_SHIP)
    checks = derive_checks(s)
    # ORD-0001 is pending too: paying and shipping it instead changes a record not named.
    wrong = _run(
        shop_spec,
        initial,
        [("pay_order", {"order_id": "ORD-0001"}), ("ship_order", {"order_id": "ORD-0001"})],
    )
    graded = grade(checks, s.start_state, wrong)
    assert graded.guard_failed and graded.reward == 0.0
    # Doing the task and also the decoy: every goal met, still 0.
    both = _run(shop_spec, initial, [*PAY_AND_SHIP, ("pay_order", {"order_id": "ORD-0001"})])
    graded = grade(checks, s.start_state, both)
    goals_met = all(
        evaluate_check(c.spec, s.start_state, both) for c in checks if c.spec["role"] == GOAL
    )
    assert goals_met and graded.reward == 0.0 and not graded.success


def test_a_record_created_for_the_wrong_customer_is_damage(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    create = ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 1})
    # Two goals: the new order and the cancelled one. Partial work on the right records
    # earns partial credit; the right work for the wrong customer earns nothing.
    s = _gold(shop_spec, initial, [create, ("cancel_order", {"order_id": "ORD-0004"})])
    checks = derive_checks(s)
    guard = next(c for c in checks if c.spec["type"] == "no_collateral_changes")
    assert guard.spec["created_refs"] == {
        "orders": [{"customer_id": "CUS-0002", "product_id": "PRD-0002"}]
    }
    right_only = _run(shop_spec, initial, [create])
    assert 0 < reward(checks, s.start_state, right_only) < 1
    other_customer = dict(create[1], customer_id="CUS-0004")
    wrong = _run(
        shop_spec,
        initial,
        [("create_order", other_customer), ("cancel_order", {"order_id": "ORD-0004"})],
    )
    assert not evaluate_check(guard.spec, s.start_state, wrong)
    assert reward(checks, s.start_state, wrong) == 0.0


def test_a_goal_that_held_before_earns_nothing_and_undoing_it_is_damage():
    initial = {"items": {"A": {"id": "A", "n": 1, "tag": "x"}}}
    final = {"items": {"A": {"id": "A", "n": 2, "tag": "x"}}}
    held = {
        "type": "field_equals",
        "role": GOAL,
        "collection": "items",
        "id": "A",
        "field": "tag",
        "value": "x",
    }
    achieved = dict(held, field="n", value=2)
    assert reward([held, achieved], initial, final) == 1.0
    assert reward([held, achieved], initial, initial) == 0.0
    undone = {"items": {"A": {"id": "A", "n": 2, "tag": "y"}}}
    assert grade([held, achieved], initial, undone).guard_failed
    assert reward([held, achieved], initial, undone) == 0.0
    # Nothing left to achieve: success without reward, which the self-test refuses.
    only_held = grade([held], initial, final)
    assert only_held.success and only_held.reward == 0.0
    assert grade([], initial, final) == grade([], initial, final)
    assert grade([], initial, final).reward == 0.0 and not grade([], initial, final).success


def test_changes_inside_a_touched_value_are_held_to_the_gold_paths():
    initial = {"tree": {"docs": {"a.txt": "1", "b.txt": "2"}, "tmp": {}}, "log": [1, 2, 3]}
    final = {"tree": {"docs": {"a.txt": "1!", "b.txt": "2"}, "tmp": {}}, "log": [1, 2, 4]}
    s = Scenario(
        scenario_id="sc-tree",
        env_id="e",
        state_id="st",
        task_text="t",
        initial_state=initial,
        gold_chain=[],
        final_state=final,
    )
    checks = derive_checks(s)
    guard = next(c for c in checks if c.spec["type"] == "no_collateral_changes")
    assert guard.spec["paths"] == [["log", 2], ["tree", "docs", "a.txt"]]
    assert reward(checks, initial, final) == 1.0
    # The same edit to the file next to it: the attribute changed, but not where asked.
    wrong = copy.deepcopy(final)
    wrong["tree"]["docs"]["a.txt"] = "1"
    wrong["tree"]["docs"]["b.txt"] = "2!"
    assert not evaluate_check(guard.spec, initial, wrong)
    assert reward(checks, initial, wrong) == 0.0
    # A touched value written differently is a failed goal, not damage.
    other = copy.deepcopy(final)
    other["tree"]["docs"]["a.txt"] = "1?"
    assert evaluate_check(guard.spec, initial, other)
    assert 0 < reward(checks, initial, other) < 1


# --------------------------------------------------------------------------- reply checks


def _reply_scenario(shop_spec, hand_worlds):
    """A hand-made information task: the total of Grace Hopper's pending order."""
    calls = [
        ("find_customer_by_email", {"email": "grace@example.com"}),
        ("list_orders", {"customer_id": "CUS-0003", "status": "pending"}),
        ("get_order", {"order_id": "ORD-0004"}),
    ]
    asked = AskedValue(
        what="the total of Grace Hopper's pending order",
        value=12.5,
        step=2,
        path=("data", "total"),
    )
    # Decoys: Ada's pending order, Grace's paid order, and one equal to the answer (dropped).
    request = reply_request([asked], decoys=[25.0, 6.75, "12.50"])
    return _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        calls,
        provenance={"reply": request},
    )


def test_reply_request_drops_decoys_equal_to_the_answer(shop_spec, hand_worlds):
    s = _reply_scenario(shop_spec, hand_worlds)
    request = s.provenance["reply"]
    assert request["decoys"] == [25.0, 6.75]
    assert request["asked"] == [
        {
            "what": "the total of Grace Hopper's pending order",
            "value": 12.5,
            "step": 2,
            "path": ["data", "total"],
        }
    ]
    assert reply_checks(None) == []
    with pytest.raises(ValueError, match="asked value"):
        reply_request([])


def test_reply_task_is_graded_on_the_reply(shop_spec, hand_worlds):
    s = _reply_scenario(shop_spec, hand_worlds)
    checks = derive_checks(s)
    kinds = {c.spec["type"]: c.spec["role"] for c in checks}
    assert kinds == {
        "reply_contains": GOAL,
        "reply_excludes": GUARD,
        "no_collateral_changes": GUARD,
        "reply_concise": GUARD,
    }
    initial, final = s.start_state, s.final_state
    assert grade(checks, initial, final, "Grace's pending order totals $12.50.").reward == 1.0
    assert grade(checks, initial, final, "").reward == 0.0
    assert grade(checks, initial, final, "I'm sorry, I can't help with that.").reward == 0.0
    # The decoy's value, alone or beside the answer: a guard fails.
    assert grade(checks, initial, final, "The total is 25.00.").reward == 0.0
    hedged = grade(checks, initial, final, "It is 12.50 or 25.")
    assert hedged.guard_failed and hedged.reward == 0.0
    # A right answer after changing something: damage.
    touched = copy.deepcopy(final)
    touched["orders"]["ORD-0004"]["status"] = "paid"
    assert grade(checks, initial, touched, "The total is 12.5.").reward == 0.0
    described = {c.spec["type"]: c.description for c in checks}
    assert "12.5" in described["reply_contains"] and "25.0" in described["reply_excludes"]
