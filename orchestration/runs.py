"""Submitting runs of the code location's jobs through the instance, as the UI does.

A run made here has the same origin as one launched from the UI (the code location that
`workspace.yaml` names, served by its own code server), so it is listed under its job and on
the Overview timeline, and it runs where the instance's run launcher puts it with the job's
executor: a local process by default, a container when the instance says so.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster._core.definitions.selector import JobSubsetSelector
from dagster._core.events import DagsterEventType
from dagster._core.workspace.context import WorkspaceProcessContext, WorkspaceRequestContext
from dagster._core.workspace.load_target import WorkspaceFileTarget

WORKSPACE_FILE = Path(__file__).resolve().parents[1] / "workspace.yaml"
PARTITION_TAG = "dagster/partition"
_POLL_S = 0.2


@dataclass(frozen=True)
class FinishedRun:
    run_id: str
    job_name: str
    partition: str | None
    success: bool
    error: str  # the innermost cause of the failure, one line ("" on success)
    details: str  # the whole failure, for the build log


class CodeLocation:
    """The code location of `workspace.yaml`, loaded in its own code server for one build."""

    def __init__(self, context: WorkspaceRequestContext, instance: dg.DagsterInstance):
        self._context = context
        self._instance = instance
        (self._name,) = context.code_location_names
        location = context.get_code_location(self._name)
        (self._repository,) = location.get_repositories().values()
        self._location = location

    def submit(
        self, job_name: str, *, tags: Mapping[str, str], partition: str | None = None
    ) -> str:
        """Create a run of `job_name` (for one partition) and hand it to the run launcher."""
        remote_job = self._location.get_job(
            JobSubsetSelector(
                location_name=self._name,
                repository_name=self._repository.name,
                job_name=job_name,
                op_selection=None,
            )
        )
        run_tags = {**remote_job.tags, **tags}
        if partition is not None:
            run_tags[PARTITION_TAG] = partition
        plan = self._location.get_execution_plan(
            remote_job, {}, step_keys_to_execute=None, known_state=None, instance=self._instance
        )
        run = self._instance.create_run(
            job_name=job_name,
            run_id=None,
            run_config={},
            resolved_op_selection=None,
            step_keys_to_execute=None,
            op_selection=None,
            status=None,
            root_run_id=None,
            parent_run_id=None,
            tags=run_tags,
            job_snapshot=remote_job.job_snapshot,
            execution_plan_snapshot=plan.execution_plan_snapshot,
            parent_job_snapshot=remote_job.parent_job_snapshot,
            remote_job_origin=remote_job.get_remote_origin(),
            job_code_origin=remote_job.get_python_origin(),
            asset_selection=None,
            asset_check_selection=None,
            asset_graph=self._repository.asset_graph,
        )
        # Launched, not submitted to the coordinator: the build paces its own runs, and a
        # queued coordinator would wait for a daemon that a CLI build does not start.
        self._instance.launch_run(run.run_id, self._context)
        return run.run_id


@contextmanager
def code_location(
    instance: dg.DagsterInstance, workspace_file: Path = WORKSPACE_FILE
) -> Iterator[CodeLocation]:
    with WorkspaceProcessContext(
        instance, WorkspaceFileTarget(paths=[str(workspace_file)])
    ) as process_context:
        context = process_context.create_request_context()
        errors = context.code_location_errors()
        if errors:
            lines = errors[0].message.strip().splitlines()
            raise RuntimeError(f"the code location did not load: {lines[-1] if lines else '?'}")
        yield CodeLocation(context, instance)


def wait_for(
    instance: dg.DagsterInstance, run_ids: list[str], *, timeout_s: float | None = None
) -> Iterator[FinishedRun]:
    """Each run as it finishes (success, failure or cancel), in the order they finish."""
    pending = list(run_ids)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while pending:
        for run_id in list(pending):
            run = instance.get_run_by_id(run_id)
            if run is not None and run.is_finished:
                pending.remove(run_id)
                yield finished(instance, run)
        if pending:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"runs still going after {timeout_s} s: {pending}")
            time.sleep(_POLL_S)


def finished(instance: dg.DagsterInstance, run: dg.DagsterRun) -> FinishedRun:
    success = run.status == dg.DagsterRunStatus.SUCCESS
    error = details = ""
    if not success:
        error, details = failure_of(instance, run.run_id)
    return FinishedRun(
        run_id=run.run_id,
        job_name=run.job_name,
        partition=run.tags.get(PARTITION_TAG),
        success=success,
        error=error,
        details=details,
    )


def failure_of(instance: dg.DagsterInstance, run_id: str) -> tuple[str, str]:
    """(one line, whole text) for a failed run: the failed step and its innermost cause (the
    framework's wrapper says little), or why the run itself failed (its process died)."""
    for record in instance.all_logs(run_id, of_type=DagsterEventType.STEP_FAILURE):
        event = record.dagster_event
        data = event.step_failure_data if event is not None else None
        if data is None or data.error is None:
            continue
        error = data.error
        while error.cause is not None:
            error = error.cause
        lines = error.message.strip().splitlines()
        return f"{event.step_key}: {lines[-1] if lines else 'failed'}", data.error.to_string()
    # No step failed: the run's process ended early (killed, out of memory) or never started.
    messages = [
        record.message
        for record in instance.all_logs(
            run_id, of_type={DagsterEventType.ENGINE_EVENT, DagsterEventType.RUN_FAILURE}
        )
        if record.message
    ]
    why = next((m for m in reversed(messages) if "exit" in m or "fail" in m.lower()), "")
    return (why.strip().splitlines()[0] if why else "run failed"), "\n".join(messages)
