"""pass@k and pass^k against values worked out by hand from the binomials."""

from __future__ import annotations

import pytest

from synthesis.evaluation.metrics import (
    mean_pass_at_k,
    mean_pass_hat_k,
    outcomes_by_task,
    pass_at_k,
    pass_hat_k,
)


@pytest.mark.parametrize(
    ("n", "c", "k", "at_k", "hat_k"),
    [
        # k = 1: both are the success rate c/n.
        (5, 2, 1, 2 / 5, 2 / 5),
        # 1 - C(3,2)/C(5,2) = 1 - 3/10; C(2,2)/C(5,2) = 1/10.
        (5, 2, 2, 7 / 10, 1 / 10),
        # 1 - C(3,3)/C(5,3) = 1 - 1/10; C(2,3) = 0.
        (5, 2, 3, 9 / 10, 0.0),
        # n - c = 1 < k: every pair holds a success; C(3,2)/C(4,2) = 3/6.
        (4, 3, 2, 1.0, 1 / 2),
        # 1 - C(3,3)/C(10,3) = 1 - 1/120; C(7,3)/C(10,3) = 35/120.
        (10, 7, 3, 119 / 120, 35 / 120),
        (3, 3, 3, 1.0, 1.0),
        (3, 0, 2, 0.0, 0.0),
        (1, 1, 1, 1.0, 1.0),
    ],
)
def test_pass_at_k_and_pass_hat_k_match_the_hand_computed_values(n, c, k, at_k, hat_k):
    assert pass_at_k(n, c, k) == pytest.approx(at_k, abs=1e-15)
    assert pass_hat_k(n, c, k) == pytest.approx(hat_k, abs=1e-15)


def test_pass_hat_k_falls_and_pass_at_k_rises_with_k_for_a_task_solved_sometimes():
    hats = [pass_hat_k(8, 5, k) for k in range(1, 9)]
    ats = [pass_at_k(8, 5, k) for k in range(1, 9)]
    assert hats == sorted(hats, reverse=True) and hats[0] == 5 / 8 and hats[-1] == 0.0
    assert ats == sorted(ats) and ats[0] == 5 / 8 and ats[-1] == 1.0


@pytest.mark.parametrize(("n", "c", "k"), [(3, 1, 4), (3, 4, 1), (0, 0, 1), (3, 1, 0), (3, -1, 1)])
def test_impossible_counts_are_refused(n, c, k):
    with pytest.raises(ValueError):
        pass_at_k(n, c, k)
    with pytest.raises(ValueError):
        pass_hat_k(n, c, k)


def test_the_means_average_over_tasks_and_leave_out_tasks_with_fewer_attempts():
    outcomes = outcomes_by_task(
        [("a", True), ("a", True), ("a", False), ("a", True)]  # n=4, c=3
        + [("b", False), ("b", True), ("b", False), ("b", False)]  # n=4, c=1
        + [("c", True)]  # one attempt: no pass^2 of its own
    )
    assert outcomes == {
        "a": [True, True, False, True],
        "b": [False, True, False, False],
        "c": [True],
    }
    # pass^2: a = C(3,2)/C(4,2) = 1/2, b = C(1,2)/6 = 0 -> 1/4.
    assert mean_pass_hat_k(outcomes, 2) == pytest.approx(0.25)
    # pass@2: a = 1 (n-c = 1 < 2), b = 1 - C(3,2)/C(4,2) = 1/2 -> 3/4.
    assert mean_pass_at_k(outcomes, 2) == pytest.approx(0.75)
    # k = 1 counts every task: (3/4 + 1/4 + 1) / 3.
    assert mean_pass_hat_k(outcomes, 1) == pytest.approx(2 / 3)
    assert mean_pass_at_k(outcomes, 5) is None and mean_pass_hat_k({}, 1) is None
