"""The LLM lines of the build summary and of the warehouse asset's metadata: per stage
spend, and which stage stopped, at which setting, and why."""

from __future__ import annotations

import io

from rich.console import Console

from assets.warehouse import llm_spend_metadata
from orchestration.build import BuildOutcome
from orchestration.summary import print_summary
from synthesis.export import warehouse as wh
from synthesis.llm.report import summary_lines


def _row(stage, status, at, reason=None, tokens=(0, 0), cost=0.0, build="b1"):
    return {
        "call_id": f"{stage}-{at}",
        "build_id": build,
        "stage": stage,
        "artifact_id": "x",
        "model": "m",
        "status": status,
        "reason": reason,
        "tokens_in": tokens[0],
        "tokens_out": tokens[1],
        "cost_usd": cost,
        "created_at": f"2026-12-01T00:00:{at:02d}+00:00",
    }


DEADLINE = "deadline: the LLM stages used their 30s (ENVFOUNDRY_LLM_DEADLINE_S)"
BREAKER = (
    "circuit_open: stage task_text stopped after 5 consecutive failed requests (last: timeout)"
)


def test_each_stage_says_what_it_spent_and_a_stopped_one_why():
    rows = [
        _row("agent", "accepted", 1, tokens=(40, 10), cost=0.002),
        _row("agent", "skipped", 3, "budget_exhausted: stage agent token cap 70 reached (..)"),
        _row("agent", "skipped", 2, DEADLINE),  # earlier: this one stopped the stage
        _row("task_text", "retried", 1, "timeout: no answer in 60s"),
        _row("task_text", "skipped", 4, BREAKER),
        _row("env_code", "rejected", 1, "schema: missing 'code'", tokens=(5, 5), cost=0.001),
    ]
    assert summary_lines(rows) == [
        "LLM agent: 3 calls, 1 accepted, 0 cached, 0 rejected, 0 failed, 2 skipped; "
        "50 tokens, $0.0020",
        "LLM env_code: 1 calls, 0 accepted, 0 cached, 1 rejected, 0 failed, 0 skipped; "
        "10 tokens, $0.0010",
        "LLM task_text: 2 calls, 0 accepted, 0 cached, 0 rejected, 1 failed, 1 skipped; "
        "0 tokens, $0.0000",
        "LLM total: 6 calls, 60 tokens, $0.0030",
        "LLM: agent stopped at the deadline (ENVFOUNDRY_LLM_DEADLINE_S=30); 2 calls not sent",
        "LLM: task_text stopped by its circuit breaker after 5 failed requests in a row "
        f"(ENVFOUNDRY_LLM_BREAKER_FAILURES); 1 call not sent: {BREAKER}",
    ]


def test_a_stage_cap_names_the_stage_override_and_counts_the_stage_only():
    rows = [
        _row("agent", "accepted", 1, tokens=(40, 20)),
        _row("topic", "accepted", 1, tokens=(500, 500)),
        _row("agent", "skipped", 2, "budget_exhausted: stage agent token cap 70 reached (..)"),
    ]
    assert summary_lines(rows)[-1] == (
        "LLM: agent stopped at the budget cap (ENVFOUNDRY_BUDGET_TOKENS__AGENT=70): "
        "spent 60 of 70 tokens; 1 call not sent"
    )


def test_a_build_wide_stop_names_the_unanswered_endpoint():
    reason = (
        "circuit_open: the endpoint left 2 requests in a row unanswered across the build "
        "(last: timeout: no answer within 60.0s)"
    )
    assert summary_lines([_row("agent", "skipped", 1, reason)])[-1] == (
        "LLM: agent stopped: the endpoint left 2 requests in a row "
        f"unanswered, so every stage stopped; 1 call not sent: {reason}"
    )


def _summary(home, build_id):
    screen = io.StringIO()
    outcome = BuildOutcome(build_id=build_id)
    print_summary(Console(file=screen, width=300, soft_wrap=True), home, outcome, 1.0)
    return screen.getvalue()


def test_the_summary_reads_this_builds_rows_and_says_nothing_offline(tmp_path):
    home = tmp_path / "home"
    path = wh.warehouse_path(home)
    wh.ensure_tables(path)  # an offline build: an empty ledger
    assert "LLM" not in _summary(home, "b1")
    old = _row("agent", "skipped", 1, DEADLINE, build="b0")
    wh.write_tables(path, {"llm_calls": wh.llm_call_rows([old, _row("agent", "accepted", 2)])})
    out = _summary(home, "b1")
    assert "LLM agent: 1 calls, 1 accepted" in out
    assert "stopped" not in out  # b0's stop is an earlier build's
    assert "LLM: agent stopped at the deadline" in _summary(home, "b0")


def test_the_warehouse_asset_carries_the_same_lines_as_metadata():
    assert llm_spend_metadata(wh.llm_call_rows([])) == {}
    rows = wh.llm_call_rows([_row("agent", "accepted", 1), _row("agent", "skipped", 2, DEADLINE)])
    metadata = llm_spend_metadata(rows)
    assert metadata["llm_stopped"].value == (
        "LLM: agent stopped at the deadline (ENVFOUNDRY_LLM_DEADLINE_S=30); 1 call not sent"
    )
    assert metadata["llm_spend"].value.splitlines()[0].startswith("- LLM agent: 2 calls")
