"""Env specs and sources: a typed EnvSpec per topic, or an existing class; one partition each."""

import dataclasses

import dagster as dg

from assets._util import code_version, md_table, quarantine_row, top_reasons
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from synthesis.environments.foreign import SourceError, resolve_sources
from synthesis.environments.specgen import generate_spec
from synthesis.models import Topic


@dg.asset(
    group_name="catalogue",
    code_version=code_version(
        "synthesis.environments.specgen",
        "synthesis.environments.archetypes.booking",
        "synthesis.environments.archetypes.order_lifecycle",
        "synthesis.environments.archetypes.workspace",
    ),
    description="Topic → EnvSpec (entities, typed fields, tools with preconditions and "
    "effects, rules). Invalid specs are quarantined with every problem listed.",
)
def env_specs(context: dg.AssetExecutionContext, topics: list[dict]) -> dict:
    specs, quarantine = [], []
    for raw in topics:
        topic = Topic.model_validate(raw)
        if topic.source:
            continue  # an existing class: env_sources resolves it, no spec is generated
        try:
            specs.append(generate_spec(topic).model_dump(mode="json"))
        except Exception as exc:  # noqa: BLE001 - any failure is this topic's, recorded
            quarantine.append(
                quarantine_row(
                    "env_spec", topic.topic_id, "env_specs", f"{type(exc).__name__}: {exc}"
                )
            )
    context.add_output_metadata(
        {
            "specs": len(specs),
            "quarantined": len(quarantine),
            "quarantine_reasons": top_reasons(q["reason"] for q in quarantine),
            "preview": md_table(
                [
                    {
                        "env_id": s["env_id"],
                        "entities": len(s["entities"]),
                        "tools": len(s["tools"]),
                    }
                    for s in specs
                ],
                ["env_id", "entities", "tools"],
            ),
        }
    )
    return {"specs": specs, "quarantine": quarantine}


@dg.asset(
    group_name="catalogue",
    code_version=code_version("synthesis.environments.foreign"),
    description="Every environment of this build, one partition each: a generated spec, or "
    "an existing class (`--envs`, catalogue `source`) located and parsed, never run here.",
)
def env_sources(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    topics: list[dict],
    env_specs: dict,
    llm_env_specs: dict,
    llm_env_code: dict,
) -> dict:
    foreign, quarantine = [], []
    # `--envs` paths arrive absolute; a catalogue's own are relative to the catalogue.
    base = settings.catalogue_path.parent if settings.catalogue_path else None
    requested = [(spec, None) for spec in settings.envs] + [
        (t["source"], t["topic_id"]) for t in topics if t.get("source")
    ]
    for spec, topic_id in requested:
        try:
            found = resolve_sources(spec, base=base if topic_id else None)
        except SourceError as exc:
            quarantine.append(
                quarantine_row("environment", topic_id or spec, "env_sources", str(exc))
            )
            continue
        if topic_id is not None and len(found) == 1:
            found = [dataclasses.replace(found[0], env_id=topic_id)]
        foreign += [s.to_json() for s in found]
    # Model-written environments (empty offline) are environments of this build like the
    # rest: an authored spec compiles like a generated one (the `environments` asset reads
    # it from `llm_env_specs`), a written class is one more foreign source. Topics the model
    # could not serve are quarantined here, where the warehouse reads unresolved sources.
    foreign += llm_env_code["sources"]
    quarantine += llm_env_specs["quarantine"] + llm_env_code["quarantine"]
    specs = env_specs["specs"] + llm_env_specs["specs"]
    env_ids = [s["env_id"] for s in specs] + [f["env_id"] for f in foreign]
    clashes = sorted({e for e in env_ids if env_ids.count(e) > 1})
    if clashes:
        raise dg.Failure(f"two environments of this build share the ids {clashes}")
    # The partition set is exactly this build's environments: a stale partition (a topic
    # dropped from the catalogue or the profile) would leak old artifacts into the warehouse.
    known = set(context.instance.get_dynamic_partitions(environment_partitions.name))
    new = [e for e in env_ids if e not in known]
    if new:
        context.instance.add_dynamic_partitions(environment_partitions.name, new)
    for stale in sorted(known - set(env_ids)):
        context.instance.delete_dynamic_partition(environment_partitions.name, stale)
    context.add_output_metadata(
        {
            "environments": len(env_ids),
            "foreign": len(foreign),
            "unresolved": len(quarantine),
            "new_partitions": len(new),
            "removed_partitions": len(known - set(env_ids)),
            "quarantine_reasons": top_reasons(q["reason"] for q in quarantine),
            "preview": md_table(
                [
                    {"env_id": f["env_id"], "class": f["class_name"], "path": f["path"]}
                    for f in foreign
                ],
                ["env_id", "class", "path"],
            ),
        }
    )
    return {"foreign": foreign, "quarantine": quarantine}
