"""Goal-directed planning (synthesis.tasks.goals): a proposed goal, named in words, becomes
a scenario whose gold chain looks every id up and reaches the goal in the sandbox; a goal the
planner cannot reach, or a record no words match, yields no scenario and a reason."""

from __future__ import annotations

from functools import lru_cache

import pytest

from quality.selftest import selftest_scenarios
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.environments.topology import from_statuses, id_params
from synthesis.tasks.assembly import mentions_an_id, state_ids
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.goals import ProposedGoal, plan_for_goal, record_handles
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.tasks.planner_worlds import history_state


@lru_cache(maxsize=2)
def world(archetype: str):
    (topic,) = select_topics(load_catalogue(), {archetype}, 1)
    env = build_environment(generate_spec(topic))
    return env, model_of(env), history_state(env, 0, 6)


def _values(data) -> set:
    """Every scalar a step's result shows (the ids an agent could read off it)."""
    if isinstance(data, dict):
        return set().union(*(_values(v) for v in data.values()))
    if isinstance(data, list):
        return set().union(*(_values(v) for v in data))
    return {data}


def _handle(model, state, entity: str, where) -> str:
    """The summary handle of the first record of `entity` that `where` accepts."""
    for handle, (ent, rid) in record_handles(model, state.state).items():
        if ent == entity and where(state.state[model.entity(ent).collection][rid]):
            return handle
    raise AssertionError(f"no {entity} record fits")


def _transition(model, state, *, reachable: bool) -> ProposedGoal:
    """A status change of a record that is (or is not) in a status the tool starts from."""
    for tool in model.tools:
        if tool.operation != "transition":
            continue
        status_field = model.entity(tool.entity).status_field
        starts = set(from_statuses(model, tool)) - {tool.target_status}

        def fits(rec, status_field=status_field, starts=starts) -> bool:
            return (rec.get(status_field) in starts) == reachable

        try:
            handle = _handle(model, state, tool.entity, fits)
        except AssertionError:
            continue
        return ProposedGoal(kind="transition", tool=tool.name, target=handle)
    raise AssertionError("no transition fits")


@pytest.mark.parametrize("archetype", ["order_lifecycle", "booking"])
def test_a_reachable_goal_is_planned_with_every_id_looked_up_first(archetype):
    env, model, state = world(archetype)
    goal = _transition(model, state, reachable=True)
    planned = plan_for_goal(env, state, goal, seed=0, model=model)
    assert planned.reason is None
    scenario = planned.scenario
    assert scenario.provenance["plan_source"] == "llm"
    assert scenario.provenance["goal"] == [goal.tool]
    chain = scenario.gold_chain
    assert chain[-1].tool == goal.tool and len(chain) >= 2
    # Topology-aware: every id an argument carries came out of an earlier step's result.
    world_model, seen = SpecModel(model, state.state), set()
    for call in chain:
        for param in id_params(model.tool(call.tool)):
            assert call.args[param] in seen, (call, seen)
        seen |= _values(world_model.call(call.tool, call.args).get("data"))
    assert scenario._plan.roles[:-1] == ["lookup"] * (len(chain) - 1)
    assert not mentions_an_id(scenario.task_text, state_ids(state.state))


def test_the_planned_gold_chain_reaches_the_goal_in_the_sandbox(sandbox):
    env, model, state = world("order_lifecycle")
    goal = _transition(model, state, reachable=True)
    rid = record_handles(model, state.state)[goal.target][1]
    tool = model.tool(goal.tool)
    coll = model.entity(tool.entity)
    scenario = plan_for_goal(env, state, goal, seed=0, model=model).scenario
    (ran,) = execute_gold(env, [scenario], model=model)
    assert ran.status == "published", ran.reason
    assert ran.final_state[coll.collection][rid][coll.status_field] == tool.target_status
    # The checks derived from that run are proven by the self-test, as the `checks` asset does.
    (result,) = selftest_scenarios(env, [(ran, derive_checks(ran, model=model))], model=model)
    assert result.proven, result.reason


def test_create_update_and_ask_goals_use_the_words_and_values_given():
    env, model, state = world("order_lifecycle")
    artist = state.state["artists"][sorted(state.state["artists"])[0]]
    supply_handle = _handle(model, state, "supply", lambda r: r["stock"] >= 2)
    create = ProposedGoal(
        kind="create",
        tool="create_order",
        refs=(("artist_id", artist["email"]), ("supply_id", supply_handle)),
        values=(("quantity", "2"), ("delivery", "express")),
    )
    made = plan_for_goal(env, state, create, seed=0, model=model)
    assert made.reason is None
    call = made.scenario.gold_chain[-1]
    assert call.args["artist_id"] == artist["id"]
    assert (call.args["quantity"], call.args["delivery"]) == (2, "express")

    ask = ProposedGoal(kind="ask", tool="find_supply_by_name", target=supply_handle, field="price")
    asked = plan_for_goal(env, state, ask, seed=0, model=model)
    assert asked.reason is None
    rid = record_handles(model, state.state)[supply_handle][1]
    assert asked.scenario.expected_reply["include"] == [str(state.state["supplies"][rid]["price"])]


def test_an_unreachable_goal_or_unknown_record_yields_no_scenario_and_a_reason():
    env, model, state = world("order_lifecycle")
    stuck = _transition(model, state, reachable=False)
    out = plan_for_goal(env, state, stuck, seed=0, model=model)
    assert out.scenario is None
    assert out.reason.startswith(f"{stuck.tool} cannot reach status")
    nobody = ProposedGoal(kind="transition", tool=stuck.tool, target="Nobody At All")
    out = plan_for_goal(env, state, nobody, seed=0, model=model)
    assert (out.scenario, out.reason) == (None, "no order matches 'Nobody At All'")
    wrong_kind = ProposedGoal(kind="update", tool=stuck.tool, target=stuck.target)
    assert plan_for_goal(env, state, wrong_kind, seed=0, model=model).reason == (
        f"{stuck.tool} is a transition tool, not a update"
    )
    bad_value = ProposedGoal(
        kind="update",
        tool="change_order_delivery",
        target=stuck.target,
        values=(("delivery", "teleport"),),
    )
    assert "is not one of" in plan_for_goal(env, state, bad_value, seed=0, model=model).reason


def test_an_inferred_model_is_not_planned_for_a_goal():
    env, model, state = world("order_lifecycle")
    inferred = model.model_copy(update={"source": "inferred"})
    assert not inferred.exact
    goal = _transition(model, state, reachable=True)
    out = plan_for_goal(env, state, goal, seed=0, model=inferred)
    assert (out.scenario, out.reason) == (None, "inferred model")
