"""A whole build of a profile through Dagster against the bare engine on the same profile,
side by side in one run: wall time, published tasks per minute, and the Dagster/engine ratio.

    python benchmarks/build.py [--profile full] [--seed 0] [--parallel 2] [--catalogue F]
    python benchmarks/build.py --profile full --beside REV [--keep DIR]

Dagster: `envfoundry build --full` as a user runs it, into a fresh home (its code server, one
run per environment, `--parallel` at once, the publish run). Its phases are read from the
runs' records.

Bare engine: the same stage functions, called in this process tree without runs, event log
or IO manager (the assets invoked directly, their outputs written as the IO manager writes
them): the catalogue, then every environment's stages and self-test proofs in `--parallel`
processes. The publish phase is one run either way (no per-environment overhead); its engine
time is taken as the sum of its steps' own durations in the Dagster run.

`--catalogue` builds the topics of another topics.json (a slice of the shipped one measures the
ratio in minutes; the goals are about the whole profile).

Issue 9's goals: the full profile (150+ environments, 20K+ tasks) in at most 15 minutes;
Dagster at most 1.25x the bare engine.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import dagster as dg  # noqa: E402

from assets._resources import BuildSettings  # noqa: E402
from benchmarks.machine import yardstick  # noqa: E402
from orchestration.fastrun.runhost import tune_gc  # noqa: E402
from synthesis import codec  # noqa: E402

GOAL_SECONDS = 15 * 60
GOAL_RATIO = 1.25


def dagster_build(args, home: Path, repo: Path = REPO) -> tuple[float, dict[str, float], int]:
    """`envfoundry build --full` of the checkout at `repo` (another revision's worktree runs
    its own code: `python -m` puts the working directory first on the path)."""
    command = [
        sys.executable, "-m", "orchestration.cli", "build", "--profile", args.profile,
        "--seed", str(args.seed), "--home", str(home), "--full", "--parallel", str(args.parallel),
    ] + (["--catalogue", args.catalogue] if args.catalogue else [])  # fmt: skip
    # No code server or run host left warm: a first build starts its own either way, and
    # left behind they would hold a GB through the next build of the run.
    environment = {**os.environ, "DO_NOT_TRACK": "1", "ENVFOUNDRY_WARM_S": "0"}
    environment.pop("DAGSTER_HOME", None)
    started = time.perf_counter()
    result = subprocess.run(command, cwd=repo, env=environment, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if result.returncode != 0:
        raise SystemExit(f"the Dagster build failed:\n{result.stdout[-3000:]}")
    return wall, phases(home), published_tasks(home)


def phases(home: Path) -> dict[str, float]:
    """Seconds per phase from the runs' records, and the publish run's step time."""
    from orchestration.fastrun.dagster_internals import InstanceRef

    instance = dg.DagsterInstance.from_ref(InstanceRef.from_dir(str(home / "dagster")))
    spans: dict[str, list[float]] = {}
    publish_steps = 0.0
    for run in instance.get_runs():
        stats = instance.get_run_stats(run.run_id)
        if stats.start_time is None or stats.end_time is None:
            continue
        span = spans.setdefault(run.job_name, [stats.start_time, stats.end_time])
        span[0], span[1] = min(span[0], stats.start_time), max(span[1], stats.end_time)
        if run.job_name == "publish_job":
            for step in instance.get_run_step_stats(run.run_id):
                if step.start_time and step.end_time:
                    publish_steps += step.end_time - step.start_time
    out = {job: end - start for job, (start, end) in spans.items()}
    out["publish_steps"] = publish_steps
    return out


def published_tasks(home: Path) -> int:
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        return con.execute("select count(*) from scenarios where status = 'published'").fetchone()[
            0
        ]


# ---------------------------------------------------------------------------- bare engine


def _value(result):
    return result.value if isinstance(result, dg.Output) else result


def _settings(args, home: Path) -> BuildSettings:
    return BuildSettings(
        profile=args.profile, seed=args.seed, home=str(home), catalogue=args.catalogue or ""
    )


def engine_catalogue(settings: BuildSettings, instance: dg.DagsterInstance) -> dict:
    from assets.env_specs import env_sources, env_specs
    from assets.llm_environments import llm_env_code, llm_env_specs
    from assets.topics import mined_topics, topics

    out: dict = {}

    def run(asset, **inputs):
        context = dg.build_asset_context(instance=instance)
        out[asset.key.to_user_string()] = value = _value(
            asset(context=context, settings=settings, **inputs)
        )
        _write(settings, asset.key.to_user_string(), "_all", value)
        return value

    mined = run(mined_topics)
    chosen = run(topics, mined_topics=mined)
    specs = run(env_specs, topics=chosen)
    authored = run(llm_env_specs, topics=chosen, env_specs=specs)
    written = run(llm_env_code, topics=chosen)
    run(env_sources, topics=chosen, env_specs=specs, llm_env_specs=authored, llm_env_code=written)
    return out


def _write(settings: BuildSettings, asset: str, partition: str, value) -> None:
    codec.write_json(
        settings.home_path / "artifacts" / asset / f"{partition}.json", value, pretty=False
    )


def engine_environment(job: tuple[str, dict, dict]) -> int:
    """Every stage of one environment, as `environment_job` runs them; the published count."""
    from assets._resources import SANDBOX_WORKERS
    from assets.checks import checks as checks_asset
    from assets.environments import env_audit, env_models, environments, initial_states
    from assets.judging import env_judgement
    from assets.scenarios import scenarios as scenarios_asset
    from assets.trajectories import trajectories
    from quality import proofs
    from sandboxes import WorkerPool

    env_id, settings_json, catalogue = job
    settings = BuildSettings(**settings_json)
    # Closed when done: a storage left to the collector is closed by whatever thread collects.
    # One sandbox pool for the environment's stages, as its run has (the sandbox_pool resource).
    with (
        dg.DagsterInstance.ephemeral() as instance,
        WorkerPool(SANDBOX_WORKERS, backend=settings.sandbox_backend) as pool,
    ):

        def run(asset, **inputs):
            context = dg.build_asset_context(partition_key=env_id, instance=instance)
            if "sandbox_pool" in asset.required_resource_keys:
                inputs["sandbox_pool"] = pool
            value = _value(asset(context=context, settings=settings, **inputs))
            _write(settings, asset.key.to_user_string(), env_id, value)
            return value

        env = run(
            environments,
            env_specs=catalogue["env_specs"],
            env_sources=catalogue["env_sources"],
            llm_env_specs=catalogue["llm_env_specs"],
        )
        states = run(initial_states, environments=env, env_sources=catalogue["env_sources"])
        model = run(env_models, environments=env, initial_states=states)
        audit = run(env_audit, environments=env, initial_states=states, env_models=model)
        judged = run(
            env_judgement,
            environments=env,
            initial_states=states,
            env_models=model,
            env_audit=audit,
        )
        planned = run(
            scenarios_asset,
            environments=env,
            initial_states=states,
            env_audit=audit,
            env_models=model,
            env_judgement=judged,
        )
        proven = run(checks_asset, environments=env, scenarios=planned, env_models=model)
        list(
            proofs.evaluate_proofs(
                proven, min_kill_rate=settings.profile_obj.min_mutation_kill_rate
            )
        )
        run(trajectories, environments=env, checks=proven, env_models=model)
        return sum(s.get("status") == "published" for s in proven.get("scenarios", []))


def engine_build(args, home: Path) -> tuple[float, float, float, int]:
    """(catalogue seconds, environments seconds, wall, published tasks)."""
    settings = _settings(args, home)
    started = time.perf_counter()
    with dg.DagsterInstance.ephemeral() as instance:
        catalogue = engine_catalogue(settings, instance)
        env_ids = sorted(instance.get_dynamic_partitions("environments"))
    catalogue_s = time.perf_counter() - started
    jobs = [(e, settings.model_dump(), catalogue) for e in env_ids]
    # The runs' collector policy (orchestration/fastrun/runhost.py), so both sides pay the same.
    with ProcessPoolExecutor(max_workers=args.parallel, initializer=tune_gc) as pool:
        published = sum(pool.map(engine_environment, jobs, chunksize=1))
    wall = time.perf_counter() - started
    return catalogue_s, wall - catalogue_s, wall, published


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="full")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--parallel", type=int, default=os.cpu_count() or 2)
    parser.add_argument("--catalogue", help="a topics.json (default: the shipped catalogue)")
    parser.add_argument(
        "--beside",
        metavar="REV",
        help="build git revision REV too (e.g. HEAD~1: what a change costs), the same way in "
        "the same run, and print the two builds side by side instead of the engine",
    )
    parser.add_argument(
        "--keep",
        metavar="DIR",
        type=Path,
        help="with --beside: leave the two homes in DIR/then and DIR/now (to audit them after)",
    )
    args = parser.parse_args()
    if args.beside:
        return beside(args)
    machine_before = yardstick()  # and after: the machine may change speed meanwhile
    with tempfile.TemporaryDirectory(prefix="envfoundry-build-bench-") as tmp:
        catalogue_s, envs_s, engine_wall, engine_tasks = engine_build(args, Path(tmp) / "engine")
        wall, phase, tasks = dagster_build(args, Path(tmp) / "dagster")
    engine_total = engine_wall + phase.get("publish_steps", 0.0)
    catalogue = f", catalogue {args.catalogue}" if args.catalogue else ""
    print(f"profile {args.profile}, seed {args.seed}, {args.parallel} at once{catalogue}")
    print(f"{machine_before}, before the builds\n{yardstick()}, after them")
    print(f"{'':<28}{'engine':>10}{'dagster':>10}{'ratio':>8}")
    print(f"{'catalogue (s)':<28}{catalogue_s:10.1f}{phase.get('catalogue_job', 0):10.1f}")
    rows = [
        ("environments (s)", envs_s, phase.get("environment_job", 0.0)),
        ("publish (s)", phase.get("publish_steps", 0.0), phase.get("publish_job", 0.0)),
        ("whole build, wall (s)", engine_total, wall),
    ]
    for label, engine, dagster in rows:
        print(f"{label:<28}{engine:10.1f}{dagster:10.1f}{dagster / max(engine, 1e-9):7.2f}x")
    print(f"{'published tasks':<28}{engine_tasks:10d}{tasks:10d}")
    print(
        f"{'tasks per minute':<28}{engine_tasks / engine_total * 60:10.0f}{tasks / wall * 60:10.0f}"
    )
    goals = (wall <= GOAL_SECONDS, wall / engine_total <= GOAL_RATIO)
    print(
        f"goals (whole build <= {GOAL_SECONDS // 60} min, Dagster <= {GOAL_RATIO}x the "
        f"engine): {'met' if all(goals) else 'not met'} {goals}"
    )


def beside(args) -> None:
    """This checkout's build and revision `args.beside`'s, one after the other on one machine,
    the revision first (from a detached worktree, with this interpreter)."""
    revision = subprocess.run(
        ["git", "rev-parse", "--short", args.beside], cwd=REPO, capture_output=True, text=True
    ).stdout.strip()
    if not revision:
        raise SystemExit(f"--beside {args.beside}: not a revision of {REPO}")
    machine_before = yardstick()
    with tempfile.TemporaryDirectory(prefix="envfoundry-build-beside-") as tmp:
        tree = Path(tmp) / "tree"
        subprocess.run(
            ["git", "worktree", "add", "--detach", "--quiet", str(tree), revision],
            cwd=REPO,
            check=True,
        )
        homes = args.keep or Path(tmp)
        try:
            then = dagster_build(args, homes / "then", repo=tree)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=REPO)
        now = dagster_build(args, homes / "now")
    catalogue = f", catalogue {args.catalogue}" if args.catalogue else ""
    print(f"profile {args.profile}, seed {args.seed}, {args.parallel} at once{catalogue}")
    print(f"{machine_before}, before the builds\n{yardstick()}, after them")
    print(f"{'':<28}{revision:>10}{'this tree':>10}{'ratio':>8}")
    for label, job in [
        ("catalogue (s)", "catalogue_job"),
        ("environments (s)", "environment_job"),
        ("publish (s)", "publish_job"),
    ]:
        a, b = then[1].get(job, 0.0), now[1].get(job, 0.0)
        print(f"{label:<28}{a:10.1f}{b:10.1f}{b / max(a, 1e-9):7.2f}x")
    print(f"{'whole build, wall (s)':<28}{then[0]:10.1f}{now[0]:10.1f}{now[0] / then[0]:7.2f}x")
    print(f"{'published tasks':<28}{then[2]:10d}{now[2]:10d}")
    print(
        f"goal (whole build <= {GOAL_SECONDS // 60} min): "
        f"{'met' if now[0] <= GOAL_SECONDS else 'not met'} ({now[0] / 60:.1f} min)"
    )


if __name__ == "__main__":
    main()
