"""Environments and their audit: compiled classes, AST-derived tools, and the contract audit."""

import dagster as dg

from assets._util import code_version, md_table
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from quality.audit import AUDIT_THRESHOLD, audit_environment
from synthesis.environments import build_environment
from synthesis.models import Environment, EnvSpec
from synthesis.states import build_initial_state


@dg.asset(
    group_name="environments",
    partitions_def=environment_partitions,
    code_version=code_version("synthesis.compiler", "synthesis.analysis", "synthesis.environments"),
    description="EnvSpec → a Python class following the environment contract, with "
    "OpenAI tool schemas and read/write sets derived by AST analysis.",
)
def environments(context: dg.AssetExecutionContext, env_specs: dict) -> dict:
    env_id = context.partition_key
    raw = next((s for s in env_specs["specs"] if s["env_id"] == env_id), None)
    if raw is None:
        raise dg.Failure(f"no spec for environment {env_id} in this build's env_specs")
    env = build_environment(EnvSpec.model_validate(raw))
    context.add_output_metadata(
        {
            "status": env.status,
            "class": env.class_name,
            "code_sha256": env.code_sha256,
            "lines_of_code": env.code.count("\n"),
            "n_tools": len(env.tools),
            "tools": md_table(
                [
                    {
                        "name": t.name,
                        "kind": t.kind,
                        "reads": ",".join(t.reads),
                        "writes": ",".join(t.writes),
                    }
                    for t in env.tools
                ],
                ["name", "kind", "reads", "writes"],
            ),
            "code": dg.MetadataValue.md(f"```python\n{env.code}\n```"),
        }
    )
    return env.model_dump(mode="json", by_alias=True)


@dg.asset(
    group_name="environments",
    partitions_def=environment_partitions,
    code_version=code_version("synthesis.states"),
    description="Seeded initial states: base records from data, then a seeded history "
    "of real tool calls replayed in the sandbox.",
)
def initial_states(
    context: dg.AssetExecutionContext, settings: BuildSettings, environments: dict
) -> dict:
    env = Environment.model_validate(environments)
    if env.status != "accepted":
        return {"states": [], "error": None}
    profile = settings.profile_obj
    try:
        states = [
            build_initial_state(
                env,
                seed=settings.seed,
                index=i,
                records_per_entity=profile.records_per_entity,
                backend=settings.sandbox_backend,
            )
            for i in range(profile.initial_states_per_env)
        ]
    except Exception as exc:  # noqa: BLE001 - hostile or broken code: quarantine, go on
        # The history replays the environment's own code; if that crashes, hangs or is
        # killed, the environment is unusable. Record why; the audit quarantines it.
        reason = f"initial state: {type(exc).__name__}: {exc}"
        context.add_output_metadata({"states": 0, "error": reason})
        return {"states": [], "error": reason}
    context.add_output_metadata(
        {
            "states": len(states),
            "records": dg.MetadataValue.json(
                {s.state_id: {k: len(v) for k, v in s.state.items()} for s in states}
            ),
        }
    )
    return {"states": [s.model_dump(mode="json") for s in states], "error": None}


@dg.asset(
    group_name="env_audit",
    partitions_def=environment_partitions,
    code_version=code_version("quality.audit"),
    description=f"Contract audit in the sandbox: valid and invalid calls to every tool; "
    f"environments scoring below {AUDIT_THRESHOLD} are quarantined.",
)
def env_audit(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    environments: dict,
    initial_states: dict,
) -> dict:
    env = Environment.model_validate(environments)
    states = initial_states["states"]
    if env.status != "accepted" or not states:
        result = {
            "env_id": env.env_id,
            "score": 0.0,
            "passed": False,
            "n_probes": 0,
            "n_fatal": 0,
            "findings": [env.reason or initial_states["error"] or "no initial state"],
        }
    else:
        report = audit_environment(
            env, [s["state"] for s in states], seed=settings.seed, backend=settings.sandbox_backend
        )
        result = report.to_json()
    context.add_output_metadata(
        {
            "score": result["score"],
            "passed": result["passed"],
            "probes": result["n_probes"],
            "findings": dg.MetadataValue.json(result["findings"][:20]),
        }
    )
    return result
