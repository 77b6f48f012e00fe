# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The build-wide breaker: requests the endpoint left unanswered (timeouts, refused
connections), counted across every stage and process of a build, stop every stage; an
endpoint that answers, even with an error status, does not trip it."""

from __future__ import annotations

import time

import pytest

from synthesis.config import LLMSettings
from synthesis.llm.client import CircuitOpen, LLMClient, LLMError, budget_for
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, hang, http_error, scripted
from tests.synthesis.llm.llm_support import USER

FAST = {"api_key": "sk-test", "model": "m", "timeout_s": 0.3, "retries": 0, "backoff_s": 0.0}


def _process_client(server, budget_path, **overrides) -> LLMClient:
    """A client as one asset run of a build has it: its own breakers, the build's account."""
    fields = {**FAST, **overrides}
    settings = LLMSettings(base_url=server.base_url, **fields)
    return LLMClient(settings, build_id="b1", budget=budget_for(settings, budget_path))


def _ask(client, stage, i=0):
    return client.chat(USER + [{"role": "user", "content": str(i)}], stage=stage, artifact_id="a")


def test_unanswered_requests_in_one_run_stop_every_stage_of_every_run(tmp_path):
    account = tmp_path / "b1.json"
    with FakeOpenAIServer(scripted(hang(30))) as server:
        scenarios_run = _process_client(server, account)
        for i in range(2):
            with pytest.raises(LLMError, match="timeout:"):
                _ask(scenarios_run, "task_text", i)
        trajectories_run = _process_client(server, account)  # another process, another stage
        started = time.monotonic()
        with pytest.raises(CircuitOpen, match="the endpoint left 2 requests in a row unanswered"):
            _ask(trajectories_run, "agent")
        assert time.monotonic() - started < 0.25  # failed fast, no timeout waited
        assert len(server.requests) == 2  # nothing more was sent
    assert trajectories_run.calls[-1].status == "skipped"


def test_an_answer_breaks_the_run_and_error_statuses_do_not_count(tmp_path):
    account = tmp_path / "b1.json"
    answers = scripted(hang(30), final_answer("ok"), hang(30), http_error(503), http_error(503))
    with FakeOpenAIServer(answers) as server:
        client = _process_client(server, account)
        with pytest.raises(LLMError, match="timeout:"):
            _ask(client, "task_text", 0)
        _ask(client, "task_text", 1)  # answered: the run of unanswered requests restarts
        with pytest.raises(LLMError, match="timeout:"):
            _ask(client, "task_text", 2)
        other = _process_client(server, account)
        for i in range(3):  # a 503 is an answer: the endpoint is up, stages go on
            with pytest.raises(LLMError, match="http_503"):
                _ask(other, f"stage{i}", i)
        assert len(server.requests) == 6
