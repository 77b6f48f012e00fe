"""What a planned task must pass before it is kept, judged in the exact model before any run.

A task the wrong-record baseline would earn on, whose partial credit would fall along its
own gold chain, or whose reply a hedge over one field's values answers, cannot be proven; the
planner drops it here rather than leave it to the self-test's quarantine. The wrong-record
verdict is shared: the self-test (quality.selftest) judges the baseline's sandboxed run with
`wrong_record_earns`, the planner the run it predicts, so the two agree; the hedge is the
self-test's own shortcut (synthesis.tasks.shortcuts), graded by the same checks. (The
publish stage's screens over all tasks at once, duplicates and contamination, are
synthesis.tasks.screening.)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.models import Check, Scenario
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import Grade, derive_checks, grade
from synthesis.tasks.decoys import pick_decoys, swapped_chain
from synthesis.tasks.envfoundry_reward import Seen
from synthesis.tasks.gold import shown_by
from synthesis.tasks.shortcuts import ShortcutContext, field_hedge_replies
from synthesis.tasks.spec_model import SpecModel, json_copy


@dataclass(frozen=True)
class GoldRun:
    """A planned task's gold chain played once in the exact model, which every screen
    grades against: the task with its gold results and final state, the state before each
    step and after the last, and the checks that run yields."""

    played: Scenario
    states: list[dict[str, Any]]
    checks: list[Check]


def gold_run(scenario: Scenario, model: EnvModel) -> GoldRun:
    world = SpecModel(model, scenario.initial_state)
    states = [json_copy(world.state)]
    results = []
    for call in scenario.gold_chain:
        results.append(world.call(call.tool, call.args))
        states.append(json_copy(world.state))
    played = scenario.model_copy(update={"final_state": world.state, "gold_results": results})
    return GoldRun(played, states, derive_checks(played, model=model))


def credit_falls(scenario: Scenario, model: EnvModel, *, run: GoldRun | None = None) -> bool:
    """Whether partial credit would fall somewhere along the gold chain: an agent that has
    done the first k steps must never score more than one that has done k + 1 (a step that
    changes a field no check allows, undone by a later one, would punish progress). Played
    in the exact model, graded by the checks the gold run yields, with no reply (a reply's
    credit comes at the end, whatever the path). `run`: the gold run, when the caller has
    played it (`gold_run`)."""
    run = run or gold_run(scenario, model)
    rewards = [grade(run.checks, scenario.start_state, state, "").reward for state in run.states]
    return any(later < earlier for earlier, later in zip(rewards, rewards[1:], strict=False))


def wrong_record_solves(scenario: Scenario, model: EnvModel, *, run: GoldRun | None = None) -> bool:
    """Whether the wrong-record baseline would earn a reward on this planned task.

    Every family's reply value (asked of a record found by a lookup, a listing or through a
    reference; a conditional's reading; an infeasible request's refused fact) ends up here,
    so the task is judged whole, as the self-test will judge it: the gold chain and the
    baseline's chain (the same decoys as `synthesis.rollouts.agents.wrong_record_policy`)
    are played in the exact model, and the baseline's honest reply is graded by the checks
    the gold run yields. A look-alike record that shares the asked value (three accounts
    named alike, all of them active) makes the task unprovable; the self-test would
    quarantine it.
    """
    run = run or gold_run(scenario, model)
    swaps = pick_decoys(run.played, model)
    if swaps is None:
        return False  # no decoy: the self-test runs no wrong-record baseline either
    world = SpecModel(model, scenario.initial_state)
    wrong_chain = swapped_chain(run.played.gold_chain, swaps)
    wrong_results = [world.call(c.tool, c.args) for c in wrong_chain]
    seen = shown_by(wrong_chain, wrong_results)
    earned = wrong_record_earns(
        run.played, run.checks, world.state, wrong_results, model, shown=seen
    )
    return earned is not None


def wrong_record_earns(
    scenario: Scenario,
    checks: Sequence[Any],
    final_state: dict[str, Any] | None,
    results: Sequence[Any],
    model: EnvModel | None,
    *,
    shown: Seen | None = None,
) -> Grade | None:
    """The grade of the wrong-record baseline's run (its final state and the result of each
    call) when it earns anything, else None.

    The baseline answers honestly with what its own run showed (the oracle's answer built
    from `results`), so it earns a reward exactly when the decoy shares what the checks ask
    for: the asked value, or an infeasible request's refused fact. `shown`: what the run's
    calls showed (`synthesis.tasks.gold.shown_by`), which its reply is held to.
    """
    reply = oracle_answer(scenario, final_state, results, model=model)
    graded = grade(checks, scenario.start_state, final_state, reply, shown=shown)
    return graded if graded.success or graded.reward > 0 else None


def hedge_earns(
    scenario: Scenario,
    model: EnvModel,
    tools: Sequence[dict[str, Any]],
    *,
    run: GoldRun | None = None,
) -> str | None:
    """The reply of the field hedge (synthesis.tasks.shortcuts) that would earn a reward on
    this planned task after the gold chain's lookups; None when none does.

    A reply goal is guarded against a hedge only by a `reply_excludes` over the other values
    of what it asks; where the request or the blocking rule's own words state every one of
    them ("if it is still scheduled, cancel it; otherwise tell me its status"), nothing is
    left to exclude, and "it is scheduled, or cancelled, or completed" answers it. `tools`:
    the environment's tool schemas (their enums are hedged over too). After the gold calls
    every reply earns the work's share, so the hedge is judged where it is a shortcut: in
    the state the lookups leave (the initial one), where only a reply goal can pay, with
    every value graded as shown (`shown=None`: the lookups show what the task asks about;
    with no call at all, grounding alone stops a hedge). `run`: the gold run, when the
    caller has played it."""
    if not (scenario.provenance or {}).get("reply"):
        return None
    checks = (run or gold_run(scenario, model)).checks
    idle = json_copy(scenario.initial_state)
    context = ShortcutContext("", scenario.task_text, tools, idle)
    for reply in field_hedge_replies(context):
        if grade(checks, scenario.start_state, idle, reply).reward > 0:
            return reply
    return None
