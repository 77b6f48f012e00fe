"""An infeasible request reads like any other: nothing in its words says a rule will refuse it.

The measure is benchmarks/request_tells.py (a cross-validated bag-of-words AUC); here its AUC
is checked on toy sets, a refused goal is checked to be worded exactly as the same goal
allowed, and planned scenarios are checked for n-grams only infeasible requests carry.
"""

from __future__ import annotations

import random

import pytest

from benchmarks.request_tells import cv_auc, ngrams, roc_auc, telling_ngrams
from synthesis.tasks.phrasing import phrase
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.scenarios import plan_scenarios
from tests.synthesis.tasks.planner_worlds import archetype_worlds

# An n-gram gives the kind away when at least this share of infeasible requests carry it ...
TELL_SHARE = 0.2
# ... and feasible ones at most this many times less often ("tell me why": 74% against 4%).
TELL_RATIO = 4.0


def test_roc_auc_ranks_positives_over_negatives_with_ties_halved():
    assert roc_auc([0.1, 0.4, 0.35, 0.8], [False, False, True, True]) == 0.75
    assert roc_auc([1, 1, 1, 1], [True, False, True, False]) == 0.5
    assert roc_auc([3, 2, 1], [True, False, False]) == 1.0
    with pytest.raises(ValueError):
        roc_auc([1, 2], [True, True])


def _toy(rng: random.Random, tell: str | None) -> str:
    words = ["cancel", "the", "order", "please", "ship", "booking", "today", "thanks", "now"]
    text = " ".join(rng.choice(words) for _ in range(8))
    return f"{text} {tell}" if tell else text


def test_cv_auc_finds_a_clause_only_one_kind_carries_and_nothing_in_noise():
    rng = random.Random(7)
    kinds = [i % 4 == 0 for i in range(200)]
    told = [_toy(rng, "(if it fails, tell me why)" if k else None) for k in kinds]
    assert cv_auc(told, kinds) > 0.99
    untold = [_toy(rng, None) for _ in kinds]
    assert 0.35 < cv_auc(untold, kinds) < 0.65
    # Deterministic: the folds are fixed by the order and the seed.
    assert cv_auc(untold, kinds) == cv_auc(untold, kinds)


def test_ngrams_are_lower_cased_words_and_marks_with_their_pairs():
    grams = ngrams("Cancel it (if you can't, tell me why)")
    assert {"cancel", "can't", "(", "( if", "me why", "why )"} <= grams
    assert "Cancel" not in grams


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


def _refused(then: PlanGoal) -> PlanGoal:
    """The goal as the infeasible planner records it (synthesis.tasks.families.infeasible)."""
    return PlanGoal(kind="refuse", tool=then.tool, verb=then.verb, target=then.target, then=then)


ALLOWED = [
    PlanGoal(
        kind="transition",
        tool="cancel_appointment",
        verb="cancel",
        target="the appointment of patient Ada Lee (ada@example.com) with status completed",
        owner=("patient", "Ada Lee (ada@example.com)"),
        own_target="appointment with status completed",
        to_status="cancelled",
    ),
    PlanGoal(
        kind="update",
        tool="change_slot",
        verb="change",
        target="the slot of dentist Bo Wu",
        values=[("start", "Tuesday 3 March 2026 at 2 pm")],
    ),
    PlanGoal(
        kind="create",
        tool="book_appointment",
        verb="book",
        label="appointment",
        refs=["patient Ada Lee (ada@example.com)", "the slot of dentist Bo Wu"],
        values=[("reason", "check-up")],
    ),
]


@pytest.mark.parametrize("allowed", ALLOWED, ids=lambda g: g.kind)
def test_a_refused_request_is_worded_as_the_same_request_allowed(allowed):
    lookup = PlanGoal(
        kind="ask",
        tool="find_patient",
        verb="tell",
        target="patient Ada Lee (ada@example.com)",
        question="the phone of patient Ada Lee (ada@example.com)",
    )
    for goals in ([allowed], [lookup, allowed]):
        refused = [_refused(g) if g is allowed else g for g in goals]
        for seed in range(40):
            as_allowed = phrase(_plan(goals), random.Random(seed), archetype="booking")
            as_refused = phrase(_plan(refused), random.Random(seed), archetype="booking")
            assert as_refused == as_allowed


def test_feasible_changes_too_are_asked_to_be_explained_if_they_fail():
    goal = ALLOWED[0]
    texts = [phrase(_plan([goal]), random.Random(s))[0] for s in range(200)]
    explained = sum("why" in t or "reason" in t or "stopping it" in t for t in texts)
    assert 0.1 < explained / len(texts) < 0.5


@pytest.fixture(scope="module")
def planned():
    """Scenarios planned over compiled worlds of every archetype (no build)."""
    out = []
    for env, state in archetype_worlds(6, 8):
        out += plan_scenarios(env, state, seed=0, count=40, max_chain_length=14)
    return out


def test_no_ngram_of_planned_requests_gives_an_infeasible_one_away(planned):
    infeasible = [s.kind == "infeasible" for s in planned]
    assert sum(infeasible) >= 30, "too few infeasible requests to judge"
    tells = [
        (gram, round(p, 2), round(q, 2))
        for gram, p, q in telling_ngrams([s.task_text for s in planned], infeasible)
        if p >= TELL_SHARE and p >= TELL_RATIO * q
    ]
    assert tells == []
