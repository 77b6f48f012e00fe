"""What runs without anyone asking (with the daemon, `make ui`): a schedule that makes again
only what is stale, a sensor that publishes the dataset again once a refresh has made its
environments, and a sensor that opens partitions for new catalogue topics.

They decide as `envfoundry build` does (assets/_staleness.py, orchestration/reuse.py),
so a refresh on a schedule and a build from the command line redo the same stages and
publish the same dataset.
"""

from __future__ import annotations

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._staleness import Staleness, staleness
from assets._util import PER_ENVIRONMENT_ASSETS, PUBLISH_INPUTS_TAG
from orchestration.jobs import catalogue_job, environment_job, publish_job
from orchestration.reuse import EXPLAIN, dataset_behind, publish_inputs
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
                run_key=refresh_run_key(found, env_id),
                partition_key=env_id,
                asset_selection=[dg.AssetKey(stage) for stage in stages],
                tags={"envfoundry/why": found.why(env_id) or ""},
            )
        )
    if not requests:
        return dg.SkipReason(f"nothing is stale in {len(env_ids)} environments")
    return requests


def refresh_run_key(found: Staleness, env_id: str) -> str:
    """The run key of `refresh_stale`'s run for an environment as stale as `found` says."""
    return f"{env_id}:{content_hash([found.redo(env_id), found.reasons[env_id]])[:16]}"


# Runs that have not finished: while any is, a publish would race the environments it reads.
_UNFINISHED = [
    dg.DagsterRunStatus.QUEUED,
    dg.DagsterRunStatus.NOT_STARTED,
    dg.DagsterRunStatus.STARTING,
    dg.DagsterRunStatus.STARTED,
    dg.DagsterRunStatus.CANCELING,
]


@dg.sensor(
    name="publish_refreshed",
    job=publish_job,
    minimum_interval_seconds=120,
    default_status=dg.DefaultSensorStatus.STOPPED,
    description="Every two minutes: once no run is in flight and every stale environment has "
    "had its `refresh_stale` run, publish the dataset again if what it would publish from "
    "changed (the publish a build ends with; an environment whose run failed is left out, "
    "as in a build).",
)
def publish_refreshed(context: dg.SensorEvaluationContext):
    # Here, not with the module: the code location loads without Dagster's internals (~0.4 s).
    from orchestration.fastrun.dagster_internals import RUN_KEY_TAG

    instance = context.instance
    unfinished = instance.get_runs_count(dg.RunsFilter(statuses=_UNFINISHED))
    if unfinished:
        return dg.SkipReason(f"waiting for {unfinished} unfinished run(s)")
    env_ids = instance.get_dynamic_partitions(environment_partitions.name)
    graph = context.repository_def.asset_graph
    found = staleness(instance, graph, PER_ENVIRONMENT_ASSETS, env_ids, explain=EXPLAIN)
    # A stale environment refresh_stale has not tried yet would be left out of the dataset
    # only to come back at the next publish; one whose run was tried and failed is left out
    # as a build leaves it out, or nothing would publish until it is mended.
    untried = [
        env_id
        for env_id in found.stale_partitions()
        if not instance.get_runs_count(
            dg.RunsFilter(tags={RUN_KEY_TAG: refresh_run_key(found, env_id)})
        )
    ]
    if untried:
        return dg.SkipReason(
            f"{len(untried)} stale environment(s) not remade yet ({', '.join(untried[:3])}"
            f"{' …' if len(untried) > 3 else ''}): refresh_stale or a build makes them first"
        )
    inputs = publish_inputs(instance, graph, env_ids)
    why = dataset_behind(instance, inputs)
    if why is None:
        return dg.SkipReason("the published dataset is current")
    return dg.RunRequest(
        # Once per set of inputs: a publish that fails is not retried until something changes.
        run_key=f"publish:{inputs}",
        tags={PUBLISH_INPUTS_TAG: inputs, "envfoundry/why": why},
    )


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
