"""What a build must redo, decided from the instance's records in a few queries.

Every per-environment stage records with each materialization its code version, its data
version (its output's content and the settings it was made under: assets._util.versioned)
and the data versions of its inputs. A stage of a partition is stale when it was never made
there, when its code changed since, or when an input's data version now differs from the one
it was made from: the environment's definition (the `topic_catalogue` source), the settings
(the catalogue's build-wide versions, assets._util.build_wide), or an earlier stage that made
something else. Dagster tells the same with a query per stage and partition (16-47 s for the
full profile's 170 environments); two queries per stage here read every partition's latest
record at once (about 1.5 s).

Dagster reports a stage stale only until the stage before it has run again (staleness is
not transitive), so a build redoes each stale stage and every stage after it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import dagster as dg
from dagster import DagsterEventType

from synthesis.hashing import sha256_text

NEW = "never made"

# The tags Dagster records versions under, on every materialization and observation. They are
# written into every instance's event log, a stored format Dagster reads back from older
# instances, so they are named here rather than imported from Dagster's private modules;
# tests/orchestration/test_dagster_internals.py holds them to Dagster's own.
DATA_VERSION_TAG = "dagster/data_version"
CODE_VERSION_TAG = "dagster/code_version"


def input_data_version_tag(key: dg.AssetKey) -> str:
    """The tag a materialization records the data version of its input `key` under."""
    return f"dagster/input_data_version/{key.to_user_string()}"


@dataclass(frozen=True)
class Staleness:
    """Per partition, the stages that are stale themselves and why; `redo` adds what follows."""

    stages: tuple[str, ...]  # the per-environment stages, upstream first
    followers: Mapping[str, frozenset[str]]  # stage → the stages downstream of it
    reasons: Mapping[str, Mapping[str, str]]  # partition → {stale stage: why}

    def redo(self, partition: str) -> list[str]:
        """The stages a build must run for `partition`, in stage order (none: all fresh)."""
        stale = set(self.reasons.get(partition, {}))
        for stage in list(stale):
            stale |= self.followers[stage]
        return [s for s in self.stages if s in stale]

    def why(self, partition: str) -> str | None:
        """Why the first stale stage of `partition` is stale (None: all fresh)."""
        found = self.reasons.get(partition, {})
        first = next((s for s in self.stages if s in found), None)
        return None if first is None else found[first]

    def stale_partitions(self) -> list[str]:
        return sorted(p for p, found in self.reasons.items() if found)


def staleness(
    instance: dg.DagsterInstance,
    asset_graph: object,
    stages: Sequence[str],
    partitions: Iterable[str],
    *,
    explain: Mapping[str, str] | None = None,
) -> Staleness:
    """The stale stages of `partitions`, from `asset_graph` (the code location's, with its
    code versions) and the instance's latest records. `explain` names what a changed input
    means (input asset → reason text); other inputs read "<input> changed"."""
    partitions = sorted(partitions)
    keys = {stage: dg.AssetKey(stage) for stage in stages}
    nodes = {stage: asset_graph.get(key) for stage, key in keys.items()}
    versions: dict[dg.AssetKey, dict[str | None, str | None]] = {}

    def current(parent: dg.AssetKey) -> dict[str | None, str | None]:
        if parent not in versions:
            node = asset_graph.get(parent)
            observed = not node.is_materializable
            if node.is_partitioned:
                versions[parent] = dict(latest_partition_versions(instance, parent, observed))
            else:
                record = instance.get_latest_data_version_record(parent, observed)
                tags = record.event_log_entry.tags if record is not None else {}
                versions[parent] = {None: (tags or {}).get(DATA_VERSION_TAG)}
        return versions[parent]

    reasons: dict[str, dict[str, str]] = {p: {} for p in partitions}
    for stage, key in keys.items():
        node = nodes[stage]
        made = _latest_tags(instance, key, DagsterEventType.ASSET_MATERIALIZATION)
        for partition in partitions:
            why = _stale(node, made.get(partition), partition, asset_graph, current, explain or {})
            if why is not None:
                reasons[partition][stage] = why
    followers = {
        stage: frozenset(s for s in stages if keys[s] in _descendants(asset_graph, keys[stage]))
        for stage in stages
    }
    return Staleness(tuple(stages), followers, {p: r for p, r in reasons.items() if r})


def _stale(node, tags, partition, asset_graph, current, explain) -> str | None:
    if not tags:
        return NEW
    if node.code_version and tags.get(CODE_VERSION_TAG) != node.code_version:
        return f"{node.key.to_user_string()} code changed"
    for parent in sorted(node.parent_keys):
        partitioned = asset_graph.get(parent).is_partitioned
        now = current(parent).get(partition if partitioned else None)
        if now is None:
            continue
        made_from = tags.get(input_data_version_tag(parent))
        # Dagster records a partitioned input's version as the sha256 of its partitions'
        # versions (of the one partition, here); a stage's own tag may record it as it is.
        if made_from != now and not (partitioned and made_from == sha256_text(now)):
            name = parent.to_user_string()
            return explain.get(name, f"{name} changed")
    return None


def _descendants(asset_graph, key: dg.AssetKey) -> set[dg.AssetKey]:
    found: set[dg.AssetKey] = set()
    todo = [key]
    while todo:
        for child in asset_graph.get(todo.pop()).child_keys:
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def latest_partition_versions(
    instance: dg.DagsterInstance, key: dg.AssetKey, observed: bool = False
) -> dict[str, str]:
    """partition → the data version of its latest materialization (or observation)."""
    kind = (
        DagsterEventType.ASSET_OBSERVATION if observed else DagsterEventType.ASSET_MATERIALIZATION
    )
    return {
        partition: tags[DATA_VERSION_TAG]
        for partition, tags in _latest_tags(instance, key, kind).items()
        if tags.get(DATA_VERSION_TAG)
    }


def _latest_tags(
    instance: dg.DagsterInstance, key: dg.AssetKey, kind: DagsterEventType
) -> dict[str, dict[str, str]]:
    """partition → the tags of its latest event of `kind`: two queries for every partition."""
    storage_ids = instance.event_log_storage.get_latest_storage_id_by_partition(key, kind)
    if not storage_ids:
        return {}
    records_filter = dg.AssetRecordsFilter(asset_key=key, storage_ids=list(storage_ids.values()))
    fetch = (
        instance.fetch_observations
        if kind == DagsterEventType.ASSET_OBSERVATION
        else instance.fetch_materializations
    )
    records = fetch(records_filter, limit=len(storage_ids)).records
    return {r.partition_key: dict(r.event_log_entry.tags or {}) for r in records if r.partition_key}
