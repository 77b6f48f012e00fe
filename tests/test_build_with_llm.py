"""A tiny build pointed at an OpenAI-compatible endpoint: the LLM agent's rollouts land in
the warehouse with their token accounting, a free-form model name (`@`, `/`) publishes, and
a rebuild costs zero tokens (cache) while the ledger keeps the first build's rows. The
`task_text` stage rewords tasks: accepted wordings are published and cached, rejected ones
keep the offline text and are asked again by the rebuild. Ledger rows reach `llm_calls` by
the spool (one file per asset run under `ledger/<build>/`), never through an artifact."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import pytest

from tests.build_support import query, run_build
from tests.fakes.openai_server import FakeOpenAIServer, final_answer

pytestmark = pytest.mark.slow

MODEL = "@cf/meta/llama-3.1-8b-instruct"
KEY = "sk-build-test-key-0731"


def _build(home: Path, base_url: str):
    return run_build(
        home,
        env={
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": KEY,
            "ENVFOUNDRY_MODEL": MODEL,
            "ENVFOUNDRY_PRICE_IN_PER_MTOK": "0.5",
            "ENVFOUNDRY_PRICE_OUT_PER_MTOK": "1.5",
        },
    )


def _assert_the_spool_is_the_ledger(home: Path, builds: int) -> None:
    """Every spooled row is in `llm_calls` and the table holds no other; the scenarios'
    rows are the task_text stage's, the trajectories' the agent's; no key, no artifact."""
    files = sorted((home / "ledger").glob("*/*/*.jsonl"))
    assert len({f.parent.parent.name for f in files}) == builds
    stages = {}
    for f in files:
        text = f.read_text()
        assert KEY not in text
        stages.setdefault(f.parent.name, set()).update(
            json.loads(line)["stage"] for line in text.splitlines()
        )
    assert stages == {"scenarios": {"task_text"}, "trajectories": {"agent"}}
    spooled = sorted(
        json.loads(line)["call_id"] for f in files for line in f.read_text().splitlines()
    )
    assert [c for (c,) in query(home, "SELECT call_id FROM llm_calls ORDER BY call_id")] == spooled
    # One shape online and offline: the scenarios artifact a list, no ledger rows anywhere.
    for f in (home / "artifacts" / "scenarios").glob("*.json"):
        assert isinstance(json.loads(f.read_text()), list)
    for f in (home / "artifacts" / "trajectories").glob("*.json"):
        assert json.loads(f.read_text())["llm_calls"] == []


PREFIX = "Hello there! "
TEXTS = "SELECT task_text, provenance_json FROM scenarios ORDER BY scenario_id"
REPAIRS = 2  # the default: a rejected wording costs three attempts


def _rejects(offline: str) -> bool:
    return zlib.crc32(offline.encode()) % 3 == 0


def respond(request: dict) -> dict:
    """A lazy agent (answers at once without a tool); a phrasing model that rewords two
    tasks in three and answers the third with an empty text (a schema violation)."""
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") != "task_text":
        return final_answer("I could not do that.")
    (offline,) = [
        line.removeprefix("Request: ")
        for line in request["messages"][1]["content"].splitlines()
        if line.startswith("Request: ")
    ]
    return final_answer(json.dumps({"text": "" if _rejects(offline) else PREFIX + offline}))


def test_llm_agent_rollouts_are_accounted_and_cached(tmp_path):
    with FakeOpenAIServer(respond) as server:
        proc = _build(tmp_path, server.base_url)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        first_requests = len(server.requests)
        (published,) = query(tmp_path, "SELECT count(*) FROM scenarios WHERE status = 'published'")[
            0
        ]
        texts = query(tmp_path, TEXTS)
        sources = [json.loads(p)["text_source"] for _, p in texts]
        n_llm, n_offline = sources.count("llm"), sources.count("offline")
        assert n_llm and n_offline and n_llm + n_offline == len(texts)
        for text, provenance in texts:
            provenance = json.loads(provenance)
            if provenance["text_source"] == "llm":
                assert text.startswith(PREFIX) and "text_fallback_reason" not in provenance
            else:
                assert not text.startswith(PREFIX) and _rejects(text)
                assert provenance["text_fallback_reason"].startswith("task_text: schema:")
        phrasing = query(
            tmp_path,
            "SELECT status, count(*) FROM llm_calls WHERE stage = 'task_text' GROUP BY status "
            "ORDER BY status",
        )
        assert phrasing == [("accepted", n_llm), ("rejected", n_offline * (REPAIRS + 1))]
        # One decision per published scenario, and the phrasing model's attempts.
        assert first_requests == published + n_llm + n_offline * (REPAIRS + 1)
        calls = query(
            tmp_path,
            "SELECT stage, model, tokens_in, tokens_out, cost_usd, cache_hit FROM llm_calls "
            "WHERE stage = 'agent'",
        )
        assert len(calls) == published
        for stage, model, tokens_in, tokens_out, cost, hit in calls:
            assert (stage, model, hit) == ("agent", MODEL, False)
            assert cost == pytest.approx(tokens_in * 0.5e-6 + tokens_out * 1.5e-6)
        (llm_trajs, llm_successes) = query(
            tmp_path,
            "SELECT count(*), count(*) FILTER (WHERE success) FROM trajectories "
            f"WHERE policy = 'llm:{MODEL}'",
        )[0]
        assert llm_trajs == published and llm_successes == 0
        bench = query(tmp_path, "SELECT policy FROM mart_policy_benchmark")
        assert (f"llm:{MODEL}",) in bench
        (tokens,) = query(tmp_path, "SELECT sum(tokens_in) FROM mart_token_cost")[0]
        (all_tokens,) = query(tmp_path, "SELECT sum(tokens_in) FROM llm_calls")[0]
        assert tokens == all_tokens
        _assert_the_spool_is_the_ledger(tmp_path, builds=1)

        proc = _build(tmp_path, server.base_url)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        # Accepted answers come from the cache; only the rejected wordings are asked again.
        assert len(server.requests) == first_requests + n_offline * (REPAIRS + 1)
        assert query(tmp_path, TEXTS) == texts
        builds = query(
            tmp_path,
            "SELECT bool_and(cache_hit), sum(tokens_in + tokens_out), count(*) FROM llm_calls "
            "WHERE stage = 'agent' GROUP BY build_id ORDER BY min(created_at)",
        )
        # Append-only: the first build's paid rows stay; the second's are all cache hits.
        assert builds == [(False, sum(c[2] + c[3] for c in calls), published), (True, 0, published)]
        phrasing = query(
            tmp_path,
            "SELECT build_id, status, count(*), min(min(created_at)) OVER (PARTITION BY build_id) "
            "AS started FROM llm_calls WHERE stage = 'task_text' GROUP BY build_id, status "
            "ORDER BY started, status",
        )
        assert [(s, n) for _, s, n, _ in phrasing] == [
            ("accepted", n_llm),
            ("rejected", n_offline * (REPAIRS + 1)),
            ("cached", n_llm),
            ("rejected", n_offline * (REPAIRS + 1)),
        ]
        _assert_the_spool_is_the_ledger(tmp_path, builds=2)
