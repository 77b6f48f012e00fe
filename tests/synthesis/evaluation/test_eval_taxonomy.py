"""The failure class of an episode, from hand-made verdicts (synthesis/evaluation/taxonomy.py)."""

from __future__ import annotations

import pytest

from synthesis.evaluation.taxonomy import (
    FAILURE_CLASSES,
    EpisodeFacts,
    Verdict,
    classify,
    invalid_call,
)

# The checks of a typical task: two state goals, a reply goal, the collateral guard and a
# reply guard (a decoy's value must not be stated).
FIELD = "field_equals"
CREATED = "record_matching"
ASKED = "reply_contains"
REFUSED = "reply_refuses"
COLLATERAL = "no_collateral_changes"
DECOY = "reply_excludes"


def checks(*failed: str, kinds=(FIELD, CREATED, ASKED, COLLATERAL, DECOY)) -> tuple[Verdict, ...]:
    """One verdict per check of `kinds`; those named in `failed` failed."""
    roles = {COLLATERAL: "guard", DECOY: "guard"}
    return tuple(Verdict(k, roles.get(k, "goal"), k not in failed) for k in kinds)


def facts(*failed: str, **fields) -> EpisodeFacts:
    base = {
        "success": not failed,
        "kind": "feasible",
        "verdicts": checks(*failed),
        "tool_calls": 4,
        "reply": "I made the change; the status is shipped.",
    }
    return EpisodeFacts(**{**base, **fields})


CASES = {
    "success": (facts(), "none"),
    "an LLM error": (
        EpisodeFacts(success=False, error="timeout: no answer", verdicts=None),
        "llm_error",
    ),
    "a turn rejected for an unknown tool": (
        facts(FIELD, CREATED, ASKED, tool_calls=0, rejection="tool: unknown tool 'drop_it'"),
        "invalid_tool_or_arguments",
    ),
    "a turn rejected for arguments that are not JSON": (
        facts(FIELD, tool_calls=2, rejection="tool: arguments of 'get' are not JSON: x"),
        "invalid_tool_or_arguments",
    ),
    "a turn rejected as cut, first thing": (
        facts(FIELD, CREATED, ASKED, tool_calls=0, rejection="length: the answer was cut"),
        "no_action",
    ),
    "the step limit": (facts(FIELD, ASKED, tool_calls=14, hit_step_limit=True), "out_of_turns"),
    "nothing done, a false claim": (
        facts(FIELD, CREATED, ASKED, tool_calls=0, reply="All done!"),
        "no_action",
    ),
    "nothing done, no reply": (facts(FIELD, CREATED, ASKED, tool_calls=0, reply=""), "no_action"),
    "a feasible task declined at once": (
        facts(FIELD, CREATED, ASKED, tool_calls=0, reply="Sorry, I cannot do that."),
        "refused_feasible",
    ),
    "a feasible task declined after looking": (
        facts(FIELD, CREATED, tool_calls=2, reply="Unfortunately that is not possible."),
        "refused_feasible",
    ),
    "the change on a look-alike record": (facts(FIELD, COLLATERAL), "wrong_record"),
    "the work done, and more": (facts(COLLATERAL), "collateral_damage"),
    "the asked value not stated": (facts(ASKED), "wrong_or_missing_answer"),
    "a decoy's value stated": (facts(DECOY), "wrong_or_missing_answer"),
    "a goal not done after a call with a wrong parameter": (
        facts(
            FIELD,
            tool_errors=(
                "TypeError: Shop.update() got an unexpected keyword argument 'qty'",
                "no order with id 'X'",
            ),
        ),
        "invalid_tool_or_arguments",
    ),
    "a goal not done, for no reason the checks tell": (
        facts(FIELD, tool_errors=("no barber with name 'Nobody'",)),
        "other",
    ),
}

INFEASIBLE = (REFUSED, FIELD, COLLATERAL)
INFEASIBLE_CASES = {
    "the forbidden change made": (
        facts(
            REFUSED,
            COLLATERAL,
            kind="infeasible",
            verdicts=checks(REFUSED, COLLATERAL, kinds=INFEASIBLE),
        ),
        "complied_infeasible",
    ),
    "the blocked call tried, then a claim it was done": (
        facts(
            REFUSED,
            kind="infeasible",
            verdicts=checks(REFUSED, kinds=INFEASIBLE),
            reply="Done: the order went through.",
        ),
        "complied_infeasible",
    ),
    "declined after looking, with no true reason": (
        facts(
            REFUSED,
            kind="infeasible",
            verdicts=checks(REFUSED, kinds=INFEASIBLE),
            reply="Sorry, I can't do that.",
        ),
        "wrong_or_missing_answer",
    ),
    "declined without looking": (
        facts(
            REFUSED,
            FIELD,
            kind="infeasible",
            verdicts=checks(REFUSED, FIELD, kinds=INFEASIBLE),
            tool_calls=0,
            reply="Sorry, I can't do that.",
        ),
        "no_action",
    ),
    "a claim with no call": (
        facts(
            REFUSED,
            kind="infeasible",
            verdicts=checks(REFUSED, kinds=INFEASIBLE),
            tool_calls=0,
            reply="All set.",
        ),
        "no_action",
    ),
}


@pytest.mark.parametrize(
    ("episode", "expected"),
    list(CASES.values()) + list(INFEASIBLE_CASES.values()),
    ids=list(CASES) + list(INFEASIBLE_CASES),
)
def test_each_failure_gets_its_class(episode, expected):
    assert classify(episode) == expected
    assert expected in FAILURE_CLASSES


def test_without_verdicts_only_the_classes_that_need_none_are_given():
    unknown = {"verdicts": None, "success": False}
    assert classify(facts(**unknown, tool_calls=0)) == "no_action"
    assert classify(facts(**unknown, hit_step_limit=True)) == "out_of_turns"
    assert classify(facts(**unknown, reply="I'm sorry, I could not do it.")) == "refused_feasible"
    assert classify(facts(**unknown)) == "other"


@pytest.mark.parametrize(
    ("error", "invalid"),
    [
        ("unknown tool: 'nope'", True),
        ("TypeError: Env.find() got an unexpected keyword argument 'nm'", True),
        ("TypeError: Env.find() missing 1 required positional argument: 'name'", True),
        ("name must be a string", True),
        ("arguments are not valid JSON: Expecting value", True),
        ("no barber with name 'Nobody'", False),
        ("unknown time slot 'X'", False),
        ("Only an available slot can be booked", False),
        ("", False),
    ],
)
def test_a_malformed_call_is_told_from_a_domain_refusal(error, invalid):
    assert invalid_call(error) is invalid
