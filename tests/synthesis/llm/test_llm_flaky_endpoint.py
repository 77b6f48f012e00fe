# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""A flaky endpoint costs little: a request's timeout follows the endpoint's observed latency
(the configured timeout stays the ceiling), a request that hung is retried at once, and a
stage whose requests fail at a high rate stops early with the rate as its reason.

The timing constants are shrunk (a floor of tenths of a second, a few answers to adapt) so
hung requests cost the tests little; what is asserted is behaviour: attempts, the timeouts
the ledger recorded, no backoff, the stop reason.
"""

from __future__ import annotations

import asyncio
import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from synthesis.llm.breaker import CircuitBreaker
from synthesis.llm.client import CircuitOpen, LLMClient
from synthesis.llm.report import stop_lines
from synthesis.llm.timeouts import MULTIPLE, AdaptiveTimeout
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Fault,
    final_answer,
    hang,
    http_error,
    periodic,
)
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture

CEILING_S = 30.0  # the configured timeout: what each hung request cost before
FLOOR_S = 0.3
SAMPLES = 8


def _adaptive(client: LLMClient, **fields) -> LLMClient:
    """The client with small timing constants: adapts after SAMPLES answers, floor FLOOR_S."""
    fields = {"min_samples": SAMPLES, "floor_s": FLOOR_S, **fields}
    client.timeouts = AdaptiveTimeout(client.settings.timeout_s, **fields)
    return client


class _CountedBackoff:
    """Stands in for the client's backoff: counts the delays asked for (none for a hang)."""

    def __init__(self) -> None:
        self.asked: list[int] = []

    def delay(self, retry: int) -> float:
        self.asked.append(retry)
        return 0.0


def _question(i: int) -> list[dict]:
    return [{"role": "user", "content": f"question {i}"}]


def _given_s(reason: str) -> float:
    return float(re.match(r"timeout: no answer within ([0-9.]+)s", reason)[1])


def _run_sync(client: LLMClient, n: int) -> list[str]:
    with ThreadPoolExecutor(max_workers=client.settings.concurrency) as pool:
        answers = pool.map(
            lambda i: client.chat(_question(i), stage="agent", artifact_id=f"a{i}"), range(n)
        )
        return [a.message["content"] for a in answers]


def _run_async(client: LLMClient, n: int) -> list[str]:
    async def run() -> list[str]:
        try:
            answers = await asyncio.gather(
                *(client.achat(_question(i), stage="agent", artifact_id=f"a{i}") for i in range(n))
            )
        finally:
            await client.aclose()
        return [a.message["content"] for a in answers]

    return asyncio.run(run())


@pytest.mark.parametrize("run", [_run_sync, _run_async], ids=["chat", "achat"])
def test_one_request_in_15_hanging_costs_a_short_timeout_each_not_the_configured_one(
    make_client, run
):
    n = 60
    # Request 3 of every 15 hangs: the first while the client has seen too few answers to
    # adapt (sent under the 30 s ceiling, cut once answers arriving meanwhile adapt it).
    with FakeOpenAIServer(periodic(15, {3: hang()}, final_answer("ok"))) as server:
        client = _adaptive(make_client(server, timeout_s=CEILING_S, retries=3, concurrency=4))
        client.backoff = backoff = _CountedBackoff()
        answers = run(client, n)
        sent = len(server.requests)
    assert answers == ["ok"] * n
    hung = sum(1 for i in range(sent) if i % 15 == 3)
    timeouts = [c for c in client.calls if c.status == "retried"]
    # Every attempt is a ledger row: each call's answer, and one timeout per hung request.
    assert len(client.calls) == sent == n + hung and len(timeouts) == hung >= 4
    assert all(c.reason.startswith("timeout:") and "adaptive" in c.reason for c in timeouts)
    # Each hung request was given a short timeout (the floor, or the percentile's multiple
    # under a slow machine), never the configured 30 s: what 60 calls lost to hangs is far
    # below the 60/15 x 30 s the configured timeout cost.
    assert all(_given_s(c.reason) <= 2.0 for c in timeouts)
    lost_s = sum(c.latency_ms for c in timeouts) / 1000
    assert lost_s <= 2.5 * hung and lost_s < n / 15 * CEILING_S / 10
    # Retried at once (no backoff), and not counted toward the build-wide breaker, which
    # stops every stage after requests that each cost the configured timeout.
    assert backoff.asked == []
    assert client.budget.unanswered_run()[0] == 0


class _SlowEndpoint(FakeOpenAIServer):
    """Answers at once, but a request saying "slow" takes `slow_s` (set once the client's
    timeout adapted, relative to it, so the test does not depend on the machine's speed)."""

    def __init__(self) -> None:
        self.slow_s = 0.0
        super().__init__(self._respond)

    def _respond(self, request):
        if request["messages"][-1]["content"] != "slow":
            return final_answer("ok")
        return Fault(message=final_answer("slow but fine"), hang_s=self.slow_s)


def _slow_call(server: _SlowEndpoint, client: LLMClient, times: float):
    """SAMPLES quick answers (the timeout adapts to g), then a request answered after
    `times` x g: its call's attempts as (status, the timeout a timed-out one was given)."""
    for i in range(SAMPLES):
        client.chat(_question(i), stage="agent", artifact_id="a")
    adapted = client.timeouts.timeout_s("agent")
    assert adapted < CEILING_S / 10
    server.slow_s = times * adapted
    answer = client.chat([{"role": "user", "content": "slow"}], stage="agent", artifact_id="a")
    assert answer.message["content"] == "slow but fine"
    # Every send is a ledger row: the attempts and the hedges sent beside the slow ones.
    assert len(answer.attempts) == len(server.requests) - SAMPLES
    return [
        (c.status, c.reason and _given_s(c.reason)) for c in answer.attempts if c.status != "hedged"
    ], adapted


def test_a_slow_answer_is_not_lost_the_retries_after_the_first_get_twice_the_time(make_client):
    with _SlowEndpoint() as server:
        client = _adaptive(make_client(server, timeout_s=CEILING_S, retries=4))
        client.backoff = backoff = _CountedBackoff()
        attempts, g = _slow_call(server, client, 2.5)
    # Cut at g, again at g (the first retry: a cut request was most likely lost), then at
    # 2g, retried at once each time; the next, given 4g, is answered.
    assert attempts == [("retried", g), ("retried", g), ("retried", 2 * g), ("accepted", None)]
    assert backoff.asked == []


def test_the_last_retry_gets_the_whole_configured_timeout(make_client):
    with _SlowEndpoint() as server:
        client = _adaptive(make_client(server, timeout_s=CEILING_S, retries=1))
        attempts, g = _slow_call(server, client, 2.5)
    # One retry only: the last, so it waits as long as the configured timeout allows (2g,
    # its growth, would have cut the answer again).
    assert attempts == [("retried", g), ("accepted", None)]


def test_the_timeout_is_the_ceiling_until_enough_answers_then_a_multiple_of_their_p95():
    timeouts = AdaptiveTimeout(ceiling_s=60.0, min_samples=20, floor_s=2.0)
    latencies = [0.5 + 0.1 * (i % 10) for i in range(19)]  # 0.5 .. 1.4 s
    for latency in latencies:
        timeouts.observe("agent", latency)
    assert timeouts.timeout_s("agent") == 60.0 and not timeouts.adapted("agent")
    timeouts.observe("agent", 1.0)
    # 20 answers: the p95 (nearest rank: the 19th smallest of 20) is 1.3 s; 4 x 1.3 = 5.2 s.
    assert timeouts.adapted("agent") and timeouts.percentile_s("agent") == pytest.approx(1.3)
    assert timeouts.timeout_s("agent") == pytest.approx(MULTIPLE * 1.3)
    # Each stage adapts to its own answers (asked without its max_tokens, no other stage's
    # answers stand in: test_llm_shared_latencies.py).
    assert timeouts.timeout_s("task_text") == 60.0

    # A fast endpoint: four times its p95 is under the floor, which holds.
    fast = AdaptiveTimeout(ceiling_s=60.0, min_samples=20, floor_s=2.0)
    for _ in range(20):
        fast.observe("agent", 0.2)
    assert fast.timeout_s("agent") == 2.0
    # A slow one: never past the configured timeout.
    for _ in range(200):
        fast.observe("agent", 30.0)
    assert fast.timeout_s("agent") == 60.0
    # The window is the last answers only: fast again, the timeout comes down again.
    for _ in range(200):
        fast.observe("agent", 0.2)
    assert fast.timeout_s("agent") == 2.0

    # Deterministic: the same latencies give the same timeouts, whoever computes them.
    again = AdaptiveTimeout(ceiling_s=60.0, min_samples=20, floor_s=2.0)
    for latency in [*latencies, 1.0]:
        again.observe("agent", latency)
    assert again.timeout_s("agent") == timeouts.timeout_s("agent")


def test_a_stage_with_a_high_failure_rate_stops_early_with_the_rate_while_another_goes_on(
    make_client,
):
    # The task_text stage's requests fail two in three (never five in a row, so the
    # consecutive breaker never opens); the topic stage's are answered.
    flaky = periodic(3, {0: http_error(500), 1: http_error(500)}, final_answer("ok"))

    def respond(request):
        content = request["messages"][-1]["content"]
        return flaky(request) if content.startswith("text") else final_answer("topic ok")

    with FakeOpenAIServer(respond) as server:
        client = make_client(server, retries=0)
        outcomes = []
        for i in range(15):
            try:
                client.chat(
                    [{"role": "user", "content": f"text {i}"}],
                    stage="task_text",
                    artifact_id=f"t{i}",
                )
                outcomes.append("answered")
            except CircuitOpen as exc:
                outcomes.append(exc.reason)
            except Exception:  # noqa: BLE001 - a failed request (http_500): the stage goes on
                outcomes.append("failed")
            topic = client.chat(
                [{"role": "user", "content": f"topic {i}"}], stage="topic", artifact_id=f"p{i}"
            )
            assert topic.message["content"] == "topic ok"  # the other stage goes on
        sent = [r["messages"][-1]["content"] for r in server.requests]
    # Ten requests of task_text, seven failed (70 % > 50 %): the stage stopped there.
    assert outcomes[:10] == ["failed", "failed", "answered"] * 3 + ["failed"]
    stop = "circuit_open: stage task_text stopped at a failure rate of 70%: 7 of its last 10"
    assert all(o.startswith(stop) for o in outcomes[10:])
    assert sum(s.startswith("text") for s in sent) == 10  # nothing more was sent
    assert sum(s.startswith("topic") for s in sent) == 15
    # The build records the reason: skipped rows, and the summary's stop line names the rate.
    rows = [c.to_json() for c in client.calls]
    skipped = [r for r in rows if r["status"] == "skipped"]
    assert len(skipped) == 5 and {r["stage"] for r in skipped} == {"task_text"}
    [line] = stop_lines(rows)
    assert line.startswith("LLM: task_text stopped by its failure-rate breaker: 7 of its last 10")
    assert "70%" in line and "5 calls not sent" in line


def test_the_failure_rate_needs_enough_requests_and_counts_only_the_window():
    breaker = CircuitBreaker(failures_to_open=5, rate_window=30, rate_min_requests=10)
    for _ in range(3):  # a bad start is no rate
        breaker.failed("s", "http_500: x")
    breaker.succeeded("s")
    breaker.check("s")
    for _ in range(26):  # then a healthy stretch: 3 failures in 30
        breaker.succeeded("s")
    # Failures two in three again: open once over half of the last 30 failed.
    for i in range(60):
        try:
            breaker.check("s")
        except CircuitOpen as exc:
            assert "16 of its last 30 requests failed" in exc.reason
            break
        if i % 3 == 2:
            breaker.succeeded("s")
        else:
            breaker.failed("s", "http_500: x")
    else:
        raise AssertionError("the failure-rate breaker never opened")
    breaker.succeeded("s")  # an answer still in flight when it opened: it stays open
    with pytest.raises(CircuitOpen, match="failure rate"):
        breaker.check("s")
    breaker.check("other")  # another stage has its own

    # Rate limits (429) are the endpoint's pace, met by backoff: they make no failure rate.
    paced = CircuitBreaker(failures_to_open=5)
    for _ in range(40):
        for _ in range(3):
            paced.failed("agent", "http_429: Error code: 429 - slow down")
        paced.succeeded("agent")
    paced.check("agent")


def test_hung_requests_cut_together_are_no_streak_but_count_in_the_rate():
    # At 64 requests in flight the hung ones time out together under the adaptive timeout:
    # five in a row while most requests are answered must not stop the stage.
    breaker = CircuitBreaker(failures_to_open=5, rate_window=30, rate_min_requests=10)
    for _ in range(12):
        breaker.succeeded("agent")
    for _ in range(6):
        breaker.failed("agent", "timeout: no answer within 1.5s", streak=False)
    breaker.check("agent")  # 6 in a row, 6 of 18: neither a streak nor over the rate
    # An endpoint that hangs on everything still stops the stage, by its rate.
    for _ in range(10):
        breaker.failed("agent", "timeout: no answer within 1.5s", streak=False)
    with pytest.raises(CircuitOpen, match="failure rate"):
        breaker.check("agent")
    # A full timeout (or an error answer) is still a streak.
    counted = CircuitBreaker(failures_to_open=5)
    for _ in range(5):
        counted.failed("agent", "timeout: no answer within 60s")
    with pytest.raises(CircuitOpen, match="5 consecutive"):
        counted.check("agent")
