"""Screening of the published tasks across environments, before anything is published.

Contaminated tasks (synthesis.tasks.contamination) and near-duplicates (synthesis.tasks.dedup)
are quarantined with their reasons; the warehouse keeps their rows, marked so, and the shards
leave them out. Contamination is judged first: a duplicate of a contaminated task is
contaminated too, and is not kept in its place.
"""

from __future__ import annotations

from collections.abc import Iterable

from synthesis.models import QuarantineRecord, Scenario
from synthesis.tasks.contamination import Benchmark, passages_shared
from synthesis.tasks.dedup import duplicates_among
from synthesis.tasks.task_features import TaskFeatures, task_features

STAGE = "task_screening"


def screen_tasks(
    scenarios: Iterable[Scenario], benchmarks: Iterable[Benchmark]
) -> list[QuarantineRecord]:
    """A quarantine record for every published scenario that must not ship, by scenario id."""
    return screen_features(
        task_features([s for s in scenarios if s.status == "published"]), benchmarks
    )


def screen_features(
    published: Iterable[TaskFeatures], benchmarks: Iterable[Benchmark]
) -> list[QuarantineRecord]:
    """`screen_tasks` of the published scenarios these features are of."""
    published = list(published)
    reasons = passages_shared(((f.scenario_id, f.words) for f in published), benchmarks)
    reasons.update(duplicates_among(f for f in published if f.scenario_id not in reasons))
    return [
        QuarantineRecord(
            artifact_type="scenario", artifact_id=scenario_id, stage=STAGE, reason=reason
        )
        for scenario_id, reason in sorted(reasons.items())
    ]


def apply_screening(
    scenarios: Iterable[Scenario], quarantine: Iterable[QuarantineRecord]
) -> list[Scenario]:
    """The scenarios with every screened-out one quarantined, its reason recorded."""
    reasons = {q.artifact_id: q.reason for q in quarantine if q.artifact_type == "scenario"}
    return [
        s.model_copy(update={"status": "quarantined", "reason": reasons[s.scenario_id]})
        if s.status == "published" and s.scenario_id in reasons
        else s
        for s in scenarios
    ]
