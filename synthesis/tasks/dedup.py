"""Near-duplicate tasks across the whole build: the same work, or nearly the same words.

Two tasks are duplicates when their gold chains make the same calls with the same results
(the same work on the same records) and they are of the same kind, or when their texts are
near-identical: Jaccard similarity of their 5-word shingles at least
`NEAR_DUPLICATE_JACCARD`, candidates found by MinHash LSH (datasketch's sketches, banded as
its MinHashLSH bands them) and confirmed on the exact shingle sets, so the verdict does not
rest on the sketch's estimate. Tasks are visited in a fixed order (environment id, scenario
id); the first of a group is kept and every later one names it in its reason. Every task's
key, shingles and sketch are made first, a chain copy's too (they are the time; the visit
after them is dictionary lookups).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable

from synthesis import forked
from synthesis.hashing import content_hash
from synthesis.models import Scenario

SHINGLE_WORDS = 5
NEAR_DUPLICATE_JACCARD = 0.8
# LSH finds candidates at a lower bar than the verdict's: tuned for 0.8 itself it would miss
# about 60% of pairs at exactly 0.8 (9 bands of 13 rows); at 0.5 (25 bands of 5) it misses
# almost none above 0.7, and the exact check throws the extra candidates out.
CANDIDATE_JACCARD = 0.5
MINHASH_PERMUTATIONS = 128
# datasketch's permutations come from this seed: fixed, so the candidates are the same in
# every build.
MINHASH_SEED = 1


def words(text: str) -> list[str]:
    """Lower-case words and numbers of `text`, punctuation dropped (NFKC first)."""
    return re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).lower())


def shingles(text: str, size: int = SHINGLE_WORDS) -> set[str]:
    """Every run of `size` consecutive words (a shorter text is one shingle)."""
    w = words(text)
    if len(w) <= size:
        return {" ".join(w)}
    return {" ".join(w[i : i + size]) for i in range(len(w) - size + 1)}


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a or b else 1.0


def chain_key(scenario: Scenario) -> str:
    """Equal for two tasks that make the same calls with the same results (same records)."""
    return content_hash(
        [
            scenario.kind,
            [c.model_dump(mode="json") for c in scenario.gold_chain],
            scenario.gold_results,
        ]
    )


def duplicate_reasons(scenarios: Iterable[Scenario]) -> dict[str, str]:
    """Scenario id → why it is a duplicate (of which kept scenario), for every duplicate."""
    ordered = sorted(scenarios, key=lambda s: (s.env_id, s.scenario_id))
    ranges = _band_ranges()
    features = _features(ordered, ranges)
    # The LSH index: per band, the kept scenarios whose sketch has that band's values.
    buckets: list[dict[bytes, list[str]]] = [{} for _ in ranges]
    first_of_chain: dict[str, Scenario] = {}
    kept: dict[str, tuple[int, Scenario, set[str]]] = {}
    reasons: dict[str, str] = {}
    for order, scenario in enumerate(ordered):
        if scenario.scenario_id in kept or scenario.scenario_id in reasons:
            continue
        key, own, bands = features[order]
        first = first_of_chain.get(key)
        if first is not None:
            reasons[scenario.scenario_id] = (
                f"duplicate: same gold chain on the same records as scenario "
                f"{first.scenario_id} ({first.env_id})"
            )
            continue
        candidates = {
            c for bucket, band in zip(buckets, bands, strict=True) for c in bucket.get(band, ())
        }
        similar = []
        for candidate in candidates:
            rank, other, other_shingles = kept[candidate]
            similarity = jaccard(own, other_shingles)
            if similarity >= NEAR_DUPLICATE_JACCARD:
                similar.append((rank, other, similarity))
        if similar:
            _, other, similarity = min(similar, key=lambda item: item[0])
            reasons[scenario.scenario_id] = (
                f"near_duplicate: task text {similarity:.2f} similar to scenario "
                f"{other.scenario_id} ({other.env_id}) (Jaccard of {SHINGLE_WORDS}-word shingles)"
            )
            continue
        first_of_chain[key] = scenario
        kept[scenario.scenario_id] = (order, scenario, own)
        for bucket, band in zip(buckets, bands, strict=True):
            bucket.setdefault(band, []).append(scenario.scenario_id)
    return reasons


def _band_ranges() -> list[tuple[int, int]]:
    """The sketch's bands as datasketch's MinHashLSH picks them for CANDIDATE_JACCARD (the
    bands minimising its false positives and negatives there): two sketches are candidates
    when all values of one band agree."""
    from datasketch import MinHashLSH

    lsh = MinHashLSH(threshold=CANDIDATE_JACCARD, num_perm=MINHASH_PERMUTATIONS)
    return list(lsh.hashranges)


def _features(
    ordered: list[Scenario], ranges: list[tuple[int, int]]
) -> list[tuple[str, set[str], list[bytes]]]:
    """(chain key, shingles, its sketch's band keys) of each scenario, in order. Each is the
    scenario's alone, and most of deduplicating's time (hashing every shingle 128 ways), so a
    forked child makes the second half's while this process makes the first's."""
    from datasketch import MinHash  # numpy and scipy: only when deduplicating

    # The seed's permutations, drawn once: drawing them per sketch is a third of the time.
    template = MinHash(num_perm=MINHASH_PERMUTATIONS, seed=MINHASH_SEED)

    def make(share: list[Scenario]) -> list[tuple[str, set[str], list[bytes]]]:
        out = []
        for scenario in share:
            own = shingles(scenario.task_text)
            sketch = MinHash(
                num_perm=MINHASH_PERMUTATIONS,
                seed=MINHASH_SEED,
                permutations=template.permutations,
                scheme=template.scheme,
            )
            sketch.update_batch([s.encode() for s in sorted(own)])
            values = sketch.hashvalues
            out.append((chain_key(scenario), own, [values[a:b].tobytes() for a, b in ranges]))
        return out

    middle = len(ordered) // 2
    first, second = forked.shared(make, ordered[:middle], ordered[middle:])
    return first + second
