# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `env_code` stage: a model's class is read, never run, here; written to the home, it is
judged in the bwrap sandbox like any foreign class. Broken code (a syntax error, a crash in
the constructor, a hang, a tool that breaks its own docstring) ends quarantined with the
reason; a working class gives the planner proven scenarios."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass

import dagster as dg
import pytest

import sandboxes.session
from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets.env_specs import env_sources, env_specs
from assets.environments import environments
from assets.llm_environments import llm_env_code, llm_env_specs
from assets.topics import mined_topics, topics
from orchestration.io_managers import JsonArtifactIOManager
from quality.audit import audit_environment
from quality.selftest import selftest_outcomes
from sandboxes.backends import unavailable_reason
from sandboxes.limits import Limits
from synthesis.environments.foreign import ForeignSource, foreign_environment
from synthesis.environments.foreign_states import build_foreign_states
from synthesis.environments.inference import infer_model
from synthesis.environments.model import EnvModel
from synthesis.environments.topics import load_catalogue
from synthesis.llm import spool
from synthesis.llm.env_code import (
    SCHEMA,
    STAGE,
    code_fault,
    module_path,
    write_env,
    written_env_id,
)
from synthesis.models import Environment, InitialState
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes import llm_environments as fakes
from tests.fakes.openai_server import FakeOpenAIServer
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture

BACKEND = "bwrap"
needs_bwrap = pytest.mark.skipif(
    unavailable_reason(BACKEND) is not None, reason=f"bwrap unusable: {unavailable_reason(BACKEND)}"
)


@pytest.fixture(scope="module")
def topic():
    return next(t for t in load_catalogue() if t.topic_id == "bookshop")


@dataclass
class Verdict:
    status: str
    reason: str | None
    env: Environment
    states: list[InitialState]
    model: EnvModel | None = None


def judge(source: ForeignSource) -> Verdict:
    """What the environments → initial_states → env_models → env_audit assets decide, through
    the engine functions they call, in the bwrap sandbox (the warehouse's reason wording)."""
    env = foreign_environment(source)
    if env.status != "accepted":
        return Verdict(env.status, env.reason, env, [])
    try:
        states = build_foreign_states(env, seed=0, count=3, backend=BACKEND)
    except Exception as exc:  # noqa: BLE001 - as the initial_states asset records it
        return Verdict("quarantined", f"initial state: {type(exc).__name__}: {exc}", env, [])
    model = infer_model(env, states, seed=0, backend=BACKEND)
    report = audit_environment(env, [s.state for s in states], seed=0, backend=BACKEND, model=model)
    if not report.passed:
        findings = "; ".join(report.findings()[:3])
        return Verdict("quarantined", f"audit: failed: {findings}", env, states, model)
    return Verdict("accepted", None, env, states, model)


def _written(make_client, topic, tmp_path, answer: dict):
    with FakeOpenAIServer(lambda request: answer) as server:
        written = write_env(make_client(server), topic, tmp_path)
        requests = list(server.requests)
    return written, requests


def test_the_static_checks_read_the_code_and_never_run_it():
    club = fakes.WORKING_CLUB
    assert code_fault({"class_name": "ChessClub", "code": club}) is None
    # Run, this would end the test process: parsing it does not.
    exits = "raise SystemExit(3)\n" + club
    assert code_fault({"class_name": "ChessClub", "code": exits}) is None
    assert code_fault({"class_name": "ChessClub", "code": fakes.BROKEN_SYNTAX}).startswith(
        "syntax: line "
    )
    assert code_fault({"class_name": "Chess", "code": club}) == (
        "class: no top-level class named 'Chess'"
    )
    numpy = "import numpy\n" + club
    assert code_fault({"class_name": "ChessClub", "code": numpy}) == (
        "imports: beyond the standard library: numpy"
    )
    assert code_fault({"class_name": "ChessClub", "code": club[:100]}).startswith("size: ")


def test_an_answer_that_never_parses_is_rejected_and_writes_nothing(make_client, topic, tmp_path):
    answer = fakes.code_answer("ChessClub", fakes.BROKEN_SYNTAX)
    written, requests = _written(make_client, topic, tmp_path, answer)
    assert written.source is None and len(requests) == 3  # the answer and two repairs
    assert written.reason.startswith("env_code: syntax: no valid answer after 3 attempts")
    assert "That answer was rejected (syntax: line " in requests[1]["messages"][-1]["content"]
    assert not (tmp_path / "llm_envs").exists()


def test_a_written_class_is_a_foreign_source_under_our_id(make_client, topic, tmp_path):
    with FakeOpenAIServer(fakes.answer_env_code) as server:
        written = write_env(make_client(server), topic, tmp_path)
        (request,) = server.requests
    assert request["response_format"]["json_schema"] == {"name": STAGE, "schema": SCHEMA}
    source = written.source
    assert written.reason is None and source is not None
    assert source.env_id == written_env_id("bookshop") == "bookshop-llm-code"
    assert source.class_name == "OnlineBookshopDesk"  # from the title, "Online bookshop"
    path = module_path(tmp_path, "bookshop")
    assert path == tmp_path / "llm_envs" / "bookshop-llm-code" / "bookshop.py"
    code = json.loads(fakes.answer_env_code(request)["content"])["code"]
    assert path.read_bytes() == code.encode() and source.code == code
    assert source.path == str(path.resolve()) and source.module is None


@needs_bwrap
@pytest.mark.parametrize(
    ("code", "reason"),
    [
        (fakes.BROKEN_CONSTRUCTOR, "initial state: ForeignStateError: "),
        (fakes.BROKEN_HANG, "initial state: ForeignStateError: timeout after 3s"),
        (fakes.BROKEN_DOCSTRING, "audit: failed: get_member: its description says it changes"),
    ],
    ids=["constructor_crash", "hang", "docstring_violation"],
)
def test_broken_code_is_quarantined_with_the_reason(
    make_client, topic, tmp_path, monkeypatch, code, reason
):
    # A hang costs the loading deadline: a short one keeps the test fast.
    monkeypatch.setattr(sandboxes.session, "Limits", functools.partial(Limits, start_timeout_s=3.0))
    written, _ = _written(make_client, topic, tmp_path, fakes.code_answer("ChessClub", code))
    assert written.source is not None  # the static checks pass: only running it tells
    verdict = judge(written.source)
    assert verdict.status == "quarantined"
    assert verdict.reason.startswith(reason), verdict.reason
    if code is fakes.BROKEN_CONSTRUCTOR:
        assert "config store unavailable" in verdict.reason


@needs_bwrap
def test_the_same_club_without_the_broken_line_is_accepted(make_client, topic, tmp_path):
    answer = fakes.code_answer("ChessClub", fakes.WORKING_CLUB)
    written, _ = _written(make_client, topic, tmp_path, answer)
    verdict = judge(written.source)
    assert verdict.status == "accepted", verdict.reason
    assert verdict.model.tool("get_member").kind == "query"


@needs_bwrap
def test_a_working_class_gives_proven_scenarios(make_client, topic, tmp_path):
    with FakeOpenAIServer(fakes.answer_env_code) as server:
        written = write_env(make_client(server), topic, tmp_path)
    verdict = judge(written.source)
    assert verdict.status == "accepted", verdict.reason
    env, model = verdict.env, verdict.model
    planned = plan_scenarios(
        env, verdict.states[0], seed=0, count=3, max_chain_length=5, model=model, backend=BACKEND
    )
    published = [
        s
        for s in execute_gold(env, planned, model=model, backend=BACKEND)
        if s.status == "published"
    ]
    assert len(published) >= 2
    items = [(s, derive_checks(s, model=model)) for s in published]
    outcomes = selftest_outcomes(env, items, model=model, backend=BACKEND)
    assert all(o.selftest.proven for o in outcomes), [o.selftest.reason for o in outcomes]


def _catalogue_phase(home, instance):
    return dg.materialize(
        [mined_topics, topics, env_specs, llm_env_specs, llm_env_code, env_sources],
        instance=instance,
        resources={
            "settings": BuildSettings(profile="tiny", seed=0, home=str(home), corpus="none"),
            "io_manager": JsonArtifactIOManager(root=str(home / "artifacts")),
        },
    )


def test_the_assets_add_model_written_environments_only_with_an_endpoint(tmp_path, monkeypatch):
    offline_home, online_home = tmp_path / "offline", tmp_path / "online"
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with dg.instance_for_test() as instance:
        offline = _catalogue_phase(offline_home, instance)
        offline_ids = set(instance.get_dynamic_partitions(environment_partitions.name))
    assert offline.output_for_node("llm_env_specs") == {"specs": [], "quarantine": []}
    assert offline.output_for_node("llm_env_code") == {"sources": [], "quarantine": []}
    assert not (offline_home / "llm_envs").exists()

    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    with FakeOpenAIServer(lambda r: fakes.answer_env_spec(r) or fakes.answer_env_code(r)) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        with dg.instance_for_test() as instance:
            online = _catalogue_phase(online_home, instance)
            online_ids = set(instance.get_dynamic_partitions(environment_partitions.name))
    (spec,) = online.output_for_node("llm_env_specs")["specs"]
    (source,) = online.output_for_node("llm_env_code")["sources"]
    assert online_ids - offline_ids == {spec["env_id"], source["env_id"]}
    assert spec["env_id"].endswith("-llm-spec") and source["env_id"].endswith("-llm-code")
    assert source in online.output_for_node("env_sources")["foreign"]
    assert (online_home / "llm_envs" / source["env_id"]).is_dir()
    # The environments asset compiles the authored spec like a generated one.
    env = environments(
        context=dg.build_asset_context(partition_key=spec["env_id"]),
        settings=BuildSettings(profile="tiny", seed=0, home=str(online_home)),
        env_specs=online.output_for_node("env_specs"),
        env_sources=online.output_for_node("env_sources"),
        llm_env_specs=online.output_for_node("llm_env_specs"),
    ).value
    assert env["env_id"] == spec["env_id"] and env["status"] == "accepted"
    assert env["source"] == "programmatic" and env["spec"]["env_id"] == spec["env_id"]


def test_a_topic_the_model_cannot_serve_is_a_quarantine_row_and_its_calls_are_spooled(
    tmp_path, monkeypatch
):
    home = tmp_path / "home"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    broken = fakes.code_answer("ChessClub", fakes.BROKEN_SYNTAX)
    with FakeOpenAIServer(lambda request: broken) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        result = dg.materialize(
            [mined_topics, topics, llm_env_code],
            resources={
                # No corpus: only this stage asks the broken model.
                "settings": BuildSettings(profile="tiny", seed=0, home=str(home), corpus="none"),
                "io_manager": JsonArtifactIOManager(root=str(home / "artifacts")),
            },
        )
    out = result.output_for_node("llm_env_code")
    assert out["sources"] == []
    (row,) = out["quarantine"]
    assert (row["artifact_type"], row["stage"]) == ("environment", "llm_env_code")
    assert row["artifact_id"].endswith("-llm-code")
    assert row["reason"].startswith("env_code: syntax: no valid answer after 3 attempts")
    rows = spool.read_rows(spool.build_files(home, result.run_id))
    assert [r["status"] for r in rows] == ["rejected"] * 3
    assert {r["artifact_id"] for r in rows} == {row["artifact_id"]}
    assert not (home / "llm_envs").exists()
