"""One build: runs of the code location's three jobs, submitted through the instance.

The runs are the UI's runs: listed under their jobs and on the Overview timeline, executed by
the instance's run launcher with the job's executor, their step logs kept by the instance.
Phases: the catalogue (which environments exist, and what each is made from), one run per
environment with anything stale (several at once; only its stale stages and the stages after
them), then the publish run when what it would publish changed. `full` redoes everything.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

import dagster as dg
from dagster import DagsterEventType
from rich.progress import Progress

from assets._partitions import environment_partitions
from assets._util import BUILD_TAG, PER_ENVIRONMENT_ASSETS, PUBLISH_INPUTS_TAG
from orchestration import runs
from orchestration.fastrun.warm import KeepWarm
from orchestration.instance import parallel_runs
from orchestration.reuse import publish_inputs, publish_reason, stale_stages
from orchestration.runs import CodeLocation, FinishedRun, code_location, wait_for

CLI_TAG = "envfoundry/entrypoint"


@dataclass(frozen=True)
class FailedCheck:
    """An asset check that did not pass in one of the build's runs, as the UI shows it."""

    check: str
    asset: str
    partition: str | None
    severity: str  # ERROR (blocks when the check is blocking) or WARN
    description: str

    def line(self) -> str:
        where = f"{self.asset}[{self.partition}]" if self.partition else self.asset
        return f"{self.check} on {where} ({self.severity}): {self.description}"


@dataclass
class BuildOutcome:
    run_ids: list[str] = field(default_factory=list)
    failed: dict[str, str] = field(default_factory=dict)  # job or partition → error
    publish_run_id: str | None = None  # its dataset: $ENVFOUNDRY_HOME/datasets/<run id>
    log_path: Path | None = None  # this build's log: its runs' step logs, dbt, full errors
    backfill_id: str | None = None  # with --daemon: the backfill of the environment runs
    build_id: str = ""  # the build tag of its runs (the LLM ledger's rows carry it)
    # Incremental builds: environment → why it was (re)made, and the environments reused.
    remade: dict[str, str] = field(default_factory=dict)
    reused: list[str] = field(default_factory=list)
    finished: list[str] = field(default_factory=list)  # environments this build made, so far
    publish: str | None = None  # why the publish run ran (None: what it publishes is current)
    warm: str = ""  # what the build did with the home's warm code server and run host
    # The asset checks that failed in this build's runs, in the order the runs finished.
    failed_checks: list[FailedCheck] = field(default_factory=list)
    # Why the publish kept the current dataset: this build's had fewer tasks than its floor
    # (the stage that lost them, synthesis/export/losses.py); None when it did not say so.
    below_floor: str | None = None

    @property
    def ok(self) -> bool:
        return not self.failed


def mark_abandoned_runs(instance: dg.DagsterInstance) -> list[str]:
    """Runs of earlier CLI builds still marked started: their process is gone (the build lock
    is ours, so no other build of this home is alive, and a build's runs end with it), so they
    failed; the UI should say so."""
    abandoned = instance.get_runs(
        dg.RunsFilter(
            statuses=[dg.DagsterRunStatus.STARTED, dg.DagsterRunStatus.STARTING],
            tags={CLI_TAG: "cli"},
        )
    )
    for run in abandoned:
        instance.report_run_failed(run, message="its build process ended before the run did")
    return [run.run_id for run in abandoned]


def run_build(
    progress: Progress | None = None,
    *,
    build_id: str = "",
    log_file: TextIO | None = None,
    parallel: int | None = None,
    daemon: bool = False,
    full: bool = False,
    keep_warm: KeepWarm | None = None,
    outcome: BuildOutcome | None = None,
) -> BuildOutcome:
    """Run the three phases; the caller has set ENVFOUNDRY_* and DAGSTER_HOME.

    Only what is stale is made again (assets/_staleness.py); `full` makes everything.

    `daemon`: the environment runs come from a backfill the Dagster daemon (started for the
    build) turns into runs and starts from the instance's queue, as one launched from the UI
    would; the UI shows it under Backfills. Otherwise the build launches them itself,
    `parallel` at once.

    `keep_warm`: the code location is served by the home's warm code server and run host,
    adopted or started for the next build (orchestration/fastrun/warm.py).

    `outcome`: filled as the build goes, so that an interrupted build can say what it made.
    """
    log = log_file or sys.stdout
    instance = dg.DagsterInstance.get()
    outcome = outcome if outcome is not None else BuildOutcome(build_id=build_id)
    abandoned = mark_abandoned_runs(instance)
    if abandoned:
        log.write(f"marked {len(abandoned)} abandoned run(s) failed: {abandoned}\n")
    tags = {CLI_TAG: "cli", BUILD_TAG: build_id}
    with code_location(instance, keep_warm=keep_warm) as location:
        outcome.warm = location.warm
        phases = _Phases(location, instance, tags, outcome, log, progress)
        if phases.catalogue():
            env_ids = sorted(instance.get_dynamic_partitions(environment_partitions.name))
            if full:
                plan = {e: list(PER_ENVIRONMENT_ASSETS) for e in env_ids}
                outcome.remade = dict.fromkeys(env_ids, "--full")
            else:
                plan = stale_stages(instance, location.asset_graph, env_ids, outcome)
            if daemon:
                phases.environments_by_backfill(sorted(plan))
            else:
                phases.environments(plan, parallel or parallel_runs())
            inputs = publish_inputs(instance, location.asset_graph, env_ids)
            outcome.publish = "--full" if full else publish_reason(instance, inputs, outcome)
            if outcome.publish is not None:
                phases.publish({PUBLISH_INPUTS_TAG: inputs})
    return outcome


@dataclass
class _Phases:
    location: CodeLocation
    instance: dg.DagsterInstance
    tags: dict[str, str]
    outcome: BuildOutcome
    log: TextIO
    progress: Progress | None

    def _record(self, run: FinishedRun, label: str) -> bool:
        self.outcome.run_ids.append(run.run_id)
        if not run.success:
            self.outcome.failed[label] = run.error
            self.log.write(f"FAILED {label} (run {run.run_id}): {run.details or run.error}\n")
        for check in failed_checks(self.instance, run, self.location.asset_graph):
            self.outcome.failed_checks.append(check)
            self.log.write(f"CHECK FAILED (run {run.run_id}): {check.line()}\n")
        self.log.flush()
        return run.success

    def _one(
        self, job_name: str, label: str, description: str, tags: dict[str, str] | None = None
    ) -> FinishedRun:
        task = self.progress.add_task(description, total=1) if self.progress else None
        run_id = self.location.submit(job_name, tags={**self.tags, **(tags or {})})
        (run,) = wait_for(self.instance, [run_id])
        if self.progress:
            self.progress.advance(task)
        self._record(run, label)
        return run

    def catalogue(self) -> bool:
        return self._one("catalogue_job", "catalogue", "catalogue: topics → env specs").success

    def environments(self, plan: dict[str, list[str]], parallel: int) -> None:
        """One run per environment in `plan`, of the stages it names."""
        env_ids = sorted(plan)
        task = self.progress.add_task("environments", total=len(env_ids)) if self.progress else None
        waiting, running = list(env_ids), {}
        while waiting or running:
            while waiting and len(running) < parallel:
                env_id = waiting.pop(0)
                stages = plan[env_id]
                run_id = self.location.submit(
                    "environment_job",
                    tags=self.tags,
                    partition=env_id,
                    # The whole job when every stage runs: its checks are the job's, as is.
                    assets=None if len(stages) == len(PER_ENVIRONMENT_ASSETS) else stages,
                )
                running[run_id] = env_id
            # The first of the running runs to finish frees a slot.
            run = next(wait_for(self.instance, list(running)))
            env_id = running.pop(run.run_id)
            if self._record(run, f"environment {env_id}"):
                self.outcome.finished.append(env_id)
            if self.progress:
                self.progress.update(task, description=f"environment {env_id:<36}")
                self.progress.advance(task)
        if self.progress:
            self.progress.update(task, description="environments")

    def environments_by_backfill(self, env_ids: list[str]) -> None:
        """The environments with anything stale, each run whole, as a backfill."""
        if not env_ids:
            return
        task = (
            self.progress.add_task("environments (backfill)", total=len(env_ids))
            if self.progress
            else None
        )
        with runs.daemon() as process:
            backfill_id = self.location.backfill("environment_job", env_ids, tags=self.tags)
            self.outcome.backfill_id = backfill_id
            for run in runs.backfill_runs(self.instance, backfill_id, process):
                if self._record(run, f"environment {run.partition}"):
                    self.outcome.finished.append(run.partition)
                if self.progress:
                    self.progress.advance(task)

    def publish(self, tags: dict[str, str]) -> None:
        run = self._one(
            "publish_job", "publish", "publish: warehouse → shards → dbt → report", tags
        )
        self.outcome.publish_run_id = run.run_id
        if not run.success:
            self.outcome.below_floor = floor_refusal(self.instance, run.run_id)


def failed_checks(
    instance: dg.DagsterInstance, run: FinishedRun, asset_graph: object = None
) -> list[FailedCheck]:
    """The asset checks that did not pass in `run`, read back from the instance's event log
    (each evaluation a run recorded: the self-tests on `checks`, the Great Expectations gates,
    the dbt tests). The description is the evaluation's own, else its summary, else the
    check's definition (what it asserts)."""
    found = []
    for record in instance.all_logs(run.run_id, of_type=DagsterEventType.ASSET_CHECK_EVALUATION):
        event = record.dagster_event
        evaluation = event.event_specific_data if event is not None else None
        if evaluation is None or evaluation.passed:
            continue
        summary = (evaluation.metadata or {}).get("summary")
        description = (
            evaluation.description
            or (str(summary.value) if summary is not None else "")
            or _check_description(asset_graph, evaluation.asset_check_key)
        )
        found.append(
            FailedCheck(
                check=evaluation.check_name,
                asset=evaluation.asset_key.to_user_string(),
                partition=getattr(evaluation, "partition", None) or run.partition,
                severity=evaluation.severity.value,
                description=" ".join(description.split()),
            )
        )
    return found


def _check_description(asset_graph: object, key: dg.AssetCheckKey) -> str:
    """What the check asserts, from its definition in the code location ("" if unknown)."""
    nodes = getattr(asset_graph, "remote_asset_check_nodes_by_key", None) or {}
    node = nodes.get(key)
    return (getattr(node.asset_check, "description", None) or "") if node is not None else ""


def floor_refusal(instance: dg.DagsterInstance, run_id: str) -> str | None:
    """What the publish said when it kept the current dataset because this build's had fewer
    tasks than its floor (assets/reports.py `published_dataset`), or None."""
    for record in instance.all_logs(run_id, of_type=DagsterEventType.STEP_FAILURE):
        event = record.dagster_event
        data = event.step_failure_data if event is not None else None
        user = data.user_failure_data if data is not None else None
        if user is not None and "publish_floor" in (user.metadata or {}):
            return user.description
    return None
