"""Free text: what the planner and the seeded histories write into subjects, messages, notes,
memos and titles reads like a person wrote it about the topic (never a placeholder pair of
dictionary words), is the same for the same seed, and every value a planned gold chain
writes passes the compiled environment's validation."""

from __future__ import annotations

import random
import re
from functools import lru_cache

import pytest

from synthesis.config import get_profile
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.field_forms import argument_error, is_datetime
from synthesis.environments.free_text import TextTopic, free_text, is_free_text, text_topic
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.tasks.phrasing import fresh_text
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.text.values import value_in_context
from synthesis.wordbank import WORDS
from tests.synthesis.tasks.planner_worlds import history_state

# Two bare lowercase words: the shape of the placeholders ("summit north") values once were.
PLACEHOLDER = re.compile(r"[a-z]+ [a-z]+")
# Punctuation that would end or split the task sentence a value is stated in.
SENTENCE_MARKS = re.compile(r"[.,;?!]")
FIELDS = ("subject", "title", "body", "text", "note", "memo", "description", "comment")
TICKETS = TextTopic(
    label="baggage claim", things=("delayed bag", "damaged bag", "missing item", "wrong delivery")
)


def _looks_written(text: str) -> bool:
    return (
        not PLACEHOLDER.fullmatch(text)
        and text[:1].isupper()
        and len(text.split()) >= 2
        and not SENTENCE_MARKS.search(text)
    )


@pytest.mark.parametrize("fname", FIELDS)
def test_free_text_reads_as_written_and_is_the_same_for_the_same_seed(fname):
    texts = [free_text(random.Random(seed), fname, TICKETS) for seed in range(60)]
    assert texts == [free_text(random.Random(seed), fname, TICKETS) for seed in range(60)]
    assert all(_looks_written(t) for t in texts), [t for t in texts if not _looks_written(t)]
    assert len(set(texts)) >= 30  # enough variety to give a record text of its own


def test_subjects_are_about_the_topic_and_prefer_what_the_record_is_about():
    subjects = [free_text(random.Random(s), "subject", TICKETS) for s in range(40)]
    about = [s for s in subjects if any(t in s.lower() for t in (*TICKETS.things, "claim"))]
    assert len(about) >= 30, subjects
    mine = TextTopic(label="baggage claim", things=TICKETS.things, preferred=("damaged bag",))
    subjects = [free_text(random.Random(s), "subject", mine) for s in range(40)]
    assert sum("damaged bag" in s.lower() for s in subjects) >= 20


def test_a_message_is_about_the_record_it_is_posted_in():
    spec = generate_spec(next(t for t in load_catalogue() if t.topic_id == "book_club"))
    channel = next(e for e in spec.entities if e.name == "discussion")
    message = next(e for e in spec.entities if e.name == "comment")
    records = {"DSC-0001": {"id": "DSC-0001", "name": "poetry", "visibility": "public"}}
    topic = text_topic(
        spec.entities,
        message.name,
        {"discussion_id": "DSC-0001"},
        lambda name: records if name == channel.name else {},
    )
    assert topic.preferred_related == ("poetry discussion",)
    bodies = [free_text(random.Random(s), "body", topic) for s in range(40)]
    assert sum("poetry discussion" in b for b in bodies) >= 15, bodies


def test_fresh_text_keeps_names_and_addresses_in_their_forms_and_avoids_taken_values():
    rng = random.Random(3)
    assert re.fullmatch(r"[a-z]+\.[a-z]+@example\.com", fresh_text(rng, "email", set()))
    assert re.fullmatch(r"\+1-555-\d{3}-\d{4}", fresh_text(rng, "phone", set()))
    first = fresh_text(random.Random(5), "subject", set(), TICKETS)
    again = fresh_text(random.Random(5), "subject", {first.casefold()}, TICKETS)
    assert again != first and _looks_written(again)
    assert not any(w in WORDS for w in fresh_text(rng, "body", set()).lower().split()[:2])


def test_a_task_states_free_text_in_quotes_and_other_values_as_they_are():
    assert value_in_context("body", "Moving the fiction discussion to Monday") == (
        '"Moving the fiction discussion to Monday"'
    )
    assert value_in_context("category", "missing item") == "missing item"
    assert value_in_context("price", "12.50") == "$12.50"


# --------------------------------------------------------------------------- planned tasks


@lru_cache(maxsize=1)
def _default_worlds():
    """The default build's tool environments (its topics, records and states per env)."""
    profile = get_profile("default")
    out = []
    for topic in select_topics(load_catalogue(), supported_archetypes(), profile.max_topics):
        env = build_environment(generate_spec(topic))
        if env.spec.kind != "tool":
            continue  # a workspace keeps a file tree, planned by workspace_plans
        states = [
            history_state(env, i, profile.records_per_entity)
            for i in range(profile.initial_states_per_env)
        ]
        out.append((env, states))
    return tuple(out)


def _written_values(env, scenarios):
    """(tool, param, field spec, value) of every argument a gold chain writes into a field."""
    spec = env.spec
    for scenario in scenarios:
        for call in scenario.gold_chain:
            tool = spec.tool(call.tool)
            if tool.operation not in ("create", "update"):
                continue
            fields = {f.name: f for f in spec.entity(tool.entity).fields}
            for p in tool.params:
                if p.name in call.args and p.field in fields and not p.ref:
                    yield tool, p, fields[p.field], call.args[p.name]


def test_planned_gold_chains_of_the_default_catalogue_write_typed_values_and_written_text():
    profile = get_profile("default")
    free, moments = [], []
    for env, states in _default_worlds():
        model = model_of(env)
        per_state = profile.scenarios_per_env // len(states)
        scenarios = [
            s
            for state in states
            for s in plan_scenarios(
                env,
                state,
                seed=0,
                count=per_state,
                max_chain_length=profile.max_chain_length,
            )
        ]
        for s in scenarios:
            for call in s.gold_chain:
                tool = model.tool(call.tool)
                fields = model.entity(tool.entity).fields
                assert argument_error(tool, fields, call.args) is None, (env.env_id, call)
        for tool, p, f, value in _written_values(env, scenarios):
            if is_free_text(f):
                free.append(value)
                assert _looks_written(value), (env.env_id, tool.name, p.name, value)
            if f.type == "datetime":
                moments.append(value)
                assert is_datetime(value), (env.env_id, tool.name, p.name, value)
    # The default catalogue's tasks write subjects, messages, notes, titles and start times.
    assert len(free) >= 15 and len(moments) >= 3, (len(free), len(moments))


def test_seeded_histories_write_text_a_person_would():
    seen = 0
    for env, states in _default_worlds():
        for entity in env.spec.entities:
            texts = [f.name for f in entity.fields if is_free_text(f)]
            for state in states:
                for record in state.state[entity.collection].values():
                    for name in texts:
                        seen += 1
                        assert _looks_written(record[name]), (env.env_id, name, record[name])
    assert seen >= 40
