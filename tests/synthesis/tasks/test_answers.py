"""Final answers: what the run's own conversation showed, in the domain's words, never a tool
name, never a value only the final state holds."""

from __future__ import annotations

import copy
import re

import pytest

from quality.grounding import answer_problems
from synthesis.environments.model import from_spec
from synthesis.environments.workspace_verbs import MemoryTree
from synthesis.models import Scenario, ToolCall
from synthesis.tasks.answers import field_words, final_answer, oracle_answer, say
from synthesis.tasks.checks import AskedValue, reply_request
from synthesis.tasks.envfoundry_reward import (
    WORKSPACE_KEY,
    completion_claim,
    decline_cue,
    mentions,
)
from synthesis.tasks.spec_model import SpecModel
from tests.quality.test_grounding import conversation

REQUEST = "Please sort out Grace Hopper's order (grace@example.com) and Alan's Earl Grey."


def _run(spec, initial, calls):
    model = SpecModel(from_spec(spec), initial)
    results = [model.call(tool, args) for tool, args in calls]
    return results, model.state


def _answer(spec, initial, calls, **kwargs):
    results, final = _run(spec, initial, calls)
    text = final_answer(initial, final, results, model=from_spec(spec), calls=calls, **kwargs)
    return text, results, final


def _grounded(text, calls, results, initial, final):
    steps = [(tool, args, result) for (tool, args), result in zip(calls, results, strict=True)]
    assert answer_problems(conversation(REQUEST, steps, text), initial, final) == []


def _no_tool_names(text, spec):
    for tool in spec.tools:
        assert not re.search(rf"(?<!\w){re.escape(tool.name)}(?!\w)", text), (tool.name, text)


def test_each_change_is_told_from_its_call_with_the_names_the_results_showed(
    shop_spec, hand_worlds
):
    initial = hand_worlds.SHOP_STATE
    calls = [
        ("find_customer_by_email", {"email": "grace@example.com"}),
        ("list_orders", {"customer_id": "CUS-0003"}),
        ("pay_order", {"order_id": "ORD-0004"}),
        ("ship_order", {"order_id": "ORD-0004"}),
    ]
    text, results, final = _answer(shop_spec, initial, calls)
    # The product was never looked up: the order is named by its customer only.
    assert text == (
        "The order of customer Grace Hopper is now paid. "
        "The order of customer Grace Hopper is now shipped."
    )
    _no_tool_names(text, shop_spec)
    _grounded(text, calls, results, initial, final)
    # Nothing the conversation showed names the order: then, and only then, its id.
    bare, _, _ = _answer(shop_spec, initial, calls[2:3])
    assert bare == "Order ORD-0004 is now paid."


def test_a_created_record_is_told_from_what_was_sent_not_from_the_final_state(
    shop_spec, hand_worlds
):
    initial = hand_worlds.SHOP_STATE
    calls = [
        ("find_customer_by_email", {"email": "alan@example.com"}),
        ("find_product_by_name", {"name": "Earl Grey"}),
        ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0002", "quantity": 2}),
        ("update_product_price", {"product_id": "PRD-0002", "price": 9.5}),
    ]
    text, results, final = _answer(shop_spec, initial, calls)
    assert text == (
        "I created a new order for customer Alan Turing for product Earl Grey with quantity 2. "
        "I changed the price of product Earl Grey to $9.50."
    )
    # The stock went from 3 to 1: only the final state holds the 1, so the answer never says it.
    assert final["products"]["PRD-0002"]["stock"] == 1 and not mentions(text, 1)
    assert "ORD-0006" not in text and "CUS-0002" not in text
    _no_tool_names(text, shop_spec)
    _grounded(text, calls, results, initial, final)


def test_a_failed_step_is_admitted_without_naming_tools(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    calls = [("ship_order", {"order_id": "ORD-0004"})]
    text, results, final = _answer(shop_spec, initial, calls)
    assert text == (
        "I could not complete every step of the request: only paid orders can be shipped."
        " Nothing was changed."
    )
    named = final_answer(
        initial,
        final,
        [{"success": False, "error": "ship_order refused"}],
        calls=calls,
    )
    assert "ship_order" not in named and named.startswith("I could not complete every step")
    assert "could not confirm" in final_answer(initial, None, results, calls=calls)


def _scenario(shop_spec, initial, calls, results, final, asked, **update):
    scenario = Scenario(
        scenario_id="sc",
        env_id=shop_spec.env_id,
        state_id="st",
        task_text=REQUEST,
        initial_state=copy.deepcopy(initial),
        gold_chain=[ToolCall(tool=t, args=a) for t, a in calls],
        gold_results=results,
        final_state=final,
        provenance={"reply": reply_request([asked], [25.0])},
    )
    return scenario.model_copy(update=update)


def test_answer_states_the_asked_values_from_the_run(shop_spec, hand_worlds):
    initial = hand_worlds.SHOP_STATE
    calls = [
        ("find_customer_by_email", {"email": "grace@example.com"}),
        ("get_order", {"order_id": "ORD-0004"}),
    ]
    results, final = _run(shop_spec, initial, calls)
    asked = AskedValue("the total of Grace Hopper's pending order", 12.5, 1, ("data", "total"))
    scenario = _scenario(shop_spec, initial, calls, results, final, asked)
    text = oracle_answer(scenario, final, results, model=from_spec(shop_spec))
    assert text == "The total of Grace Hopper's pending order is $12.50."
    assert mentions(text, 12.5) and not mentions(text, 25.0)
    # Another record's result at that step: the answer reports what that run saw.
    other_results = [results[0], {"success": True, "data": initial["orders"]["ORD-0001"]}]
    assert mentions(oracle_answer(scenario, final, other_results), 25.0)
    # The step that shows it did not run: the answer says so instead of guessing.
    missing = oracle_answer(scenario, final, [results[0], None])
    assert missing == "I could not look up the total of Grace Hopper's pending order."


def test_an_infeasible_request_is_declined_with_the_refusals_reason_and_the_fact_seen(
    shop_spec, hand_worlds
):
    initial = hand_worlds.SHOP_STATE
    calls = [
        ("find_customer_by_email", {"email": "grace@example.com"}),
        ("list_orders", {"customer_id": "CUS-0003"}),
        ("ship_order", {"order_id": "ORD-0004"}),
    ]
    results, final = _run(shop_spec, initial, calls)
    assert results[-1] == {"success": False, "error": "only paid orders can be shipped"}
    asked = AskedValue("the status of Grace Hopper's order", "pending", 1, ("data", 0, "status"))
    scenario = _scenario(shop_spec, initial, calls, results, final, asked, kind="infeasible")
    text = oracle_answer(scenario, final, results, model=from_spec(shop_spec))
    # Declined, the tool's own reason, the blocking fact the lookup showed, nothing changed;
    # no other rule, no other value, no claim of completion.
    assert text == (
        "I couldn't ship the order of customer Grace Hopper: only paid orders can be shipped. "
        "The status of Grace Hopper's order is pending. Nothing was changed."
    )
    assert decline_cue(text) and not completion_claim(text)
    assert not re.search(r"\b(done|all set|successfully)\b", text, re.IGNORECASE)
    _no_tool_names(text, shop_spec)
    _grounded(text, calls, results, initial, final)
    # The refusal gives the tool's own words whatever the run read: the conversation showed
    # them (a run that skipped the lookup states no fact it did not see).
    model = from_spec(shop_spec)
    naming = [*results[:2], {"success": False, "error": "the order is pending, not paid"}]
    assert "is pending, not paid" in oracle_answer(scenario, final, naming, model=model)
    skipped = oracle_answer(scenario, final, [results[0], None, naming[2]], model=model)
    assert skipped.startswith("I couldn't ship the order ORD-0004: the order is pending, not paid.")
    assert "I could not look up the status of Grace Hopper's order." in skipped
    listing = {"success": True, "data": [{**results[1]["data"][0], "status": "cancelled"}]}
    misread = oracle_answer(scenario, final, [results[0], listing, results[2]], model=model)
    assert "only paid orders" in misread and misread.endswith(
        "The status of Grace Hopper's order is cancelled. Nothing was changed."
    )
    # An infeasible request whose refused step never ran still declines, and changed nothing.
    assert oracle_answer(scenario, final, results[:2]).startswith(
        "I did not make the change you asked for."
    )


def test_workspace_answers_describe_the_file_changes_made():
    files = {
        "readings/notes.md": "Title: Notes\nStatus: draft\n\nRead chapter 3.\n",
        "week-01/plan.md": "Title: Plan\n\nWeek one.\n",
    }
    tree = MemoryTree(files, ["readings", "week-01", "spare"], {"STATUSES": ("draft", "final")})
    initial = {WORKSPACE_KEY: {"files": dict(files), "dirs": ["readings", "spare", "week-01"]}}
    calls = [
        ("grep", {"pattern": "Notes"}),
        ("mkdir", {"path": "week-01/review"}),
        ("mv", {"path": "readings/notes.md", "folder": "week-01/review"}),
        ("append", {"path": "week-01/plan.md", "line": "Check the dataset link."}),
        ("set_status", {"path": "week-01/review/notes.md", "status": "final"}),
        ("rmdir", {"path": "spare"}),
    ]
    results = [getattr(tree, tool)(**args) for tool, args in calls]
    assert all(r["success"] for r in results), results
    final = {WORKSPACE_KEY: {"files": dict(tree.files), "dirs": sorted(tree.dirs)}}
    text = final_answer(initial, final, results, calls=calls)
    assert text == (
        "I created the folder week-01/review. I moved readings/notes.md to week-01/review. "
        'I added the line "Check the dataset link." at the end of week-01/plan.md. '
        "I marked week-01/review/notes.md as final. I removed the empty folder spare."
    )
    assert "nothing needed to change" not in text
    _grounded(text, calls, results, initial, final)
    # A run that changed nothing says so, and only then.
    assert final_answer(initial, initial, results[:1], calls=calls[:1]) == (
        "I checked the records you described; nothing needed to change."
    )


@pytest.mark.parametrize(
    ("value", "words"),
    [
        (1200, "1,200"),
        (1200.0, "1,200"),
        (314.07, "314.07"),
        (0.125, "0.125"),
        ("in_progress", "in progress"),
        ("2025-03-04", "March 4, 2025"),
        ("2025-03-04T14:05:00", "March 4, 2025 at 2:05 PM"),
        ("2025-03-04T00:00", "March 4, 2025 at 12 AM"),
        ("2025-03-04T12:30", "March 4, 2025 at 12:30 PM"),
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


TWINS = {
    "wallets": {
        "WAL-1": {"id": "WAL-1", "name": "Office Wallet", "owner_id": "USR-1"},
        "WAL-2": {"id": "WAL-2", "name": "Office Wallet", "owner_id": "USR-2"},
        "WAL-3": {"id": "WAL-3", "name": "Spare Wallet", "owner_id": "USR-1"},
    },
    "users": {
        "USR-1": {"id": "USR-1", "name": "Ann Lee"},
        "USR-2": {"id": "USR-2", "name": "Bo Chen"},
    },
}


@pytest.mark.parametrize(
    ("shown", "first", "second"),
    [
        # Owners shown and different: they tell the two wallets apart.
        (
            ["WAL-1", "WAL-2", "WAL-3", "USR-1", "USR-2"],
            "wallet Office Wallet of user Ann Lee",
            "wallet Office Wallet of user Bo Chen",
        ),
        # Owners never shown: the ids the results showed do.
        (
            ["WAL-1", "WAL-2", "WAL-3"],
            "wallet Office Wallet (WAL-1)",
            "wallet Office Wallet (WAL-2)",
        ),
        # One of them shown: its name alone is no longer ambiguous.
        (["WAL-1", "WAL-3", "USR-1"], "wallet Office Wallet", None),
    ],
)
def test_records_of_one_name_are_told_apart_in_the_answer(shown, first, second):
    from synthesis.tasks.answers import Words

    records = {rid: rec for coll in TWINS.values() for rid, rec in coll.items() if rid in shown}
    words = Words(None, TWINS, TWINS, [{"success": True, "data": list(records.values())}])
    assert words.label("wallets", "WAL-1") == first
    if second is not None:
        assert words.label("wallets", "WAL-2") == second
    # A record whose name no other shares keeps the plain label.
    assert words.label("wallets", "WAL-3") == "wallet Spare Wallet"


def test_a_record_an_earlier_reference_names_is_not_named_again():
    # "a new reaction for the comment of reader Ann Lee for reader Ann Lee" reports nothing
    # more than "for the comment of reader Ann Lee".
    from synthesis.tasks.answers import Words

    shown = [rec for coll in TWINS.values() for rec in coll.values()]
    words = Words(None, TWINS, TWINS, [{"success": True, "data": shown}])
    details = words._details(None, {"wallet_id": "WAL-1", "user_id": "USR-1"})
    assert details.count("Ann Lee") == 1, details
    assert words._details(None, {"wallet_id": "WAL-3", "user_id": "USR-2"}).count("Bo Chen") == 1


def _tree(files: dict) -> dict:
    return {"__workspace__": {"files": files, "dirs": ["reports"], "symlinks": {}, "skipped": {}}}


def test_the_files_a_program_wrote_are_named_not_a_blanket_claim():
    # A `run` call's result does not say what it wrote; the answer names the files the
    # workspace gained, changed or lost, and nothing when the program left it as it was.
    initial = _tree({"README.md": "rules\n", "config/app.ini": "[a]\nx = 1\n"})
    final = _tree(
        {"README.md": "rules\n", "config/app.ini": "[a]\nx = 2\n", "reports/q1.md": "| A |\n"}
    )
    run = ("run", {"command": "python3 - <<'P'\n...\nP\n", "timeout_s": 10})
    done = {"success": True, "data": {"exit_code": 0, "output": ""}}
    answer = final_answer(initial, final, [done], calls=[run])
    assert answer == "I wrote reports/q1.md and changed config/app.ini."
    assert final_answer(initial, initial, [done], calls=[run]) != answer
    # Records, not files: the sentence it always was.
    assert final_answer({"a": {"x": 1}}, {"a": {"x": 2}}, [done], calls=[run]) == (
        "I made the changes the request asked for."
    )
