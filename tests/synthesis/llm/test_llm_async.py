# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""achat and ask_structured_async: the same rules as chat (cache, retries, screening, budget,
deadline, ledger) through the asyncio transport, with requests in flight bounded per loop."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest

from synthesis.llm.client import BudgetExhausted, DeadlineExceeded, LLMError, LLMRejected
from synthesis.llm.structured import ask_structured, ask_structured_async
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    Fault,
    final_answer,
    hang,
    http_error,
    length_cut,
    scripted,
)
from tests.synthesis.llm.llm_support import USER, make_client  # noqa: F401 - a fixture


def _run(client, coroutine):
    """Run `coroutine` in a fresh loop and release the client's connections before it ends."""

    async def main():
        try:
            return await coroutine
        finally:
            await client.aclose()

    return asyncio.run(main())


def _no_blocking_sleep(seconds):
    raise AssertionError(f"achat blocked the event loop with time.sleep({seconds})")


def _ask(i):
    return [{"role": "user", "content": f"question {i:03d}"}]


def test_an_accepted_answer_is_recorded_cached_and_served_again_without_a_request(make_client):
    with FakeOpenAIServer(scripted(final_answer("ok"))) as server:
        first = make_client(server)
        answer = _run(first, first.achat(USER, stage="agent", artifact_id="a1"))
        second = make_client(server)
        again = _run(second, second.achat(USER, stage="agent", artifact_id="a1"))
    assert answer.message == {"role": "assistant", "content": "ok"}
    assert [(c.status, c.artifact_id) for c in first.calls] == [("accepted", "a1")]
    assert again.message == answer.message and len(server.requests) == 1
    assert [(c.status, c.cache_hit) for c in second.calls] == [("cached", True)]


def test_a_rejected_answer_is_not_cached_and_asked_again(make_client):
    with FakeOpenAIServer(scripted(length_cut(), final_answer("fine"))) as server:
        client = make_client(server)
        with pytest.raises(LLMRejected, match="^length:"):
            _run(client, client.achat(USER, stage="agent", artifact_id="a1"))
        again = make_client(server)
        answer = _run(again, again.achat(USER, stage="agent", artifact_id="a1"))
    assert answer.message["content"] == "fine" and len(server.requests) == 2
    assert [c.status for c in client.calls] == ["rejected"]
    assert [c.status for c in again.calls] == ["accepted"]


def test_the_stage_check_rejects_like_chat_does(make_client):
    with FakeOpenAIServer(scripted(final_answer("nope"))) as server:
        client = make_client(server)
        with pytest.raises(LLMRejected, match="^mine: no") as caught:
            _run(
                client,
                client.achat(USER, stage="agent", artifact_id="a1", accept=lambda m: "mine: no"),
            )
    assert caught.value.message["content"] == "nope"
    assert [c.status for c in caught.value.attempts] == ["rejected"]


def test_429s_are_retried_with_awaited_backoff(make_client):
    answers = scripted(http_error(429), http_error(429), final_answer("ok"))
    with FakeOpenAIServer(answers) as server:
        client = make_client(server)
        client.sleep = _no_blocking_sleep
        answer = _run(client, client.achat(USER, stage="agent", artifact_id="a1"))
    assert answer.message["content"] == "ok" and len(server.requests) == 3
    assert [(c.attempt, c.status) for c in client.calls] == [
        (0, "retried"),
        (1, "retried"),
        (2, "accepted"),
    ]
    assert all(c.reason.startswith("http_429:") for c in client.calls[:2])


def test_a_client_error_is_not_retried(make_client):
    with FakeOpenAIServer(scripted(http_error(400))) as server:
        client = make_client(server)
        with pytest.raises(LLMError, match="http_400"):
            _run(client, client.achat(USER, stage="agent", artifact_id="a1"))
    assert len(server.requests) == 1 and [c.status for c in client.calls] == ["failed"]


def test_a_hanging_endpoint_ends_within_the_deadline(make_client):
    with FakeOpenAIServer(scripted(hang())) as server:
        client = make_client(server, timeout_s=30, deadline_s=1.0, breaker_failures=100)
        started = time.monotonic()
        with pytest.raises((DeadlineExceeded, LLMError)):
            _run(client, client.achat(USER, stage="agent", artifact_id="a1"))
        elapsed = time.monotonic() - started
    assert elapsed < 3.0
    assert client.calls[0].reason.startswith("timeout:")
    assert client.calls[-1].status in {"failed", "skipped"}


def test_budget_is_never_exceeded_by_16_concurrent_calls(make_client):
    # A call's worst case is ~12 prompt tokens + 100; 16 of them cannot all fit in 600.
    slow = Fault(message=final_answer("ok"), hang_s=0.05, completion_tokens=90)
    with FakeOpenAIServer(scripted(slow)) as server:
        client = make_client(server, concurrency=16, max_tokens=100, budget_tokens=600)

        async def ask_all():
            calls = [client.achat(_ask(i), stage="agent", artifact_id=str(i)) for i in range(16)]
            return await asyncio.gather(*calls, return_exceptions=True)

        results = _run(client, ask_all())
    stopped = [r for r in results if isinstance(r, BudgetExhausted)]
    answered = [r for r in results if not isinstance(r, Exception)]
    assert answered and stopped and len(answered) + len(stopped) == 16
    assert server.max_in_flight > 1  # the calls really overlapped
    accepted = [c for c in client.calls if c.status == "accepted"]
    assert sum(c.tokens_in + c.tokens_out for c in accepted) <= 600
    assert client.budget.spent()[0] <= 600  # nothing left reserved beyond the cap either
    assert len(server.requests) == len(answered)


def test_requests_in_flight_never_exceed_the_concurrency(make_client):
    slow = Fault(message=final_answer("ok"), hang_s=0.1)
    with FakeOpenAIServer(scripted(slow)) as server:
        client = make_client(server, concurrency=3)

        async def ask_all():
            calls = [client.achat(_ask(i), stage="agent", artifact_id=str(i)) for i in range(10)]
            return await asyncio.gather(*calls)

        answers = _run(client, ask_all())
    assert len(answers) == 10 and len(server.requests) == 10
    assert server.max_in_flight == 3


def test_a_cancelled_call_is_recorded_and_keeps_its_worst_case_reserved(make_client):
    with FakeOpenAIServer(scripted(hang(5.0))) as server:
        client = make_client(server, max_tokens=100)

        async def cancel_in_flight():
            task = asyncio.ensure_future(client.achat(USER, stage="agent", artifact_id="a1"))
            while not server.in_flight:
                await asyncio.sleep(0.01)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task

        _run(client, cancel_in_flight())
    assert [(c.status, c.reason.split(":")[0]) for c in client.calls] == [("failed", "cancelled")]
    assert client.budget.spent()[0] >= 100  # the request may have been billed


def test_one_client_serves_event_loops_in_several_threads(make_client):
    with FakeOpenAIServer(scripted(final_answer("ok"))) as server:
        client = make_client(server, concurrency=2)
        errors: list[BaseException] = []

        def episode(i):
            try:
                _run(client, client.achat(_ask(i), stage="agent", artifact_id=str(i)))
            except BaseException as exc:  # reported below: a thread's error is otherwise lost
                errors.append(exc)

        threads = [threading.Thread(target=episode, args=(i,)) for i in range(3)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert errors == []
    assert sorted(c.status for c in client.calls) == ["accepted"] * 3


SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
    "additionalProperties": False,
}


def test_structured_async_repairs_exactly_as_the_sync_one_does(make_client):
    def answers():
        return scripted(
            final_answer('{"name": '),
            final_answer('{"name": 3}'),
            final_answer(json.dumps({"name": "library"})),
        )

    ask = {"stage": "topic", "artifact_id": "t1", "schema": SCHEMA}
    with FakeOpenAIServer(answers()) as sync_server:
        sync = ask_structured(make_client(sync_server), USER, **ask)
    with FakeOpenAIServer(answers()) as async_server:
        client = make_client(async_server)
        value = _run(client, ask_structured_async(client, USER, **ask))
    assert value.value == sync.value == {"name": "library"}
    assert [c.status for c in value.attempts] == ["rejected", "rejected", "accepted"]
    # The same repair conversation, byte for byte: one loop serves both.
    assert async_server.requests == sync_server.requests
    assert async_server.requests[2]["response_format"]["json_schema"]["name"] == "topic"


def test_structured_async_gives_up_after_the_last_repair(make_client):
    with FakeOpenAIServer(scripted(final_answer("not json"))) as server:
        client = make_client(server, repairs=1)
        with pytest.raises(LLMRejected, match="no valid answer after 2 attempts") as caught:
            _run(
                client,
                ask_structured_async(client, USER, stage="topic", artifact_id="t", schema=SCHEMA),
            )
    assert len(server.requests) == 2
    assert [c.status for c in caught.value.attempts] == ["rejected", "rejected"]


def test_both_transports_send_the_body_the_sdk_create_would_send():
    from openai import OpenAI

    from synthesis.llm.transport import AsyncTransport, Transport
    from tests.fakes.openai_server import tool_call

    request = {
        "model": "fake-model",
        "messages": [
            *USER,
            tool_call("get_order", {"id": "o1"}),
            {"role": "tool", "content": "{}"},
        ],
        "temperature": 0.0,
        "seed": 3,
        "max_tokens": 50,
        "tools": [{"type": "function", "function": {"name": "get_order", "parameters": {}}}],
        "response_format": {"type": "json_schema", "json_schema": {"name": "t", "schema": {}}},
    }
    with FakeOpenAIServer(scripted(final_answer("ok"))) as server:
        sdk = OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        sdk.chat.completions.create(**request, timeout=5)
        sync = Transport(server.base_url, "k").send(request, timeout_s=5)
        transport = AsyncTransport(server.base_url, "k")

        async def send():
            try:
                return await transport.send(request, timeout_s=5)
            finally:
                await transport.aclose()

        answer = asyncio.run(send())
    assert server.requests[1] == server.requests[2] == server.requests[0]
    assert sync == answer and answer.message == {"role": "assistant", "content": "ok"}


def test_a_deadline_check_does_not_rewrite_the_shared_account(tmp_path):
    from synthesis.llm.budget import Budget

    path = tmp_path / "build.json"
    Budget(path=path).reserve("agent", 10, 0.0)
    later = Budget(path=path)
    later.elapsed_s()
    written = path.stat().st_mtime_ns
    time.sleep(0.01)
    assert all(later.elapsed_s() >= 0 for _ in range(5))
    assert path.stat().st_mtime_ns == written
