# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""Structured answers: json_schema response format named after the stage, validated, repaired."""

from __future__ import annotations

import json

import pytest

from synthesis.llm.client import LLMRejected
from synthesis.llm.structured import ask_structured
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, scripted
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture

SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}, "score": {"type": "number"}},
    "required": ["name", "score"],
    "additionalProperties": False,
}
ASK = [{"role": "user", "content": "name a topic"}]
GOOD = final_answer(json.dumps({"name": "library", "score": 0.8}))


def test_violations_are_repaired_with_the_error_shown_and_each_attempt_recorded(make_client):
    answers = scripted(final_answer('{"name": "lib'), final_answer('{"name": 3}'), GOOD)
    with FakeOpenAIServer(answers) as server:
        client = make_client(server)
        answer = ask_structured(client, ASK, stage="topic", artifact_id="t1", schema=SCHEMA)
    assert answer.value == {"name": "library", "score": 0.8}
    fmt = server.requests[0]["response_format"]
    assert fmt["type"] == "json_schema" and fmt["json_schema"]["name"] == "topic"
    assert [c.status for c in answer.attempts] == ["rejected", "rejected", "accepted"]
    assert answer.attempts[0].reason.startswith("json:")
    assert answer.attempts[1].reason.startswith("schema:")
    repair = server.requests[2]["messages"][-1]["content"]
    assert "rejected (schema:" in repair and "`topic` schema" in repair


def test_repairs_are_bounded(make_client):
    with FakeOpenAIServer(scripted(final_answer('{"name": 1}'))) as server:
        client = make_client(server, repairs=1)
        with pytest.raises(LLMRejected, match="no valid answer after 2 attempts") as caught:
            ask_structured(client, ASK, stage="topic", artifact_id="t1", schema=SCHEMA)
    assert len(server.requests) == 2 and len(caught.value.attempts) == 2


def test_only_the_valid_answer_is_cached(make_client):
    with FakeOpenAIServer(scripted(final_answer("{}"), GOOD)) as server:
        first = ask_structured(
            make_client(server), ASK, stage="topic", artifact_id="t1", schema=SCHEMA
        )
        assert [c.status for c in first.attempts] == ["rejected", "accepted"]
        # The first question's answer ("{}") was rejected, so a rerun asks it again.
        again = ask_structured(
            make_client(server), ASK, stage="topic", artifact_id="t1", schema=SCHEMA
        )
    assert again.value == first.value
    assert [c.status for c in again.attempts] == ["accepted"]
    assert len(server.requests) == 3


def test_a_cached_answer_a_stricter_check_refuses_is_asked_again(make_client):
    with FakeOpenAIServer(scripted(GOOD)) as server:
        ask_structured(make_client(server), ASK, stage="topic", artifact_id="t1", schema=SCHEMA)
        # The stage's rules changed since: the cached answer no longer passes them.
        with pytest.raises(LLMRejected, match="stricter"):
            ask_structured(
                make_client(server, repairs=0),
                ASK,
                stage="topic",
                artifact_id="t1",
                schema=SCHEMA,
                accept=lambda value: "stricter: refused",
            )
        assert len(server.requests) == 2  # asked again, not served from the cache
        again = ask_structured(
            make_client(server), ASK, stage="topic", artifact_id="t1", schema=SCHEMA
        )
    assert [c.status for c in again.attempts] == ["cached"]  # the old answer stays cached
