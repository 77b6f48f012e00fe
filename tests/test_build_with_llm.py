"""A tiny build with every LLM stage on, against a loopback model configured by environment
variables alone (tests/fakes/llm_build.py answers each stage from its request).

Topics are mined from the shipped corpus and one request about a folder of monthly CSVs (a
project topic, whose folder's vocabulary the model writes), one topic also gets a
model-written spec and one a model-written class, each environment gets a model-written seed
state and the dual-agent audit, the model proposes goals the planner proves, rewords tasks,
plays the agent k times (multi-turn with a simulated user after the first attempt). Every
stage lands in the append-only `llm_calls` ledger through the spool; a `--full` rebuild sends
no request for an accepted answer and asks again for every rejected one; the API key is in no
file of the home."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from synthesis.config import get_profile
from synthesis.llm.topic_mining import CORPUS_PATH
from tests.build_support import query, run_build, small_catalogue
from tests.fakes.llm_build import REWORDED, STAGES, rejects_wording, respond
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow

MODEL = "@cf/meta/llama-3.1-8b-instruct"
KEY = "sk-build-test-key-0731"
# The asset whose runs ask each stage (their spool files are named after the asset).
ASKED_BY = {
    "mined_topics": {"topic", "project_topic"},
    "llm_env_specs": {"env_spec"},
    "llm_env_code": {"env_code"},
    "initial_states": {"initial_state"},
    "env_judgement": {"audit_judge"},
    "scenarios": {"task_plan", "task_text"},
    "trajectories": {"agent", "user_sim"},
}
REPAIRS = 2  # the default: a rejected wording costs three attempts
TEXTS = "SELECT task_text, provenance_json FROM scenarios ORDER BY scenario_id"


# One catalogue topic keeps the two builds within this CI budget; the model's stages
# add three more.
CATALOGUE = ("airline_baggage",)
# The most useful request of the corpus (the fake scores three changes it asks for), so the
# one topic the tiny profile mines is a project: its vocabulary is the `project_topic`
# stage's (tests/fakes/llm_projects.py).
PROJECT_REQUEST = {
    "id": "req-901",
    "request": "Add up our Q1 sales by region from the monthly CSVs in the shared folder, move "
    "last year's files to the archive and send the report to finance.",
}


def _corpus(path: Path) -> Path:
    path.write_text(CORPUS_PATH.read_text() + json.dumps(PROJECT_REQUEST) + "\n")
    return path


def _build(home: Path, base_url: str, *extra: str):
    return run_build(
        home,
        extra=[
            "--catalogue",
            str(small_catalogue(home.parent / "catalogue.json", CATALOGUE)),
            "--corpus",
            str(_corpus(home.parent / "corpus.jsonl")),
            *extra,
        ],
        env={
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": KEY,
            "ENVFOUNDRY_MODEL": MODEL,
            "ENVFOUNDRY_PRICE_IN_PER_MTOK": "0.5",
            "ENVFOUNDRY_PRICE_OUT_PER_MTOK": "1.5",
            # The fake agent never solves a task (0/k): keep every task so the rest of the
            # build has something to publish; the filter itself is tested on its own.
            "ENVFOUNDRY_DIFFICULTY_FILTER": "all",
        },
    )


def _assert_the_spool_is_the_ledger(home: Path, builds: int) -> None:
    """Every spooled row is in `llm_calls` and the table holds no other; each asset's rows
    are its own stages'; no artifact carries a ledger row."""
    files = sorted((home / "ledger").glob("*/*/*.jsonl"))
    assert len({f.parent.parent.name for f in files}) == builds
    stages: dict[str, set[str]] = {}
    for f in files:
        stages.setdefault(f.parent.name, set()).update(
            json.loads(line)["stage"] for line in f.read_text().splitlines()
        )
    assert stages == ASKED_BY
    spooled = sorted(
        json.loads(line)["call_id"] for f in files for line in f.read_text().splitlines()
    )
    assert [c for (c,) in query(home, "SELECT call_id FROM llm_calls ORDER BY call_id")] == spooled
    for f in (home / "artifacts" / "scenarios").glob("*.json"):
        assert isinstance(json.loads(f.read_text()), list)
    for f in (home / "artifacts" / "trajectories").glob("*.json"):
        assert json.loads(f.read_text())["llm_calls"] == []


def _assert_the_key_is_nowhere(home: Path) -> None:
    """Not in an artifact, a log, the warehouse, the Dagster instance or a written class."""
    needle = KEY.encode()
    for path in home.rglob("*"):
        if path.is_file():
            assert needle not in path.read_bytes(), path


def _count(home: Path, sql: str) -> int:
    return query(home, sql)[0][0]


def test_every_llm_stage_runs_is_ledgered_and_a_rebuild_asks_only_what_was_rejected(tmp_path):
    tmp_path = tmp_path / "home"
    with FakeOpenAIServer(respond) as server:
        proc = _build(tmp_path, server.base_url)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        first_requests = len(server.requests)

        ledger = dict(query(tmp_path, "SELECT stage, count(*) FROM llm_calls GROUP BY stage"))
        assert set(ledger) == STAGES
        # The summary accounts for every stage, and none stopped.
        for stage, calls in ledger.items():
            assert f"LLM {stage}: {calls} calls, " in proc.stdout
        assert "stopped" not in proc.stdout
        accepted = {
            s
            for (s,) in query(
                tmp_path, "SELECT DISTINCT stage FROM llm_calls WHERE status = 'accepted'"
            )
        }
        assert accepted == STAGES  # every stage had at least one answer it could use

        # Model-made environments: a mined topic, a written spec and a written class, each
        # accepted and publishing proven tasks.
        made = query(
            tmp_path,
            "SELECT e.env_id, e.status, count(s.scenario_id) FILTER (WHERE s.status = "
            "'published') FROM environments e LEFT JOIN scenarios s USING (env_id) "
            "WHERE e.env_id LIKE 'mined_%' OR e.env_id LIKE '%-llm-spec' "
            "OR e.env_id LIKE '%-llm-code' GROUP BY 1, 2 ORDER BY 1",
        )
        assert len(made) == 3, made
        assert {
            kind for env_id, _, _ in made for kind in ("mined", "spec", "code") if kind in env_id
        } == {"mined", "spec", "code"}
        for env_id, status, published in made:
            assert status == "accepted" and published > 0, (env_id, status, published)
        # Seed states written by the model, goals it proposed, tasks it reworded.
        assert (
            _count(tmp_path, "SELECT count(*) FROM initial_states WHERE state_id LIKE '%-llm-%'")
            > 0
        )
        provenance = [
            json.loads(p)
            for (p,) in query(
                tmp_path, "SELECT provenance_json FROM scenarios WHERE status = 'published'"
            )
        ]
        assert any(p.get("plan_source") == "llm" for p in provenance)
        texts = query(tmp_path, TEXTS)
        for text, raw in texts:
            p = json.loads(raw)
            if p["text_source"] == "llm":
                assert text.startswith(REWORDED)
            else:
                assert rejects_wording(text) or p["text_fallback_reason"].startswith("task_text: ")
        # k attempts of the agent per published task, the later ones multi-turn.
        (llm_trajs, published) = query(
            tmp_path,
            f"SELECT (SELECT count(*) FROM trajectories WHERE policy = 'llm:{MODEL}'), "
            "(SELECT count(*) FROM scenarios WHERE status = 'published')",
        )[0]
        assert llm_trajs == get_profile("tiny").llm_agent_attempts * published
        (cost_ok,) = query(
            tmp_path,
            "SELECT bool_and(abs(cost_usd - (tokens_in * 0.5e-6 + tokens_out * 1.5e-6)) < 1e-9) "
            "FROM llm_calls WHERE status IN ('accepted', 'rejected')",
        )[0]
        assert cost_ok
        rejected = _count(tmp_path, "SELECT count(*) FROM llm_calls WHERE status = 'rejected'")
        assert rejected > 0  # the wordings the fake answers with an empty text, at least
        _assert_the_spool_is_the_ledger(tmp_path, builds=1)

        # Unchanged environments are reused whole by an incremental build; `--full` makes
        # every stage again, which is where a rejected answer gets its second chance.
        proc = _build(tmp_path, server.base_url, "--full")
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        # Accepted answers come from the cache; every rejected one is asked again.
        assert len(server.requests) - first_requests == rejected
        assert query(tmp_path, TEXTS) == texts
        builds = query(
            tmp_path,
            "SELECT build_id, count(*) FILTER (WHERE status = 'accepted'), "
            "count(*) FILTER (WHERE status = 'cached'), "
            "count(*) FILTER (WHERE status = 'rejected') FROM llm_calls "
            "GROUP BY build_id ORDER BY min(created_at)",
        )
        assert len(builds) == 2  # append-only: the first build's paid rows stay
        (_, accepted_1, _, rejected_1), (_, accepted_2, cached_2, rejected_2) = builds
        assert (accepted_2, cached_2, rejected_2) == (0, accepted_1, rejected_1)
        _assert_the_spool_is_the_ledger(tmp_path, builds=2)
    _assert_the_key_is_nowhere(tmp_path)
