"""One HTTP request to an OpenAI-compatible endpoint, through the `openai` SDK.

The SDK's own retries are off (max_retries=0): synthesis.llm.client is the one place that
retries, so every attempt is counted, budgeted and recorded. Failures come back as
`TransportFailure` with a short kind and whether trying again may help.
"""

from __future__ import annotations

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
        import openai

        try:
            response = self._sdk().chat.completions.create(**request, timeout=timeout_s)
        except openai.APITimeoutError:
            raise TransportFailure(f"timeout: no answer within {timeout_s:.1f}s", True) from None
        except openai.APIConnectionError as exc:
            raise TransportFailure(f"connection: {exc}", True) from None
        except openai.APIStatusError as exc:
            status = exc.status_code
            raise TransportFailure(
                f"http_{status}: {_short(exc.message)}", retryable_status(status)
            ) from None
        except (openai.APIResponseValidationError, ValueError) as exc:
            # A body that is not a chat completion (truncated, not JSON): a glitch, retried.
            raise TransportFailure(f"malformed: {_short(str(exc))}", True) from None
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
