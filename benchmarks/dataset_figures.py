"""A built dataset's breadth and near-duplicate figures, read from its warehouse.

    python benchmarks/dataset_figures.py [--home var]

Prints, for the accepted environments, the distinct program shapes and tool graphs (overall
and per archetype, with the test environments), the published tasks per split, what task
screening quarantined, and an independent near-duplicate scan of the published task texts
beside the dedup's own: MinHash LSH over 3-word shingles (the dedup uses 5), pairs confirmed
at Jaccard 0.8, as the share of published tasks that have a near-duplicate.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import duckdb  # noqa: E402

from synthesis.tasks import dedup  # noqa: E402

INDEPENDENT_SHINGLE_WORDS = 3


def near_duplicate_share(texts: list[str], size: int) -> float:
    """Share of texts with another text at Jaccard >= the dedup's bar (size-word shingles)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=dedup.CANDIDATE_JACCARD, num_perm=dedup.MINHASH_PERMUTATIONS)
    sets = [dedup.shingles(t, size) for t in texts]
    sketches = []
    for i, own in enumerate(sets):
        sketch = MinHash(num_perm=dedup.MINHASH_PERMUTATIONS, seed=dedup.MINHASH_SEED)
        sketch.update_batch([s.encode() for s in sorted(own)])
        lsh.insert(i, sketch)
        sketches.append(sketch)
    flagged = set()
    for i, sketch in enumerate(sketches):
        for j in lsh.query(sketch):
            if j != i and dedup.jaccard(sets[i], sets[j]) >= dedup.NEAR_DUPLICATE_JACCARD:
                flagged |= {i, j}
    return len(flagged) / len(texts) if texts else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, default=Path("var"))
    args = parser.parse_args()
    con = duckdb.connect(str(args.home / "warehouse.duckdb"), read_only=True)
    q = lambda sql: con.execute(sql).fetchall()  # noqa: E731
    accepted = "FROM environments WHERE status = 'accepted'"
    ((n_envs, n_arch, n_shapes, n_graphs),) = q(
        f"SELECT count(*), count(DISTINCT archetype), count(DISTINCT program_shape), "
        f"count(DISTINCT tool_graph) {accepted}"
    )
    print(f"accepted environments   {n_envs} over {n_arch} archetypes")
    print(f"distinct program shapes {n_shapes}")
    print(f"distinct tool graphs    {n_graphs}")
    print(f"\n{'archetype':<20} {'envs':>5} {'shapes':>7} {'graphs':>7} {'test envs':>10}")
    for row in q(
        "SELECT archetype, count(*), count(DISTINCT program_shape), count(DISTINCT tool_graph), "
        f"count(*) FILTER (WHERE split = 'test') {accepted} GROUP BY 1 ORDER BY 1"
    ):
        print(f"{row[0]:<20} {row[1]:>5} {row[2]:>7} {row[3]:>7} {row[4]:>10}")
    print("\npublished tasks per split")
    for split, n in q(
        "SELECT split, count(*) FROM scenarios WHERE status = 'published' GROUP BY 1 ORDER BY 1"
    ):
        print(f"  {split:<6} {n}")
    print("\nquarantined by task screening")
    for kind, n in q(
        "SELECT reason_kind, count(*) FROM quarantine WHERE stage = 'task_screening' "
        "GROUP BY 1 ORDER BY 1"
    ) or [("none", 0)]:
        print(f"  {kind:<16} {n}")
    texts = [
        r[0]
        for r in q(
            "SELECT task_text FROM scenarios WHERE status = 'published' ORDER BY scenario_id"
        )
    ]
    own = near_duplicate_share(texts, dedup.SHINGLE_WORDS)
    independent = near_duplicate_share(texts, INDEPENDENT_SHINGLE_WORDS)
    print(
        f"\npublished tasks with a near-duplicate (Jaccard >= {dedup.NEAR_DUPLICATE_JACCARD}):"
        f"\n  {dedup.SHINGLE_WORDS}-word shingles (the dedup's)  {own:.2%}"
        f"\n  {INDEPENDENT_SHINGLE_WORDS}-word shingles (independent) {independent:.2%}"
        f"   (goal: at most 1%)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
