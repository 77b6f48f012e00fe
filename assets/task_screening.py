"""Task screening: across environments, the splits are checked and near-duplicate or
benchmark-contaminated tasks quarantined, before the warehouse and the shards take them.
With LLM agent trajectories (an endpoint set), the difficulty filter quarantines too."""

from pathlib import Path

import dagster as dg

from assets._util import code_version, made_by_this_build, md_table, top_reasons
from orchestration.resources import BuildSettings
from synthesis import heap
from synthesis.environments.splits import single_shape_archetypes, split_problems
from synthesis.export.artifacts import trajectories_of_policy
from synthesis.models import Environment, Scenario, Trajectory
from synthesis.tasks.calibration import (
    LLM_POLICY_PREFIX,
    calibrate,
    calibration_quarantine,
    filter_for,
    llm_outcomes,
)
from synthesis.tasks.contamination import installed_benchmarks
from synthesis.tasks.screening import screen_tasks


@dg.asset(
    group_name="export",
    code_version=code_version(
        "synthesis.environments.splits",
        "synthesis.tasks.screening",
        "synthesis.tasks.dedup",
        "synthesis.tasks.contamination",
        "synthesis.tasks.calibration",
        "synthesis.export.artifacts",
    ),
    # The trajectories as file paths: only an LLM agent's attempts are read from them.
    ins={"trajectories": dg.AssetIn("trajectories", input_manager_key="artifact_paths")},
    description="Across environments: fails the build when an archetype with two or more "
    "program shapes has no test environment (or a shape is on both sides); quarantines "
    "near-duplicate tasks (same gold chain on the same records, or near-identical text by "
    "MinHash LSH) and tasks sharing an 8-word passage with benchmark questions (BFCL "
    "multi-turn), each with its reason; with an endpoint set, tasks the LLM agent's k "
    "attempts put outside ENVFOUNDRY_DIFFICULTY_FILTER (default 1..k-1: drop 0/k and k/k).",
)
# Its inputs are every environment's checks: left out of the collector's passes (synthesis/heap).
@heap.frozen()
def task_screening(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    env_audit: dict,
    env_judgement: dict,
    checks: dict,
    trajectories: dict[str, Path],
) -> dict:
    kept, _ = made_by_this_build(context, environments)
    envs = []
    for env_id in kept:
        env = Environment.model_validate(environments[env_id])
        audit = env_audit.get(env_id)
        judged = env_judgement.get(env_id)
        # An environment the audit or the LLM judge failed has no tasks: it is no test env.
        if (audit is not None and not audit["passed"]) or (
            judged is not None and not judged["passed"]
        ):
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
    calibrations = _calibrations(settings, scenarios, trajectories, kept)
    screened = {q.artifact_id for q in quarantine}
    quarantine += [q for q in calibration_quarantine(calibrations) if q.artifact_id not in screened]
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
    out = {"quarantine": [q.model_dump(mode="json") for q in quarantine]}
    if calibrations:  # only with LLM attempts: an offline artifact keeps its bytes
        out["calibration"] = [c.to_json() for c in calibrations]
        context.add_output_metadata(_calibration_metadata(calibrations))
    return out


def _calibrations(settings, scenarios, trajectories, kept):
    """The LLM agent's verdict on each published task of this build (none offline).

    `trajectories`: each environment's artifact path; only files that can hold an LLM
    agent's attempt are parsed (a full build's trajectories are gigabytes)."""
    published = {s.scenario_id for s in scenarios if s.status == "published"}
    outcomes = llm_outcomes(
        Trajectory.model_validate(t)
        for env_id in kept
        if env_id in trajectories
        for t in trajectories_of_policy(trajectories[env_id], LLM_POLICY_PREFIX)
        if t["scenario_id"] in published
    )
    if not outcomes:
        return []
    k = settings.profile_obj.llm_agent_attempts
    try:
        rule = filter_for(k)
    except ValueError as exc:  # a misconfigured filter: say so, before anything publishes
        raise dg.Failure(str(exc)) from None
    return calibrate(outcomes, k, rule)


def _calibration_metadata(calibrations) -> dict:
    return {
        "calibrated": len(calibrations),
        "unsolved": sum("unsolved" in c.flags for c in calibrations),
        "saturated": sum("saturated" in c.flags for c in calibrations),
        "dropped_by_difficulty": sum(not c.keep for c in calibrations),
    }
