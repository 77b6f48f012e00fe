"""How many of a built home's SFT targets state what their conversation never showed.

Reads every oracle trajectory of the published tasks from the home's warehouse (the episodes
the SFT shards are made of) with its task's initial and final state, and asks
`quality.grounding.answer_problems` about each final answer: a value no earlier message
supports (a balance read from the final state the agent never saw), or a denial of a change
the episode made. Prints the counts per task kind (the goal is 0 of both) and a few examples.
Two more columns, for reading: answers that name an internal record id (allowed only when
nothing the conversation showed names the record) and answers that name a tool (never).

    python benchmarks/sft_grounding.py --home var
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path

import duckdb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from quality.grounding import answer_problems  # noqa: E402

WORKSPACE_KEY = "__workspace__"
COLUMNS = ("answers", "unsupported value", "denies a change", "names an id", "names a tool")


def task_kind(kind: str, provenance: dict, initial: dict) -> str:
    if WORKSPACE_KEY in initial:
        return "workspace"
    if kind == "infeasible":
        return "infeasible"
    return "question" if provenance.get("reply") else "feasible"


def record_ids(*states: dict | None) -> set[str]:
    """The ids of the id-keyed records of the states (codes with a digit, not bare numbers)."""
    return {
        rid
        for state in states
        for value in (state or {}).values()
        if isinstance(value, dict)
        for rid in value
        if isinstance(rid, str) and any(c.isdigit() for c in rid) and not rid.isdigit()
    }


def names_any(text: str, words: set[str]) -> bool:
    return any(re.search(rf"(?<![\w-]){re.escape(w)}(?![\w-])", text) for w in words)


def grounding_counts(
    home: Path, show: int = 0
) -> tuple[dict[str, Counter[str]], Counter[str], list[str]]:
    """(task kind → problem counts, unsupported values by kind, examples) of the oracle
    final answers of a home's published tasks."""
    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select t.scenario_id, t.env_id, s.kind, s.provenance_json, s.initial_state_json, "
            "s.final_state_json, t.messages_json from trajectories t "
            "join scenarios s using (scenario_id) "
            "where t.policy = 'oracle' and s.status = 'published' order by t.scenario_id"
        ).fetchall()
        tools: dict[str, set[str]] = {}
        for env_id, name in con.execute("select env_id, tool_name from tools").fetchall():
            tools.setdefault(env_id, set()).add(name)
    counts: dict[str, Counter[str]] = {}
    values: Counter[str] = Counter()
    examples: list[str] = []
    for sid, env_id, kind, provenance, initial_json, final_json, messages_json in rows:
        initial = json.loads(initial_json)
        final = json.loads(final_json) if final_json else None
        messages = json.loads(messages_json)
        answer = str(messages[-1].get("content") or "")
        group = task_kind(kind, json.loads(provenance), initial)
        problems = answer_problems(messages, initial, final)
        stated = [p for p in problems if p.startswith("states ")]
        found = counts.setdefault(group, Counter())
        found["answers"] += 1
        found["unsupported value"] += bool(stated)
        found["denies a change"] += len(stated) < len(problems)
        found["names an id"] += names_any(answer, record_ids(initial, final))
        found["names a tool"] += names_any(answer, tools.get(env_id, set()))
        values.update(p.split(" ", 2)[1] for p in stated)
        if problems and len(examples) < show:
            examples.append(f"{sid} ({group}): {'; '.join(problems[:3])}\n    answer: {answer}")
    return counts, values, examples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("var"))
    parser.add_argument("--show", type=int, default=5, help="examples to print")
    args = parser.parse_args()
    counts, values, examples = grounding_counts(args.home, args.show)
    print(f"oracle final answers of published tasks in {args.home}")
    print(f"{'kind':<12}" + "".join(f"{c:>19}" for c in COLUMNS))
    total: Counter[str] = Counter()
    for group in sorted(counts):
        total.update(counts[group])
        print(f"{group:<12}" + "".join(f"{counts[group][c]:>19}" for c in COLUMNS))
    print(f"{'all':<12}" + "".join(f"{total[c]:>19}" for c in COLUMNS))
    print("goal: 0 answers with an unsupported value, 0 that deny a change, 0 that name a tool")
    if values:
        print("unsupported values by kind: " + ", ".join(f"{k} {n}" for k, n in values.items()))
    for example in examples:
        print(example)


if __name__ == "__main__":
    main()
