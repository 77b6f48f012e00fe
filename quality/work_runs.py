"""The self-test's runs of a task judged by its outcome, made with only the calls that work.

A project task's chain is mostly reads: the folder's tree, its README, each input, the
shell's looks (`wc -l`, an `awk` of the repeated lines); one program does the work. When no
check of a task reads what the reply says, a mutant is judged by the state it leaves alone
(quality/selftest.py `_judge`: killed when a check of the state fails, equivalent when it is
gold's state), and the reads before and after its program change no file. So its
*work chain* — its calls less those reads — is what the self-test runs for it; mutants whose
work chains are the same share one run, and one with no work left is the do-nothing run.

The reads are what the chain says they are: the model's tools that change nothing, and the
`run` calls the planner recorded as looks (synthesis.tasks.projects.work `looks`). That is
proven for each task before any mutant leans on it: the gold chain's work chain is run too
and must reach the gold replay's state, or every mutant of the task is run whole. A mutant
whose work run is neither killed nor gold's state (its reply would decide) is run whole as
well, and judged on that run, as are the other paths that do not keep every read between
the same two pieces of work (`mapped_path`): for those that do, the gold replay's results,
in the path's order, are what their calls would show.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthesis import codec
from synthesis.environments.model import EnvModel
from synthesis.models import Check, Scenario, ToolCall
from synthesis.tasks.checks import REPLY_CHECK_TYPES, spec_of

CallKey = tuple[str, str]
# The reply checks that read what a reply says; the length guard (`reply_concise`) only
# bounds how much it says.
REPLY_CONTENT_TYPES = frozenset(REPLY_CHECK_TYPES) - {"reply_concise"}


def call_key(call: ToolCall) -> CallKey:
    return call.tool, codec.dumps_str(dict(call.args))


@dataclass(frozen=True)
class Reads:
    """Which calls only read: those of the model's tools that change nothing, and the `run`
    calls the gold chain made as looks."""

    writes: frozenset[str]
    looks: frozenset[CallKey]

    def __contains__(self, call: object) -> bool:
        if not isinstance(call, ToolCall):
            return False
        return call.tool not in self.writes or call_key(call) in self.looks


def reads_of(scenario: Scenario, outcome_only: bool, model: EnvModel) -> Reads | None:
    """The reads of `scenario`, for a task with looks judged by its outcome alone; None for
    any other task (its mutants are run whole)."""
    looks = (scenario.provenance or {}).get("looks")
    if looks is None or not outcome_only:
        return None
    chain = scenario.gold_chain
    return Reads(
        frozenset(model.mutating_tools()),
        frozenset(call_key(chain[i]) for i in looks if 0 <= i < len(chain)),
    )


def work_chain(chain: Sequence[ToolCall], reads: Reads) -> tuple[ToolCall, ...]:
    """`chain` less its reads: the calls that may change the state, in order."""
    return tuple(c for c in chain if c not in reads)


@dataclass(frozen=True)
class MappedRun:
    """A run not made, in the shape of a replay's result: what another path's calls show
    when it keeps every read between the same two pieces of work as the gold run."""

    final_state: dict[str, Any] | None
    results: list[Any]
    status: str


def keeps_reads(
    path_chain: Sequence[ToolCall],
    origin: Sequence[int] | None,
    gold_chain: Sequence[ToolCall],
    reads: Reads,
) -> bool:
    """Whether another path does the gold chain's work (the same work chain) and makes each
    of its reads after as much of that work as gold made it: then each call shows what it
    showed in the gold run (`mapped_run`)."""
    if origin is None or len(origin) != len(path_chain):
        return False
    if work_chain(path_chain, reads) != work_chain(gold_chain, reads):
        return False
    gold_done, path_done = _work_done(gold_chain, reads), _work_done(path_chain, reads)
    return all(path_done[j] == gold_done[o] for j, o in enumerate(origin))


def mapped_run(origin: Sequence[int], gold_run: Any) -> MappedRun:
    """The gold run's results in a path's order (`keeps_reads`), and its final state."""
    return MappedRun(gold_run.final_state, [gold_run.results[o] for o in origin], gold_run.status)


def _work_done(chain: Sequence[ToolCall], reads: Reads) -> list[int]:
    """For each call, how many calls of work came before it."""
    done, out = 0, []
    for call in chain:
        out.append(done)
        done += call not in reads
    return out


def outcome_only(checks: Sequence[Check]) -> bool:
    """Whether no check of a task reads what the reply says (the length guard at most)."""
    return not any(spec_of(c).get("type") in REPLY_CONTENT_TYPES for c in checks)
