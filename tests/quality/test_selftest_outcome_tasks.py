"""Mutants of a task judged by its outcome alone (a project task whose report is read by its
format, and no check reads what the reply says): the planner's looks are not mutated; one that
reaches the gold run's state anyway is equivalent, whatever its reply; the mistakes are killed.
On a task whose reply is read, a mutant in the gold state is still judged by its reply
(tests/quality/test_selftest.py)."""

from __future__ import annotations

import pytest

from quality import selftest
from quality.selftest import make_mutants, selftest_outcomes
from quality.work_runs import REPLY_CONTENT_TYPES
from sandboxes.backends import unavailable_reason
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.projects import log_triage, scenarios
from synthesis.tasks.scenarios import plan_scenarios
from tests.shard_support import first_topic

pytestmark = pytest.mark.skipif(
    unavailable_reason("bwrap") is not None, reason=f"bwrap: {unavailable_reason('bwrap')}"
)


def test_a_look_swapped_with_the_work_is_equivalent_and_the_mistakes_are_killed(monkeypatch):
    # The first error after a deploy: the program writes the report, then awk reads the
    # window again; swapped, awk looks before the report exists and the report is the same.
    monkeypatch.setattr(scenarios, "KINDS", log_triage.KINDS[:1])
    env = build_environment(generate_spec(first_topic("project")))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    model = from_spec(env.spec, env)
    (scenario,) = execute_gold(env, plan_scenarios(env, state, seed=5, count=1, model=model))
    checks = derive_checks(scenario, model=model)
    assert not {c.spec["type"] for c in checks} & REPLY_CONTENT_TYPES
    # The planner's looks are not mutated: no mutant drops, moves or edits one.
    reads = scenario.provenance["looks"]
    assert reads
    for mutant in make_mutants(model, scenario):
        if mutant.kind != "mistake":
            assert not any(str(i + 1) in mutant.label.split() for i in reads), mutant.label
    # A look moved before the work it reads (what a generic mutant of the chain may do):
    # the same report, another reply, which no check of this task reads: equivalent, not a
    # survivor that would count against the checks.
    program = max(
        i for i, c in enumerate(scenario.gold_chain) if c.tool == "run" and i not in reads
    )
    after = min(i for i in reads if i > program)
    order = list(range(len(scenario.gold_chain)))
    order[program], order[after] = after, program
    swap = selftest.Mutant(
        "swap_steps", "the look before the work", tuple(scenario.gold_chain[i] for i in order)
    )
    made = selftest.make_mutants
    monkeypatch.setattr(selftest, "make_mutants", lambda *a, **k: [*made(*a, **k), swap])
    (outcome,) = selftest_outcomes(env, [(scenario, checks)], model=model)
    verdicts = {m.label: (m.kind, v) for m, v in outcome.mutants}
    assert outcome.selftest.proven, outcome.selftest.reason
    assert verdicts["the look before the work"] == ("swap_steps", "equivalent"), verdicts
    # Every mistake people make is a wrong report: killed.
    mistakes = [v for kind, v in verdicts.values() if kind == "mistake"]
    assert mistakes and set(mistakes) == {"killed"}
    assert outcome.selftest.mutation_kill_rate == 1.0
