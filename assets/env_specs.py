"""Env specs and sources: a typed EnvSpec per topic, or an existing class; one partition each.

Two observable sources say what each environment's run was made from, so a build redoes only
what changed (assets/_staleness.py): `topic_catalogue`, one data version per environment
partition (its spec or source, and the program shapes its split is decided among), and
`spec_schema`, the version of the spec language (bumping it re-makes every spec).
"""

import dataclasses
from pathlib import Path

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._staleness import DATA_VERSION_TAG, input_data_version_tag, latest_partition_versions
from assets._util import build_wide, md_table, quarantine_row, stage_asset, top_reasons
from synthesis import codec
from synthesis.config import program_shapes_path
from synthesis.environments.foreign import SourceError, distinct_ids, resolve_sources
from synthesis.environments.shape import program_shape
from synthesis.environments.shape_memo import ShapeMemo
from synthesis.environments.specgen import generate_spec
from synthesis.environments.splits import FOREIGN_ARCHETYPE, build_shapes
from synthesis.hashing import content_hash, sha256_file
from synthesis.models import SPEC_SCHEMA_VERSION, EnvSpec, Topic

TOPIC_CATALOGUE = dg.AssetKey("topic_catalogue")


@dg.observable_source_asset(
    group_name="catalogue",
    partitions_def=environment_partitions,
    description="What each environment is made from, one data version per partition: its "
    "spec (generated from its topic, or model-authored) or its existing class, and the "
    "program shapes of its archetype (its split is decided among them). Recorded by "
    "`env_sources` each build; observing it reads the home's catalogue artifacts.",
)
def topic_catalogue(context: dg.OpExecutionContext, settings: BuildSettings):
    artifacts = settings.home_path / "artifacts"
    specs = (
        _read(artifacts / "env_specs" / "_all.json", {"specs": []})["specs"]
        + _read(artifacts / "llm_env_specs" / "_all.json", {"specs": []})["specs"]
    )
    foreign = _read(artifacts / "env_sources" / "_all.json", {"foreign": []})["foreign"]
    # The last build's shapes, read only: the builds keep the memo.
    memo = ShapeMemo(program_shapes_path(settings.home_path))
    versions = definition_versions(specs, foreign, archetype_shapes(specs, foreign, memo))
    known = set(context.instance.get_dynamic_partitions(environment_partitions.name))
    return dg.DataVersionsByPartition(
        {env_id: version for env_id, version in versions.items() if env_id in known}
    )


@dg.observable_source_asset(
    group_name="catalogue",
    description="The version of the spec language (synthesis.models.SPEC_SCHEMA_VERSION): "
    "every spec records it, so bumping it re-makes every spec and every environment.",
)
def spec_schema() -> dg.DataVersion:
    return dg.DataVersion(f"v{SPEC_SCHEMA_VERSION}")


def _read(path: Path, default: dict) -> dict:
    return codec.read_json(path) if path.is_file() else default


def archetype_shapes(
    specs: list[dict], foreign: list[dict], memo: ShapeMemo | None = None
) -> dict[str, list[str]]:
    """Archetype → the program shapes of this build's environments, which decide every
    environment's split (synthesis.environments.splits). `memo`: shapes kept between builds."""
    shape_of = memo.shape if memo is not None else program_shape
    shapes = build_shapes((EnvSpec.model_validate(s) for s in specs), foreign, shape_of)
    return {archetype: sorted(found) for archetype, found in sorted(shapes.items())}


def definition_versions(
    specs: list[dict], foreign: list[dict], shapes: dict[str, list[str]] | None = None
) -> dict[str, str]:
    """env id → the data version of what its run is made from: its spec or its source (with
    its states file), and the program shapes of its archetype in this build, which decide
    its split. An edit that changes no shape leaves every other environment's version."""
    shapes = archetype_shapes(specs, foreign) if shapes is None else shapes
    versions = {}
    for spec in specs:
        siblings = shapes.get(spec["archetype"], [])
        versions[spec["env_id"]] = content_hash({"spec": spec, "shapes": siblings})[:32]
    for source in foreign:
        states = source.get("states_path")
        states_sha = sha256_file(states) if states and Path(states).is_file() else None
        siblings = shapes.get(FOREIGN_ARCHETYPE, [])
        versions[source["env_id"]] = content_hash(
            {"source": source, "states": states_sha, "shapes": siblings}
        )[:32]
    return versions


def definition_provenance(context: dg.AssetExecutionContext) -> dict[str, str]:
    """The provenance tags of this partition's `topic_catalogue` observation, for the first
    stage's materialization. Dagster 1.13 records a partitioned observable source's input
    version from materializations only (an empty hash for an observed source); a stage's own
    tags override its, so the UI's staleness and assets/_staleness.py read the
    definition this partition was really made from."""
    record = context.instance.get_latest_data_version_record(
        TOPIC_CATALOGUE, True, partition_key=context.partition_key
    )
    if record is None:
        return {}
    name = TOPIC_CATALOGUE.to_user_string()
    return {
        input_data_version_tag(TOPIC_CATALOGUE): record.event_log_entry.tags[DATA_VERSION_TAG],
        f"dagster/input_event_pointer/{name}": str(record.storage_id),
    }


def record_definitions(context: dg.AssetExecutionContext, versions: dict[str, str]) -> int:
    """Observe `topic_catalogue` for the partitions whose definition changed (or is new): an
    observation per partition is an event-log write, so unchanged ones are not repeated."""
    recorded = latest_partition_versions(context.instance, TOPIC_CATALOGUE, observed=True)
    changed = sorted(e for e, v in versions.items() if recorded.get(e) != v)
    for env_id in changed:
        context.log_event(
            dg.AssetObservation(
                asset_key=TOPIC_CATALOGUE,
                partition=env_id,
                tags={DATA_VERSION_TAG: versions[env_id]},
            )
        )
    return len(changed)


@stage_asset(
    group_name="catalogue",
    deps=[spec_schema],
    description="Topic → EnvSpec (entities, typed fields, tools with preconditions and "
    "effects, rules). Invalid specs are quarantined with every problem listed.",
)
def env_specs(
    context: dg.AssetExecutionContext, settings: BuildSettings, topics: list[dict]
) -> dg.Output[dict]:
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
    return build_wide({"specs": specs, "quarantine": quarantine}, settings.run_fingerprint)


@stage_asset(
    group_name="catalogue",
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
) -> dg.Output[dict]:
    found_all, named, quarantine = [], set(), []
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
            named.add(len(found_all))
        found_all += found
    # The same class name in two packages (ACEBench's and BFCL's MessageApi) is two
    # environments: each is named after its module, not refused as a clash. The ids a
    # catalogue gives are its topics' and stay.
    taken = {s["env_id"] for s in env_specs["specs"]}
    foreign = [s.to_json() for s in distinct_ids(found_all, taken, keep=named)]
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
    # Computed once here rather than by every environment's run, and only for the classes
    # whose shape the last build did not keep.
    memo = ShapeMemo(program_shapes_path(settings.home_path))
    shapes = archetype_shapes(specs, foreign, memo)
    memo.save()
    changed = record_definitions(context, definition_versions(specs, foreign, shapes))
    context.add_output_metadata(
        {
            "environments": len(env_ids),
            "changed_definitions": changed,
            "foreign": len(foreign),
            "unresolved": len(quarantine),
            "new_partitions": len(new),
            "shapes_made": dg.MetadataValue.int(memo.made),
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
    return build_wide(
        {"foreign": foreign, "quarantine": quarantine, "shapes": shapes}, settings.run_fingerprint
    )
