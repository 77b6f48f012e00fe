"""A tiny build pointed at an OpenAI-compatible endpoint: the LLM agent's rollouts land in
the warehouse with their token accounting, a free-form model name (`@`, `/`) publishes, and
a rebuild costs zero tokens (cache) while the ledger keeps the first build's rows."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.build_support import query, run_build
from tests.fakes.openai_server import FakeOpenAIServer, final_answer

pytestmark = pytest.mark.slow

MODEL = "@cf/meta/llama-3.1-8b-instruct"


def _build(home: Path, base_url: str):
    return run_build(
        home,
        env={
            "OPENAI_BASE_URL": base_url,
            "OPENAI_API_KEY": "sk-test",
            "ENVFOUNDRY_MODEL": MODEL,
            "ENVFOUNDRY_PRICE_IN_PER_MTOK": "0.5",
            "ENVFOUNDRY_PRICE_OUT_PER_MTOK": "1.5",
        },
    )


def test_llm_agent_rollouts_are_accounted_and_cached(tmp_path):
    # A lazy "model": it answers at once without touching a tool.
    with FakeOpenAIServer(lambda request: final_answer("I could not do that.")) as server:
        proc = _build(tmp_path, server.base_url)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        first_requests = len(server.requests)
        (published,) = query(tmp_path, "SELECT count(*) FROM scenarios WHERE status = 'published'")[
            0
        ]
        assert first_requests == published  # one decision per published scenario
        calls = query(
            tmp_path,
            "SELECT stage, model, tokens_in, tokens_out, cost_usd, cache_hit FROM llm_calls",
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
        assert tokens == sum(c[2] for c in calls)

        proc = _build(tmp_path, server.base_url)
        assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
        assert len(server.requests) == first_requests  # every answer came from the cache
        builds = query(
            tmp_path,
            "SELECT bool_and(cache_hit), sum(tokens_in + tokens_out), count(*) FROM llm_calls "
            "GROUP BY build_id ORDER BY min(created_at)",
        )
        # Append-only: the first build's paid rows stay; the second's are all cache hits.
        assert builds == [(False, sum(c[2] + c[3] for c in calls), published), (True, 0, published)]
