"""How many of a built home's SFT targets state what their conversation never showed.

Reads every oracle trajectory of the published tasks from the home's warehouse (the episodes
the SFT shards are made of) with its task's initial and final state, and asks
`quality.grounding.answer_problems` about each final answer: a value no earlier message
supports (a balance read from the final state the agent never saw), or a denial of a change
the episode made. Prints the counts per task kind (the goal is 0 of each) and a few examples.

    python benchmarks/sft_grounding.py --home var
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.grounding import answer_problems  # noqa: E402

WORKSPACE_KEY = "__workspace__"


def task_kind(kind: str, provenance: dict, initial: dict) -> str:
    if WORKSPACE_KEY in initial:
        return "workspace"
    if kind == "infeasible":
        return "infeasible"
    return "question" if provenance.get("reply") else "feasible"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("var"))
    parser.add_argument("--show", type=int, default=5, help="examples to print")
    args = parser.parse_args()
    with duckdb.connect(str(args.home / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select t.scenario_id, s.kind, s.provenance_json, s.initial_state_json, "
            "s.final_state_json, t.messages_json from trajectories t "
            "join scenarios s using (scenario_id) "
            "where t.policy = 'oracle' and s.status = 'published' order by t.scenario_id"
        ).fetchall()
    kinds: Counter[str] = Counter()
    unsupported: Counter[str] = Counter()
    denials: Counter[str] = Counter()
    values: Counter[str] = Counter()
    examples: list[str] = []
    for sid, kind, provenance, initial_json, final_json, messages_json in rows:
        initial = json.loads(initial_json)
        final = json.loads(final_json) if final_json else None
        messages = json.loads(messages_json)
        group = task_kind(kind, json.loads(provenance), initial)
        kinds[group] += 1
        problems = answer_problems(messages, initial, final)
        stated = [p for p in problems if p.startswith("states ")]
        denied = [p for p in problems if not p.startswith("states ")]
        unsupported[group] += bool(stated)
        denials[group] += bool(denied)
        values.update(p.split(" ", 2)[1] for p in stated)
        if problems and len(examples) < args.show:
            examples.append(
                f"{sid} ({group}): {'; '.join(problems[:3])}\n    answer: "
                + messages[-1].get("content", "")
            )
    total = sum(kinds.values())
    print(f"oracle final answers of published tasks: {total} ({args.home})")
    print(f"{'kind':<12}{'answers':>9}{'unsupported value':>19}{'denies a change':>17}")
    for group in sorted(kinds):
        print(f"{group:<12}{kinds[group]:>9}{unsupported[group]:>19}{denials[group]:>17}")
    print(
        f"{'all':<12}{total:>9}{sum(unsupported.values()):>19}{sum(denials.values()):>17}"
        f"   (goal: 0 and 0)"
    )
    if values:
        print("unsupported values by kind: " + ", ".join(f"{k} {n}" for k, n in values.items()))
    for example in examples:
        print(example)


if __name__ == "__main__":
    main()
