"""The reply contract: a reply earns only for a specific, grounded answer, and a right answer
in other words keeps its reward (synthesis/tasks/envfoundry_reward.py)."""

from __future__ import annotations

import pytest

from synthesis.tasks.envfoundry_reward import (
    completion_claim,
    decline_cue,
    evaluate_check,
    grade_episode,
    states_text,
)

STATE = {
    "supplies": {
        "SPP-1": {"id": "SPP-1", "name": "Synthetic Brush Set", "stock": 3, "price": 12.5},
        "SPP-2": {"id": "SPP-2", "name": "Oil Paint Tube", "stock": 7, "price": 4.25},
    },
    "orders": {
        "ORD-1": {"id": "ORD-1", "status": "shipped", "supply_id": "SPP-1", "total": 250.0},
        "ORD-2": {"id": "ORD-2", "status": "pending", "supply_id": "SPP-2", "total": 137.5},
        "ORD-3": {"id": "ORD-3", "status": "paid", "supply_id": "SPP-2", "total": 412.75},
    },
    "artists": {
        f"ART-{i}": {"id": f"ART-{i}", "name": name, "email": f"{name.split()[0].lower()}@x.org"}
        for i, name in enumerate(("Joanna Ortiz", "Nathan Walters", "Kimberly Guzman"))
    },
}
RULES = [
    "An order can only be placed when the stock covers the quantity.",
    "A single order may not exceed 5 units.",
    "Orders move pending -> paid -> shipped -> delivered; pending or paid orders can be cancelled.",
    "An artist may have at most 3 pending or paid orders at a time.",
]
REQUEST = "Order 6 of the Synthetic Brush Set for Joanna Ortiz, express delivery."
IGNORE = sorted({"order", "synthetic", "brush", "set", "joanna", "ortiz", "express", "delivery"})

REFUSAL_CHECKS = [
    {
        "type": "no_collateral_changes",
        "role": "guard",
        "touched": [],
        "deleted": [],
        "created": {},
        "created_refs": {},
        "attributes": [],
        "paths": [],
    },
    {
        "type": "reply_refuses",
        "role": "goal",
        "request": REQUEST,
        "reasons": [
            {
                "rule": "ref_field_gte_param:stock",
                "facts": [3],
                "texts": ["not enough stock", RULES[0]],
            },
            {
                "rule": "param_at_most:quantity",
                "facts": [5],
                "texts": ["a single order may not exceed 5 units", RULES[1]],
            },
        ],
    },
    {
        "type": "reply_states_no_other_rule",
        "role": "guard",
        "rules": RULES[2:],
        "request": REQUEST,
    },
    {"type": "reply_excludes", "role": "guard", "values": [7]},
    {"type": "reply_concise", "role": "guard", "limit": 8, "request": REQUEST, "allowed": [3]},
]


def _reward(checks, reply, final=None):
    return grade_episode(checks, STATE, STATE if final is None else final, reply).reward


@pytest.mark.parametrize(
    "reply",
    [
        "I couldn't place that order: only 3 of the Synthetic Brush Set are in stock.",
        "Sorry, I can't: orders may not exceed 5 units.",
        "That didn't go through. The system said: not enough stock.",
        "I was unable to order it, since a single order may not exceed five units and the "
        "stock only covers three.",
        "Unfortunately the stock does not cover the quantity, so nothing was changed.",
        "I’m not able to do that: the stock covers only 3 brush sets. Nothing was changed.",
    ],
)
def test_a_refusal_with_any_true_reason_earns_1(reply):
    assert _reward(REFUSAL_CHECKS, reply) == 1.0


@pytest.mark.parametrize(
    "reply",
    [
        "I'm sorry, but I can't help with that request.",  # no reason
        "Done! The order is placed.",  # a false claim
        "Done. (I couldn't, the stock is 3.)",  # claims and declines at once
        "I can't: " + " ".join(RULES),  # the system prompt pasted in
        "I can't: the stock is 3 or 7.",  # a hedge over the stock figures
        "Sorry, I can't: orders move pending -> paid -> shipped; pending or paid orders can "
        "be cancelled.",  # a true rule, but not one that blocks this request
    ],
)
def test_a_refusal_without_a_true_specific_reason_earns_0(reply):
    assert _reward(REFUSAL_CHECKS, reply) == 0.0


def test_a_refusal_that_changed_something_earns_0():
    changed = {**STATE, "supplies": {**STATE["supplies"], "SPP-1": {**STATE["supplies"]["SPP-1"]}}}
    changed["supplies"]["SPP-1"]["stock"] = 0
    assert _reward(REFUSAL_CHECKS, "I couldn't: not enough stock (3 left).", changed) == 0.0


QUESTION_CHECKS = [
    {"type": "reply_contains", "role": "goal", "value": "shipped", "what": "the status"},
    {"type": "reply_excludes", "role": "guard", "values": ["pending", "paid", "delivered"]},
    {"type": "reply_states_no_other_rule", "role": "guard", "rules": RULES, "match": "verbatim"},
    {
        "type": "reply_concise",
        "role": "guard",
        "limit": 8,
        "request": "What is the status of Joanna Ortiz's order of the Synthetic Brush Set?",
        "allowed": ["shipped"],
    },
]


@pytest.mark.parametrize(
    "reply",
    [
        "It has shipped.",
        "The order's status is SHIPPED.",
        "Joanna Ortiz's order of the Synthetic Brush Set (ORD-1, total 250) is shipped.",
    ],
)
def test_a_specific_answer_earns_1(reply):
    assert _reward(QUESTION_CHECKS, reply) == 1.0


@pytest.mark.parametrize(
    "reply",
    [
        "It is pending, paid or shipped.",
        "Everything: " + ", ".join(str(v) for r in STATE["orders"].values() for v in r.values()),
        "shipped. " + " ".join(RULES),
        "Shipped. Here are all the records: "
        + ", ".join(
            str(v)
            for coll in ("supplies", "artists")
            for r in STATE[coll].values()
            for v in r.values()
        ),
    ],
)
def test_a_hedge_a_dump_or_pasted_rules_earn_0(reply):
    assert _reward(QUESTION_CHECKS, reply) == 0.0


def test_declining_and_claiming_are_read_in_context():
    assert decline_cue("I wasn't able to cancel it")
    assert not decline_cue("The order is shipped.")
    assert completion_claim("All set, the order is placed.")
    assert not completion_claim("Nothing was done: the stock is too low.")
    assert not completion_claim("It has not successfully gone anywhere; I couldn't do it.")


def test_a_rule_is_stated_by_most_of_its_own_words_not_by_one():
    rule = "A single order may not exceed 5 units."
    assert states_text("Orders can't be over 5 units each, a single order max.", rule)
    assert not states_text("Your order is on its way.", rule)
    assert not states_text("Order it", rule, ignore=["order"])


def test_reply_checks_never_raise_on_odd_replies():
    for spec in REFUSAL_CHECKS + QUESTION_CHECKS:
        for reply in (None, 7, "", "\u2019" * 3):
            assert evaluate_check(spec, STATE, STATE, reply) in (True, False)


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("(546) 076-1028", "+1-546-076-1028"),
        ("546.076.1028", "+1-546-076-1028"),
        ("+1 546 076 1028", "+1-546-076-1028"),
        ("5460761028", "+1-546-076-1028"),
        ("ann_lee", "@ann_lee"),
        ("@ann_lee", "ann_lee"),
        ("six", 6),
        ("twenty", 20),
        ("1,200", 1200),
        ("$1,200.00", 1200.0),
        ("USD 1200", "1200.00"),
        ("€12.50", 12.5),
        ("March 4, 2026", "2026-03-04"),
        ("on Wednesday, March 4 at 2 PM", "2026-03-04T14:00"),
        ("4 March", "2026-03-04"),
        ("03/04/2026 at 14:00", "2026-03-04T14:00:00"),
        ("at noon", "12:00"),
        ("in progress", "in_progress"),
        ("yes", True),
    ],
)
def test_values_are_compared_as_people_write_them(written, value):
    check = {"type": "reply_contains", "role": "goal", "value": value, "what": "it"}
    assert evaluate_check(check, STATE, STATE, f"It is {written}.")


@pytest.mark.parametrize(
    ("written", "value"),
    [
        ("546-076-1029", "+1-546-076-1028"),
        ("seven", 6),
        ("11200", 1200),
        ("March 5", "2026-03-04"),
        ("Anne", "Ann"),
    ],
)
def test_other_values_are_not_the_asked_one(written, value):
    check = {"type": "reply_contains", "role": "goal", "value": value, "what": "it"}
    assert not evaluate_check(check, STATE, STATE, f"It is {written}.")


def test_a_number_word_is_no_hedge_over_that_number():
    """ "the one you asked about" states no 1: only values a reply must state read words."""
    check = {"type": "reply_excludes", "role": "guard", "values": [1, 2]}
    assert evaluate_check(check, STATE, STATE, "That one is shipped; the other two are not.")


def test_beside_changes_only_a_rule_pasted_word_for_word_counts():
    """A reply telling what it changed shares words with the rules those changes follow
    ("cancelled … returned to stock"); pasting a rule repeats its words in a row."""
    check = {
        "type": "reply_states_no_other_rule",
        "role": "guard",
        "rules": ["Cancelling an order returns its quantity to stock."],
        "tools": ["Cancel a pending or paid order and put its units back in stock."],
        "match": "verbatim",
        "request": "Cancel Nathan's order.",
    }
    told = "I cancelled Nathan Walters' order; its 3 units went back into stock."
    assert evaluate_check(check, STATE, STATE, told)
    pasted = "Sorry. Cancelling an order returns its quantity to stock."
    assert not evaluate_check(check, STATE, STATE, pasted)
    tools = "I can't: cancel a pending or paid order and put its units back in stock."
    assert not evaluate_check(check, STATE, STATE, tools)
