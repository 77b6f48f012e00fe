"""Final answers: the outcome in words, read from the run, never a tool name."""

from __future__ import annotations

import copy
import re

import pytest

from synthesis.environments.model import from_spec
from synthesis.models import Scenario, ToolCall
from synthesis.rollouts.answers import field_words, final_answer, oracle_answer, say
from synthesis.tasks.checks import AskedValue, reply_request
from synthesis.tasks.envfoundry_reward import mentions
from synthesis.tasks.spec_model import SpecModel


def _run(spec, initial, calls):
    model = SpecModel(from_spec(spec), initial)
    results = [model.call(tool, args) for tool, args in calls]
    return results, model.state


def _no_tool_names(text, spec):
    for tool in spec.tools:
        assert not re.search(rf"(?<!\w){re.escape(tool.name)}(?!\w)", text), (tool.name, text)


def test_answer_states_what_changed_with_labels_and_human_names(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    calls = [("pay_order", {"order_id": "ORD-0004"}), ("ship_order", {"order_id": "ORD-0004"})]
    results, final = _run(shop_spec, initial, calls)
    text = final_answer(initial, final, results, model=from_spec(shop_spec))
    assert text == (
        "The order of customer Grace Hopper for product Sencha is now shipped (it was pending)."
    )
    _no_tool_names(text, shop_spec)


def test_answer_names_a_created_record_by_what_it_belongs_to(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    calls = [("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 2})]
    results, final = _run(shop_spec, initial, calls)
    text = final_answer(initial, final, results, model=from_spec(shop_spec))
    assert "The stock of product Earl Grey is now 1 (it was 3)." in text
    assert "I created a new order for customer Alan Turing for product Earl Grey" in text
    assert "quantity 2" in text and "total 16" in text
    assert "ORD-0006" not in text and "CUS-0002" not in text
    _no_tool_names(text, shop_spec)


def test_answer_admits_failures_without_naming_tools(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    results, final = _run(shop_spec, initial, [("ship_order", {"order_id": "ORD-0004"})])
    text = final_answer(initial, final, results, model=from_spec(shop_spec))
    assert text == (
        "I could not complete every step of the request: only paid orders can be shipped."
        " Nothing was changed."
    )
    named = final_answer(
        initial,
        final,
        [{"success": False, "error": "ship_order refused"}],
        tool_names=["ship_order"],
    )
    assert "ship_order" not in named and named.startswith("I could not complete every step")
    assert "could not confirm" in final_answer(initial, None, results)


def test_answer_states_the_asked_values_from_the_run(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    calls = [
        ("find_customer_by_email", {"email": "grace@example.com"}),
        ("get_order", {"order_id": "ORD-0004"}),
    ]
    results, final = _run(shop_spec, initial, calls)
    asked = AskedValue("the total of Grace Hopper's pending order", 12.5, 1, ("data", "total"))
    scenario = Scenario(
        scenario_id="sc",
        env_id=shop_spec.env_id,
        state_id="st",
        task_text="t",
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        gold_results=results,
        final_state=final,
        provenance={"reply": reply_request([asked], [25.0])},
    )
    text = oracle_answer(scenario, final, results, model=from_spec(shop_spec))
    assert text == "The total of Grace Hopper's pending order is 12.5."
    assert mentions(text, 12.5) and not mentions(text, 25.0)
    # Another record's result at that step: the answer reports what that run saw.
    _, other = _run(shop_spec, initial, [calls[0], ("get_order", {"order_id": "ORD-0001"})])
    other_results = [results[0], SpecModel(from_spec(shop_spec), initial).call(*calls[1])]
    other_results[1] = {"success": True, "data": initial["orders"]["ORD-0001"]}
    assert mentions(oracle_answer(scenario, other, other_results), 25.0)
    # The step that shows it did not run: the answer says so instead of guessing.
    missing = oracle_answer(scenario, final, [results[0], None])
    assert missing == "I could not find the total of Grace Hopper's pending order."
    infeasible = scenario.model_copy(update={"kind": "infeasible"})
    assert oracle_answer(infeasible, final, results).startswith(
        "I did not make the change you asked for"
    )
    # A refused step's error words could name the asked value of any record (its status, its
    # amount): an infeasible answer leaves them out, the asked value names the rule's fact.
    refused = [*results, {"success": False, "error": "only orders over 12.5 can be refunded"}]
    worded = oracle_answer(infeasible, final, refused)
    assert worded.startswith("I could not complete every step of the request.")
    assert "refunded" not in worded and worded.endswith("pending order is 12.5.")
    assert "I could not find" in oracle_answer(infeasible, final, [results[0], None, refused[2]])
    assert not mentions(oracle_answer(infeasible, final, [results[0], None, refused[2]]), 12.5)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (1200, "1,200"),
        (1200.0, "1,200"),
        (314.07, "314.07"),
        (0.125, "0.125"),
        ("in_progress", "in progress"),
        ("2025-03-04", "March 4, 2025"),
        ("2025-03-04T14:05:00", "March 4, 2025 at 14:05"),
        (True, "yes"),
        (None, "none"),
        (["a_b", 2], "a b, 2"),
        ("Alan Turing", "Alan Turing"),
    ],
)
def test_values_in_words_are_still_the_value_for_reply_checks(value, words):
    assert say(value) == words
    if value is not None:
        assert mentions(f"It is {say(value)}.", value)


def test_field_words():
    assert field_words("customer_id") == "customer"
    assert field_words("dueDate") == "due date"
    assert field_words("id") == "id"
