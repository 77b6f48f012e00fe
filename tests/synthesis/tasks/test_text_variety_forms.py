"""Shorter nouns, possessives and reworded workspace goals keep a task's meaning."""

from __future__ import annotations

import random
import re

from synthesis.tasks.phrasing import (
    _possessives,
    _reword_workspace,
    noun_forms,
    record_words,
    short_nouns,
)
from synthesis.tasks.text.grammar import tidy
from synthesis.tasks.text.lexicon import vary

LABELS = ["passenger", "baggage agent", "baggage claim", "assignment"]


def test_a_short_noun_is_one_no_other_collection_answers_to():
    assert "claim" in noun_forms("baggage claim", LABELS)
    # 'agent' alone would read as the one asked; 'baggage' words belong to two labels.
    assert noun_forms("baggage agent", LABELS) == ()
    assert "claim" not in noun_forms("expense claim", ["expense claim", "claim"])
    assert "booking" not in noun_forms("appointment", ["appointment", "booking"])


def test_short_nouns_keep_the_article_right_and_every_fact():
    text = "Add an appointment for Ada. Then cancel the appointment with status booked."
    seen = {
        short_nouns(text, ["appointment", "customer"], ["booked"], random.Random(s))
        for s in range(60)
    }
    assert any("the booking" in t or "the appt" in t for t in seen)
    assert any("Add a booking" in t or "Add an appt" in t for t in seen)
    for t in seen:
        assert "booked" in t
        assert not re.search(r"\ban booking\b|\ba appt\b|\ba appointment\b", t)
    # A fact that a shorter noun would lose keeps the words as they were.
    assert (
        short_nouns(
            "Rename the baggage claim to 'the baggage claim'.",
            LABELS,
            ["the baggage claim"],
            random.Random(1),
        ).count("the baggage claim")
        >= 1
    )


def test_a_possessive_only_for_a_person_named_with_their_address():
    text = (
        "Close the claim of passenger Sarah Graham (sarah@x.com). "
        "Then reopen the claim belonging to passenger Sarah Graham, please. "
        "Also check the hold of game card Party Card."
    )
    outs = {
        _possessives(text.replace(" (sarah@x.com)", "", 0), ["Sarah Graham"], [], random.Random(s))
        for s in range(40)
    }
    assert any("Sarah Graham's claim, please" in o for o in outs)
    for o in outs:
        # The address stays beside the name it follows; a record's name is no person.
        assert "Sarah Graham (sarah@x.com)" in o
        assert "Party Card's" not in o


def test_workspace_goals_keep_paths_statuses_and_lines():
    goal = (
        "check the file notes-12.md: if its status is draft, mark it as published; "
        'otherwise leave its status and add the line "checked" at its end'
    )
    outs = {_reword_workspace(goal, random.Random(s)) for s in range(40)}
    assert len(outs) > 5
    for o in outs:
        for value in ("notes-12.md", "draft", "published", '"checked"'):
            assert value in o


def test_workspace_goals_with_alternative_shapes_leave_no_gap():
    for goal in (
        "give the handout by Ada Lee the new name notes-v2.md",
        "set the status of the file a-1.md to draft",
        "copy the file a-1.md into week-02, keeping the original",
    ):
        for s in range(30):
            said = _reword_workspace(goal, random.Random(s))
            assert "None" not in said and "  " not in said


def test_a_possessive_never_strands_the_participle_of_an_owner_form():
    text = (
        "Close the appt kept for customer Sean Johnson showing confirmed. "
        "Then move the baggage claim of passenger Sarah Graham on."
    )
    outs = {
        _possessives(text, ["Sean Johnson", "Sarah Graham"], [], random.Random(s))
        for s in range(40)
    }
    assert any("Sarah Graham's baggage claim" in o for o in outs)
    for o in outs:
        assert "appt kept" not in o.replace("the appt kept for", "")


def test_swapped_words_keep_the_idioms_they_belong_to():
    template = "I should have sorted this out earlier; it's a bit of a mess. Thanks a million."
    outs = {vary(template, random.Random(s)) for s in range(200)}
    assert len(outs) > 3  # the swaps still happen elsewhere ("mess" -> "muddle")
    for out in outs:
        assert "sorted this out" in out and "a bit of a" in out and "Thanks a million" in out


def test_a_filler_is_said_once_per_message():
    text = tidy(
        "Then, if you would, close it. If you would, could you also open one? "
        "And if you would, ship it."
    )
    assert text.count("if you would") + text.count("If you would") == 1
    assert "Could you also open one?" in text and "And ship it." in text


def test_a_qualifier_link_never_splits_associated_with():
    words = "the cart line associated with listener Ann Lee with quantity 2"
    outs = {record_words(words, [], random.Random(s)) for s in range(60)}
    for out in outs:
        assert "associated with listener" in out or "associated" not in out


def test_contractions_and_set_phrases_survive_the_swaps():
    template = (
        "It's been a hectic week; they'd bought it by mistake before the bank holiday. "
        "I have done it. The details are odd and several of them are wrong."
    )
    for s in range(200):
        out = vary(template, random.Random(s))
        for kept in ("been a", "bought it by mistake", "bank holiday", "done it", "details are"):
            assert kept in out, (kept, out)
        assert "is been" not in out and "would bought" not in out and "of of" not in out
