"""What screening compares of a published task, made once per environment and kept.

Screening (synthesis.tasks.screening) holds every published task of a build against every
other (synthesis.tasks.dedup) and against benchmark text (synthesis.tasks.contamination).
What it compares is each task's own: its normalised words, the key of its gold chain and
the MinHash sketch of its text, whose making (every 5-word shingle hashed 128 ways) is most
of screening's time. `TaskFeatures` hold them. An environment's are a pure function of its
published scenarios, so a publish keeps them (`FeatureStore`) and makes them again only for
the environments whose checks changed: a one-topic rebuild of the full profile sketched all
25K tasks again (and parsed 440 MB of checks to do it) for the ~150 of one environment.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from synthesis import forked
from synthesis.hashing import content_hash
from synthesis.models import Scenario
from synthesis.tasks.kept_tables import KeptTables

SHINGLE_WORDS = 5
MINHASH_PERMUTATIONS = 128
# datasketch's permutations come from this seed: fixed, so the sketches are the same in
# every build.
MINHASH_SEED = 1
# datasketch keeps each hash value below 2**32 in a uint64: four bytes of each are stored.
SKETCH_BYTES = 4 * MINHASH_PERMUTATIONS


@dataclass(frozen=True)
class TaskFeatures:
    scenario_id: str
    env_id: str
    task_text: str
    words: tuple[str, ...]  # `words(task_text)`
    chain_key: str  # `chain_key(scenario)`
    sketch: bytes  # the MinHash values of its shingles, MINHASH_PERMUTATIONS uint32s


def words(text: str) -> list[str]:
    """Lower-case words and numbers of `text`, punctuation dropped (NFKC first)."""
    return re.findall(r"[a-z0-9]+", unicodedata.normalize("NFKC", text).lower())


def shingles_of(w: Iterable[str], size: int = SHINGLE_WORDS) -> set[str]:
    """Every run of `size` consecutive words (fewer words are one shingle)."""
    w = list(w)
    if len(w) <= size:
        return {" ".join(w)}
    return {" ".join(w[i : i + size]) for i in range(len(w) - size + 1)}


def chain_key(scenario: Scenario) -> str:
    """Equal for two tasks that make the same calls with the same results (same records)."""
    return content_hash(
        [
            scenario.kind,
            [c.model_dump(mode="json") for c in scenario.gold_chain],
            scenario.gold_results,
        ]
    )


def task_features(scenarios: list[Scenario]) -> list[TaskFeatures]:
    """The features of each scenario, in order. A forked child makes the second half's while
    this process makes the first's (each is the scenario's alone)."""
    from datasketch import MinHash  # numpy and scipy: only when sketching

    # The seed's permutations, drawn once: drawing them per sketch is a third of the time.
    template = MinHash(num_perm=MINHASH_PERMUTATIONS, seed=MINHASH_SEED)

    def make(share: list[Scenario]) -> list[TaskFeatures]:
        out = []
        for scenario in share:
            own = words(scenario.task_text)
            sketch = MinHash(
                num_perm=MINHASH_PERMUTATIONS,
                seed=MINHASH_SEED,
                permutations=template.permutations,
                scheme=template.scheme,
            )
            sketch.update_batch([s.encode() for s in sorted(shingles_of(own))])
            out.append(
                TaskFeatures(
                    scenario_id=scenario.scenario_id,
                    env_id=scenario.env_id,
                    task_text=scenario.task_text,
                    words=tuple(own),
                    chain_key=chain_key(scenario),
                    sketch=sketch.hashvalues.astype(np.uint32).tobytes(),
                )
            )
        return out

    middle = len(scenarios) // 2
    first, second = forked.shared(make, scenarios[:middle], scenarios[middle:])
    return first + second


_SCHEMA = pa.schema(
    [
        ("scenario_id", pa.string()),
        ("env_id", pa.string()),
        ("task_text", pa.string()),
        ("words", pa.list_(pa.string())),
        ("chain_key", pa.string()),
        ("sketch", pa.binary(SKETCH_BYTES)),
    ]
)


class FeatureStore(KeptTables):
    """Each environment's task features, kept under `root` with what they were made from
    (`source`: its checks artifact's data version and the code that makes them). Features
    are handed back only for the exact source they were made from."""

    def __init__(self, root: Path):
        super().__init__(root, _SCHEMA)

    def to_row(self, value: TaskFeatures) -> tuple:
        f = value
        return (f.scenario_id, f.env_id, f.task_text, list(f.words), f.chain_key, f.sketch)

    def from_row(self, row: tuple) -> TaskFeatures:
        sid, env, text, words, key, sketch = row
        return TaskFeatures(sid, env, text, tuple(words), key, sketch)
