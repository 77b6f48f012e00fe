"""What a question and its reply contract may say about the records a task names."""

from __future__ import annotations

from synthesis.tasks.assembly import _changed_words
from synthesis.tasks.families.questions import _named_through


def test_a_record_named_through_another_is_not_asked_about_through_it():
    card = {"id": "c1", "name": "Party Card", "number": "GC-125186", "status": "active"}
    assert _named_through("the hold on game card Party Card — GC-125186", card)
    # Shared words (a status, a plain noun) do not make the words name the card.
    assert not _named_through("the hold with status active", card)
    assert not _named_through("the hold of player Ann Lee", card)


def test_what_the_changes_carry_is_what_a_right_reply_may_say():
    initial = {"products": {"p1": {"price": 110.83, "name": "Lamp"}}, "orders": {}}
    final = {
        "products": {"p1": {"price": 90.0, "name": "Lamp"}},
        "orders": {"o1": {"product_id": "p1", "quantity": 2}},
    }
    said = _changed_words(initial, final)
    # Old and new value of the changed field, and the created record's fields.
    assert {"110.83", "90", "2", "p1"} <= said
    assert "lamp" not in said  # unchanged fields are no part of the outcome
