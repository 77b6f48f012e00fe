"""A loopback OpenAI-compatible endpoint for the LLM benchmarks, with a fixed latency.

    with Endpoint(latency_s=0.2, answer=agent_turn) as endpoint:
        ... point a client at endpoint.base_url ...
    endpoint.served, endpoint.max_in_flight

Written for speed (asyncio, HTTP/1.1 keep-alive) and run in its own process, so its CPU does
not compete with the client for the GIL (it parses and writes with orjson, to take little of
the cores it shares with the client): it holds every request `latency_s`, then answers
with the assistant message `answer(request)` returns. `answer` must be a module-level
function (the process is spawned, so it is sent by reference). The endpoint also counts the
requests it served and the most it held at once: how many the client really had in flight.

With `hang_every=N` it is a flaky endpoint: one request of every N it receives (counted
across connections) is never answered, held until the client gives up on it, as a server
that silently drops a request; benchmarks/flaky_endpoint.py uses it. Which one of each N
is drawn from a seeded generator: the same run each time, but not a fixed place, which
falls into step with a client whose requests all take the same time (its retries then
land on the hanging place again and again).

With `bad_every=N` one answered request in N (drawn from another seeded generator) gets a
bad answer instead, of each kind in BAD_KINDS in turn (error statuses, a body that is no
chat completion, a cut, empty, oversized or off-schema answer, a call to no tool...): what
a faulty model server sends besides silence (benchmarks/flaky_build.py).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
import time
from collections.abc import Callable
from typing import Any

import orjson

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def completion(
    request: dict[str, Any], message: dict[str, Any], finish_reason: str | None = None
) -> bytes:
    """A chat completion carrying `message`, its usage estimated from the request's size."""
    prompt = len(json.dumps(request["messages"])) // 4
    return orjson.dumps(
        {
            "id": "chatcmpl-bench",
            "object": "chat.completion",
            "created": 0,
            "model": request["model"],
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "finish_reason": finish_reason
                    or ("tool_calls" if message.get("tool_calls") else "stop"),
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 20,
                "total_tokens": prompt + 20,
            },
        }
    )


def _tool_call(name: str, arguments: str) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "call_bad",
                "type": "function",
                "function": {"name": name, "arguments": arguments},
            }
        ],
    }


def _a_tool(request: dict[str, Any]) -> str:
    """The name of a tool the request offers (a call to it with bad arguments)."""
    tools = request.get("tools") or [{"function": {"name": "no_such_tool"}}]
    return tools[0]["function"]["name"]


def _error(status: int, text: str) -> tuple[int, bytes]:
    return status, orjson.dumps({"error": {"message": text, "type": "server_error"}})


# What a faulty endpoint answers instead of a good answer, one kind after the other: the
# status and body sent for `request` (all at once, after the endpoint's latency).
BAD_KINDS: dict[str, Callable[[dict[str, Any]], tuple[int, bytes]]] = {
    "http_500": lambda r: _error(500, "internal error"),
    "http_502": lambda r: _error(502, "bad gateway"),
    "http_503": lambda r: _error(503, "overloaded"),
    "http_429": lambda r: _error(429, "rate limited"),
    "truncated_body": lambda r: (200, b'{"id": "chatcmpl-bad", "object": "chat.completion", "choi'),
    "no_choices": lambda r: (
        200,
        orjson.dumps({"id": "chatcmpl-bad", "object": "chat.completion"}),
    ),
    "length_cut": lambda r: (
        200,
        completion(r, {"role": "assistant", "content": '{"na'}, "length"),
    ),
    "empty": lambda r: (200, completion(r, {"role": "assistant", "content": ""})),
    "null_content": lambda r: (200, completion(r, {"role": "assistant", "content": None})),
    "oversized": lambda r: (200, completion(r, {"role": "assistant", "content": "x" * 70_000})),
    "not_json": lambda r: (200, completion(r, {"role": "assistant", "content": "Sure! Here:"})),
    "off_schema": lambda r: (200, completion(r, {"role": "assistant", "content": '{"x": 1}'})),
    "unknown_tool": lambda r: (200, completion(r, _tool_call("no_such_tool", "{}"))),
    "bad_arguments": lambda r: (200, completion(r, _tool_call(_a_tool(r), "{not json"))),
}


class _Counts:
    def __init__(self) -> None:
        self.served = 0
        self.received = 0
        self.hanging = 0  # which request of the current block of `hang_every` hangs
        self.draws = random.Random(0)
        self.in_flight = 0
        self.max_in_flight = 0
        self.cpu_s = time.process_time()  # the endpoint process's, at the last reset
        self.bad_draws = random.Random(1)
        self.bad = 0  # bad answers sent (the next one is of kind `bad % len(BAD_KINDS)`)


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    latency_s: float,
    answer: Answer,
    counts: _Counts,
    hang_every: int = 0,
    bad_every: int = 0,
) -> None:
    """Requests of one kept-alive connection, in turn: each held `latency_s`, then answered
    (with `hang_every`, one in that many never: the connection then waits for the client to
    give up on it; with `bad_every`, one answer in that many is a bad one)."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            headers = dict(
                line.split(":", 1)
                for line in head.decode("latin-1").split("\r\n")[1:]
                if ":" in line
            )
            length = int(next(v for k, v in headers.items() if k.lower() == "content-length"))
            body = await reader.readexactly(length)
            if hang_every:
                place = counts.received % hang_every
                if place == 0:
                    counts.hanging = counts.draws.randrange(hang_every)
                counts.received += 1
                if place == counts.hanging:
                    await reader.read()  # never answered: until the client closes
                    return
            bad = None
            if bad_every and counts.bad_draws.randrange(bad_every) == 0:
                bad = list(BAD_KINDS.values())[counts.bad % len(BAD_KINDS)]
                counts.bad += 1
            counts.in_flight += 1
            counts.max_in_flight = max(counts.max_in_flight, counts.in_flight)
            try:
                await asyncio.sleep(latency_s)
                request = orjson.loads(body)
                status = 200
                if bad is None:
                    data = completion(request, answer(request))
                else:
                    status, data = bad(request)
            finally:
                counts.in_flight -= 1
            writer.write(
                f"HTTP/1.1 {status} {'OK' if status == 200 else 'Error'}\r\n".encode()
                + b"Content-Type: application/json\r\n"
                + f"Content-Length: {len(data)}\r\n\r\n".encode()
                + data
            )
            await writer.drain()
            counts.served += 1
    except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
        pass  # the client closed the connection, or the server is stopping
    finally:
        writer.close()


def run_server(
    latency_s: float,
    answer: Answer,
    pipe,
    stop,
    port: int = 0,
    hang_every: int = 0,
    bad_every: int = 0,
) -> None:
    """The endpoint's process: send the port, serve until `stop` is set, send the counts.

    A "reset" on the pipe zeroes the counts (one endpoint can serve several measured runs)."""

    async def main() -> None:
        counts = _Counts()
        server = await asyncio.start_server(
            lambda r, w: serve_connection(r, w, latency_s, answer, counts, hang_every, bad_every),
            "127.0.0.1",
            port,
            backlog=512,
        )
        pipe.send(server.sockets[0].getsockname()[1])
        while not stop.is_set():
            if pipe.poll():
                pipe.recv()
                cpu, counts.cpu_s = counts.cpu_s, time.process_time()
                pipe.send((counts.served, counts.max_in_flight, counts.cpu_s - cpu))
                counts.served = counts.max_in_flight = 0
            await asyncio.sleep(0.05)
        server.close()

    asyncio.run(main())


class Endpoint:
    """The endpoint's process, started on entry and stopped on exit."""

    def __init__(
        self,
        latency_s: float,
        answer: Answer,
        port: int = 0,
        hang_every: int = 0,
        bad_every: int = 0,
    ) -> None:
        """`port` 0 takes a free one; a fixed one keeps the base URL, and so the requests'
        cache keys, the same from run to run (comparing a change's outputs byte for byte).
        `hang_every` N > 0: one request in N is never answered; `bad_every` N > 0: one
        answer in N is a bad one (BAD_KINDS in turn)."""
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._stop = context.Event()
        self._process = context.Process(
            target=run_server,
            args=(latency_s, answer, theirs, self._stop, port, hang_every, bad_every),
            daemon=True,
        )
        self.base_url = ""

    def __enter__(self) -> Endpoint:
        self._process.start()
        self.base_url = f"http://127.0.0.1:{self._pipe.recv()}/v1"
        return self

    def take_counts(self) -> tuple[int, int, float]:
        """(requests served, most held at once, the endpoint's CPU seconds) since the last
        call, and start counting anew."""
        self._pipe.send("reset")
        return self._pipe.recv()

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._process.join(5)
        if self._process.is_alive():
            self._process.kill()
