"""Task screening: across environments, the splits are checked and near-duplicate or
benchmark-contaminated tasks quarantined, before the warehouse and the shards take them."""

import dagster as dg

from assets._util import code_version, made_by_this_build, md_table, top_reasons
from orchestration.resources import BuildSettings
from synthesis.environments.splits import single_shape_archetypes, split_problems
from synthesis.models import Environment, Scenario
from synthesis.tasks.contamination import installed_benchmarks
from synthesis.tasks.screening import screen_tasks


@dg.asset(
    group_name="export",
    code_version=code_version(
        "synthesis.environments.splits",
        "synthesis.tasks.screening",
        "synthesis.tasks.dedup",
        "synthesis.tasks.contamination",
    ),
    description="Across environments: fails the build when an archetype with two or more "
    "program shapes has no test environment (or a shape is on both sides); quarantines "
    "near-duplicate tasks (same gold chain on the same records, or near-identical text by "
    "MinHash LSH) and tasks sharing an 8-word passage with benchmark questions (BFCL "
    "multi-turn), each with its reason.",
)
def task_screening(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    env_audit: dict,
    checks: dict,
) -> dict:
    kept, _ = made_by_this_build(context, environments)
    envs = []
    for env_id in kept:
        env = Environment.model_validate(environments[env_id])
        audit = env_audit.get(env_id)
        if audit is not None and not audit["passed"]:
            env = env.model_copy(update={"status": "quarantined"})
        envs.append(env)
    problems = split_problems(envs, holdout=settings.holdout_archetypes)
    if problems:
        raise dg.Failure("split: " + "; ".join(problems))
    scenarios = [
        Scenario.model_validate(s)
        for env_id in kept
        if env_id in checks
        for s in checks[env_id]["scenarios"]
    ]
    benchmarks = installed_benchmarks()
    if not benchmarks:
        context.log.warning("no benchmark text installed (bfcl-eval): decontamination skipped")
    quarantine = screen_tasks(scenarios, benchmarks)
    by_id = {s.scenario_id: s for s in scenarios}
    context.add_output_metadata(
        {
            "published_before": sum(s.status == "published" for s in scenarios),
            "quarantined": len(quarantine),
            "quarantine_reasons": top_reasons(q.reason for q in quarantine),
            "benchmarks": ", ".join(b.name for b in benchmarks) or "none installed",
            "test_environments": sum(e.split == "test" for e in envs if e.status == "accepted"),
            "single_shape_archetypes": ", ".join(single_shape_archetypes(envs)) or "none",
            "holdout_archetypes": ", ".join(settings.holdout_archetypes) or "none",
            "preview": md_table(
                [
                    {
                        "id": q.artifact_id,
                        "reason": q.reason,
                        "task": by_id[q.artifact_id].task_text,
                    }
                    for q in quarantine
                ],
                ["id", "reason", "task"],
            ),
        }
    )
    return {"quarantine": [q.model_dump(mode="json") for q in quarantine]}
