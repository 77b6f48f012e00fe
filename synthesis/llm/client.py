"""The LLM client: the one way every stage talks to an OpenAI-compatible endpoint.

A call goes: cache (accepted answers only, and only while the caller's `accept` still
takes them) → circuit breakers (the stage's, and the build's after requests left
unanswered) and deadline → budget reservation → a concurrency slot → the request
(`max_tokens` always set, the SDK's retries off) → retries with backoff on
transient failures → the answer screened (finish_reason, empty, oversized) and by the
caller's own `accept` → cached only when accepted. Every attempt, whatever its end, is a
row in the ledger.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.config import LLMSettings
from synthesis.hashing import content_hash
from synthesis.llm.answers import unusable
from synthesis.llm.breaker import CircuitBreaker
from synthesis.llm.budget import Budget, Caps, estimate_prompt_tokens
from synthesis.llm.cache import AnswerCache
from synthesis.llm.errors import (
    BudgetExhausted,
    CircuitOpen,
    DeadlineExceeded,
    LLMError,
    LLMRejected,
    StageStopped,
)
from synthesis.llm.ledger import Ledger, LLMCall
from synthesis.llm.retry import Backoff
from synthesis.llm.transport import RawAnswer, Transport, TransportFailure

__all__ = [
    "BudgetExhausted",
    "ChatAnswer",
    "CircuitOpen",
    "DeadlineExceeded",
    "LLMCall",
    "LLMClient",
    "LLMError",
    "LLMRejected",
    "StageStopped",
    "budget_for",
]

# Failures where the endpoint never answered (synthesis.llm.transport): only these count
# toward the build-wide breaker; an error status is an answer, the endpoint is up.
UNANSWERED = ("timeout:", "connection:")
# Requests left unanswered in a row, across the build, that stop every stage: a first
# request and its retry. Each cost a full timeout (60 s by default); more would let a hanging
# endpoint cost minutes per stage (a stage's own breaker counts ENVFOUNDRY_LLM_BREAKER_FAILURES).
UNANSWERED_TO_OPEN = 2
# A stage's own check of an answer: the reason it cannot be used, or None to accept it.
Accept = Callable[[dict[str, Any]], str | None]


@dataclass
class ChatAnswer:
    message: dict[str, Any]  # the assistant message: content and/or tool_calls
    attempts: list[LLMCall]  # every ledger row of this call, the accepted one last

    @property
    def call(self) -> LLMCall:
        return self.attempts[-1]

    @property
    def tokens_in(self) -> int:
        return sum(c.tokens_in for c in self.attempts)

    @property
    def tokens_out(self) -> int:
        return sum(c.tokens_out for c in self.attempts)

    @property
    def cost_usd(self) -> float:
        return sum(c.cost_usd for c in self.attempts)


def budget_for(settings: LLMSettings, path: Path | None = None) -> Budget:
    """The build's budget from its settings (`path`: shared by the build's processes)."""
    stages = {}
    for stage in settings.stage_overrides:
        limits = settings.for_stage(stage)
        stages[stage] = Caps(usd=limits.budget_usd, tokens=limits.budget_tokens)
    return Budget(
        build=Caps(usd=settings.budget_usd, tokens=settings.budget_tokens),
        stages=stages,
        path=path,
    )


@dataclass
class LLMClient:
    settings: LLMSettings
    cache_dir: Path | None = None
    build_id: str = ""
    budget: Budget | None = None
    run_id: str = ""  # the asset run this client serves (part of every call id)
    sleep: Callable[[float], None] = time.sleep
    ledger: Ledger = field(init=False)

    def __post_init__(self) -> None:
        self.ledger = Ledger(self.build_id, self.run_id)
        self.cache = AnswerCache(self.cache_dir)
        if self.budget is None:
            self.budget = budget_for(self.settings)
        self.breaker = CircuitBreaker(self.settings.breaker_failures)
        self.backoff = Backoff(
            self.settings.backoff_s, self.settings.backoff_max_s, self.settings.retry_seed
        )
        self.transport = Transport(self.settings.base_url, self.settings.api_key)
        # At most `concurrency` requests in flight, however many threads ask.
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)

    @property
    def calls(self) -> list[LLMCall]:
        return self.ledger.calls

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        stage: str,
        artifact_id: str | None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
        response_format: dict[str, Any] | None = None,
        accept: Accept | None = None,
    ) -> ChatAnswer:
        """The accepted answer, or LLMRejected (answered, unusable), StageStopped (not sent:
        budget, deadline, breaker) or LLMError (no answer after the retries)."""
        settings = self.settings
        limits = settings.for_stage(stage)
        request: dict[str, Any] = {
            "model": settings.model,
            "messages": messages,
            "temperature": temperature,
            "seed": seed,
            "max_tokens": limits.max_tokens,
        }
        if tools:
            request["tools"] = tools
        if response_format is not None:
            request["response_format"] = response_format
        digest = content_hash({"base_url": settings.base_url, **request})
        attempts: list[LLMCall] = []

        def record(attempt: int, status: str, **fields: Any) -> LLMCall:
            call = self.ledger.record(
                stage=stage,
                artifact_id=artifact_id,
                model=settings.model,
                request_sha256=digest,
                attempt=attempt,
                status=status,  # type: ignore[arg-type]
                **fields,
            )
            attempts.append(call)
            return call

        def fail(exc: LLMError) -> LLMError:
            exc.attempts = attempts
            return exc

        cached = self.cache.get(digest)
        # A cached answer passes the stage's check again: one a stricter check now refuses
        # (the stage's rules changed since it was cached) is asked again, never served.
        if cached is not None and (accept is None or accept(cached["message"]) is None):
            record(0, "cached")
            return ChatAnswer(cached["message"], attempts)

        prompt_tokens = estimate_prompt_tokens(
            {k: request[k] for k in ("messages", "tools", "response_format") if k in request}
        )
        worst_tokens = prompt_tokens + limits.max_tokens
        worst_usd = limits.cost_usd(prompt_tokens, limits.max_tokens)
        for attempt in range(settings.retries + 1):
            try:
                self.breaker.check(stage)
                remaining = self._time_left()  # past the deadline, that is the reason
                self._check_endpoint()
                reservation = self.budget.reserve(stage, worst_tokens, worst_usd)
            except StageStopped as exc:
                record(attempt, "skipped", reason=exc.reason)
                raise fail(exc) from None
            started = time.perf_counter()
            try:
                with self._slots:
                    raw = self.transport.send(request, timeout_s=min(settings.timeout_s, remaining))
            except TransportFailure as failure:
                self.budget.settle(reservation, 0, 0.0)
                self.breaker.failed(stage, failure.reason)
                if failure.reason.startswith(UNANSWERED):
                    self.budget.unanswered(failure.reason)
                else:
                    self.budget.answered()
                again = failure.retryable and attempt < settings.retries
                record(
                    attempt,
                    "retried" if again else "failed",
                    reason=failure.reason,
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
                if not again:
                    raise fail(LLMError(f"{settings.base_url}: {failure.reason}")) from None
                self.sleep(min(self.backoff.delay(attempt), max(0.0, self._remaining_s())))
                continue
            latency_ms = (time.perf_counter() - started) * 1000
            tokens_in, tokens_out = _usage(raw, prompt_tokens)
            cost = limits.cost_usd(tokens_in, tokens_out)
            self.budget.settle(reservation, tokens_in + tokens_out, cost)
            self.breaker.succeeded(stage)
            self.budget.answered()
            reason = unusable(raw, settings.max_answer_chars)
            if reason is None and accept is not None:
                reason = accept(raw.message)
            status = "rejected" if reason else "accepted"
            record(
                attempt,
                status,
                reason=reason,
                tokens_in=tokens_in,
                tokens_out=tokens_out,
                cost_usd=cost,
                latency_ms=latency_ms,
            )
            if reason is not None:
                raise fail(LLMRejected(reason, raw.message))
            self.cache.put(digest, raw.message, tokens_in, tokens_out)
            return ChatAnswer(raw.message, attempts)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _check_endpoint(self) -> None:
        """CircuitOpen when the build's last UNANSWERED_TO_OPEN requests, of any stage and any
        process, went unanswered: a hanging endpoint then costs the build one or two rounds
        of timeouts, not rounds per stage and per environment run (each has its own breakers)."""
        run, last = self.budget.unanswered_run()
        if run >= UNANSWERED_TO_OPEN:
            raise CircuitOpen(
                f"circuit_open: the endpoint left {run} requests in a row unanswered across "
                f"the build (last: {last})"
            )

    def _remaining_s(self) -> float:
        return self.settings.deadline_s - self.budget.elapsed_s()

    def _time_left(self) -> float:
        """Seconds left of the build's LLM deadline, or DeadlineExceeded when none are."""
        remaining = self._remaining_s()
        if remaining <= 0:
            raise DeadlineExceeded(
                f"deadline: the LLM stages used their {self.settings.deadline_s:g}s "
                "(ENVFOUNDRY_LLM_DEADLINE_S)"
            )
        return remaining


def _usage(raw: RawAnswer, prompt_tokens: int) -> tuple[int, int]:
    """Tokens as the server counted them; estimated when it reports none, so budgets still
    bind against servers that leave `usage` out."""
    if raw.tokens_in or raw.tokens_out:
        return raw.tokens_in, raw.tokens_out
    answer = (raw.message.get("content") or "") + str(raw.message.get("tool_calls") or "")
    return prompt_tokens, estimate_prompt_tokens(answer)
