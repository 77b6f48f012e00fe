"""One HTTP request to an OpenAI-compatible endpoint: POST `{base_url}/chat/completions`.

Lean on purpose: the body is our JSON, the answer is read into the plain dict we need (the
assistant message, finish_reason, usage), with no SDK in between. 64 agent episodes share
one GIL, so the client's CPU per request bounds their rate, and the `openai` SDK (request
options, typed-model construction, its HTTP stack) cost most of it (measured in
benchmarks/rollouts.py). What the SDK did that matters is kept, and tested against it
(tests/synthesis/llm/test_llm_transport.py): the same URL, key header, body, answer dict and
failure reasons, so answers, ledger rows and cache keys are unchanged.

- `Transport` (blocking, many threads): one kept-alive `http.client` connection per thread,
  so threads never queue on a shared pool's lock; proxies from the environment (HTTP_PROXY,
  HTTPS_PROXY, ALL_PROXY, NO_PROXY) as urllib reads them; redirects are not followed (an API
  endpoint does not redirect; a 3xx is a failure with its status).
- `AsyncTransport` (asyncio): `httpx2` clients, a few per event loop.

Nothing retries here (synthesis.llm.client is the one place that does, so every attempt is
counted, budgeted and recorded). Failures come back as `TransportFailure` with a short kind
and whether trying again may help, mapped by the same functions for both transports.

A request's timeout is the client's to choose (synthesis.llm.timeouts); given `patience`, a
callable, the transport asks it again every RECHECK_S while no answer has come, and gives up
as soon as the time waited passes what it says: a request sent under the configured timeout
before the client had seen enough answers to adapt it is not held to that first timeout.
"""

from __future__ import annotations

import asyncio
import base64
import http.client
import itertools
import json
import math
import select
import threading
import time
import urllib.request
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit

import orjson

from synthesis import codec
from synthesis.llm.retry import retryable_status

# Where the SDK sent requests when given no base URL (synthesis.config resolves
# OPENAI_BASE_URL before this).
DEFAULT_BASE_URL = "https://api.openai.com/v1"
ROUTE = "chat/completions"
# A kept-alive connection idle longer than this is checked before reuse (a server closes idle
# ones: 5 s and more is usual); one used more recently is taken as open, as the check is a
# system call, and each costs a request a hand-off of the GIL among 64 threads.
IDLE_CHECK_S = 1.0
# How often a request waiting for its answer asks its `patience` again: the most a request
# outlives a shortened timeout by, at the cost of a wake-up per RECHECK_S of waiting (only
# requests sent with a `patience` wait this way).
RECHECK_S = 0.1

# The timeout a waiting request is held to now (seconds since it was sent, at most).
Patience = Callable[[], float]


@dataclass(frozen=True)
class RawAnswer:
    message: dict[str, Any]  # the assistant message: content and/or tool_calls
    finish_reason: str | None
    tokens_in: int
    tokens_out: int
    # Seconds from sending the request to the whole answer read (the client's latency
    # window: synthesis.llm.timeouts); not part of the answer, so not compared.
    elapsed_s: float = field(default=0.0, compare=False)


class TransportFailure(Exception):
    def __init__(self, reason: str, retryable: bool, timeout_s: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable
        self.timeout_s = timeout_s  # a timeout's: the time the request was given


def completions_url(base_url: str | None) -> str:
    """`{base_url}/chat/completions`, joined as the SDK joins it: the base path gets one
    trailing slash, then the route."""
    base = base_url or DEFAULT_BASE_URL
    return (base if base.endswith("/") else base + "/") + ROUTE


def _headers(api_key: str | None) -> dict[str, str]:
    # The key lives in this dict only: it is never logged, and no failure reason quotes it.
    return {
        "Authorization": f"Bearer {api_key or 'unused'}",
        "Content-Type": "application/json",
        "Accept": "application/json",
    }


class Transport:
    """Blocking requests, safe from many threads: each thread keeps its own connection."""

    def __init__(self, base_url: str | None, api_key: str | None) -> None:
        self.base_url = base_url
        self._url = urlsplit(completions_url(base_url))
        self._headers = _headers(api_key)
        self._target = self._url.path + (f"?{self._url.query}" if self._url.query else "")
        self._proxy = _proxy(self._url.scheme, self._url.hostname)
        if self._proxy is not None and self._url.scheme == "http":
            # Plain HTTP through a proxy: the request names the whole URL.
            self._target = self._url.geturl()
            self._headers.update(_proxy_headers(self._proxy))
        self._local = threading.local()
        # Every live thread's connection, for `close`; one whose thread ended goes with it
        # (the thread's local storage was its last holder), so pools of threads leak none.
        self._opened: weakref.WeakSet[http.client.HTTPConnection] = weakref.WeakSet()
        self._lock = threading.Lock()

    def send(
        self, request: dict[str, Any], timeout_s: float, patience: Patience | None = None
    ) -> RawAnswer:
        if self._url.scheme not in ("http", "https") or not self._url.hostname:
            raise ValueError(f"LLM base URL {self.base_url!r}: expected http(s)://host[:port]/...")
        body = codec.dumps(request)
        started = time.monotonic()
        connection = self._connection(timeout_s)
        given = timeout_s
        try:
            connection.request("POST", self._target, body, self._headers)
            if patience is not None:
                given = _await_answer(connection.sock, started, timeout_s, patience)
            response = connection.getresponse()
            data = response.read()
            self._local.used_at = time.monotonic()
        except _Expired as expired:
            connection.close()  # the answer may still come: this connection cannot take it
            raise _timeout(expired.given) from None
        except TimeoutError:
            connection.close()
            raise _timeout(given) from None
        except (OSError, http.client.HTTPException):
            connection.close()  # reopened by the thread's next request
            raise _connection_error() from None
        answer = _answer(response.status, response.getheader("content-type"), data)
        return _timed(answer, self._local.used_at - started)

    def close(self) -> None:
        """Close every thread's connection (a later request opens a new one)."""
        with self._lock:
            opened = list(self._opened)
            self._opened.clear()
        for connection in opened:
            connection.close()

    def _connection(self, timeout_s: float) -> http.client.HTTPConnection:
        """The calling thread's connection, with `timeout_s` for each phase (connect, send,
        each read) as the SDK had it."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            connection = self._local.connection = self._open(timeout_s)
            self._local.used_at = time.monotonic()
            with self._lock:
                self._opened.add(connection)
        elif (
            connection.sock is not None
            and time.monotonic() - self._local.used_at > IDLE_CHECK_S
            and _readable(connection.sock)
        ):
            connection.close()  # the server closed it while idle: connect again
        if connection.timeout != timeout_s:
            connection.timeout = timeout_s
            if connection.sock is not None:
                connection.sock.settimeout(timeout_s)
        return connection

    def _open(self, timeout_s: float) -> http.client.HTTPConnection:
        url, proxy = self._url, self._proxy
        host, port = url.hostname or "", url.port
        if url.scheme == "http":
            if proxy is None:
                return http.client.HTTPConnection(host, port, timeout=timeout_s)
            return http.client.HTTPConnection(proxy.hostname, proxy.port, timeout=timeout_s)
        if proxy is None:
            return http.client.HTTPSConnection(host, port, timeout=timeout_s, context=_tls())
        tunnel = http.client.HTTPSConnection(
            proxy.hostname, proxy.port, timeout=timeout_s, context=_tls()
        )
        tunnel.set_tunnel(host, port, headers=_proxy_headers(proxy))
        return tunnel


class AsyncTransport:
    """The asyncio twin of `Transport`: `pools` lazily built `httpx2.AsyncClient`s per event
    loop, taken in turn.

    A client's connection pool belongs to the loop that opened it, so a client reused from
    another loop (another thread's `asyncio.run`) would fail; small pools are cheaper per
    request (see synthesis.llm.client.REQUESTS_PER_POOL); `aclose` releases the calling
    loop's clients."""

    def __init__(self, base_url: str | None, api_key: str | None, pools: int = 1) -> None:
        self.base_url = base_url
        self._url = completions_url(base_url)
        self._headers = _headers(api_key)
        self._pools = pools
        self._clients: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        self._turns = itertools.count()
        self._lock = threading.Lock()

    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            for closed in [other for other in self._clients if other.is_closed()]:
                del self._clients[closed]  # a finished asyncio.run: its pool is gone too
            if loop not in self._clients:
                import httpx2

                # The SDK's pool limits; redirects followed and proxies read from the
                # environment, as its clients did.
                limits = httpx2.Limits(max_connections=1000, max_keepalive_connections=100)
                self._clients[loop] = [
                    httpx2.AsyncClient(limits=limits, follow_redirects=True)
                    for _ in range(self._pools)
                ]
            clients = self._clients[loop]
            return clients[next(self._turns) % len(clients)]

    async def send(
        self, request: dict[str, Any], timeout_s: float, patience: Patience | None = None
    ) -> RawAnswer:
        import httpx2

        body = codec.dumps(request)
        loop = asyncio.get_running_loop()
        started = loop.time()
        given = [timeout_s]  # the time the request is given, as `patience` shortens it
        recheck: asyncio.TimerHandle | None = None
        try:
            # httpx2's timeout bounds each phase (connect, each read); the outer one bounds
            # the whole request, so a server that trickles bytes cannot outlast the deadline.
            async with asyncio.timeout(timeout_s) as scope:
                if patience is not None:

                    def shorten() -> None:
                        nonlocal recheck
                        if scope.expired():
                            return  # timed out already: the request is being cancelled
                        now = min(timeout_s, patience())
                        if now < given[0]:
                            given[0] = now
                            scope.reschedule(started + now)  # past: it fires at once
                        recheck = loop.call_later(RECHECK_S, shorten)

                    recheck = loop.call_later(RECHECK_S, shorten)
                response = await self._client().post(
                    self._url, content=body, headers=self._headers, timeout=timeout_s
                )
        except (TimeoutError, httpx2.TimeoutException):  # asyncio.timeout raises TimeoutError
            raise _timeout(given[0]) from None
        except (OSError, httpx2.RequestError):
            raise _connection_error() from None
        finally:
            if recheck is not None:
                recheck.cancel()
        answer = _answer(
            response.status_code, response.headers.get("content-type"), response.content
        )
        return _timed(answer, loop.time() - started)

    async def aclose(self) -> None:
        """Close the calling loop's clients (their open connections); a later call opens
        new ones."""
        with self._lock:
            clients = self._clients.pop(asyncio.get_running_loop(), [])
        for client in clients:
            await client.aclose()


# --- the answer and the failures, alike for both transports -----------------------------------
# The reasons are the SDK's words (they are ledger rows and error messages): a timeout, a
# connection that failed ("Connection error."), an error status with the body's
# error.message, a body that is not a chat completion.


def _timeout(timeout_s: float) -> TransportFailure:
    return TransportFailure(f"timeout: no answer within {timeout_s:.1f}s", True, timeout_s)


def _timed(answer: RawAnswer, elapsed_s: float) -> RawAnswer:
    return RawAnswer(
        answer.message, answer.finish_reason, answer.tokens_in, answer.tokens_out, elapsed_s
    )


def _connection_error() -> TransportFailure:
    return TransportFailure("connection: Connection error.", True)


def _answer(status: int, content_type: str | None, data: bytes) -> RawAnswer:
    """The answer of a completed HTTP exchange, or the TransportFailure it is."""
    if not 200 <= status < 300:
        message = _status_message(status, content_type, data)
        raise TransportFailure(f"http_{status}: {_short(message)}", retryable_status(status))
    try:
        body = orjson.loads(data)
    except orjson.JSONDecodeError:
        body = _stdlib_json(data, content_type)
    return _raw_answer(body)


def _raw_answer(body: Any) -> RawAnswer:
    choices = body.get("choices") if isinstance(body, dict) else None
    if not choices:
        raise TransportFailure("malformed: the answer has no choices", True)
    choice = choices[0] if isinstance(choices, list) else None
    message = choice.get("message") if isinstance(choice, dict) else None
    if not isinstance(message, dict):
        raise TransportFailure("malformed: the answer's first choice has no message", True)
    message = _model(message, _MESSAGE)
    message.setdefault("role", "assistant")
    usage = body.get("usage")
    usage = usage if isinstance(usage, dict) else {}
    return RawAnswer(
        message=message,
        finish_reason=choice.get("finish_reason"),
        tokens_in=int(usage.get("prompt_tokens") or 0),
        tokens_out=int(usage.get("completion_tokens") or 0),
    )


# The assistant message as the SDK's typed model dumped it (`model_dump(exclude_none=True)`):
# its declared fields in declaration order, then the server's extra fields; a null field
# dropped at every level of the model (not inside an extra field's own value).
_FUNCTION = (("arguments", "name"), {})
_TOOL_CALLS = {
    "function": (("id", "function", "type"), {"function": _FUNCTION}),
    "custom": (("id", "custom", "type"), {"custom": (("input", "name"), {})}),
}
_ANNOTATION = (
    ("type", "url_citation"),
    {"url_citation": (("end_index", "start_index", "title", "url"), {})},
)
_MESSAGE = (
    ("content", "refusal", "role", "annotations", "audio", "function_call", "tool_calls"),
    {
        "annotations": _ANNOTATION,
        "audio": (("id", "data", "expires_at", "transcript"), {}),
        "function_call": _FUNCTION,
        "tool_calls": _TOOL_CALLS,
    },
)


def _model(value: Any, shape: Any) -> Any:
    """`value` as the SDK dumped a model of `shape` ((fields, nested shapes)); a list is a
    list of such models, and a dict of shapes (tool calls) is chosen by the value's type."""
    if isinstance(value, list):
        return [_model(item, shape) for item in value]
    if not isinstance(value, dict):
        return value
    if isinstance(shape, dict):  # a union of models told apart by "type"
        shape = shape.get(value.get("type"), shape["function"])
    fields, nested = shape
    out = {}
    for name in fields:
        field = value.get(name)
        if field is not None:
            out[name] = _model(field, nested[name]) if name in nested else field
    for name, field in value.items():
        if field is not None and name not in out and name not in fields:
            out[name] = field
    return out


def _status_message(status: int, content_type: str | None, data: bytes) -> str:
    """The SDK's message for an error status: the code, and the body's error.message."""
    message = f"Error code: {status}"
    text = data.decode(_charset(content_type), errors="replace").strip()
    try:
        body = json.loads(text)
    except ValueError:
        return message
    error = body.get("error", body) if isinstance(body, dict) else None
    detail = error.get("message") if isinstance(error, dict) else None
    if isinstance(detail, str) and detail:
        message += f" - {detail}"
    return message


def _stdlib_json(data: bytes, content_type: str | None) -> Any:
    """A body orjson refused, read as the SDK read it (the standard library's `json`, which
    also takes NaN and numbers past 64 bits), or the failure the SDK reported: a body that
    claims to be JSON fails with json's words; one that does not was handed back as text,
    which has no choices."""
    try:
        return json.loads(data)
    except ValueError as exc:
        if (content_type or "*").split(";")[0].endswith("json"):
            raise TransportFailure(f"malformed: {_short(str(exc))}", True) from None
        raise TransportFailure("malformed: the answer has no choices", True) from None


def _charset(content_type: str | None) -> str:
    for part in (content_type or "").split(";")[1:]:
        name, _, value = part.strip().partition("=")
        if name.lower() == "charset" and value:
            return value.strip('"')
    return "utf-8"


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


# --- connections --------------------------------------------------------------------------------


def _await_answer(sock: Any, started: float, timeout_s: float, patience: Patience) -> float:
    """Wait until the answer starts to arrive on `sock`, asking `patience` again every
    RECHECK_S; TimeoutError once the time waited since `started` passes it. Returns the
    time the request was given (the socket's own timeout then bounds each read)."""
    given = timeout_s
    if sock is None or (hasattr(sock, "pending") and sock.pending()):
        return given  # no socket to watch, or TLS bytes already read and waiting
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    while True:
        given = min(given, patience())
        left = started + given - time.monotonic()
        if left <= 0:
            raise _Expired(given)
        if poller.poll(math.ceil(min(left, RECHECK_S) * 1000)):
            return given


class _Expired(TimeoutError):
    """A request's shortened timeout passed (`given`: the time it had)."""

    def __init__(self, given: float) -> None:
        super().__init__(given)
        self.given = given


def _readable(sock: Any) -> bool:
    """Whether an idle kept-alive socket has something to read: the server closed it."""
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    return bool(poller.poll(0))


def _proxy(scheme: str, host: str | None) -> Any:
    """The proxy the environment names for `scheme://host`, or None."""
    proxies = urllib.request.getproxies_environment()
    if not host or urllib.request.proxy_bypass_environment(host, proxies):
        return None
    proxy = proxies.get(scheme) or proxies.get("all")
    if not proxy:
        return None
    return urlsplit(proxy if "://" in proxy else f"http://{proxy}")


def _proxy_headers(proxy: Any) -> dict[str, str]:
    if proxy.username is None:
        return {}
    credentials = f"{unquote(proxy.username)}:{unquote(proxy.password or '')}"
    return {"Proxy-Authorization": "Basic " + base64.b64encode(credentials.encode()).decode()}


def _tls() -> Any:
    """The TLS settings the SDK's HTTP stack used (its CA store, SSL_CERT_FILE/DIR)."""
    import httpx2

    return httpx2.create_ssl_context()
