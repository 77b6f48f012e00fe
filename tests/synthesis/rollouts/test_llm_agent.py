"""The LLM path end to end over real HTTP: an LLM agent's rollout, the content-addressed
cache (same request, same answer, zero tokens), accounting, and rejected model output."""

from __future__ import annotations

import pytest

from synthesis.config import LLMSettings
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.client import LLMClient, LLMError
from synthesis.rollouts.agents import LLMPolicy
from synthesis.rollouts.episodes import rollout
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    final_answer,
    scripted,
    tool_call,
    tool_calls,
)


@pytest.fixture(scope="module")
def task():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=2, index=0, records_per_entity=4)
    scenario = next(
        s
        for s in execute_gold(env, plan_scenarios(env, state, seed=2, count=4, max_chain_length=4))
        # a state task: the scripted model's answer ("All done.") states no looked-up value
        if s.status == "published" and "reply" not in s.provenance
    )
    return env, scenario, derive_checks(scenario, model=model_of(env))


def gold_follower(scenario):
    """A scripted 'model' that makes the gold calls in turn, then answers."""

    def respond(request):
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        if done < len(scenario.gold_chain):
            step = scenario.gold_chain[done]
            return tool_call(step.tool, step.args, call_id=f"c{done}")
        return final_answer("All done.")

    return respond


def _client(server, tmp_path, **prices):
    settings = LLMSettings(
        base_url=server.base_url, api_key="sk-test", model="fake-model", **prices
    )
    return LLMClient(settings, cache_dir=tmp_path / "cache")


def test_an_llm_agent_solves_a_task_and_every_call_is_accounted(task, tmp_path):
    env, scenario, checks = task
    with FakeOpenAIServer(gold_follower(scenario)) as server:
        client = _client(server, tmp_path, price_in_per_mtok=1.0, price_out_per_mtok=2.0)
        traj = rollout(env, scenario, checks, LLMPolicy(client, scenario.scenario_id))
    assert traj.policy == "llm:fake-model" and traj.success and traj.reward == 1.0
    assert len(server.requests) == len(scenario.gold_chain) + 1
    first = server.requests[0]
    assert first["messages"][1] == {"role": "user", "content": scenario.task_text}
    assert {t["function"]["name"] for t in first["tools"]} == {t.name for t in env.tools}
    assert len(client.calls) == len(server.requests)
    assert all(not c.cache_hit and c.tokens_in > 0 and c.tokens_out == 12 for c in client.calls)
    assert traj.tokens_in == sum(c.tokens_in for c in client.calls)
    assert traj.cost_usd == pytest.approx(traj.tokens_in / 1e6 + 2 * traj.tokens_out / 1e6)


def test_a_rerun_is_answered_from_the_cache_with_zero_tokens(task, tmp_path):
    env, scenario, checks = task
    with FakeOpenAIServer(gold_follower(scenario)) as server:
        first = rollout(
            env, scenario, checks, LLMPolicy(_client(server, tmp_path), scenario.scenario_id)
        )
        served = len(server.requests)
        client = _client(server, tmp_path)
        again = rollout(env, scenario, checks, LLMPolicy(client, scenario.scenario_id))
    assert len(server.requests) == served  # nothing new reached the endpoint
    assert again.messages == first.messages and again.traj_id == first.traj_id
    assert all(c.cache_hit and c.tokens_in == 0 and c.tokens_out == 0 for c in client.calls)
    assert again.tokens_in == 0 and again.cost_usd == 0.0


def test_broken_model_output_is_rejected_with_its_reason(task, tmp_path):
    env, scenario, checks = task
    with FakeOpenAIServer(lambda req: tool_call(scenario.gold_chain[0].tool, "{not json")) as s:
        policy = LLMPolicy(_client(s, tmp_path), scenario.scenario_id)
        traj = rollout(env, scenario, checks, policy)
    assert len(policy.rejections) == 1 and "are not JSON" in policy.rejections[0]
    assert traj.n_steps == 0 and not traj.success
    assert traj.messages[-1]["content"].startswith("[model output rejected:")
    assert [c.status for c in policy.client.calls] == ["rejected"]


def test_every_tool_call_of_a_turn_runs_in_order(task, tmp_path):
    env, scenario, checks = task
    gold = [(step.tool, step.args) for step in scenario.gold_chain]
    assert len(gold) >= 2  # the point: one turn carries several calls
    answers = scripted(tool_calls(*gold), final_answer("All done."))
    with FakeOpenAIServer(answers) as server:
        traj = rollout(env, scenario, checks, LLMPolicy(_client(server, tmp_path), "s"))
    assert traj.success and traj.n_steps == len(gold) and len(server.requests) == 2
    turn = traj.messages[2]
    assert [c["function"]["name"] for c in turn["tool_calls"]] == [t for t, _ in gold]
    results = [m for m in traj.messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [c["id"] for c in turn["tool_calls"]]
    # The second request saw every result, in order.
    assert [m["role"] for m in server.requests[1]["messages"][2:]] == ["assistant"] + [
        "tool"
    ] * len(gold)


def test_a_turn_with_an_unknown_tool_is_rejected_whole_and_asked_again_next_time(task, tmp_path):
    env, scenario, checks = task
    first = scenario.gold_chain[0]
    turn = tool_calls((first.tool, first.args), ("drop_database", {}))
    with FakeOpenAIServer(scripted(turn)) as server:
        policy = LLMPolicy(_client(server, tmp_path), "s")
        traj = rollout(env, scenario, checks, policy)
        assert traj.n_steps == 0  # not even the known first call ran
        assert policy.rejections == ["tool: unknown tool 'drop_database'"]
        rollout(env, scenario, checks, LLMPolicy(_client(server, tmp_path), "s"))
    assert len(server.requests) == 2  # the rejected answer was not cached


def test_an_unreachable_endpoint_is_a_clear_error(tmp_path):
    settings = LLMSettings(base_url="http://127.0.0.1:9/v1", model="m", retries=0, timeout_s=2)
    with pytest.raises(LLMError, match="127.0.0.1:9"):
        LLMClient(settings).chat([{"role": "user", "content": "hi"}], stage="t", artifact_id=None)
