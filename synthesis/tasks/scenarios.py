"""Scenario planning: which planner plans an environment, and which task family each draw is.

A scenario is a pure function of (environment, initial state, seed, index, family). For an
exact (compiled) model each state's candidates are first its share families' (refusals: a
fixed share of every state, `register_family(share=...)`), then each index draws one of
the other task families from `FAMILIES` by weight; the family adds its goals to a fresh
`Planner` (synthesis.tasks.planner), which predicts every outcome with `SpecModel` and
prepends the lookups that produce every id the goals consume, so an agent has to perform
them itself. The plan is worded and assembled (synthesis.tasks.assembly) and kept only if it
passes the screens (synthesis.tasks.screens).
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
from synthesis.tasks.assembly import assemble_scenario, keep_distinct, task_plan_of
from synthesis.tasks.families import chains, conditionals, infeasible, questions
from synthesis.tasks.plan import TaskPlan
from synthesis.tasks.planner import ATTEMPTS_PER_SCENARIO, DEFAULT_MAX_CHAIN, Outcome, Planner
from synthesis.tasks.screens import credit_falls, gold_run, hedge_earns, wrong_record_solves

# What a family does with a fresh planner: (planner, tool graph, initial state, longest chain)
# → its outcome, the goals added to the planner; None when no task of its kind fits.
FamilyPlan = Callable[[Planner, ToolGraph, dict[str, Any], int], Outcome | None]


@dataclass(frozen=True)
class TaskFamily:
    """A kind of task a candidate may be: its name (provenance["family"]), how often it is
    drawn relative to the others, and how it plans. A family with a `share` is not drawn:
    each state's candidates hold that share of it, planned first (`plan_scenarios`)."""

    name: str
    weight: float
    plan: FamilyPlan
    share: float | None = None


FAMILIES: list[TaskFamily] = []


def register_family(
    name: str, weight: float, plan: FamilyPlan, *, share: float | None = None
) -> TaskFamily:
    """Add a family candidates are drawn from, by `weight` relative to the others', or,
    with `share`, planned for that share of every state's candidates (its weight is then
    not used: register it with 0). Draws walk the registry in order, so its order and
    weights are part of what a seed plans: registering a family changes which task each
    index is."""
    if any(f.name == name for f in FAMILIES):
        raise ValueError(f"task family {name!r} is already registered")
    if share is not None and not 0 < share < 1:
        raise ValueError(f"task family {name!r}: a share is a fraction in (0, 1), not {share}")
    family = TaskFamily(name, weight, plan, share)
    FAMILIES.append(family)
    return family


def family_named(name: str) -> TaskFamily:
    for family in FAMILIES:
        if family.name == name:
            return family
    raise ValueError(f"no task family {name!r}; registered: {[f.name for f in FAMILIES]}")


def _quota(family: TaskFamily, count: int, env_id: str, state_id: str, seed: int) -> int:
    """How many of a state's `count` candidates a share family plans: count × share,
    rounded up or down at random (seeded), so the expected share holds for small counts."""
    assert family.share is not None
    rng = random.Random(derive_seed("family-quota", family.name, env_id, state_id, seed))
    return int(count * family.share + rng.random())


register_family("chain", 0.56, chains.plan_chain)
register_family("ask", 0.14, questions.plan_questions)
register_family("conditional", 0.14, conditionals.plan_conditional)
# Refusals are a fixed share of every state's candidates, not a draw: environments afford
# them unequally (a refusal the field hedge or a look-alike record would answer is dropped:
# synthesis.tasks.screens), and drawn at one rate they would gather in some domains, whose
# words would then tell an infeasible request from the others. Where a state affords fewer,
# the other families fill its candidates.
register_family("infeasible", 0.0, infeasible.plan_infeasible, share=0.14)


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
        # A file tree, not records: its own planner over the environment's own verbs (a
        # project's data: the planner of work over its files).
        if (env.spec.workspace or {}).get("family") == "project":
            from synthesis.tasks.projects.scenarios import plan_project_scenarios

            return plan_project_scenarios(env, state, seed=seed, count=count)
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

    def fill(wanted: int, family: TaskFamily | None) -> None:
        found = 0
        for index in range(wanted * ATTEMPTS_PER_SCENARIO):
            if found >= wanted:
                return
            scenario = _plan(env, model, graph, state, seed, index, max_chain_length, family)
            if scenario is not None and keep_distinct(scenario, seen, out):
                found += 1

    for family in FAMILIES:
        if family.share is not None:
            fill(
                min(count - len(out), _quota(family, count, env.env_id, state.state_id, seed)),
                family,
            )
    fill(count - len(out), None)
    return out


def plan_scenario(
    env: Environment,
    state: InitialState,
    *,
    seed: int,
    index: int,
    max_chain_length: int = DEFAULT_MAX_CHAIN,
    model: EnvModel | None = None,
    family: str | None = None,
) -> Scenario | None:
    """Candidate `index` alone (None when this draw found no feasible task); `family`: the
    share family it was planned for (provenance["family"] of a share family's candidate),
    None for a drawn one."""
    model = model or model_of(env)
    planned = family_named(family) if family is not None else None
    return _plan(env, model, build_tool_graph(model), state, seed, index, max_chain_length, planned)


def _plan(
    env: Environment,
    model: EnvModel,
    graph: ToolGraph,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
    family: TaskFamily | None = None,
) -> Scenario | None:
    # A share family's candidates draw from their own stream: candidate `index` of the
    # refusals and the drawn candidate `index` must not share their records and words.
    named = (family.name,) if family is not None else ()
    rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed, index, *named))
    plan = plan_task(model, graph, state, seed, index, max_chain_length, rng, family)
    scenario = assemble_scenario(env, state, plan, rng) if plan is not None else None
    if scenario is None:
        return None
    run = gold_run(scenario, model)  # played once, graded by every screen
    if wrong_record_solves(scenario, model, run=run) or credit_falls(scenario, model, run=run):
        return None
    if hedge_earns(scenario, model, [info.schema_ for info in env.tools], run=run):
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
    family: TaskFamily | None = None,
) -> TaskPlan | None:
    """The task plan of one draw: `family`, or one drawn by weight among those without a
    share, planned with a fresh planner (None when the family finds no task that fits)."""
    planner = Planner.start(model, state.state, rng)
    if family is None:
        drawn = [f for f in FAMILIES if f.share is None]
        if not drawn:
            return None
        family = rng.choices(drawn, weights=[f.weight for f in drawn])[0]
    outcome = family.plan(planner, graph, state.state, max_chain_length)
    if outcome is None:
        return None
    return task_plan_of(
        planner, outcome, state, seed, index, max_chain_length, extra={"family": family.name}
    )
