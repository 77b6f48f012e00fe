"""Hedged requests (synthesis/llm/hedging.py): a request slow to answer is sent again beside
itself and the first answer taken; a request that fails, fails as it did unhedged."""

from __future__ import annotations

import threading
import time

import pytest

from synthesis.llm.hedging import Hedge, HedgingSender
from synthesis.llm.timeouts import HEDGE_FLOOR_S, HEDGE_MULTIPLE, AdaptiveTimeout
from synthesis.llm.transport import RawAnswer, TransportFailure


class _Transport:
    """Each send takes the next script entry: (seconds, answer text or a failure reason)."""

    def __init__(self, *script: tuple[float, str]) -> None:
        self.script = list(script)
        self.given: list[float] = []
        self._lock = threading.Lock()

    def send(self, request, timeout_s, patience=None):
        with self._lock:
            seconds, outcome = self.script.pop(0)
            self.given.append(timeout_s)
        time.sleep(min(seconds, timeout_s))
        if seconds > timeout_s:
            raise TransportFailure(
                f"timeout: no answer within {timeout_s:g}s", retryable=True, timeout_s=timeout_s
            )
        if outcome.startswith("fail:"):
            raise TransportFailure(outcome[len("fail: ") :], retryable=True)
        return RawAnswer(
            message={"role": "assistant", "content": outcome},
            finish_reason="stop",
            tokens_in=1,
            tokens_out=1,
            elapsed_s=seconds,
        )


def test_an_answer_before_the_hedge_is_taken_and_nothing_is_sent_again():
    transport = _Transport((0.01, "first"))
    sender = HedgingSender(transport)
    heard: list[Hedge] = []
    assert sender.send({}, 2.0, 0.3, heard.append).message["content"] == "first"
    assert (sender.sent, sender.won, transport.given, heard) == (0, 0, [2.0], [])


def test_a_hung_request_costs_the_hedge_wait_not_its_timeout():
    transport = _Transport((10.0, "never"), (0.01, "hedge"))
    sender = HedgingSender(transport)
    started = time.monotonic()
    heard: list[Hedge] = []
    answer = sender.send({}, 2.0, 0.2, heard.append)
    assert answer.message["content"] == "hedge"
    assert [h.outcome for h in heard] == ["won"] and "0.20 s unanswered" in heard[0].reason
    assert time.monotonic() - started < 1.0  # 0.2 s and the hedge's answer, not 2 s
    assert (sender.sent, sender.won) == (1, 1)
    # The hedge is given the rest of the first send's time: the pair ends when it would.
    assert transport.given == [2.0, pytest.approx(1.8)]


def test_a_slow_answer_of_the_first_send_still_wins():
    transport = _Transport((0.3, "slow but first"), (10.0, "never"))
    sender = HedgingSender(transport)
    heard: list[Hedge] = []
    assert sender.send({}, 2.0, 0.1, heard.append).message["content"] == "slow but first"
    assert (sender.sent, sender.won) == (1, 0)
    assert [h.outcome for h in heard] == ["lost"]


def test_when_both_fail_the_first_sends_failure_is_raised():
    transport = _Transport((10.0, "never"), (0.01, "fail: http_500: server error"))
    sender = HedgingSender(transport)
    heard: list[Hedge] = []
    with pytest.raises(TransportFailure, match="no answer within 0.5s") as failure:
        sender.send({}, 0.5, 0.1, heard.append)
    assert [h.outcome for h in heard] == ["failed"]
    assert failure.value.timeout_s == 0.5  # what the client reads to call it a cut request


def test_a_stage_is_hedged_only_once_its_timeout_adapted_and_well_before_it():
    timeouts = AdaptiveTimeout(ceiling_s=60.0, min_samples=20)
    for _ in range(19):
        timeouts.observe("agent", 0.2)
    assert timeouts.hedge_after_s("agent", 60.0) is None  # not adapted: no latencies to go by
    timeouts.observe("agent", 0.2)
    assert timeouts.hedge_after_s("agent", 1.5) == HEDGE_FLOOR_S
    for _ in range(200):
        timeouts.observe("agent", 1.0)
    assert timeouts.hedge_after_s("agent", 5.0) == pytest.approx(HEDGE_MULTIPLE * 1.0)
    # A wait not well under the timeout would only duplicate the request before its cut.
    assert timeouts.hedge_after_s("agent", 3.0) is None
