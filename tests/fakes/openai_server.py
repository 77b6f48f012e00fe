"""A loopback OpenAI-compatible chat server for tests: a scripted responder behind real HTTP.

The product talks to it over real HTTP (synthesis.llm.transport), so transport, parsing,
caching and accounting are exercised exactly as against vLLM or OpenAI. Only the answers are
scripted.
A responder returns an assistant message, or a `Fault` for what real servers do wrong:
an HTTP error (429, 500), a hang, a length cut, a body that is not a chat completion.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Fault:
    """What to send instead of a plain 200 answer."""

    status: int = 200
    message: dict[str, Any] | None = None
    finish_reason: str | None = None
    hang_s: float = 0.0  # hold the request this long (until shutdown at most) first
    raw_body: bytes | None = None  # sent as is, with a 200
    completion_tokens: int = 12


Responder = Callable[[dict[str, Any]], "dict[str, Any] | Fault"]


def http_error(status: int, text: str = "scripted failure") -> Fault:
    return Fault(status=status, message={"error": {"message": text, "type": "server_error"}})


def hang(seconds: float = 3600.0) -> Fault:
    return Fault(hang_s=seconds, message=final_answer("too late"))


def length_cut(text: str = '{"name": "unfinished') -> Fault:
    return Fault(message=final_answer(text), finish_reason="length")


def malformed_body() -> Fault:
    return Fault(raw_body=b'{"id": "chatcmpl-1", "object": "chat.completion", "choi')


def tool_calls(*calls: tuple[str, dict]) -> dict[str, Any]:
    """One assistant turn with several tool calls, in the given order."""
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": f"call_{i}",
                "type": "function",
                "function": {"name": name, "arguments": json.dumps(args)},
            }
            for i, (name, args) in enumerate(calls)
        ],
    }


def scripted(*answers: dict[str, Any] | Fault) -> Responder:
    """Answers in turn, then the last one again for every further request."""
    queue = list(answers)
    lock = threading.Lock()

    def respond(request: dict[str, Any]) -> dict[str, Any] | Fault:
        with lock:
            return queue.pop(0) if len(queue) > 1 else queue[0]

    return respond


def periodic(
    period: int, faults: dict[int, Fault], answer: dict[str, Any] | Responder
) -> Responder:
    """A flaky endpoint: request i (0-based, in arrival order) gets `faults[i % period]` when
    there is one, else `answer` (a message, or a responder asked for one) at once.

    `periodic(15, {3: hang()}, final_answer("ok"))`: requests 3, 18, 33, ... hang, one in 15.
    """
    count = itertools.count()

    def respond(request: dict[str, Any]) -> dict[str, Any] | Fault:
        fault = faults.get(next(count) % period)  # itertools.count is atomic under the GIL
        if fault is not None:
            return fault
        return answer(request) if callable(answer) else answer

    return respond


def final_answer(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def tool_call(name: str, arguments: str | dict, call_id: str = "call_x") -> dict[str, Any]:
    args = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": name, "arguments": args}}
        ],
    }


class _Server(ThreadingHTTPServer):
    # socketserver's listen backlog is 5: a client with 16 requests in flight on a loaded
    # machine could see a connection refused before a thread accepts it, which is the fake's
    # fault, not the client's.
    request_queue_size = 128


class FakeOpenAIServer:
    """`with FakeOpenAIServer(respond) as server:` then point a client at `server.base_url`."""

    def __init__(self, respond: Responder, model: str = "fake-model") -> None:
        self.respond = respond
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._count = threading.Lock()
        self._closing = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                server.requests.append(body)
                if not self.path.endswith("/chat/completions"):
                    self._send(404, {"error": {"message": f"no route {self.path}"}})
                    return
                with server._count:
                    server.in_flight += 1
                    server.max_in_flight = max(server.max_in_flight, server.in_flight)
                self._in_flight = True
                try:
                    self._answer(body)
                finally:
                    self._leave()

            def _leave(self) -> None:
                # Before the answer's bytes go out: once the client has them it may send its
                # next request, which must not find this one still counted.
                if getattr(self, "_in_flight", False):
                    self._in_flight = False
                    with server._count:
                        server.in_flight -= 1

            def _answer(self, body: dict[str, Any]) -> None:
                answer = server.respond(body)
                fault = answer if isinstance(answer, Fault) else Fault(message=answer)
                if fault.hang_s:
                    server._closing.wait(fault.hang_s)
                if fault.raw_body is not None:
                    self._send_bytes(200, fault.raw_body)
                    return
                if fault.status != 200:
                    self._send(fault.status, fault.message or {})
                    return
                message = fault.message or final_answer("")
                prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
                finish = fault.finish_reason or (
                    "tool_calls" if message.get("tool_calls") else "stop"
                )
                self._send(
                    200,
                    {
                        "id": f"chatcmpl-{len(server.requests)}",
                        "object": "chat.completion",
                        "created": 0,
                        "model": body["model"],
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {
                            "prompt_tokens": prompt,
                            "completion_tokens": fault.completion_tokens,
                            "total_tokens": prompt + fault.completion_tokens,
                        },
                    },
                )

            def _send(self, status: int, payload: dict[str, Any]) -> None:
                self._send_bytes(status, json.dumps(payload).encode())

            def _send_bytes(self, status: int, data: bytes) -> None:
                self._leave()
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (its timeout): nothing to tell it

        self._httpd = _Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAIServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._closing.set()  # release hanging handlers
        self._httpd.shutdown()
        self._httpd.server_close()
