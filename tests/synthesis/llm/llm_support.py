"""Shared by the LLM client tests (not a conftest: `conftest` is already tests/synthesis's module
name): a client against the loopback fake server, with short timeouts and fast backoff."""

from __future__ import annotations

import pytest

from synthesis.config import LLMSettings
from synthesis.llm.client import LLMClient


@pytest.fixture
def make_client(tmp_path):
    def make(server, **overrides) -> LLMClient:
        fields = {
            "base_url": server.base_url,
            "api_key": "sk-test",
            "model": "fake-model",
            "timeout_s": 2.0,
            "retries": 2,
            "backoff_s": 0.01,
            "backoff_max_s": 0.05,
        }
        settings = LLMSettings(**{**fields, **overrides})
        return LLMClient(settings, cache_dir=tmp_path / "cache", build_id="b1")

    return make


USER = [{"role": "user", "content": "hello"}]
