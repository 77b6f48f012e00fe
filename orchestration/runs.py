"""Submitting runs of the code location's jobs through the instance, as the UI does.

A run made here has the same origin as one launched from the UI (the code location that
`workspace.yaml` names, served by its own code server), so it is listed under its job and on
the Overview timeline, and it runs where the instance's run launcher puts it with the job's
executor: a local process by default, a container when the instance says so.
"""

from __future__ import annotations

import errno
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager, nullcontext, suppress
from dataclasses import dataclass
from pathlib import Path

import dagster as dg
from dagster import DagsterEventType

from orchestration.fastrun import launcher, warm
from orchestration.fastrun.dagster_internals import (
    FINISHED_STATUSES,
    PARTITION_SET_SNAP_NAME_SUFFIX,
    BulkActionStatus,
    GrpcServerTarget,
    JobSubsetSelector,
    PartitionBackfill,
    RemotePartitionSetOrigin,
    WorkspaceFileTarget,
    WorkspaceProcessContext,
    WorkspaceRequestContext,
    make_new_backfill_id,
)

WORKSPACE_FILE = Path(__file__).resolve().parents[1] / "workspace.yaml"
PARTITION_TAG = "dagster/partition"
# How often the build looks for finished runs: each look is one indexed query (under a
# millisecond), and a run's end seen later is that much later for the next.
_POLL_S = 0.05
_FINISHED = list(FINISHED_STATUSES)
# How long runs may stand still on a nearly full disk before the build says it is full.
_STALL_S = 20.0
_FULL_BYTES = 1 << 20
# How often a build tells a warm code server it is still in use (it waits minutes).
_HEARTBEAT_S = 20.0


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
        self.warm = ""  # what the build did with the home's warm processes, in words

    @property
    def asset_graph(self):
        """The code location's asset graph, with its code versions (what staleness reads)."""
        return self._repository.asset_graph

    def submit(
        self,
        job_name: str,
        *,
        tags: Mapping[str, str],
        partition: str | None = None,
        assets: Sequence[str] | None = None,
    ) -> str:
        """Create a run of `job_name` (for one partition; of only `assets` and their checks
        when given) and hand it to the run launcher."""
        asset_keys = check_keys = None
        if assets is not None:
            asset_keys = frozenset(dg.AssetKey(a) for a in assets)
            check_keys = frozenset(
                k for k in self.asset_graph.asset_check_keys if k.asset_key in asset_keys
            )
        remote_job = self._location.get_job(
            JobSubsetSelector(
                location_name=self._name,
                repository_name=self._repository.name,
                job_name=job_name,
                op_selection=None,
                asset_selection=asset_keys,
                asset_check_selection=check_keys,
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
            asset_selection=asset_keys,
            asset_check_selection=check_keys,
            asset_graph=self._repository.asset_graph,
        )
        # Launched, not submitted to the coordinator: the build paces its own runs, and a
        # queued coordinator would wait for a daemon that a CLI build does not start.
        self._instance.launch_run(run.run_id, self._context)
        return run.run_id

    def backfill(self, job_name: str, partitions: list[str], *, tags: Mapping[str, str]) -> str:
        """Ask the daemon to run `job_name` once per partition: a backfill, as the UI's
        "Launch backfill" makes one. Its runs wait in the instance's queue."""
        backfill_id = make_new_backfill_id()
        origin = RemotePartitionSetOrigin(
            repository_origin=self._repository.get_remote_origin(),
            partition_set_name=f"{job_name}{PARTITION_SET_SNAP_NAME_SUFFIX}",
        )
        self._instance.add_backfill(
            PartitionBackfill(
                backfill_id=backfill_id,
                status=BulkActionStatus.REQUESTED,
                from_failure=False,
                tags=dict(tags),
                backfill_timestamp=time.time(),
                partition_set_origin=origin,
                partition_names=partitions,
                title=f"{job_name}: {len(partitions)} partitions",
            )
        )
        return backfill_id


@contextmanager
def code_location(
    instance: dg.DagsterInstance,
    workspace_file: Path = WORKSPACE_FILE,
    keep_warm: warm.KeepWarm | None = None,
) -> Iterator[CodeLocation]:
    """The code location, in a code server started for this block, with its run host; with
    `keep_warm`, in the home's warm code server and run host (orchestration/fastrun/warm.py)."""
    servers, said = None, ""
    if not isinstance(instance.run_launcher, launcher.ForkingRunLauncher):
        keep_warm = None  # runs start elsewhere (a container): no run host to keep
    if keep_warm is None:
        launcher.prestart_hosts(instance, workspace_file)
        target = WorkspaceFileTarget(paths=[str(workspace_file)])
    else:
        servers, said = _warm_servers(instance, workspace_file, keep_warm)
        target = GrpcServerTarget(
            host="localhost", port=None, socket=servers.code_socket, location_name=servers.location
        )
    with (
        WorkspaceProcessContext(instance, target) as process_context,
        warm.heartbeats(servers, min(_HEARTBEAT_S, keep_warm.idle_s / 3))
        if servers
        else nullcontext(),
    ):
        context = process_context.create_request_context()
        errors = context.code_location_errors()
        if errors:
            lines = errors[0].message.strip().splitlines()
            raise RuntimeError(f"the code location did not load: {lines[-1] if lines else '?'}")
        location = CodeLocation(context, instance)
        location.warm = said
        yield location


def _warm_servers(
    instance: dg.DagsterInstance, workspace_file: Path, keep_warm: warm.KeepWarm
) -> tuple[warm.WarmServers, str]:
    """The warm code server, started or adopted, with its run host as this process's."""
    (origin, key), *_ = launcher.module_origins(workspace_file)
    ref = dg.serialize_value(instance.get_ref())
    servers, said = warm.servers_for(Path(instance.root_directory), keep_warm, origin, key, ref)
    launcher.adopt_host(key, launcher.WarmRunHost(servers))
    return servers, said


@contextmanager
def daemon(workspace_file: Path = WORKSPACE_FILE) -> Iterator[subprocess.Popen]:
    """`dagster-daemon run` on this instance (DAGSTER_HOME) for as long as the block runs: it
    turns backfills into runs and starts queued runs. Its output goes where ours does."""
    executable = Path(sys.executable).with_name("dagster-daemon")
    process = subprocess.Popen(
        [str(executable), "run", "-w", str(workspace_file)],
        start_new_session=True,  # stopped with everything it started
    )
    try:
        yield process
    finally:
        with suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def backfill_runs(
    instance: dg.DagsterInstance, backfill_id: str, daemon_process: subprocess.Popen
) -> Iterator[FinishedRun]:
    """Each run of a backfill as it finishes, until the backfill has made all of its runs
    and they have all finished."""
    reported: set[str] = set()
    while True:
        backfill = instance.get_backfill(backfill_id)
        runs = instance.get_runs(dg.RunsFilter.for_backfill(backfill_id))
        for run in runs:
            if run.is_finished and run.run_id not in reported:
                reported.add(run.run_id)
                yield finished(instance, run)
        submitted = backfill is not None and backfill.status != BulkActionStatus.REQUESTED
        if submitted and all(run.is_finished for run in runs):
            if backfill.status == BulkActionStatus.FAILED and backfill.error is not None:
                raise RuntimeError(f"backfill {backfill_id} failed: {backfill.error.message}")
            return
        if daemon_process.poll() is not None:
            raise RuntimeError(f"the daemon ended (exit {daemon_process.returncode})")
        time.sleep(_POLL_S)


def wait_for(
    instance: dg.DagsterInstance, run_ids: list[str], *, timeout_s: float | None = None
) -> Iterator[FinishedRun]:
    """Each run as it finishes (success, failure or cancel), in the order they finish."""
    pending = list(run_ids)
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    progress = time.monotonic()
    while pending:
        # Which have finished, in one query that reads no run's body: a run read whole costs
        # a millisecond of deserializing, at every look, for each run still going.
        done = set(instance.get_run_ids(dg.RunsFilter(run_ids=pending, statuses=_FINISHED)))
        for run_id in [r for r in pending if r in done]:
            run = instance.get_run_by_id(run_id)
            if run is not None:
                pending.remove(run_id)
                progress = time.monotonic()
                yield finished(instance, run)
        if pending:
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError(f"runs still going after {timeout_s} s: {pending}")
            # A run whose process dies on a full disk cannot record that it failed: the
            # instance's storage is full too, so it would look started for ever.
            if time.monotonic() - progress > _STALL_S and _out_of_space(instance):
                raise OSError(
                    errno.ENOSPC,
                    f"No space left on device: the instance cannot record runs {pending}",
                )
            time.sleep(_POLL_S)


def _out_of_space(instance: dg.DagsterInstance) -> bool:
    try:
        return shutil.disk_usage(instance.root_directory).free < _FULL_BYTES
    except (OSError, AttributeError):
        return False


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
