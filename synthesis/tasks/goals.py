"""Goal-directed planning: a proposed goal ("pay order 3", "what is the price of Oil Paint
Set 24") planned into a scenario by the same planner the offline families use.

Whoever proposes the goal (the `task_plan` LLM stage) names the record it acts on by a
handle from the state summary (`record_handles`: "order 3", never an id) or by a human value
of it (an email, a name). The planner resolves those words to one record, checks that the
tool can act on it in this state, looks every id up first (`Planner.resolve`), predicts the
outcome with the exact model and builds the same task-plan record and scenario as an offline
draw; the gold run, derived checks and self-test judge it afterwards like any other. Nothing
the proposer wrote becomes a check, a tool argument id or task text: only the choice of
tool, record and values is its.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import EnvModel, ToolModel, model_of
from synthesis.environments.topology import from_statuses, target_param
from synthesis.hashing import derive_seed
from synthesis.models import Environment, InitialState, Scenario
from synthesis.tasks.assembly import assemble_scenario, task_plan_of
from synthesis.tasks.families.questions import askable_fields, record_question
from synthesis.tasks.planner import DEFAULT_MAX_CHAIN, Outcome, Planner
from synthesis.tasks.screens import wrong_record_solves
from synthesis.tasks.spec_model import SpecModel, same_value

# The goal kinds a proposer may ask for, and the tool operations that achieve each. `ask`
# names a query tool of the record's collection and a field; the planner picks the lookups.
KIND_OPERATIONS: dict[str, tuple[str, ...]] = {
    "create": ("create",),
    "transition": ("transition",),
    "update": ("update",),
    "ask": ("get", "find", "list", "search"),
}
PLAN_SOURCE = "llm"


@dataclass(frozen=True)
class ProposedGoal:
    """One goal as a proposer states it, in words: nothing here is trusted."""

    kind: str
    tool: str
    target: str | None = None
    """transition/update/ask: the record's handle ('order 3') or a human value of it."""
    refs: tuple[tuple[str, str], ...] = ()
    """create: (parameter, the referenced record's handle or human value)."""
    values: tuple[tuple[str, str], ...] = ()
    """(parameter, value as text) of the values to set."""
    field: str | None = None
    """ask: the field asked about."""

    @classmethod
    def from_json(cls, raw: dict[str, Any]) -> ProposedGoal:
        def pairs(key: str, name: str) -> tuple[tuple[str, str], ...]:
            return tuple((str(p["param"]), str(p[name])) for p in raw.get(key) or [])

        return cls(
            kind=str(raw["kind"]),
            tool=str(raw["tool"]),
            target=raw.get("target") or None,
            refs=pairs("refs", "record"),
            values=pairs("values", "value"),
            field=raw.get("field") or None,
        )


@dataclass
class GoalPlan:
    """The scenario planned for a goal, or None and why not."""

    scenario: Scenario | None
    reason: str | None = None
    goal: ProposedGoal | None = field(default=None, repr=False)


class Unreachable(Exception):
    """Why a goal cannot be planned (a message for the ledger and the asset's metadata)."""


# --------------------------------------------------------------------------- naming records


def record_handles(model: EnvModel, state: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Handle -> (entity, id) of every keyed record: '<label> <n>', n counting the
    collection's records in id order. A proposer names records by these, never by ids."""
    world = SpecModel(model, state)
    out: dict[str, tuple[str, str]] = {}
    for coll in model.collections:
        if coll.shape != "keyed":
            continue
        for n, rid in enumerate(sorted(world.records(coll.name)), start=1):
            out[f"{coll.label} {n}"] = (coll.name, rid)
    return out


def find_record(model: EnvModel, world: SpecModel, entity: str, words: str | None) -> str:
    """The id of the one record of `entity` the words name (its handle, or the value of one
    of its text fields), else Unreachable."""
    if not words or not words.strip():
        raise Unreachable(f"no {model.entity(entity).label} named")
    wanted = words.strip().casefold()
    for handle, (ent, rid) in record_handles(model, world.state).items():
        if handle.casefold() == wanted:
            if ent != entity:
                raise Unreachable(
                    f"{words!r} is a {model.entity(ent).label}, not a {model.entity(entity).label}"
                )
            return rid
    text_fields = [f.name for f in model.entity(entity).fields if f.type == "str"]
    matches = [
        rid
        for rid, rec in sorted(world.records(entity).items())
        if any(str(rec.get(f) or "").casefold() == wanted for f in text_fields)
    ]
    if not matches:
        raise Unreachable(f"no {model.entity(entity).label} matches {words!r}")
    if len(matches) > 1:
        raise Unreachable(f"{words!r} matches {len(matches)} {model.entity(entity).label}s")
    return matches[0]


def coerce(tool: ToolModel, param: str, text: str, model: EnvModel) -> Any:
    """A proposed value as the tool takes it (a number for a number), else Unreachable."""
    p = next((q for q in tool.params if q.name == param), None)
    if p is None or p.takes:
        raise Unreachable(f"{tool.name} has no value parameter {param!r}")
    fspec = None
    if tool.entity and model.has_entity(tool.entity):
        fspec = next(
            (f for f in model.entity(tool.entity).fields if f.name == (p.field or p.name)), None
        )
    enum = p.enum or (fspec.values if fspec is not None and fspec.type == "enum" else None)
    try:
        if p.type == "integer":
            value: Any = int(str(text).strip())
        elif p.type == "number":
            value = float(str(text).strip())
        elif p.type == "boolean":
            value = {"true": True, "false": False}[str(text).strip().casefold()]
        else:
            value = str(text).strip()
    except (ValueError, KeyError):
        raise Unreachable(f"{param} {text!r} is not a {p.type}") from None
    if enum and value not in enum:
        raise Unreachable(f"{param} {text!r} is not one of {', '.join(map(str, enum))}")
    return value


# --------------------------------------------------------------------------- planning


def plan_for_goal(
    env: Environment,
    state: InitialState,
    goal: ProposedGoal,
    *,
    seed: int,
    index: int = 0,
    model: EnvModel | None = None,
    max_chain_length: int = DEFAULT_MAX_CHAIN,
) -> GoalPlan:
    """The scenario that achieves `goal` in `state` (gold chain planned, every id looked up
    first), provenance `plan_source: llm`; or None with the reason it cannot be planned."""
    try:
        return GoalPlan(
            _plan_goal(env, state, goal, seed, index, model, max_chain_length), None, goal
        )
    except Unreachable as exc:
        return GoalPlan(None, str(exc), goal)
    except (KeyError, TypeError, ValueError) as exc:
        # The goal is untrusted input: whatever it trips over is its reason, not a traceback.
        return GoalPlan(None, f"planner error: {type(exc).__name__}: {exc}", goal)


def _plan_goal(
    env: Environment,
    state: InitialState,
    goal: ProposedGoal,
    seed: int,
    index: int,
    model: EnvModel | None,
    max_chain_length: int,
) -> Scenario:
    if env.kind == "workspace":
        raise Unreachable("workspace environment")
    model = model or model_of(env)
    if not model.exact:
        # The explorer plans inferred models by running them; it has no goal-directed entry.
        raise Unreachable("inferred model")
    tool = _goal_tool(model, goal)
    rng = random.Random(derive_seed("llm_goal", env.env_id, state.state_id, seed, index))
    planner = Planner.start(model, state.state, rng)
    if goal.kind == "ask":
        outcome, family = _plan_ask(planner, tool, goal), "ask"
    else:
        _plan_mutation(planner, tool, goal)
        outcome, family = Outcome(goal_tools=[tool.name]), "chain"
    if len(planner.steps) > max_chain_length:
        raise Unreachable(f"{len(planner.steps)} steps, more than {max_chain_length}")
    plan = task_plan_of(
        planner,
        outcome,
        state,
        seed,
        index,
        max_chain_length,
        extra={"family": family, "plan_source": PLAN_SOURCE},
    )
    if plan is None:
        raise Unreachable("no gradable task: the goal changes nothing")
    scenario = assemble_scenario(env, state, plan, rng)
    if scenario is None:
        raise Unreachable("the task's words would name a hidden id or leave no reply")
    if wrong_record_solves(scenario, model):
        raise Unreachable("a look-alike record would earn the reward")
    return scenario


def _goal_tool(model: EnvModel, goal: ProposedGoal) -> ToolModel:
    if goal.kind not in KIND_OPERATIONS:
        raise Unreachable(f"kind {goal.kind!r} is not one of {', '.join(KIND_OPERATIONS)}")
    tool = next((t for t in model.tools if t.name == goal.tool), None)
    if tool is None:
        raise Unreachable(f"no tool {goal.tool!r}")
    if tool.operation not in KIND_OPERATIONS[goal.kind]:
        raise Unreachable(f"{tool.name} is a {tool.operation} tool, not a {goal.kind}")
    return tool


def _plan_mutation(planner: Planner, tool: ToolModel, goal: ProposedGoal) -> None:
    if tool.operation == "create":
        return _plan_create(planner, tool, goal)
    model, world = planner.model, planner.world
    tp = target_param(tool)
    if tp is None:
        raise Unreachable(f"{tool.name} names no record to act on")
    rid = find_record(model, world, tool.entity, goal.target)
    rec = world.records(tool.entity)[rid]
    args: dict[str, Any] = {tp: rid}
    if tool.operation == "transition":
        status = rec.get(model.entity(tool.entity).status_field or "status")
        if status == tool.target_status or status not in from_statuses(model, tool):
            raise Unreachable(
                f"{tool.name} cannot reach status {tool.target_status} from {status!r}"
            )
    else:
        value_param = next((p for p in tool.params if p.name != tp), None)
        given = dict(goal.values)
        if value_param is None or value_param.name not in given:
            raise Unreachable(f"no new value for {tool.name}")
        value = coerce(tool, value_param.name, given[value_param.name], model)
        if same_value(rec.get(tool.field or value_param.name), value):
            raise Unreachable(f"{value_param.name} is already {value!r}")
        args[value_param.name] = value
    reason = planner.act_on(tool, rid, args)
    if reason is not None:
        raise Unreachable(f"{tool.name}: {reason}")


def _plan_create(planner: Planner, tool: ToolModel, goal: ProposedGoal) -> None:
    refs, given = dict(goal.refs), dict(goal.values)
    args: dict[str, Any] = {}
    for p in tool.params:
        if p.takes:
            args[p.name] = find_record(planner.model, planner.world, p.takes, refs.get(p.name))
    for p in tool.params:
        if p.takes:
            continue
        if p.name in given:
            args[p.name] = coerce(tool, p.name, given[p.name], planner.model)
        else:
            # A value the proposer left open is the planner's to choose, as offline.
            value = planner.param_value(tool, p, args)
            if value is None:
                raise Unreachable(f"no value for {p.name}")
            args[p.name] = value
    reason = planner.create_with(tool, args)
    if reason is not None:
        raise Unreachable(f"{tool.name}: {reason}")


def _plan_ask(planner: Planner, tool: ToolModel, goal: ProposedGoal) -> Outcome:
    entity = tool.entity
    rid = find_record(planner.model, planner.world, entity, goal.target)
    rec = planner.world.records(entity)[rid]
    fname = goal.field or ""
    if fname not in askable_fields(planner, entity, rec):
        raise Unreachable(f"the {fname or '(no field)'} of a {tool.entity} cannot be asked")
    desc = planner.name(entity, rid)
    if desc is None:
        raise Unreachable("no lookup chain names the record")
    outcome = Outcome(goal_tools=[])
    if not record_question(planner, outcome, [], entity, rid, fname, desc, None):
        raise Unreachable("the words naming the record give the answer away")
    return outcome
