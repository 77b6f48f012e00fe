"""The LLM client: any OpenAI-compatible endpoint, a content-addressed cache, and accounting.

Every request is hashed (endpoint, model, messages, tools, sampling); the answer is stored
under that hash, so the same request gives the same answer and costs zero tokens on a re-run,
which is what keeps LLM-backed builds reproducible. Every call, cached or not, becomes an
`LLMCall` record (tokens, cost, latency, stage, artifact) for the warehouse's llm_calls table.
"""

from __future__ import annotations

import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.config import LLMSettings
from synthesis.hashing import content_hash, short_id


class LLMError(RuntimeError):
    """The endpoint could not answer (after retries), or answered something unusable."""


@dataclass
class LLMCall:
    call_id: str
    stage: str
    artifact_id: str | None
    model: str
    tokens_in: int
    tokens_out: int
    cost_usd: float
    latency_ms: float
    cache_hit: bool
    request_sha256: str

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ChatAnswer:
    message: dict[str, Any]  # the assistant message: content and/or tool_calls
    call: LLMCall


@dataclass
class LLMClient:
    settings: LLMSettings
    cache_dir: Path | None = None
    calls: list[LLMCall] = field(default_factory=list)
    _client: Any = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def _openai(self) -> Any:
        if self._client is None:
            from openai import OpenAI  # imported on first use: offline builds never need it

            self._client = OpenAI(
                base_url=self.settings.base_url,
                api_key=self.settings.api_key or "unused",
                timeout=self.settings.timeout_s,
                max_retries=self.settings.max_retries,
            )
        return self._client

    def chat(
        self,
        messages: list[dict[str, Any]],
        *,
        stage: str,
        artifact_id: str | None,
        tools: list[dict[str, Any]] | None = None,
        temperature: float = 0.0,
        seed: int = 0,
    ) -> ChatAnswer:
        request = {
            "base_url": self.settings.base_url,
            "model": self.settings.model,
            "messages": messages,
            "tools": tools or [],
            "temperature": temperature,
            "seed": seed,
        }
        digest = content_hash(request)
        cached = self._cache_read(digest)
        started = time.perf_counter()
        if cached is not None:
            message, tokens_in, tokens_out, hit = cached["message"], 0, 0, True
        else:
            message, tokens_in, tokens_out = self._request(messages, tools, temperature, seed)
            hit = False
            self._cache_write(
                digest, {"message": message, "tokens_in": tokens_in, "tokens_out": tokens_out}
            )
        call = LLMCall(
            # Within one artifact a request never repeats (the conversation grows), so this is
            # unique and, unlike a counter, independent of the order concurrent rollouts run.
            call_id=short_id("llm", digest, stage, artifact_id),
            stage=stage,
            artifact_id=artifact_id,
            model=self.settings.model,
            tokens_in=tokens_in,
            tokens_out=tokens_out,
            cost_usd=round(
                tokens_in * self.settings.price_in_per_mtok / 1e6
                + tokens_out * self.settings.price_out_per_mtok / 1e6,
                8,
            ),
            latency_ms=round((time.perf_counter() - started) * 1000, 3),
            cache_hit=hit,
            request_sha256=digest,
        )
        with self._lock:
            self.calls.append(call)
        return ChatAnswer(message=message, call=call)

    def _request(self, messages, tools, temperature, seed) -> tuple[dict[str, Any], int, int]:
        kwargs: dict[str, Any] = {
            "model": self.settings.model,
            "messages": messages,
            "temperature": temperature,
            "seed": seed,
        }
        if tools:
            kwargs["tools"] = tools
        try:
            response = self._openai().chat.completions.create(**kwargs)
        except Exception as exc:  # noqa: BLE001 - the SDK's errors vary by transport
            raise LLMError(f"{self.settings.base_url}: {type(exc).__name__}: {exc}") from exc
        if not getattr(response, "choices", None):
            raise LLMError(f"{self.settings.base_url}: answer has no choices")
        message = response.choices[0].message.model_dump(exclude_none=True)
        message.setdefault("role", "assistant")
        usage = getattr(response, "usage", None)
        return (
            message,
            int(getattr(usage, "prompt_tokens", 0) or 0),
            int(getattr(usage, "completion_tokens", 0) or 0),
        )

    def _cache_path(self, digest: str) -> Path | None:
        return None if self.cache_dir is None else self.cache_dir / digest[:2] / f"{digest}.json"

    def _cache_read(self, digest: str) -> dict[str, Any] | None:
        path = self._cache_path(digest)
        if path is None or not path.exists():
            return None
        return codec.read_json(path)

    def _cache_write(self, digest: str, entry: dict[str, Any]) -> None:
        path = self._cache_path(digest)
        if path is not None:
            codec.write_json(path, entry)
