"""Policies: the oracle replays gold then answers; the no-op baseline answers at once."""

from __future__ import annotations

from synthesis.rollouts.agents import (
    FinalAnswer,
    NoopPolicy,
    Observation,
    OraclePolicy,
    Policy,
    ToolCallAction,
)
from synthesis.tasks.scenarios import plan_scenarios


def _obs(step, messages=()):
    return Observation(task_text="t", tools=[], messages=list(messages), step=step)


def test_oracle_replays_the_gold_chain_then_answers(shop_env, shop_state):
    scenario = plan_scenarios(shop_env, shop_state, seed=0, count=1, max_chain_length=5)[0]
    oracle = OraclePolicy(scenario)
    assert isinstance(oracle, Policy)
    for i, call in enumerate(scenario.gold_chain):
        action = oracle.next_action(_obs(i))
        assert action == ToolCallAction(tool=call.tool, args=call.args)
    done = oracle.next_action(_obs(len(scenario.gold_chain)))
    assert isinstance(done, FinalAnswer) and done.text.startswith("Done.")
    # Decisions depend on the observation alone, so asking again gives the same answer.
    assert oracle.next_action(_obs(0)) == oracle.next_action(_obs(0))


def test_oracle_admits_failures(shop_env, shop_state):
    scenario = plan_scenarios(shop_env, shop_state, seed=0, count=1, max_chain_length=5)[0]
    failed = [
        {"role": "tool", "tool_call_id": "call_0", "content": '{"error":"nope","success":false}'}
    ]
    answer = OraclePolicy(scenario).next_action(_obs(len(scenario.gold_chain), failed))
    assert isinstance(answer, FinalAnswer) and "failed" in answer.text


def test_noop_never_acts():
    noop = NoopPolicy()
    assert isinstance(noop, Policy)
    assert isinstance(noop.next_action(_obs(0)), FinalAnswer)
