"""Task text: grammar, values as people write them, voices, and no leaked id, timestamp or code."""

from __future__ import annotations

import random
import re

import pytest

from synthesis import codec
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.tasks.assembly import mentions_an_id, state_ids
from synthesis.tasks.phrasing import phrase
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.text.grammar import article, fix_articles, plural, sentence
from synthesis.tasks.text.values import (
    has_iso_timestamp,
    snake_case_tokens,
    value_in_context,
    value_words,
)
from tests.build_support import query

_ARTICLE_WORD = re.compile(r"\b([Aa]n?) ([A-Za-z][\w-]*)")


def wrong_articles(text: str) -> list[str]:
    return [m[0] for m in _ARTICLE_WORD.finditer(text) if m[1].lower() != article(m[2])]


def text_faults(text: str, ids: set[str]) -> list[str]:
    """Everything a task text must never hold, named (empty when the text is clean)."""
    faults = []
    if mentions_an_id(text, ids):
        faults.append("an internal id")
    if has_iso_timestamp(text):
        faults.append("an ISO timestamp")
    if snake_case_tokens(text):
        faults.append(f"snake_case {snake_case_tokens(text)}")
    if wrong_articles(text):
        faults.append(f"articles {wrong_articles(text)}")
    return faults


# -- the parts -------------------------------------------------------------------------------


def test_articles_follow_the_sound_of_the_next_word():
    assert [article(w) for w in ["artist", "order", "hour", "user", "SMS", "booking"]] == [
        "an",
        "an",
        "an",
        "a",
        "an",
        "a",
    ]
    assert fix_articles("Find a artist and an booking, a hour later.") == (
        "Find an artist and a booking, an hour later."
    )
    assert text_faults("Find a artist.", set()) == ["articles ['a artist']"]


def test_plurals_and_sentences():
    assert [plural(w) for w in ["company", "box", "order", "day", "person"]] == [
        "companies",
        "boxes",
        "orders",
        "days",
        "people",
    ]
    assert sentence("could you help") == "Could you help."
    assert sentence("could you help?") == "Could you help?"


def test_values_are_written_as_people_write_them():
    assert value_words("2026-03-03T14:00") == "Tuesday 3 March 2026 at 2 pm"
    assert value_words("2026-03-03T09:30:00") == "Tuesday 3 March 2026 at 9:30 am"
    assert value_words("2026-03-04") == "Wednesday 4 March 2026"
    assert value_words("in_progress") == "in progress"
    assert value_words("lesson") == "lesson"
    assert value_words(True) == "yes"
    assert value_words(12.5) == "12.50" and value_words(3.0) == "3"
    assert value_in_context("unit price", "12.50") == "$12.50"
    assert value_in_context("quantity", "2") == "2"
    # The checks themselves must catch what they look for.
    assert has_iso_timestamp("on 2026-03-03T14:00") and not has_iso_timestamp("at 2 pm")
    assert snake_case_tokens("move it to dog_walk, mail a_b@x.com") == ["dog_walk"]
    assert snake_case_tokens("open 'final_report.pdf' now") == []
    assert snake_case_tokens('the keys "first_seen" and count_of') == ["count_of"]


def _plan(goals: list[PlanGoal]) -> TaskPlan:
    return TaskPlan(
        env_id="e",
        state_id="s",
        seed=0,
        index=0,
        title="Harbour Dental",
        goals=goals,
        gold_chain=[],
        roles=[],
        generator="test",
    )


def test_a_customer_speaks_of_their_own_record_and_staff_of_the_customers():
    goal = PlanGoal(
        kind="transition",
        tool="cancel_appointment",
        verb="cancel",
        target="the appointment of patient Ada Lee (ada@example.com) with status confirmed",
        owner=("patient", "Ada Lee (ada@example.com)"),
        own_target="appointment with status confirmed",
        to_status="cancelled",
    )
    voices = {}
    for seed in range(60):
        text, persona = phrase(_plan([goal]), random.Random(seed), archetype="booking")
        voices.setdefault(persona.voice, []).append(text)
        assert "ada@example.com" in text, text
    assert set(voices) == {"customer", "on_behalf", "staff"}
    assert all(re.search(r"\b(my|our)\b|I have with you|I set up", t) for t in voices["customer"])
    # The writer's own address is never "their" email.
    assert not any(re.search(r"their (?:e-?mail|address)", t) for t in voices["customer"])
    assert all("patient Ada Lee" not in t for t in voices["customer"])
    assert any(re.search(r"\btheir\b|they have with us", t) for t in voices["on_behalf"])
    assert not any(re.search(r"\bmy (confirmed )?appointment\b", t) for t in voices["staff"])


def test_a_customer_does_not_ask_to_ship_their_own_order():
    goal = PlanGoal(
        kind="transition",
        tool="ship_order",
        verb="ship",
        target="the order of customer Ada Lee (ada@example.com)",
        owner=("customer", "Ada Lee (ada@example.com)"),
        own_target="order",
        to_status="shipped",
    )
    voices = {phrase(_plan([goal]), random.Random(s))[1].voice for s in range(40)}
    assert voices == {"on_behalf", "staff"}


def test_no_customer_voice_without_one_owner():
    goal = PlanGoal(
        kind="update",
        tool="change_price",
        verb="change",
        target="product Sencha",
        values=[("price", "12.50")],
    )
    for seed in range(30):
        text, persona = phrase(_plan([goal]), random.Random(seed))
        assert persona.voice == "staff"
        assert "$12.50" in text and "Sencha" in text


def test_phrasing_is_deterministic_and_varied():
    goal = PlanGoal(kind="transition", tool="ship_order", verb="ship", target="order 7")
    texts = [phrase(_plan([goal]), random.Random(s))[0] for s in range(40)]
    assert texts == [phrase(_plan([goal]), random.Random(s))[0] for s in range(40)]
    assert len(set(texts)) >= 35


# -- planned scenarios of both archetypes ---------------------------------------------------------


@pytest.fixture(scope="module")
def planned_by_archetype():
    """Scenarios planned directly (history replayed in the sandbox), per archetype."""
    out = {}
    for archetype in sorted(supported_archetypes()):
        topics = [t for t in select_topics(load_catalogue(), {archetype}, 2)]
        scenarios = []
        for topic in topics:
            env = build_environment(generate_spec(topic))
            state = build_initial_state(env, seed=3, index=0, records_per_entity=6)
            scenarios += plan_scenarios(env, state, seed=3, count=12, max_chain_length=5)
            again = plan_scenarios(env, state, seed=3, count=12, max_chain_length=5)
            assert [s.task_text for s in again] == [s.task_text for s in scenarios[-len(again) :]]
        out[archetype] = scenarios
    return out


def test_planned_task_texts_are_clean_for_every_archetype(planned_by_archetype):
    assert {"booking", "order_lifecycle"} <= set(planned_by_archetype)
    for archetype, scenarios in planned_by_archetype.items():
        assert len(scenarios) >= 10, archetype
        for s in scenarios:
            ids = state_ids(s.initial_state)
            assert text_faults(s.task_text, ids) == [], (archetype, s.task_text)
        # A bank, not a template: the texts differ well beyond their names.
        assert len({s.provenance["persona"] for s in scenarios}) >= 3, archetype


@pytest.mark.slow
def test_the_tiny_build_publishes_clean_task_text(tiny_home):
    home, _ = tiny_home
    rows = query(home, "SELECT task_text, initial_state_json FROM scenarios")
    assert rows
    for text, state_json in rows:
        assert text_faults(text, state_ids(codec.loads(state_json))) == [], text


def test_the_explorer_says_codes_in_words_and_identifiers_verbatim():
    from synthesis.tasks.explorer import _fact, _say

    assert _say("in_progress", code=True) == "in progress" == _fact("in_progress", code=True)
    # A user name or a file stem is a name: changing it would ask for something else.
    assert _say("john_doe") == '"john_doe"' and _fact("john_doe") == "john_doe"
    assert _say("2026-03-03T14:00") == "Tuesday 3 March 2026 at 2 pm"


def test_passed_on_staff_work_is_asked_of_staff():
    goal = PlanGoal(
        kind="transition",
        tool="ship_order",
        verb="ship",
        target="the order of customer Ada Lee (ada@example.com)",
        owner=("customer", "Ada Lee (ada@example.com)"),
        own_target="order",
        to_status="shipped",
    )
    for s in range(60):
        text, persona = phrase(_plan([goal]), random.Random(s))
        if persona.voice == "on_behalf":
            assert not re.search(r"\bThey (need|want|'d like) to\b", text), text


# -- who does what: a request only the agent can do is never put in someone else's mouth ------

# "We need to tell me ...", "They asked us to check ...: ... otherwise tell me": a lead whose
# subject is the asker (or a third party) joined to a request the agent does for the asker.
_MISADDRESSED = re.compile(
    r"\b(?:I|I'd|I'm|we|we've|we'd|they|they'd|they're|us|let's)\b"
    r"(?: (?!you\b|you'd\b)[\w']+){0,4} (?:to )?"
    r"(?:(?:tell|let) me|(?:check|see|find|look|pull|confirm)\b[^.?!]*?\b(?:tell|let) me)\b",
    re.IGNORECASE,
)


def test_leads_for_the_agent_are_told_apart_from_the_askers_own():
    from synthesis.tasks.phrasing import addresses_agent

    for lead in ("Could you {c}?", "Please {c}.", "{C}.", "I need you to {c}.", "Quick one: {c}."):
        assert addresses_agent(lead), lead
    for lead in (
        "We need to {c}.",
        "I'd like to {c}.",
        "They asked us to {c}.",
        "Would you mind if we {c}?",
    ):
        assert not addresses_agent(lead), lead
    assert _MISADDRESSED.search("Hi. We need to tell me the status of the order.")
    assert _MISADDRESSED.search("They asked us to check it: if so, cancel it; otherwise tell me")
    assert not _MISADDRESSED.search("I need you to tell me the status. Could you tell me more?")


def test_questions_conditions_and_refusals_are_asked_of_the_agent_in_every_voice():
    owner = ("patient", "Ada Lee (ada@example.com)")
    then = PlanGoal(kind="transition", tool="cancel_appointment", verb="cancel", target="it")
    goals = [
        PlanGoal(
            kind="ask",
            tool="find_patient",
            verb="tell",
            target="patient Ada Lee (ada@example.com)",
            question="the phone of patient Ada Lee (ada@example.com)",
        ),
        PlanGoal(
            kind="conditional",
            tool="cancel_appointment",
            verb="cancel",
            target="the appointment of patient Ada Lee (ada@example.com)",
            owner=owner,
            condition="confirmed",
            otherwise="its status",
            then=then,
        ),
        PlanGoal(
            kind="refuse",
            tool="cancel_appointment",
            verb="cancel",
            target=None,
            then=then.model_copy(update={"target": "the appointment of patient Bo Wu"}),
        ),
    ]
    voices = set()
    for seed in range(150):
        rng = random.Random(seed)
        chosen = [g for g in goals if rng.random() < 0.7] or goals[:1]
        text, persona = phrase(_plan(chosen), rng, archetype="booking")
        voices.add(persona.voice)
        assert not _MISADDRESSED.search(text), text
        if any(g.kind == "refuse" for g in chosen):
            assert "Bo Wu" in text, text  # the refused change names its record, never "it"
    assert {"staff", "on_behalf"} <= voices


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        # A status of several words is not cut after its first ("set to in right now cart").
        ("the cart line with status in cart held by Amy", "with status in cart"),
        ("the booking with status no show", "with status no show"),
    ],
)
def test_a_status_of_several_words_is_said_whole(text, kept):
    from synthesis.tasks.phrasing import _reword_statuses

    for seed in range(20):
        assert kept in _reword_statuses(text, random.Random(seed))


def test_a_new_date_is_never_reworded_as_the_record_it_qualifies():
    # "update it with the start <date>" sets the start: "update it whose the start is" would
    # name a record by it instead.
    from synthesis.tasks.phrasing import _reword_dates

    text = "update it with the start Tuesday 10 March 2026 at 3 pm"
    assert all(_reword_dates(text, random.Random(s)) == text for s in range(20))
    qualified = "the slot with start Tuesday 10 March 2026 at 3 pm"
    assert any(_reword_dates(qualified, random.Random(s)) != qualified for s in range(20))


def test_a_record_noun_that_starts_with_an_acronym_is_written_as_one():
    from synthesis.tasks.phrasing import _acronyms

    text = 'Add a it ticket for the channel "it notices"; it tickets are slow, it seems.'
    out = fix_articles(_acronyms(text, ["it ticket", "chat update"]))
    assert out == 'Add an IT ticket for the channel "it notices"; IT tickets are slow, it seems.'


def test_a_follow_up_turns_to_its_request_once():
    # A follow-up front ("Now", "Next,") before a request whose own lead turns already read
    # "Now now, the order student Laura Schmidt opened: ..." in a default build.
    from synthesis.tasks.phrasing import _followed_up
    from synthesis.tasks.text.voices import PERSONAS

    for persona in PERSONAS:
        for seed in range(40):
            for lead in ("Now, the order of X: cancel it.", "Next, cancel the order of X."):
                said = " ".join(_followed_up(persona, [lead], random.Random(seed)))
                assert not re.search(r"(?i)\b(now|next)\W+\1\b", said), said


def test_a_description_in_the_third_person_is_asked_for_in_the_imperative():
    from synthesis.tasks.phrasing import imperative

    said = {
        "sends a payment request to the customer": "send a payment request to the customer",
        "modifies the order": "modify the order",
        "searches flights": "search flights",
        "refuels data for a line": "refuel data for a line",
        "does nothing": "do nothing",
        "cancel the whole reservation": "cancel the whole reservation",
        "details of the order": "details of the order",
        "status of a line": "status of a line",
        "flights matching the route": "flights matching the route",
    }
    assert {text: imperative(text) for text in said} == said


def test_an_undocumented_tools_name_reads_as_a_request():
    # ACEBench Travel's reserve_flight has no docstring: its name is all a task has.
    from synthesis.tasks.phrasing import name_phrase
    from synthesis.tasks.text.values import field_noun

    assert name_phrase("reserve_flight") == "reserve a flight"
    assert name_phrase("open_account") == "open an account"
    assert name_phrase("cancel_reservation", definite=True) == "cancel the reservation"
    assert name_phrase("login_food_platform") == "log in to the food platform"
    assert name_phrase("turn_on_wifi") == "turn on wifi"
    assert name_phrase("add_items") == "add items"
    assert field_noun("flight_no") == "flight number"


def test_words_put_together_for_a_probe_are_told_from_real_values():
    from synthesis.environments.arguments import made_up

    assert made_up("meadow willow report") and made_up(["coral silver plan"])
    assert made_up({"name": "amber harbor ideas"})
    assert not made_up("Visit Dr. Smith for a checkup.")
    assert not made_up("maple_notes.txt") and not made_up("orchid118") and not made_up(3)
