"""Proof checks: what one environment's stored self-tests and quarantine must show.

They read the `checks` stage's artifact as it is stored (scenarios, self-tests, quarantine),
not the values the stage held in memory, so an artifact edited or damaged on disk fails them
when they run again. Four statements, each with what it measured:

* `published_scenarios_proven`: every published scenario has a self-test that proved it
  (gold passes and earns reward 1; the baselines, doing nothing, refusing and acting on a
  decoy record, fail and earn 0 (`noop_fail`); two replays agree).
* `mutation_kill_rate`: the mean mutant kill rate of the published scenarios reaches the
  profile's bar. Scenarios whose every mutant was equivalent to the gold chain (n_mutants 0:
  no final-state check could tell them apart) measured nothing and are left out of the mean.
* `unproven_scenarios_quarantined`: every scenario held back is in quarantine with a reason.
  With the first check this says every unproven scenario is quarantined with a reason.
* `has_published_scenarios`: the environment publishes at least one scenario.

Plain Python: the Dagster asset checks in assets/checks.py only map these results.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from synthesis.models import CheckSelftest, QuarantineRecord, Scenario

PUBLISHED_PROVEN = "published_scenarios_proven"
KILL_RATE = "mutation_kill_rate"
UNPROVEN_QUARANTINED = "unproven_scenarios_quarantined"
HAS_PUBLISHED = "has_published_scenarios"
PROOF_CHECKS = (PUBLISHED_PROVEN, KILL_RATE, UNPROVEN_QUARANTINED, HAS_PUBLISHED)


@dataclass(frozen=True)
class ProofResult:
    """One proof check's verdict and what it measured."""

    name: str
    passed: bool
    summary: str
    measured: dict[str, Any] = field(default_factory=dict)
    """Counts and rates, JSON-like scalars."""
    offenders: dict[str, str] = field(default_factory=dict)
    """scenario id → why it offends, at most `max_offenders` of them (see `measured`)."""


def evaluate_proofs(
    artifact: Mapping[str, Any], *, min_kill_rate: float, max_offenders: int = 5
) -> list[ProofResult]:
    """The four proof checks over one environment's stored `checks` artifact, in PROOF_CHECKS
    order. `artifact` holds `scenarios`, `selftests` and `quarantine` as stored."""
    scenarios = [Scenario.model_validate(s) for s in artifact["scenarios"]]
    selftests = {
        t.scenario_id: t for t in (CheckSelftest.model_validate(t) for t in artifact["selftests"])
    }
    quarantine = [QuarantineRecord.model_validate(q) for q in artifact["quarantine"]]
    published = [s for s in scenarios if s.status == "published"]
    held_back = [s for s in scenarios if s.status != "published"]

    def first(items: dict[str, str]) -> dict[str, str]:
        return dict(list(items.items())[:max_offenders])

    # 1. Every published scenario is proven.
    unproven = {}
    for s in published:
        test = selftests.get(s.scenario_id)
        if test is None:
            unproven[s.scenario_id] = "no self-test"
        elif not test.proven:
            failed = [
                name
                for name, ok in (
                    ("gold_pass", test.gold_pass),
                    ("noop_fail", test.noop_fail),
                    ("deterministic", test.deterministic),
                    ("shortcuts_fail", test.shortcuts_fail),
                    ("alternatives_pass", test.alternatives_pass),
                )
                if not ok
            ]
            unproven[s.scenario_id] = f"{', '.join(failed)} false" + (
                f": {test.reason}" if test.reason else ""
            )
    proven_check = ProofResult(
        PUBLISHED_PROVEN,
        passed=not unproven,
        summary=f"{len(published) - len(unproven)} of {len(published)} published scenarios proven",
        measured={
            "published": len(published),
            "proven": len(published) - len(unproven),
            "unproven": len(unproven),
        },
        offenders=first(unproven),
    )

    # 2. The mean mutant kill rate of the published scenarios reaches the bar.
    rates = {
        s.scenario_id: t.mutation_kill_rate
        for s in published
        if (t := selftests.get(s.scenario_id)) is not None and t.n_mutants > 0
    }
    mean = sum(rates.values()) / len(rates) if rates else None
    # Nothing published: nothing to measure (has_published_scenarios says so). Published
    # scenarios but no mutant anywhere: the checks' sharpness is unknown, not proven.
    passed = mean >= min_kill_rate if mean is not None else not published
    weakest = sorted(rates.items(), key=lambda kv: (kv[1], kv[0]))
    kill_check = ProofResult(
        KILL_RATE,
        passed=passed,
        summary=(
            f"mean kill rate {mean:.3f} over {len(rates)} published scenarios "
            f"(bar {min_kill_rate:g})"
            if mean is not None
            else f"no published scenario has a mutant to measure (bar {min_kill_rate:g})"
        ),
        measured={
            "mean_kill_rate": round(mean, 6) if mean is not None else None,
            "min_kill_rate": min_kill_rate,
            "measured_scenarios": len(rates),
            "without_mutants": len(published) - len(rates),
            "mutants": sum(selftests[sid].n_mutants for sid in rates),
        },
        offenders=first(
            {sid: f"kill rate {rate:.3f}" for sid, rate in weakest if rate < min_kill_rate}
        ),
    )

    # 3. Every held-back (so every unproven) scenario is in quarantine with a reason.
    reasons: dict[str, list[str]] = {}
    for q in quarantine:
        if q.artifact_type == "scenario":
            reasons.setdefault(q.artifact_id, []).append(q.reason)
    missing = {}
    for s in held_back:
        given = reasons.get(s.scenario_id)
        if not given:
            missing[s.scenario_id] = "no quarantine record"
        elif not any(r.strip() for r in given):
            missing[s.scenario_id] = "quarantine reason empty"
    unproven_held = sum(
        1 for s in held_back if (t := selftests.get(s.scenario_id)) is None or not t.proven
    )
    quarantine_check = ProofResult(
        UNPROVEN_QUARANTINED,
        passed=not missing,
        summary=(
            f"{len(held_back) - len(missing)} of {len(held_back)} held-back scenarios "
            "quarantined with a reason"
        ),
        measured={
            "held_back": len(held_back),
            "unproven_held_back": unproven_held,
            "with_reason": len(held_back) - len(missing),
            "without_reason": len(missing),
        },
        offenders=first(missing),
    )

    # 4. At least one published scenario.
    publish_check = ProofResult(
        HAS_PUBLISHED,
        passed=bool(published),
        summary=f"{len(published)} of {len(scenarios)} scenarios published",
        measured={
            "scenarios": len(scenarios),
            "published": len(published),
            "quarantined": len(held_back),
        },
        offenders={}
        if published
        else first({sid: "; ".join(r)[:200] for sid, r in reasons.items() if r}),
    )
    return [proven_check, kill_check, quarantine_check, publish_check]
