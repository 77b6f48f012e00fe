"""A run launched from the UI against the same run submitted by `envfoundry build`.

    python benchmarks/ui_vs_cli.py [--profile tiny] [--rounds 3] [--home DIR]

Builds a home with the CLI, serves it with `envfoundry ui` (webserver and daemon, as
`make ui` does), then, alternating in one process, runs the same work both ways: one
partition of `environment_job` submitted through the instance as the build does
(orchestration.runs), and the same partition launched over the webserver's GraphQL as the
UI's launch button does (queued, then started by the daemon). Prints, per way, the median
wall time from request to finished run and the median run duration the instance recorded,
and the UI/CLI ratios (the goal: at most 1.3).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from orchestration.ui import graphql, served  # noqa: E402

LAUNCH = """
mutation($params: ExecutionParams!) {
  launchPipelineExecution(executionParams: $params) {
    __typename
    ... on LaunchRunSuccess { run { runId } }
    ... on PythonError { message }
  }
}"""


def _finished(instance, run_id: str, timeout_s: float = 600) -> float:
    """Seconds the run took by the instance's clock (start to end)."""
    deadline = time.monotonic() + timeout_s
    while True:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            break
        if time.monotonic() > deadline:
            raise TimeoutError(run_id)
        time.sleep(0.1)
    if run.status.value != "SUCCESS":
        raise RuntimeError(f"run {run_id} ended {run.status.value}")
    record = instance.get_run_record_by_id(run_id)
    return record.end_time - record.start_time


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="tiny")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--home", type=Path, default=None)
    options = parser.parse_args()
    home = (options.home or Path(tempfile.mkdtemp(prefix="ui-vs-cli-"))).resolve()

    started = time.perf_counter()
    command = [sys.executable, "-m", "orchestration.cli", "build", "--profile", options.profile]
    build = subprocess.run(
        [*command, "--home", str(home)], cwd=REPO, env=os.environ, stdout=subprocess.DEVNULL
    )
    if build.returncode != 0:
        return 1
    print(f"build ({options.profile}): {time.perf_counter() - started:.1f} s into {home}")

    # This process submits runs the way the build does: same instance, same settings.
    os.environ.update(ENVFOUNDRY_HOME=str(home), DAGSTER_HOME=str(home / "dagster"))
    import dagster as dg

    from orchestration import cli
    from orchestration.runs import code_location

    instance = dg.DagsterInstance.get()
    (partition,) = sorted(instance.get_dynamic_partitions("environments"))[:1]
    tags = {"envfoundry/benchmark": "ui_vs_cli"}
    cli_wall, cli_run, ui_wall, ui_run = [], [], [], []
    log = (home / "logs" / "benchmark.log").open("w")
    # The runs' and servers' logs go to a file, as a build's do; the figures to the terminal.
    with (
        cli.output_into(log),
        code_location(instance) as location,
        served(home, daemon=True) as url,
    ):
        params = {
            "selector": {
                "repositoryLocationName": "envfoundry",
                "repositoryName": "__repository__",
                "pipelineName": "environment_job",
            },
            "runConfigData": {},
            "executionMetadata": {
                "tags": [{"key": "dagster/partition", "value": partition}]
                + [{"key": k, "value": v} for k, v in tags.items()]
            },
        }
        for round_ in range(options.rounds):
            clock = time.perf_counter()
            run_id = location.submit("environment_job", tags=tags, partition=partition)
            cli_run.append(_finished(instance, run_id))
            cli_wall.append(time.perf_counter() - clock)

            clock = time.perf_counter()
            answer = graphql(url, LAUNCH, {"params": params})["launchPipelineExecution"]
            if answer["__typename"] != "LaunchRunSuccess":
                raise RuntimeError(f"the UI refused the launch: {answer}")
            ui_run.append(_finished(instance, answer["run"]["runId"]))
            ui_wall.append(time.perf_counter() - clock)
            cli.console.print(
                f"round {round_ + 1}: cli {cli_wall[-1]:.1f} s (run {cli_run[-1]:.1f} s), "
                f"ui {ui_wall[-1]:.1f} s (run {ui_run[-1]:.1f} s)"
            )

    print(f"(runs' logs: {log.name})")
    median = statistics.median
    print(f"\npartition {partition}, {options.rounds} rounds, medians:")
    print(
        f"  request → finished: cli {median(cli_wall):.2f} s, ui {median(ui_wall):.2f} s, "
        f"ui/cli {median(ui_wall) / median(cli_wall):.2f}"
    )
    print(
        f"  run duration:       cli {median(cli_run):.2f} s, ui {median(ui_run):.2f} s, "
        f"ui/cli {median(ui_run) / median(cli_run):.2f}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
