"""The Dagster code location: assembles assets, checks, jobs and resources. Nothing else."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from assets import (
    checks,
    dbt,
    env_specs,
    environments,
    evaluation,
    judging,
    llm_environments,
    reports,
    scenarios,
    task_screening,
    topics,
    training_shards,
    trajectories,
    warehouse,
)
from assets._resources import BuildSettings, sandbox_pool
from orchestration.automation import new_topics, publish_refreshed, refresh_stale
from orchestration.executors import executor_from_env
from orchestration.fastrun import lifeline
from orchestration.io_managers import JsonArtifactIOManager
from orchestration.jobs import (
    catalogue_job,
    environment_job,
    eval_job,
    publish_job,
    weekly_refresh,
)

_MODULES = [
    topics,
    env_specs,
    llm_environments,
    environments,
    judging,
    scenarios,
    checks,
    trajectories,
    task_screening,
    warehouse,
    training_shards,
    dbt,
    reports,
    evaluation,
]

# What the publish run imports (seconds of CPU): its Great Expectations gates, and dbt, which
# it runs in a child it forks (assets/_dbt_in_process.py). The run host's warm helper
# (orchestration/fastrun/runhost.py) imports them as soon as the host is ready, then warms dbt up
# (`assets.dbt.warm_up`), and forks the publish runs, which then have all of it; the other
# runs never wait for these imports.
RUN_HOST_WARM_JOBS = ("publish_job",)
RUN_HOST_WARM_IMPORTS = (
    "great_expectations",
    "great_expectations.expectations",
    "great_expectations.expectations.row_conditions",
    "dbt.cli.main",
    "dbt.task.build",
    "dbt.adapters.duckdb.impl",
    "dbt.contracts.graph.manifest",
    "assets.dbt:warm_up",
)


def build_definitions() -> dg.Definitions:
    settings = BuildSettings.from_env()
    # dbt reads the warehouse path from this variable (dbt_project/profiles.yml).
    os.environ.setdefault("ENVFOUNDRY_HOME", settings.home)
    return dg.Definitions(
        assets=dg.load_assets_from_modules(_MODULES),
        asset_checks=dg.load_asset_checks_from_modules(_MODULES),
        jobs=[catalogue_job, environment_job, publish_job, eval_job],
        schedules=[weekly_refresh, refresh_stale],
        sensors=[new_topics, publish_refreshed],
        # Runs launched from the UI and from `envfoundry build` execute alike.
        executor=executor_from_env(),
        resources={
            "settings": settings,
            "io_manager": JsonArtifactIOManager(root=str(Path(settings.home) / "artifacts")),
            "artifact_paths": JsonArtifactIOManager(
                root=str(Path(settings.home) / "artifacts"), paths_only=True
            ),
            "dbt": dbt.dbt_resource(),
            "sandbox_pool": sandbox_pool,
        },
    )


# A code server or run process working for a CLI build ends when the build does.
lifeline.hold_on()
defs = build_definitions()
