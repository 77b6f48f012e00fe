"""Where a build's time goes per environment: each engine stage, and Dagster's share.

    python benchmarks/pipeline.py [--envs 4] [--profile default]

For the same environments, measured side by side in one run: the engine stages called
directly (compile, states, audit, plan, gold, checks, self-test, rollouts), then the same
work as one Dagster partition run of `environment_job` on a throwaway instance. Prints
medians per environment, each stage's share, the Dagster/engine ratio, and the rate in
published tasks per minute against the roadmap's 20K tasks in 15 minutes.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.audit import audit_environment  # noqa: E402
from quality.selftest import selftest_scenarios  # noqa: E402
from sandboxes import WorkerPool  # noqa: E402
from synthesis.config import get_profile  # noqa: E402
from synthesis.environments.archetypes import supported_archetypes  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.model import model_of  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.states import build_initial_state  # noqa: E402
from synthesis.environments.topics import load_catalogue, select_topics  # noqa: E402
from synthesis.rollouts.agents import NoopPolicy, OraclePolicy  # noqa: E402
from synthesis.rollouts.episodes import rollouts  # noqa: E402
from synthesis.tasks.checks import derive_checks  # noqa: E402
from synthesis.tasks.gold import execute_gold  # noqa: E402
from synthesis.tasks.scenarios import plan_scenarios  # noqa: E402

STAGES = ["compile", "states", "audit", "plan", "gold", "checks", "selftest", "rollouts"]


def engine_once(topic, profile, seed: int) -> tuple[dict[str, float], int]:
    times: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(stage: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        times[stage] = now - clock
        clock = now

    env = build_environment(generate_spec(topic))
    lap("compile")
    states = [
        build_initial_state(env, seed=seed, index=i, records_per_entity=profile.records_per_entity)
        for i in range(profile.initial_states_per_env)
    ]
    lap("states")
    audit_environment(env, [s.state for s in states], seed=seed)
    lap("audit")
    per_state = max(1, profile.scenarios_per_env // len(states))
    planned = [
        s
        for st in states
        for s in plan_scenarios(
            env, st, seed=seed, count=per_state, max_chain_length=profile.max_chain_length
        )
    ]
    lap("plan")
    executed = execute_gold(env, planned)
    lap("gold")
    model = model_of(env)
    items = [(s, derive_checks(s, model=model)) for s in executed if s.status == "published"]
    lap("checks")
    proven = selftest_scenarios(env, items)
    lap("selftest")
    with WorkerPool(size=2) as pool:
        rollouts(env, items, OraclePolicy, pool=pool)
        rollouts(env, items, lambda s: NoopPolicy(), pool=pool)
    lap("rollouts")
    return times, sum(t.proven for t in proven)


def dagster_runs(topics, profile_name: str, seed: int) -> list[float]:
    """Seconds of each environment's `environment_job` run, on a throwaway home."""
    with tempfile.TemporaryDirectory(prefix="envfoundry-bench-") as tmp:
        return _dagster_runs(Path(tmp), topics, profile_name, seed)


def _dagster_runs(home: Path, topics, profile_name: str, seed: int) -> list[float]:
    os.environ.update(
        {
            "ENVFOUNDRY_HOME": str(home),
            "ENVFOUNDRY_PROFILE": profile_name,
            "ENVFOUNDRY_SEED": str(seed),
            "DAGSTER_HOME": str(home / "dagster"),
        }
    )
    (home / "dagster").mkdir(parents=True)
    (home / "dagster" / "dagster.yaml").write_text("telemetry:\n  enabled: false\n")
    catalogue = home / "topics.json"
    from synthesis import codec

    catalogue.write_bytes(codec.dumps({"topics": [t.model_dump() for t in topics]}))
    os.environ["ENVFOUNDRY_CATALOGUE"] = str(catalogue)
    import dagster as dg

    from orchestration.definitions import build_definitions

    defs = build_definitions()
    quiet = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
    with dg.DagsterInstance.get() as instance:
        assert (
            defs.resolve_job_def("catalogue_job")
            .execute_in_process(instance=instance, run_config=quiet)
            .success
        )
        seconds = []
        for env_id in sorted(instance.get_dynamic_partitions("environments")):
            start = time.perf_counter()
            result = defs.resolve_job_def("environment_job").execute_in_process(
                instance=instance, partition_key=env_id, run_config=quiet
            )
            seconds.append(time.perf_counter() - start)
            assert result.success, env_id
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--envs", type=int, default=4)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    profile = get_profile(args.profile)
    topics = select_topics(load_catalogue(), supported_archetypes(), args.envs)

    per_stage: dict[str, list[float]] = {s: [] for s in STAGES}
    totals, tasks = [], 0
    for topic in topics:
        times, proven = engine_once(topic, profile, args.seed)
        for stage, seconds in times.items():
            per_stage[stage].append(seconds)
        totals.append(sum(times.values()))
        tasks += proven
    dagster = dagster_runs(topics, args.profile, args.seed)

    engine = statistics.median(totals)
    print(f"{len(topics)} environments, profile {args.profile}: medians per environment")
    print(f"{'stage':<12}{'seconds':>10}{'share':>9}")
    for stage in STAGES:
        median = statistics.median(per_stage[stage])
        print(f"{stage:<12}{median:>10.3f}{median / engine:>8.0%}")
    print(f"{'engine':<12}{engine:>10.3f}")
    run = statistics.median(dagster)
    print(f"{'dagster run':<12}{run:>10.3f}   dagster/engine {run / engine:.2f}x")
    rate = tasks / sum(totals) * 60
    print(
        f"proven tasks: {tasks}; engine rate {rate:.0f} tasks/min on this machine; "
        f"20K tasks would take {20000 / rate:.0f} min (roadmap target: 15)"
    )


if __name__ == "__main__":
    main()
