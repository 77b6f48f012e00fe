# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `env_spec` stage: a model's EnvSpec is kept only when our compiler can build it; a bad
one is repaired with its problems named, or rejected with them; the ids are always ours."""

from __future__ import annotations

import json

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.specgen import generate_spec, validate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.env_spec import (
    PROMPT,
    SCHEMA,
    STAGE,
    author_spec,
    authored_env_id,
    example_spec,
    program_shapes,
    request_messages,
    spec_fault,
)
from synthesis.llm.structured import response_format
from synthesis.models import EnvSpec
from tests.fakes.llm_environments import answer_env_spec
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error, scripted
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def topic():
    return next(t for t in load_catalogue() if t.topic_id == "bookshop")


def _spec_answer(value: dict) -> dict:
    return final_answer(json.dumps(value))


def _good(topic) -> dict:
    """The fake's answer for `topic`, as the stage requests it."""
    request = {"messages": request_messages(topic), "response_format": response_format(STAGE, {})}
    return json.loads(answer_env_spec(request)["content"])


def _broken(topic) -> dict:
    """The topic's spec with a tool on a missing entity and a query declared a write."""
    value = generate_spec(topic).model_dump(mode="json")
    value["tools"][0]["entity"] = "warehouse"
    query = next(t for t in value["tools"] if t["kind"] == "query" and t["operation"] == "list")
    query["kind"] = "mutate"
    return value


def test_the_schema_is_the_models_and_the_prompt_example_is_a_valid_spec():
    assert SCHEMA == EnvSpec.model_json_schema()
    example = EnvSpec.model_validate(example_spec())
    assert validate_spec(example) == [] and build_environment(example).status == "accepted"
    assert json.dumps(example_spec(), separators=(",", ":")) in PROMPT
    assert len(PROMPT) < 10_000  # a trimmed example, not a whole spec


def test_the_checks_name_every_problem(topic):
    good = generate_spec(topic).model_dump(mode="json")
    assert spec_fault(topic, good) is None
    assert spec_fault(topic, {**good, "entities": "none"}).startswith("model: entities:")
    problems = spec_fault(topic, _broken(topic))
    assert problems.startswith("invalid: ") and "unknown entity 'warehouse'" in problems
    # Only the compiled class shows a kind that disagrees with the code.
    wrong_kind = _broken(topic)
    wrong_kind["tools"][0] = good["tools"][0]
    assert "is declared mutate but the code is query" in spec_fault(topic, wrong_kind)
    assert spec_fault(topic, {**good, "kind": "workspace"}).startswith("kind:")


def test_a_valid_spec_compiles_under_our_ids(make_client, topic):
    with FakeOpenAIServer(answer_env_spec) as server:
        authored = author_spec(make_client(server), topic)
        (request,) = server.requests
    assert request["response_format"]["json_schema"] == {"name": STAGE, "schema": SCHEMA}
    assert authored.reason is None and authored.spec is not None
    spec = authored.spec
    # The answer carried the topic's offline id; the authored spec never does.
    assert spec.env_id == authored_env_id("bookshop") == "bookshop-llm-spec"
    assert spec.env_id != generate_spec(topic).env_id
    assert (spec.topic_id, spec.archetype) == ("bookshop", "order_lifecycle")
    assert [c.artifact_id for c in authored.attempts] == ["bookshop-llm-spec"]
    env = build_environment(spec)
    assert env.status == "accepted" and env.env_id == "bookshop-llm-spec"
    state = build_initial_state(env, seed=0, index=0, records_per_entity=3)
    assert state.state["orders"]


def test_an_invalid_spec_is_repaired_with_its_problems_named(make_client, topic):
    good = _good(topic)
    with FakeOpenAIServer(scripted(_spec_answer(_broken(topic)), _spec_answer(good))) as server:
        authored = author_spec(make_client(server), topic)
        repair = server.requests[1]["messages"][-1]["content"]
    assert authored.spec is not None and authored.reason is None
    assert "unknown entity 'warehouse'" in repair and "env_spec" in repair
    assert [c.status for c in authored.attempts] == ["rejected", "accepted"]


def test_a_spec_that_stays_invalid_is_rejected_with_the_problems(make_client, topic):
    with FakeOpenAIServer(lambda request: _spec_answer(_broken(topic))) as server:
        authored = author_spec(make_client(server), topic)
        assert len(server.requests) == 3  # the answer and two repairs
    assert authored.spec is None
    assert authored.reason.startswith("env_spec: invalid: no valid answer after 3 attempts")
    assert "unknown entity 'warehouse'" in authored.reason


def test_an_unreachable_endpoint_is_a_reason_not_a_traceback(make_client, topic):
    with FakeOpenAIServer(lambda request: http_error(500)) as server:
        authored = author_spec(make_client(server, retries=0), topic)
    assert authored.spec is None and authored.reason.startswith("env_spec: ")
    assert authored.attempts and all(
        c.artifact_id == "bookshop-llm-spec" for c in authored.attempts
    )


def test_a_copy_of_the_builds_own_program_is_repaired_then_refused(make_client, topic):
    generated = generate_spec(topic)
    taken = program_shapes([generated])
    copy = generated.model_dump(mode="json")  # the same program under the same names
    assert spec_fault(topic, copy) is None
    assert spec_fault(topic, copy, taken) == (
        f"duplicate: the same program as environment {generated.env_id} under other names; "
        "design other tools, rules or records"
    )
    # The fake's own design (one more tool) is another program: it is kept.
    assert spec_fault(topic, _good(topic), taken) is None
    with FakeOpenAIServer(scripted(_spec_answer(copy), _spec_answer(_good(topic)))) as server:
        authored = author_spec(make_client(server), topic, taken=taken)
        assert "duplicate:" in server.requests[1]["messages"][-1]["content"]
    assert authored.spec is not None
    assert [c.status for c in authored.attempts] == ["rejected", "accepted"]
