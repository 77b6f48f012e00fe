# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""Each fault a server can produce ends as a retry or a recorded rejection, never a traceback,
and only accepted answers are cached."""

from __future__ import annotations

import time

import pytest

from synthesis.llm.client import CircuitOpen, DeadlineExceeded, LLMError, LLMRejected
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Fault,
    final_answer,
    hang,
    http_error,
    length_cut,
    malformed_body,
    scripted,
)
from tests.synthesis.llm.llm_support import USER, make_client  # noqa: F401 - a fixture


def _statuses(client):
    return [(c.attempt, c.status) for c in client.calls]


@pytest.mark.parametrize(
    "fault", [http_error(429), http_error(500), http_error(503), malformed_body()]
)
def test_transient_failures_are_retried_then_answered(make_client, fault):
    with FakeOpenAIServer(scripted(fault, fault, final_answer("ok"))) as server:
        client = make_client(server)
        answer = client.chat(USER, stage="agent", artifact_id="a1")
    assert answer.message["content"] == "ok"
    assert len(server.requests) == 3
    assert _statuses(client) == [(0, "retried"), (1, "retried"), (2, "accepted")]
    assert all(c.reason for c in client.calls[:2])


def test_a_client_error_is_not_retried(make_client):
    with FakeOpenAIServer(scripted(http_error(400))) as server:
        client = make_client(server)
        with pytest.raises(LLMError, match="http_400"):
            client.chat(USER, stage="agent", artifact_id="a1")
    assert len(server.requests) == 1 and _statuses(client) == [(0, "failed")]


def test_retries_run_out_into_a_recorded_failure(make_client):
    with FakeOpenAIServer(scripted(http_error(500))) as server:
        client = make_client(server, retries=1)
        with pytest.raises(LLMError, match="http_500") as caught:
            client.chat(USER, stage="agent", artifact_id="a1")
    assert [c.status for c in caught.value.attempts] == ["retried", "failed"]
    assert len(server.requests) == 2


@pytest.mark.parametrize(
    ("answer", "kind"),
    [
        (length_cut(), "length"),
        (final_answer(""), "empty"),
        (final_answer("{}"), "empty"),
        (final_answer("x" * 5000), "oversized"),
    ],
)
def test_unusable_answers_are_rejected_not_cached_and_asked_again(make_client, answer, kind):
    with FakeOpenAIServer(scripted(answer, final_answer("fine"))) as server:
        client = make_client(server, max_answer_chars=4000)
        with pytest.raises(LLMRejected) as caught:
            client.chat(USER, stage="agent", artifact_id="a1")
        assert caught.value.reason.startswith(f"{kind}:")
        assert [c.status for c in client.calls] == ["rejected"]
        # Not cached: the same request reaches the endpoint again and gets a usable answer.
        again = make_client(server, max_answer_chars=4000)
        assert again.chat(USER, stage="agent", artifact_id="a1").message["content"] == "fine"
    assert len(server.requests) == 2
    assert [c.status for c in again.calls] == ["accepted"]


def test_max_tokens_is_sent_per_stage_and_the_sdk_does_not_retry(make_client):
    with FakeOpenAIServer(scripted(http_error(500), final_answer("ok"))) as server:
        client = make_client(server, max_tokens=300, stage_overrides={"topic": {"max_tokens": 77}})
        client.chat(USER, stage="agent", artifact_id="a1")
        client.chat(USER, stage="topic", artifact_id="a1")
    assert [r["max_tokens"] for r in server.requests] == [300, 300, 77]
    # Two requests for the first call: ours retried once; the transport added none of its own.
    assert [c.status for c in client.calls] == ["retried", "accepted", "accepted"]


def test_a_hanging_endpoint_ends_within_its_deadline(make_client):
    with FakeOpenAIServer(scripted(hang())) as server:
        client = make_client(server, timeout_s=30, deadline_s=1.5, breaker_failures=100)
        started = time.monotonic()
        with pytest.raises((DeadlineExceeded, LLMError)):
            client.chat(USER, stage="agent", artifact_id="a1")
        elapsed = time.monotonic() - started
    assert elapsed < 4.0
    assert client.calls[-1].status in {"failed", "skipped"}
    assert any(c.reason.startswith("timeout:") for c in client.calls)


def test_the_breaker_opens_after_consecutive_failures_and_then_fails_fast(make_client):
    with FakeOpenAIServer(scripted(http_error(503))) as server:
        client = make_client(server, retries=0, breaker_failures=3)
        for _ in range(3):
            with pytest.raises(LLMError, match="http_503"):
                client.chat(
                    USER + [{"role": "user", "content": str(_)}], stage="agent", artifact_id="a"
                )
        sent = len(server.requests)
        with pytest.raises(CircuitOpen, match="circuit_open: stage agent"):
            client.chat(USER, stage="agent", artifact_id="a")
        assert len(server.requests) == sent == 3  # failed fast: nothing sent
        # Another stage has its own breaker.
        with pytest.raises(LLMError, match="http_503"):
            client.chat(USER, stage="topic", artifact_id="a")
    assert client.calls[3].status == "skipped" and "circuit_open" in client.calls[3].reason


def test_a_second_identical_run_sends_nothing_for_accepted_answers(make_client):
    with FakeOpenAIServer(scripted(final_answer("one"), final_answer("two"))) as server:
        first = make_client(server)
        first.chat(USER, stage="agent", artifact_id="a1")
        first.chat(USER + [{"role": "user", "content": "more"}], stage="agent", artifact_id="a1")
        second = make_client(server)
        answers = [
            second.chat(USER, stage="agent", artifact_id="a1").message["content"],
            second.chat(
                USER + [{"role": "user", "content": "more"}], stage="agent", artifact_id="a1"
            ).message["content"],
        ]
    assert answers == ["one", "two"] and len(server.requests) == 2
    assert [(c.status, c.cache_hit, c.tokens_in) for c in second.calls] == [("cached", True, 0)] * 2


def test_concurrency_bounds_requests_in_flight(make_client):
    from concurrent.futures import ThreadPoolExecutor

    slow = Fault(message=final_answer("ok"), hang_s=0.1)
    with FakeOpenAIServer(scripted(slow)) as server:
        client = make_client(server, concurrency=3)
        with ThreadPoolExecutor(max_workers=10) as pool:
            list(
                pool.map(
                    lambda i: client.chat(
                        [{"role": "user", "content": f"q{i}"}], stage="agent", artifact_id=str(i)
                    ),
                    range(10),
                )
            )
    assert server.max_in_flight == 3
