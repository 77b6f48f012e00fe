"""The issue's task-shape figures from a finished build's warehouse.

    python benchmarks/task_shapes.py --home DIR

Over published scenarios: median gold chain, the share with 8+ steps, the infeasible share,
each planner family's share and its self-test yield (published / candidates), and the
structural tiers. The bars (issue 7): median >= 5, >= 25% with 8+ steps, >= 10% infeasible.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter
from pathlib import Path

import duckdb


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True)
    args = parser.parse_args()
    con = duckdb.connect(str(args.home / "warehouse.duckdb"), read_only=True)
    rows = con.execute(
        "select kind, chain_length, difficulty_json, provenance_json, status from scenarios"
    ).fetchall()
    if not rows:
        print("no scenarios in this warehouse")
        return 1
    published = [r for r in rows if r[4] == "published"]
    lengths = [r[1] for r in published] or [0]
    n = max(1, len(published))
    long_share = sum(x >= 8 for x in lengths) / n
    infeasible = sum(r[0] == "infeasible" for r in published) / n
    print(f"candidates {len(rows)}  published {len(published)}")
    print(f"{'figure':<22}{'value':>8}{'bar':>8}")
    print(f"{'median chain':<22}{statistics.median(lengths):>8}{'>= 5':>8}")
    print(f"{'share with 8+ steps':<22}{long_share:>8.3f}{'>= 0.25':>8}")
    print(f"{'infeasible share':<22}{infeasible:>8.3f}{'>= 0.10':>8}")

    def family(r: tuple) -> str:
        return json.loads(r[3] or "{}").get("family", "?")

    made, kept = Counter(map(family, rows)), Counter(map(family, published))
    print(f"{'family':<14}{'share':>8}{'yield':>8}")
    for name in sorted(made):
        print(f"{name:<14}{kept[name] / n:>8.3f}{kept[name] / made[name]:>8.3f}")
    tiers = Counter(json.loads(r[2] or "{}").get("tier", "?") for r in published)
    print("tiers", dict(sorted(tiers.items())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
