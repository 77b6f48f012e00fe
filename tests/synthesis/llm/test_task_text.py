# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `task_text` stage: a model's rewording replaces the offline text only when it keeps
every fact and leaks nothing; otherwise the offline text stays, with the reason, and the
rejected answer is asked again next time."""

from __future__ import annotations

import json

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.llm.task_text import STAGE, phrase_scenario, text_fault
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error, scripted
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def scenario():
    """A planned ledger task with a stated fact and id-shaped hidden ids."""
    (topic,) = select_topics(load_catalogue(), {"ledger"}, 1)
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    for s in plan_scenarios(env, state, seed=3, count=8, max_chain_length=6):
        plan = s._plan
        if plan.facts and _leakable(plan) and len(s.task_text) > 80:
            return s
    raise AssertionError("no ledger task with facts and hidden ids")


def _leakable(plan) -> str:
    return next((i for i in plan.hidden_ids if not i.isdigit()), "")


def _answer(text: str) -> dict:
    return final_answer(json.dumps({"text": text}))


def _offline_in(request: dict) -> str:
    """The offline text, as the stage's prompt carries it."""
    (line,) = [
        ln for ln in request["messages"][1]["content"].splitlines() if ln.startswith("Request: ")
    ]
    return line.removeprefix("Request: ")


def test_the_checks_name_each_fault(scenario):
    plan, offline = scenario._plan, scenario.task_text
    fact = next(f for f in plan.facts if f in offline)
    assert text_fault(plan, offline, "Hello! " + offline) is None
    assert text_fault(plan, offline, f"{offline} ({_leakable(plan)})").startswith("leak:")
    assert text_fault(plan, offline, offline.replace(fact, "the usual")).startswith("fact:")
    assert text_fault(plan, offline, offline + " By 2026-03-03.") == "format: an ISO timestamp"
    assert text_fault(plan, offline, offline + " Mark it in_progress.").startswith(
        "format: snake_case 'in_progress'"
    )
    assert text_fault(plan, offline, offline[:10]).startswith("size:")
    assert text_fault(plan, offline, offline * 5).startswith("size:")


def test_an_accepted_rewording_replaces_the_text_and_is_cached(make_client, scenario):
    def respond(request):
        return _answer("Hello there! " + _offline_in(request))

    with FakeOpenAIServer(respond) as server:
        out, phrased = phrase_scenario(make_client(server), scenario)
        assert len(server.requests) == 1
        request = server.requests[0]
        assert request["response_format"]["json_schema"]["name"] == STAGE
        sent = json.dumps(request["messages"])
        assert not any(i in sent for i in scenario._plan.hidden_ids if not i.isdigit())
        again, phrased_again = phrase_scenario(make_client(server), scenario)
        assert len(server.requests) == 1  # the second run is answered by the cache
    assert out.task_text == "Hello there! " + scenario.task_text
    assert out.provenance["text_source"] == "llm"
    assert "text_fallback_reason" not in out.provenance
    assert out.scenario_id != scenario.scenario_id  # the id hashes the words
    assert [c.status for c in phrased.attempts] == ["accepted"]
    assert {c.artifact_id for c in phrased.attempts} == {out.scenario_id}
    assert again.task_text == out.task_text and again.scenario_id == out.scenario_id
    assert [c.status for c in phrased_again.attempts] == ["cached"]


@pytest.mark.parametrize(
    ("wording", "kind"),
    [
        (lambda offline, plan: f"{offline} It is {_leakable(plan)}.", "leak:"),
        (
            lambda offline, plan: offline.replace(
                next(f for f in plan.facts if f in offline), "the usual one"
            ),
            "fact:",
        ),
        (lambda offline, plan: offline + " Do it by 2026-03-03T14:00.", "format: an ISO"),
        (lambda offline, plan: None, "schema:"),
    ],
    ids=["leaked_id", "missing_fact", "iso_timestamp", "schema_violation"],
)
def test_a_rejected_rewording_keeps_the_offline_text_and_is_asked_again(
    make_client, scenario, wording, kind
):
    plan = scenario._plan

    def respond(request):
        text = wording(_offline_in(request), plan)
        return final_answer('{"txt": 1}') if text is None else _answer(text)

    with FakeOpenAIServer(respond) as server:
        out, phrased = phrase_scenario(make_client(server, repairs=1), scenario)
        assert len(server.requests) == 2  # the answer, then one repair
        assert kind in server.requests[1]["messages"][-1]["content"]  # the model is told why
        phrase_scenario(make_client(server, repairs=1), scenario)
        assert len(server.requests) == 4  # nothing was cached: asked again
    assert out.task_text == scenario.task_text
    assert out.scenario_id == scenario.scenario_id
    assert out.provenance["text_source"] == "offline"
    reason = out.provenance["text_fallback_reason"]
    assert reason.startswith(f"{STAGE}: ") and kind in reason
    assert [c.status for c in phrased.attempts] == ["rejected", "rejected"]
    assert not any(i in reason for i in plan.hidden_ids if not i.isdigit())


def test_a_server_error_falls_back_with_its_reason(make_client, scenario):
    with FakeOpenAIServer(scripted(http_error(500))) as server:
        out, phrased = phrase_scenario(make_client(server, retries=1), scenario)
        assert len(server.requests) == 2
    assert out.task_text == scenario.task_text
    assert out.provenance["text_source"] == "offline"
    assert out.provenance["text_fallback_reason"].startswith(f"{STAGE}: ")
    assert "http_500" in out.provenance["text_fallback_reason"]
    assert [c.status for c in phrased.attempts] == ["retried", "failed"]


def test_an_exhausted_budget_falls_back_without_a_request(make_client, scenario):
    with FakeOpenAIServer(scripted(_answer("unused"))) as server:
        out, phrased = phrase_scenario(make_client(server, budget_tokens=10), scenario)
        assert server.requests == []
    assert out.task_text == scenario.task_text
    assert out.provenance["text_fallback_reason"].startswith(f"{STAGE}: budget_exhausted:")
    assert [c.status for c in phrased.attempts] == ["skipped"]


def test_the_offline_scenario_carries_no_text_provenance(scenario):
    # Without an endpoint nothing is added: the offline artifact keeps its bytes.
    assert "text_source" not in scenario.provenance
    assert "text_source" not in scenario.model_dump(mode="json")["provenance"]
    assert "_plan" not in scenario.model_dump(mode="json")


def test_words_that_name_a_decoy_value_are_rejected():
    # A reply task whose guard excludes a look-alike record's value: words that say it would
    # take it off the guard (safe_reply), weakening the checks the planner screened.
    (topic,) = select_topics(load_catalogue(), {"booking"}, 1)
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=0, index=0, records_per_entity=8)
    planned = plan_scenarios(env, state, seed=0, count=40, max_chain_length=10)
    s = next(
        s
        for s in planned
        if s.expected_reply and (s.expected_reply["exclude"] or s.expected_reply["candidates"])
    )
    decoy = (s.expected_reply["exclude"] or s.expected_reply["candidates"])[0]
    assert text_fault(s._plan, s.task_text, "Hi! " + s.task_text) is None
    assert text_fault(s._plan, s.task_text, f"{s.task_text} Not {decoy}.").startswith("reply:")
