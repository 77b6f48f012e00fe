"""One HTTP request to an OpenAI-compatible endpoint, through the `openai` SDK (sync or async).

The SDK's own retries are off (max_retries=0): synthesis.llm.client is the one place that
retries, so every attempt is counted, budgeted and recorded. Failures come back as
`TransportFailure` with a short kind and whether trying again may help; both transports map
the SDK's answers and errors through the same two functions, so they fail alike.
"""

from __future__ import annotations

import asyncio
import itertools
import threading
from dataclasses import dataclass
from typing import Any

from synthesis.llm.retry import retryable_status


@dataclass(frozen=True)
class RawAnswer:
    message: dict[str, Any]  # the assistant message: content and/or tool_calls
    finish_reason: str | None
    tokens_in: int
    tokens_out: int


class TransportFailure(Exception):
    def __init__(self, reason: str, retryable: bool) -> None:
        super().__init__(reason)
        self.reason = reason
        self.retryable = retryable


class Transport:
    """A lazily built SDK client; offline builds never import `openai`."""

    def __init__(self, base_url: str | None, api_key: str | None) -> None:
        self.base_url = base_url
        self._api_key = api_key
        self._client: Any = None
        self._lock = threading.Lock()

    def _sdk(self) -> Any:
        with self._lock:
            if self._client is None:
                from openai import OpenAI

                self._client = OpenAI(
                    base_url=self.base_url, api_key=self._api_key or "unused", max_retries=0
                )
            return self._client

    def send(self, request: dict[str, Any], timeout_s: float) -> RawAnswer:
        try:
            response = self._sdk().post(
                "/chat/completions",
                cast_to=_chat_completion(),
                body=request,
                options={"timeout": timeout_s},
            )
        except Exception as exc:
            raise _failure(exc, timeout_s) or exc from None
        return _raw_answer(response)


class AsyncTransport:
    """The asyncio twin of `Transport`: one lazily built `AsyncOpenAI` per event loop.

    An SDK async client's connection pool belongs to the loop that opened it, so a client
    reused from another loop (another thread's `asyncio.run`) would fail; each running loop
    gets its own `pools` clients, taken in turn (small pools are cheaper per request: see
    synthesis.llm.client.REQUESTS_PER_POOL), and `aclose` releases the calling loop's ones."""

    def __init__(self, base_url: str | None, api_key: str | None, pools: int = 1) -> None:
        self.base_url = base_url
        self._api_key = api_key
        self._pools = pools
        self._clients: dict[asyncio.AbstractEventLoop, list[Any]] = {}
        self._turns = itertools.count()
        self._lock = threading.Lock()

    def _sdk(self) -> Any:
        loop = asyncio.get_running_loop()
        with self._lock:
            for closed in [other for other in self._clients if other.is_closed()]:
                del self._clients[closed]  # a finished asyncio.run: its pool is gone too
            if loop not in self._clients:
                from openai import AsyncOpenAI

                self._clients[loop] = [
                    AsyncOpenAI(
                        base_url=self.base_url, api_key=self._api_key or "unused", max_retries=0
                    )
                    for _ in range(self._pools)
                ]
            clients = self._clients[loop]
            return clients[next(self._turns) % len(clients)]

    async def send(self, request: dict[str, Any], timeout_s: float) -> RawAnswer:
        try:
            # The SDK's timeout bounds each phase (connect, each read); the outer one bounds
            # the whole request, so a server that trickles bytes cannot outlast the deadline.
            async with asyncio.timeout(timeout_s):
                response = await self._sdk().post(
                    "/chat/completions",
                    cast_to=_chat_completion(),
                    body=request,
                    options={"timeout": timeout_s},
                )
        except Exception as exc:  # TimeoutError included: asyncio.timeout raises it
            raise _failure(exc, timeout_s) or exc from None
        return _raw_answer(response)

    async def aclose(self) -> None:
        """Close the calling loop's SDK clients (their open connections); a later call opens
        new ones."""
        with self._lock:
            clients = self._clients.pop(asyncio.get_running_loop(), [])
        for client in clients:
            await client.close()


def _chat_completion() -> type:
    """What the answer is parsed into. The request goes through the SDK's `post`, not
    `chat.completions.create`: `create` walks every message of the conversation to transform
    typed params our plain JSON never needs, a cost that grows with each turn of an agent
    episode (measured: most of the SDK's CPU per request); the body sent is the same."""
    from openai.types.chat import ChatCompletion

    return ChatCompletion


def _failure(exc: Exception, timeout_s: float) -> TransportFailure | None:
    """The SDK's exception as a TransportFailure, or None when it is not one of the failures
    a server or network causes (our bug: the caller raises it as is)."""
    import openai

    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return TransportFailure(f"timeout: no answer within {timeout_s:.1f}s", True)
    if isinstance(exc, openai.APIConnectionError):
        return TransportFailure(f"connection: {exc}", True)
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        return TransportFailure(f"http_{status}: {_short(exc.message)}", retryable_status(status))
    if isinstance(exc, openai.APIResponseValidationError | ValueError):
        # A body that is not a chat completion (truncated, not JSON): a glitch, retried.
        return TransportFailure(f"malformed: {_short(str(exc))}", True)
    return None


def _raw_answer(response: Any) -> RawAnswer:
    choices = getattr(response, "choices", None)
    if not choices:
        raise TransportFailure("malformed: the answer has no choices", True)
    choice = choices[0]
    message = choice.message.model_dump(exclude_none=True)
    message.setdefault("role", "assistant")
    usage = getattr(response, "usage", None)
    return RawAnswer(
        message=message,
        finish_reason=getattr(choice, "finish_reason", None),
        tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
        tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
    )


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
