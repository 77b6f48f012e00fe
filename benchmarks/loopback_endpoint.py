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


def completion(request: dict[str, Any], message: dict[str, Any]) -> bytes:
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
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": {
                "prompt_tokens": prompt,
                "completion_tokens": 20,
                "total_tokens": prompt + 20,
            },
        }
    )


class _Counts:
    def __init__(self) -> None:
        self.served = 0
        self.received = 0
        self.hanging = 0  # which request of the current block of `hang_every` hangs
        self.draws = random.Random(0)
        self.in_flight = 0
        self.max_in_flight = 0
        self.cpu_s = time.process_time()  # the endpoint process's, at the last reset


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    latency_s: float,
    answer: Answer,
    counts: _Counts,
    hang_every: int = 0,
) -> None:
    """Requests of one kept-alive connection, in turn: each held `latency_s`, then answered
    (with `hang_every`, one in that many never: the connection then waits for the client to
    give up on it)."""
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
            counts.in_flight += 1
            counts.max_in_flight = max(counts.max_in_flight, counts.in_flight)
            try:
                await asyncio.sleep(latency_s)
                request = orjson.loads(body)
                data = completion(request, answer(request))
            finally:
                counts.in_flight -= 1
            writer.write(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
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
    latency_s: float, answer: Answer, pipe, stop, port: int = 0, hang_every: int = 0
) -> None:
    """The endpoint's process: send the port, serve until `stop` is set, send the counts.

    A "reset" on the pipe zeroes the counts (one endpoint can serve several measured runs)."""

    async def main() -> None:
        counts = _Counts()
        server = await asyncio.start_server(
            lambda r, w: serve_connection(r, w, latency_s, answer, counts, hang_every),
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
        self, latency_s: float, answer: Answer, port: int = 0, hang_every: int = 0
    ) -> None:
        """`port` 0 takes a free one; a fixed one keeps the base URL, and so the requests'
        cache keys, the same from run to run (comparing a change's outputs byte for byte).
        `hang_every` N > 0: one request in N is never answered."""
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._stop = context.Event()
        self._process = context.Process(
            target=run_server,
            args=(latency_s, answer, theirs, self._stop, port, hang_every),
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
