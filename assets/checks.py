"""Checks: state checks derived from each gold run, proven by self-tests in the sandbox."""

import dagster as dg

from assets._util import code_version, quarantine_row, top_reasons
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from quality.selftest import selftest_scenarios
from synthesis.environments.model import EnvModel
from synthesis.models import Environment, Scenario
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import other_world_finals


@dg.asset(
    group_name="tasks",
    partitions_def=environment_partitions,
    code_version=code_version("synthesis.tasks.checks", "synthesis.tasks.gold", "quality.selftest"),
    description="Checks per scenario (field values, created records, no collateral "
    "damage) and their self-test: gold passes, do-nothing fails, "
    "deterministic, mutants killed. Unproven scenarios are quarantined.",
)
def checks(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
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
        {} if model.exact else other_world_finals(env, published, backend=settings.sandbox_backend)
    )
    items = [
        (s, derive_checks(s, model=model, alternate_final=others.get(s.scenario_id)))
        for s in published
    ]
    # One batch per environment: every gold replay, no-op and mutant goes through one pool.
    results = dict(
        zip(
            [s.scenario_id for s, _ in items],
            selftest_scenarios(env, items, model=model, backend=settings.sandbox_backend),
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
