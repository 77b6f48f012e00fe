"""CPU of the per-environment stages (host and sandboxes), and whether their bytes are the ones
a build wrote.

    python benchmarks/stage_cpu.py --home /tmp/full2-home --profile full ENV_ID [ENV_ID ...]
        [--stages scenarios checks trajectories] [--pool run|none]

For each environment of a built home, each stage's asset is invoked directly (a real Dagster
context, no run) on the inputs that home stored, exactly as its run would call it; it prints
the stage's CPU seconds in this process, its sandboxes' (the rest of the machine's busy time:
run it on a quiet machine) and its wall seconds, and compares the JSON it would write with the
home's artifact byte for byte. Speed work on the engine runs this before and after on the same
environments: the CPU figures say what changed, `same` says that no output byte did.

`--pool run` (the default) gives an environment's stages one sandbox pool, as its run does
(assets._resources.sandbox_pool); `--pool none` gives them none, so each stage starts
sandboxes of its own, as they did before runs shared one.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sys
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import dagster as dg  # noqa: E402

from assets import checks, environments, scenarios, trajectories  # noqa: E402
from assets._resources import SANDBOX_WORKERS, BuildSettings  # noqa: E402
from sandboxes import WorkerPool  # noqa: E402
from synthesis import codec  # noqa: E402

# Each stage's asset and the upstream artifacts it reads.
STAGES = {
    "initial_states": (environments.initial_states, ["environments", "env_sources"]),
    "env_audit": (environments.env_audit, ["environments", "initial_states", "env_models"]),
    "scenarios": (
        scenarios.scenarios,
        ["environments", "initial_states", "env_audit", "env_models", "env_judgement"],
    ),
    "checks": (checks.checks, ["environments", "scenarios", "env_models"]),
    "trajectories": (trajectories.trajectories, ["environments", "checks", "env_models"]),
}


def stored(artifacts: Path, stage: str, env_id: str) -> Path:
    path = artifacts / stage / f"{env_id}.json"
    return path if path.exists() else artifacts / stage / "_all.json"  # unpartitioned


def run_stage(
    instance, settings, artifacts: Path, stage: str, env_id: str, pool: WorkerPool | None
) -> tuple:
    asset, inputs = STAGES[stage]
    kwargs = {name: codec.read_json(stored(artifacts, name, env_id)) for name in inputs}
    with dg.build_asset_context(partition_key=env_id, instance=instance) as context:
        wall, cpu, machine = time.perf_counter(), time.process_time(), machine_cpu()
        value = asset(context, settings=settings, sandbox_pool=pool, **kwargs).value
        data = codec.dumps(value) + b"\n"  # what the IO manager writes
        cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
        others = max(0.0, machine_cpu() - machine - cpu)
    return cpu, others, wall, data


def machine_cpu() -> float:
    """CPU seconds the whole machine has been busy (/proc/stat). Less this process's own, it
    is what the stage's sandboxes used, on an otherwise quiet machine: a sandbox's CPU cannot
    be asked of the process (its workers are not this process's children to reap)."""
    with open("/proc/stat") as stat:
        fields = [int(f) for f in stat.readline().split()[1:]]
    idle, iowait = fields[3], fields[4]
    return (sum(fields[:8]) - idle - iowait) / os.sysconf("SC_CLK_TCK")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("envs", nargs="+")
    parser.add_argument("--home", required=True, help="a built home (read only)")
    parser.add_argument("--profile", default="full")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--stages", nargs="+", default=["scenarios", "checks", "trajectories"])
    parser.add_argument("--pool", choices=["run", "none"], default="run")
    args = parser.parse_args()
    artifacts = Path(args.home) / "artifacts"
    # The stages read their inputs from the built home and write nothing: a scratch home.
    scratch = tempfile.mkdtemp(prefix="envfoundry-stage-cpu-")
    settings = BuildSettings(profile=args.profile, seed=args.seed, home=scratch)
    totals = dict.fromkeys(args.stages, 0.0)
    sandbox_totals = dict.fromkeys(args.stages, 0.0)
    different = []
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions("environments", args.envs)
        for env_id in args.envs:
            # One pool per environment, as its run has; closed however its stages end.
            pool = (
                WorkerPool(SANDBOX_WORKERS, settings.sandbox_backend)
                if args.pool == "run"
                else None
            )
            with pool if pool is not None else nullcontext():
                for stage in args.stages:
                    cpu, others, wall, data = run_stage(
                        instance, settings, artifacts, stage, env_id, pool
                    )
                    same = data == stored(artifacts, stage, env_id).read_bytes()
                    totals[stage] += cpu
                    sandbox_totals[stage] += others
                    if not same:
                        different.append(f"{stage}/{env_id}")
                    sha = hashlib.sha256(data).hexdigest()[:12]
                    print(
                        f"{env_id:40} {stage:15} cpu {cpu:6.2f} s  sandboxes {others:6.2f} s  "
                        f"wall {wall:6.2f} s  "
                        f"{len(data):>10} bytes  sha256 {sha}  {'same' if same else 'DIFFERENT'}"
                    )
    for label, sums in (("cpu seconds", totals), ("sandbox cpu seconds", sandbox_totals)):
        each = "  ".join(f"{stage} {seconds:.2f}" for stage, seconds in sums.items())
        print(f"{label}: {each}  all {sum(sums.values()):.2f}")
    print("every artifact byte-identical" if not different else f"DIFFERENT: {different}")
    sys.exit(1 if different else 0)


if __name__ == "__main__":
    main()
