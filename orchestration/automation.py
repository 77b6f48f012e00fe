"""What runs without anyone asking (with the daemon, `make ui`): a schedule that makes again
only what is stale, and a sensor that opens partitions for new catalogue topics.

Both decide as `envfoundry build` does (orchestration/staleness.py, orchestration/reuse.py),
so a refresh on a schedule and a build from the command line redo the same stages.
"""

from __future__ import annotations

import dagster as dg

from assets._util import PER_ENVIRONMENT_ASSETS
from orchestration.jobs import catalogue_job, environment_job
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from orchestration.reuse import EXPLAIN
from orchestration.staleness import staleness
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.hashing import content_hash


@dg.schedule(
    name="refresh_stale",
    cron_schedule="0 * * * *",
    job=environment_job,
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Hourly: one run per environment with anything stale, of its stale stages and "
    "the stages after them (a changed definition, changed settings, changed code); nothing "
    "when all is current.",
)
def refresh_stale(context: dg.ScheduleEvaluationContext):
    env_ids = context.instance.get_dynamic_partitions(environment_partitions.name)
    found = staleness(
        context.instance,
        context.repository_def.asset_graph,
        PER_ENVIRONMENT_ASSETS,
        env_ids,
        explain=EXPLAIN,
    )
    requests = []
    for env_id in found.stale_partitions():
        stages = found.redo(env_id)
        requests.append(
            dg.RunRequest(
                # The same staleness on the next tick is the same request: not run twice.
                run_key=f"{env_id}:{content_hash([stages, found.reasons[env_id]])[:16]}",
                partition_key=env_id,
                asset_selection=[dg.AssetKey(stage) for stage in stages],
                tags={"envfoundry/why": found.why(env_id) or ""},
            )
        )
    if not requests:
        return dg.SkipReason(f"nothing is stale in {len(env_ids)} environments")
    return requests


def new_environment_ids(settings: BuildSettings, known: set[str]) -> list[str]:
    """The environments the profile would take from the catalogue that have no partition yet."""
    path = settings.catalogue_path
    if path is None or not path.is_file():
        return []
    chosen = select_topics(
        load_catalogue(path), supported_archetypes(), settings.profile_obj.max_topics
    )
    new = set()
    for topic in chosen:
        if topic.source:
            continue  # an existing class: its partition is named by env_sources
        try:
            env_id = generate_spec(topic).env_id
        except Exception:  # noqa: BLE001 - the catalogue run quarantines it with the reason
            continue
        if env_id not in known:
            new.add(env_id)
    return sorted(new)


@dg.sensor(
    name="new_topics",
    job=catalogue_job,
    minimum_interval_seconds=300,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Every five minutes: topics added to the catalogue open their environment "
    "partitions at once, and a catalogue run makes their specs (the next refresh or build "
    "makes the environments).",
)
def new_topics(context: dg.SensorEvaluationContext):
    known = set(context.instance.get_dynamic_partitions(environment_partitions.name))
    new = new_environment_ids(BuildSettings.from_env(), known)
    if not new:
        return dg.SkipReason("no new topics in the catalogue")
    return dg.SensorResult(
        dynamic_partitions_requests=[environment_partitions.build_add_request(new)],
        run_requests=[dg.RunRequest(run_key=f"new:{content_hash(new)[:16]}")],
    )
