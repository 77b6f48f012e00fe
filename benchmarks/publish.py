"""Where the publish run's time goes: task screening, warehouse tables, training shards.

    python benchmarks/publish.py --home /work/full-home --out /tmp/pub-out [--envs N]
                                 [--profile DIR]

Re-runs the engine work of the three publish assets on a built home's artifacts (read only),
writing the warehouse and the shards under --out, and prints each stage's wall and CPU
seconds (CPU is what counts on a shared machine). Loading is timed apart, as the IO manager
would do it (the trajectories the warehouse reads itself, inside its stage). Every
environment of the home is taken as made by its build; `--envs N` takes the first N only.
Compare the warehouse and shards under --out with the home's published ones to check that
a change kept every byte. It needs a built home, so `make bench` does not run it.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import resource
import shutil
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from assets.warehouse import GATED_TABLES, LAZY_INPUTS, collect_tables  # noqa: E402
from quality.expectations import validate  # noqa: E402
from synthesis import codec  # noqa: E402
from synthesis.environments.splits import split_problems  # noqa: E402
from synthesis.export import warehouse  # noqa: E402
from synthesis.export.shards import verify_manifest, write_shards_from_warehouse  # noqa: E402
from synthesis.models import Environment, Scenario  # noqa: E402
from synthesis.tasks.contamination import installed_benchmarks  # noqa: E402
from synthesis.tasks.screening import screen_tasks  # noqa: E402

PER_ENV = [
    "environments",
    "initial_states",
    "env_models",
    "env_audit",
    "env_judgement",
    "checks",
    "trajectories",
]


def load(artifacts: Path, name: str, env_ids: list[str]) -> dict | list:
    """What the IO manager gives an asset: one file, or every partition by key."""
    folder = artifacts / name
    if (folder / "_all.json").is_file():
        return codec.read_json(folder / "_all.json")
    files = {env_id: folder / f"{env_id}.json" for env_id in env_ids}
    files = {env_id: p for env_id, p in files.items() if p.is_file()}
    if name in LAZY_INPUTS:  # the asset reads these itself, one file at a time
        return files
    return {env_id: codec.read_json(p) for env_id, p in files.items()}


class Clock:
    def __init__(self, profile_dir: Path | None) -> None:
        self.rows: list[tuple[str, float, float]] = []
        self.profile_dir = profile_dir

    def run(self, label: str, fn, *args, **kwargs):
        profiler = cProfile.Profile() if self.profile_dir else None
        wall, cpu = time.perf_counter(), time.process_time()
        if profiler:
            profiler.enable()
        result = fn(*args, **kwargs)
        if profiler:
            profiler.disable()
            self.profile_dir.mkdir(parents=True, exist_ok=True)
            profiler.dump_stats(self.profile_dir / f"{label}.prof")
        self.rows.append((label, time.perf_counter() - wall, time.process_time() - cpu))
        print(
            f"{label:<28} wall {self.rows[-1][1]:7.1f}s  cpu {self.rows[-1][2]:7.1f}s", flush=True
        )
        return result


def task_screening(environments, env_audit, checks, holdout) -> dict:
    envs = []
    for env_id in sorted(environments):
        env = Environment.model_validate(environments[env_id])
        audit = env_audit.get(env_id)
        if audit is not None and not audit["passed"]:
            env = env.model_copy(update={"status": "quarantined"})
        envs.append(env)
    problems = split_problems(envs, holdout=holdout)
    if problems:  # expected when only some environments are taken (--envs)
        print("split problems:", len(problems))
    scenarios = [
        Scenario.model_validate(s)
        for env_id in sorted(environments)
        if env_id in checks
        for s in codec.read_json(checks[env_id])["scenarios"]
    ]
    quarantine = screen_tasks(scenarios, installed_benchmarks())
    return {"quarantine": [q.model_dump(mode="json") for q in quarantine]}


def warehouse_tables(inputs: dict, screening: dict, path: Path) -> dict:
    tables = collect_tables(
        inputs["topics"],
        inputs["env_specs"],
        inputs["environments"],
        inputs["initial_states"],
        inputs["env_audit"],
        inputs["checks"],
        inputs["trajectories"],
        env_sources=inputs["env_sources"],
        env_models=inputs["env_models"],
        task_screening=screening,
        env_judgement=inputs["env_judgement"],
    )
    related = {"scenarios": {"check_selftests": tables["check_selftests"]}}
    gates = {name: validate(name, tables[name], related=related.get(name)) for name in GATED_TABLES}
    tables["quality_gates"] = warehouse.quality_gate_rows(gates.values())
    failed = [name for name, gate in gates.items() if not gate.success]
    if failed:
        raise SystemExit(f"gates failed: {failed}")
    return warehouse.write_tables(path, tables, mode=warehouse.build_write_modes(tables))


def training_shards(out: Path, seed, inputs_sha256) -> dict:
    shards_dir = out / "shards"
    shutil.rmtree(shards_dir, ignore_errors=True)
    manifest = write_shards_from_warehouse(
        out / "warehouse.duckdb", shards_dir, seed=seed, inputs_sha256=inputs_sha256
    )
    problems = verify_manifest(shards_dir / "manifest.json", seed=seed, inputs_sha256=inputs_sha256)
    if problems:
        raise SystemExit("; ".join(problems))
    rows = warehouse.shard_rows(manifest)
    gate = validate("shards", rows)
    if not gate.success:
        raise SystemExit(gate.summary())
    warehouse.write_table(out / "warehouse.duckdb", "shards", rows)
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="a built ENVFOUNDRY_HOME")
    parser.add_argument("--out", type=Path, required=True, help="where to write (emptied)")
    parser.add_argument("--profile", type=Path, help="write one cProfile file per stage here")
    parser.add_argument("--envs", type=int, help="only the first N environments (by id)")
    args = parser.parse_args(argv)
    artifacts = args.home / "artifacts"
    published = json.loads((args.home / "shards" / "manifest.json").read_text())
    settings = json.loads((args.home / "build-settings.json").read_text())
    shutil.rmtree(args.out, ignore_errors=True)
    args.out.mkdir(parents=True)
    clock = Clock(args.profile)

    names = ["topics", "env_specs", "env_sources", *PER_ENV]
    env_ids = sorted(p.stem for p in (artifacts / "environments").glob("*.json"))[: args.envs]
    inputs = {name: clock.run(f"load {name}", load, artifacts, name, env_ids) for name in names}
    screening = clock.run(
        "task_screening",
        task_screening,
        inputs["environments"],
        inputs["env_audit"],
        inputs["checks"],
        settings.get("holdout_archetypes", []),
    )
    clock.run(
        "warehouse_tables", warehouse_tables, inputs, screening, args.out / "warehouse.duckdb"
    )
    clock.run(
        "training_shards",
        training_shards,
        args.out,
        published["seed"],
        published.get("inputs_sha256"),
    )
    wall, cpu = (sum(row[i] for row in clock.rows) for i in (1, 2))
    print(f"{'total':<28} wall {wall:7.1f}s  cpu {cpu:7.1f}s")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6
    print(f"peak RSS {peak:.1f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
