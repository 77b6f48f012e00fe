# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""Budgets: worst cases reserved before sending, so caps hold with many calls in flight."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import pytest
from rich.console import Console

from orchestration.build import BuildOutcome
from orchestration.summary import print_summary
from synthesis.config import LLMSettings
from synthesis.export import warehouse as wh
from synthesis.llm.budget import Budget, Caps
from synthesis.llm.client import BudgetExhausted, LLMClient, budget_for
from tests.fakes.openai_server import FakeOpenAIServer, Fault, final_answer, scripted
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


def _ask_many(client, n, workers=12):
    def ask(i):
        try:
            return client.chat(
                [{"role": "user", "content": f"question {i:03d}"}],
                stage="agent",
                artifact_id=str(i),
            )
        except BudgetExhausted as exc:
            return exc

    with ThreadPoolExecutor(max_workers=workers) as pool:
        return list(pool.map(ask, range(n)))


@pytest.mark.parametrize("cap", ["tokens", "usd"])
def test_spend_never_exceeds_the_cap_with_concurrent_calls(make_client, cap):
    # Each call's worst case is ~10 prompt tokens + 100; 40 calls could never all fit.
    caps = {"budget_tokens": 1000} if cap == "tokens" else {"budget_usd": 0.004}
    slow = Fault(message=final_answer("ok"), hang_s=0.05, completion_tokens=90)
    with FakeOpenAIServer(scripted(slow)) as server:
        client = make_client(
            server, concurrency=8, max_tokens=100, price_in_per_mtok=5, price_out_per_mtok=5, **caps
        )
        results = _ask_many(client, 40)
    answered = [r for r in results if not isinstance(r, BudgetExhausted)]
    stopped = [r for r in results if isinstance(r, BudgetExhausted)]
    assert answered and stopped  # some fit, the rest stopped cleanly
    assert all(r.reason.startswith("budget_exhausted:") for r in stopped)
    assert server.max_in_flight > 1  # the calls really overlapped
    spent = [c for c in client.calls if c.status == "accepted"]
    if cap == "tokens":
        assert sum(c.tokens_in + c.tokens_out for c in spent) <= 1000
    else:
        assert sum(c.cost_usd for c in spent) <= 0.004
    skipped = [c for c in client.calls if c.status == "skipped"]
    assert len(skipped) == len(stopped) and len(server.requests) == len(answered)


def test_a_stage_cap_stops_that_stage_only(make_client):
    with FakeOpenAIServer(scripted(final_answer("ok"))) as server:
        client = make_client(
            server, max_tokens=50, stage_overrides={"agent": {"budget_tokens": 70}}
        )
        client.chat([{"role": "user", "content": "a"}], stage="agent", artifact_id="x")
        with pytest.raises(BudgetExhausted, match="stage agent token cap 70"):
            client.chat([{"role": "user", "content": "b"}], stage="agent", artifact_id="x")
        client.chat([{"role": "user", "content": "c"}], stage="topic", artifact_id="x")
    assert len(server.requests) == 2


def test_reservations_are_released_when_settled(tmp_path):
    budget = Budget(build=Caps(tokens=100), path=tmp_path / "build.json")
    held = budget.reserve("agent", 80, 0.0)
    with pytest.raises(BudgetExhausted):
        budget.reserve("agent", 30, 0.0)
    budget.settle(held, 20, 0.0)
    budget.reserve("agent", 30, 0.0)
    # The account is shared through the file: another process of the build sees it.
    assert Budget(path=tmp_path / "build.json").spent() == (50, 0.0)


def test_an_account_rewritten_shorter_still_reads_back(tmp_path):
    path = tmp_path / "build.json"
    budget = Budget(build=Caps(tokens=10**9), path=path)  # capped: every change is written
    held = budget.reserve("agent", 123456, 0.123456789)
    budget.settle(held, 7, 0.5)  # shorter numbers: the rewrite is padded, not truncated
    assert Budget(path=path).spent() == (7, 0.5)
    assert Budget(path=path).spent("agent") == (7, 0.5)


def test_budget_settings_come_from_env_vars():
    settings = LLMSettings.from_env(
        {
            "OPENAI_BASE_URL": "http://x/v1",
            "ENVFOUNDRY_BUDGET_USD": "2.5",
            "ENVFOUNDRY_BUDGET_TOKENS__AGENT": "900",
            "ENVFOUNDRY_LLM_MAX_TOKENS__AGENT": "64",
            "ENVFOUNDRY_LLM_CONCURRENCY": "16",
            "ENVFOUNDRY_LLM_DEADLINE_S": "30",
        }
    )
    budget = budget_for(settings)
    assert budget.build == Caps(usd=2.5, tokens=None)
    assert budget.stages == {"agent": Caps(usd=None, tokens=900)}
    assert settings.for_stage("agent").max_tokens == 64
    assert settings.for_stage("topic").max_tokens == 1024
    # A stage that writes a whole spec or class has its own room; an override still wins.
    assert settings.for_stage("env_code").max_tokens == 8192
    wider = LLMSettings.from_env({"ENVFOUNDRY_LLM_MAX_TOKENS__ENV_CODE": "16000"})
    assert wider.for_stage("env_code").max_tokens == 16000
    assert wider.for_stage("env_spec").max_tokens == 8192
    assert (settings.concurrency, settings.deadline_s) == (16, 30.0)
    assert LLMSettings().concurrency == 64 and LLMClient  # defaults suit network-bound calls


def test_the_build_summary_says_the_cap_held_with_16_calls_in_flight(make_client, tmp_path):
    # ~18 worst cases fit the cap, so at least 8 overlap. The summary reads the build's
    # rows from the warehouse, as after a real build.
    slow = Fault(message=final_answer("ok"), hang_s=0.2, completion_tokens=90)
    with FakeOpenAIServer(scripted(slow)) as server:
        client = make_client(
            server,
            concurrency=16,
            max_tokens=100,
            price_in_per_mtok=5,
            price_out_per_mtok=5,
            budget_usd=0.01,
        )
        results = _ask_many(client, 40, workers=24)
    assert server.max_in_flight >= 8
    assert any(isinstance(r, BudgetExhausted) for r in results)
    home = tmp_path / "home"
    rows = wh.llm_call_rows(client.ledger.rows())
    wh.write_tables(wh.warehouse_path(home), {"llm_calls": rows})
    screen = io.StringIO()
    print_summary(
        Console(file=screen, width=300, soft_wrap=True), home, BuildOutcome(build_id="b1"), 1.0
    )
    out = screen.getvalue()
    spent = sum(c.cost_usd for c in client.calls)
    assert 0 < spent <= 0.01
    # A connection the loopback server's backlog refused is retried: count from the ledger.
    n = {s: sum(c.status == s for c in client.calls) for s in ("accepted", "skipped")}
    assert (
        f"LLM: agent stopped at the budget cap (ENVFOUNDRY_BUDGET_USD=0.01): spent "
        f"${spent:.4f} of $0.01; {n['skipped']} calls not sent" in out
    )
    assert f"LLM agent: {len(client.calls)} calls, {n['accepted']} accepted, 0 cached" in out


def test_spend_no_cap_binds_is_written_behind_and_at_exit(tmp_path, monkeypatch):
    import gc

    from synthesis.llm import budget as budget_module

    monkeypatch.setattr(budget_module, "SYNC_S", 3600.0)  # no timed write in this test
    path = tmp_path / "build.json"
    budget = Budget(path=path)
    budget.reserve("agent", 10, 0.5)  # the first call reads the account: written with it
    budget.settle(budget.reserve("agent", 5, 0.25), 2, 0.125)
    assert Budget(path=path).spent() == (10, 0.5)  # the rest is still the process's
    assert budget.spent("agent") == (12, 0.625)  # asking writes it
    assert Budget(path=path).spent() == (12, 0.625)
    budget.reserve("topic", 3, 0.0)
    del budget
    gc.collect()  # the process's last spend is written when it ends
    assert Budget(path=path).spent() == (15, 0.625)
    assert Budget(path=path).spent("topic") == (3, 0.0)


def test_a_capped_stage_writes_each_reservation_at_once(tmp_path, monkeypatch):
    from synthesis.llm import budget as budget_module

    monkeypatch.setattr(budget_module, "SYNC_S", 3600.0)
    path = tmp_path / "build.json"
    budget = Budget(stages={"agent": Caps(tokens=100)}, path=path)
    budget.reserve("topic", 1, 0.0)
    budget.reserve("topic", 1, 0.0)  # uncapped: held in the process
    budget.reserve("agent", 40, 0.0)  # capped: written now, with what the process held
    assert Budget(path=path).spent("agent") == (40, 0.0)
    assert Budget(path=path).spent() == (42, 0.0)
    with pytest.raises(BudgetExhausted):
        Budget(stages={"agent": Caps(tokens=100)}, path=path).reserve("agent", 61, 0.0)
    budget.reserve("topic", 1, 0.0)  # held in the process
    with pytest.raises(BudgetExhausted):
        budget.reserve("agent", 61, 0.0)  # refused: nothing written, the held spend kept
    assert budget.spent() == (43, 0.0)
