"""A blind reading sample: our requests mixed with human-written ones, for a reader to rate.

    python benchmarks/blind_sample.py --home DIR --out DIR [--n 30] [--seed 0]
    python benchmarks/blind_sample.py --score DIR      # after the reader filled ratings.csv

Issue 40's reading: a reader who is not told which is which rates each request from 1
(unnatural) to 5 (natural) and guesses whether a person wrote it. `--home` draws `--n` of the
build's published requests (what the agent is told first: a multi-turn task's opening) and
`--n` of BFCL's `multi_turn_base` first user turns, shuffles them with `--seed`, and writes
`DIR/sample.md` (numbered, unlabelled), `DIR/ratings.csv` (number, rating, written_by_a_person
left blank for the reader) and `DIR/key.json` (which is which: keep it from the reader).
`--score DIR` reads the filled ratings against the key and prints each side's mean rating and
how often the reader told ours apart (the goal: ours rated at least as natural, and told
apart at most 3 times in 4).
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.request_text import published_lines  # noqa: E402

BFCL_FILE = "multi_turn_base"


def first_bfcl_turns() -> list[str]:
    """The first user turn of each BFCL multi_turn_base question (a request as it opens)."""
    from importlib import resources

    data = resources.files("bfcl_eval") / "data"
    path = next(p for p in data.iterdir() if BFCL_FILE in p.name)
    out = []
    for line in path.read_text().splitlines():
        if line.strip():
            first = json.loads(line)["question"][0]
            out += [m["content"].strip() for m in first if m.get("role") == "user"][:1]
    return [t for t in out if t]


def opening(line: dict) -> str:
    """What the agent is told first: a multi-turn task's opening, else the whole request."""
    return (line.get("user") or {}).get("opening") or line["task_text"]


def write_sample(home: Path, out: Path, n: int, seed: int) -> None:
    rng = random.Random(seed)
    ours = rng.sample([opening(line) for line in published_lines(home)], n)
    theirs = rng.sample(first_bfcl_turns(), n)
    items = [("ours", t) for t in ours] + [("human", t) for t in theirs]
    rng.shuffle(items)
    out.mkdir(parents=True, exist_ok=True)
    lines = ["# Requests to rate", "", "Rate each from 1 (unnatural) to 5 (natural) in "
             "ratings.csv, and say whether you think a person wrote it (yes/no).", ""]  # fmt: skip
    for i, (_, text) in enumerate(items, 1):
        lines += [f"{i}. {text}", ""]
    (out / "sample.md").write_text("\n".join(lines))
    with open(out / "ratings.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["number", "rating", "written_by_a_person"])
        writer.writerows([[i, "", ""] for i in range(1, len(items) + 1)])
    key = {str(i): who for i, (who, _) in enumerate(items, 1)}
    (out / "key.json").write_text(json.dumps(key, indent=1))
    print(f"{len(items)} requests in {out / 'sample.md'}; the key is {out / 'key.json'}")


def score(out: Path) -> None:
    key = json.loads((out / "key.json").read_text())
    rated = {"ours": [], "human": []}
    told = total = 0
    with open(out / "ratings.csv") as f:
        for row in csv.DictReader(f):
            who = key[row["number"]]
            if row["rating"].strip():
                rated[who].append(float(row["rating"]))
            guess = row["written_by_a_person"].strip().lower()
            if who == "ours" and guess in ("yes", "no"):
                total += 1
                told += guess == "no"
    for who, values in rated.items():
        mean = statistics.mean(values) if values else float("nan")
        print(f"{who:>6}: mean rating {mean:.2f} over {len(values)}")
    if total:
        print(f"ours told apart: {told} of {total} ({told / total:.0%}; goal at most 75%)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--n", type=int, default=30)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--score", type=Path, help="a sample folder with filled ratings.csv")
    args = parser.parse_args()
    if args.score is not None:
        score(args.score)
    elif args.home is not None and args.out is not None:
        write_sample(args.home, args.out, args.n, args.seed)
    else:
        parser.error("give --home and --out, or --score")


if __name__ == "__main__":
    main()
