"""Checks: state checks derived from each gold run, proven by self-tests in the sandbox, and
the self-tests as asset checks on the stored artifact of each environment."""

import warnings

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._util import md_table, per_environment, quarantine_row, stage_asset, top_reasons
from quality import proofs
from quality.selftest import selftest_scenarios
from sandboxes import WorkerPool
from synthesis.environments.model import EnvModel
from synthesis.models import Environment, Scenario
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import other_world_finals


@stage_asset(
    group_name="tasks",
    partitions_def=environment_partitions,
    description="Checks per scenario (field values, created records, no collateral "
    "damage) and their self-test: gold passes, do-nothing fails, "
    "deterministic, mutants killed. Unproven scenarios are quarantined. Its asset checks "
    "judge the stored self-tests and quarantine of each environment again.",
)
@per_environment
def checks(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    scenarios: list[dict],
    env_models: dict,
) -> dict:
    env = Environment.model_validate(environments)
    model = EnvModel.model_validate(env_models)
    all_scenarios = [Scenario.model_validate(raw) for raw in scenarios]
    published = [s for s in all_scenarios if s.status == "published"]
    # Code we did not compile may generate ids and timestamps: a replay in another world
    # shows which values those are, so their checks ask for a form, not a value.
    others = (
        {}
        if model.exact
        else other_world_finals(env, published, backend=settings.sandbox_backend, pool=sandbox_pool)
    )
    items = [
        (s, derive_checks(s, model=model, alternate_final=others.get(s.scenario_id)))
        for s in published
    ]
    # One batch per environment: every gold replay, no-op and mutant goes through one pool.
    results = dict(
        zip(
            [s.scenario_id for s, _ in items],
            selftest_scenarios(
                env, items, model=model, backend=settings.sandbox_backend, pool=sandbox_pool
            ),
            strict=True,
        )
    )
    out_checks = [
        c.model_dump(mode="json") for _, scenario_checks in items for c in scenario_checks
    ]
    selftests = [r.model_dump(mode="json") for r in results.values()]
    out_scenarios, quarantine = [], []
    for scenario in all_scenarios:
        result = results.get(scenario.scenario_id)
        # A scenario arrives quarantined by its gold run, or this stage quarantines it.
        stage = "scenarios" if scenario.status == "quarantined" else "checks"
        if result is not None and not result.proven:
            scenario = scenario.model_copy(
                update={"status": "quarantined", "reason": f"checks not proven: {result.reason}"}
            )
        if scenario.status == "quarantined":
            quarantine.append(
                quarantine_row("scenario", scenario.scenario_id, stage, scenario.reason or "")
            )
        out_scenarios.append(scenario.model_dump(mode="json"))
    published = [s for s in out_scenarios if s["status"] == "published"]
    kill_rates = [t["mutation_kill_rate"] for t in selftests]
    context.add_output_metadata(
        {
            "scenarios": len(out_scenarios),
            "published": len(published),
            "checks": len(out_checks),
            "selftests": len(selftests),
            "proven": sum(r.proven for r in results.values()),
            "mean_mutation_kill_rate": round(sum(kill_rates) / len(kill_rates), 3)
            if kill_rates
            else 0.0,
            "quarantine_reasons": top_reasons(q["reason"] for q in quarantine),
        }
    )
    return {
        "scenarios": out_scenarios,
        "checks": out_checks,
        "selftests": selftests,
        "quarantine": quarantine,
    }


# The self-tests as asset checks on `checks`, one evaluation per environment (partition). They
# load the stored artifact through the IO manager, so re-running them from the UI judges what
# is on disk now. Blocking: a published scenario that is not proven must not reach rollouts and
# shards. The others warn or flag without stopping the partition: a missing quarantine reason
# is bookkeeping (the warehouse gate on `quarantine` still refuses it before publishing), a low
# kill rate is weak checks rather than wrong ones, and an environment that publishes nothing
# (audit or every gold run failed, query-only tools) is a legitimate outcome of a build.
_PROOF_SPECS = {
    proofs.PUBLISHED_PROVEN: (
        True,
        dg.AssetCheckSeverity.ERROR,
        "Every published scenario has a self-test that proved it: gold passes, a do-nothing "
        "agent fails, two replays agree. Blocking: an unproven scenario must not be rolled out.",
    ),
    proofs.KILL_RATE: (
        False,
        dg.AssetCheckSeverity.WARN,
        "The mean mutant kill rate of the published scenarios reaches the profile's bar "
        "(min_mutation_kill_rate); scenarios with no non-equivalent mutant are left out.",
    ),
    proofs.UNPROVEN_QUARANTINED: (
        False,
        dg.AssetCheckSeverity.ERROR,
        "Every scenario held back (every unproven one is) is in quarantine with a non-empty "
        "reason.",
    ),
    proofs.HAS_PUBLISHED: (
        False,
        dg.AssetCheckSeverity.WARN,
        "The environment publishes at least one scenario.",
    ),
}


def _proof_check_specs() -> list[dg.AssetCheckSpec]:
    # Partitioned check specs are a preview feature in Dagster 1.13, and the only way to record
    # one verdict per environment: an unpartitioned check on this partitioned asset keeps one
    # latest result, so the last environment run would hide every other one's.
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.PreviewWarning)
        return [
            dg.AssetCheckSpec(
                name,
                asset="checks",
                blocking=blocking,
                description=description,
                partitions_def=environment_partitions,
            )
            for name, (blocking, _, description) in _PROOF_SPECS.items()
        ]


@dg.multi_asset_check(
    specs=_proof_check_specs(),
    # Any one of them can be run again from the UI, on the artifact as it is stored now.
    can_subset=True,
    description="The self-tests and quarantine of one environment, as stored, judged by "
    "quality.proofs.",
)
def selftest_checks(context: dg.AssetCheckExecutionContext, settings: BuildSettings, checks: dict):
    selected = {key.name for key in context.selected_asset_check_keys}
    bar = settings.profile_obj.min_mutation_kill_rate
    for result in proofs.evaluate_proofs(checks, min_kill_rate=bar):
        if result.name in selected:
            yield proof_check_result(result)


def proof_check_result(result: proofs.ProofResult) -> dg.AssetCheckResult:
    """A proof verdict as the UI shows it: its summary, what it measured, a few offenders."""
    _, severity, _ = _PROOF_SPECS[result.name]
    metadata: dict[str, dg.RawMetadataValue] = {
        "summary": result.summary,
        **{k: v for k, v in result.measured.items() if v is not None},
    }
    if result.offenders:
        metadata["offenders"] = md_table(
            [{"scenario": sid, "why": why} for sid, why in result.offenders.items()],
            ["scenario", "why"],
        )
    return dg.AssetCheckResult(
        asset_key="checks",
        check_name=result.name,
        passed=result.passed,
        severity=severity,
        description=result.summary,
        metadata=metadata,
    )
