"""Difficulty calibration: k attempts of the LLM agent per task decide which tasks publish.

With an endpoint set, the LLM agent attempts every published task k times (the profile's
`llm_agent_attempts`; synthesis.rollouts.attempts). A task no attempt solved is flagged
`unsolved` (broken, or beyond the agent), one every attempt solved `saturated` (it teaches
nothing); the rest are informative. A filter on the solved count decides which publish:
ENVFOUNDRY_DIFFICULTY_FILTER, a range "lo..hi" whose bounds are numbers or k minus a number
("1..k-1", the EnvCraft rule, is the default: keep what the agent sometimes solves), or
"all". A task the filter drops is quarantined by task screening with its count ("difficulty:
solved 0/3 by the LLM agent"). Only tasks with all k attempts are judged: a task whose
attempts were cut short (a spent budget) is neither flagged nor dropped. Without LLM
trajectories (offline) there is nothing to judge and nothing changes.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from synthesis.models import QuarantineRecord, Trajectory

FILTER_ENV = "ENVFOUNDRY_DIFFICULTY_FILTER"
DEFAULT_FILTER = "1..k-1"
STAGE = "difficulty_calibration"
LLM_POLICY_PREFIX = "llm:"  # synthesis.rollouts.agents.LLMPolicy names itself "llm:<model>"
_BOUND = re.compile(r"^(?:(?P<k>k)(?:-(?P<minus>\d+))?|(?P<n>\d+))$")


@dataclass(frozen=True)
class Bound:
    """A number of attempts: `n`, or k minus `n` when `of_k`."""

    n: int
    of_k: bool = False

    def value(self, k: int) -> int:
        return k - self.n if self.of_k else self.n


@dataclass(frozen=True)
class DifficultyFilter:
    """Which solved counts (out of k) a task may have and still publish."""

    text: str
    low: Bound
    high: Bound

    def keeps(self, solved: int, k: int) -> bool:
        return self.low.value(k) <= solved <= self.high.value(k)

    def check(self, k: int) -> None:
        """Fail when the filter keeps no count at all for `k` attempts (with k = 1,
        "1..k-1" would quarantine every task): a configuration error, not a result."""
        if not any(self.keeps(solved, k) for solved in range(k + 1)):
            raise ValueError(
                f"{FILTER_ENV}={self.text!r} keeps no task with k={k} attempts "
                f"(it allows {self.low.value(k)}..{self.high.value(k)} solved); set it to "
                "'all' or raise the profile's llm_agent_attempts"
            )


def _bound(text: str, whole: str) -> Bound:
    found = _BOUND.match(text.strip().replace(" ", ""))
    if found is None:
        raise ValueError(
            f"{FILTER_ENV}={whole!r}: bad bound {text!r}; write 'lo..hi' with each bound a "
            "number, 'k' or 'k-N' (e.g. '1..k-1', '0..k-1'), or 'all'"
        )
    if found["n"] is not None:
        return Bound(int(found["n"]))
    return Bound(int(found["minus"] or 0), of_k=True)


def parse_filter(text: str) -> DifficultyFilter:
    """'all', or 'lo..hi' with bounds like 3, k or k-1; a clear ValueError otherwise."""
    spec = text.strip()
    if spec.casefold() == "all":
        return DifficultyFilter("all", Bound(0), Bound(0, of_k=True))
    parts = spec.split("..")
    if len(parts) != 2:
        raise ValueError(
            f"{FILTER_ENV}={text!r}: expected 'lo..hi' (e.g. '1..k-1', '0..k-1') or 'all'"
        )
    return DifficultyFilter(spec, _bound(parts[0], text), _bound(parts[1], text))


def filter_for(k: int, environ: Mapping[str, str] | None = None) -> DifficultyFilter:
    """The filter for k attempts: ENVFOUNDRY_DIFFICULTY_FILTER when set (an error if it is
    malformed or keeps nothing at this k), else the default, or 'all' when k is too small
    for the default to keep anything (one attempt cannot tell hard from flaky)."""
    environ = os.environ if environ is None else environ
    text = environ.get(FILTER_ENV, "").strip()
    if text:
        rule = parse_filter(text)
        rule.check(k)
        return rule
    rule = parse_filter(DEFAULT_FILTER)
    return rule if any(rule.keeps(solved, k) for solved in range(k + 1)) else parse_filter("all")


def flags(solved: int, k: int) -> list[str]:
    """`unsolved` at 0/k, `saturated` at k/k, nothing in between."""
    if solved == 0:
        return ["unsolved"]
    if solved == k:
        return ["saturated"]
    return []


@dataclass(frozen=True)
class Calibration:
    """One task's k attempts, their verdict and why."""

    scenario_id: str
    attempts: int
    solved: int
    flags: tuple[str, ...]
    keep: bool
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "scenario_id": self.scenario_id,
            "attempts": self.attempts,
            "solved": self.solved,
            "flags": list(self.flags),
            "keep": self.keep,
            "reason": self.reason,
        }


def calibrate(
    outcomes: Mapping[str, Sequence[bool]], k: int, rule: DifficultyFilter
) -> list[Calibration]:
    """The verdict on every task with all `k` attempts (by scenario id, sorted); a task
    with fewer is not judged."""
    rule.check(k)
    out = []
    for scenario_id in sorted(outcomes):
        results = outcomes[scenario_id]
        if len(results) != k:
            continue
        solved = sum(1 for ok in results if ok)
        keep = rule.keeps(solved, k)
        reason = None if keep else f"difficulty: solved {solved}/{k} by the LLM agent"
        out.append(Calibration(scenario_id, k, solved, tuple(flags(solved, k)), keep, reason))
    return out


def llm_outcomes(trajectories: Iterable[Trajectory]) -> dict[str, list[bool]]:
    """The LLM agent's results per task, one per attempt (its `attempt_seed`); a lone
    attempt without an index (no calibration asked for) counts as none."""
    return outcomes_of(llm_attempts(trajectories))


def llm_attempts(trajectories: Iterable[Trajectory]) -> list[tuple[str, int, bool]]:
    """(task, attempt index, success) of each indexed LLM agent attempt among `trajectories`,
    in their order: all calibration reads of them (a publish keeps them per environment)."""
    return [
        (t.scenario_id, t.attempt_seed, t.success)
        for t in trajectories
        if t.policy.startswith(LLM_POLICY_PREFIX) and t.attempt_seed is not None
    ]


def outcomes_of(attempts: Iterable[tuple[str, int, bool]]) -> dict[str, list[bool]]:
    """Per task, its attempts' results in attempt order (of an index given twice, the last)."""
    by_task: dict[str, dict[int, bool]] = {}
    for scenario_id, attempt, success in attempts:
        by_task.setdefault(scenario_id, {})[attempt] = success
    return {sid: [ok for _, ok in sorted(runs.items())] for sid, runs in by_task.items()}


def calibration_quarantine(calibrations: Iterable[Calibration]) -> list[QuarantineRecord]:
    """A quarantine record for every task the filter drops."""
    return [
        QuarantineRecord(
            artifact_type="scenario", artifact_id=c.scenario_id, stage=STAGE, reason=c.reason
        )
        for c in calibrations
        if not c.keep and c.reason is not None
    ]
