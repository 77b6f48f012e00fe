"""What an incremental build reuses: the environments with nothing stale, and the published
dataset when nothing it is made from changed.

The publish run records what it published from (`publish_inputs`: every environment's
stage data versions and the publish stages' code versions) on `published_dataset`; a later
build publishes again only when that differs, or when it made any environment again.
"""

from __future__ import annotations

import dagster as dg

from assets._resources import BuildSettings
from assets._staleness import NEW, latest_partition_versions, staleness
from assets._util import PER_ENVIRONMENT_ASSETS
from synthesis.export import datasets
from synthesis.hashing import content_hash

PUBLISH_GROUPS = ("warehouse", "marts", "export")
# What a changed input of a per-environment stage means, in the build's summary.
EXPLAIN = {
    "topic_catalogue": "its definition changed",
    "env_specs": "the build's settings changed",
    "env_sources": "the build's settings changed",
    "llm_env_specs": "the build's settings changed",
}


def stale_stages(
    instance: dg.DagsterInstance, asset_graph: object, env_ids: list[str], outcome: object
) -> dict[str, list[str]]:
    """environment → the stages its run must make (environments with none are left out);
    records on `outcome` why each is made again and which are reused."""
    found = staleness(instance, asset_graph, PER_ENVIRONMENT_ASSETS, env_ids, explain=EXPLAIN)
    plan = {}
    for env_id in env_ids:
        stages = found.redo(env_id)
        if stages:
            plan[env_id] = stages
            outcome.remade[env_id] = found.why(env_id)
        else:
            outcome.reused.append(env_id)
    return plan


def publish_inputs(instance: dg.DagsterInstance, asset_graph: object, env_ids: list[str]) -> str:
    """A hash of what a publish run would publish from: every environment's latest stage
    data versions, the settings, and the code versions of the publish stages."""
    stages = {
        stage: latest_partition_versions(instance, dg.AssetKey(stage))
        for stage in PER_ENVIRONMENT_ASSETS
    }
    code = {
        key.to_user_string(): asset_graph.get(key).code_version
        for key in asset_graph.materializable_asset_keys
        if asset_graph.get(key).group_name in PUBLISH_GROUPS
    }
    return content_hash(
        {
            "environments": {e: [stages[s].get(e) for s in stages] for e in env_ids},
            "code": dict(sorted(code.items())),
            "settings": BuildSettings.from_env().run_fingerprint,
        }
    )[:32]


def publish_reason(instance: dg.DagsterInstance, inputs: str, outcome: object) -> str | None:
    """Why the build must publish again, or None when the published dataset is current."""
    if datasets.current_dir(BuildSettings.from_env().home_path) is None:
        return "this home had no published dataset"
    if outcome.remade:
        new = sum(why == NEW for why in outcome.remade.values())
        again = len(outcome.remade) - new
        said = [f"{again} made again"] if again else []
        said += [f"{new} new"] if new else []
        return f"environments changed: {' and '.join(said)}"
    return dataset_behind(instance, inputs)


def dataset_behind(instance: dg.DagsterInstance, inputs: str) -> str | None:
    """Why the published dataset is not what `inputs` (publish_inputs) would publish, or None
    when it is."""
    settings = BuildSettings.from_env()
    if datasets.current_dir(settings.home_path) is None:
        return "this home had no published dataset"
    record = instance.get_latest_materialization_event(dg.AssetKey("published_dataset"))
    made = record.asset_materialization if record is not None else None
    metadata = made.metadata if made is not None else {}
    published = metadata.get("publish_inputs")
    if published is None or published.value != inputs:
        return "environments were added or removed, or the publish stages changed"
    return None
