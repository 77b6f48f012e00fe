"""A published scenario's recorded gold run stands in for the sandbox while a policy follows
the gold chain (rollout's `proven_gold`): the transcripts are the ones the sandbox gives, the
policies on the chain open no episode, and one that leaves it replays the calls served so far
and must meet the record."""

from __future__ import annotations

import pytest

from sandboxes import WorkerPool
from synthesis.environments.model import model_of
from synthesis.rollouts.agents import FinalAnswer, OraclePolicy, ToolCallAction
from synthesis.rollouts.episodes import rollouts
from synthesis.rollouts.guesser import GuesserPolicy
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@pytest.fixture
def proven(sandbox, world):
    env, state = world
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=3, count=6, max_chain_length=6))
    return env, [(s, derive_checks(s, model=model_of(env))) for s in scenarios if s.gold_chain]


class _LeavesAfter:
    """Follows the gold chain for `k` calls, then reads a record the chain never read."""

    name = "leaves_after"

    def __init__(self, scenario, k: int) -> None:
        self.scenario, self.k = scenario, k

    def next_action(self, observation):
        if observation.step < self.k:
            call = self.scenario.gold_chain[observation.step]
            return ToolCallAction(tool=call.tool, args=dict(call.args))
        if observation.step == self.k:
            first = self.scenario.gold_chain[0]
            return ToolCallAction(tool=first.tool, args={**first.args, "_unused": 1})
        return FinalAnswer("Done.")


def _counted(pool):
    opened = []
    session = pool.session
    pool.session = lambda *args, **kwargs: opened.append(args) or session(*args, **kwargs)
    return opened


def _policies(env):
    model = model_of(env)
    return [
        lambda s: OraclePolicy(s, model),
        *(lambda s, a=a: GuesserPolicy(s, model, a) for a in range(3)),
        lambda s: _LeavesAfter(s, 1),
        lambda s: _LeavesAfter(s, len(s.gold_chain)),
    ]


def test_the_transcripts_are_the_sandboxs_and_the_oracle_opens_no_episode(proven):
    env, items = proven
    assert items
    with WorkerPool(size=2) as pool:
        fresh = [rollouts(env, items, p, pool=pool) for p in _policies(env)]
        opened = _counted(pool)
        served = [rollouts(env, items, p, pool=pool, proven_gold=True) for p in _policies(env)]
        assert [[t.model_dump() for t in batch] for batch in served] == [
            [t.model_dump() for t in batch] for batch in fresh
        ]
        # The oracle plays the whole chain from the record; a policy that leaves it opens
        # one episode per scenario; none opens more than one.
        opened.clear()
        rollouts(env, items, _policies(env)[0], pool=pool, proven_gold=True)
        assert opened == []
        rollouts(env, items, lambda s: _LeavesAfter(s, 1), pool=pool, proven_gold=True)
        assert len(opened) == len(items)
    assert [t.reward for t in served[0]] == [1.0] * len(items)


def test_a_record_the_sandbox_does_not_reproduce_stops_the_episode(proven):
    env, items = proven
    scenario, checks = items[0]
    forged = scenario.model_copy(
        update={"gold_results": [{"success": True, "data": "forged"}, *scenario.gold_results[1:]]}
    )
    with pytest.raises(RuntimeError, match="did not give the recorded results"):
        rollouts(env, [(forged, checks)], lambda s: _LeavesAfter(s, 1), proven_gold=True)
    # Without the flag the record is not read: the sandbox answers every call.
    (plain,) = rollouts(env, [(forged, checks)], lambda s: _LeavesAfter(s, 1))
    assert "forged" not in str(plain.messages)


def test_a_scenario_without_a_whole_record_is_played_in_the_sandbox(proven):
    env, items = proven
    scenario, checks = items[0]
    bare = scenario.model_copy(update={"final_state": None})
    with WorkerPool(size=1) as pool:
        opened = _counted(pool)
        (t,) = rollouts(
            env,
            [(bare, checks)],
            lambda s: OraclePolicy(s, model_of(env)),
            pool=pool,
            proven_gold=True,
        )
    assert len(opened) == 1 and t.reward == 1.0
