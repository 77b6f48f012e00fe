"""One build: the three jobs run in-process on the Dagster instance, so every run is in the UI."""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass, field
from pathlib import Path

import dagster as dg
from rich.progress import Progress

from orchestration.partitions import environment_partitions


@dataclass
class BuildOutcome:
    run_ids: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # job or partition → error

    @property
    def ok(self) -> bool:
        return not self.failed


# The progress bars and the summary are the console output; step logs stay in the instance,
# where the UI shows them.
_QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


# The progress bars and the summary are the console output; step logs stay in the instance,
# where the UI shows them.
_QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            return f"{event.step_key}: {event.step_failure_data.error.message.strip()}"
    return "run failed"


def run_build(progress: Progress | None = None) -> BuildOutcome:
    # Imported here so the CLI has set ENVFOUNDRY_* and DAGSTER_HOME before definitions load.
    from orchestration.definitions import defs

    instance = dg.DagsterInstance.get()
    outcome = BuildOutcome()

    log_path = Path(os.environ["ENVFOUNDRY_HOME"]) / "logs" / "build.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    log_file = log_path.open("w")

    def run(job_name: str, label: str, partition_key: str | None = None) -> bool:
        job = defs.resolve_job_def(job_name)
        # dbt and step code print to stdout; that goes to the build log, not the terminal.
        with contextlib.redirect_stdout(log_file):
            result = job.execute_in_process(
                instance=instance,
                partition_key=partition_key,
                raise_on_error=False,
                run_config=_QUIET,
                tags={"envfoundry/entrypoint": "cli"},
            )
        outcome.run_ids.append(result.run_id)
        if not result.success:
            outcome.failed[label] = _failure_message(result)
        return result.success

    try:
        _run_phases(run, instance, outcome, progress)
    finally:
        log_file.close()
    return outcome


def _run_phases(run, instance, outcome: BuildOutcome, progress: Progress | None) -> None:
    task = progress.add_task("catalogue: topics → env specs", total=1) if progress else None
    if not run("catalogue_job", "catalogue"):
        return
    if progress:
        progress.advance(task)

    env_ids = instance.get_dynamic_partitions(environment_partitions.name)
    task = progress.add_task("environments", total=len(env_ids)) if progress else None
    for env_id in sorted(env_ids):
        if progress:
            progress.update(task, description=f"environment {env_id:<36}")
        run("environment_job", f"environment {env_id}", partition_key=env_id)
        if progress:
            progress.advance(task)
    if progress:
        progress.update(task, description="environments")

    task = (
        progress.add_task("publish: warehouse → shards → dbt → report", total=1)
        if progress
        else None
    )
    run("publish_job", "publish")
    if progress:
        progress.advance(task)
