"""Near-duplicate tasks across the whole build: the same work, or nearly the same words.

Two tasks are duplicates when their gold chains make the same calls with the same results
(the same work on the same records) and they are of the same kind, or when their texts are
near-identical: Jaccard similarity of their 5-word shingles at least
`NEAR_DUPLICATE_JACCARD`, candidates found by MinHash LSH (datasketch's sketches, banded as
its MinHashLSH bands them) and confirmed on the exact shingle sets, so the verdict does not
rest on the sketch's estimate. Tasks are visited in a fixed order (environment id, scenario
id); the first of a group is kept and every later one names it in its reason. The visit
works on each task's features (synthesis.tasks.task_features: its key, words and sketch,
made once per environment); after them it is dictionary lookups.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable

from synthesis.models import Scenario
from synthesis.tasks.task_features import (
    MINHASH_PERMUTATIONS,
    SHINGLE_WORDS,
    TaskFeatures,
    shingles_of,
    task_features,
    words,
)

NEAR_DUPLICATE_JACCARD = 0.8
# LSH finds candidates at a lower bar than the verdict's: tuned for 0.8 itself it would miss
# about 60% of pairs at exactly 0.8 (9 bands of 13 rows); at 0.5 (25 bands of 5) it misses
# almost none above 0.7, and the exact check throws the extra candidates out.
CANDIDATE_JACCARD = 0.5


def shingles(text: str, size: int = SHINGLE_WORDS) -> set[str]:
    """Every run of `size` consecutive words of `text` (a shorter text is one shingle)."""
    return shingles_of(words(text), size)


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def duplicate_reasons(scenarios: Iterable[Scenario]) -> dict[str, str]:
    """Scenario id → why it is a duplicate (of which kept scenario), for every duplicate."""
    return duplicates_among(task_features(list(scenarios)))


def duplicates_among(features: Iterable[TaskFeatures]) -> dict[str, str]:
    """`duplicate_reasons` of the tasks these features are of."""
    ordered = sorted(features, key=lambda f: (f.env_id, f.scenario_id))
    # A band's key: its bytes of the sketch (equal bytes, equal values).
    ranges = [(4 * a, 4 * b) for a, b in _band_ranges()]
    # The LSH index: per band, the kept scenarios whose sketch has that band's values.
    buckets: list[dict[bytes, list[str]]] = [{} for _ in ranges]
    first_of_chain: dict[str, TaskFeatures] = {}
    kept: dict[str, tuple[int, TaskFeatures]] = {}
    # Shingle sets only of tasks that meet a candidate: most of a build's meet none.
    shingled: dict[str, set[str]] = {}

    def shingles_of_task(task: TaskFeatures) -> set[str]:
        if task.scenario_id not in shingled:
            shingled[task.scenario_id] = shingles_of(task.words)
        return shingled[task.scenario_id]

    reasons: dict[str, str] = {}
    for order, task in enumerate(ordered):
        if task.scenario_id in kept or task.scenario_id in reasons:
            continue
        first = first_of_chain.get(task.chain_key)
        if first is not None:
            reasons[task.scenario_id] = (
                f"duplicate: same gold chain on the same records as scenario "
                f"{first.scenario_id} ({first.env_id})"
            )
            continue
        sketch = task.sketch
        bands = [sketch[a:b] for a, b in ranges]
        candidates = {
            c for bucket, band in zip(buckets, bands, strict=True) for c in bucket.get(band, ())
        }
        similar = []
        for candidate in candidates:
            rank, other = kept[candidate]
            similarity = jaccard(shingles_of_task(task), shingles_of_task(other))
            if similarity >= NEAR_DUPLICATE_JACCARD:
                similar.append((rank, other, similarity))
        if similar:
            _, other, similarity = min(similar, key=lambda item: item[0])
            reasons[task.scenario_id] = (
                f"near_duplicate: task text {similarity:.2f} similar to scenario "
                f"{other.scenario_id} ({other.env_id}) (Jaccard of {SHINGLE_WORDS}-word shingles)"
            )
            continue
        first_of_chain[task.chain_key] = task
        kept[task.scenario_id] = (order, task)
        for bucket, band in zip(buckets, bands, strict=True):
            bucket.setdefault(band, []).append(task.scenario_id)
    return reasons


@functools.cache
def _band_ranges() -> tuple[tuple[int, int], ...]:
    """The sketch's bands as datasketch's MinHashLSH picks them for CANDIDATE_JACCARD (the
    bands minimising its false positives and negatives there): two sketches are candidates
    when all values of one band agree."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=CANDIDATE_JACCARD, num_perm=MINHASH_PERMUTATIONS)
    return tuple(lsh.hashranges)
