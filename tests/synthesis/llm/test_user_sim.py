# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `user_sim` stage: the model plays a multi-turn task's own user record. It opens with
the record's opening, ends the conversation exactly when the offline simulator of the same
record would, and words each offline answer; a wording that drops the value, invents one,
gives a held one early or names a hidden id falls back to the offline answer with its
reason, as does a stopped stage. A single-turn task has no user, in any attempt."""

from __future__ import annotations

import json

import pytest

from synthesis.config import LLMSettings
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.client import LLMClient
from synthesis.llm.task_text import stated
from synthesis.llm.user_sim import STAGE, SimulatedUser, answer_fault, hidden_ids
from synthesis.rollouts.agents import LLMPolicy
from synthesis.rollouts.attempts import llm_attempt, llm_user, multi_turn
from synthesis.rollouts.episodes import rollout
from synthesis.tasks import envfoundry_user
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_rollouts import ASK, WORDING, answer_user_sim, offline_answer
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, tool_call
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def tasks():
    """A published multi-turn bookshop task (its user holds a value back) and a
    single-turn one, each with its checks, as the trajectories asset sees them: read back
    from JSON, without their plans."""
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    # Seed 10: its first multi-turn task makes a shipment, the parcels said in the request
    # and the carrier held back ("local courier"), the wordings below are written for it.
    state = build_initial_state(env, seed=10, index=0, records_per_entity=4)
    planned = execute_gold(env, plan_scenarios(env, state, seed=10, count=8, max_chain_length=6))
    state_tasks = [s for s in planned if s.status == "published" and "reply" not in s.provenance]
    multi = next(s for s in state_tasks if s.user is not None)
    single = next(s for s in state_tasks if s.user is None)

    def stored(s):
        return type(s).model_validate(s.model_dump(mode="json")), derive_checks(s, model=model)

    return env, model, stored(multi), stored(single)


@pytest.fixture(scope="module")
def task(tasks):
    env, model, (scenario, checks), _ = tasks
    return env, model, scenario, checks


def _gold_agent(scenario, ask=True):
    """An agent that asks for anything left out first (when `ask`), then makes the gold
    calls and answers."""

    def act(request):
        if ask and not any(m["role"] == "assistant" for m in request["messages"]):
            return final_answer(ASK)
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        if done < len(scenario.gold_chain):
            step = scenario.gold_chain[done]
            return tool_call(step.tool, step.args, call_id=f"c{done}")
        return final_answer("All done.")

    return act


def _respond(scenario, user=answer_user_sim, ask=True):
    agent = _gold_agent(scenario, ask)
    return lambda request: user(request) or agent(request)


def _user_messages(traj):
    return [m["content"] for m in traj.messages if m["role"] == "user"]


def _offline_transcript(env, scenario, checks):
    """The episode of the same agent with the task's own offline user (no endpoint for it)."""
    with FakeOpenAIServer(_respond(scenario, user=lambda r: None)) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="sk-test", model="fake-model")
        client = LLMClient(settings)
        return rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1))


def test_the_opening_is_the_records_and_a_single_turn_task_has_no_user(tasks):
    _, model, (scenario, _), (single, _) = tasks
    user = SimulatedUser(None, scenario, model)
    assert user.opening == scenario.user["opening"] != scenario.task_text
    assert "[" not in user.opening  # no placeholder of any kind
    held = [f for d in scenario.user["details"] for f in d["facts"]]
    assert held and not any(stated(user.opening, f) for f in held)
    assert all(stated(scenario.task_text, f) for f in held)
    with pytest.raises(ValueError, match="single-turn"):
        SimulatedUser(None, single, model)


def test_the_model_words_the_offline_answer_and_the_checks_grade_the_episode(task, make_client):
    env, model, scenario, checks = task
    with FakeOpenAIServer(_respond(scenario)) as server:
        client = make_client(server)
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    said = _user_messages(traj)
    (detail,) = scenario.user["details"]
    # The opening, then the model's wording of the offline answer to the agent's question.
    assert said == [scenario.user["opening"], f"{WORDING} {detail['say']}"]
    assert traj.success and traj.reward == 1.0
    assert traj.metadata == {
        "attempt": 1,
        "temperature": 0.7,
        "seed": 1,
        "turns": 2,
        "user_sim": "llm",
        "withheld": 1,
        "revealed": 1,
    }
    asked = [r for r in server.requests if r.get("response_format")]
    assert [r["response_format"]["json_schema"]["name"] for r in asked] == [STAGE]
    prompt = asked[0]["messages"][1]["content"]
    assert offline_answer(asked[0]) == detail["say"]
    assert f"Values to state: {'; '.join(detail['facts'])}" in prompt
    # The prompt carries no hidden id (tool results stay out of it), nor the whole request.
    assert not any(i in json.dumps(asked[0]["messages"]) for i in user.hidden_ids)
    assert scenario.task_text not in prompt
    # The offline user of the same record plays the same conversation, in its own words.
    offline = _offline_transcript(env, scenario, checks)
    assert _user_messages(offline) == [scenario.user["opening"], detail["say"]]
    assert offline.metadata["user_sim"] == "offline" and offline.success


def _faulty(text_of):
    """A user_sim model that words every answer as `text_of(offline answer)`."""

    def answer(request):
        if answer_user_sim(request) is None:
            return None
        return final_answer(json.dumps({"text": text_of(offline_answer(request))}))

    return answer


@pytest.mark.parametrize(
    ("fault", "reason"),
    [
        ("drops", "fact: does not give 'local courier'"),
        ("invents", "fact: states '99.95', which the request does not"),
        ("leaks", "leak: the answer names a hidden record id"),
        ("empty", "schema: at text: '' should be non-empty"),
    ],
)
def test_a_faulty_wording_falls_back_to_the_offline_answer(task, make_client, fault, reason):
    env, model, scenario, checks = task
    (detail,) = scenario.user["details"]
    assert detail["facts"] == ["local courier"]  # the task the reasons are written for
    leak = next(i for i in hidden_ids(scenario) if not i.isdigit())
    text_of = {
        "drops": lambda offline: "Sure, whatever you think is best.",
        "invents": lambda offline: f"{offline} And make it 99.95 please.",
        "leaks": lambda offline: f"{offline} It is record {leak}.",
        "empty": lambda offline: "",
    }[fault]
    with FakeOpenAIServer(_respond(scenario, _faulty(text_of))) as server:
        client = make_client(server)
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    assert _user_messages(traj) == [scenario.user["opening"], detail["say"]]
    # Asked, and repaired (bounded), then the offline answer: never cached, never raised.
    statuses = [c.status for c in client.calls if c.stage == STAGE]
    assert statuses == ["rejected"] * (1 + client.settings.repairs)
    assert traj.success
    assert traj.metadata["user_sim"] == "offline"
    (recorded,) = traj.metadata["user_sim_reasons"]
    assert recorded.startswith(f"{STAGE}: ") and recorded.endswith(f"(last: {reason})")
    assert traj.metadata["revealed"] == 1
    assert len(user.attempts) == len(statuses)  # every call is accounted to the user


def test_the_checks_of_a_wording(task):
    _, _, scenario, _ = task
    ids = hidden_ids(scenario)
    leak = next(i for i in ids if not i.isdigit())
    args = {"facts": ["local courier"], "held": ["lisbon"], "hidden_ids": ids, "known": ""}
    known = {**args, "known": scenario.task_text}
    assert answer_fault({"text": "Use local courier."}, **args) is None
    assert answer_fault({"text": "  "}, **args) == "empty: the answer is blank"
    assert answer_fault({"text": f"local courier, {leak}"}, **args).startswith("leak:")
    assert answer_fault({"text": "Any carrier."}, **args) == ("fact: does not give 'local courier'")
    assert answer_fault({"text": "Local courier, to Lisbon."}, **args) == (
        "fact: gives 'lisbon', which was not asked for yet"
    )
    invented = {"text": "Local courier, 7 parcels."}
    assert answer_fault(invented, **args) == "fact: states '7', which the request does not"
    # A value the request holds is not invented (the parcels).
    ((parcels,),) = [k["facts"] for k in scenario.user["known"]]
    assert parcels in scenario.task_text
    assert answer_fault({"text": f"Local courier, {parcels} parcels."}, **known) is None


def test_the_llm_user_ends_exactly_when_the_offline_one_does(task, make_client):
    _, model, scenario, _ = task
    record = scenario.user
    offline = envfoundry_user.SimulatedUser(record)
    (detail,) = record["details"]
    (known,) = record["known"]
    turns = [
        "I'll look that order up now.",  # announces work: go ahead
        "What is your favourite colour?",  # a question the user cannot answer
        "How many parcels should it have?",  # a value the opening stated: said again
        "Which carrier should the new shipment use?",  # the held value
        "Is there anything else I should know?",  # nothing left: over
    ]
    with FakeOpenAIServer(answer_user_sim) as server:
        user = SimulatedUser(make_client(server), scenario, model, seed=1)
        messages = [{"role": "user", "content": user.opening}]
        said = []
        for text in turns:
            messages.append({"role": "assistant", "content": text})
            expected = offline.answer(messages)
            got = user.answer(messages)
            assert (got is None) == (expected is None)
            if got is None:
                break
            assert got == f"{WORDING} {expected}"
            said.append(expected)
            messages.append({"role": "user", "content": got})
        assert user.answer([*messages, {"role": "assistant", "content": "Done."}]) is None
    replies = record["replies"]
    assert said == [replies["go_ahead"], replies["unknown"], known["say"], detail["say"]]
    meta = user.metadata()
    assert meta == {
        "turns": 5,
        "user_sim": "llm",
        "withheld": 1,
        "revealed": 1,
    }
    assert meta == {**offline.metadata(), "user_sim": "llm"}
    # Each answer asked the model once, with the values it had to state.
    prompts = [r["messages"][1]["content"] for r in server.requests]
    states = [p.splitlines()[-1] for p in prompts]
    assert states == [
        "Values to state: (none)",
        "Values to state: (none)",
        f"Values to state: {known['facts'][0]}",
        f"Values to state: {detail['facts'][0]}",
    ]


def test_a_held_value_given_before_it_is_asked_for_falls_back(task, make_client):
    _, model, scenario, _ = task
    (detail,) = scenario.user["details"]
    early = _faulty(lambda offline: f"{offline} The carrier is {detail['facts'][0]}.")
    with FakeOpenAIServer(early) as server:
        user = SimulatedUser(make_client(server), scenario, model, seed=1)
        messages = [
            {"role": "user", "content": user.opening},
            {"role": "assistant", "content": "What is your favourite colour?"},
        ]
        assert user.answer(messages) == scenario.user["replies"]["unknown"]
    (reason,) = user.metadata()["user_sim_reasons"]
    assert reason.endswith("(last: fact: gives 'local courier', which was not asked for yet)")


def test_a_stopped_stage_falls_back_to_the_offline_answers(task, make_client):
    env, model, scenario, checks = task
    with FakeOpenAIServer(_respond(scenario)) as server:
        # The user's stage may spend nothing; the agent's may.
        client = make_client(server, stage_overrides={STAGE: {"budget_tokens": 0}})
        user = SimulatedUser(client, scenario, model, seed=1)
        traj = rollout(env, scenario, checks, LLMPolicy(client, "s", attempt=1), user=user)
    (detail,) = scenario.user["details"]
    assert _user_messages(traj) == [scenario.user["opening"], detail["say"]]
    assert not any(r.get("response_format") for r in server.requests)  # nothing was sent
    assert [c.status for c in client.calls if c.stage == STAGE] == ["skipped"]
    assert traj.success
    assert traj.metadata["user_sim"] == "offline"
    (reason,) = traj.metadata["user_sim_reasons"]
    assert reason.startswith(f"{STAGE}: budget")


def test_no_endpoint_is_the_offline_user_with_its_reason(task):
    _, model, scenario, _ = task
    user = SimulatedUser(None, scenario, model)
    messages = [
        {"role": "user", "content": user.opening},
        {"role": "assistant", "content": ASK},
    ]
    assert user.answer(messages) == scenario.user["details"][0]["say"]
    assert user.metadata()["user_sim_reasons"] == [f"{STAGE}: no endpoint"]
    assert user.metadata()["user_sim"] == "offline"


def test_the_attempts_of_single_and_multi_turn_tasks(tasks, tmp_path):
    env, model, (multi, multi_checks), (single, single_checks) = tasks
    assert multi_turn(multi) and not multi_turn(single)
    assert [llm_user(multi, a) for a in range(3)] == [False, True, True]
    assert [llm_user(single, a) for a in range(3)] == [False, False, False]

    def respond(request):
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        scenario = multi if users[0] == multi.user["opening"] else single
        return answer_user_sim(request) or _gold_agent(scenario, ask=scenario is multi)(request)

    with FakeOpenAIServer(respond) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="sk-test", model="fake-model")
        client = LLMClient(settings, cache_dir=tmp_path / "cache")
        singles = [
            llm_attempt(env, single, single_checks, client, a, model=model) for a in range(3)
        ]
        multis = [llm_attempt(env, multi, multi_checks, client, a, model=model) for a in range(3)]
    # A single-turn task is told its whole request in every attempt; no user answers.
    for traj in singles:
        assert _user_messages(traj) == [single.task_text]
        assert traj.metadata["turns"] == 1 and traj.metadata["user_sim"] == "off"
    # A multi-turn one opens with its user's opening in every attempt: attempt 0 meets the
    # offline user (the task as published), the sampled attempts the model-worded one.
    assert [t.metadata["user_sim"] for t in multis] == ["offline", "llm", "llm"]
    for traj in multis:
        assert _user_messages(traj)[0] == multi.user["opening"]
        assert traj.metadata["turns"] == 2 and traj.success
    assert [c.stage for c in client.calls].count(STAGE) == 2
    assert all(t.success for t in singles)


def test_a_later_request_is_held_back_and_worded_with_its_values(task, make_client):
    """A task asked one request at a time: the model may not give a later request's value
    before the user makes it, and must give it when it does."""
    _, model, scenario, _ = task
    later = {"say": "Thanks. Next, could you note express post for it?", "facts": ["express post"]}
    staged = scenario.model_copy(update={"user": {**scenario.user, "stages": [later]}})
    early = _faulty(lambda offline: f"{offline} After that I'll want express post on it.")
    with FakeOpenAIServer(early) as server:
        user = SimulatedUser(make_client(server), staged, model, seed=1)
        messages = [
            {"role": "user", "content": user.opening},
            {"role": "assistant", "content": ASK},
        ]
        assert user.answer(messages) == scenario.user["details"][0]["say"]
    (reason,) = user.metadata()["user_sim_reasons"]
    assert "gives 'express post', which was not asked for yet" in reason
    dropped = _faulty(lambda offline: "Thanks. Next, could you note the usual one for it?")
    with FakeOpenAIServer(dropped) as server:
        user = SimulatedUser(make_client(server), staged, model, seed=1)
        messages = [
            {"role": "user", "content": user.opening},
            {"role": "assistant", "content": ASK},
        ]
        messages.append({"role": "user", "content": user.answer(messages)})
        messages.append({"role": "assistant", "content": "Done."})
        assert user.answer(messages) == later["say"]  # the offline request, its value kept
        messages.append({"role": "user", "content": later["say"]})
        messages.append({"role": "assistant", "content": "Done too."})
        assert user.answer(messages) is None
    assert any("does not give 'express post'" in r for r in user.metadata()["user_sim_reasons"])
