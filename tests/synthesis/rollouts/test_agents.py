"""Policies: the oracle replays gold then states the outcome; the baselines earn nothing."""

from __future__ import annotations

import copy
import json

from synthesis.environments.model import from_spec
from synthesis.models import Scenario, ToolCall
from synthesis.rollouts.agents import (
    REFUSAL,
    FinalAnswer,
    NoopPolicy,
    Observation,
    OraclePolicy,
    Policy,
    RefuseAlwaysPolicy,
    ToolCallAction,
    WrongRecordPolicy,
    wrong_record_policy,
)
from synthesis.tasks.checks import AskedValue, reply_request
from synthesis.tasks.decoys import best_decoy, pick_decoys
from synthesis.tasks.spec_model import SpecModel


def _obs(step, messages=(), read_state=None):
    return Observation(
        task_text="t", tools=[], messages=list(messages), step=step, read_state=read_state
    )


def _gold(spec, initial, calls, **extra):
    model = SpecModel(from_spec(spec), initial)
    results = [model.call(t, a) for t, a in calls]
    return Scenario(
        scenario_id="sc-agents",
        env_id=spec.env_id,
        state_id="st",
        task_text="t",
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        gold_results=results,
        final_state=model.state,
        **extra,
    )


PAY = [
    ("find_customer_by_email", {"email": "grace@example.com"}),
    ("list_orders", {"customer_id": "CUS-0003"}),
    ("pay_order", {"order_id": "ORD-0004"}),
]


def test_oracle_replays_the_gold_chain_then_states_the_outcome(shop_spec, hand_worlds):
    scenario = _gold(shop_spec, hand_worlds.SHOP_STATE, PAY)
    oracle = OraclePolicy(scenario, from_spec(shop_spec))
    assert isinstance(oracle, Policy)
    for i, call in enumerate(scenario.gold_chain):
        assert oracle.next_action(_obs(i)) == ToolCallAction(tool=call.tool, args=call.args)
    # The answer is told from the results it saw (the product was never looked up).
    seen = [{"role": "tool", "content": json.dumps(r)} for r in scenario.gold_results]
    done = oracle.next_action(
        _obs(len(scenario.gold_chain), seen, read_state=lambda: scenario.final_state)
    )
    assert isinstance(done, FinalAnswer)
    assert done.text == "The order of customer Grace Hopper is now paid."
    # Without a state reader (a unit test's observation) it reports the gold final state.
    assert oracle.next_action(_obs(len(scenario.gold_chain), seen)) == done
    # Decisions depend on the observation alone, so asking again gives the same answer.
    assert oracle.next_action(_obs(0)) == oracle.next_action(_obs(0))


def test_oracle_admits_failures(shop_spec, hand_worlds):
    scenario = _gold(shop_spec, hand_worlds.SHOP_STATE, PAY)
    failed = [
        {"role": "tool", "tool_call_id": "call_0", "content": '{"error":"nope","success":false}'}
    ]
    state = hand_worlds.SHOP_STATE
    answer = OraclePolicy(scenario).next_action(_obs(3, failed, read_state=lambda: state))
    assert answer == FinalAnswer(
        "I could not complete every step of the request: nope. Nothing was changed."
    )


def test_noop_and_refuse_always_never_act():
    for policy, name in ((NoopPolicy(), "noop"), (RefuseAlwaysPolicy(), "refuse_always")):
        assert isinstance(policy, Policy) and policy.name == name
        assert isinstance(policy.next_action(_obs(0)), FinalAnswer)
    assert RefuseAlwaysPolicy().next_action(_obs(0)).text == REFUSAL


def test_wrong_record_swaps_the_target_for_a_decoy_of_its_collection(shop_spec, hand_worlds):
    scenario = _gold(shop_spec, hand_worlds.SHOP_STATE, PAY)
    model = from_spec(shop_spec)
    policy = wrong_record_policy(scenario, model)
    assert isinstance(policy, WrongRecordPolicy) and policy.name == "wrong_record"
    # ORD-0001 shares two field values with ORD-0004 (product, status), as does ORD-0005
    # (customer, quantity); ties go to the first id.
    assert policy.swaps == {"ORD-0004": "ORD-0001"} and policy.label == "ORD-0004 -> ORD-0001"
    assert [c.args for c in policy.chain] == [
        {"email": "grace@example.com"},
        {"customer_id": "CUS-0003"},
        {"order_id": "ORD-0001"},
    ]
    assert policy.next_action(_obs(2)) == ToolCallAction("pay_order", {"order_id": "ORD-0001"})


def test_decoys_prefer_a_shared_name_part_and_reply_tasks_target_the_asked_step(
    shop_spec, hand_worlds
):
    people = {
        "P1": {"id": "P1", "name": "Ann Lee", "city": "Oslo"},
        "P2": {"id": "P2", "name": "Bo Park", "city": "Rome"},
        "P3": {"id": "P3", "name": "Cy Lee", "city": "Rome"},
        "P4": {"id": "P4", "name": "Di Ng", "city": "Oslo"},
    }
    assert best_decoy(people, "P1", "id") == "P3"  # same surname beats same city
    assert best_decoy(people, "P2", "name") == "Cy Lee"  # same city
    assert best_decoy({"P1": people["P1"]}, "P1", "id") is None
    # A lookup task: the email of the customer is what the asked step was called with.
    calls = [("find_customer_by_email", {"email": "grace@example.com"})]
    asked = AskedValue("Grace Hopper's name", "Grace Hopper", 0, ("data", "name"))
    scenario = _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        calls,
        provenance={"reply": reply_request([asked], ["Ada Lovelace"])},
    )
    ((target, decoy),) = pick_decoys(scenario, from_spec(shop_spec)).items()
    assert target == "grace@example.com" and decoy.endswith("@example.com") and decoy != target
    # Every record a task acts on is swapped, never for another record the task names.
    both = _gold(
        shop_spec,
        hand_worlds.SHOP_STATE,
        [("pay_order", {"order_id": "ORD-0001"}), ("pay_order", {"order_id": "ORD-0004"})],
    )
    swaps = pick_decoys(both, from_spec(shop_spec))
    assert set(swaps) == {"ORD-0001", "ORD-0004"}
    assert not set(swaps.values()) & {"ORD-0001", "ORD-0004"}
    # A task with no record to mistake has no wrong-record baseline.
    lonely = _gold(shop_spec, {"customers": {}, "products": {}, "orders": {}}, [])
    assert wrong_record_policy(lonely, from_spec(shop_spec)) is None
