"""Many LLM agent attempts at once (`llm_attempts`): against an endpoint that takes its time,
the episodes really overlap (the endpoint holds as many requests as the client's
concurrency), and the results are in input order and identical to playing the attempts one
after another, an attempt that failed included (in its place, as its error)."""

from __future__ import annotations

import zlib

import pytest

from synthesis.config import LLMSettings
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.client import LLMClient, LLMError
from synthesis.rollouts.attempts import llm_attempt, llm_attempts
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_rollouts import answer_asking_agent, answer_user_sim
from tests.fakes.openai_server import FakeOpenAIServer, Fault, final_answer, http_error, tool_call

CONCURRENCY = 4
# Attempt 0 of a multi-turn task meets its offline user, attempt 1 the model-worded one.
ATTEMPTS = 2


@pytest.fixture(scope="module")
def bookshop():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    state = build_initial_state(env, seed=2, index=0, records_per_entity=4)
    planned = execute_gold(env, plan_scenarios(env, state, seed=2, count=8, max_chain_length=4))
    published = [s for s in planned if s.status == "published"][:4]
    assert len(published) == 4
    assert any(s.user is not None for s in published)  # a multi-turn task among them
    jobs = [
        (s, derive_checks(s, model=model), attempt)
        for s in published
        for attempt in range(ATTEMPTS)
    ]
    return env, model, jobs


class Endpoint:
    """The model: asks a multi-turn task's user (one of the `openings`) for what it left
    out, makes 1-3 lookups (as many as its request's task text hashes to, so episodes end
    out of input order), then answers; each answer held `latency_s`. Every request about
    the `failing` task (its request or its user's opening) is refused (HTTP 400)."""

    def __init__(self, failing: tuple[str, ...], openings: set[str]) -> None:
        self.failing = failing  # texts of the failing task a request may carry
        self.openings = openings
        self.latency_s = 0.0

    def __call__(self, request: dict) -> dict | Fault:
        users = [m["content"] for m in request["messages"] if m["role"] == "user"]
        if any(f in text for f in self.failing for text in users):
            return http_error(400, "refused")
        message = answer_user_sim(request)
        if message is None and users[0] in self.openings:
            message = answer_asking_agent(request)
        if message is None:
            lookups = 1 + zlib.crc32(users[0].encode()) % 3
            made = sum(1 for m in request["messages"] if m["role"] == "tool")
            message = tool_call("list_books", {}) if made < lookups else final_answer("Done.")
        return Fault(hang_s=self.latency_s, message=message)


def _client(server, cache_dir) -> LLMClient:
    settings = LLMSettings(
        base_url=server.base_url, api_key="sk-test", model="fake-model", concurrency=CONCURRENCY
    )
    return LLMClient(settings, cache_dir=cache_dir)


def _sequential(env, model, jobs, client) -> list:
    out = []
    for scenario, checks, attempt in jobs:
        try:
            out.append(llm_attempt(env, scenario, checks, client, attempt, model=model))
        except LLMError as exc:
            out.append(exc)
    return out


def _comparable(result) -> object:
    if isinstance(result, LLMError):
        return ("error", type(result).__name__, str(result))
    return result.model_dump(mode="json")


def test_attempts_overlap_up_to_the_concurrency_and_come_back_in_input_order(bookshop, tmp_path):
    env, model, jobs = bookshop
    # A late single-turn task fails (its errors must not take another's place); the
    # multi-turn tasks play on, to meet their user.
    failing = next(s for s, _, _ in reversed(jobs) if s.user is None)
    openings = {s.user["opening"] for s, _, _ in jobs if s.user is not None}
    respond = Endpoint(failing=(failing.task_text,), openings=openings)
    with FakeOpenAIServer(respond) as server:
        respond.latency_s = 0.15
        together = llm_attempts(env, jobs, _client(server, tmp_path / "a"), model=model)
        assert server.max_in_flight == CONCURRENCY
        respond.latency_s = 0.0
        one_by_one = _sequential(env, model, jobs, _client(server, tmp_path / "b"))

    assert [_comparable(r) for r in together] == [_comparable(r) for r in one_by_one]
    for (scenario, _, attempt), result in zip(jobs, together, strict=True):
        if scenario is failing:
            assert isinstance(result, LLMError) and "http_400" in str(result)
        else:
            assert (result.scenario_id, result.attempt_seed) == (scenario.scenario_id, attempt)
    # The lookups really ran in the sandboxes, and multi-turn attempts met the user: the
    # offline one in attempt 0, the model-worded one after.
    done = [r for r in together if not isinstance(r, LLMError)]
    assert all(r.n_steps >= 1 for r in done)
    met = {r.attempt_seed: r.metadata["user_sim"] for r in done if r.metadata["turns"] > 1}
    assert met == {0: "offline", 1: "llm"}
