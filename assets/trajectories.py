"""Trajectories: policies play every published scenario in the sandbox; rewards from checks."""

import dagster as dg

from assets._util import code_version
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from synthesis.agents import NoopPolicy, OraclePolicy
from synthesis.models import Check, Environment, Scenario
from synthesis.rollouts import rollout

POLICIES = {"oracle": OraclePolicy, "noop": NoopPolicy}


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
    out = []
    for raw in checks["scenarios"]:
        scenario = Scenario.model_validate(raw)
        if scenario.status != "published":
            continue
        for name, policy_cls in POLICIES.items():
            policy = policy_cls(scenario) if name == "oracle" else policy_cls()
            traj = rollout(
                env,
                scenario,
                by_scenario[scenario.scenario_id],
                policy,
                backend=settings.sandbox_backend,
            )
            out.append(traj.model_dump(mode="json"))
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
