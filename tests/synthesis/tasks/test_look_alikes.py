"""Look-alike records: the planner keeps no task the wrong-record baseline would solve.

In a state where the records of a collection differ only in their ids and lookup fields
(three accounts named alike, all active, the same balance), a question about one of them,
or a refusal whose fact is one of their shared values, is answered just as well by a
decoy. The self-test quarantines such tasks; the planner foresees it and plans others.
"""

from __future__ import annotations

import copy

from quality.selftest import selftest_scenarios
from synthesis import codec
from synthesis.environments.model import model_of
from synthesis.models import InitialState
from synthesis.tasks import scenarios
from synthesis.tasks.checks import asked_values, derive_checks
from synthesis.tasks.gold import execute_gold
from tests.synthesis.tasks.planner_worlds import archetype_worlds

# The first world of the planner tests' default-like worlds (a ledger with several cash-like
# accounts per owner); 12 candidates, as a default state plans.
TOPICS, RECORDS, COUNT, MAX_CHAIN = 6, 8, 12, 14


def look_alike_world():
    """A planner world whose records of each collection share every field but their id,
    their references and the fields they are looked up by."""
    env, state = archetype_worlds(TOPICS, RECORDS)[0]
    model = model_of(env)
    shared = copy.deepcopy(state.state)
    for coll in model.collections:
        records = shared.get(coll.collection) or {}
        if not records:
            continue
        first = records[sorted(records)[0]]
        keep = {"id", coll.lookup_field, *coll.lookup_fields}
        for f in coll.fields:
            if f.type == "ref" or f.name in keep or f.name not in first:
                continue
            for record in records.values():
                record[f.name] = copy.deepcopy(first[f.name])
    return env, InitialState.model_validate({**state.model_dump(), "state": shared})


def _wrong_record_earners(env, planned):
    """The planned tasks the self-test quarantines because the wrong-record baseline earns."""
    model = model_of(env)
    ran = [s for s in execute_gold(env, planned, model=model) if s.status == "published"]
    assert len(ran) == len(planned), [s.reason for s in ran]
    results = selftest_scenarios(env, [(s, derive_checks(s, model=model)) for s in ran])
    return [s for s, r in zip(ran, results, strict=True) if "wrong-record" in (r.reason or "")]


def test_the_planner_plans_no_task_a_look_alike_record_answers(sandbox, monkeypatch):
    env, state = look_alike_world()
    model = model_of(env)
    planned = scenarios.plan_scenarios(env, state, seed=0, count=COUNT, max_chain_length=MAX_CHAIN)
    assert len(planned) == COUNT  # others are planned in their place
    assert any(s.expected_reply for s in planned)  # replies about values no decoy shares
    assert _wrong_record_earners(env, planned) == []

    # Without the foresight the same draws give tasks the baseline solves. A record's field
    # is grounded only where that record was shown, so a look-alike's equal value read off
    # a lookup or a listing of the look-alike earns nothing; what still pays is a figure a
    # step computes over look-alike records (an aggregate), which the screen must catch.
    monkeypatch.setattr(scenarios, "wrong_record_solves", lambda scenario, model, **_: False)
    blind = scenarios.plan_scenarios(env, state, seed=0, count=COUNT, max_chain_length=MAX_CHAIN)
    earners = _wrong_record_earners(env, blind)
    assert earners
    read_by = {
        model.tool(s.gold_chain[a.step].tool).operation
        for s in earners
        for a in asked_values(s.provenance.get("reply"))
        if a.step is not None
    }
    assert read_by == {"aggregate"}, read_by


def test_planning_look_alikes_is_deterministic():
    env, state = look_alike_world()
    dump = lambda ss: codec.dumps([s.model_dump(mode="json") for s in ss])  # noqa: E731
    a = scenarios.plan_scenarios(env, state, seed=0, count=COUNT, max_chain_length=MAX_CHAIN)
    b = scenarios.plan_scenarios(env, state, seed=0, count=COUNT, max_chain_length=MAX_CHAIN)
    assert dump(a) == dump(b)
