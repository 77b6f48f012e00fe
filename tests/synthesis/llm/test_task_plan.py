# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `task_plan` stage: the model proposes goals from the tools and a summary of the state
(no ids); the planner plans each one or records why not; a malformed answer is repaired,
never cached, and asked again next time; a stopped stage leaves the offline tasks as they
are."""

from __future__ import annotations

import json
from functools import lru_cache

from quality.selftest import selftest_scenarios
from synthesis.config import get_profile
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.llm.task_plan import STAGE, plan_with_model
from synthesis.tasks.assembly import state_ids
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_plans import answer_task_plan
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error, scripted
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture
from tests.synthesis.tasks.planner_worlds import history_state

# Three goals over two states: the first state gets two, the second one.
PROFILE = get_profile("tiny").model_copy(update={"llm_task_plans": 3})


@lru_cache(maxsize=1)
def world():
    (topic,) = select_topics(load_catalogue(), {"order_lifecycle"}, 1)
    env = build_environment(generate_spec(topic))
    states = [history_state(env, i, 6) for i in range(2)]
    offline = [s for st in states for s in plan_scenarios(env, st, seed=0, count=3)]
    return env, model_of(env), states, offline


def _plan(client, offline=None, profile=PROFILE):
    env, model, states, planned = world()
    return plan_with_model(
        client, env, model, states, planned if offline is None else offline, 0, profile
    )


def _goal(kind: str, tool: str, target: str, field: str = "") -> dict:
    return {"kind": kind, "tool": tool, "target": target, "refs": [], "values": [], "field": field}


def _answer(*goals: dict):
    return final_answer(json.dumps({"goals": list(goals)}))


def test_proposed_goals_become_planned_scenarios_and_the_answer_is_cached(make_client):
    env, model, states, offline = world()
    with FakeOpenAIServer(answer_task_plan) as server:
        out = _plan(make_client(server))
        assert len(server.requests) == 2  # one per state
        for request in server.requests:
            assert request["response_format"]["json_schema"]["name"] == STAGE
            sent = json.dumps(request["messages"])
            assert not any(rid in sent for rid in state_ids(*(s.state for s in states)))
        again = _plan(make_client(server))
        assert len(server.requests) == 2  # answered by the cache
    assert out.proposed == 3 and len(out.scenarios) == 3, out.rejected
    assert {s.provenance["plan_source"] for s in out.scenarios} == {"llm"}
    assert {s.state_id for s in out.scenarios} == {st.state_id for st in states}
    assert [c.status for c in out.attempts] == ["accepted", "accepted"]
    assert [c.artifact_id for c in out.attempts] == [st.state_id for st in states]
    assert [s.scenario_id for s in again.scenarios] == [s.scenario_id for s in out.scenarios]
    assert out.metadata()["plans_llm_planned"] == 3
    assert all("plan_source" not in s.provenance for s in offline)


def test_a_planned_goal_runs_in_the_sandbox_and_its_checks_are_proven(make_client, sandbox):
    env, model, _, _ = world()
    with FakeOpenAIServer(answer_task_plan) as server:
        scenario = _plan(make_client(server)).scenarios[0]
    (ran,) = execute_gold(env, [scenario], model=model)
    assert ran.status == "published", ran.reason
    (result,) = selftest_scenarios(env, [(ran, derive_checks(ran, model=model))], model=model)
    assert result.proven, result.reason


def test_a_bad_tool_is_repaired_never_cached_and_asked_again(make_client):
    bad = _answer(_goal("transition", "teleport_order", "order 1"))
    with FakeOpenAIServer(scripted(bad)) as server:
        out = _plan(make_client(server, repairs=1))
        assert len(server.requests) == 4  # per state: the answer, then one repair
        assert "no tool 'teleport_order'" in server.requests[1]["messages"][-1]["content"]
        _plan(make_client(server, repairs=1))
        assert len(server.requests) == 8  # nothing was cached: asked again
    assert out.scenarios == [] and out.proposed == 0
    assert len(out.rejected) == 2
    assert all(r.startswith(f"{STAGE}: ") and "teleport_order" in r for r in out.rejected)
    assert [c.status for c in out.attempts] == ["rejected"] * 4


def test_an_unreachable_goal_is_rejected_with_the_planners_reason_without_a_repair(make_client):
    env, model, states, _ = world()
    orders = states[0].state["orders"]
    # A record in a status no tool can pay it from: structurally sound, but not reachable.
    stuck = next(n for n, rid in enumerate(sorted(orders), 1) if orders[rid]["status"] != "pending")
    answer = _answer(_goal("transition", "pay_order", f"order {stuck}"))
    one = PROFILE.model_copy(update={"llm_task_plans": 1})
    with FakeOpenAIServer(scripted(answer)) as server:
        out = _plan(make_client(server), profile=one)
        assert len(server.requests) == 1
    assert out.proposed == 1 and out.scenarios == []
    assert out.rejected == [
        f"{STAGE}: pay_order cannot reach status paid from "
        f"'{orders[sorted(orders)[stuck - 1]]['status']}'"
    ]


def test_a_goal_an_offline_task_already_plans_is_dropped(make_client):
    with FakeOpenAIServer(answer_task_plan) as server:
        first = _plan(make_client(server))
        out = _plan(make_client(server), offline=first.scenarios[:1])
    assert len(out.scenarios) == 2
    assert first.scenarios[0].scenario_id not in {s.scenario_id for s in out.scenarios}
    assert f"{STAGE}: an offline task has the same gold chain" in out.rejected


def test_a_stopped_stage_leaves_the_offline_scenarios_as_they_are(make_client):
    _, _, _, offline = world()
    before = [s.model_dump(mode="json") for s in offline]
    with FakeOpenAIServer(scripted(http_error(500))) as server:
        failed = _plan(make_client(server, retries=0))
    with FakeOpenAIServer(answer_task_plan) as server:
        broke = _plan(make_client(server, budget_tokens=10))
        assert server.requests == []  # stopped by the budget before any request
    for out in (failed, broke):
        assert out.scenarios == [] and out.proposed == 0
        assert all(r.startswith(f"{STAGE}: ") for r in out.rejected) and out.rejected
    assert "http_500" in failed.rejected[0]
    assert "budget_exhausted" in broke.rejected[0]
    assert [s.model_dump(mode="json") for s in offline] == before
