"""The LLM ledger: one row per attempt (accepted, cached, rejected, retried, failed, skipped),
and one per hedge (`hedged`: the same request sent again beside a slow attempt, see
synthesis.llm.hedging), so the rows count every request the endpoint was sent.

Rows carry wall-clock fields (created_at, latency), so they live in the warehouse's
append-only `llm_calls` table and never in a hashed or pinned artifact: each asset run
appends its rows to the ledger spool (synthesis/llm/spool.py), which the `warehouse` asset
reads.
"""

from __future__ import annotations

import threading
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal

from synthesis.hashing import short_id

Status = Literal["accepted", "cached", "rejected", "retried", "failed", "skipped", "hedged"]
STATUSES: tuple[str, ...] = (
    "accepted",
    "cached",
    "rejected",
    "retried",
    "failed",
    "skipped",
    "hedged",
)


@dataclass
class LLMCall:
    """One attempt at one request: what it cost, how long it took and how it ended."""

    call_id: str
    build_id: str
    stage: str
    artifact_id: str | None
    model: str
    attempt: int
    status: Status
    reason: str | None
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_ms: float
    cache_hit: bool
    request_sha256: str
    created_at: str  # UTC, ISO 8601

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Ledger:
    """A thread-safe list of attempts of one run of a build (concurrent calls record into one).

    `run_id` names the run: two runs of one asset and partition in one build (a re-executed
    run keeps its build tag) may send the same requests, and their rows must stay apart."""

    build_id: str = ""
    run_id: str = ""
    calls: list[LLMCall] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _seen: dict[tuple[str, str, str | None], int] = field(default_factory=dict, repr=False)

    def record(
        self,
        *,
        stage: str,
        artifact_id: str | None,
        model: str,
        request_sha256: str,
        attempt: int,
        status: Status,
        reason: str | None = None,
        tokens_in: int = 0,
        tokens_out: int = 0,
        cost_usd: float = 0.0,
        latency_ms: float = 0.0,
    ) -> LLMCall:
        with self._lock:
            # The same request may be asked twice in a build (a rejected answer, asked again):
            # counting occurrences keeps call ids unique without depending on thread order.
            key = (request_sha256, stage, artifact_id)
            occurrence = self._seen.get(key, 0)
            if attempt == 0:
                occurrence += 1
                self._seen[key] = occurrence
            call = LLMCall(
                call_id=short_id(
                    "llm",
                    self.build_id,
                    self.run_id,
                    request_sha256,
                    stage,
                    artifact_id,
                    occurrence,
                    attempt,
                    # A hedge is a second send of the same attempt: a row of its own.
                    *(("hedge",) if status == "hedged" else ()),
                ),
                build_id=self.build_id,
                stage=stage,
                artifact_id=artifact_id,
                model=model,
                attempt=attempt,
                status=status,
                reason=reason,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost_usd=cost_usd,
                latency_ms=round(latency_ms, 3),
                cache_hit=status == "cached",
                request_sha256=request_sha256,
                created_at=datetime.now(UTC).isoformat(),
            )
            self.calls.append(call)
        return call

    def rows(self) -> list[dict[str, Any]]:
        """The attempts as plain rows, in call-id order (stable for a given set of calls)."""
        with self._lock:
            return sorted((c.to_json() for c in self.calls), key=lambda c: c["call_id"])
