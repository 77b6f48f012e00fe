"""Attack a built dataset's rewards as a trainer's policy would, through the shipped module.

Every published task of a home's RL shards is played by every shortcut of
`synthesis.tasks.shortcuts` (a dump of the state, a hedge over enum values, a hedge over one
field's values after the gold lookups, a lucky guess of one value, a false "done", the system
prompt pasted into a refusal, a refusal of feasible work, the gold calls followed by a dump),
each episode run and scored by the shards' own `envfoundry_reward.py` exactly as a trainer
would (`step` records the calls, `score` holds the reply to what they showed). Prints each
shortcut's pay rate (reward > 0) per task kind; the dataset is honest when every figure is 0.
Then the issue's other figures, on the same home:

* partial credit along each gold chain, replayed step by step through the shipped module:
  the share of tasks whose reward never falls from one prefix to the next (goal: 100%);
* the 5-fold bag-of-words AUC of telling infeasible from feasible requests by their text
  (benchmarks/request_tells.py; goal at most 0.65);
* oracle final answers stating a value no message showed, or denying a change the episode
  made (benchmarks/sft_grounding.py; goal 0).

    python benchmarks/reward_audit.py --home var            # the default build
    python benchmarks/reward_audit.py --home H --limit 3000  # a sample of a bigger one
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import random
import sys
from collections import Counter
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.request_tells import FOLDS, cv_auc, home_requests  # noqa: E402
from benchmarks.sft_grounding import grounding_counts  # noqa: E402
from synthesis.tasks.shortcuts import (  # noqa: E402
    ShortcutAudit,
    ShortcutContext,
    shortcut_reward,
    shortcuts_for,
)

# Fixed replies that name one common status with no call: a lucky guess, which no guard can
# tell from a right answer; grounded replies (a value earns only where a call showed it)
# close it (docs/reward.md, "Grounded replies"). Played beside the catalogue's own guess,
# with words no state need hold, so the figure does not rest on the catalogue's choice.
GUESSES = ("pending", "confirmed", "cancelled", "completed", "active", "open", "closed")


def load_reward_module(shards: Path):
    """The shards' own `envfoundry_reward.py`, imported as a trainer would."""
    path = shards / "envfoundry_reward.py"
    spec = importlib.util.spec_from_file_location("envfoundry_reward", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def task_kind(row_kind: str, provenance: dict) -> str:
    if row_kind == "infeasible":
        return "infeasible"
    return "question" if provenance.get("reply") else "feasible"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("var"))
    parser.add_argument("--limit", type=int, default=0, help="a random sample of N tasks")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", type=int, default=3, help="examples of paid attacks to print")
    args = parser.parse_args()
    current = args.home / "shards"
    efr = load_reward_module(current)
    tasks = []
    for path in sorted((current / "rl").glob("*.jsonl")):
        tasks += [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    with duckdb.connect(str(args.home / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select scenario_id, kind, gold_chain_json, provenance_json, env_id from scenarios "
            "where status = 'published'"
        ).fetchall()
        writes = set(
            con.execute("select env_id, tool_name from tools where kind = 'mutate'").fetchall()
        )
    scenarios = {r[0]: (r[1], json.loads(r[2]), json.loads(r[3]), r[4]) for r in rows}
    if args.limit and len(tasks) > args.limit:
        tasks = random.Random(args.seed).sample(tasks, args.limit)
    audit = ShortcutAudit()
    examples: list[str] = []
    kinds: Counter[str] = Counter()
    monotone: Counter[str] = Counter()
    chains: Counter[str] = Counter()
    guessed: Counter[str] = Counter()
    graded = guessed_any = 0
    for task in tasks:
        row_kind, gold, provenance, env_id = scenarios[task["scenario_id"]]
        kind = task_kind(row_kind, provenance)
        kinds[kind] += 1
        family = "chain" if provenance.get("family") == "chain" else "other"
        chains[family] += 1
        monotone[family] += credit_never_falls(efr, task, gold, current)
        system = next((m["content"] for m in task["prompt"] if m["role"] == "system"), "")
        if provenance.get("reply"):
            graded += 1
            idle = efr.load_env(task, trust=True, root=str(current))
            won = [g for g in GUESSES if efr.score(task, idle, f"It is {g}.")["reward"] > 0]
            guessed.update(won)
            guessed_any += bool(won)
        for shortcut in shortcuts_for(row_kind, bool(provenance.get("reply"))):
            env = efr.load_env(task, trust=True, root=str(current))
            if shortcut.plays_gold or shortcut.looks_first:
                for call in gold:
                    if shortcut.plays_gold or (env_id, call["tool"]) not in writes:
                        efr.step(env, call["tool"], call["args"])
            context = ShortcutContext(
                system, task["task_text"], task["tools"], efr.state(env) or {}
            )
            reward = shortcut_reward(
                shortcut,
                context,
                lambda reply, env=env, task=task: efr.score(task, env, final_reply=reply)["reward"],
            )
            audit.add(kind, shortcut.name, reward)
            if reward > 0 and len(examples) < args.show:
                examples.append(f"{shortcut.name} on {task['scenario_id']} ({kind}): {reward:g}")
    print(
        f"{len(tasks)} published tasks: " + ", ".join(f"{n} {k}" for k, n in sorted(kinds.items()))
    )
    names = sorted({s for per in audit.attempts.values() for s in per})
    print(f"{'shortcut':<18}" + "".join(f"{k:>14}" for k in sorted(kinds)))
    for name in names:
        cells = []
        for kind in sorted(kinds):
            n = audit.attempts.get(kind, {}).get(name, 0)
            paid = audit.paid.get(kind, {}).get(name, 0)
            cells.append(f"{paid:>6}/{n:<6}" if n else f"{'-':>14}")
        print(f"{name:<18}" + "".join(f"{c:>14}" for c in cells))
    total = sum(sum(p.values()) for p in audit.paid.values())
    attempts = sum(sum(p.values()) for p in audit.attempts.values())
    print(f"shortcuts paid on {total} of {attempts} task-attacks")
    for line in examples:
        print("  e.g.", line)
    if graded:
        best = ", ".join(f"'It is {g}.' {n}" for g, n in guessed.most_common(3))
        print(
            f"a lucky guess with no call: {guessed_any} of {graded} reply-graded tasks pay "
            f"one of {len(GUESSES)} fixed status words (goal 0)"
            + (f" (most: {best})" if best else "")
        )
    for family in ("chain", "other"):
        if chains[family]:
            share = monotone[family] / chains[family]
            print(
                f"partial credit never falls along the gold chain: {family} tasks "
                f"{monotone[family]} of {chains[family]} ({share:.1%})"
            )
    requests = home_requests(args.home)
    n_infeasible = sum(r.infeasible for r in requests)
    kinds = f"{n_infeasible} infeasible / {len(requests) - n_infeasible} feasible"
    if min(n_infeasible, len(requests) - n_infeasible) < FOLDS:
        # A tiny home: too few of one kind to hold one out per fold; no figure, said so.
        print(
            f"request text tells infeasible from feasible: not measured ({kinds}: too few "
            f"of one kind for {FOLDS} folds; build the default profile)"
        )
    else:
        auc = cv_auc([r.text for r in requests], [r.infeasible for r in requests])
        print(
            f"request text tells infeasible from feasible: {FOLDS}-fold bag-of-words AUC "
            f"{auc:.3f} ({kinds}; goal <= 0.65)"
        )
    counts, _, _ = grounding_counts(args.home)
    total: Counter[str] = Counter()
    for found in counts.values():
        total.update(found)
    print(
        f"oracle answers: {total['unsupported value']} of {total['answers']} state a value no "
        f"message showed, {total['denies a change']} deny a change (goal 0 and 0)"
    )


def credit_never_falls(efr, task: dict, gold: list[dict], root: Path) -> bool:
    """Whether the task's reward never falls from one gold prefix to the next (no reply)."""
    env = efr.load_env(task, trust=True, root=str(root))
    rewards = [efr.score(task, env, final_reply="")["reward"]]
    for call in gold:
        efr.step(env, call["tool"], call["args"])
        rewards.append(efr.score(task, env, final_reply="")["reward"])
    return all(later >= earlier for earlier, later in zip(rewards, rewards[1:], strict=False))


if __name__ == "__main__":
    main()
