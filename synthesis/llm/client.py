"""The LLM client: the one way every stage talks to an OpenAI-compatible endpoint.

`chat` blocks (threads share one semaphore); `achat` is its asyncio twin for many calls in
one event loop (the agent episodes). Both drive one sequence of steps (`LLMClient._steps`),
so every rule below is written once.

A call goes: cache (accepted answers only, and only while the caller's `accept` still
takes them) → deadline and circuit breakers (the stage's, and the build's after requests
left unanswered) → budget reservation → a concurrency slot → the request
(`max_tokens` always set; synthesis.llm.transport never retries) → retries with backoff on
transient failures → the answer screened (finish_reason, empty, oversized) and by the
caller's own `accept` → cached only when accepted. Every attempt, whatever its end, is a
row in the ledger.

A request's timeout follows the endpoint (synthesis.llm.timeouts): a multiple of the
stage's recent answer latencies in the build (kept beside the budget account, shared by the
build's runs; until the stage has enough, every stage's), the configured timeout its
ceiling. A request that times out under that shorter timeout hung: it is retried at once
(no backoff; its first retry gets the same time, each later one twice the time before, the
last retry the whole configured timeout),
and it does not count toward the build-wide breaker, which stops every stage after requests
that each cost a full configured timeout.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections.abc import Callable, Generator
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
from synthesis.llm.hedging import Hedge, HedgingSender
from synthesis.llm.ledger import Ledger, LLMCall
from synthesis.llm.retry import Backoff
from synthesis.llm.timeouts import (
    FIRST_RETRY_GROWTH,
    TIMEOUT_GROWTH,
    AdaptiveTimeout,
    shared_path,
)
from synthesis.llm.transport import (
    AsyncTransport,
    Patience,
    RawAnswer,
    Transport,
    TransportFailure,
)

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

# Requests in flight per connection pool of the async transport. The async HTTP stack checks
# every idle connection of its pool (a socket poll each) whenever it assigns a request, so one
# pool of 64 connections spends more CPU per request on that scan than on the request itself
# (profiled: ~70 checks per request); pools of 8 keep it small.
REQUESTS_PER_POOL = 8

# A stage's own check of an answer: the reason it cannot be used, or None to accept it.
Accept = Callable[[dict[str, Any]], str | None]
# What an agent's turn says when the client refused the model's answer (the rollout records
# it as the agent's final message; the simulated user reads it to end the episode).
REJECTED_PREFIX = "[model output rejected:"


@dataclass(frozen=True)
class _Send:
    """A step of a call: send `request`, allowing it `timeout_s` (or less, as `patience`
    says while it waits: see synthesis.llm.transport)."""

    request: dict[str, Any]
    timeout_s: float
    patience: Patience | None = None
    # Unanswered this long, the request is sent again beside itself and the first answer
    # taken (synthesis.llm.timeouts.HEDGE_MULTIPLE); None: never.
    hedge_after_s: float | None = None
    # Filled by the sender: the hedge sent for this step, if one was (a ledger row of its own).
    hedges: list[Hedge] = field(default_factory=list)


@dataclass(frozen=True)
class _Sleep:
    """A step of a call: wait before the next attempt (backoff)."""

    seconds: float


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
        # The answer latencies per stage, and the timeouts they give: the build's (every
        # run's client of the build reads and appends to one file beside the budget
        # account), or this client's own without an account file.
        account = self.budget.path
        self.timeouts = AdaptiveTimeout(
            self.settings.timeout_s, path=None if account is None else shared_path(account)
        )
        self.backoff = Backoff(
            self.settings.backoff_s, self.settings.backoff_max_s, self.settings.retry_seed
        )
        self.transport = Transport(self.settings.base_url, self.settings.api_key)
        self.async_transport = AsyncTransport(
            self.settings.base_url,
            self.settings.api_key,
            pools=math.ceil(self.settings.concurrency / REQUESTS_PER_POOL),
        )
        # At most `concurrency` requests in flight, however many threads ask; `achat` has
        # the same bound per event loop (an asyncio semaphore cannot be shared by loops).
        self._slots = threading.BoundedSemaphore(self.settings.concurrency)
        # Hedged requests run their two sends here (each within the caller's slot).
        self._hedging = HedgingSender(self.transport)
        self._loop_slots: dict[asyncio.AbstractEventLoop, asyncio.Semaphore] = {}
        self._loops_lock = threading.Lock()

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
        budget, deadline, breaker) or LLMError (no answer after the retries).

        Blocking; safe from many threads at once (the assets' thread pools)."""
        steps = self._steps(
            messages, stage, artifact_id, tools, temperature, seed, response_format, accept
        )
        outcome: RawAnswer | TransportFailure | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration as done:
                return done.value
            try:
                outcome = self._run_sync(step)
            except BaseException:  # interrupted mid-request: the attempt is still a row
                steps.close()
                raise

    async def achat(
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
        """`chat` for asyncio: the same cache, breaker, budget, ledger and screening (one
        shared sequence of steps), the request and the backoff awaited instead of blocking.

        The steps between requests (cache, budget account, ledger, the stage's `accept`) run
        on the loop: they take a fraction of a millisecond (the budget account is rewritten in
        place), and handing them to a thread cost more CPU than it saved (measured). At most
        `settings.concurrency` requests of one event loop are in flight. A cancelled call
        records its attempt as failed and keeps its worst case reserved (the server may have
        billed it)."""
        steps = self._steps(
            messages, stage, artifact_id, tools, temperature, seed, response_format, accept
        )
        outcome: RawAnswer | TransportFailure | None = None
        while True:
            try:
                step = steps.send(outcome)
            except StopIteration as done:
                return done.value
            try:
                outcome = await self._run_async(step)
            except BaseException:  # cancelled mid-request: the attempt is still a row
                steps.close()
                raise

    async def aclose(self) -> None:
        """Release the calling event loop's connections (call before its loop ends)."""
        await self.async_transport.aclose()

    def _run_sync(self, step: _Send | _Sleep) -> RawAnswer | TransportFailure | None:
        if isinstance(step, _Sleep):
            self.sleep(step.seconds)
            return None
        try:
            with self._slots:
                if step.hedge_after_s is not None:
                    return self._hedging.send(
                        step.request, step.timeout_s, step.hedge_after_s, step.hedges.append
                    )
                return self.transport.send(
                    step.request, timeout_s=step.timeout_s, patience=step.patience
                )
        except TransportFailure as failure:
            return failure

    async def _run_async(self, step: _Send | _Sleep) -> RawAnswer | TransportFailure | None:
        if isinstance(step, _Sleep):
            await asyncio.sleep(step.seconds)
            return None
        try:
            async with self._async_slots():
                return await self.async_transport.send(
                    step.request, timeout_s=step.timeout_s, patience=step.patience
                )
        except TransportFailure as failure:
            return failure

    def _async_slots(self) -> asyncio.Semaphore:
        """The running loop's semaphore: an asyncio one only works in the loop it serves."""
        loop = asyncio.get_running_loop()
        with self._loops_lock:
            for closed in [other for other in self._loop_slots if other.is_closed()]:
                del self._loop_slots[closed]
            if loop not in self._loop_slots:
                self._loop_slots[loop] = asyncio.Semaphore(self.settings.concurrency)
            return self._loop_slots[loop]

    def _steps(
        self,
        messages: list[dict[str, Any]],
        stage: str,
        artifact_id: str | None,
        tools: list[dict[str, Any]] | None,
        temperature: float,
        seed: int,
        response_format: dict[str, Any] | None,
        accept: Accept | None,
    ) -> Generator[_Send | _Sleep, RawAnswer | TransportFailure | None, ChatAnswer]:
        """One call as a sequence of steps, whatever runs them: it yields a `_Send` (and is
        sent back the RawAnswer or TransportFailure) or a `_Sleep` (sent back None), and
        returns the accepted answer or raises. Every decision (cache, breaker, deadline,
        budget, retries, screening, ledger rows) is made here, once for `chat` and `achat`."""
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
        # After a request cut by the adaptive timeout: the time its retry gets, at least.
        grown = 0.0
        for attempt in range(settings.retries + 1):
            try:
                # Past the deadline, that is the reason, whatever else stopped the stage:
                # requests sent together (a stage's whole batch) may all time out at the
                # deadline and open the stage's breaker at once.
                remaining = self._time_left()
                self.breaker.check(stage)
                self._check_endpoint()
                reservation = self.budget.reserve(stage, worst_tokens, worst_usd)
            except StageStopped as exc:
                record(attempt, "skipped", reason=exc.reason)
                raise fail(exc) from None
            timeout_s, patience = self._timeout(
                stage, limits.max_tokens, grown, attempt == settings.retries
            )
            timeout_s = min(timeout_s, remaining)
            hedge = None if patience is not None else self.timeouts.hedge_after_s(stage, timeout_s)
            started = time.perf_counter()
            send = _Send(request, timeout_s, patience, hedge)
            try:
                outcome = yield send
            except GeneratorExit:
                # The caller stopped waiting (cancelled, interrupted): the request may have
                # been answered and billed, so its worst case stays reserved.
                record(
                    attempt,
                    "failed",
                    reason="cancelled: the caller stopped waiting for the answer",
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
                raise
            for sent_again in send.hedges:  # before the attempt's own row, which ends the call
                record(attempt, "hedged", reason=sent_again.reason)
            if isinstance(outcome, TransportFailure):
                failure = outcome
                reason, given = failure.reason, failure.timeout_s
                # Timed out under the adaptive timeout, shorter than the configured one and
                # than the deadline's rest: the request hung while its stage's answers came
                # quickly.
                cut = given is not None and given < min(settings.timeout_s, remaining)
                if cut:
                    reason += (
                        f" (adaptive timeout; ENVFOUNDRY_LLM_TIMEOUT_S={settings.timeout_s:g} "
                        "is its ceiling)"
                    )
                self.budget.settle(reservation, 0, 0.0)
                self.breaker.failed(stage, reason, streak=not cut)
                # A cut request cost a short wait, not a full timeout: the build-wide breaker
                # (requests that each cost the configured timeout) does not count it.
                if not cut and reason.startswith(UNANSWERED):
                    self.budget.unanswered(reason)
                elif not cut:
                    self.budget.answered()
                again = failure.retryable and attempt < settings.retries
                record(
                    attempt,
                    "retried" if again else "failed",
                    reason=reason,
                    latency_ms=(time.perf_counter() - started) * 1000,
                )
                if not again:
                    raise fail(LLMError(f"{settings.base_url}: {reason}")) from None
                if cut and given is not None:
                    # Retried at once: waiting helps an overloaded server (429, 5xx), not a
                    # request that was lost; the retry gets more time in case it was slow.
                    growth = TIMEOUT_GROWTH if attempt else FIRST_RETRY_GROWTH
                    grown = min(settings.timeout_s, given * growth)
                    continue
                yield _Sleep(min(self.backoff.delay(attempt), max(0.0, self._remaining_s())))
                continue
            raw = outcome
            latency_ms = (time.perf_counter() - started) * 1000
            tokens_in, tokens_out = _usage(raw, prompt_tokens)
            cost = limits.cost_usd(tokens_in, tokens_out)
            self.budget.settle(reservation, tokens_in + tokens_out, cost)
            self.breaker.succeeded(stage)
            self.budget.answered()
            self.timeouts.observe(stage, raw.elapsed_s, limits.max_tokens)
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

    def _timeout(
        self, stage: str, max_tokens: int, grown: float, last: bool
    ) -> tuple[float, Patience | None]:
        """A request's timeout now, and its `patience`: the stage's adaptive timeout (until
        it has seen enough answers, the one every stage's answers give a request allowed
        `max_tokens`, or the configured one), at least `grown`.

        A request sent before the stage's timeout adapted is given that, and `patience` to
        cut it short once answers arriving meanwhile adapt it (a hung first request need
        not wait the whole ceiling while others answer). The last retry after a request cut
        short gets the whole configured timeout: an answer that was merely slow may be
        delayed by the adaptive timeout, never lost to it."""
        timeouts = self.timeouts
        if grown and last:
            return self.settings.timeout_s, None
        timeout_s = max(timeouts.timeout_s(stage, max_tokens), grown)
        if grown or timeouts.adapted(stage):
            return timeout_s, None
        return timeout_s, lambda: timeouts.timeout_s(stage, max_tokens)

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
