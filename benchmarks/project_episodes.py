"""Project episodes: milliseconds per episode of a project folder's self-test mix (each task's
gold chain and its mistakes) with the code-tests verdict carried over while the team's code is
left alone (synthesis/environments/workspace_code.py `_CODE_TESTS_DUMPER`), against the same
class running the tests at every state read, as it did before; side by side in one run.

    python benchmarks/project_episodes.py [--topics 2] [--states 2] [--tasks 8] [--workers 2]

Also checks that both give byte-identical final states (the verdict carried over is the one a
run gives) and says how many episodes touched the code (those still run the tests).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from sandboxes import EnvSource, WorkerPool  # noqa: E402
from synthesis.config import DATA_DIR  # noqa: E402
from synthesis.environments.archetypes.project import build_project_spec  # noqa: E402
from synthesis.environments.build import environment_code  # noqa: E402
from synthesis.environments.projects.code_project import ROOT  # noqa: E402
from synthesis.environments.projects.folder import project_folder  # noqa: E402
from synthesis.models import Topic  # noqa: E402
from synthesis.tasks.projects.scenarios import plan_project_tasks  # noqa: E402

CARRIED = "if code is not None and code == self._seeded_code:"


def mix(topics: int, states: int, tasks: int) -> list[tuple[str, str, dict, list]]:
    """(carried source, always-run source, initial state, calls) of each episode."""
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    chosen = [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"]
    out = []
    for topic in chosen[:topics]:
        spec = build_project_spec(topic)
        carried = environment_code(spec)
        assert CARRIED in carried, "the dumper no longer reads as this benchmark expects"
        always = carried.replace(CARRIED, "if False:")
        for seed in range(states):
            project = project_folder(spec.workspace, seed)
            state = {"__workspace__": project.tree()}
            for task in plan_project_tasks(project, spec.workspace, seed, tasks):
                for chain in [task.gold_chain, *(m.chain for m in task.mistakes)]:
                    calls = [(c["tool"], c["args"]) for c in chain]
                    out.append((carried, always, state, calls))
    return out


def play(episodes: list, which: int, workers: int) -> tuple[float, list[bytes]]:
    sources: dict[str, EnvSource] = {}
    batch = [(sources.setdefault(e[which], EnvSource(code=e[which])), e[2], e[3]) for e in episodes]
    with WorkerPool(workers) as pool:
        pool.run_episodes(batch[:workers])  # the zygotes started: not what is compared
        started = time.perf_counter()
        results = pool.run_episodes(batch)
        elapsed = time.perf_counter() - started
    bad = [r.reason for r in results if r.status != "ok"]
    assert not bad, bad[:3]
    return elapsed, [orjson.dumps(r.final_state, option=orjson.OPT_SORT_KEYS) for r in results]


def touches_code(calls: list) -> bool:
    return any(ROOT in json.dumps(args) for tool, args in calls if tool in ("write", "run"))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=2)
    parser.add_argument("--states", type=int, default=2)
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    episodes = mix(args.topics, args.states, args.tasks)
    touched = sum(touches_code(e[3]) for e in episodes)
    print(
        f"{len(episodes)} episodes ({touched} write or run something under {ROOT}/) of "
        f"{args.topics} topic(s) x {args.states} state(s), {args.workers} workers"
    )
    always_s, always_finals = play(episodes, 1, args.workers)
    carried_s, carried_finals = play(episodes, 0, args.workers)
    n = len(episodes)
    print(f"  tests run at every state read: {1000 * always_s / n:7.1f} ms/episode")
    print(f"  verdict carried over:          {1000 * carried_s / n:7.1f} ms/episode")
    print(f"  ratio: {always_s / carried_s:.2f}x fewer ms per episode")
    same = always_finals == carried_finals
    print(f"  final states byte-identical: {same}")
    if not same:
        sys.exit(1)


if __name__ == "__main__":
    main()
