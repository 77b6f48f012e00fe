"""The reward audit the dataset card publishes: what the proofs measured, in figures.

For every candidate task the self-test played the shortcuts a policy trained on the reward
would try (synthesis/tasks/shortcuts.py) and the correct alternatives a right agent might
give (synthesis/rollouts/alternatives.py). A task ships only when every shortcut earns 0 and
every alternative 1, so on the published tasks those rates are 0 by construction; the rates on
the candidates show what the screen caught. Read from the warehouse (`check_selftests` joined
with `scenarios`), so the figures are the build's own.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from synthesis import codec
from synthesis.tasks.shortcuts import SHORTCUTS

TASK_KINDS = ("feasible", "question", "infeasible")


@dataclass
class RewardAudit:
    candidates: Counter[str] = field(default_factory=Counter)
    """task kind → candidate tasks with a self-test."""
    published: Counter[str] = field(default_factory=Counter)
    shortcut_paid: dict[str, Counter[str]] = field(default_factory=dict)
    """shortcut → task kind → candidates it earned a reward on."""
    shortcut_played: dict[str, Counter[str]] = field(default_factory=dict)
    shortcut_paid_published: Counter[str] = field(default_factory=Counter)
    alternatives: Counter[str] = field(default_factory=Counter)
    """"played" / "failed" on the candidates, "published_failed" on the published tasks."""
    proofs: dict[str, float] = field(default_factory=dict)

    @property
    def false_negative_rate(self) -> float:
        played = self.alternatives["played"]
        return self.alternatives["failed"] / played if played else 0.0


def task_kind(kind: str, provenance: dict[str, Any]) -> str:
    """'infeasible', 'question' (a feasible task whose reply is graded) or 'feasible'."""
    if kind == "infeasible":
        return "infeasible"
    return "question" if (provenance or {}).get("reply") else "feasible"


def reward_audit_from_warehouse(con: Any) -> RewardAudit | None:
    """The audit of the self-tests the warehouse holds (None when it holds none: shards
    written from records alone say nothing they did not measure)."""
    rows = con.execute(
        "SELECT s.kind, s.status, s.provenance_json, t.shortcut_rewards_json, "
        "t.alternative_rewards_json, t.gold_pass, t.noop_fail, t.deterministic, "
        "t.mutation_kill_rate, t.n_mutants "
        "FROM scenarios s JOIN check_selftests t USING (scenario_id)"
    ).fetchall()
    if not rows:
        return None
    audit = RewardAudit()
    kill_rates: list[float] = []
    for kind, status, provenance, shortcuts, alternatives, gold, noop, same, kill, n in rows:
        what = task_kind(kind, codec.loads(provenance))
        published = status == "published"
        audit.candidates[what] += 1
        audit.published[what] += published
        for name, reward in sorted(codec.loads(shortcuts or "{}").items()):
            audit.shortcut_played.setdefault(name, Counter())[what] += 1
            audit.shortcut_paid.setdefault(name, Counter())[what] += reward > 0
            audit.shortcut_paid_published[name] += published and reward > 0
        for reward in codec.loads(alternatives or "{}").values():
            audit.alternatives["played"] += 1
            audit.alternatives["failed"] += reward < 1
            audit.alternatives["published_played"] += published
            audit.alternatives["published_failed"] += published and reward < 1
        if published:
            audit.proofs["gold_pass"] = audit.proofs.get("gold_pass", 0) + bool(gold)
            audit.proofs["baselines_fail"] = audit.proofs.get("baselines_fail", 0) + bool(noop)
            audit.proofs["deterministic"] = audit.proofs.get("deterministic", 0) + bool(same)
            if n:  # a task with no mutant has no kill rate
                kill_rates.append(float(kill))
    if kill_rates:
        audit.proofs["mean_kill_rate"] = sum(kill_rates) / len(kill_rates)
        audit.proofs["min_kill_rate"] = min(kill_rates)
    return audit


def render_reward_audit(audit: RewardAudit) -> list[str]:
    """The card's "Reward audit" section, as Markdown lines."""
    kinds = [k for k in TASK_KINDS if audit.candidates[k]]
    published = sum(audit.published.values())
    lines = [
        "## Reward audit",
        "",
        "Before a task ships, its checks are attacked as a policy trained on this reward "
        "would attack them, and the shortcuts below are played on it: each must earn reward "
        "0. Correct answers given another way (values written as people write them, a "
        "refusal quoting the tool's error or naming another rule that blocks the request, "
        "independent steps in another order, a lookup left out) are played too: each must "
        "earn 1. Pay rate: the share of tasks a shortcut earned any reward on. Every reply "
        "is graded on what its own episode's calls showed (a value earns only where a tool "
        "result showed it), so a shortcut that calls nothing is held to nothing seen. The "
        "planner plays the field hedge itself and drops what it would earn on, so few "
        "candidates are left for it to pay on here.",
        "",
        "| shortcut | what it tries | "
        + " | ".join(f"{k}: candidates" for k in kinds)
        + " | published tasks |",
        "|---|---|" + "---:|" * len(kinds) + "---:|",
    ]
    described = {s.name: s.description for s in SHORTCUTS}
    for name in sorted(audit.shortcut_played):
        cells = []
        for kind in kinds:
            played = audit.shortcut_played[name][kind]
            paid = audit.shortcut_paid[name][kind]
            cells.append(f"{paid / played:.1%} ({paid}/{played})" if played else "–")
        paid_published = audit.shortcut_paid_published[name]
        what = described.get(name, "a shortcut no longer played")
        lines.append(
            f"| {name} | {what} | " + " | ".join(cells) + f" | {paid_published} of {published} |"
        )
    played, failed = audit.alternatives["played"], audit.alternatives["failed"]
    lines += [
        "",
        f"Correct alternatives: {played} played on the candidates, {failed} scored below 1 "
        f"(false-negative rate {audit.false_negative_rate:.2%}); on the published tasks "
        f"{audit.alternatives['published_failed']} of {audit.alternatives['published_played']}.",
        "",
        "Proofs of the published tasks: "
        + ", ".join(
            [
                f"gold passes on {audit.proofs.get('gold_pass', 0):g} of {published}",
                f"doing nothing, refusing and acting on a look-alike record fail on "
                f"{audit.proofs.get('baselines_fail', 0):g}",
                f"deterministic on {audit.proofs.get('deterministic', 0):g}",
                f"mutation kill rate mean {audit.proofs.get('mean_kill_rate', 0):.3f}, "
                f"lowest {audit.proofs.get('min_kill_rate', 0):.3f}",
            ]
        )
        + ".",
        "",
        "Tasks by kind (candidates → published): "
        + ", ".join(f"{k} {audit.candidates[k]} → {audit.published[k]}" for k in kinds)
        + ".",
        "",
    ]
    return lines
