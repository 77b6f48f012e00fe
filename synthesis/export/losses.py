"""Where a build's tasks were lost, said in words: per environment (the `environments.reason`
of one that publishes fewer than `THIN` tasks) and per dataset (the funnel stage that went to
zero, or fell most, when a dataset is under its publish floor).

Plain Python over rows and the warehouse file: the warehouse asset fills the reasons, the
publish names the stage when it refuses a dataset, the build's summary prints both.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthesis.export.warehouse import reason_kind

# An environment that publishes fewer tasks than this gets a reason saying where the others
# went, even when it is accepted (a healthy one publishes most of the candidates it is asked).
THIN = 3
# The quarantining stages of a scenario, in pipeline order, with what each did to it.
SCENARIO_STAGES = {
    "scenarios": "rejected by their gold run",
    "checks": "not proven by the self-test",
    "task_screening": "screened out (split, near-duplicate, contamination)",
    "difficulty_calibration": "dropped by the difficulty filter",
}
# The funnel (dbt mart_funnel) from a topic to a published task.
FUNNEL = (
    "topics",
    "env_specs",
    "environments_generated",
    "environments_accepted",
    "scenarios_generated",
    "scenarios_proven",
    "scenarios_published",
)
EXAMPLE_CHARS = 200


def _get(record: Any, name: str) -> Any:
    return record[name] if isinstance(record, Mapping) else getattr(record, name)


def _example(reason: str) -> str:
    text = " ".join(reason.split())
    return text if len(text) <= EXAMPLE_CHARS else text[: EXAMPLE_CHARS - 1] + "…"


def _kinds(reasons: list[str], n: int = 2) -> str:
    """The most common reason kinds with their counts, and the first reason in full."""
    counts = Counter(reason_kind(r) for r in reasons)
    top = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[:n]
    kinds = ", ".join(f"{kind} x{count}" for kind, count in top)
    more = f", {len(counts) - n} more kind(s)" if len(counts) > n else ""
    return f"{kinds}{more}; e.g. {_example(sorted(reasons)[0])}"


def environment_reasons(
    env_ids: Iterable[str],
    outcomes: Iterable[tuple[str, str, str]],
    quarantine: Iterable[Any],
    *,
    asked: int,
    tools: Mapping[str, tuple[int, int]] | None = None,
) -> dict[str, str]:
    """env id → why it publishes fewer than THIN tasks, for each of `env_ids` that does.

    `outcomes`: (env id, scenario id, status) of every scenario, as the warehouse holds them
    (screening applied); `quarantine`: the quarantine records of the scenarios (mappings or
    records with artifact_type, artifact_id, stage, reason); `asked`: the candidates the
    profile asks of an environment (`scenarios_per_env`); `tools`: env id → (its query
    tools, its tools that change state), what the planner had to set tasks with."""
    scenarios: dict[str, list[str]] = defaultdict(list)
    published: Counter[str] = Counter()
    env_of: dict[str, str] = {}
    for env_id, scenario_id, status in outcomes:
        scenarios[env_id].append(scenario_id)
        env_of[scenario_id] = env_id
        published[env_id] += status == "published"
    lost: dict[str, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
    seen: set[tuple[str, str]] = set()
    for record in quarantine:
        if _get(record, "artifact_type") != "scenario":
            continue
        scenario_id, stage = _get(record, "artifact_id"), _get(record, "stage")
        env_id = env_of.get(scenario_id)
        if env_id is None or (scenario_id, stage) in seen:
            continue
        seen.add((scenario_id, stage))
        lost[env_id][stage].append(_get(record, "reason") or "")
    reasons = {}
    for env_id in sorted(set(env_ids)):
        made, kept = len(scenarios.get(env_id, [])), published[env_id]
        if kept >= THIN:
            continue
        head = f"{kept} of {made} candidate task(s) published, fewer than {THIN}"
        if made == 0:
            query, mutate = (tools or {}).get(env_id, (None, None))
            had = (
                f" from its {query + mutate} tool(s) ({query} that read, {mutate} that change "
                "state)"
                if query is not None
                else ""
            )
            reasons[env_id] = (
                f"{head}: the planner made no candidate task of the {asked} asked{had} (scenarios)"
            )
            continue
        parts = [f"the planner made {made} of the {asked} candidates asked"] if made < asked else []
        stages = lost.get(env_id, {})
        order = [*SCENARIO_STAGES, *sorted(set(stages) - set(SCENARIO_STAGES))]
        for stage in order:
            if stages.get(stage):
                what = SCENARIO_STAGES.get(stage, "quarantined")
                parts.append(f"{len(stages[stage])} {what} at {stage} ({_kinds(stages[stage])})")
        reasons[env_id] = f"{head}: {'; '.join(parts)}" if parts else head
    return reasons


@dataclass(frozen=True)
class Loss:
    """The funnel stage that lost a dataset's tasks: it went to zero, or fell most."""

    stage: str
    before: str  # the stage it is counted against
    n_before: int
    n_after: int
    why: str  # what lost them, in words (the quarantine's reasons)

    def text(self) -> str:
        verb = "went to zero" if self.n_after == 0 else "fell most"
        return (
            f"{self.stage}, which {verb} ({self.before} {self.n_before} -> {self.stage} "
            f"{self.n_after}){': ' + self.why if self.why else ''}"
        )


def query_rows(warehouse_path: Path, sql: str) -> list[tuple] | None:
    """Rows, or None when the table is missing (its stage did not publish) or the warehouse
    cannot be read (locked by another process, damaged): a summary must not fail."""
    import duckdb

    try:
        con = duckdb.connect(str(warehouse_path), read_only=True)
    except duckdb.Error:
        return None
    try:
        return con.execute(sql).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()


# What lost the items of each stage, as quarantine rows (the dbt funnel's definitions).
_LOST = {
    "env_specs": "artifact_type = 'env_spec'",
    "environments_generated": "artifact_type = 'environment' AND artifact_id NOT IN "
    "(SELECT env_id FROM environments)",
    "environments_accepted": "artifact_type = 'environment' AND artifact_id IN "
    "(SELECT env_id FROM environments WHERE status = 'quarantined')",
    "scenarios_proven": "artifact_type = 'scenario' AND stage IN ('scenarios', 'checks')",
    "scenarios_published": "artifact_type = 'scenario' AND stage NOT IN ('scenarios', 'checks')",
}


def _why(warehouse_path: Path, stage: str, environments: int) -> str:
    if stage == "topics":
        return "the catalogue gave no topic to build (and no --envs source was given)"
    if stage == "scenarios_generated":
        return (
            f"the planner made no candidate task in the {environments} accepted "
            "environment(s) (their reasons: the warehouse's environments.reason)"
            if environments
            else ""
        )
    where = _LOST.get(stage)
    rows = query_rows(
        warehouse_path,
        f"SELECT stage, reason_kind, count(*), min(reason) FROM quarantine WHERE {where} "
        "GROUP BY 1, 2 ORDER BY 3 DESC, 1, 2",
    )
    if not rows:
        return ""
    total = sum(n for _, _, n, _ in rows)
    top = "; ".join(
        f"{n} at {at}: {kind} (e.g. {_example(example)})" for at, kind, n, example in rows[:3]
    )
    more = f"; {len(rows) - 3} more kind(s)" if len(rows) > 3 else ""
    return f"{total} quarantined: {top}{more}"


def lost_where(warehouse_path: Path, scenarios_per_env: int) -> Loss | None:
    """The stage of the funnel (the dataset's mart_funnel) that lost its tasks: the first to
    go to zero, else the one that kept the smallest share of what reached it; None when the
    funnel cannot be read."""
    rows = query_rows(warehouse_path, "SELECT stage, n_items, n_base FROM mart_funnel")
    if not rows:
        return None
    items = {stage: int(n or 0) for stage, n, _ in rows}
    bases = {stage: base for stage, _, base in rows}
    if any(stage not in items for stage in FUNNEL):
        return None
    if items["topics"] == 0 and items["environments_generated"] == 0:
        return Loss("topics", "catalogue", 0, 0, _why(warehouse_path, "topics", 0))
    # Environments without a spec (foreign classes) skip env_specs.
    chain = [s for s in FUNNEL if s != "env_specs" or not items["environments_generated"]]
    for before, stage in zip(chain, chain[1:], strict=False):
        if items[stage] == 0:
            why = _why(warehouse_path, stage, items["environments_accepted"])
            return Loss(stage, before, items[before], 0, why)
    # Nothing went to zero: the step that kept the smallest share of what reached it.
    accepted = items["environments_accepted"]
    steps = {
        "env_specs": ("topics", bases.get("env_specs") or items["topics"]),
        "environments_accepted": ("environments_generated", items["environments_generated"]),
        "scenarios_generated": ("candidates asked", accepted * scenarios_per_env),
        "scenarios_proven": ("scenarios_generated", items["scenarios_generated"]),
        "scenarios_published": ("scenarios_proven", items["scenarios_proven"]),
    }
    shares = {
        stage: items[stage] / base for stage, (_, base) in steps.items() if base and stage in chain
    }
    if not shares:
        return None
    stage = min(shares, key=lambda s: (shares[s], FUNNEL.index(s)))
    before, base = steps[stage]
    if stage == "scenarios_generated":
        why = (
            f"the planner made {items[stage]} of the {base} candidates asked ({accepted} "
            f"environment(s) x {scenarios_per_env}; their reasons: environments.reason)"
        )
    else:
        why = _why(warehouse_path, stage, accepted)
    return Loss(stage, before, base, items[stage], why)


def asked_environments(warehouse_path: Path) -> int:
    """The environments a dataset was asked to hold: those it has, accepted or not, and those
    whose run failed or whose source could not be found (their quarantine rows)."""
    rows = query_rows(
        warehouse_path,
        "SELECT (SELECT count(*) FROM environments) + (SELECT count(DISTINCT artifact_id) "
        "FROM quarantine WHERE artifact_type = 'environment' AND artifact_id NOT IN "
        "(SELECT env_id FROM environments))",
    )
    return int(rows[0][0]) if rows else 0
