# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `user_sim` stage: a multi-turn episode opens with the task's later facts withheld, the
simulated user gives them over the turns when the agent asks, an answer that leaks a hidden
id is rejected and asked again, and a stopped stage falls back to stating the facts; the
episode is graded by the task's checks like any other."""

from __future__ import annotations

import json

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.task_text import stated
from synthesis.llm.user_sim import (
    STAGE,
    SimulatedUser,
    answer_fault,
    episode_facts,
    withhold,
)
from synthesis.rollouts.agents import LLMPolicy
from synthesis.rollouts.episodes import rollout
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_rollouts import answer_asking_agent, answer_user_sim
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, tool_call
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def task():
    """A published bookshop task that states two facts after its first (both withheld)."""
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    state = build_initial_state(env, seed=2, index=0, records_per_entity=4)
    planned = plan_scenarios(env, state, seed=2, count=6, max_chain_length=6)
    for scenario in execute_gold(env, planned):
        facts, _ = episode_facts(scenario, model)
        _, withheld = withhold(scenario.task_text, facts)
        if scenario.status == "published" and len(withheld) == 2:
            # As the trajectories asset sees it: read back from JSON, without its plan.
            stored = type(scenario).model_validate(scenario.model_dump(mode="json"))
            return env, model, stored, derive_checks(scenario, model=model)
    raise AssertionError("no bookshop task with two facts to withhold")


def _gold_agent(scenario):
    """An agent that asks for the withheld details first, then makes the gold calls."""

    def act(request):
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        if done < len(scenario.gold_chain):
            step = scenario.gold_chain[done]
            return tool_call(step.tool, step.args, call_id=f"c{done}")
        return final_answer("All done.")

    return act


def _respond(scenario, user=answer_user_sim):
    agent = _gold_agent(scenario)
    return lambda request: user(request) or answer_asking_agent(request) or agent(request)


def _user_messages(traj):
    return [m["content"] for m in traj.messages if m["role"] == "user"]


def test_the_opening_withholds_the_later_facts_and_only_those(task):
    _, model, scenario, _ = task
    facts, _ = episode_facts(scenario, model)
    opening, withheld = withhold(scenario.task_text, facts)
    assert withhold(scenario.task_text, facts) == (opening, withheld)  # our code decides
    assert [w.number for w in withheld] == [1, 2]
    assert "[detail 1]" in opening and "[detail 2]" in opening
    assert not any(stated(opening, w.fact) for w in withheld)
    kept = [
        f for f in facts if stated(scenario.task_text, f) and f not in {w.fact for w in withheld}
    ]
    assert kept and all(stated(opening, f) for f in kept)


def test_the_user_gives_the_facts_over_turns_and_the_checks_grade_the_episode(task, make_client):
    env, model, scenario, checks = task
    with FakeOpenAIServer(_respond(scenario)) as server:
        client = make_client(server)
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    said = _user_messages(traj)
    assert said[0] == user.opening != scenario.task_text
    # Three user turns at most: detail 1 in the first answer, detail 2 in the second.
    assert len(said) == 3
    first, second = (w.fact for w in user.withheld)
    assert stated(said[1], first) and not stated(said[1], second) and stated(said[2], second)
    assert traj.success and traj.reward == 1.0
    assert traj.metadata == {
        "attempt": 1,
        "temperature": 0.7,
        "seed": 1,
        "turns": 3,
        "user_sim": "llm",
        "withheld": 2,
        "revealed": 2,
    }
    asked = [r for r in server.requests if r.get("response_format")]
    assert [r["response_format"]["json_schema"]["name"] for r in asked] == [STAGE, STAGE]
    # The user's prompt never carries a hidden id (tool results stay out of it).
    assert not any(any(i in json.dumps(r["messages"]) for i in user.hidden_ids) for r in asked)


def test_a_leaking_answer_is_rejected_and_asked_again(task, make_client):
    env, model, scenario, checks = task
    _, hidden = episode_facts(scenario, model)
    leak = next(i for i in hidden if not i.isdigit())
    leaked = []

    def leaky_once(request):
        good = answer_user_sim(request)
        if good is None or leaked:
            return good
        leaked.append(request)
        value = json.loads(good["content"])
        return final_answer(json.dumps({**value, "text": f"{value['text']} (record {leak})"}))

    with FakeOpenAIServer(_respond(scenario, leaky_once)) as server:
        client = make_client(server)
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    statuses = [c.status for c in client.calls if c.stage == STAGE]
    assert statuses == ["rejected", "accepted", "accepted"]
    rejected = next(c for c in client.calls if c.status == "rejected")
    assert rejected.reason == "leak: the answer names a hidden record id"
    assert not any(leak in text for text in _user_messages(traj))
    assert traj.success and traj.metadata["user_sim"] == "llm"


def test_the_checks_reject_empty_foreign_and_invented_answers(task):
    _, model, scenario, _ = task
    user = SimulatedUser(None, scenario, model)
    give = user.withheld[:1]
    fact = give[0].fact
    args = {"give": give, "facts": user.facts, "hidden_ids": user.hidden_ids, "known": ""}
    known = {**args, "known": scenario.task_text}
    assert answer_fault({"text": f"It is {fact}.", "facts": [fact]}, **known) is None
    assert answer_fault({"text": "  ", "facts": []}, **args).startswith("empty:")
    assert answer_fault({"text": f"It is {fact}.", "facts": ["Moby Dick"]}, **args) == (
        "fact: 'Moby Dick' is not a fact of the task"
    )
    assert answer_fault({"text": "Soon.", "facts": []}, **args).startswith("fact: does not give")
    invented = {"text": f"It is {fact}, and make it 99.95 please.", "facts": [fact]}
    assert answer_fault(invented, **known) == "fact: states '99.95', which the request does not"


def test_a_stopped_stage_falls_back_to_stating_the_facts(task, make_client):
    env, model, scenario, checks = task
    with FakeOpenAIServer(_respond(scenario)) as server:
        # The user's stage may spend nothing; the agent's may.
        client = make_client(server, stage_overrides={STAGE: {"budget_tokens": 0}})
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    said = _user_messages(traj)
    first, second = (w.fact for w in user.withheld)
    assert said[1] == f"Sorry, I left that out. Detail 1 is {first}."
    assert said[2] == f"Sorry, I left that out. Detail 2 is {second}."
    assert not any(r.get("response_format") for r in server.requests)  # nothing was sent
    assert [c.status for c in client.calls if c.stage == STAGE] == ["skipped", "skipped"]
    assert traj.success
    assert traj.metadata["user_sim"] == "offline"
    reasons = traj.metadata["user_sim_reasons"]
    assert len(reasons) == 2 and all(r.startswith(f"{STAGE}: budget") for r in reasons)


def test_a_task_with_nothing_to_withhold_is_single_turn(task):
    env, model, scenario, checks = task
    bare = scenario.model_copy(update={"task_text": "Please sort out my order."})
    user = SimulatedUser(None, bare, model)
    assert user.opening == bare.task_text and user.withheld == []
    assert user.answer([{"role": "assistant", "content": "Which order?"}]) is None
    assert user.metadata()["turns"] == 1 and user.metadata()["user_sim"] == "none"
