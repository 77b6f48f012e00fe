"""Difficulty calibration: the LLM agent's k attempts flag tasks solved 0/k (`unsolved`) and
k/k (`saturated`); the filter (default 1..k-1, EnvCraft's) keeps the others; other filters
and a malformed one; and k real attempts over the fake endpoint give the expected flags."""

from __future__ import annotations

import pytest

from synthesis.config import LLMSettings
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.client import LLMClient
from synthesis.rollouts.attempts import llm_attempt
from synthesis.tasks.calibration import (
    DEFAULT_FILTER,
    FILTER_ENV,
    calibrate,
    calibration_quarantine,
    filter_for,
    flags,
    llm_outcomes,
    parse_filter,
)
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_rollouts import answer_asking_agent, answer_user_sim
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, tool_call

K = 3
RESULTS = {
    "none": [False, False, False],
    "two": [True, False, True],
    "all": [True, True, True],
}


def _verdicts(rule_text: str) -> dict[str, bool]:
    return {c.scenario_id: c.keep for c in calibrate(RESULTS, K, parse_filter(rule_text))}


def test_the_default_filter_keeps_only_the_task_solved_2_of_3():
    assert DEFAULT_FILTER == "1..k-1"
    verdicts = calibrate(RESULTS, K, filter_for(K, environ={}))
    assert [c.scenario_id for c in verdicts if c.keep] == ["two"]
    assert {c.scenario_id: c.flags for c in verdicts} == {
        "all": ("saturated",),
        "none": ("unsolved",),
        "two": (),
    }
    records = calibration_quarantine(verdicts)
    assert {r.artifact_id: r.reason for r in records} == {
        "all": "difficulty: solved 3/3 by the LLM agent",
        "none": "difficulty: solved 0/3 by the LLM agent",
    }


def test_other_filters():
    assert _verdicts("all") == {"all": True, "none": True, "two": True}
    assert _verdicts("0..k-1") == {"all": False, "none": True, "two": True}
    assert _verdicts("1..k") == {"all": True, "none": False, "two": True}
    assert _verdicts(" 2 .. 2 ") == {"all": False, "none": False, "two": True}
    # Read from the environment; flags do not depend on the filter.
    rule = filter_for(K, environ={FILTER_ENV: "0..k-1"})
    assert rule.keeps(0, K) and not rule.keeps(K, K)
    assert flags(0, K) == ["unsolved"] and flags(K, K) == ["saturated"] and flags(1, K) == []


@pytest.mark.parametrize("bad", ["1-2", "1..j", "k+1..k", "..k", "1..2..3", "some"])
def test_a_malformed_filter_is_a_clear_error(bad):
    with pytest.raises(ValueError, match=rf"{FILTER_ENV}=.*(lo\.\.hi|bad bound)"):
        filter_for(K, environ={FILTER_ENV: bad})


def test_a_filter_that_keeps_nothing_is_an_error_and_the_default_steps_aside():
    with pytest.raises(ValueError, match="keeps no task with k=1"):
        filter_for(1, environ={FILTER_ENV: "1..k-1"})
    # One attempt cannot tell hard from flaky: unset, the filter keeps every task.
    assert filter_for(1, environ={}).text == "all"


def test_a_task_with_attempts_cut_short_is_not_judged():
    verdicts = calibrate({"cut": [False], "two": RESULTS["two"]}, K, parse_filter("1..k-1"))
    assert [c.scenario_id for c in verdicts] == ["two"]


# ----------------------------------------------------------------- k attempts, end to end


@pytest.fixture(scope="module")
def tasks():
    """Three published state tasks (an "All done." reply can pass their checks)."""
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    state = build_initial_state(env, seed=2, index=0, records_per_entity=4)
    planned = execute_gold(env, plan_scenarios(env, state, seed=2, count=8, max_chain_length=6))
    chosen = [s for s in planned if s.status == "published" and "reply" not in s.provenance]
    assert len(chosen) >= 3
    return env, model, [(s, derive_checks(s, model=model)) for s in chosen[:3]]


def _agent(solves: dict[str, set[int]], scenarios):
    """Solves a task (gold calls, after asking for hidden details) in the attempts listed
    for it, identified by the request's seed; gives up at once in the others."""

    def respond(request):
        answer = answer_user_sim(request)
        if answer is not None:
            return answer
        opening = next(m["content"] for m in request["messages"] if m["role"] == "user")
        # The task the opening is of: a multi-turn task opens with its user's first words.
        (scenario,) = [
            s for s in scenarios if opening == (s.user or {}).get("opening", s.task_text)
        ]
        if request["seed"] not in solves[scenario.scenario_id]:
            return final_answer("I could not do that.")
        asking = answer_asking_agent(request) if scenario.user else None
        if asking is not None:
            return asking
        done = sum(1 for m in request["messages"] if m["role"] == "tool")
        if done < len(scenario.gold_chain):
            step = scenario.gold_chain[done]
            return tool_call(step.tool, step.args, call_id=f"c{done}")
        return final_answer("All done.")

    return respond


def test_k_attempts_of_the_llm_agent_give_the_expected_flags(tasks, tmp_path):
    env, model, items = tasks
    ids = [s.scenario_id for s, _ in items]
    solves = {ids[0]: set(), ids[1]: {0, 2}, ids[2]: {0, 1, 2}}
    with FakeOpenAIServer(_agent(solves, [s for s, _ in items])) as server:
        settings = LLMSettings(base_url=server.base_url, api_key="sk-test", model="fake-model")
        client = LLMClient(settings, cache_dir=tmp_path / "cache")
        trajs = [
            llm_attempt(env, scenario, checks, client, attempt, model=model)
            for scenario, checks in items
            for attempt in range(K)
        ]
    # Attempts are real samples: their own seed and temperature, so their own cache keys.
    agent_calls = [r for r in server.requests if r.get("tools")]
    assert {(r["seed"], r["temperature"]) for r in agent_calls} == {(0, 0.0), (1, 0.7), (2, 0.7)}
    assert [t.attempt_seed for t in trajs] == [0, 1, 2] * 3
    assert len({t.traj_id for t in trajs}) == 9
    # Attempt 0 is the task as published (a multi-turn task's own offline user); a later
    # attempt that solved a multi-turn task asked the LLM user for what it held back.
    by_id = {s.scenario_id: s for s, _ in items}
    for t in trajs:
        multi_turn = by_id[t.scenario_id].user is not None
        if t.attempt_seed == 0:
            assert t.metadata["user_sim"] == ("offline" if multi_turn else "off")
        elif not multi_turn:
            assert t.metadata["user_sim"] == "off" and t.metadata["turns"] == 1
    solved = [t for t in trajs if t.attempt_seed and t.success and by_id[t.scenario_id].user]
    assert all(t.metadata["turns"] > 1 and t.metadata["user_sim"] == "llm" for t in solved)
    verdicts = calibrate(llm_outcomes(trajs), K, filter_for(K, environ={}))
    assert {c.scenario_id: (c.solved, c.flags, c.keep) for c in verdicts} == {
        ids[0]: (0, ("unsolved",), False),
        ids[1]: (2, (), True),
        ids[2]: (3, ("saturated",), False),
    }
