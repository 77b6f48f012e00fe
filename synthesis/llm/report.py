"""What the LLM stages of one build did, in words: per stage calls, outcomes, tokens and
cost, and for a stage that stopped (budget, deadline, open breaker) which cap stopped it.

Read from ledger rows (the warehouse's `llm_calls` of one build, or the rows the
`warehouse` asset writes), so the terminal summary and the UI's metadata say the same.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

Row = Mapping[str, Any]

# Heads of the reasons synthesis.llm.budget / client / breaker give a skipped call.
_BUDGET = re.compile(
    r"budget_exhausted: (?:build|stage (?P<stage>\S+)) (?P<unit>token|cost) cap "
    r"\$?(?P<cap>[0-9.eE+-]+)"
)
_DEADLINE = re.compile(r"deadline: the LLM stages used their (?P<cap>[0-9.eE+-]+)s")
_BREAKER = re.compile(
    r"circuit_open: stage \S+ stopped after (?P<n>\d+) consecutive failed requests"
)
_RATE = re.compile(
    r"circuit_open: stage \S+ stopped at a failure rate of (?P<rate>\d+%): "
    r"(?P<failed>\d+) of its last (?P<n>\d+) requests failed, over the (?P<limit>\d+%) limit"
)
_ENDPOINT = re.compile(r"circuit_open: the endpoint left (?P<n>\d+) requests in a row unanswered")


@dataclass(frozen=True)
class StageSpend:
    stage: str
    calls: int
    accepted: int
    cached: int
    rejected: int
    failed: int
    skipped: int
    tokens: int
    cost_usd: float

    def line(self) -> str:
        return (
            f"LLM {self.stage}: {self.calls} calls, {self.accepted} accepted, "
            f"{self.cached} cached, {self.rejected} rejected, {self.failed} failed, "
            f"{self.skipped} skipped; {self.tokens} tokens, ${self.cost_usd:.4f}"
        )


def _tokens(rows: Iterable[Row]) -> int:
    return sum(int(r.get("tokens_in") or 0) + int(r.get("tokens_out") or 0) for r in rows)


def _cost(rows: Iterable[Row]) -> float:
    return sum(float(r.get("cost_usd") or 0.0) for r in rows)


def stage_spend(rows: list[Row]) -> list[StageSpend]:
    """One total per stage, in stage-name order."""
    out = []
    for stage in sorted({r["stage"] for r in rows}):
        mine = [r for r in rows if r["stage"] == stage]

        def count(*statuses: str, mine=mine) -> int:
            return sum(r["status"] in statuses for r in mine)

        out.append(
            StageSpend(
                stage=stage,
                calls=len(mine),
                accepted=count("accepted"),
                cached=count("cached"),
                rejected=count("rejected"),
                failed=count("retried", "failed"),
                skipped=count("skipped"),
                tokens=_tokens(mine),
                cost_usd=_cost(mine),
            )
        )
    return out


def stop_line(stage: str, reason: str, rows: list[Row], n_skipped: int) -> str:
    """Why `stage` stopped, naming the setting that stopped it; `rows` are the build's."""
    not_sent = f"{n_skipped} call{'s' if n_skipped != 1 else ''} not sent"
    budget = _BUDGET.match(reason)
    if budget:
        scope = budget["stage"]
        counted = [r for r in rows if scope is None or r["stage"] == scope]
        var = "ENVFOUNDRY_BUDGET_USD" if budget["unit"] == "cost" else "ENVFOUNDRY_BUDGET_TOKENS"
        var += f"__{scope.upper()}" if scope else ""
        cap = float(budget["cap"])
        spent = (
            f"${_cost(counted):.4f} of ${cap:g}"
            if budget["unit"] == "cost"
            else f"{_tokens(counted)} of {cap:g} tokens"
        )
        return f"LLM: {stage} stopped at the budget cap ({var}={cap:g}): spent {spent}; {not_sent}"
    deadline = _DEADLINE.match(reason)
    if deadline:
        return (
            f"LLM: {stage} stopped at the deadline "
            f"(ENVFOUNDRY_LLM_DEADLINE_S={float(deadline['cap']):g}); {not_sent}"
        )
    breaker = _BREAKER.match(reason)
    if breaker:
        return (
            f"LLM: {stage} stopped by its circuit breaker after {breaker['n']} failed requests "
            f"in a row (ENVFOUNDRY_LLM_BREAKER_FAILURES); {not_sent}: {reason}"
        )
    rate = _RATE.match(reason)
    if rate:
        return (
            f"LLM: {stage} stopped by its failure-rate breaker: {rate['failed']} of its last "
            f"{rate['n']} requests failed ({rate['rate']}, over {rate['limit']}); "
            f"{not_sent}: {reason}"
        )
    endpoint = _ENDPOINT.match(reason)
    if endpoint:
        return (
            f"LLM: {stage} stopped: the endpoint left {endpoint['n']} requests in a row "
            f"unanswered, so every stage stopped; {not_sent}: {reason}"
        )
    return f"LLM: {stage} stopped: {reason}; {not_sent}"


def stop_lines(rows: list[Row]) -> list[str]:
    """One line per stage with skipped calls: the first reason it was stopped for."""
    lines = []
    for stage in sorted({r["stage"] for r in rows if r["status"] == "skipped"}):
        skipped = sorted(
            (r for r in rows if r["stage"] == stage and r["status"] == "skipped"),
            key=lambda r: (str(r.get("created_at") or ""), str(r.get("call_id") or "")),
        )
        lines.append(stop_line(stage, skipped[0].get("reason") or "?", rows, len(skipped)))
    return lines


def summary_lines(rows: Iterable[Row]) -> list[str]:
    """Per-stage spend lines, then the stop lines; nothing when no stage called (offline)."""
    rows = list(rows)
    if not rows:
        return []
    total = f"LLM total: {len(rows)} calls, {_tokens(rows)} tokens, ${_cost(rows):.4f}"
    return [*(s.line() for s in stage_spend(rows)), total, *stop_lines(rows)]
