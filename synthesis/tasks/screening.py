"""Screening of the published tasks across environments, before anything is published.

Contaminated tasks (synthesis.tasks.contamination) and near-duplicates (synthesis.tasks.dedup)
are quarantined with their reasons; the warehouse keeps their rows, marked so, and the shards
leave them out. Contamination is judged first: a duplicate of a contaminated task is
contaminated too, and is not kept in its place.
"""

from __future__ import annotations

from collections.abc import Iterable

from synthesis.models import QuarantineRecord, Scenario
from synthesis.tasks.contamination import Benchmark, contamination_reasons
from synthesis.tasks.dedup import duplicate_reasons

STAGE = "task_screening"


def screen_tasks(
    scenarios: Iterable[Scenario], benchmarks: Iterable[Benchmark]
) -> list[QuarantineRecord]:
    """A quarantine record for every published scenario that must not ship, by scenario id."""
    published = [s for s in scenarios if s.status == "published"]
    reasons = contamination_reasons(published, benchmarks)
    reasons.update(duplicate_reasons(s for s in published if s.scenario_id not in reasons))
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
