"""Difficulty tiers read off a task's structure, before any agent attempts it.

What makes a task hard for an agent, as counted from its plan:
- `steps`: gold tool calls; every call is a chance to err.
- `hidden_lookups`: lookups that take an id an earlier step revealed (list the customer's
  orders, read the product an order points at): the agent must chain reads, not only call
  a finder with the words of the task.
- `decoys`: records the agent must tell apart from the one meant (siblings in a listing,
  values that must not appear in the reply).
- `conditionals`: reads that decide what to do.
- `infeasible`: whether the right move is to refuse and say why.

`tier` is a pure function of these counts: a weighted score cut into four bands.

The structural tier is known when the task is planned; the task's final tier also weighs
k seeded attempts of the guesser (`synthesis.rollouts.guesser`), which exist only once
trajectories have run. `final_tier` is the rule: the structural tier moves one band
easier when every attempt solved the task, one band harder when none did, and stays put
with mixed results or no attempts. Structure says where a task should sit; the attempts
correct it only when they agree with each other. The training shards' task records carry
it (`with_attempts`), and the dbt mart `mart_task_difficulty` computes the same rule
(macro `final_tier`); a test holds the two together.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

Tier = Literal["easy", "medium", "hard", "expert"]

# Points per structural feature. A hidden lookup or a decoy costs about as much as two plain
# steps (it is where agents go wrong); refusing correctly goes against an agent's grain.
WEIGHTS = {"step": 1.0, "hidden_lookup": 1.0, "decoy": 1.0, "conditional": 2.0, "infeasible": 3.0}
# The policy whose seeded attempts rate a task (synthesis.rollouts.guesser).
DIFFICULTY_POLICY = "guesser"
# Upper score bounds of easy, medium and hard; anything above is expert.
BANDS = (5.0, 9.0, 13.0)
TIERS: tuple[Tier, ...] = ("easy", "medium", "hard", "expert")


def structure_score(
    steps: int, hidden_lookups: int, decoys: int, conditionals: int, infeasible: bool
) -> float:
    """The weighted sum of a task's structural features (decoys count up to 3)."""
    return (
        WEIGHTS["step"] * steps
        + WEIGHTS["hidden_lookup"] * hidden_lookups
        + WEIGHTS["decoy"] * min(decoys, 3)
        + WEIGHTS["conditional"] * conditionals
        + WEIGHTS["infeasible"] * (1 if infeasible else 0)
    )


def tier(steps: int, hidden_lookups: int, decoys: int, conditionals: int, infeasible: bool) -> Tier:
    """`easy` up to 5 points, `medium` up to 9, `hard` up to 13, `expert` above."""
    score = structure_score(steps, hidden_lookups, decoys, conditionals, infeasible)
    for bound, name in zip(BANDS, TIERS, strict=False):
        if score <= bound:
            return name
    return TIERS[-1]


def difficulty_record(
    *,
    steps: int,
    n_mutations: int,
    n_lookups: int,
    hidden_lookups: int,
    decoys: int,
    conditionals: int,
    infeasible: bool,
) -> dict[str, Any]:
    """The `difficulty` dict every scenario carries (keys sorted by the JSON codec)."""
    return {
        "chain_length": steps,
        "steps": steps,
        "n_mutations": n_mutations,
        "n_lookups": n_lookups,
        "hidden_lookups": hidden_lookups,
        "decoys": decoys,
        "conditionals": conditionals,
        "infeasible": infeasible,
        "score": structure_score(steps, hidden_lookups, decoys, conditionals, infeasible),
        "tier": tier(steps, hidden_lookups, decoys, conditionals, infeasible),
    }


def final_tier(structural: Tier, attempts: int, solved: int) -> Tier:
    """The structural tier moved by the guesser's attempts: one band easier when all
    `attempts` solved it, one harder when none did, unchanged otherwise (or with none)."""
    index = TIERS.index(structural)
    if attempts > 0 and solved == attempts:
        index = max(0, index - 1)
    elif attempts > 0 and solved == 0:
        index = min(len(TIERS) - 1, index + 1)
    return TIERS[index]


def with_attempts(difficulty: dict[str, Any], outcomes: Sequence[bool]) -> dict[str, Any]:
    """A scenario's `difficulty` dict plus its baseline attempts (how many, the share
    solved) and its `final_tier`; `tier` stays the structural tier."""
    attempts, solved = len(outcomes), sum(1 for ok in outcomes if ok)
    # Every planner writes a structural tier; a record without one has no final tier
    # either (the mart's rule says the same), rather than one made up here.
    structural = difficulty.get("tier")
    return {
        **difficulty,
        "baseline_attempts": attempts,
        "baseline_solve_rate": round(solved / attempts, 6) if attempts else None,
        "final_tier": final_tier(structural, attempts, solved) if structural else None,
    }
