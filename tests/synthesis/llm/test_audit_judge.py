# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `audit_judge` stage: a tester model proposes calls, our code runs them in the sandbox,
a judge model grades them; a judge that fails one tool quarantines the environment with its
reason, and a stage that cannot run judges nothing (the programmatic audit still gates)."""

from __future__ import annotations

import json
from contextlib import contextmanager

import dagster as dg
import pytest

from assets import judging
from assets._resources import BuildSettings
from assets.judging import env_judgement
from assets.scenarios import scenarios
from assets.warehouse import collect_tables
from quality.audit import audit_environment
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.audit_judge import (
    JUDGE_THRESHOLD,
    STAGE,
    JudgedCall,
    judge_environment,
    offline_judgement,
    verdict,
)
from tests.fakes.llm_judging import answer_audit_judge
from tests.fakes.openai_server import FakeOpenAIServer, final_answer
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def shop():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=5, index=0, records_per_entity=3)
    return env, model_of(env), state.state


def _role(request: dict) -> str:
    return request["messages"][1]["content"].splitlines()[0].removeprefix("Role: ")


def _judged_calls(request: dict) -> list[dict]:
    line = next(ln for ln in request["messages"][1]["content"].splitlines() if ln[:7] == "Calls: ")
    return json.loads(line.removeprefix("Calls: "))


def _judge(client, shop):
    env, model, state = shop
    return judge_environment(client, env, model, state, seed=5)


def test_a_judge_passing_every_call_keeps_the_environment(make_client, shop):
    env, model, _ = shop
    with FakeOpenAIServer(answer_audit_judge) as server:
        judgement = _judge(make_client(server), shop)
        roles = [_role(r) for r in server.requests]
        names = {r["response_format"]["json_schema"]["name"] for r in server.requests}
        judged = [c for r in server.requests if _role(r) == "judge" for c in _judged_calls(r)]
    assert roles[0] == "tester" and set(roles[1:]) == {"judge"} and names == {STAGE}
    assert judgement.judged and judgement.passed and judgement.reason is None
    assert judgement.share == 1.0 and judgement.unproposed == []
    assert {c.tool for c in judgement.calls} == {t.name for t in model.tools}
    # The calls ran in the sandbox: the judge saw writes change records, queries change none.
    writes = {t.name for t in model.tools if t.kind == "mutate"}
    assert any(c["state_changes"] != ["(none)"] for c in judged if c["tool"] in writes)
    assert all(c["state_changes"] == ["(none)"] for c in judged if c["tool"] not in writes)
    assert {(c.stage, c.artifact_id, c.status) for c in judgement.attempts} == {
        (STAGE, env.env_id, "accepted")
    }
    out = judgement.to_json()
    assert out["passed"] and out["judged"] and out["failed_tools"] == []


def test_a_judge_that_fails_one_tool_quarantines_with_its_reason(make_client, shop):
    _, model, _ = shop
    broken = next(t.name for t in model.tools if t.kind == "mutate")
    why = f"{broken} charged the wrong total"

    def respond(request):
        if _role(request) == "tester":
            return answer_audit_judge(request)
        grades = [
            {
                "index": c["index"],
                "grade": "fail" if c["tool"] == broken else "pass",
                "reason": why if c["tool"] == broken else "fine",
            }
            for c in _judged_calls(request)
        ]
        return final_answer(json.dumps({"grades": grades}))

    with FakeOpenAIServer(respond) as server:
        judgement = _judge(make_client(server), shop)
    # One tool in fifteen: the share alone (14/15) would keep it; the tool rule does not.
    assert judgement.share >= JUDGE_THRESHOLD
    assert judgement.judged and not judgement.passed
    assert judgement.failed_tools() == [broken]
    assert judgement.reason == f"audit_judge: tool {broken} failed every call: {why}"


def _calls(grades: list[tuple[str, str]]) -> list[JudgedCall]:
    return [
        JudgedCall(i, tool, {}, "", None, [], grade, f"{tool} {grade}")
        for i, (tool, grade) in enumerate(grades)
    ]


def test_the_keep_rule_is_pass_plus_warning_at_least_085_and_no_tool_failed_throughout():
    # 20 calls over 10 tools, each tool called twice: 3 fails on 3 different tools.
    base = [(f"t{i % 10}", "pass") for i in range(20)]
    at_the_bar = [(t, "fail" if i in (0, 1, 2) else g) for i, (t, g) in enumerate(base)]
    at_the_bar[3] = ("t3", "warning")  # warnings count as kept
    assert verdict(_calls(at_the_bar)) == (True, None)  # 17/20 = 0.85
    below = [(t, "fail" if i in (0, 1, 2, 3) else g) for i, (t, g) in enumerate(base)]
    passed, reason = verdict(_calls(below))  # 16/20 = 0.80
    assert not passed and reason == "audit_judge: pass+warning share 0.80 < 0.85: tool t0: t0 fail"
    # A tool failed on both of its calls: 18/20 = 0.90 is not enough.
    one_tool = [(t, "fail" if t == "t4" else g) for t, g in base]
    passed, reason = verdict(_calls(one_tool))
    assert not passed and reason == "audit_judge: tool t4 failed every call: t4 fail"


def test_a_stopped_stage_judges_nothing_and_says_why(make_client, shop):
    with FakeOpenAIServer(answer_audit_judge) as server:
        judgement = _judge(make_client(server, budget_tokens=1), shop)
        assert server.requests == []  # stopped before sending
    assert not judgement.judged and judgement.passed
    assert judgement.reason.startswith("not judged: audit_judge: budget")
    assert [c.status for c in judgement.attempts] == ["skipped"]
    assert judgement.to_json() == {"judged": False, "passed": True, "reason": judgement.reason}


def test_unknown_tools_are_dropped_and_no_usable_proposal_is_rejected(make_client, shop):
    _, model, _ = shop
    tool = model.tools[0].name

    def some_unknown(request):
        if _role(request) == "judge":
            return answer_audit_judge(request)
        calls = [
            {"tool": "drop_database", "arguments": {}, "expect": "gone"},
            {"tool": tool, "arguments": {}, "expect": "a refusal or a record"},
        ]
        return final_answer(json.dumps({"calls": calls}))

    with FakeOpenAIServer(some_unknown) as server:
        judgement = _judge(make_client(server), shop)
    assert judgement.judged and judgement.dropped == ["unknown tool 'drop_database'"]
    assert [c.tool for c in judgement.calls] == [tool]
    assert len(judgement.unproposed) == len(model.tools) - 1

    def all_unknown(request):
        calls = [{"tool": "drop_database", "arguments": {}, "expect": "gone"}]
        return final_answer(json.dumps({"calls": calls}))

    with FakeOpenAIServer(all_unknown) as server:
        judgement = _judge(make_client(server, repairs=1), shop)
        assert len(server.requests) == 2  # the answer, then one repair
        assert "proposals:" in server.requests[1]["messages"][-1]["content"]
        _judge(make_client(server, repairs=1), shop)
        assert len(server.requests) == 4  # nothing was cached: asked again
    assert not judgement.judged and judgement.passed
    assert judgement.reason.startswith("not judged: audit_judge: proposals:")


# --------------------------------------------------------------------------- the asset


def _online(monkeypatch, module, client) -> None:
    """The asset's `llm_run` yields `client` (a directly invoked asset has no run to spool)."""

    @contextmanager
    def run(context, settings):
        yield client

    monkeypatch.setattr(module, "llm_run", run)


def _asset_inputs(shop) -> dict:
    env, model, state = shop
    audit = audit_environment(env, [state], seed=0, model=model).to_json()
    return {
        "environments": env.model_dump(mode="json", by_alias=True),
        "initial_states": {
            "states": [{"state_id": "s0", "env_id": env.env_id, "seed": 5, "state": state}],
            "error": None,
        },
        "env_models": model.model_dump(mode="json", by_alias=True),
        "env_audit": audit,
    }


def _run_asset(tmp_path, shop, **inputs):
    env, _, _ = shop
    return env_judgement(
        context=dg.build_asset_context(partition_key=env.env_id),
        settings=BuildSettings(profile="tiny", seed=0, home=str(tmp_path)),
        **{**_asset_inputs(shop), **inputs},
    ).value


def test_offline_the_asset_judges_nothing_and_runs_nothing(tmp_path, shop, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    # Inputs no sandbox could load: offline, nothing reads them.
    out = _run_asset(tmp_path, shop, environments={}, initial_states={}, env_models={})
    assert out == {"judged": False, "passed": True, "reason": "offline: no endpoint"}


def test_a_judge_failed_environment_is_skipped_and_quarantined_with_its_reason(
    make_client, tmp_path, shop, monkeypatch
):
    env, model, _ = shop
    broken = next(t.name for t in model.tools if t.kind == "query")

    def respond(request):
        if _role(request) == "tester":
            return answer_audit_judge(request)
        grades = [
            {"index": c["index"], "grade": "fail" if c["tool"] == broken else "pass", "reason": "r"}
            for c in _judged_calls(request)
        ]
        return final_answer(json.dumps({"grades": grades}))

    with FakeOpenAIServer(respond) as server:
        _online(monkeypatch, judging, make_client(server))
        judged = _run_asset(tmp_path, shop)
    assert judged["judged"] and not judged["passed"] and judged["failed_tools"] == [broken]
    inputs = _asset_inputs(shop)
    assert inputs["env_audit"]["passed"]  # the contract audit alone would keep it
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    for verdict_, planned in ((judged, False), (offline_judgement(), True)):
        tasks = scenarios(
            context=dg.build_asset_context(partition_key=env.env_id),
            settings=BuildSettings(profile="tiny", seed=0, home=str(tmp_path)),
            sandbox_pool=None,
            env_judgement=verdict_,
            **inputs,
        ).value
        assert bool(tasks) is planned
    tables = collect_tables(
        topics=[],
        env_specs={"specs": [env.spec.model_dump(mode="json")], "quarantine": []},
        environments={env.env_id: inputs["environments"]},
        initial_states={env.env_id: {"states": [], "error": None}},
        env_audit={env.env_id: inputs["env_audit"]},
        checks={},
        trajectories={},
        env_judgement={env.env_id: judged},
    )
    (row,) = tables["environments"].to_pylist()
    assert row["status"] == "quarantined" and row["reason"] == judged["reason"]
    assert row["reason"].startswith(f"audit_judge: tool {broken} failed every call")
    (quarantined,) = tables["quarantine"].to_pylist()
    assert quarantined["artifact_id"] == env.env_id and quarantined["reason"] == judged["reason"]
    # A verdict that is not a failure (offline, or not judged) keeps the environment.
    kept = collect_tables(
        topics=[],
        env_specs={"specs": [env.spec.model_dump(mode="json")], "quarantine": []},
        environments={env.env_id: inputs["environments"]},
        initial_states={env.env_id: {"states": [], "error": None}},
        env_audit={env.env_id: inputs["env_audit"]},
        checks={},
        trajectories={},
        env_judgement={env.env_id: offline_judgement()},
    )
    assert kept["environments"].to_pylist()[0]["status"] == "accepted"
