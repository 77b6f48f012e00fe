"""Sandbox reuse: milliseconds per episode with a sandbox started per episode, a worker forked by
a zygote (sandboxes/zygote.py), and a warm worker that resets in its interpreter (sandboxes/
warm.py, only for classes our compiler wrote), measured side by side in one run.

    python benchmarks/sandbox_reuse.py [--episodes 200] [--workers 2]

Two environments compiled from the catalogue by the engine (a record-store one and a
workspace one), each with a few initial states from its history replay; per environment and
backend (bwrap, process), the same batch of episodes through WorkerPool.run_episodes twice:
fresh (reuse_sandboxes=False) and reused. Each episode loads a state, replays a no-argument
query tool when the environment has one, and dumps the final state, as a self-test's no-op
and gold replays do. Also checks the two runs returned identical results (the goal: >= 5x
fewer ms per episode under bwrap for the record-store environment, results byte-identical
for both).
"""

from __future__ import annotations

import argparse
import dataclasses
import logging
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import orjson  # noqa: E402

from sandboxes import WorkerPool, available_backends  # noqa: E402
from synthesis.environments.archetypes import supported_archetypes  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.runtime import sandbox_source  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.states import build_initial_state  # noqa: E402
from synthesis.environments.topics import load_catalogue, select_topics  # noqa: E402

GOAL_RATIO = 5.0
STATES = 4


def environments() -> list:
    """The first compiled record-store environment and the first workspace one."""
    topics = select_topics(load_catalogue(), supported_archetypes(), 40)
    chosen: dict[bool, object] = {}
    for topic in topics:
        env = build_environment(generate_spec(topic))
        if env.status != "accepted":
            continue
        workspace = env.kind == "workspace"
        chosen.setdefault(workspace, env)
        if len(chosen) == 2:
            break
    return [chosen[k] for k in sorted(chosen)]


def episodes(env, count: int) -> list[tuple]:
    source = sandbox_source(env)
    states = [
        build_initial_state(env, seed=7, index=i, records_per_entity=6).state for i in range(STATES)
    ]
    query = next(
        (
            t.name
            for t in env.tools
            if t.kind == "query"
            and not t.schema_.get("function", t.schema_).get("parameters", {}).get("required")
        ),
        None,
    )
    calls = [(query, {})] if query else []
    return [(source, states[i % STATES], calls, None, i) for i in range(count)]


def forked(batch: list[tuple]) -> list[tuple]:
    """The same episodes, their source not offered for interpreter reuse (a zygote forks)."""
    return [(dataclasses.replace(e[0], reuse_interpreter=False), *e[1:]) for e in batch]


def run(batch: list[tuple], backend: str, workers: int, reuse: bool) -> tuple[float, bytes]:
    with WorkerPool(workers, backend=backend, reuse_sandboxes=reuse) as pool:
        started = time.perf_counter()
        results = pool.run_episodes(batch)
        elapsed = time.perf_counter() - started
    return elapsed, orjson.dumps([r.to_json() for r in results])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    logging.getLogger("sandboxes").setLevel(logging.ERROR)
    backends = [b for b in ("bwrap", "process") if b in available_backends()]
    print(f"{args.episodes} episodes per run, WorkerPool({args.workers})")
    print(
        f"{'environment':36} {'backend':8} {'fresh ms/ep':>12} {'forked ms/ep':>13} "
        f"{'warm ms/ep':>11} {'fresh/best':>11}  identical"
    )
    ok = True
    for env in environments():
        batch = episodes(env, args.episodes)
        warm = batch[0][0].reuse_interpreter  # a class our compiler wrote (records or workspace)
        for backend in backends:
            run(batch[: args.workers * 2], backend, args.workers, True)  # warm caches
            fresh_s, fresh = run(batch, backend, args.workers, False)
            forked_s, forked_out = run(forked(batch), backend, args.workers, True)
            warm_s, warm_out = run(batch, backend, args.workers, True) if warm else (None, fresh)
            best = min(forked_s, warm_s or forked_s)
            ratio = fresh_s / best
            same = fresh == forked_out == warm_out
            # The goal is about what the sandbox costs: a workspace episode's own file work
            # (seeding, snapshot, verbs) is the same either way, so it is shown, not judged.
            ok &= same and (backend != "bwrap" or env.kind == "workspace" or ratio >= GOAL_RATIO)
            per = [s / args.episodes * 1000 if s else None for s in (fresh_s, forked_s, warm_s)]
            shown = [f"{v:.2f}" if v is not None else "-" for v in per]
            print(
                f"{env.env_id:36} {backend:8} {shown[0]:>12} {shown[1]:>13} {shown[2]:>11} "
                f"{ratio:10.1f}x  {'yes' if same else 'NO'}"
            )
    print(
        f"goal: bwrap >= {GOAL_RATIO:g}x fewer ms per episode, identical results: "
        f"{'met' if ok else 'NOT met'}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
