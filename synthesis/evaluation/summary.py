"""What an evaluation found, from its episode rows: overall, per archetype, per failure class."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.evaluation.metrics import mean_pass_at_k, mean_pass_hat_k, outcomes_by_task


@dataclass(frozen=True)
class Group:
    """Episodes of one group: how many, how many succeeded, their mean reward."""

    episodes: int
    successes: int
    mean_reward: float

    @property
    def success_rate(self) -> float:
        return self.successes / self.episodes if self.episodes else 0.0

    @classmethod
    def of(cls, rows: Sequence[Mapping[str, Any]]) -> Group:
        n = len(rows)
        return cls(
            episodes=n,
            successes=sum(1 for r in rows if r["success"]),
            mean_reward=sum(float(r["reward"]) for r in rows) / n if n else 0.0,
        )


@dataclass
class Summary:
    overall: Group
    by_archetype: dict[str, Group]
    by_kind: dict[str, Group]
    # synthesized / foreign: the in-distribution score beside transfer to environments
    # brought with --envs (only one key when the dataset has no foreign environment).
    by_origin: dict[str, Group]
    failures: dict[str, int]
    errors: int
    tasks: int
    pass_hat_k: dict[int, float] = field(default_factory=dict)
    pass_at_k: dict[int, float] = field(default_factory=dict)
    tokens: tuple[int, int] = (0, 0)
    cost_usd: float = 0.0


def summarize(rows: Iterable[Mapping[str, Any]]) -> Summary:
    """The summary of episode rows (`eval_episodes` columns: archetype, kind, scenario_id,
    reward, success, failure, error, tokens). pass^k and pass@k for every k up to the
    fewest attempts any task has, when that is more than one."""
    rows = list(rows)
    by_archetype: dict[str, list[Mapping[str, Any]]] = {}
    by_kind: dict[str, list[Mapping[str, Any]]] = {}
    by_origin: dict[str, list[Mapping[str, Any]]] = {}
    for r in rows:
        by_archetype.setdefault(r["archetype"], []).append(r)
        by_kind.setdefault(r["kind"], []).append(r)
        by_origin.setdefault(origin(r), []).append(r)
    outcomes = outcomes_by_task((r["scenario_id"], r["success"]) for r in rows)
    fewest = min((len(v) for v in outcomes.values()), default=0)
    pass_hat = {k: mean_pass_hat_k(outcomes, k) for k in range(1, fewest + 1)} if fewest > 1 else {}
    pass_at = {k: mean_pass_at_k(outcomes, k) for k in range(1, fewest + 1)} if fewest > 1 else {}
    return Summary(
        overall=Group.of(rows),
        by_archetype={a: Group.of(g) for a, g in sorted(by_archetype.items())},
        by_kind={k: Group.of(g) for k, g in sorted(by_kind.items())},
        by_origin={o: Group.of(g) for o, g in sorted(by_origin.items(), reverse=True)},
        failures=dict(Counter(r["failure"] for r in rows).most_common()),
        errors=sum(1 for r in rows if r.get("error")),
        tasks=len(outcomes),
        pass_hat_k={k: v for k, v in pass_hat.items() if v is not None},
        pass_at_k={k: v for k, v in pass_at.items() if v is not None},
        tokens=(
            sum(int(r.get("prompt_tokens") or 0) for r in rows),
            sum(int(r.get("completion_tokens") or 0) for r in rows),
        ),
        cost_usd=sum(float(r.get("cost_usd") or 0.0) for r in rows),
    )


def origin(row: Mapping[str, Any]) -> str:
    """An episode's origin; rows of schema version 1 have none, and there a foreign
    environment is the one whose archetype says so (synthesis/environments/foreign.py)."""
    return row.get("origin") or ("foreign" if row["archetype"] == "foreign" else "synthesized")


def _line(label: str, group: Group, width: int) -> str:
    return (
        f"  {label:<{width}} {group.episodes:>5} episodes  success {group.successes:>4}/"
        f"{group.episodes:<4} {100 * group.success_rate:5.1f}%  mean reward {group.mean_reward:.3f}"
    )


def format_summary(summary: Summary) -> list[str]:
    """The summary as lines of text for the console."""
    if not summary.overall.episodes:
        return ["  no episode recorded"]
    width = max(
        [
            len("overall"),
            *(len(a) for a in summary.by_archetype),
            *map(len, summary.by_kind),
            *map(len, summary.by_origin if len(summary.by_origin) > 1 else ()),
        ]
    )
    lines = [_line("overall", summary.overall, width)]
    lines.append("  by archetype:")
    lines += ["  " + _line(a, g, width) for a, g in summary.by_archetype.items()]
    lines.append("  by kind:")
    lines += ["  " + _line(k, g, width) for k, g in summary.by_kind.items()]
    if len(summary.by_origin) > 1:
        lines.append("  by origin (foreign: environments brought with --envs):")
        lines += ["  " + _line(o, g, width) for o, g in summary.by_origin.items()]
    lines.append(
        "  failures: " + ", ".join(f"{name} {count}" for name, count in summary.failures.items())
    )
    if summary.pass_hat_k:
        lines.append(
            "  pass^k (all k attempts succeed): "
            + ", ".join(f"k={k} {v:.3f}" for k, v in summary.pass_hat_k.items())
        )
        lines.append(
            "  pass@k (one of k succeeds):      "
            + ", ".join(f"k={k} {v:.3f}" for k, v in summary.pass_at_k.items())
        )
    tokens_in, tokens_out = summary.tokens
    lines.append(f"  agent tokens: {tokens_in} in, {tokens_out} out, ${summary.cost_usd:.4f}")
    if summary.errors:
        lines.append(
            f"  {summary.errors} episode(s) ended in an LLM error (counted as failures; the "
            "next eval plays them again)"
        )
    return lines
