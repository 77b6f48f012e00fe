"""Scenarios: tasks planned over the tool graph, their gold chains executed in the sandbox."""

import dagster as dg

from assets._util import code_version, md_table, top_reasons
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from synthesis.environments.model import EnvModel
from synthesis.export import datasets
from synthesis.models import Environment, InitialState
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@dg.asset(
    group_name="tasks",
    partitions_def=environment_partitions,
    code_version=code_version(
        "synthesis.tasks.topology",
        "synthesis.tasks.spec_model",
        "synthesis.tasks.plan",
        "synthesis.tasks.phrasing",
        "synthesis.tasks.text.grammar",
        "synthesis.tasks.text.values",
        "synthesis.tasks.text.voices",
        "synthesis.tasks.text.banks",
        "synthesis.tasks.text.lexicon",
        "synthesis.tasks.scenarios",
        "synthesis.tasks.explorer",
        "synthesis.tasks.gold",
        "synthesis.tasks.workspace_plans",
        # The planner predicts the wrong-record baseline: its decoys, answer and grading.
        "synthesis.rollouts.agents",
        "synthesis.rollouts.decoys",
        "synthesis.rollouts.answers",
        "synthesis.tasks.checks",
    ),
    description="Topology-aware tasks: every id is looked up before it is used, task text "
    "names records by human fields; gold chains run in the sandbox.",
)
def scenarios(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    initial_states: dict,
    env_audit: dict,
    env_models: dict,
) -> list[dict]:
    datasets.fault_point("scenarios", context.partition_key)
    env = Environment.model_validate(environments)
    model = EnvModel.model_validate(env_models)
    if env.status != "accepted" or not env_audit["passed"]:
        context.add_output_metadata({"skipped": "environment not accepted by the audit"})
        return []
    profile = settings.profile_obj
    states = initial_states["states"]
    per_state = max(1, profile.scenarios_per_env // max(1, len(states)))
    planned = []
    for i, raw in enumerate(states):
        count = per_state
        if not model.exact:
            # A state that affords fewer tasks leaves its share to the states after it.
            wanted = profile.scenarios_per_env - len(planned)
            count = max(1, -(-wanted // (len(states) - i)))
        planned += plan_scenarios(
            env,
            InitialState.model_validate(raw),
            seed=settings.seed,
            count=count,
            max_chain_length=profile.max_chain_length,
            model=model,
            backend=settings.sandbox_backend,
        )
    executed = execute_gold(env, planned, model=model, backend=settings.sandbox_backend)
    quarantined = [s for s in executed if s.status == "quarantined"]
    context.add_output_metadata(
        {
            "planned": len(planned),
            "gold_ok": len(executed) - len(quarantined),
            "quarantined": len(quarantined),
            "quarantine_reasons": top_reasons(s.reason or "" for s in quarantined),
            "preview": md_table(
                [
                    {"id": s.scenario_id, "steps": len(s.gold_chain), "task": s.task_text}
                    for s in executed
                ],
                ["id", "steps", "task"],
            ),
        }
    )
    return [s.model_dump(mode="json") for s in executed]
