"""The lean transport keeps what the `openai` SDK did: the URL, the key header, the answer
dict (to the key order) and the failure reasons, so answers, ledger rows and cache keys are
those an SDK build made; and it keeps a connection per thread alive, proxies included."""

from __future__ import annotations

import socket
import threading

import pytest

from synthesis.llm import transport
from synthesis.llm.transport import Transport, TransportFailure, completions_url
from tests.fakes.openai_server import (
    FakeOpenAIServer,
    final_answer,
    http_error,
    malformed_body,
    scripted,
)

REQUEST = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "max_tokens": 5}

BODIES = [
    final_answer("plain"),
    {"content": "no role", "refusal": None},
    {
        "role": "assistant",
        "content": None,
        "reasoning_content": "an extra field",
        "meta": {"kept": None},
        "tool_calls": [
            {
                "type": "function",
                "id": "c1",
                "function": {"name": "get", "arguments": "{}", "extra": None},
                "index": None,
            },
            {"id": "c2", "type": "custom", "custom": {"name": "raw", "input": "x"}},
        ],
    },
    {"role": "assistant", "content": "x", "audio": {"id": "a", "data": None}},
]


@pytest.mark.parametrize("message", BODIES)
def test_the_answer_is_the_dict_the_sdk_made(message):
    from openai._models import construct_type
    from openai.types.chat import ChatCompletion

    body = {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
        "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
    }
    sdk = construct_type(type_=ChatCompletion, value=body).choices[0].message
    expected = sdk.model_dump(exclude_none=True)
    expected.setdefault("role", "assistant")
    ours = transport._raw_answer(body)
    assert ours.message == expected and list(ours.message) == list(expected)
    for ours_call, sdk_call in zip(
        ours.message.get("tool_calls", []), expected.get("tool_calls", []), strict=True
    ):
        assert list(ours_call) == list(sdk_call)
    assert (ours.finish_reason, ours.tokens_in, ours.tokens_out) == ("tool_calls", 7, 3)


@pytest.mark.parametrize(
    "fault", [http_error(429, "slow down"), http_error(400), http_error(404, ""), malformed_body()]
)
def test_failures_carry_the_sdk_s_words(fault):
    import openai

    with FakeOpenAIServer(scripted(fault)) as server:
        with pytest.raises(TransportFailure) as ours:
            Transport(server.base_url, "k").send(REQUEST, timeout_s=5)
        sdk = openai.OpenAI(base_url=server.base_url, api_key="k", max_retries=0)
        with pytest.raises((openai.APIStatusError, ValueError)) as theirs:
            sdk.chat.completions.create(**REQUEST)
    if isinstance(theirs.value, openai.APIStatusError):
        status = theirs.value.status_code
        assert ours.value.reason == f"http_{status}: {theirs.value.message}"
        assert ours.value.retryable == (status == 429)
    else:
        assert ours.value.reason == f"malformed: {theirs.value}" and ours.value.retryable


def test_the_url_joins_the_route_as_the_sdk_does():
    assert completions_url("http://h:1/v1") == "http://h:1/v1/chat/completions"
    assert completions_url("http://h:1/v1/") == "http://h:1/v1/chat/completions"
    assert completions_url(None) == "https://api.openai.com/v1/chat/completions"


class _ClosingServer:
    """Answers one request per connection (HTTP/1.1, kept alive), then closes it while idle,
    as servers do; records each request's head."""

    def __init__(self) -> None:
        self.heads: list[str] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                conn, _ = self._listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    data += conn.recv(65536)
                head, _, body = data.partition(b"\r\n\r\n")
                length = int(
                    next(
                        line.split(b":")[1]
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length")
                    )
                )
                while len(body) < length:
                    body += conn.recv(65536)
                self.heads.append(head.decode())
                answer = (
                    b'{"choices": [{"message": {"role": "assistant", "content": "ok"},'
                    b' "finish_reason": "stop"}]}'
                )
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                    + f"Content-Length: {len(answer)}\r\n\r\n".encode()
                    + answer
                )

    def close(self) -> None:
        self._listener.close()


def test_a_connection_the_server_closed_while_idle_is_opened_again(monkeypatch):
    monkeypatch.setattr(transport, "IDLE_CHECK_S", 0.0)  # check every reuse
    server = _ClosingServer()
    try:
        sender = Transport(f"http://127.0.0.1:{server.port}/v1", "sk-secret")
        answers = []
        for _ in range(2):
            answers.append(sender.send(REQUEST, timeout_s=5).message["content"])
            for _ in range(100):  # until the server has closed the connection
                if len(server.heads) == len(answers):
                    break
                threading.Event().wait(0.01)
            threading.Event().wait(0.05)
        sender.close()
    finally:
        server.close()
    assert answers == ["ok", "ok"] and len(server.heads) == 2
    for head in server.heads:
        lines = head.split("\r\n")
        assert lines[0] == "POST /v1/chat/completions HTTP/1.1"
        assert "Authorization: Bearer sk-secret" in lines


def test_a_proxy_from_the_environment_carries_the_request(monkeypatch):
    for name in ("NO_PROXY", "no_proxy", "ALL_PROXY", "all_proxy", "HTTPS_PROXY", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    with FakeOpenAIServer(scripted(final_answer("via proxy"))) as proxy:
        root = proxy.base_url.removesuffix("/v1")
        monkeypatch.setenv("HTTP_PROXY", root)
        monkeypatch.setenv("http_proxy", root)
        # A host that does not resolve: only the proxy can have answered.
        answer = Transport("http://llm.invalid/v1", "k").send(REQUEST, timeout_s=5)
    assert answer.message["content"] == "via proxy" and proxy.requests == [REQUEST]


def test_a_thread_s_connection_goes_with_the_thread():
    import gc

    with FakeOpenAIServer(scripted(final_answer("ok"))) as server:
        sender = Transport(server.base_url, "k")
        answers = []
        threads = [
            threading.Thread(target=lambda: answers.append(sender.send(REQUEST, 5.0)))
            for _ in range(6)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        gc.collect()
    assert len(answers) == 6 and len(server.requests) == 6
    assert len(sender._opened) == 0  # threads of finished pools leave no connection open
