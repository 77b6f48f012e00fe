"""Topic catalogue and spec generation: every shipped topic yields a consistent spec."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from synthesis import codec
from synthesis.environments.archetypes import known_archetypes, supported_archetypes
from synthesis.environments.specgen import SpecError, ensure_valid, generate_spec, validate_spec
from synthesis.environments.topics import (
    CatalogueError,
    load_catalogue,
    select_topics,
    waiting_topics,
)
from synthesis.models import EnvSpec


def _catalogue():
    return load_catalogue()


def test_catalogue_has_at_least_ten_buildable_topics_over_two_archetypes():
    topics = [t for t in _catalogue() if t.archetype in supported_archetypes()]
    assert len(topics) >= 10
    assert {t.archetype for t in topics} >= {"booking", "order_lifecycle"}
    assert len({t.topic_id for t in _catalogue()}) == len(_catalogue())


def test_select_topics_alternates_archetypes_and_respects_limit():
    # Every buildable archetype twice before any takes a third (however many there are).
    buildable = {t.archetype for t in _catalogue() if t.archetype in supported_archetypes()}
    chosen = select_topics(_catalogue(), supported_archetypes(), 2 * len(buildable))
    assert len(chosen) == 2 * len(buildable)
    archetypes = [t.archetype for t in chosen]
    assert all(archetypes.count(a) == 2 for a in buildable)


def test_malformed_catalogue_entry_names_the_topic(tmp_path):
    path = tmp_path / "topics.json"
    path.write_bytes(codec.dumps({"topics": [{"topic_id": "broken", "title": "x"}]}))
    with pytest.raises(ValueError, match="broken"):
        load_catalogue(path)


@pytest.mark.parametrize(
    "topic",
    [t for t in load_catalogue() if t.archetype in supported_archetypes()],
    ids=lambda t: t.topic_id,
)
def test_every_supported_topic_gives_a_valid_spec(topic):
    spec = generate_spec(topic)
    assert validate_spec(spec) == []
    prefixes = [e.id_prefix for e in spec.entities]
    assert len(set(prefixes)) == len(prefixes)
    assert any(t.kind == "mutate" for t in spec.tools) and any(
        t.kind == "query" for t in spec.tools
    )


def _spec() -> EnvSpec:
    topic = next(t for t in _catalogue() if t.topic_id == "bookshop")
    return generate_spec(topic)


def test_validator_reports_dangling_reference_and_unknown_status():
    spec = _spec()
    order = spec.entity("order")
    order.field("reader_id").ref = "ghost"
    order.transitions["pending"].append("teleported")
    problems = validate_spec(spec)
    assert any("unknown entity 'ghost'" in p for p in problems)
    assert any("'teleported'" in p for p in problems)
    with pytest.raises(SpecError):
        ensure_valid(spec)


def test_validator_rejects_create_that_cannot_set_a_field_and_duplicate_tools():
    spec = _spec()
    create = spec.tool("create_order")
    create.params = [p for p in create.params if p.name != "quantity"]
    create.preconditions = []
    spec.tools.append(spec.tools[0].model_copy())
    problems = validate_spec(spec)
    assert any("'quantity' is neither a parameter nor derived" in p for p in problems)
    assert "tool names are not unique" in problems


def test_unknown_keys_in_a_spec_are_rejected():
    raw = _spec().model_dump(mode="json")
    raw["entities"][0]["colour"] = "blue"
    with pytest.raises(ValidationError):
        EnvSpec.model_validate(raw)


def _write_catalogue(tmp_path, topics) -> object:
    path = tmp_path / "topics.json"
    codec.write_json(path, {"schema_version": 1, "topics": topics})
    return path


def test_an_unknown_archetype_is_an_error_that_names_it(tmp_path):
    path = _write_catalogue(
        tmp_path,
        [{"topic_id": "t1", "title": "T", "archetype": "bokking", "description": "typo"}],
    )
    with pytest.raises(CatalogueError, match=r"topic 't1' names unknown archetype 'bokking'"):
        load_catalogue(path, known=known_archetypes())


def test_planned_archetypes_wait_and_source_entries_are_always_taken(tmp_path):
    path = _write_catalogue(
        tmp_path,
        [
            {
                "topic_id": "a",
                "title": "A",
                "archetype": "booking",
                "description": "",
                "vocabulary": {},
            },
            {"topic_id": "b", "title": "B", "archetype": "planned_one", "description": ""},
            {"topic_id": "c", "title": "C", "source": "envs/c.py"},
        ],
    )
    # A planned archetype of its own: the real ones get implemented one by one.
    topics = load_catalogue(path, known=known_archetypes() | {"planned_one"})
    assert [t.topic_id for t in waiting_topics(topics, supported_archetypes())] == ["b"]
    chosen = select_topics(topics, supported_archetypes(), limit=0)
    assert [t.topic_id for t in chosen] == ["c"]
    # An entry without a source serialises exactly as before sources existed.
    assert "source" not in topics[0].model_dump(mode="json")


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"topics": [', "not valid JSON"),
        ('{"topics": 3}', "expected an object with a 'topics' list"),
        (
            '{"topics": [{"topic_id": "x", "title": "X", "archetype": "booking", '
            '"source": "x.py"}]}',
            "exactly one of 'archetype' or 'source'",
        ),
        (
            '{"topics": [{"topic_id": "x", "title": "X", "archetype": "booking"}, '
            '{"topic_id": "x", "title": "Y", "archetype": "booking"}]}',
            "duplicate topic id 'x'",
        ),
    ],
)
def test_a_broken_catalogue_says_what_is_wrong_and_where(tmp_path, content, message):
    path = tmp_path / "topics.json"
    path.write_text(content)
    with pytest.raises(CatalogueError, match=message) as info:
        load_catalogue(path, known=known_archetypes())
    assert str(path) in str(info.value)
