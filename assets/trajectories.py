"""Trajectories: policies play every published scenario in the sandbox; rewards from checks."""

import dagster as dg

from assets._util import code_version
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from sandboxes import WorkerPool
from synthesis.agents import NoopPolicy, OraclePolicy
from synthesis.models import Check, Environment, Scenario
from synthesis.rollouts import rollouts

POLICIES = {"oracle": OraclePolicy, "noop": lambda scenario: NoopPolicy()}
ROLLOUT_WORKERS = 2  # the machines this runs on have two cores


@dg.asset(
    group_name="trajectories",
    partitions_def=environment_partitions,
    code_version=code_version("synthesis.agents", "synthesis.rollouts"),
    description="Oracle and do-nothing rollouts in OpenAI chat format (tool calls and "
    "tool results), each scored by the scenario's proven checks.",
)
def trajectories(
    context: dg.AssetExecutionContext, settings: BuildSettings, environments: dict, checks: dict
) -> list[dict]:
    env = Environment.model_validate(environments)
    by_scenario: dict[str, list[Check]] = {}
    for raw in checks["checks"]:
        check = Check.model_validate(raw)
        by_scenario.setdefault(check.scenario_id, []).append(check)
    published = [
        Scenario.model_validate(raw) for raw in checks["scenarios"] if raw["status"] == "published"
    ]
    items = [(s, by_scenario[s.scenario_id]) for s in published]
    out = []
    # Rollouts are interactive (the policy decides after each result): run them on a pool.
    with WorkerPool(size=ROLLOUT_WORKERS, backend=settings.sandbox_backend) as pool:
        for policy_for in POLICIES.values():
            out += [t.model_dump(mode="json") for t in rollouts(env, items, policy_for, pool=pool)]
    rewards = {name: [t["reward"] for t in out if t["policy"] == name] for name in POLICIES}
    context.add_output_metadata(
        {
            "trajectories": len(out),
            **{
                f"mean_reward_{name}": round(sum(r) / len(r), 3) if r else 0.0
                for name, r in rewards.items()
            },
        }
    )
    return out
