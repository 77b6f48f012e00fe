"""Jobs: the three phases of a build, the weekly refresh schedule, and evaluations."""

from __future__ import annotations

import dagster as dg

from assets._util import PER_ENVIRONMENT_ASSETS
from orchestration.instance import EVALS_WRITER_TAG

# Phase 1: which environments exist this build (adds/removes environment partitions).
catalogue_job = dg.define_asset_job(
    "catalogue_job",
    # The whole catalogue group: topics (mined, catalogue), specs (generated, model-written),
    # written classes and foreign sources.
    selection=dg.AssetSelection.groups("catalogue"),
    description="Mined and catalogue topics, env specs (generated, or with an endpoint also "
    "model-written), model-written classes and foreign sources; registers one partition per "
    "environment.",
)

# Phase 2: everything per environment, one run per partition.
environment_job = dg.define_asset_job(
    "environment_job",
    selection=dg.AssetSelection.assets(*PER_ENVIRONMENT_ASSETS),
    description="Compile or load, states, model, audit, scenarios, proven checks and "
    "rollouts for one environment.",
)

# Phase 3: warehouse (gated), shards, dbt marts, report.
publish_job = dg.define_asset_job(
    "publish_job",
    selection=dg.AssetSelection.groups("warehouse", "marts", "export"),
    description="Warehouse tables behind Great Expectations gates, training shards, dbt "
    "marts and the data-quality report.",
)

# Not a phase of a build: one model played on the published dataset, a run per model (the
# `eval_models` partition). What `envfoundry eval` does, seen in the UI with the dataset's lineage.
eval_job = dg.define_asset_job(
    "eval_job",
    selection=dg.AssetSelection.assets("evaluation"),
    description="Evaluate the partition's model (OPENAI_BASE_URL) on the published tasks of "
    "the home's current dataset, as `envfoundry eval` does: episodes in "
    "HOME/evals/evals.duckdb, scores as metadata; the dataset is only read. One runs at a "
    "time: the others wait in the queue.",
    # The instance's queue starts runs with this tag one at a time (orchestration/instance.py).
    tags={EVALS_WRITER_TAG: "writer"},
)

weekly_refresh = dg.ScheduleDefinition(
    name="weekly_catalogue_refresh",
    job=catalogue_job,
    cron_schedule="0 3 * * 1",
    default_status=dg.DefaultScheduleStatus.STOPPED,
    description="Re-read the catalogue weekly: new topics open partitions, and changed "
    "definitions are observed (`topic_catalogue`), which makes those environments stale for "
    "`refresh_stale`.",
)
