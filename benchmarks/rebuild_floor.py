"""What a one-topic rebuild cannot do without, measured with no orchestration at all.

    python benchmarks/rebuild_floor.py --home HOME --env ENV_ID [--profile default] [--seed 0]

A rebuild after one topic's edit must make that environment again and rebuild the marts:
every mart and every data test reads tables that now hold the edited environment's rows. This
measures the two alone, on a built home: the engine's stages for that environment called
directly (benchmarks/pipeline.py's `engine_once`: compile, states, audit, plan, gold, checks,
self-test, rollouts) and `dbt build` of the project on a copy of the home's published
warehouse, run the cheapest way dbt runs here: in this process, on the parsed manifest, after
the publish runs' warm-up (assets/dbt.py), the median of three. Also `dbt build` of the models
alone (no data test), the least any dbt step of this project can cost. No CLI, no Dagster run,
no warehouse, screening, shards or report step: a build's one-topic rebuild costs at least
this. `benchmarks/incremental.py` prints it beside the rebuild it measures.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks.pipeline import engine_once  # noqa: E402
from synthesis import codec  # noqa: E402
from synthesis.config import get_profile  # noqa: E402
from synthesis.environments.topics import load_catalogue  # noqa: E402
from synthesis.export.datasets import PARTS  # noqa: E402

_REPEATS = 3


@dataclass(frozen=True)
class Floor:
    engine_s: float  # the edited environment's engine stages
    dbt_s: float  # `dbt build`: every model and data test
    dbt_models_s: float  # `dbt build` of the models alone
    dbt_nodes: int  # the models and tests the first counts

    @property
    def seconds(self) -> float:
        return self.engine_s + self.dbt_s

    def lines(self, first_build_s: float) -> list[str]:
        allowance = 0.10 * first_build_s
        return [
            f"  engine, the edited environment  {self.engine_s:6.2f} s",
            f"  dbt build, {self.dbt_nodes} nodes, warm     {self.dbt_s:6.2f} s"
            f"   (models alone: {self.dbt_models_s:.2f} s)",
            f"  together                        {self.seconds:6.2f} s = "
            f"{self.seconds / first_build_s:.1%} of the first build; the 10 % line allows "
            f"{allowance:.2f} s (floor / allowance {self.seconds / allowance:.2f}x)",
        ]


def engine_seconds(home: Path, env_id: str, catalogue: Path, profile_name: str, seed: int) -> float:
    """The engine's stages for the topic `env_id` was made of (its artifact says which),
    called directly."""
    made_of = codec.read_json(home / "artifacts" / "environments" / f"{env_id}.json")["topic_id"]
    topic = next((t for t in load_catalogue(catalogue) if t.topic_id == made_of), None)
    if topic is None:
        raise SystemExit(f"{catalogue} has no topic {made_of}, which {env_id} was made of")
    times, _ = engine_once(topic, get_profile(profile_name), seed)
    return sum(times.values())


def dbt_seconds(warehouse: Path, *selection: str) -> tuple[float, int]:
    """The median wall time of `dbt build` (with `selection`) on a copy of `warehouse`, warm,
    in this process, and how many nodes it ran."""
    import json

    from assets._dbt_in_process import invocation_args, invoke
    from assets.dbt import DBT_PROJECT_DIR, parsed_manifest, warm_up, write_profiles

    warm_up()
    manifest = parsed_manifest()
    seconds, nodes = [], 0
    with tempfile.TemporaryDirectory(prefix="envfoundry-floor-") as tmp:
        work = Path(tmp)
        for i in range(_REPEATS):
            copy = work / str(i) / PARTS["warehouse"]  # DuckDB names its catalog by the file
            copy.parent.mkdir()
            shutil.copy2(warehouse, copy)
            env = {
                "DBT_PROJECT_DIR": str(DBT_PROJECT_DIR),
                "DBT_PROFILES_DIR": str(write_profiles(work / f"profile-{i}", warehouse=copy)),
                "DBT_TARGET_PATH": str(work / f"target-{i}"),
                "DBT_LOG_PATH": str(work / f"logs-{i}"),
            }
            said: list[bytes] = []
            argv = ["dbt", "build", *selection]
            started = time.perf_counter()
            code = invoke(invocation_args(argv, env), manifest, said.append)
            seconds.append(time.perf_counter() - started)
            if code != 0:
                raise SystemExit("dbt build failed: " + b"\n".join(said[-5:]).decode())
            results = json.loads((work / f"target-{i}" / "run_results.json").read_text())
            nodes = len(results["results"])
    return statistics.median(seconds), nodes


def measure(home: Path, env_id: str, catalogue: Path, profile: str, seed: int) -> Floor:
    warehouse = (home / PARTS["warehouse"]).resolve()
    engine = engine_seconds(home, env_id, catalogue, profile, seed)
    dbt, nodes = dbt_seconds(warehouse)
    models, _ = dbt_seconds(warehouse, "--resource-type", "model")
    return Floor(engine_s=engine, dbt_s=dbt, dbt_models_s=models, dbt_nodes=nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    parser.add_argument("--env", required=True, help="the environment a topic edit remakes")
    parser.add_argument("--catalogue", type=Path, default=None)
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--first-build", type=float, default=None, help="its seconds")
    args = parser.parse_args()
    from synthesis.environments.topics import CATALOGUE_PATH

    floor = measure(args.home, args.env, args.catalogue or CATALOGUE_PATH, args.profile, args.seed)
    print(f"one-topic rebuild floor, profile {args.profile}, {args.env}:")
    if args.first_build:
        print("\n".join(floor.lines(args.first_build)))
    else:
        print(f"  engine {floor.engine_s:.2f} s + dbt build {floor.dbt_s:.2f} s "
              f"({floor.dbt_nodes} nodes; models alone {floor.dbt_models_s:.2f} s)")  # fmt: skip


if __name__ == "__main__":
    main()
