"""The judge's audit of each environment: the `audit_judge` LLM stage when an endpoint is set.

Offline the artifact says so (not judged, nothing quarantined) and no sandbox or model is
touched. Online, an environment the programmatic audit passed is tested by a tester model's
calls (run in the sandbox) and graded by a judge model; `scenarios` skips an environment the
judge failed, and the warehouse quarantines it with the judge's reason.
"""

import dagster as dg

from assets._llm import llm_run
from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._util import md_table, per_environment, stage_asset
from synthesis.environments.model import EnvModel
from synthesis.llm.audit_judge import JUDGE_THRESHOLD, judge_environment, offline_judgement
from synthesis.models import Environment


@stage_asset(
    group_name="environments",
    partitions_def=environment_partitions,
    description="Dual-agent audit (the `audit_judge` LLM stage, when OPENAI_BASE_URL is set): "
    "a tester model proposes calls to every tool, they run in the sandbox, a judge model "
    f"grades each pass/warning/fail. Kept when pass+warning ≥ {JUDGE_THRESHOLD} and no tool "
    "failed every call; a stage that cannot run judges nothing (the contract audit gates).",
)
@per_environment
def env_judgement(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    initial_states: dict,
    env_models: dict,
    env_audit: dict,
) -> dict:
    with llm_run(context, settings) as client:
        if client is None:
            result = offline_judgement()
        else:
            result = _judge(client, settings, environments, initial_states, env_models, env_audit)
    context.add_output_metadata(_metadata(result))
    return result


def _judge(client, settings, environments, initial_states, env_models, env_audit) -> dict:
    env = Environment.model_validate(environments)
    states = initial_states["states"]
    if env.status != "accepted" or not env_audit["passed"] or not states:
        # Quarantined already, for the reason the audit gives: no judge is asked.
        return {"judged": False, "passed": True, "reason": "not judged: failed the audit"}
    first = states[0]
    judgement = judge_environment(
        client,
        env,
        EnvModel.model_validate(env_models),
        first["state"],
        seed=settings.seed,
        backend=settings.sandbox_backend,
        reported=first.get("dump"),
    )
    return judgement.to_json()


def _metadata(result: dict) -> dict:
    out = {"judged": result["judged"], "passed": result["passed"]}
    if result.get("reason"):
        out["reason"] = result["reason"]
    if result["judged"]:
        out["share"] = result["share"]
        out["grades"] = md_table(result["grades"], ["index", "tool", "grade", "reason"], limit=40)
    return out
