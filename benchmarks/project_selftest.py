"""The project family's self-test and rollouts, side by side in one run: the mutants run as work
chains (quality/work_runs.py) against the same mutants run whole, and the oracle and guesser
taking the proven gold run's results (rollout's `proven_gold`) against playing every call in
the sandbox. Prints the wall time, the calls and Python starts each sends to the sandbox, and
whether the verdicts and transcripts are the same (they must be: exit 1 otherwise).

    python benchmarks/project_selftest.py [--topics 1] [--tasks 24] [--workers 2] [--rounds 2]

Rounds alternate the two ways, so load on the machine falls on both alike; the figure kept is
each way's best round.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality import selftest  # noqa: E402
from sandboxes import WorkerPool  # noqa: E402
from synthesis.config import DATA_DIR  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.model import from_spec  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.states import build_initial_state  # noqa: E402
from synthesis.models import Topic  # noqa: E402
from synthesis.rollouts.agents import OraclePolicy  # noqa: E402
from synthesis.rollouts.episodes import rollouts  # noqa: E402
from synthesis.rollouts.guesser import GuesserPolicy  # noqa: E402
from synthesis.tasks.checks import derive_checks  # noqa: E402
from synthesis.tasks.gold import execute_gold  # noqa: E402
from synthesis.tasks.scenarios import plan_scenarios  # noqa: E402


def worlds(topics: int, tasks: int) -> list[tuple]:
    """(environment, model, [(scenario, checks)]) of the first `topics` project topics."""
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    chosen = [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"]
    out = []
    for topic in chosen[:topics]:
        env = build_environment(generate_spec(topic))
        model = from_spec(env.spec, env)
        state = build_initial_state(env, seed=0, index=0, records_per_entity=4)
        scenarios = execute_gold(env, plan_scenarios(env, state, seed=0, count=tasks, model=model))
        items = [(s, derive_checks(s, model=model)) for s in scenarios if s.status != "quarantined"]
        out.append((env, model, items))
    return out


class Sent:
    """What the self-test sends to the sandbox: calls, and Python starts among them."""

    def __init__(self) -> None:
        self.calls = self.pythons = 0
        self.run_chains = selftest.run_chains

    def __call__(self, env, episodes, **kwargs):
        for _state, chain, _seed in episodes:
            self.calls += len(chain)
            self.pythons += sum(
                c.tool == "run" and "python3" in str(c.args.get("command", "")) for c in chain
            )
        return self.run_chains(env, episodes, **kwargs)


def self_test(worlds: list[tuple], pool: WorkerPool, whole: bool) -> tuple[float, Sent, list]:
    sent, reads_of = Sent(), selftest.reads_of
    selftest.run_chains = sent
    if whole:
        selftest.reads_of = lambda *args: None
    try:
        started = time.perf_counter()
        verdicts = []
        for env, model, items in worlds:
            for o in selftest.selftest_outcomes(env, items, model=model, pool=pool):
                verdicts.append((o.selftest.model_dump(), [(m.label, v) for m, v in o.mutants]))
        return time.perf_counter() - started, sent, verdicts
    finally:
        selftest.run_chains, selftest.reads_of = sent.run_chains, reads_of


def play(worlds: list[tuple], pool: WorkerPool, proven_gold: bool) -> tuple[float, int, list]:
    opened = []
    session = pool.session
    pool.session = lambda *a, **k: opened.append(a) or session(*a, **k)
    try:
        started = time.perf_counter()
        out = []
        for env, model, items in worlds:
            policies = [lambda s, m=model: OraclePolicy(s, m)]
            policies += [lambda s, m=model, a=a: GuesserPolicy(s, m, a) for a in range(3)]
            for policy in policies:
                batch = rollouts(env, items, policy, pool=pool, proven_gold=proven_gold)
                out += [t.model_dump() for t in batch]
        return time.perf_counter() - started, len(opened), out
    finally:
        pool.session = session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--topics", type=int, default=1)
    parser.add_argument("--tasks", type=int, default=24)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    chosen = worlds(args.topics, args.tasks)
    n = sum(len(items) for _, _, items in chosen)
    print(f"{n} planned tasks of {args.topics} project topic(s), {args.workers} workers")
    best: dict[str, float] = {}
    seen: dict[str, object] = {}
    with WorkerPool(args.workers) as pool:
        for _ in range(args.rounds):
            for name, whole in (("whole runs", True), ("work runs", False)):
                took, sent, verdicts = self_test(chosen, pool, whole)
                best[name] = min(best.get(name, took), took)
                seen[name] = (sent.calls, sent.pythons, verdicts)
            for name, proven in (("every call played", False), ("proven gold", True)):
                took, opened, out = play(chosen, pool, proven)
                best[name] = min(best.get(name, took), took)
                seen[name] = (opened, out)
    (wc, wp, wv), (kc, kp, kv) = seen["whole runs"], seen["work runs"]
    print("self-test (each task's gold, do-nothing, mutants and paths):")
    for label, name, calls, pythons in (
        ("mutants run whole:", "whole runs", wc, wp),
        ("as work chains:", "work runs", kc, kp),
    ):
        print(f"  {label:19} {best[name]:6.1f} s  {calls:6d} calls  {pythons:5d} Python starts")
    print(f"  ratio: {best['whole runs'] / best['work runs']:.2f}x  verdicts the same: {wv == kv}")
    (po, pt), (go, gt) = seen["every call played"], seen["proven gold"]
    print("rollouts (the oracle and three guesser attempts per task):")
    print(f"  every call played:  {best['every call played']:6.1f} s  {po:5d} episodes opened")
    print(f"  proven gold:        {best['proven gold']:6.1f} s  {go:5d} episodes opened")
    ratio = best["every call played"] / best["proven gold"]
    print(f"  ratio: {ratio:.2f}x  transcripts the same: {pt == gt}")
    if wv != kv or pt != gt:
        sys.exit(1)


if __name__ == "__main__":
    main()
