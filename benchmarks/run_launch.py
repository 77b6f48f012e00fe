"""Runs started by the forking launcher against runs started by Dagster's default launcher.

    python benchmarks/run_launch.py [--runs 12] [--profile tiny] [--home DIR]

Builds a home with the CLI (or takes a built one with --home), then, alternating in one
process, submits `environment_job` runs of its environments one at a time as the build does
(orchestration.runs), through two instances on the same storage: one configured as
`envfoundry build` configures it (orchestration.fastrun.launcher: a child forked from a run
host that has the code location loaded), one with Dagster's default launcher (the code server
spawns an interpreter that imports Dagster and the code location again). Prints, per launcher, the
seconds from launch (RUN_STARTING) and from submit to the run's start, and to its end
(medians and totals; the forking launcher's first run includes starting its run host), and
the ratios default/forking.
Run it on a quiet machine: the figures are wall time.
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

_DEFAULT_CONFIG = "dagster-default-launcher.yaml"


def _build(home: Path, profile: str) -> None:
    started = time.perf_counter()
    command = [sys.executable, "-m", "orchestration.cli", "build", "--profile", profile]
    build = subprocess.run(
        [*command, "--home", str(home)], cwd=REPO, env=os.environ, stdout=subprocess.DEVNULL
    )
    if build.returncode != 0:
        raise SystemExit(f"the build of {home} failed")
    print(f"build ({profile}): {time.perf_counter() - started:.1f} s into {home}")


def _default_launcher_config(dagster_home: Path) -> str:
    """The home's instance config without our run launcher: Dagster's default."""
    from orchestration import instance

    text = instance._QUEUE.format(runs=instance.parallel_runs())
    (dagster_home / _DEFAULT_CONFIG).write_text(text)
    return _DEFAULT_CONFIG


def _one_run(instance, location, env_id: str) -> tuple[float, float, float]:
    """Seconds from the run's launch to its start (the launcher's part: submitting first asks
    the code server for the plan and records the run, alike for both), from submit to its
    start, and to its end."""
    import dagster as dg

    from orchestration.runs import wait_for

    submitted = time.time()
    run_id = location.submit(
        "environment_job", tags={"envfoundry/benchmark": "run_launch"}, partition=env_id
    )
    (run,) = wait_for(instance, [run_id], timeout_s=900)
    if not run.success:
        raise RuntimeError(f"run {run_id} of {env_id} failed: {run.error}")
    record = instance.get_run_record_by_id(run_id)
    (launched,) = instance.all_logs(run_id, of_type=dg.DagsterEventType.RUN_STARTING)
    start = record.start_time
    return start - launched.timestamp, start - submitted, record.end_time - submitted


def _summary(name: str, times: list[tuple[float, float, float]]) -> tuple[float, float, float]:
    launches, starts, ends = ([t[i] for t in times] for i in range(3))
    print(
        f"{name:<8} runs {len(times):>3}  launch→start median {statistics.median(launches):5.2f} s"
        f" (first {launches[0]:5.2f} s)  submit→start median {statistics.median(starts):5.2f} s"
        f"  submit→end median {statistics.median(ends):6.2f} s"
        f"  total {sum(ends):7.1f} s ({sum(ends) / len(ends):.2f} s per run)"
    )
    return statistics.median(launches), statistics.median(starts), sum(ends)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per launcher")
    parser.add_argument("--profile", default="tiny")
    parser.add_argument("--home", type=Path, default=None, help="a built home to reuse")
    options = parser.parse_args()
    home = options.home
    if home is None:
        home = Path(tempfile.mkdtemp(prefix="run-launch-")).resolve()
        _build(home, options.profile)
    home = home.resolve()

    os.environ.update(ENVFOUNDRY_HOME=str(home), DAGSTER_HOME=str(home / "dagster"))
    import dagster as dg

    from assets._partitions import environment_partitions
    from orchestration import instance
    from orchestration.fastrun import launcher
    from orchestration.runs import code_location

    dagster_home = instance.prepare(home)
    forking = dg.DagsterInstance.from_config(str(dagster_home))
    default = dg.DagsterInstance.from_config(
        str(dagster_home), config_filename=_default_launcher_config(dagster_home)
    )
    if not isinstance(forking.run_launcher, launcher.ForkingRunLauncher):
        raise SystemExit(f"{dagster_home}/dagster.yaml does not configure the forking launcher")
    env_ids = sorted(forking.get_dynamic_partitions(environment_partitions.name))
    times: dict[str, list[tuple[float, float, float]]] = {"default": [], "forking": []}
    with code_location(forking) as on_forking, code_location(default) as on_default:
        for i in range(options.runs):
            env_id = env_ids[i % len(env_ids)]
            # Alternating, so both see the same machine load.
            times["default"].append(_one_run(default, on_default, env_id))
            times["forking"].append(_one_run(forking, on_forking, env_id))
    launcher.stop_run_hosts()
    by_default = _summary("default", times["default"])
    by_forking = _summary("forking", times["forking"])
    launch, start, total = (d / f for d, f in zip(by_default, by_forking, strict=True))
    print(
        f"ratio default/forking: launch→start {launch:.1f}x, submit→start {start:.1f}x, "
        f"total {total:.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
