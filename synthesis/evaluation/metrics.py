"""pass@k and pass^k: how often a model solves a task in k tries, from n tries with c solved.

* **pass@k** (Chen et al., 2021): the chance that at least one of k attempts drawn without
  replacement from the n made succeeds, `1 - C(n-c, k) / C(n, k)`: capability.
* **pass^k** (τ-bench, Yao et al., 2024): the chance that all k of them succeed,
  `C(c, k) / C(n, k)`: reliability. pass^1 = pass@1 = c/n; pass^k falls with k where a model
  solves a task only sometimes.

Both are unbiased estimators per task; a model's figure is their mean over tasks
(`mean_pass_at_k`, `mean_pass_hat_k`). Exact integer binomials, so the hand-computed values
of the tests hold to the last digit.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from fractions import Fraction
from math import comb


def _check(n: int, c: int, k: int) -> None:
    if not (isinstance(n, int) and isinstance(c, int) and isinstance(k, int)):
        raise TypeError("n, c and k are whole numbers")
    if n < 1 or k < 1:
        raise ValueError(f"need n >= 1 and k >= 1 (n={n}, k={k})")
    if not 0 <= c <= n:
        raise ValueError(f"successes c={c} must be between 0 and n={n}")
    if k > n:
        raise ValueError(f"k={k} attempts cannot be drawn from n={n}")


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of k of the n attempts (c of them successful) succeeds."""
    _check(n, c, k)
    if n - c < k:  # every draw of k holds a success
        return 1.0
    return float(1 - Fraction(comb(n - c, k), comb(n, k)))


def pass_hat_k(n: int, c: int, k: int) -> float:
    """τ-bench's pass^k: the chance that all k of the n attempts (c successful) succeed."""
    _check(n, c, k)
    return float(Fraction(comb(c, k), comb(n, k)))


def outcomes_by_task(rows: Iterable[tuple[str, bool]]) -> dict[str, list[bool]]:
    """(task id, success) pairs grouped by task, in the order given."""
    out: dict[str, list[bool]] = {}
    for task, success in rows:
        out.setdefault(task, []).append(bool(success))
    return out


def _mean(outcomes: Mapping[str, Sequence[bool]], k: int, estimator) -> float | None:
    """The estimator's mean over the tasks with at least k attempts; None when none has."""
    values = [
        estimator(len(tries), sum(tries), k) for tries in outcomes.values() if len(tries) >= k
    ]
    if not values:
        return None
    return sum(values) / len(values)


def mean_pass_at_k(outcomes: Mapping[str, Sequence[bool]], k: int) -> float | None:
    """pass@k averaged over tasks (each task's attempts in `outcomes`); tasks with fewer than
    k attempts are left out, and None is returned when no task has k."""
    return _mean(outcomes, k, pass_at_k)


def mean_pass_hat_k(outcomes: Mapping[str, Sequence[bool]], k: int) -> float | None:
    """pass^k averaged over tasks, as `mean_pass_at_k` averages pass@k."""
    return _mean(outcomes, k, pass_hat_k)
