"""`envfoundry eval --compare A B`: two models' success rates on a dataset, and how sure the
difference B − A is, from what is recorded (nothing is played).

Per archetype and overall, on the home's current dataset (the episodes that count, as the
marts count them: the latest of each model's attempt at a task):

* **paired**, where the two models played tasks in common: the tasks both played are the
  sample; each task's success rate over its attempts is taken per model, B − A per task, and
  the 95% interval is a percentile bootstrap over the tasks (`RESAMPLES` resamples with
  replacement, numpy's generator seeded with `SEED`, the 2.5th and 97.5th percentiles as
  order statistics), so the same records always give the same interval. The rates shown
  are then the means over those tasks; tasks only one model played are left out (said).
* **unpaired**, where they played no task in common: every episode of each, taken as
  independent; the interval is Newcombe's hybrid score interval (method 10 of Newcombe 1998,
  from the two Wilson score intervals).

The functions of the statistics are pure (`wilson_interval`, `newcombe_interval`,
`paired_bootstrap_interval`, `compare_groups`); `read_outcomes` reads the records.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import NormalDist

from synthesis.evaluation.dataset import EvalError, current_dataset
from synthesis.evaluation.leaderboard import dataset_key
from synthesis.evaluation.store import evals_path, read_evals

LEVEL = 0.95
RESAMPLES = 10_000
SEED = 0
PAIRED = "paired"
UNPAIRED = "unpaired"
OVERALL = "overall"
# Resample this many values at a time at most (memory: resamples x tasks indices).
_CHUNK_VALUES = 2_000_000


def z_value(level: float = LEVEL) -> float:
    """The two-sided normal quantile of `level` (1.959964 for 95%)."""
    return NormalDist().inv_cdf(0.5 + level / 2)


def wilson_interval(successes: int, n: int, level: float = LEVEL) -> tuple[float, float]:
    """Wilson's score interval of a proportion successes / n (n >= 1)."""
    if n < 1 or not 0 <= successes <= n:
        raise ValueError(f"need 0 <= successes <= n and n >= 1 (got {successes}, {n})")
    z = z_value(level)
    p = successes / n
    denominator = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def newcombe_interval(
    successes_a: int, n_a: int, successes_b: int, n_b: int, level: float = LEVEL
) -> tuple[float, float]:
    """Newcombe's hybrid score interval (1998, method 10) of p_b − p_a for two independent
    proportions, from the Wilson intervals (l, u) of each:
    [d − sqrt((p_b − l_b)² + (u_a − p_a)²), d + sqrt((u_b − p_b)² + (p_a − l_a)²)]."""
    p_a, p_b = successes_a / n_a, successes_b / n_b
    l_a, u_a = wilson_interval(successes_a, n_a, level)
    l_b, u_b = wilson_interval(successes_b, n_b, level)
    d = p_b - p_a
    return (
        d - math.sqrt((p_b - l_b) ** 2 + (u_a - p_a) ** 2),
        d + math.sqrt((u_b - p_b) ** 2 + (p_a - l_a) ** 2),
    )


def paired_bootstrap_interval(
    differences: Sequence[float],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> tuple[float, float]:
    """The percentile bootstrap interval of the mean of `differences` (one per task):
    `resamples` means of samples drawn with replacement (numpy's default generator seeded
    with `seed`), sorted; the bounds are the order statistics at floor(R·α/2) and
    ceil(R·(1 − α/2)) − 1 (0-based)."""
    import numpy as np

    values = np.asarray(differences, dtype=float)
    n = len(values)
    if n == 0:
        raise ValueError("no paired difference to resample")
    rng = np.random.default_rng(seed)
    chunk = max(1, _CHUNK_VALUES // n)
    means = []
    for start in range(0, resamples, chunk):
        size = min(chunk, resamples - start)
        means.append(values[rng.integers(0, n, size=(size, n))].mean(axis=1))
    ordered = np.sort(np.concatenate(means))
    alpha = 1 - level
    low = ordered[math.floor(resamples * alpha / 2)]
    high = ordered[math.ceil(resamples * (1 - alpha / 2)) - 1]
    return float(low), float(high)


# (successes, attempts) of one model at one task
Outcome = tuple[int, int]


@dataclass(frozen=True)
class Comparison:
    """One group's comparison: the success rates of A and B, B − A and its interval."""

    group: str
    method: str | None  # paired | unpaired | None (one model played nothing here)
    rate_a: float | None
    rate_b: float | None
    difference: float | None
    low: float | None
    high: float | None
    tasks_a: int
    tasks_b: int
    paired_tasks: int  # tasks both played (the sample, when paired)
    episodes_a: int
    episodes_b: int

    @property
    def left_out(self) -> int:
        """Tasks only one of the two played (left out of a paired comparison)."""
        return self.tasks_a + self.tasks_b - 2 * self.paired_tasks if self.paired_tasks else 0


def compare_tasks(
    group: str,
    a: Mapping[str, Outcome],
    b: Mapping[str, Outcome],
    *,
    resamples: int = RESAMPLES,
    seed: int = SEED,
    level: float = LEVEL,
) -> Comparison:
    """Compare two models on one group of tasks, each given as task → (successes, attempts):
    paired over the tasks both played, else unpaired over every episode."""
    common = sorted(set(a) & set(b))
    episodes_a = sum(n for _, n in a.values())
    episodes_b = sum(n for _, n in b.values())
    base = {
        "group": group,
        "tasks_a": len(a),
        "tasks_b": len(b),
        "paired_tasks": len(common),
        "episodes_a": episodes_a,
        "episodes_b": episodes_b,
    }
    if common:
        rates_a = [a[t][0] / a[t][1] for t in common]
        rates_b = [b[t][0] / b[t][1] for t in common]
        diffs = [y - x for x, y in zip(rates_a, rates_b, strict=True)]
        low, high = paired_bootstrap_interval(diffs, resamples=resamples, seed=seed, level=level)
        return Comparison(
            method=PAIRED,
            rate_a=sum(rates_a) / len(common),
            rate_b=sum(rates_b) / len(common),
            difference=sum(diffs) / len(diffs),
            low=low,
            high=high,
            **base,
        )
    if not episodes_a or not episodes_b:
        rate_a = sum(s for s, _ in a.values()) / episodes_a if episodes_a else None
        rate_b = sum(s for s, _ in b.values()) / episodes_b if episodes_b else None
        return Comparison(
            method=None,
            rate_a=rate_a,
            rate_b=rate_b,
            difference=None,
            low=None,
            high=None,
            **base,
        )
    successes_a = sum(s for s, _ in a.values())
    successes_b = sum(s for s, _ in b.values())
    low, high = newcombe_interval(successes_a, episodes_a, successes_b, episodes_b, level)
    return Comparison(
        method=UNPAIRED,
        rate_a=successes_a / episodes_a,
        rate_b=successes_b / episodes_b,
        difference=successes_b / episodes_b - successes_a / episodes_a,
        low=low,
        high=high,
        **base,
    )


def compare_groups(
    a: Mapping[str, Outcome],
    b: Mapping[str, Outcome],
    archetype: Mapping[str, str],
    **options,
) -> list[Comparison]:
    """The comparison overall and per archetype (`archetype`: task → its archetype)."""
    out = [compare_tasks(OVERALL, a, b, **options)]
    for name in sorted({archetype[t] for t in [*a, *b]}):
        out.append(
            compare_tasks(
                name,
                {t: v for t, v in a.items() if archetype[t] == name},
                {t: v for t, v in b.items() if archetype[t] == name},
                **options,
            )
        )
    return out


# --------------------------------------------------------------------------- the records

# The episodes that count, as int_eval_episodes (dbt_project/models/eval) counts them: the
# latest row per episode_key, then the latest per (model, dataset, task, attempt).
COUNTED_EPISODES = """
WITH by_key AS (
    SELECT *, row_number() OVER (
        PARTITION BY episode_key
        ORDER BY finished_at DESC NULLS LAST, started_at DESC NULLS LAST, run_id DESC
    ) AS key_rank
    FROM eval_episodes WHERE manifest_sha256 = ?
), by_attempt AS (
    SELECT *, row_number() OVER (
        PARTITION BY model, manifest_sha256, scenario_id, attempt
        ORDER BY finished_at DESC NULLS LAST, started_at DESC NULLS LAST, episode_key DESC
    ) AS attempt_rank
    FROM by_key WHERE key_rank = 1
)
SELECT model, scenario_id, archetype, count(*) AS attempts,
       count(*) FILTER (WHERE coalesce(success, false)) AS successes
FROM by_attempt WHERE attempt_rank = 1
GROUP BY model, scenario_id, archetype
ORDER BY model, scenario_id
"""


@dataclass
class Records:
    dataset_id: str
    manifest_sha256: str
    outcomes: dict[str, dict[str, Outcome]]  # model → task → (successes, attempts)
    archetype: dict[str, str]  # task → archetype


def read_outcomes(home: Path) -> Records:
    """Every model's outcomes per task on the home's current dataset (read-only)."""
    home = Path(home)
    dataset = current_dataset(home)
    key = dataset_key(dataset)
    path = evals_path(home)
    if not path.is_file():
        raise EvalError(f"no evaluation recorded in {home}: run `envfoundry eval --model NAME`")
    with read_evals(path) as con:
        rows = con.execute(COUNTED_EPISODES, [key]).fetchall()
    outcomes: dict[str, dict[str, Outcome]] = {}
    archetype: dict[str, str] = {}
    for model, scenario_id, kind_of, attempts, successes in rows:
        outcomes.setdefault(model, {})[scenario_id] = (int(successes), int(attempts))
        archetype[scenario_id] = kind_of
    return Records(dataset.dataset_id, key, outcomes, archetype)


def compare_models(home: Path, model_a: str, model_b: str, **options) -> tuple[Records, list]:
    """The comparison of two models recorded on the home's current dataset."""
    records = read_outcomes(home)
    missing = [m for m in (model_a, model_b) if m not in records.outcomes]
    if missing:
        known = ", ".join(sorted(records.outcomes)) or "none"
        raise EvalError(
            f"no episode of {' or '.join(missing)} on dataset {records.dataset_id} "
            f"(models recorded on it: {known})"
        )
    return records, compare_groups(
        records.outcomes[model_a], records.outcomes[model_b], records.archetype, **options
    )


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _pp(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:+.1f}"


def format_comparison(
    records: Records, model_a: str, model_b: str, rows: Sequence[Comparison]
) -> list[str]:
    """The comparison as lines of text for the console."""
    width = max(len("group"), *(len(r.group) for r in rows))
    lines = [
        f"Compare A = {model_a} with B = {model_b} on dataset {records.dataset_id} (manifest "
        f"{records.manifest_sha256[:12]}): success rates, B − A in points, its "
        f"{LEVEL:.0%} interval",
        f"  {'group':<{width}}  {'tasks A/B/both':>14}  {'A':>6}  {'B':>6}  {'B − A':>6}  "
        f"{'95% interval':>16}  method",
    ]
    for r in rows:
        interval = f"[{_pp(r.low)}, {_pp(r.high)}]" if r.low is not None else "–"
        method = r.method or "none: one model played no task here"
        if r.method == PAIRED:
            method += f" ({r.paired_tasks} tasks" + (
                f"; {r.left_out} played by one only, left out)" if r.left_out else ")"
            )
        elif r.method == UNPAIRED:
            method += f" ({r.episodes_a} + {r.episodes_b} episodes)"
        tasks = f"{r.tasks_a}/{r.tasks_b}/{r.paired_tasks}"
        lines.append(
            f"  {r.group:<{width}}  {tasks:>14}  {_pct(r.rate_a):>6}  {_pct(r.rate_b):>6}  "
            f"{_pp(r.difference):>6}  {interval:>16}  {method}"
        )
    lines += [
        f"  paired: the tasks both models played, each task's success rate over its attempts, "
        f"B − A per task; the interval a percentile bootstrap over those tasks ({RESAMPLES:,} "
        f"resamples, seed {SEED}).",
        "  unpaired (no task in common): every episode taken as independent; Newcombe's "
        "hybrid score interval (Wilson intervals of the two rates).",
        "  An interval that excludes 0 says B and A differ at the 95% level on these tasks.",
    ]
    return lines
