"""`envfoundry eval --compare`: the intervals against published and hand-computed values, and
the comparison of the hand-made home's models (eval_fixtures.py), without dbt or a model."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction
from itertools import product

import pytest

from synthesis.evaluation.command import eval_main
from synthesis.evaluation.compare import (
    OVERALL,
    PAIRED,
    UNPAIRED,
    compare_models,
    compare_tasks,
    newcombe_interval,
    paired_bootstrap_interval,
    wilson_interval,
    z_value,
)
from synthesis.evaluation.dataset import EvalError
from tests.synthesis.evaluation.eval_fixtures import ALPHA, BETA, GAMMA, make_home


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return make_home(tmp_path_factory.mktemp("compare"))


def rounded(pair, digits=4):
    return tuple(round(x, digits) for x in pair)


def test_z_is_the_normal_quantile():
    assert z_value(0.95) == pytest.approx(1.959964, abs=1e-6)


@pytest.mark.parametrize(
    ("successes", "n", "expected"),
    [
        # Newcombe (1998), "Two-sided confidence intervals for the single proportion", table I.
        (81, 263, (0.2553, 0.3662)),
        (15, 148, (0.0624, 0.1605)),
        (0, 20, (0.0, 0.1611)),
        (1, 29, (0.0061, 0.1718)),
    ],
)
def test_wilson_interval_matches_newcombes_table(successes, n, expected):
    assert rounded(wilson_interval(successes, n)) == expected


@pytest.mark.parametrize(
    ("b", "a", "expected"),
    [
        # Newcombe (1998), "Interval estimation for the difference between independent
        # proportions", table II, method 10 (hybrid score): (successes, n) of each sample,
        # the interval of p_b - p_a.
        ((56, 70), (48, 80), (0.0524, 0.3339)),
        ((9, 10), (3, 10), (0.1705, 0.8090)),
        ((6, 7), (2, 7), (0.0582, 0.8062)),
        ((5, 56), (0, 29), (-0.0381, 0.1926)),
        ((0, 10), (0, 20), (-0.1611, 0.2775)),
        ((10, 10), (0, 20), (0.6791, 1.0)),
    ],
)
def test_newcombe_interval_matches_newcombes_table(b, a, expected):
    assert rounded(newcombe_interval(a[0], a[1], b[0], b[1])) == expected


def test_the_paired_bootstrap_gives_the_hand_computed_percentiles():
    # Equal differences: every resample's mean is that value.
    assert paired_bootstrap_interval([0.25] * 7) == pytest.approx((0.25, 0.25))
    # Two tasks, differences 0 and 1: resample means 0, 1/2, 1 with chances 1/4, 1/2, 1/4;
    # the 2.5th percentile is 0 and the 97.5th is 1.
    assert paired_bootstrap_interval([0.0, 1.0]) == (0.0, 1.0)
    # Four tasks, one difference 1: the mean is (ones drawn)/4, ones ~ Binomial(4, 1/4):
    # P(0) = 0.316 > 2.5%; P(<= 2) = 0.949 < 97.5% <= P(<= 3) = 0.996: [0, 3/4].
    assert paired_bootstrap_interval([1.0, 0.0, 0.0, 0.0]) == (0.0, 0.75)
    # The seed is fixed: the same differences give the same interval.
    diffs = [0.1 * i for i in range(-5, 9)]
    assert paired_bootstrap_interval(diffs) == paired_bootstrap_interval(diffs)
    with pytest.raises(ValueError):
        paired_bootstrap_interval([])


def exact_bootstrap_interval(diffs, level=0.95):
    """The percentiles of the bootstrap distribution itself: every ordered resample of
    the differences, each as likely (len**len of them)."""
    n = len(diffs)
    means = Counter(sum(draw) / n for draw in product([Fraction(d) for d in diffs], repeat=n))
    total, seen, low, high = n**n, 0, None, None
    for value in sorted(means):
        seen += means[value]
        if low is None and Fraction(seen, total) >= Fraction(1 - level) / 2:
            low = value
        if high is None and Fraction(seen, total) >= 1 - Fraction(1 - level) / 2:
            high = value
    return low, high


def test_alpha_and_beta_are_compared_paired_by_task(home):
    records, rows = compare_models(home, ALPHA, BETA)
    by_group = {r.group: r for r in rows}
    assert list(by_group) == [OVERALL, "booking", "ledger"]
    overall = by_group[OVERALL]
    # Per-task success rates: alpha s1..s4 = 1, 1/3, 0, 2/3; beta = 1/2, 1, 1, 0.
    # B - A per task: -1/2, 2/3, 1, -2/3; their mean 1/8.
    assert overall.method == PAIRED and overall.paired_tasks == 4 and overall.left_out == 0
    assert (overall.rate_a, overall.rate_b) == pytest.approx((0.5, 0.625))
    assert overall.difference == pytest.approx(0.125)
    diffs = [Fraction(-1, 2), Fraction(2, 3), Fraction(1), Fraction(-2, 3)]
    low, high = exact_bootstrap_interval(diffs)
    assert (low, high) == (Fraction(-7, 12), Fraction(5, 6))
    assert (overall.low, overall.high) == pytest.approx((float(low), float(high)))
    # Two tasks each: resample means d1, (d1 + d2)/2, d2 with chances 1/4, 1/2, 1/4.
    booking, ledger = by_group["booking"], by_group["ledger"]
    assert (booking.rate_a, booking.rate_b) == pytest.approx((2 / 3, 0.75))
    assert booking.difference == pytest.approx(1 / 12)
    assert (booking.low, booking.high) == pytest.approx((-0.5, 2 / 3))
    assert (ledger.rate_a, ledger.rate_b) == pytest.approx((1 / 3, 0.5))
    assert ledger.difference == pytest.approx(1 / 6)
    assert (ledger.low, ledger.high) == pytest.approx((-2 / 3, 1.0))
    assert (overall.episodes_a, overall.episodes_b) == (12, 5)
    assert records.outcomes[BETA]["s4"] == (0, 1)  # the superseded success is not counted


def test_models_without_a_task_in_common_are_compared_unpaired(home):
    _, rows = compare_models(home, ALPHA, GAMMA)
    by_group = {r.group: r for r in rows}
    overall, ledger, booking = by_group[OVERALL], by_group["ledger"], by_group["booking"]
    # alpha 6 of 12 episodes, gamma 1 of 3, no task in common: Newcombe on the episodes.
    assert overall.method == UNPAIRED and overall.paired_tasks == 0
    assert (overall.rate_a, overall.rate_b, overall.difference) == pytest.approx(
        (0.5, 1 / 3, -1 / 6)
    )
    assert (overall.low, overall.high) == pytest.approx(newcombe_interval(6, 12, 1, 3))
    assert (ledger.rate_a, ledger.rate_b) == pytest.approx((2 / 6, 0.5))
    assert (ledger.low, ledger.high) == pytest.approx(newcombe_interval(2, 6, 1, 2))
    # gamma played no booking task: the rates only, no difference.
    assert booking.method is None and booking.rate_b is None and booking.low is None
    assert booking.rate_a == pytest.approx(4 / 6)
    # Only gamma played the foreign environment: its rate, no difference.
    foreign = by_group["foreign"]
    assert foreign.method is None and foreign.rate_a is None and foreign.rate_b == 0.0


def test_tasks_only_one_model_played_are_left_out_of_a_paired_comparison():
    a = {"t1": (1, 1), "t2": (0, 1), "t3": (1, 1)}
    b = {"t1": (0, 1), "t2": (1, 2), "t9": (1, 1)}
    row = compare_tasks("g", a, b)
    # Common t1, t2: A = 1, 0; B = 0, 1/2.
    assert (row.method, row.paired_tasks, row.left_out) == (PAIRED, 2, 2)
    assert (row.rate_a, row.rate_b, row.difference) == pytest.approx((0.5, 0.25, -0.25))
    assert (row.low, row.high) == pytest.approx((-1.0, 0.5))


def test_the_command_compares_without_playing_and_says_how(home, capsys):
    lines: list[str] = []
    assert eval_main(["--home", str(home), "--compare", ALPHA, BETA], out=lines.append) == 0
    text = "\n".join(lines)
    assert f"A = {ALPHA} with B = {BETA}" in text
    overall = next(line for line in lines if line.strip().startswith("overall"))
    assert "50.0%" in overall and "62.5%" in overall and "+12.5" in overall
    assert "[-58.3, +83.3]" in overall and "paired (4 tasks)" in overall
    assert "percentile bootstrap" in text and "seed 0" in text and "Newcombe" in text
    again: list[str] = []
    eval_main(["--home", str(home), "--compare", ALPHA, BETA], out=again.append)
    assert again == lines  # a fixed seed: the same interval every time
    unpaired: list[str] = []
    assert eval_main(["--home", str(home), "--compare", ALPHA, GAMMA], out=unpaired.append) == 0
    assert "unpaired (12 + 3 episodes)" in "\n".join(unpaired)
    assert eval_main(["--home", str(home), "--compare", ALPHA, "nobody"]) == 1
    err = capsys.readouterr().err
    assert "no episode of nobody" in err and "alpha, beta, gamma" in err


def test_compare_needs_an_evaluated_home(tmp_path):
    with pytest.raises(EvalError, match="no published dataset"):
        compare_models(tmp_path, ALPHA, BETA)


def test_the_command_takes_one_mode(home, capsys):
    with pytest.raises(SystemExit):
        eval_main(["--home", str(home)])
    assert "one of the arguments --model --compare --leaderboard is required" in (
        capsys.readouterr().err
    )
    with pytest.raises(SystemExit):
        eval_main(["--model", "m", "--compare", "a", "b"])
    assert "not allowed with argument" in capsys.readouterr().err
