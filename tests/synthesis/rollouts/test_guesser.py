"""The guesser: a seeded weak agent that fails where a task's structure says agents fail."""

from __future__ import annotations

import copy

from synthesis.environments.model import from_spec
from synthesis.models import Scenario, ToolCall
from synthesis.rollouts.agents import FinalAnswer, Observation
from synthesis.rollouts.guesser import DONE_CLAIM, LOST_TRACK, GuesserPolicy
from synthesis.tasks.checks import derive_checks, grade
from synthesis.tasks.spec_model import SpecModel

ATTEMPTS = 40
# Grace has two orders, one pending (ORD-0004) and one paid (ORD-0005): paying "her order"
# means telling the two apart in the listing.
PAY = [
    ("find_customer_by_email", {"email": "grace@example.com"}),
    ("list_orders", {"customer_id": "CUS-0003"}),
    ("pay_order", {"order_id": "ORD-0004"}),
]
VAGUE = "Please settle the order of grace@example.com."
TELLING = "Please pay the pending order of grace@example.com."


def _scenario(spec, initial, calls, text, **extra):
    model = SpecModel(from_spec(spec), initial)
    results = [model.call(t, a) for t, a in calls]
    return Scenario(
        scenario_id=f"sc-guesser-{text[:12]}-{extra.get('kind', 'feasible')}",
        env_id=spec.env_id,
        state_id="st",
        task_text=text,
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        gold_results=results,
        final_state=model.state,
        **extra,
    )


def _play(spec, scenario, attempt):
    """One attempt against the spec's model of the environment: (calls, reply, graded)."""
    env_model = from_spec(spec)
    world = SpecModel(env_model, copy.deepcopy(scenario.initial_state))
    policy = GuesserPolicy(scenario, env_model, attempt)
    calls, last = [], None
    while True:
        action = policy.next_action(
            Observation(
                task_text=scenario.task_text,
                tools=[],
                messages=[],
                step=len(calls),
                last_result=last,
                read_state=lambda: world.state,
            )
        )
        if isinstance(action, FinalAnswer):
            break
        calls.append((action.tool, action.args))
        last = world.call(action.tool, action.args)
    checks = derive_checks(scenario, model=env_model)
    return calls, action.text, grade(checks, scenario.start_state, world.state, action.text)


def _solve_rate(spec, scenario):
    return sum(_play(spec, scenario, a)[2].success for a in range(ATTEMPTS)) / ATTEMPTS


def test_an_attempt_is_a_pure_function_of_scenario_and_seed(shop_spec, hand_worlds):
    scenario = _scenario(shop_spec, hand_worlds.SHOP_STATE, PAY, VAGUE)
    runs = [_play(shop_spec, scenario, a) for a in range(ATTEMPTS)]
    again = [_play(shop_spec, scenario, a) for a in range(ATTEMPTS)]
    assert [(c, r) for c, r, _ in runs] == [(c, r) for c, r, _ in again]
    # Different seeds make different attempts: the seed is not ignored.
    assert len({str(c) for c, _, _ in runs}) > 1


def test_siblings_in_a_listing_cost_it_solves_unless_the_task_words_tell_them_apart(
    shop_spec, hand_worlds
):
    vague = _scenario(shop_spec, hand_worlds.SHOP_STATE, PAY, VAGUE)
    telling = _scenario(shop_spec, hand_worlds.SHOP_STATE, PAY, TELLING)
    vague_rate, telling_rate = _solve_rate(shop_spec, vague), _solve_rate(shop_spec, telling)
    # Told "pending", it never takes the paid order; only slips cost it then.
    assert telling_rate >= 0.8
    assert 0.2 <= vague_rate <= 0.75
    assert telling_rate - vague_rate >= 0.2
    # A wrong pick is acted on: the paid order is the one it tries to pay.
    runs = [_play(shop_spec, vague, a)[0] for a in range(ATTEMPTS)]
    picked = {calls[2][1]["order_id"] for calls in runs if len(calls) == 3}
    assert picked == {"ORD-0004", "ORD-0005"}


def test_a_conditional_branch_is_guessed(shop_spec, hand_worlds):
    scenario = _scenario(
        shop_spec,
        hand_worlds.SHOP_STATE,
        PAY,
        "If the pending order of grace@example.com is still pending, pay it.",
        provenance={
            "family": "conditional",
            "goal": ["pay_order"],
            "roles": ["lookup", "lookup", "mutation"],
        },
    )
    runs = [_play(shop_spec, scenario, a) for a in range(ATTEMPTS)]
    skipped = [g for c, r, g in runs if r != LOST_TRACK and "pay_order" not in [t for t, _ in c]]
    done = [g for c, r, g in runs if "pay_order" in [t for t, _ in c]]
    # Both guesses happen; leaving the due change undone fails, making it succeeds.
    assert skipped and done
    assert not any(g.success for g in skipped)
    assert all(g.success for g in done)


def test_an_infeasible_refusal_is_sometimes_taken_for_success(shop_spec, hand_worlds):
    state = hand_worlds.SHOP_STATE
    # ORD-0005 is already paid: paying it again is refused by the tool's guard.
    assert (
        not SpecModel(from_spec(shop_spec), state)
        .call("pay_order", {"order_id": "ORD-0005"})
        .get("success")
    )
    scenario = _scenario(
        shop_spec,
        state,
        [("pay_order", {"order_id": "ORD-0005"})],
        "Pay my Rooibos order.",
        kind="infeasible",
    )
    replies = [_play(shop_spec, scenario, a)[1] for a in range(ATTEMPTS)]
    claimed = sum(r == DONE_CLAIM for r in replies)
    assert 0 < claimed < ATTEMPTS
    # The others report the refusal from their own run, as the oracle would.
    honest = [r for r in replies if r not in (DONE_CLAIM, LOST_TRACK)]
    assert honest and all(
        r.startswith("I couldn't pay") and r.endswith("Nothing was changed.") for r in honest
    )
