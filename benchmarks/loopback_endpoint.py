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
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
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
        self.in_flight = 0
        self.max_in_flight = 0
        self.cpu_s = time.process_time()  # the endpoint process's, at the last reset


async def serve_connection(
    reader: asyncio.StreamReader,
    writer: asyncio.StreamWriter,
    latency_s: float,
    answer: Answer,
    counts: _Counts,
) -> None:
    """Requests of one kept-alive connection, in turn: each held `latency_s`, then answered."""
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


def run_server(latency_s: float, answer: Answer, pipe, stop, port: int = 0) -> None:
    """The endpoint's process: send the port, serve until `stop` is set, send the counts.

    A "reset" on the pipe zeroes the counts (one endpoint can serve several measured runs)."""

    async def main() -> None:
        counts = _Counts()
        server = await asyncio.start_server(
            lambda r, w: serve_connection(r, w, latency_s, answer, counts),
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

    def __init__(self, latency_s: float, answer: Answer, port: int = 0) -> None:
        """`port` 0 takes a free one; a fixed one keeps the base URL, and so the requests'
        cache keys, the same from run to run (comparing a change's outputs byte for byte)."""
        context = multiprocessing.get_context("spawn")
        self._pipe, theirs = context.Pipe()
        self._stop = context.Event()
        self._process = context.Process(
            target=run_server, args=(latency_s, answer, theirs, self._stop, port), daemon=True
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
