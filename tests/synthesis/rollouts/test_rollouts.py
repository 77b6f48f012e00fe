"""Rollouts: OpenAI chat transcripts of a policy in a live sandbox, graded by the checks."""

from __future__ import annotations

import json

import pytest

from synthesis import codec
from synthesis.environments.model import model_of
from synthesis.models import ToolCall
from synthesis.rollouts.agents import (
    FinalAnswer,
    NoopPolicy,
    OraclePolicy,
    RefuseAlwaysPolicy,
    ToolCallAction,
    scripted_calls,
    wrong_record_policy,
)
from synthesis.rollouts.episodes import (
    final_reply,
    openai_tools,
    rollout,
    rollouts,
    system_prompt,
)
from synthesis.tasks.checks import AskedValue, derive_checks, reply_request
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@pytest.fixture
def proven(sandbox, world):
    env, state = world
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=2, count=3, max_chain_length=5))
    return env, [(s, derive_checks(s, model=model_of(env))) for s in scenarios]


def test_tools_and_system_prompt(shop_env):
    tools = openai_tools(shop_env)
    assert [t["function"]["name"] for t in tools] == [t.name for t in shop_env.tools]
    assert all(t["type"] == "function" and "parameters" in t["function"] for t in tools)
    bare = shop_env.model_copy(deep=True)
    for info in bare.tools:
        info.schema_ = info.schema_["function"]
    assert openai_tools(bare) == tools
    prompt = system_prompt(model_of(shop_env))
    assert "Tiny Tea Shop" in prompt and "never guess an id" in prompt


def test_oracle_rollout_is_a_valid_successful_chat(proven):
    env, items = proven
    for scenario, checks in items:
        traj = rollout(env, scenario, checks, OraclePolicy(scenario))
        assert traj.success and traj.reward == 1.0
        assert traj.n_steps == len(scenario.gold_chain)
        msgs = traj.messages
        assert msgs[0]["role"] == "system" and msgs[1] == {
            "role": "user",
            "content": scenario.task_text,
        }
        assert msgs[-1]["role"] == "assistant" and msgs[-1]["content"]
        calls = msgs[2:-1]
        assert len(calls) == 2 * len(scenario.gold_chain)
        for n, (gold, ask, answer) in enumerate(
            zip(scenario.gold_chain, calls[::2], calls[1::2], strict=True)
        ):
            (tc,) = ask["tool_calls"]
            assert ask["role"] == "assistant" and tc["id"] == f"call_{n}"
            assert tc["type"] == "function" and tc["function"]["name"] == gold.tool
            assert json.loads(tc["function"]["arguments"]) == gold.args
            assert answer["role"] == "tool" and answer["tool_call_id"] == f"call_{n}"
            assert json.loads(answer["content"]) == scenario.gold_results[n]
        assert traj.tools == openai_tools(env)
        assert traj.split == scenario.split
        again = rollout(env, scenario, checks, OraclePolicy(scenario))
        assert again.model_dump() == traj.model_dump()


def test_baselines_earn_nothing_and_the_oracle_names_no_tool(proven):
    env, items = proven
    model = model_of(env)
    names = {t.name for t in env.tools}
    decoyed = 0
    for scenario, checks in items:
        for policy in (NoopPolicy(), RefuseAlwaysPolicy()):
            traj = rollout(env, scenario, checks, policy, model=model)
            assert traj.n_steps == 0 and not traj.success and traj.reward == 0.0
            assert [m["role"] for m in traj.messages] == ["system", "user", "assistant"]
            assert traj.policy == policy.name
        wrong = wrong_record_policy(scenario, model)
        if wrong is not None:
            decoyed += 1
            traj = rollout(env, scenario, checks, wrong, model=model)
            assert traj.policy == "wrong_record" and traj.reward == 0.0 and not traj.success
        oracle = rollout(env, scenario, checks, OraclePolicy(scenario, model), model=model)
        assert oracle.reward == 1.0
        answer = final_reply(oracle.messages)
        assert answer and not any(name in answer for name in names), answer
    assert decoyed > 0


def test_a_reply_task_end_to_end(sandbox, shop_env, shop_state):
    """A hand-made information task: the total of Grace Hopper's pending order, graded on
    the reply; the oracle says it, the wrong-record baseline says the decoy's."""
    model = model_of(shop_env)
    chain = [
        ToolCall(tool="find_customer_by_email", args={"email": "grace@example.com"}),
        ToolCall(tool="list_orders", args={"customer_id": "CUS-0003", "status": "pending"}),
        ToolCall(tool="get_order", args={"order_id": "ORD-0004"}),
    ]
    base = plan_scenarios(shop_env, shop_state, seed=0, count=1, max_chain_length=5)[0]
    asked = AskedValue("the total of Grace Hopper's pending order", 12.5, 2, ("data", "total"))
    planned = base.model_copy(
        update={
            "scenario_id": "sc-reply",
            "gold_chain": chain,
            "provenance": {"reply": reply_request([asked], decoys=[25.0, 6.75])},
        }
    )
    (scenario,) = execute_gold(shop_env, [planned])
    checks = derive_checks(scenario, model=model)
    oracle = rollout(shop_env, scenario, checks, OraclePolicy(scenario, model), model=model)
    assert final_reply(oracle.messages) == "The total of Grace Hopper's pending order is $12.50."
    assert oracle.success and oracle.reward == 1.0
    for policy in (NoopPolicy(), RefuseAlwaysPolicy()):
        assert rollout(shop_env, scenario, checks, policy, model=model).reward == 0.0
    wrong = wrong_record_policy(scenario, model)
    assert list(wrong.swaps) == ["ORD-0004"]
    traj = rollout(shop_env, scenario, checks, wrong, model=model)
    assert traj.reward == 0.0 and "12.5" not in final_reply(traj.messages)


class _Looping:
    name = "looping"

    def next_action(self, observation):
        return ToolCallAction(tool="list_orders", args={})


class _Bad:
    name = "bad"

    def next_action(self, observation):
        if observation.step == 0:
            return ToolCallAction(tool="no_such_tool", args={"x": 1})
        return FinalAnswer("gave up")


def test_step_limit_and_failed_calls_are_recorded(sandbox, shop_env, shop_state):
    scenario = execute_gold(
        shop_env, plan_scenarios(shop_env, shop_state, seed=2, count=1, max_chain_length=5)
    )[0]
    checks = derive_checks(scenario)
    looped = rollout(shop_env, scenario, checks, _Looping(), max_steps=3)
    assert looped.n_steps == 3 and "step limit" in looped.messages[-1]["content"]
    bad = rollout(shop_env, scenario, checks, _Bad())
    tool_msg = json.loads(bad.messages[3]["content"])
    assert tool_msg["success"] is False and tool_msg["error"]
    assert not bad.success


def test_rollouts_over_a_pool_equal_sequential_rollouts_in_order(proven):
    from sandboxes import WorkerPool

    env, items = proven
    sequential = rollouts(env, items, OraclePolicy)
    with WorkerPool(size=2) as pool:
        pooled = rollouts(env, items, OraclePolicy, pool=pool)
    assert [t.model_dump() for t in pooled] == [t.model_dump() for t in sequential]
    assert [t.scenario_id for t in pooled] == [s.scenario_id for s, _ in items]


def test_the_answering_baselines_share_one_episode_per_scenario(proven):
    """Noop and refuse_always call no tool: with an `untouched` map the second takes the
    first's final state instead of playing the same episode again, and every trajectory is
    the one a fresh episode gives. A policy that calls tools plays its own episodes."""
    from sandboxes import WorkerPool

    env, items = proven
    policies = (NoopPolicy(), RefuseAlwaysPolicy())
    fresh = [rollouts(env, items, lambda s, p=policy: p) for policy in policies]
    untouched: dict = {}
    with WorkerPool(size=2) as pool:
        opened = []
        session = pool.session
        pool.session = lambda *args, **kwargs: opened.append(args) or session(*args, **kwargs)
        shared = [
            rollouts(env, items, lambda s, p=policy: p, pool=pool, untouched=untouched)
            for policy in policies
        ]
        assert len(opened) == len(items)  # one episode per scenario, not one per baseline
        oracle = rollouts(
            env, items, lambda s: OraclePolicy(s, model_of(env)), pool=pool, untouched=untouched
        )
        assert len(opened) == 2 * len(items)
    assert [[t.model_dump() for t in batch] for batch in shared] == [
        [t.model_dump() for t in batch] for batch in fresh
    ]
    assert sorted(untouched) == sorted(s.scenario_id for s, _ in items)
    assert all(state is not None for state in untouched.values())
    assert [t.reward for t in oracle] == [1.0] * len(items)


class _Unscripted:
    """`policy` deciding call by call: the same actions, no script for the rollout to run
    ahead, so every call is its own exchange with the sandbox."""

    def __init__(self, policy) -> None:
        self.policy, self.name = policy, policy.name

    def next_action(self, observation):
        return self.policy.next_action(observation)


class _Scripted:
    """A script of any calls (unknown tools and crashes included), then a fixed answer."""

    name = "scripted"

    def __init__(self, script) -> None:
        self.scripted_calls = script

    def next_action(self, observation):
        if observation.step < len(self.scripted_calls):
            return ToolCallAction(*self.scripted_calls[observation.step])
        return FinalAnswer("done")


@pytest.fixture
def exchanges(monkeypatch):
    """How many times rollouts asked sandbox sessions for a call, a batch, a state."""
    from sandboxes.session import Session

    counts = {"call": 0, "call_batch": 0, "final_state": 0}

    def counting(name):
        method = getattr(Session, name)

        def counted(self, *args, **kwargs):
            counts[name] += 1
            return method(self, *args, **kwargs)

        return counted

    for name in counts:
        monkeypatch.setattr(Session, name, counting(name))
    return counts


def test_a_scripted_policy_plays_its_calls_in_one_message_and_the_same_episode(proven, exchanges):
    """The oracle and the wrong-record baseline make their chain's calls whatever the
    results: the rollout sends them in one batch. Any episode reads its final state once
    (the oracle reads it to answer, and nothing runs after that). Their trajectories are the
    ones a policy deciding call by call gets, also when the step limit cuts the chain."""
    env, items = proven
    model = model_of(env)
    made = {
        "oracle": lambda s: OraclePolicy(s, model),
        "wrong_record": lambda s: wrong_record_policy(s, model),
    }
    played = 0
    for name, make in made.items():
        for scenario, checks in items:
            if make(scenario) is None:
                continue
            for limit in (None, 2):
                exchanges.update(call=0, call_batch=0, final_state=0)
                scripted = rollout(env, scenario, checks, make(scenario), max_steps=limit)
                assert exchanges == {"call": 0, "call_batch": 1, "final_state": 1}, name
                one_by_one = rollout(
                    env, scenario, checks, _Unscripted(make(scenario)), max_steps=limit
                )
                # Call by call: one exchange per call; the state is read once either way.
                assert exchanges == {"call": scripted.n_steps, "call_batch": 1, "final_state": 2}
                assert scripted.n_steps > 0
                assert scripted.model_dump() == one_by_one.model_dump()
                played += 1
    assert played >= 2 * len(items)
    # The guesser adapts to what its calls return (it copies ids out of its results).
    from synthesis.rollouts.guesser import GuesserPolicy

    assert scripted_calls(GuesserPolicy(items[0][0], model, 1)) is None
    assert scripted_calls(NoopPolicy()) is None


def test_a_script_cut_by_a_crash_ends_as_call_by_call_would(sandbox, shop_env, shop_state):
    """A scripted call that kills the worker: the calls before it keep their results, it gets
    the kill's error, the ones after it are not run, and the episode has no final state;
    exactly what the same calls made one at a time give."""
    crashing = shop_env.model_copy(
        update={
            "code": shop_env.code
            + "\n    def crash(self) -> dict:\n        import os\n        os._exit(3)\n"
        }
    )
    scenario = execute_gold(
        shop_env, plan_scenarios(shop_env, shop_state, seed=2, count=1, max_chain_length=5)
    )[0]
    checks = derive_checks(scenario)
    first = scenario.gold_chain[0]
    script = [
        (first.tool, dict(first.args)),
        ("no_such_tool", {}),
        ("crash", {}),
        (first.tool, dict(first.args)),
    ]
    scripted = rollout(crashing, scenario, checks, _Scripted(script))
    one_by_one = rollout(crashing, scenario, checks, _Unscripted(_Scripted(script)))
    assert scripted.model_dump() == one_by_one.model_dump()
    results = [json.loads(m["content"]) for m in scripted.messages if m["role"] == "tool"]
    assert results[0]["success"] is True
    assert "unknown tool" in results[1]["error"]
    assert "killed" in results[2]["error"] or "exited" in results[2]["error"]
    assert results[3]["error"].startswith("not run")
    assert not scripted.success


def test_a_policy_that_leaves_its_script_is_stopped(sandbox, shop_env, shop_state):
    scenario = execute_gold(
        shop_env, plan_scenarios(shop_env, shop_state, seed=2, count=1, max_chain_length=5)
    )[0]

    class Liar(_Scripted):
        def next_action(self, observation):
            if observation.step == 1:
                return ToolCallAction("get_order", {"order_id": "ord-0001"})
            return super().next_action(observation)

    first = scenario.gold_chain[0]
    script = [(first.tool, dict(first.args))] * 2
    with pytest.raises(RuntimeError, match="left its script at call 1"):
        rollout(shop_env, scenario, derive_checks(scenario), Liar(script))


def test_a_trajectory_record_is_its_json_dump(proven):
    # The artifact writes json_record(): the same JSON as pydantic's dump, unset fields left
    # out, for the scripted policies and the guesser's seeded attempts alike.
    from synthesis.rollouts.guesser import GuesserPolicy

    env, items = proven
    model = model_of(env)
    played = rollouts(env, items, OraclePolicy) + rollouts(
        env, items, lambda s: GuesserPolicy(s, model, 1), model=model
    )
    assert {t.attempt_seed for t in played} == {None, 1}
    for traj in played:
        assert codec.dumps(traj.json_record()) == codec.dumps(traj.model_dump(mode="json"))
    assert "attempt_seed" not in played[0].json_record()
