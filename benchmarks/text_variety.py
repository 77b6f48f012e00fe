"""How varied task text is, beside text people wrote: gzip ratio and near-duplicates.

    python benchmarks/text_variety.py [--profile default] [--seeds 10]

Task texts come from planning scenarios directly with the engine (no Dagster) for the
profile's topics: per seed, each topic's environment, its initial states (history replayed
in the sandbox) and `plan_scenarios`. Both corpora, ours and the BFCL multi-turn user turns
that bfcl-eval ships, get the same treatment side by side:

* gzip ratio = len(s) / len(gzip(s, level 9)), where s is the texts of one seed (BFCL: the
  turns shuffled with that seed), names, emails, ids, numbers and dates replaced by
  placeholders, joined until 20,000 characters; the mean over the seeds. Lower is more
  varied; the goal is ours ≤ 1.15 × BFCL.
* near-duplicates: an independent MinHash LSH scan (datasketch, word 3-shingles where the
  dedup stage uses 5; Jaccard ≥ 0.8) over each seed's placeholder texts; the share of texts
  that have a near-duplicate earlier in the same seed. The goal is at most 1%.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import re
import statistics
import sys
import time
from importlib import resources
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from synthesis.config import get_profile  # noqa: E402
from synthesis.environments.archetypes import supported_archetypes  # noqa: E402
from synthesis.environments.build import build_environment  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.environments.states import build_initial_state  # noqa: E402
from synthesis.environments.topics import load_catalogue, select_topics  # noqa: E402
from synthesis.tasks.scenarios import plan_scenarios  # noqa: E402

SAMPLE_CHARS = 20_000
GOAL_RATIO = 1.15
GOAL_NEAR_DUPLICATES = 0.01
SHINGLE_WORDS = 3
JACCARD = 0.8
NUM_PERM = 128

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
# Order matters: the most specific shapes first, so a date is not eaten as numbers.
_PLACEHOLDERS: list[tuple[re.Pattern[str], str]] = [
    (re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"), "<EMAIL>"),
    (re.compile(r"\b\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?\b"), "<DATE>"),
    (
        re.compile(
            rf"\b(?:(?:{_WEEKDAYS}),?\s+)?(?:(?:the\s+)?\d{{1,2}}(?:st|nd|rd|th)?(?:\s+of)?\s+"
            rf"(?:{_MONTHS})\b|(?:{_MONTHS})\s+\d{{1,2}}(?:st|nd|rd|th)?\b)(?:,?\s+\d{{4}})?",
            re.IGNORECASE,
        ),
        "<DATE>",
    ),
    (re.compile(rf"\b(?:{_WEEKDAYS})\b", re.IGNORECASE), "<DATE>"),
    (
        re.compile(r"\b\d{1,2}(?::\d{2})?\s*(?:am|pm|a\.m\.|p\.m\.)|\b\d{1,2}:\d{2}\b", re.I),
        "<TIME>",
    ),
    # Ids: codes that mix letters and digits (ORD-0001, A12, 3f9c...).
    (re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w]+(?:-[\w]+)*\b"), "<ID>"),
    (re.compile(r"[$€£]?\d[\d,]*(?:\.\d+)?%?"), "<NUM>"),
    # Quoted text is a name of something (a file, a title, a message).
    (re.compile(r"\"[^\"\n]{1,80}\"|(?<![\w])'[^'\n]{1,80}'(?![\w])"), "<NAME>"),
    # Capitalised words inside a sentence are names (people, products, places).
    (
        # A word may hold inner dots ("No.6") but a name never runs across a full stop, and
        # "of"/"de"/"van" join two capitalised words only ("Bank of Spain", not "Lee off").
        re.compile(
            r"(?<=[a-z,;:()] )(?!I\b|I')[A-Z][\w'-]*(?:\.\w+)*"
            r"(?:(?:\s+(?:of|de|van))?\s+[A-Z][\w'-]*(?:\.\w+)*)*"
        ),
        "<NAME>",
    ),
]


def placeholders(text: str) -> str:
    """`text` with names, emails, ids, numbers and dates replaced by placeholders."""
    for pattern, repl in _PLACEHOLDERS:
        text = pattern.sub(repl, text)
    return text


def gzip_ratio(texts: list[str]) -> float:
    """len(s) / len(gzip(s, 9)) of the texts joined (one per line) until SAMPLE_CHARS."""
    joined = ""
    for t in texts:
        if len(joined) >= SAMPLE_CHARS:
            break
        joined += t + "\n"
    data = joined[:SAMPLE_CHARS].encode()
    return len(data) / len(gzip.compress(data, compresslevel=9, mtime=0))


def near_duplicate_share(texts: list[str]) -> float:
    """Share of texts with a near-duplicate earlier in `texts` (MinHash LSH, word shingles)."""
    from datasketch import MinHash, MinHashLSH

    lsh = MinHashLSH(threshold=JACCARD, num_perm=NUM_PERM)
    dupes = 0
    for i, text in enumerate(texts):
        words = re.findall(r"[\w<>']+", text.lower())
        shingles = {" ".join(words[j : j + SHINGLE_WORDS]) for j in range(len(words))}
        m = MinHash(num_perm=NUM_PERM, seed=1)
        for s in sorted(shingles):
            m.update(s.encode())
        if lsh.query(m):
            dupes += 1
        lsh.insert(str(i), m)
    return dupes / max(1, len(texts))


def bfcl_user_turns() -> list[str]:
    """Every user turn of the multi-turn question files bfcl-eval ships (distinct, in order)."""
    data = resources.files("bfcl_eval") / "data"
    turns: list[str] = []
    for entry in sorted(data.iterdir(), key=lambda p: p.name):
        if not (entry.name.startswith("BFCL_") and "multi_turn" in entry.name):
            continue
        for line in entry.read_text().splitlines():
            if not line.strip():
                continue
            for turn in json.loads(line)["question"]:
                turns += [m["content"].strip() for m in turn if m.get("role") == "user"]
    return [t for t in dict.fromkeys(turns) if t]


def our_task_texts(profile_name: str, seed: int) -> list[str]:
    """Task texts of one build seed, planned directly for the profile's topics (in order)."""
    profile = get_profile(profile_name)
    topics = select_topics(load_catalogue(), supported_archetypes(), profile.max_topics)
    texts: list[str] = []
    for topic in topics:
        env = build_environment(generate_spec(topic))
        for index in range(profile.initial_states_per_env):
            state = build_initial_state(
                env, seed=seed, index=index, records_per_entity=profile.records_per_entity
            )
            per_state = max(1, profile.scenarios_per_env // profile.initial_states_per_env)
            for s in plan_scenarios(
                env,
                state,
                seed=seed,
                count=per_state,
                max_chain_length=profile.max_chain_length,
            ):
                texts.append(s.task_text)
    return texts


def measure(corpora: dict[int, list[str]]) -> tuple[float, float, int]:
    """Mean gzip ratio, mean near-duplicate share and total texts over the seeds' corpora."""
    ratios, dupes = [], []
    for seed, texts in sorted(corpora.items()):
        shuffled = [placeholders(t) for t in texts]
        random.Random(seed).shuffle(shuffled)
        ratios.append(gzip_ratio(shuffled))
        dupes.append(near_duplicate_share(shuffled))
    return statistics.mean(ratios), statistics.mean(dupes), sum(map(len, corpora.values()))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", default="default")
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1")
    parser.add_argument("--show", type=int, default=0, help="print N of our texts of seed 0")
    args = parser.parse_args()

    started = time.perf_counter()
    ours = {seed: our_task_texts(args.profile, seed) for seed in range(args.seeds)}
    planning = time.perf_counter() - started
    bfcl_turns = bfcl_user_turns()
    bfcl = {seed: bfcl_turns for seed in range(args.seeds)}

    our_ratio, our_dupes, n_ours = measure(ours)
    bfcl_ratio, bfcl_dupes, _ = measure(bfcl)
    for text in ours[0][: args.show]:
        print(f"  {text}\n    -> {placeholders(text)}")
    print(
        f"task text variety, profile {args.profile}, seeds 0-{args.seeds - 1} "
        f"({n_ours} texts of ours planned in {planning:.0f} s; {len(bfcl_turns)} BFCL turns)"
    )
    relative = our_ratio / bfcl_ratio
    print(f"{'':28}{'ours':>10}{'BFCL':>10}{'ours/BFCL':>12}{'goal':>10}")
    # Three decimals: a ratio just over the goal must not print as the goal itself.
    print(
        f"{'gzip ratio (placeholders)':28}{our_ratio:>10.3f}{bfcl_ratio:>10.3f}"
        f"{relative:>12.3f}{'<= ' + str(GOAL_RATIO):>10}  {_verdict(relative <= GOAL_RATIO)}"
    )
    print(
        f"{'near-duplicates (MinHash 3)':28}{our_dupes:>10.1%}{bfcl_dupes:>10.1%}"
        f"{'':>12}{'<= 1%':>10}  {_verdict(our_dupes <= GOAL_NEAR_DUPLICATES)}"
    )


def _verdict(met: bool) -> str:
    return "met" if met else "NOT MET"


if __name__ == "__main__":
    main()
