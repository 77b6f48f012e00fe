# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `initial_state` stage: model-written seed records are kept only when they are the
environment's collections with unique ids and sound references, load and dump unchanged in
the sandbox and pass the audit's probes; anything else is recorded with its reason and asked
again next time (never cached)."""

from __future__ import annotations

import json
from contextlib import contextmanager

import dagster as dg
import pytest

from assets import _settings
from assets import environments as environments_assets
from assets._resources import BuildSettings
from assets.environments import initial_states
from sandboxes import open_session
from synthesis.config import get_profile
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.runtime import sandbox_source
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.llm.initial_state import STAGE, write_initial_states
from synthesis.models import InitialState
from tests.fakes.llm_judging import answer_initial_state
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture


@pytest.fixture(scope="module")
def shop():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    return env, model_of(env), build_initial_state(env, seed=5, index=0, records_per_entity=3)


def _write(client, shop, count=1, env=None):
    base, model, example = shop
    return write_initial_states(client, env or base, model, example, count=count, seed=5)


def test_good_records_are_accepted_replayable_and_cached(make_client, shop):
    env, _, example = shop
    with FakeOpenAIServer(answer_initial_state) as server:
        out = _write(make_client(server), shop, count=2)
        assert len(server.requests) == 2
        assert {r["response_format"]["json_schema"]["name"] for r in server.requests} == {STAGE}
        again = _write(make_client(server), shop, count=2)
        assert len(server.requests) == 2  # the rebuild is answered by the cache
    assert out.rejections == []
    assert [s.state_id for s in out.states] == [f"{env.env_id}-llm-1", f"{env.env_id}-llm-2"]
    assert [s.state for s in again.states] == [s.state for s in out.states]
    first = out.states[0]
    assert first.state != example.state and first.provenance["generator"] == "llm:initial_state"
    assert set(first.state) == set(example.state)
    # Replayable: it survives the artifact's JSON and loads in the sandbox as written.
    stored = InitialState.model_validate(json.loads(json.dumps(first.model_dump(mode="json"))))
    with open_session(sandbox_source(env), stored.state) as session:
        reader = next(iter(stored.state["readers"]))
        found = session.call("find_reader_by_email", {"email": "nobody@example.com"})
        assert session.final_state()["readers"][reader] == stored.state["readers"][reader]
        assert found.ok and found.result["success"] is False
    assert {(c.stage, c.artifact_id) for c in out.attempts} == {(STAGE, env.env_id)}


def _good(request) -> dict:
    return json.loads(answer_initial_state(request)["content"])["state"]


def _duplicate_id(state):
    first, second = list(state["readers"])[:2]
    state["readers"][second]["id"] = first
    return state


def _unknown_collection(state):
    return {**state, "wishlists": {}}


def _dangling_reference(state):
    order = next(iter(state["orders"]))
    state["orders"][order]["reader_id"] = "RDR-9999"
    return state


@pytest.mark.parametrize(
    ("breaking", "kind"),
    [
        (_duplicate_id, "ids: duplicate readers id"),
        (_unknown_collection, "collections: unknown collection 'wishlists'"),
        (_dangling_reference, "references: orders reader_id 'RDR-9999' names no reader"),
    ],
    ids=["duplicate_id", "unknown_collection", "dangling_reference"],
)
def test_broken_records_are_rejected_with_the_reason_and_asked_again(
    make_client, shop, breaking, kind
):
    def respond(request):
        return final_answer(json.dumps({"state": breaking(_good(request))}))

    with FakeOpenAIServer(respond) as server:
        out = _write(make_client(server, repairs=1), shop)
        assert len(server.requests) == 2  # the answer, then one repair
        assert kind in server.requests[1]["messages"][-1]["content"]  # the model is told why
        _write(make_client(server, repairs=1), shop)
        assert len(server.requests) == 4  # nothing was cached: asked again
    assert out.states == []
    assert len(out.rejections) == 1 and out.rejections[0].startswith(f"{STAGE}: ")
    assert kind in out.rejections[0]


def test_records_the_environment_does_not_give_back_break_the_round_trip(make_client, shop):
    """An environment that normalises what it loads (prices to cents): a price it rounds
    does not come back as written, so the state is refused."""
    env, _, _ = shop
    loader = (
        "    def _load_scenario(self, state):\n"
        "        for key, records in state.items():\n"
        "            setattr(self, key, records)\n"
        "        for book in self.books.values():\n"
        "            book['price'] = round(float(book['price']), 2)\n\n"
        "    def _next_id("
    )
    rounding = env.model_copy(update={"code": env.code.replace("    def _next_id(", loader, 1)})

    def respond(request):
        state = _good(request)
        book = next(iter(state["books"]))
        state["books"][book]["price"] = 12.3456
        return final_answer(json.dumps({"state": state}))

    with FakeOpenAIServer(answer_initial_state) as server:
        assert _write(make_client(server), shop, env=rounding).rejections == []  # loads as is
    with FakeOpenAIServer(respond) as server:
        out = _write(make_client(server, repairs=0), shop, env=rounding)
    assert out.states == []
    assert out.rejections == [
        f"{STAGE}: round trip: no valid answer after 1 attempts "
        "(last: round trip: books is not what was loaded when dumped)"
    ]


def test_an_unanswered_stage_is_recorded_not_raised(make_client, shop):
    with FakeOpenAIServer(lambda request: http_error(500)) as server:
        out = _write(make_client(server, retries=0), shop, count=2)
    assert out.states == [] and len(out.rejections) == 2
    assert all(r.startswith(f"{STAGE}: ") for r in out.rejections)


# --------------------------------------------------------------------------- the asset


def _asset(tmp_path, env):
    return initial_states(
        context=dg.build_asset_context(partition_key=env.env_id),
        settings=BuildSettings(profile="tiny", seed=0, home=str(tmp_path)),
        sandbox_pool=None,
        environments=env.model_dump(mode="json", by_alias=True),
        env_sources={"foreign": []},
    ).value


def test_the_asset_appends_accepted_states_online_and_keeps_its_bytes_offline(
    make_client, tmp_path, shop, monkeypatch
):
    env, _, _ = shop
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    offline = _asset(tmp_path, env)
    assert set(offline) == {"states", "error"}  # offline: no new key, no new state

    def respond(request):
        # The first state is written well; the second names a collection there is not.
        good = _good(request)
        if "Write state number 2." in request["messages"][1]["content"]:
            good = _unknown_collection(good)
        return final_answer(json.dumps({"state": good}))

    with FakeOpenAIServer(respond) as server:

        @contextmanager
        def run(context, settings):
            yield make_client(server, repairs=0)

        monkeypatch.setattr(environments_assets, "llm_run", run)
        two = get_profile("tiny").model_copy(update={"llm_initial_states": 2})
        monkeypatch.setattr(_settings, "get_profile", lambda name: two)
        online = _asset(tmp_path, env)
    ids = [s["state_id"] for s in online["states"]]
    assert online["states"][: len(offline["states"])] == offline["states"]
    assert ids[len(offline["states"]) :] == [f"{env.env_id}-llm-1"]
    assert online["llm_rejections"] == [
        f"{STAGE}: collections: no valid answer after 1 attempts "
        "(last: collections: unknown collection 'wishlists')"
    ]
