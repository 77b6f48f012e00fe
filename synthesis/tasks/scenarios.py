"""Scenario planning: which planner plans an environment, and which task family each draw is.

A scenario is a pure function of (environment, initial state, seed, index). For an exact
(compiled) model each candidate index draws one task family from `FAMILIES` by weight; the
family adds its goals to a fresh `Planner` (synthesis.tasks.planner), which predicts every
outcome with `SpecModel` and prepends the lookups that produce every id the goals consume, so
an agent has to perform them itself. The plan is worded and assembled
(synthesis.tasks.assembly) and kept only if it passes the screens (synthesis.tasks.screens).
An inferred model is planned by exploring it in the sandbox (synthesis.tasks.explorer), a
workspace by its own planner (synthesis.tasks.workspace_plans). Either way the sandboxed gold
run (synthesis.tasks.gold) is the judge.

A new task family is a module in synthesis/tasks/families/ with a `plan` function and one
`register_family` line below.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from synthesis.environments.model import EnvModel, model_of
from synthesis.environments.topology import ToolGraph, build_tool_graph
from synthesis.hashing import derive_seed
from synthesis.models import Environment, InitialState, Scenario
from synthesis.tasks.assembly import assemble_scenario, gold_chain_key, task_plan_of
from synthesis.tasks.families import chains, conditionals, infeasible, questions
from synthesis.tasks.plan import TaskPlan
from synthesis.tasks.planner import ATTEMPTS_PER_SCENARIO, DEFAULT_MAX_CHAIN, Outcome, Planner
from synthesis.tasks.screens import credit_falls, wrong_record_solves

# What a family does with a fresh planner: (planner, tool graph, initial state, longest chain)
# → its outcome, the goals added to the planner; None when no task of its kind fits.
FamilyPlan = Callable[[Planner, ToolGraph, dict[str, Any], int], Outcome | None]


@dataclass(frozen=True)
class TaskFamily:
    """A kind of task a candidate may be: its name (provenance["family"]), how often it is
    drawn relative to the others, and how it plans."""

    name: str
    weight: float
    plan: FamilyPlan


FAMILIES: list[TaskFamily] = []


def register_family(name: str, weight: float, plan: FamilyPlan) -> TaskFamily:
    """Add a family candidates are drawn from, by `weight` relative to the others'. Draws
    walk the registry in order, so its order and weights are part of what a seed plans:
    registering a family changes which task each index is."""
    if any(f.name == name for f in FAMILIES):
        raise ValueError(f"task family {name!r} is already registered")
    family = TaskFamily(name, weight, plan)
    FAMILIES.append(family)
    return family


# Infeasible draws fail more often (not every environment state affords one, and the planner
# drops those a look-alike record's fact would answer: `wrong_record_solves`), so they are
# drawn well above the 10% of published tasks they must reach.
register_family("chain", 0.56, chains.plan_chain)
register_family("ask", 0.14, questions.plan_questions)
register_family("conditional", 0.14, conditionals.plan_conditional)
register_family("infeasible", 0.16, infeasible.plan_infeasible)


def plan_scenarios(
    env: Environment,
    state: InitialState,
    *,
    seed: int,
    count: int,
    max_chain_length: int = DEFAULT_MAX_CHAIN,
    model: EnvModel | None = None,
    backend: str = "auto",
    pool: Any = None,
) -> list[Scenario]:
    """Up to `count` distinct candidate scenarios (fewer when the state affords fewer).

    `model` defaults to the exact model of a compiled environment; an inferred model is
    planned by exploration in the sandbox (`backend`; its sessions from `pool`, the
    sandboxes' WorkerPool, when given).
    """
    if env.kind == "workspace" and env.spec is not None:
        # A file tree, not records: its own planner over the environment's own verbs.
        from synthesis.tasks.workspace_plans import plan_workspace_scenarios

        return plan_workspace_scenarios(
            env, state, seed=seed, count=count, max_chain_length=max_chain_length
        )
    model = model or model_of(env)
    if not model.exact:
        from synthesis.tasks.explorer import explore_scenarios

        return explore_scenarios(
            env,
            model,
            state,
            seed=seed,
            count=count,
            max_chain_length=max_chain_length,
            backend=backend,
            pool=pool,
        )
    graph = build_tool_graph(model)
    out: list[Scenario] = []
    seen: set[str] = set()
    for index in range(count * ATTEMPTS_PER_SCENARIO):
        if len(out) >= count:
            break
        scenario = _plan(env, model, graph, state, seed, index, max_chain_length)
        if scenario is None:
            continue
        key = gold_chain_key(state.state_id, scenario.gold_chain)
        if key in seen:
            continue
        seen.add(key)
        out.append(scenario)
    return out


def plan_scenario(
    env: Environment,
    state: InitialState,
    *,
    seed: int,
    index: int,
    max_chain_length: int = DEFAULT_MAX_CHAIN,
    model: EnvModel | None = None,
) -> Scenario | None:
    """Candidate `index` alone (None when this draw found no feasible task)."""
    model = model or model_of(env)
    return _plan(env, model, build_tool_graph(model), state, seed, index, max_chain_length)


def _plan(
    env: Environment,
    model: EnvModel,
    graph: ToolGraph,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
) -> Scenario | None:
    rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed, index))
    plan = plan_task(model, graph, state, seed, index, max_chain_length, rng)
    scenario = assemble_scenario(env, state, plan, rng) if plan is not None else None
    if scenario is None or wrong_record_solves(scenario, model):
        return None
    if credit_falls(scenario, model):
        return None
    return scenario


def plan_task(
    model: EnvModel,
    graph: ToolGraph,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
    rng: random.Random,
) -> TaskPlan | None:
    """The task plan of one draw: a family by weight, planned with a fresh planner (None
    when the family finds no task that fits)."""
    planner = Planner.start(model, state.state, rng)
    family = rng.choices(FAMILIES, weights=[f.weight for f in FAMILIES])[0]
    outcome = family.plan(planner, graph, state.state, max_chain_length)
    if outcome is None:
        return None
    return task_plan_of(
        planner, outcome, state, seed, index, max_chain_length, extra={"family": family.name}
    )
