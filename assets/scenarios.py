"""Scenarios: tasks planned over the tool graph, worded (offline, or by the `task_text` LLM
stage when an endpoint is set), their gold chains executed in the sandbox."""

from concurrent.futures import ThreadPoolExecutor

import dagster as dg

from assets._llm import llm_run
from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._util import md_table, per_environment, stage_asset, top_reasons
from sandboxes import WorkerPool
from synthesis.environments.model import EnvModel
from synthesis.export import datasets
from synthesis.llm.client import LLMClient
from synthesis.llm.task_plan import plan_with_model
from synthesis.llm.task_text import phrase_scenario
from synthesis.models import Environment, InitialState, Scenario
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@stage_asset(
    group_name="tasks",
    partitions_def=environment_partitions,
    description="Topology-aware tasks: every id is looked up before it is used, task text "
    "names records by human fields (reworded by the `task_text` LLM stage when "
    "OPENAI_BASE_URL is set, the offline text kept when its answer fails a check); gold "
    "chains run in the sandbox.",
)
@per_environment
def scenarios(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    initial_states: dict,
    env_audit: dict,
    env_models: dict,
    env_judgement: dict,
) -> list[dict]:
    datasets.fault_point("scenarios", context.partition_key)
    env = Environment.model_validate(environments)
    model = EnvModel.model_validate(env_models)
    if env.status != "accepted" or not env_audit["passed"]:
        context.add_output_metadata({"skipped": "environment not accepted by the audit"})
        return []
    if not env_judgement["passed"]:
        context.add_output_metadata({"skipped": env_judgement["reason"]})
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
            pool=sandbox_pool,
        )
    # With an endpoint the model rewords each task; its ledger rows go to this run's spool
    # file, so the artifact has one shape, online or offline.
    text_metadata = {}
    with llm_run(context, settings) as client:
        if client is not None:
            # The model's goals, planned and proven like the offline ones (`task_plan`).
            proposed = plan_with_model(client, env, model, states, planned, settings.seed, profile)
            planned += proposed.scenarios
            planned = _phrase(client, planned)
            text_metadata = {**proposed.metadata(), **_text_metadata(planned, client)}
    executed = execute_gold(
        env, planned, model=model, backend=settings.sandbox_backend, pool=sandbox_pool
    )
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
            **text_metadata,
        }
    )
    return [s.model_dump(mode="json") for s in executed]


def _phrase(client: LLMClient, planned: list[Scenario]) -> list[Scenario]:
    """Each scenario worded by the model, or kept as it is with the reason; in plan order."""
    # The calls wait on the network, not the CPU: as many at once as the client allows.
    with ThreadPoolExecutor(max_workers=client.settings.concurrency) as threads:
        return [s for s, _ in threads.map(lambda s: phrase_scenario(client, s), planned)]


def _text_metadata(planned: list[Scenario], client: LLMClient) -> dict:
    sources = [s.provenance.get("text_source") for s in planned]
    reasons = [
        s.provenance["text_fallback_reason"]
        for s in planned
        if "text_fallback_reason" in s.provenance
    ]
    stopped = sorted({c.reason for c in client.calls if c.status == "skipped" and c.reason})
    return {
        "text_llm": sources.count("llm"),
        "text_offline": sources.count("offline"),
        "text_fallback_reasons": top_reasons(r.removeprefix("task_text: ") for r in reasons),
        "llm_calls": len(client.calls),
        **({"llm_stopped": stopped[0]} if stopped else {}),
    }
