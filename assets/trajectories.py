"""Trajectories: policies play every published scenario in the sandbox; rewards from checks.

Beside the oracle, three baselines keep the rewards honest: `noop`, `refuse_always` and
`wrong_record` (only where the task's record has a decoy) must all earn 0. The guesser's k
seeded attempts per task rate its difficulty (one episode each).
"""

from contextlib import nullcontext

import dagster as dg

from assets._llm import llm_run
from assets._partitions import environment_partitions
from assets._resources import SANDBOX_WORKERS, BuildSettings
from assets._util import per_environment, quarantine_row, stage_asset
from sandboxes import WorkerPool
from synthesis.environments.model import EnvModel
from synthesis.llm.client import LLMClient, LLMError, StageStopped
from synthesis.models import Check, Environment, Scenario
from synthesis.rollouts.agents import (
    NoopPolicy,
    OraclePolicy,
    RefuseAlwaysPolicy,
    wrong_record_policy,
)
from synthesis.rollouts.attempts import llm_attempts
from synthesis.rollouts.episodes import rollouts
from synthesis.rollouts.guesser import GuesserPolicy
from synthesis.tasks.calibration import LLM_POLICY_PREFIX


@stage_asset(
    group_name="rollouts",
    partitions_def=environment_partitions,
    description="Oracle, noop, refuse_always and wrong_record rollouts, the guesser's seeded "
    "difficulty attempts (and, when OPENAI_BASE_URL is set, the LLM agent's k attempts; a "
    "multi-turn task's user is played offline, by the LLM after the first attempt) in "
    "OpenAI chat format with tool "
    "calls and tool results, "
    "each scored by the scenario's proven checks under the reward rule (docs/reward.md).",
)
@per_environment
def trajectories(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    checks: dict,
    env_models: dict,
) -> dict:
    env = Environment.model_validate(environments)
    model = EnvModel.model_validate(env_models)
    by_scenario: dict[str, list[Check]] = {}
    for raw in checks["checks"]:
        check = Check.model_validate(raw)
        by_scenario.setdefault(check.scenario_id, []).append(check)
    published = [
        Scenario.model_validate(raw) for raw in checks["scenarios"] if raw["status"] == "published"
    ]
    items = [(s, by_scenario[s.scenario_id]) for s in published]
    out, quarantine = [], []
    # Rollouts are interactive (the policy decides after each result): run them on the run's
    # pool (one of their own where the run has none: it fails saying why the backend cannot
    # run). The LLM agent's ledger rows go to this run's spool file, not into the artifact.
    with (
        llm_run(context, settings) as client,
        nullcontext(sandbox_pool)
        if sandbox_pool is not None
        else WorkerPool(size=SANDBOX_WORKERS, backend=settings.sandbox_backend) as pool,
    ):
        # The baselines that only answer play one episode per scenario between them (what
        # the class dumps after loading the state), not one each. Every scenario here is
        # published, so its recorded gold run is one the self-test reproduced: calls that
        # follow the gold chain take its results (rollout's `proven_gold`).
        untouched: dict = {}
        for policy_for in (
            lambda scenario: OraclePolicy(scenario, model),
            lambda scenario: NoopPolicy(),
            lambda scenario: RefuseAlwaysPolicy(),
        ):
            out += [
                t.json_record()
                for t in rollouts(
                    env,
                    items,
                    policy_for,
                    pool=pool,
                    model=model,
                    untouched=untouched,
                    proven_gold=True,
                )
            ]
        # Only tasks whose record has a decoy get a wrong-record rollout.
        wrong = {s.scenario_id: wrong_record_policy(s, model) for s in published}
        decoyed = [item for item in items if wrong[item[0].scenario_id] is not None]
        out += [
            t.json_record()
            for t in rollouts(
                env,
                decoyed,
                lambda scenario: wrong[scenario.scenario_id],
                pool=pool,
                model=model,
                proven_gold=True,
            )
        ]
        # k seeded attempts of the guesser per task: the empirical half of its tier.
        for attempt in range(settings.profile_obj.difficulty_attempts):
            out += [
                t.json_record()
                for t in rollouts(
                    env,
                    items,
                    lambda scenario, a=attempt: GuesserPolicy(scenario, model, a),
                    pool=pool,
                    model=model,
                    proven_gold=True,
                )
            ]
        stopped: list[str] = []
        if client is not None:
            llm, quarantine, stopped = _llm_trajectories(env, items, client, model, settings)
            out += llm
        calls = client.ledger.rows() if client is not None else []
    policies = sorted({t["policy"] for t in out})
    context.add_output_metadata(
        {
            "trajectories": len(out),
            "llm_calls": len(calls),
            "llm_tokens": sum(c["tokens_in"] + c["tokens_out"] for c in calls),
            "llm_failures": len(quarantine),
            **({"llm_stopped": sorted(set(stopped))[0]} if client is not None and stopped else {}),
            **(_llm_metadata(settings, out) if client is not None else {}),
            **{
                f"mean_reward_{p}": round(
                    sum(t["reward"] for t in out if t["policy"] == p)
                    / max(1, sum(t["policy"] == p for t in out)),
                    3,
                )
                for p in policies
            },
        }
    )
    # `llm_calls` stays, always empty: ledger rows travel by the spool now, and an offline
    # artifact must keep the bytes tests/data/default_build.sha256 pins (which hold the key).
    return {"trajectories": out, "llm_calls": [], "quarantine": quarantine}


def _llm_trajectories(
    env: Environment,
    items: list[tuple[Scenario, list[Check]]],
    client: LLMClient,
    model: EnvModel,
    settings: BuildSettings,
) -> tuple[list[dict], list[dict], list[str]]:
    """The LLM agent's k attempts per task (attempt 0 greedy, the task as published; the
    others sampled, a multi-turn task's user then played by the LLM: rollouts/attempts), the
    samples difficulty calibration counts:
    (trajectories, quarantine rows of the failed attempts, reasons the budget, deadline or
    breaker stopped some), each in the order of the attempts."""
    k = settings.profile_obj.llm_agent_attempts
    jobs = [(scenario, checks, attempt) for scenario, checks in items for attempt in range(k)]
    # As many episodes at once as the client lets requests be in flight: they wait on the
    # network, not on the two cores (their sandboxes are a pool of their own, that wide).
    results = llm_attempts(env, jobs, client, model=model, backend=settings.sandbox_backend)
    out, quarantine, stopped = [], [], []
    for (scenario, _, attempt), result in zip(jobs, results, strict=True):
        if not isinstance(result, LLMError):
            out.append(result.model_dump(mode="json"))
            continue
        row_id = f"{scenario.scenario_id}:llm:{attempt}"
        if isinstance(result, StageStopped):  # budget, deadline or breaker: stop, keep the rest
            stopped.append(result.reason)
            quarantine.append(quarantine_row("trajectory", row_id, "trajectories", result.reason))
        else:  # one unreachable answer must not sink the stage
            quarantine.append(
                quarantine_row("trajectory", row_id, "trajectories", f"llm: {result}")
            )
    return out, quarantine, stopped


def _llm_metadata(settings: BuildSettings, out: list[dict]) -> dict:
    """The LLM agent's attempts per task and how many of its episodes were multi-turn."""
    llm = [t for t in out if t["policy"].startswith(LLM_POLICY_PREFIX)]
    return {
        "llm_attempts_per_task": settings.profile_obj.llm_agent_attempts,
        "llm_multi_turn": sum((t.get("metadata") or {}).get("turns", 1) > 1 for t in llm),
    }
