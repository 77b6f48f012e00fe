"""One build: the three jobs run in-process on the Dagster instance, so every run is in the UI."""

from __future__ import annotations

import contextlib
import sys
from dataclasses import dataclass, field
from typing import TextIO

import dagster as dg
from rich.progress import Progress

from assets._util import BUILD_TAG
from orchestration.partitions import environment_partitions


@dataclass
class BuildOutcome:
    run_ids: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # job or partition → error
    publish_run_id: str | None = None  # its dataset: $ENVFOUNDRY_HOME/datasets/<run id>

    @property
    def ok(self) -> bool:
        return not self.failed


# The progress bars and the summary are the console output; step logs stay in the instance,
# where the UI shows them.
_QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
CLI_TAG = "envfoundry/entrypoint"


def _failure_message(result: dg.ExecuteInProcessResult) -> str:
    """The failed step and the innermost cause (the framework's wrapper says little)."""
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            error = event.step_failure_data.error
            while error is not None and error.cause is not None:
                error = error.cause
            message = error.message.strip() if error is not None else "failed"
            return f"{event.step_key}: {message.splitlines()[-1] if message else 'failed'}"
    return "run failed"


def mark_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Runs of earlier CLI builds still marked started: their process is gone (the build lock
    is ours, so no other build of this home is alive), so they failed; the UI should say so."""
    from dagster._core.storage.dagster_run import DagsterRunStatus, RunsFilter

    abandoned = instance.get_runs(
        RunsFilter(
            statuses=[DagsterRunStatus.STARTED, DagsterRunStatus.STARTING],
            tags={CLI_TAG: "cli"},
        )
    )
    for run in abandoned:
        instance.report_run_failed(run, message="its build process ended before the run did")
    return [run.run_id for run in abandoned]


def run_build(
    progress: Progress | None = None, *, build_id: str = "", log_file: TextIO | None = None
) -> BuildOutcome:
    # Imported here so the CLI has set ENVFOUNDRY_* and DAGSTER_HOME before definitions load.
    from orchestration.definitions import defs

    instance = dg.DagsterInstance.get()
    outcome = BuildOutcome()
    abandoned = mark_abandoned_runs(instance)
    if abandoned and log_file is not None:
        log_file.write(f"marked {len(abandoned)} abandoned run(s) failed: {abandoned}\n")

    def run(job_name: str, label: str, partition_key: str | None = None) -> bool:
        job = defs.resolve_job_def(job_name)
        # dbt and step code print to stdout, the framework reports failures on stderr: both go
        # to the build log. The terminal shows the progress and the summary, which says why.
        out = log_file or sys.stdout
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(log_file or sys.stderr):
            result = job.execute_in_process(
                instance=instance,
                partition_key=partition_key,
                raise_on_error=False,
                run_config=_QUIET,
                tags={CLI_TAG: "cli", BUILD_TAG: build_id},
            )
        outcome.run_ids.append(result.run_id)
        if job_name == "publish_job":
            outcome.publish_run_id = result.run_id
        if not result.success:
            outcome.failed[label] = _failure_message(result)
            if log_file is not None:
                log_file.write(f"FAILED {label}: {_full_failure(result)}\n")
        return result.success

    _run_phases(run, instance, outcome, progress)
    return outcome


def _full_failure(result: dg.ExecuteInProcessResult) -> str:
    for event in result.all_events:
        if event.is_step_failure and event.step_failure_data:
            return event.step_failure_data.error.to_string()
    return "run failed"


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
