# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""The `topic` stage: requests from a task corpus become topics the offline spec generator
compiles; stateless, duplicate, rejected and cut requests are dropped, each with its reason,
and a rejected answer is asked again next time."""

from __future__ import annotations

import json

import pytest

from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.llm.topic_mining import (
    CORPUS_PATH,
    STAGE,
    Candidate,
    CorpusRequest,
    answer_fault,
    load_corpus,
    mine_corpus,
    mine_topics,
    near_duplicates,
    select,
)
from tests.fakes.llm_topics import answer_topic, request_text, topic_value
from tests.fakes.openai_server import FakeOpenAIServer, final_answer, http_error
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture

STATELESS = {
    "req-003", "req-006", "req-009", "req-013", "req-016", "req-020",
    "req-023", "req-028", "req-031", "req-037", "req-041",
}  # fmt: skip


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


@pytest.fixture(scope="module")
def corpus():
    requests, malformed = load_corpus()
    assert malformed == []
    return requests


def _reasons(mined) -> dict[str, str]:
    return {d.id: d.reason for d in mined.dropped}


def _candidate(rid: str, usefulness: float, title: str, archetype: str = "booking") -> Candidate:
    request = CorpusRequest(rid, f"request {rid}", int(rid.rsplit("-", 1)[-1]))
    return Candidate(request, archetype, title, f"People use the {title.lower()}.", usefulness)


def test_the_shipped_corpus_mixes_stateful_stateless_and_near_duplicate_requests(corpus):
    assert 35 <= len(corpus) <= 50
    unique, dropped = near_duplicates(corpus)
    assert {d.id: d.reason for d in dropped} == {
        "req-011": "duplicate: of req-002 (near-identical request)",
        "req-039": "duplicate: of req-007 (near-identical request)",
    }
    assert len(unique) == len(corpus) - 2


def test_a_malformed_corpus_line_is_skipped_with_its_line_and_problem(tmp_path):
    path = tmp_path / "corpus.jsonl"
    lines = [
        '{"id": "a", "request": "Cancel my dentist appointment on Friday."}',
        "{not json",
        '["a list"]',
        '{"id": "", "request": "x"}',
        "",
        '{"id": "b", "request": "   "}',
        '{"id": "a", "request": "Book a haircut at the barber."}',
        '{"id": "c", "request": "Refund my bakery order."}',
    ]
    path.write_text("\n".join(lines) + "\n")
    requests, malformed = load_corpus(path)
    assert [(r.id, r.line) for r in requests] == [("a", 1), ("c", 8)]
    reasons = {d.id: d.reason for d in malformed}
    assert reasons["line 2"].startswith("malformed: corpus.jsonl line 2: not JSON")
    assert reasons["line 3"] == (
        "malformed: corpus.jsonl line 3: expected an object with 'id' and 'request', got list"
    )
    assert reasons["line 4"].endswith("'id' must be a non-empty text, not ''")
    assert (
        reasons["b"]
        == "malformed: corpus.jsonl line 6: 'request' must be a non-empty text, not '   '"
    )
    assert reasons["line 7"] == "malformed: corpus.jsonl line 7: duplicate id 'a'"
    assert len(malformed) == 5


def test_an_unreadable_corpus_is_one_reason_not_an_error(make_client, tmp_path, catalogue):
    with FakeOpenAIServer(answer_topic) as server:
        mined = mine_corpus(make_client(server), tmp_path / "missing.jsonl", catalogue, 3)
        assert server.requests == []
    assert mined.topics == []
    assert [d.id for d in mined.dropped] == ["corpus"]
    assert mined.dropped[0].reason.startswith("corpus: cannot read ")


def test_the_stage_checks_name_each_fault():
    good = topic_value("Please cancel my haircut at the barber.", sorted(supported_archetypes()))
    assert answer_fault(good) is None
    assert answer_fault({**good, "archetype": "none"}).startswith("archetype:")
    assert answer_fault({**good, "title": "  "}) == "title: empty"
    assert answer_fault({**good, "title": "Barber" * 14}).startswith("title: 84 characters")
    assert answer_fault({**good, "title": "理髪店"}).startswith("title: ")
    assert answer_fault({**good, "description": ""}).startswith("description:")
    # A stateless answer is used (dropped as stateless) whatever its title says.
    assert answer_fault({**good, "stateful": False, "title": ""}) is None


def test_the_corpus_mines_compiling_topics_and_says_why_for_every_other_request(
    make_client, corpus, catalogue
):
    with FakeOpenAIServer(answer_topic) as server:
        mined = mine_topics(make_client(server), corpus, catalogue, 3)
        asked = [request_text(r) for r in server.requests]
        schema = server.requests[0]["response_format"]["json_schema"]
    assert schema["name"] == STAGE
    assert schema["schema"]["properties"]["archetype"]["enum"] == [
        *sorted(supported_archetypes()),
        "none",
    ]
    # Near-identical requests are never sent; every other request is asked once.
    assert len(asked) == len(corpus) - 2 == len(set(asked))
    assert {c.artifact_id for c in mined.attempts} == {
        r.id for r in corpus if r.id not in {"req-011", "req-039"}
    }
    assert [t.topic_id for t in mined.topics] == [
        "mined_broadband_support",
        "mined_expense_approvals",
        "mined_flower_shop",
    ]
    for topic in mined.topics:
        assert generate_spec(topic).env_id == f"{topic.topic_id}-{topic.archetype}"
    reasons = _reasons(mined)
    assert len(reasons) + len(mined.topics) == len(corpus)
    assert {rid for rid, r in reasons.items() if r.startswith("stateless: ")} == STATELESS
    assert reasons["req-026"] == "duplicate: of req-001 (same topic 'Dental clinic', booking)"
    assert reasons["req-032"] == reasons["req-026"]
    assert reasons["req-024"] == "cut: rank 4 of 27 (usefulness 0.70); the profile takes 3"
    kinds = {r.split(":", 1)[0] for r in reasons.values()}
    assert kinds == {"stateless", "duplicate", "cut"}


def test_ranking_and_the_cut_are_deterministic(catalogue):
    candidates = [
        _candidate("req-3", 0.8, "Barber shop"),
        _candidate("req-1", 0.6, "Dental clinic"),
        _candidate("req-2", 0.8, "Yoga studio"),
        _candidate("req-4", 0.8000001, "Hair salon"),
    ]
    first = select(candidates, catalogue, 2)
    again = select(list(reversed(candidates)), catalogue, 2)
    # Equal usefulness (float noise included) ranks by request id.
    assert [k.request_id for k in first.kept] == ["req-2", "req-3"]
    assert [k.topic.topic_id for k in again.kept] == ["mined_yoga_studio", "mined_barber_shop"]
    assert [k.vocabulary_from for k in first.kept] == ["yoga_studio", "barber_shop"]
    assert {d.id: d.reason for d in first.dropped} == {
        "req-4": "cut: rank 3 of 4 (usefulness 0.80); the profile takes 2",
        "req-1": "cut: rank 4 of 4 (usefulness 0.60); the profile takes 2",
    }


def test_one_title_under_two_archetypes_gets_two_ids(catalogue):
    candidates = [
        _candidate("req-1", 0.9, "Coworking space", "booking"),
        _candidate("req-2", 0.7, "Coworking space", "scheduling"),
        _candidate("req-3", 0.5, "The coworking spaces", "booking"),
    ]
    mined = select(candidates, catalogue, 5)
    assert [t.topic_id for t in mined.topics] == [
        "mined_coworking_space_booking",
        "mined_coworking_space_scheduling",
    ]
    assert [k.vocabulary_from for k in mined.kept] == ["coworking_space", "coworking_desks"]
    assert _reasons(mined) == {
        "req-3": "duplicate: of req-1 (same topic 'The coworking spaces', booking)"
    }


def test_a_rejected_answer_is_dropped_with_why_and_asked_again(make_client, catalogue):
    requests = [CorpusRequest("r1", "Cancel my haircut at the barber on Saturday.", 1)]
    bad = {
        "stateful": True,
        "archetype": "none",
        "title": "Barber shop",
        "description": "Customers book haircuts.",
        "usefulness": 0.9,
        "reason": "a booking",
    }

    def respond(request):
        return final_answer(json.dumps(bad))

    with FakeOpenAIServer(respond) as server:
        mined = mine_topics(make_client(server, repairs=1), requests, catalogue, 3)
        assert len(server.requests) == 2  # the answer, then one repair
        assert "archetype:" in server.requests[1]["messages"][-1]["content"]  # told why
        mine_topics(make_client(server, repairs=1), requests, catalogue, 3)
        assert len(server.requests) == 4  # nothing was cached: asked again
    assert mined.topics == []
    assert _reasons(mined)["r1"].startswith("topic: archetype: no valid answer after 2 attempts")
    assert [c.status for c in mined.attempts] == ["rejected", "rejected"]


def test_a_good_answer_is_cached_and_an_unreachable_endpoint_is_a_reason(make_client, catalogue):
    requests = [CorpusRequest("r1", "Cancel my haircut at the barber on Saturday.", 1)]
    with FakeOpenAIServer(answer_topic) as server:
        first = mine_topics(make_client(server), requests, catalogue, 3)
        again = mine_topics(make_client(server), requests, catalogue, 3)
        assert len(server.requests) == 1
    assert first.topics == again.topics
    assert [t.topic_id for t in first.topics] == ["mined_barber_shop"]
    assert [c.status for c in again.attempts] == ["cached"]
    with FakeOpenAIServer(lambda request: http_error(500)) as server:
        failed = mine_topics(make_client(server, retries=0), requests, catalogue, 3)
    assert failed.topics == []
    assert _reasons(failed)["r1"].startswith("topic: ")


def test_the_fake_answers_only_its_own_stage():
    assert answer_topic({"messages": [], "response_format": None}) is None
    other = {"type": "json_schema", "json_schema": {"name": "task_text", "schema": {}}}
    assert answer_topic({"messages": [], "response_format": other}) is None


def test_the_shipped_corpus_path_is_the_default():
    assert CORPUS_PATH.name == "task_corpus.jsonl" and CORPUS_PATH.is_file()
