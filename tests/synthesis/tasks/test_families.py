"""Task families are registered by name and weight, and the dispatcher plans whichever a draw
picks (or, for a family with a share, that share of every state's candidates first): a new
family is one module and one `register_family` line."""

from __future__ import annotations

from collections import Counter

import pytest

from synthesis.environments.model import model_of
from synthesis.environments.topology import ToolGraph
from synthesis.tasks import scenarios
from synthesis.tasks.families import chains
from synthesis.tasks.planner import Outcome, Planner, mutation_tools
from synthesis.tasks.scenarios import plan_scenarios, register_family


def plan_one_move(planner: Planner, graph: ToolGraph, initial: dict, max_len: int):
    """A toy family: one status change on some record, looked up first, and nothing else."""
    model = planner.model
    moves = [t for t in mutation_tools(model, graph) if model.tool(t).operation == "transition"]
    if not moves:
        return None
    tool = planner.rng.choice(moves)
    if not planner.plan_mutation(model.tool(tool), None) or len(planner.steps) > max_len:
        return None
    return Outcome(goal_tools=[tool])


@pytest.fixture
def registry(monkeypatch):
    """The built-in families, in a copy the test may register into."""
    monkeypatch.setattr(scenarios, "FAMILIES", list(scenarios.FAMILIES))
    return scenarios.FAMILIES


def test_a_family_registered_in_one_line_is_planned_like_the_others(world, registry):
    env, state = world
    registry.clear()  # only the toy family is drawn
    register_family("one_move", 1.0, plan_one_move)
    planned = plan_scenarios(env, state, seed=0, count=4, max_chain_length=6)
    assert len(planned) == 4
    transitions = {t.name for t in model_of(env).tools if t.operation == "transition"}
    for s in planned:
        assert s.provenance["family"] == "one_move"
        assert s.provenance["roles"].count("mutation") == 1
        assert s.provenance["goal"] == [s.gold_chain[-1].tool]
        assert s.gold_chain[-1].tool in transitions
        # Worded, looked up and screened like any family's task.
        assert s.task_text and s.provenance["roles"][0] == "lookup"
    again = plan_scenarios(env, state, seed=0, count=4, max_chain_length=6)
    assert [s.model_dump() for s in again] == [s.model_dump() for s in planned]


def test_a_new_family_is_drawn_beside_the_built_in_ones_by_weight(world, registry):
    env, state = world
    register_family("one_move", 1.0, plan_one_move)  # as much as the four built-in together
    planned = plan_scenarios(env, state, seed=0, count=12, max_chain_length=6)
    families = Counter(s.provenance["family"] for s in planned)
    assert families["one_move"] and set(families) - {"one_move"}


def test_the_built_in_registry_and_its_order_are_what_every_seed_plans(registry):
    # Draws walk the registry in order by weight: reordering it changes every seed's tasks.
    assert [(f.name, f.weight, f.share) for f in registry] == [
        ("chain", 0.56, None),
        ("ask", 0.14, None),
        ("conditional", 0.14, None),
        ("infeasible", 0.0, 0.14),
    ]
    with pytest.raises(ValueError, match="already registered"):
        register_family("chain", 1.0, plan_one_move)
    with pytest.raises(ValueError, match="a share is a fraction"):
        register_family("most", 0.0, plan_one_move, share=1.5)


def test_a_share_family_is_planned_first_for_its_share_of_every_state(world, registry):
    env, state = world
    registry.clear()
    register_family("chain", 1.0, chains.plan_chain)
    register_family("one_move", 0.0, plan_one_move, share=0.25)
    planned = plan_scenarios(env, state, seed=0, count=12, max_chain_length=6)
    families = [s.provenance["family"] for s in planned]
    # 12 × 0.25 is exactly 3, whatever the seeded rounding; never drawn beyond its share.
    assert families == ["one_move"] * 3 + ["chain"] * 9


def test_a_share_a_state_cannot_afford_is_filled_by_the_drawn_families(world, registry):
    env, state = world
    registry.clear()
    register_family("chain", 1.0, chains.plan_chain)
    register_family("never", 0.0, lambda *_: None, share=0.5)
    planned = plan_scenarios(env, state, seed=0, count=8, max_chain_length=6)
    assert [s.provenance["family"] for s in planned] == ["chain"] * 8
