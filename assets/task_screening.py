"""Task screening: across environments, the splits are checked and near-duplicate or
benchmark-contaminated tasks quarantined, before the warehouse and the shards take them.
With LLM agent trajectories (an endpoint set), the difficulty filter quarantines too.

What screening compares of each task is kept per environment between publishes
(synthesis.tasks.task_features): only environments whose checks changed are read again."""

from pathlib import Path

import dagster as dg
import pyarrow as pa

from assets._resources import BuildSettings
from assets._util import (
    artifact_sources,
    code_version,
    made_by_this_build,
    md_table,
    stage_asset,
    top_reasons,
)
from synthesis import codec, heap
from synthesis.config import llm_attempts_dir, task_features_dir
from synthesis.environments.splits import single_shape_archetypes, split_problems
from synthesis.export.artifacts import trajectories_of_policy
from synthesis.models import Environment, Scenario, Trajectory
from synthesis.tasks.calibration import (
    LLM_POLICY_PREFIX,
    calibrate,
    calibration_quarantine,
    filter_for,
    llm_attempts,
    outcomes_of,
)
from synthesis.tasks.contamination import installed_benchmarks
from synthesis.tasks.kept_tables import KeptTables
from synthesis.tasks.screening import screen_features
from synthesis.tasks.task_features import FeatureStore, TaskFeatures, task_features

# What an environment's task features are made from besides its checks artifact: the code
# that reads and sketches them. A change to it makes every environment's again.
FEATURES_CODE = code_version(
    "synthesis.models", "synthesis.tasks.task_features", "synthesis.tasks.kept_tables"
)
# Likewise its LLM agent attempts, of its trajectories artifact.
ATTEMPTS_CODE = code_version(
    "synthesis.models",
    "synthesis.tasks.calibration",
    "synthesis.export.artifacts",
    "synthesis.tasks.kept_tables",
)
_ATTEMPTS = pa.schema(
    [("scenario_id", pa.string()), ("attempt_seed", pa.int64()), ("success", pa.bool_())]
)


@stage_asset(
    group_name="export",
    # As file paths: only an LLM agent's attempts are read from the trajectories, and only
    # the checks whose task features are not kept.
    ins={
        "trajectories": dg.AssetIn("trajectories", input_manager_key="artifact_paths"),
        "checks": dg.AssetIn("checks", input_manager_key="artifact_paths"),
    },
    description="Across environments: fails the build when an archetype with two or more "
    "program shapes has no test environment (or a shape is on both sides); quarantines "
    "near-duplicate tasks (same gold chain on the same records, or near-identical text by "
    "MinHash LSH) and tasks sharing an 8-word passage with benchmark questions (BFCL "
    "multi-turn), each with its reason; with an endpoint set, tasks the LLM agent's k "
    "attempts put outside ENVFOUNDRY_DIFFICULTY_FILTER (default 1..k-1: drop 0/k and k/k).",
)
# It holds every published task's features: left out of the collector's passes (synthesis/heap).
@heap.frozen()
def task_screening(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    env_audit: dict,
    env_judgement: dict,
    checks: dict[str, Path],
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
    screened_envs = [e for e in kept if e in checks]
    published, read = _published_features(context, settings, screened_envs, checks)
    benchmarks = installed_benchmarks()
    if not benchmarks:
        context.log.warning("no benchmark text installed (bfcl-eval): decontamination skipped")
    quarantine = screen_features(published, benchmarks)
    traced = [e for e in kept if e in trajectories]
    attempts, attempts_read = _llm_attempts(context, settings, traced, trajectories)
    calibrations = _calibrations(settings, {f.scenario_id for f in published}, attempts)
    screened = {q.artifact_id for q in quarantine}
    quarantine += [q for q in calibration_quarantine(calibrations) if q.artifact_id not in screened]
    by_id = {f.scenario_id: f for f in published}
    context.add_output_metadata(
        {
            "published_before": len(published),
            "environments_read": len(read),
            "environments_kept": dg.MetadataValue.md(
                f"{len(screened_envs) - len(read)} environment(s) whose task features this "
                "publish kept from the last one: made from the same checks by the same code"
            ),
            "attempts_read": dg.MetadataValue.int(len(attempts_read)),
            "attempts_kept": dg.MetadataValue.md(
                f"{len(traced) - len(attempts_read)} environment(s) whose LLM agent attempts "
                "this publish kept from the last one: of the same trajectories, by the same code"
            ),
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


def _published_features(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    env_ids: list[str],
    checks: dict[str, Path],
) -> tuple[list[TaskFeatures], list[str]]:
    """(the features of every published task of `env_ids`, the environments whose checks were
    read for them). An environment's are kept from the last publish when they were made from
    the same checks artifact (its data version) by the same code; the others are made from
    its checks and kept for the next one."""

    def make(reading: list[str]) -> dict[str, list[TaskFeatures]]:
        owners, scenarios = [], []
        for env_id in reading:
            for s in codec.read_json(checks[env_id])["scenarios"]:
                if s["status"] == "published":
                    owners.append(env_id)
                    scenarios.append(Scenario.model_validate(s))
        made: dict[str, list[TaskFeatures]] = {}
        # All at once: `task_features` spreads the sketching over the cores.
        for env_id, feature in zip(owners, task_features(scenarios), strict=True):
            made.setdefault(env_id, []).append(feature)
        return made

    store = FeatureStore(task_features_dir(settings.home_path))
    sources = artifact_sources(context, "checks", FEATURES_CODE, env_ids)
    by_env, read = store.kept_or_made(sources, make)
    return [f for e in env_ids for f in by_env[e]], read


def _llm_attempts(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    env_ids: list[str],
    trajectories: dict[str, Path],
) -> tuple[list[tuple[str, int, bool]], list[str]]:
    """(the LLM agent's attempts in every environment of `env_ids`, the environments whose
    trajectories were read for them). As the task features are: an environment's are kept
    from the last publish when made from the same trajectories artifact by the same code.
    Offline there are none, but only reading tells (1.6 GB of a full build's artifacts)."""

    def make(reading: list[str]) -> dict[str, list[tuple[str, int, bool]]]:
        return {
            env_id: llm_attempts(
                Trajectory.model_validate(t)
                for t in trajectories_of_policy(trajectories[env_id], LLM_POLICY_PREFIX)
            )
            for env_id in reading
        }

    store = KeptTables(llm_attempts_dir(settings.home_path), _ATTEMPTS)
    sources = artifact_sources(context, "trajectories", ATTEMPTS_CODE, env_ids)
    by_env, read = store.kept_or_made(sources, make)
    return [a for e in env_ids for a in by_env[e]], read


def _calibrations(settings, published, attempts):
    """The LLM agent's verdict on each published task of this build (none offline).
    `published`: the published tasks' scenario ids."""
    outcomes = outcomes_of(a for a in attempts if a[0] in published)
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
