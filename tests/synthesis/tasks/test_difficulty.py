"""Difficulty tiers: the structural tier, and the final tier the guesser's attempts move."""

from __future__ import annotations

import pytest

from synthesis.tasks.difficulty import difficulty_record, final_tier, with_attempts


@pytest.mark.parametrize(
    ("structural", "attempts", "solved", "final"),
    [
        ("medium", 3, 3, "easy"),  # every attempt solved it: one band easier
        ("easy", 3, 3, "easy"),  # never below easy
        ("medium", 3, 0, "hard"),  # none did: one band harder
        ("expert", 3, 0, "expert"),  # never above expert
        ("hard", 3, 1, "hard"),  # mixed results: structure stands
        ("hard", 0, 0, "hard"),  # no attempts: structure stands
    ],
)
def test_final_tier_moves_the_structural_tier_by_agreeing_attempts(
    structural, attempts, solved, final
):
    assert final_tier(structural, attempts, solved) == final


def test_with_attempts_keeps_the_structural_record_and_adds_the_baseline():
    record = difficulty_record(
        steps=4,
        n_mutations=1,
        n_lookups=3,
        hidden_lookups=1,
        decoys=2,
        conditionals=0,
        infeasible=False,
    )
    assert record["tier"] == "medium"  # 4 + 1 + 2 = 7 points
    rated = with_attempts(record, [True, False, True])
    assert {k: rated[k] for k in record} == record
    assert rated["baseline_attempts"] == 3
    assert rated["baseline_solve_rate"] == pytest.approx(2 / 3)
    assert rated["final_tier"] == record["tier"]
    assert with_attempts(record, [])["baseline_solve_rate"] is None
    assert with_attempts(record, [False, False])["final_tier"] == "hard"
    assert with_attempts(record, [True, True])["final_tier"] == "easy"


def test_a_record_without_a_structural_tier_gets_no_final_tier_made_up():
    rated = with_attempts({"chain_length": 3}, [True, True])
    assert rated["final_tier"] is None and rated["baseline_solve_rate"] == 1.0
