"""Environments, their states, models and audit: compiled or foreign classes, AST-derived tools,
initial states, the environment model every later stage reads, and the contract audit."""

import dagster as dg

from assets._llm import llm_run
from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._util import md_table, per_environment, stage_asset, versioned
from assets.env_specs import TOPIC_CATALOGUE, definition_provenance
from quality.audit import AUDIT_THRESHOLD, audit_environment
from sandboxes import WorkerPool
from synthesis.environments.build import build_environment
from synthesis.environments.foreign import ForeignSource, foreign_environment
from synthesis.environments.foreign_states import build_foreign_states
from synthesis.environments.inference import infer_model
from synthesis.environments.model import EnvModel, from_analysis, from_spec, model_of
from synthesis.environments.runtime import sandbox_refusal
from synthesis.environments.splits import with_split
from synthesis.environments.states import build_initial_state
from synthesis.llm.initial_state import SeedStates, write_initial_states
from synthesis.models import Environment, EnvSpec, InitialState

# Initial states a foreign environment gets where the class allows: its default, then states
# from its states file, then seeded variants.
FOREIGN_STATES = 3


@stage_asset(
    group_name="environments",
    partitions_def=environment_partitions,
    # What this partition is made from; env_specs and env_sources are read whole, but are
    # versioned build-wide (assets._util.build_wide).
    deps=[TOPIC_CATALOGUE],
    description="EnvSpec → a Python class following the environment contract, or an existing "
    "class taken as it is; OpenAI tool schemas and read/write sets derived by AST analysis; "
    "its program shape and, from that and its archetype, the split of its tasks.",
)
def environments(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    env_specs: dict,
    env_sources: dict,
    llm_env_specs: dict,
) -> dg.Output[dict]:
    env_id = context.partition_key
    # A spec a model authored (online only) compiles like a generated one.
    specs = env_specs["specs"] + llm_env_specs["specs"]
    raw = next((s for s in specs if s["env_id"] == env_id), None)
    foreign = next((f for f in env_sources["foreign"] if f["env_id"] == env_id), None)
    if raw is not None:
        env = build_environment(EnvSpec.model_validate(raw))
    elif foreign is not None:
        env = foreign_environment(ForeignSource.from_json(foreign))
        refusal = sandbox_refusal(settings.sandbox_backend)
        if refusal is not None and env.status == "accepted":
            env = env.model_copy(update={"status": "quarantined", "reason": refusal})
    else:
        raise dg.Failure(f"no spec or source for environment {env_id} in this build")
    # The split is decided among the shapes of this archetype's environments in the build.
    env = with_split(env, env_sources["shapes"], holdout=settings.holdout_archetypes)
    context.add_output_metadata(
        {
            "status": env.status,
            "source": env.source,
            "class": env.class_name,
            "code_sha256": env.code_sha256,
            "program_shape": env.program_shape or "",
            "split": env.split or "",
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
            **({"reason": env.reason} if env.reason else {}),
        }
    )
    value = env.model_dump(mode="json", by_alias=True)
    return versioned(value, settings.run_fingerprint, tags=definition_provenance(context))


@stage_asset(
    group_name="environments",
    partitions_def=environment_partitions,
    description="Initial states. Compiled: seeded base records, then a seeded history of real "
    "tool calls replayed in the sandbox. Foreign: the class's own default, its states file "
    "and seeded variants, each validated by loading and dumping it in the sandbox. With "
    "OPENAI_BASE_URL set, the `initial_state` LLM stage adds model-written states, each "
    "kept only when it loads and dumps unchanged and passes the audit's probes.",
)
@per_environment
def initial_states(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    env_sources: dict,
) -> dict:
    env = Environment.model_validate(environments)
    if env.status != "accepted":
        return {"states": [], "error": None}
    profile = settings.profile_obj
    try:
        if env.spec is not None:
            states = [
                build_initial_state(
                    env,
                    seed=settings.seed,
                    index=i,
                    records_per_entity=profile.records_per_entity,
                    backend=settings.sandbox_backend,
                    pool=sandbox_pool,
                )
                for i in range(profile.initial_states_per_env)
            ]
        else:
            source = next(f for f in env_sources["foreign"] if f["env_id"] == env.env_id)
            states = build_foreign_states(
                env,
                seed=settings.seed,
                count=max(FOREIGN_STATES, profile.initial_states_per_env),
                states_path=source.get("states_path"),
                backend=settings.sandbox_backend,
            )
    except Exception as exc:  # noqa: BLE001 - hostile or broken code: quarantine, go on
        # Loading or replaying the environment's own code failed (it crashed, hung, was
        # killed, or cannot load at all): the environment is unusable. Record why; the audit
        # quarantines it.
        reason = f"initial state: {type(exc).__name__}: {exc}"
        context.add_output_metadata({"states": 0, "error": reason})
        return {"states": [], "error": reason}
    # With an endpoint the model writes more states (the `initial_state` stage); offline
    # nothing here runs and the artifact keeps its bytes.
    seeded = None
    with llm_run(context, settings) as client:
        if client is not None and states and profile.llm_initial_states > 0:
            seeded = write_initial_states(
                client,
                env,
                model_of(env),
                states[0],
                count=profile.llm_initial_states,
                seed=settings.seed,
                backend=settings.sandbox_backend,
            )
            states = [*states, *seeded.states]
    context.add_output_metadata(
        {
            "states": len(states),
            "records": dg.MetadataValue.json(
                {s.state_id: {k: _size(v) for k, v in s.start_state.items()} for s in states}
            ),
            **_seeded_metadata(seeded),
        }
    )
    out = {"states": [s.model_dump(mode="json") for s in states], "error": None}
    if seeded is not None:
        out["llm_rejections"] = seeded.rejections
    return out


def _seeded_metadata(seeded: SeedStates | None) -> dict:
    if seeded is None:
        return {}
    return {
        "llm_states": len(seeded.states),
        "llm_rejections": dg.MetadataValue.json(seeded.rejections[:20]),
    }


def _size(value: object) -> int | None:
    return len(value) if isinstance(value, (dict, list)) else None


@stage_asset(
    group_name="environments",
    partitions_def=environment_partitions,
    description="The environment model every later stage reads: tools and their kinds, which "
    "parameters take which record ids and which tools produce them, record collections with "
    "id, lookup and status fields. Exact from the spec for compiled environments; inferred "
    "by AST analysis plus probing in the sandbox for code without one.",
)
@per_environment
def env_models(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    initial_states: dict,
) -> dict:
    env = Environment.model_validate(environments)
    states = [InitialState.model_validate(s) for s in initial_states["states"]]
    if env.spec is not None:
        model = from_spec(env.spec, env)
    elif env.status == "accepted" and states:
        model = infer_model(
            env, states, seed=settings.seed, backend=settings.sandbox_backend, pool=sandbox_pool
        )
    else:
        model = from_analysis(env)
    context.add_output_metadata(
        {
            "source": model.source,
            "tools": md_table(
                [
                    {
                        "name": t.name,
                        "kind": t.kind,
                        "evidence": t.kind_evidence,
                        "ast": t.ast_kind,
                        "takes": ", ".join(f"{k}→{v}" for k, v in t.id_params().items()),
                        "produces": ", ".join(t.produces),
                    }
                    for t in model.tools
                ],
                ["name", "kind", "evidence", "ast", "takes", "produces"],
                limit=40,
            ),
            "collections": md_table(
                [
                    {
                        "name": c.name,
                        "attribute": c.attribute,
                        "shape": c.shape,
                        "id": c.id_field,
                        "lookup": ", ".join(c.lookup_fields),
                        "status": c.status_field or "",
                    }
                    for c in model.collections
                ],
                ["name", "attribute", "shape", "id", "lookup", "status"],
            ),
            "kind_disagreements": md_table(
                [d.model_dump() for d in model.disagreements],
                ["tool", "ast_kind", "observed_kind", "evidence"],
            ),
        }
    )
    return model.model_dump(mode="json", by_alias=True)


@stage_asset(
    group_name="environments",
    partitions_def=environment_partitions,
    description=f"Contract audit in the sandbox: valid and invalid calls to every tool; "
    f"environments scoring below {AUDIT_THRESHOLD} are quarantined.",
)
@per_environment
def env_audit(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    sandbox_pool: dg.ResourceParam[WorkerPool | None],
    environments: dict,
    initial_states: dict,
    env_models: dict,
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
            env,
            [s["state"] for s in states],
            seed=settings.seed,
            backend=settings.sandbox_backend,
            model=EnvModel.model_validate(env_models),
            pool=sandbox_pool,
        )
        result = report.to_json()
    context.add_output_metadata(
        {
            "score": result["score"],
            "passed": result["passed"],
            "probes": result["n_probes"],
            "findings": dg.MetadataValue.json(result["findings"][:20]),
            "warnings": dg.MetadataValue.json(result.get("warnings", [])[:20]),
        }
    )
    return result
