"""Whether a request's words alone give away that it is infeasible (a guard will refuse it).

    python benchmarks/request_tells.py --home DIR
    python benchmarks/request_tells.py --plan full --topics 24   # planned directly, no build

An infeasible task is worth training on only if the agent has to find out, from the state,
that the request breaks a rule; a clause that only infeasible requests carry ("if it won't go
through, tell me why") lets a policy decline on the words instead. The measure: a bag-of-words
classifier (lower-cased unigrams and bigrams, punctuation kept as tokens so a bracketed or
dashed clause counts; binarised multinomial naive Bayes in numpy) trained and scored on 5
stratified folds fixed by a seed, its mean ROC AUC over the folds, beside the n-grams whose
share differs most between the two kinds. 0.5 is a coin toss; the goal is at most 0.65.
Beside it, two lines that tell the words from the task's size: the AUC of text length alone
(a task asking for more is longer), and the classifier's AUC among single-change requests
only (every infeasible task asks for exactly one change today; most feasible ones for more).

`--home` reads a finished build's published scenarios; `--plan` plans the profile's topics
in-process (as benchmarks/text_variety.py does), for profiles too large to build here.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import statistics
import sys
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np

GOAL_AUC = 0.65
FOLDS = 5
SEED = 0
# An n-gram seen in fewer training requests than this says nothing general (a name, a value).
MIN_DOCS = 2

_TOKEN = re.compile(r"[^\W_]+(?:'[^\W_]+)?|[^\w\s]")


def ngrams(text: str) -> frozenset[str]:
    """The lower-cased unigrams and bigrams of `text` (each once: presence, not counts)."""
    tokens = _TOKEN.findall(text.lower())
    return frozenset(tokens) | frozenset(map(" ".join, itertools.pairwise(tokens)))


def roc_auc(scores: Sequence[float], positive: Sequence[bool]) -> float:
    """The probability that a random positive scores above a random negative (ties half)."""
    s = np.asarray(scores, dtype=float)
    y = np.asarray(positive, dtype=bool)
    n_pos, n_neg = int(y.sum()), int((~y).sum())
    if not n_pos or not n_neg:
        raise ValueError("an AUC needs both positives and negatives")
    _, inverse, counts = np.unique(s, return_inverse=True, return_counts=True)
    # Tied scores share the mean of the ranks they span (1-based).
    mean_rank = np.cumsum(counts) - (counts - 1) / 2
    ranks = mean_rank[inverse]
    return float((ranks[y].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg))


def _naive_bayes_scores(
    train: list[frozenset[str]], labels: list[bool], test: list[frozenset[str]]
) -> np.ndarray:
    """Log-likelihood ratios (positive over negative) of the test requests, by a binarised
    multinomial naive Bayes with add-one smoothing fitted on the training requests."""
    df = Counter(g for doc in train for g in doc)
    vocab = {g: i for i, g in enumerate(sorted(g for g, n in df.items() if n >= MIN_DOCS))}
    counts = np.zeros((2, len(vocab)))
    for doc, label in zip(train, labels, strict=True):
        counts[int(label), [vocab[g] for g in doc if g in vocab]] += 1
    log_p = np.log(counts + 1) - np.log(counts.sum(axis=1, keepdims=True) + len(vocab))
    weight = log_p[1] - log_p[0]
    return np.array([weight[[vocab[g] for g in doc if g in vocab]].sum() for doc in test])


def fold_of(positive: Sequence[bool], folds: int = FOLDS, seed: int = SEED) -> list[int]:
    """Each request's fold: stratified (each kind dealt round the folds after a seeded
    shuffle), so the split is fixed by the input order and the seed."""
    rng = random.Random(seed)
    out = [0] * len(positive)
    for kind in (True, False):
        members = [i for i, p in enumerate(positive) if p == kind]
        if len(members) < folds:
            raise ValueError(f"{len(members)} requests of one kind cannot fill {folds} folds")
        rng.shuffle(members)
        for j, i in enumerate(members):
            out[i] = j % folds
    return out


def fold_aucs(
    texts: Sequence[str], positive: Sequence[bool], folds: int = FOLDS, seed: int = SEED
) -> list[float]:
    """The held-out AUC of each fold of a cross-validated bag-of-words classifier."""
    docs = [ngrams(t) for t in texts]
    labels = [bool(p) for p in positive]
    fold = fold_of(labels, folds, seed)
    aucs = []
    for k in range(folds):
        train = [i for i, f in enumerate(fold) if f != k]
        test = [i for i, f in enumerate(fold) if f == k]
        scores = _naive_bayes_scores(
            [docs[i] for i in train], [labels[i] for i in train], [docs[i] for i in test]
        )
        aucs.append(roc_auc(scores, [labels[i] for i in test]))
    return aucs


def cv_auc(
    texts: Sequence[str], positive: Sequence[bool], folds: int = FOLDS, seed: int = SEED
) -> float:
    """Mean held-out AUC of telling `positive` texts from the rest by their words alone."""
    return statistics.fmean(fold_aucs(texts, positive, folds, seed))


def telling_ngrams(
    texts: Sequence[str], positive: Sequence[bool], min_docs: int = 3
) -> list[tuple[str, float, float]]:
    """(n-gram, share of positive texts holding it, share of negative ones), the largest
    gap first; n-grams in fewer than `min_docs` texts are left out."""
    pos = Counter(g for t, p in zip(texts, positive, strict=True) if p for g in ngrams(t))
    neg = Counter(g for t, p in zip(texts, positive, strict=True) if not p for g in ngrams(t))
    n_pos = max(1, sum(map(bool, positive)))
    n_neg = max(1, len(positive) - sum(map(bool, positive)))
    rows = [
        (g, pos[g] / n_pos, neg[g] / n_neg)
        for g in pos.keys() | neg.keys()
        if pos[g] + neg[g] >= min_docs
    ]
    return sorted(rows, key=lambda r: (-abs(r[1] - r[2]), r[0]))


class Request(NamedTuple):
    text: str
    infeasible: bool
    # Asks for exactly one change and no question or condition, as every infeasible task does
    # today: comparing only these weighs the words, not how much a task asks for.
    single_change: bool


def _request(text: str, kind: str, provenance: dict[str, Any]) -> Request:
    changes = sum(role in ("mutation", "refused") for role in provenance.get("roles", []))
    plain = provenance.get("family") not in ("ask", "conditional")
    return Request(text, kind == "infeasible", changes == 1 and plain)


def home_requests(home: Path) -> list[Request]:
    """A build's published scenarios as requests, in scenario-id order."""
    import duckdb

    with duckdb.connect(str(home / "warehouse.duckdb"), read_only=True) as con:
        rows = con.execute(
            "select task_text, kind, provenance_json from scenarios where status = 'published' "
            "order by scenario_id"
        ).fetchall()
    return [_request(text, kind, json.loads(provenance)) for text, kind, provenance in rows]


def planned_requests(profile_name: str, topics: int | None, seed: int) -> list[Request]:
    """Requests planned in-process for the profile's first `topics` topics."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from synthesis.config import get_profile
    from synthesis.environments.archetypes import supported_archetypes
    from synthesis.environments.build import build_environment
    from synthesis.environments.specgen import generate_spec
    from synthesis.environments.states import build_initial_state
    from synthesis.environments.topics import load_catalogue, select_topics
    from synthesis.tasks.scenarios import plan_scenarios

    profile = get_profile(profile_name)
    chosen = select_topics(load_catalogue(), supported_archetypes(), profile.max_topics)
    out = []
    for topic in chosen[:topics]:
        env = build_environment(generate_spec(topic))
        for index in range(profile.initial_states_per_env):
            state = build_initial_state(
                env, seed=seed, index=index, records_per_entity=profile.records_per_entity
            )
            for s in plan_scenarios(
                env,
                state,
                seed=seed,
                count=max(1, profile.scenarios_per_env // profile.initial_states_per_env),
                max_chain_length=profile.max_chain_length,
            ):
                out.append(_request(s.task_text, s.kind, s.provenance))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--home", type=Path, help="a finished build's home")
    source.add_argument("--plan", metavar="PROFILE", help="plan this profile's topics directly")
    parser.add_argument("--topics", type=int, default=None, help="with --plan: the first N")
    parser.add_argument("--seed", type=int, default=0, help="with --plan: the build seed")
    parser.add_argument("--top", type=int, default=12)
    args = parser.parse_args()
    if args.home is not None:
        requests, where = home_requests(args.home), f"published scenarios of {args.home}"
    else:
        requests = planned_requests(args.plan, args.topics, args.seed)
        where = f"planned, profile {args.plan}, topics {args.topics or 'all'}, seed {args.seed}"
    texts = [r.text for r in requests]
    infeasible = [r.infeasible for r in requests]
    n_inf = sum(infeasible)
    print(f"request tells: {where}: {n_inf} infeasible / {len(texts) - n_inf} feasible")
    if min(n_inf, len(texts) - n_inf) < FOLDS:
        print(f"  too few requests of one kind for {FOLDS} folds: nothing to measure")
        return 1
    aucs = fold_aucs(texts, infeasible)
    auc = statistics.fmean(aucs)
    print(
        f"  bag-of-words AUC, infeasible vs feasible ({FOLDS} folds): {auc:.3f} "
        f"(folds {' '.join(f'{a:.2f}' for a in aucs)}); goal <= {GOAL_AUC}: "
        f"{'met' if auc <= GOAL_AUC else 'NOT met'}"
    )
    # Beside it, what the words cannot help: a shorter text asks for less, and every
    # infeasible task asks for exactly one change.
    by_length = roc_auc([-len(t) for t in texts], infeasible)
    print(f"  text length alone, shorter = infeasible: AUC {by_length:.3f}")
    single = [r for r in requests if r.single_change]
    n_single = sum(r.infeasible for r in single)
    try:
        single_auc = f"{cv_auc([r.text for r in single], [r.infeasible for r in single]):.3f}"
    except ValueError:
        single_auc = "n/a (too few of one kind)"
    print(
        f"  single-change requests only ({n_single} infeasible / {len(single) - n_single} "
        f"feasible): bag-of-words AUC {single_auc}"
    )
    rows = telling_ngrams(texts, infeasible)
    for title, side in (("infeasible", True), ("feasible", False)):
        print(f"  most telling of {title} (share in infeasible / feasible):")
        shown = [r for r in rows if (r[1] > r[2]) == side][: args.top]
        for gram, p, q in shown:
            print(f"    {gram!r:32} {p:6.1%} / {q:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
