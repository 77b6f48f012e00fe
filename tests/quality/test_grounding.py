"""The grounding checker: an answer may state only what its conversation showed, and may not
deny a change the episode made."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from quality.grounding import answer_problems, episode_messages

SYSTEM = "You are an assistant operating Arcade credits."
STATE = {"cards": {"GC-1": {"id": "GC-1", "name": "Season Card", "balance": 192.16}}}
AFTER = {"cards": {"GC-1": {"id": "GC-1", "name": "Season Card", "balance": 179.84}}}


def conversation(
    request: str, steps: Sequence[tuple[str, dict[str, Any], Any]], answer: str
) -> list[dict[str, Any]]:
    """An episode's chat as the rollouts record it: each (tool, arguments, result) is one
    assistant call and its tool message, then the final answer."""
    calls = [(tool, args) for tool, args, _ in steps]
    results = [result for _, _, result in steps]
    return episode_messages(SYSTEM, request, calls, results, answer)


LOOKUP = (
    "find_card_by_number",
    {"number": "GC-884767"},
    {"success": True, "data": {"id": "GC-1", "name": "Season Card", "balance": 192.16}},
)
WITHDRAW = (
    "withdraw",
    {"card_id": "GC-1", "amount": 12.32},
    {"success": True, "data": {"id": "WD-9", "card_id": "GC-1", "amount": 12.32}},
)
REQUEST = "Please take $12.32 off the Season Card (number GC-884767) on March 4, 2026."


def test_a_grounded_answer_has_no_problems():
    answer = (
        "I created a new withdrawal for game card Season Card with amount $12.32 on "
        "March 4, 2026 at 2 PM. Its balance was 192.16 before."
    )
    steps = [LOOKUP, (*WITHDRAW[:2], {**WITHDRAW[2], "at": "2026-03-04T14:00:00"})]
    assert answer_problems(conversation(REQUEST, steps, answer), STATE, AFTER) == []


def test_a_value_only_the_final_state_holds_is_caught():
    answer = "Game card Season Card now has a balance of 179.84."
    problems = answer_problems(conversation(REQUEST, [LOOKUP, WITHDRAW], answer), STATE, AFTER)
    assert problems == ["states number '179.84', which no earlier message shows"]


def test_unseen_names_ids_dates_emails_and_phones_are_caught():
    answer = (
        "I sent a note to Ann Lee (ann@example.com, +1-546-076-1028) about order ORD-0004 "
        "on March 9, 2026 at 10:30."
    )
    problems = answer_problems(conversation(REQUEST, [LOOKUP, WITHDRAW], answer), STATE, AFTER)
    kinds = {p.split(" ", 2)[1] for p in problems}
    assert kinds == {"name", "email", "phone", "id", "date", "time"}, problems
    # The same values are fine once a tool result showed them, in any format.
    shown = (
        "get_customer",
        {"customer_id": "CUS-1"},
        {
            "success": True,
            "data": {
                "name": "Ann Lee",
                "email": "ann@example.com",
                "phone": "+1-546-076-1028",
                "order": "ORD-0004",
                "when": "2026-03-09T10:30:00",
            },
        },
    )
    steps = [LOOKUP, WITHDRAW, shown]
    assert answer_problems(conversation(REQUEST, steps, answer), STATE, AFTER) == []


def test_a_denial_of_a_change_the_episode_made_is_caught():
    answer = "I checked the records you described; nothing needed to change."
    problems = answer_problems(conversation(REQUEST, [LOOKUP, WITHDRAW], answer), STATE, AFTER)
    assert problems == ["says 'nothing needed to change', but the episode changed the state"]
    # The same words are true when nothing changed (a refused request).
    refused = (*WITHDRAW[:2], {"success": False, "error": "insufficient balance"})
    honest = "I couldn't take that off: insufficient balance. Nothing was changed."
    assert answer_problems(conversation(REQUEST, [LOOKUP, refused], honest), STATE, STATE) == []


def test_the_assistants_own_earlier_words_are_no_evidence():
    messages = conversation(REQUEST, [LOOKUP], "Its balance is 500.")
    messages.insert(-1, {"role": "assistant", "content": "The balance is 500, I think."})
    assert answer_problems(messages, STATE, STATE) == [
        "states number '500', which no earlier message shows"
    ]
    assert answer_problems([{"role": "user", "content": "hi"}], STATE, STATE) == []


def test_a_run_held_as_calls_and_results_is_checked_as_its_chat():
    calls = [LOOKUP[:2], WITHDRAW[:2]]
    # A mutant that dropped the lookup: its value is no longer shown, so stating it is caught.
    messages = episode_messages(SYSTEM, REQUEST, calls, [None, WITHDRAW[2]], "It was 192.16.")
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "assistant"]
    assert answer_problems(messages, STATE, AFTER) == [
        "states number '192.16', which no earlier message shows"
    ]
    full = episode_messages(SYSTEM, REQUEST, calls, [LOOKUP[2], WITHDRAW[2]], "It was 192.16.")
    assert answer_problems(full, STATE, AFTER) == []
