"""Whether a project kind's declined twin reads as the kind's feasible requests do.

    python benchmarks/declined_twins.py                       # every kind with a twin
    python benchmarks/declined_twins.py --kinds debug_on,max_workers --topics 8 --states 4

A declined request (synthesis.tasks.projects.scenarios DECLINED) is asked in its feasible
kind's own words, so only the state tells it apart (issue 41: the project family's
request-text tell). For each kind, over the first `--topics` project topics and `--states`
folders each (seeded as a seed-0 build seeds them), this draws `--draws` feasible requests
and as many twins per folder and prints the bag-of-words AUC of telling the twins from the
feasible requests of the same kind (benchmarks/request_tells.py's classifier; 0.5 is a coin
toss, the goal at most 0.65), the n-grams whose share differs most, and how many folders
afford no twin.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from benchmarks.request_tells import GOAL_AUC, cv_auc, telling_ngrams  # noqa: E402
from synthesis.config import DATA_DIR  # noqa: E402
from synthesis.environments.projects.folder import project_folder  # noqa: E402
from synthesis.environments.specgen import generate_spec  # noqa: E402
from synthesis.hashing import derive_seed  # noqa: E402
from synthesis.models import Topic  # noqa: E402
from synthesis.tasks.projects.scenarios import DECLINED, KINDS  # noqa: E402


def _kind_name(kind, project, vocabulary, names: dict) -> str:
    """The name a kind gives its tasks (the same in every folder: made once per kind)."""
    if kind not in names:
        names[kind] = kind(project, vocabulary, random.Random(0)).kind
    return names[kind]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--kinds", default="", help="comma-separated feasible kind names")
    parser.add_argument("--topics", type=int, default=8)
    parser.add_argument("--states", type=int, default=4)
    parser.add_argument("--draws", type=int, default=6)
    parser.add_argument("--top", type=int, default=6)
    args = parser.parse_args()
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topics = [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"]
    wanted = set(filter(None, args.kinds.split(",")))
    texts: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    none: dict[str, int] = defaultdict(int)
    names: dict = {}
    for topic in topics[: args.topics]:
        spec = generate_spec(topic)
        vocabulary = spec.workspace
        for state in range(args.states):
            # Seeded as a build seeds a topic's folders (synthesis.environments.states): the
            # same few seeds in every topic would repeat each seed's draws (its deploy
            # versions) in every topic, and a classifier would learn them by heart.
            seed = derive_seed("initial_state", spec.env_id, 0, state)
            project = project_folder(vocabulary, seed)
            for kind in KINDS:
                name = _kind_name(kind, project, vocabulary, names)
                if (wanted and name not in wanted) or kind not in DECLINED:
                    continue
                for draw in range(args.draws):
                    rng = random.Random(draw)
                    texts[name].append((kind(project, vocabulary, rng).task_text, False))
                    twin = DECLINED[kind](project, vocabulary, random.Random(draw))
                    if twin is None:
                        none[name] += 1
                    else:
                        texts[name].append((twin.task_text, True))
    pooled: list[tuple[str, bool]] = []
    print(f"{'kind':<20} {'feasible':>8} {'twins':>6} {'none':>5} {'AUC':>6}")
    for name, rows in sorted(texts.items()):
        pooled += rows
        n_twins = sum(p for _, p in rows)
        auc = cv_auc([t for t, _ in rows], [p for _, p in rows]) if n_twins >= 5 else float("nan")
        print(f"{name:<20} {len(rows) - n_twins:>8} {n_twins:>6} {none[name]:>5} {auc:>6.3f}")
        for gram, twin_share, feasible_share in telling_ngrams(
            [t for t, _ in rows], [p for _, p in rows]
        )[: args.top]:
            print(f"    {gram!r:<28} twins {twin_share:.2f}  feasible {feasible_share:.2f}")
    if pooled:
        auc = cv_auc([t for t, _ in pooled], [p for _, p in pooled])
        print(f"pooled AUC {auc:.3f} (goal at most {GOAL_AUC})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
