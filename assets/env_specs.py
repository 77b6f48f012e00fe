"""Env specs: one typed EnvSpec per topic; each accepted spec opens an environment partition."""

import dagster as dg

from assets._util import code_version, md_table, quarantine_row, top_reasons
from orchestration.partitions import environment_partitions
from synthesis.models import Topic
from synthesis.specgen import generate_spec


@dg.asset(
    group_name="env_specs",
    code_version=code_version(
        "synthesis.specgen", "synthesis.archetypes.booking", "synthesis.archetypes.order_lifecycle"
    ),
    description="Topic → EnvSpec (entities, typed fields, tools with preconditions and "
    "effects, rules). Invalid specs are quarantined with every problem listed.",
)
def env_specs(context: dg.AssetExecutionContext, topics: list[dict]) -> dict:
    specs, quarantine = [], []
    for raw in topics:
        topic = Topic.model_validate(raw)
        try:
            specs.append(generate_spec(topic).model_dump(mode="json"))
        except Exception as exc:  # noqa: BLE001 - any failure is this topic's, recorded
            quarantine.append(
                quarantine_row(
                    "env_spec", topic.topic_id, "env_specs", f"{type(exc).__name__}: {exc}"
                )
            )
    env_ids = [s["env_id"] for s in specs]
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
            "specs": len(specs),
            "quarantined": len(quarantine),
            "new_partitions": len(new),
            "removed_partitions": len(known - set(env_ids)),
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
