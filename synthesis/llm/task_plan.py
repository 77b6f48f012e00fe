"""The `task_plan` stage: a model proposes goals in an environment; the planner proves them.

The model sees the environment's tools (name, description, parameters; for a status change
the statuses it starts from) and a summary of the initial state in which each record has a
handle ("order 3") and its fields, references shown as handles: no record id is ever sent,
since the planner, not the model, produces the gold chain and every id in it comes from a
lookup. The model answers with goals (a kind, a tool, the record by handle or human value,
values to set). A goal that names an unknown tool, a tool of the wrong kind or a parameter
the tool lacks is rejected by the stage's check and repaired like a schema fault (never
cached, so the next build asks again). A structurally sound goal the planner cannot reach
in this state ("pay_order cannot reach status paid from 'cancelled'") is recorded as
rejected with the planner's reason and not repaired: the model cannot see the guards, so a
repair turn would mostly buy another guess. Planned goals become ordinary scenarios
(`plan_source: llm`) that go through wording, the sandboxed gold run, derived checks and
their self-test, and screening like every offline one; none whose gold chain an offline
candidate already has is kept. Any failure of the stage itself (rejected after repairs,
unanswered, stopped by budget, deadline or breaker) leaves the offline scenarios as they
are and says why: never a traceback.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.config import Profile
from synthesis.environments.model import EnvModel, ToolModel
from synthesis.environments.topology import from_statuses
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Environment, InitialState, Scenario
from synthesis.tasks.assembly import gold_chain_key
from synthesis.tasks.goals import (
    KIND_OPERATIONS,
    ProposedGoal,
    plan_for_goal,
    record_handles,
)
from synthesis.tasks.spec_model import SpecModel

STAGE = "task_plan"


def _pairs(name: str) -> dict[str, Any]:
    """A list of (parameter, `name`) objects: strict JSON schemas allow no free-form maps."""
    return {
        "type": "array",
        "items": {
            "type": "object",
            "properties": {"param": {"type": "string"}, name: {"type": "string"}},
            "required": ["param", name],
            "additionalProperties": False,
        },
    }


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goals": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "kind": {"type": "string", "enum": list(KIND_OPERATIONS)},
                    "tool": {"type": "string"},
                    "target": {"type": "string"},
                    "refs": _pairs("record"),
                    "values": _pairs("value"),
                    "field": {"type": "string"},
                },
                "required": ["kind", "tool", "target", "refs", "values", "field"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["goals"],
    "additionalProperties": False,
}
PROMPT = (
    "You propose realistic tasks a customer or a member of staff would ask a business's "
    "assistant to do with the business's tools. Each task is one goal: "
    '"create" (a create tool: name each referenced record in refs and the values to set '
    'in values), "transition" (a status change of one record, named in target; the record '
    'must be in a status the tool starts from), "update" (set one field of the record named '
    'in target to a new value, given in values) or "ask" (a question about the field named '
    "in field of the record named in target, with a tool that reads that kind of record). "
    'Name records only by their handle from the state summary (e.g. "order 3") or by an '
    "exact name or email shown there. Use only the listed tools and parameters; values must "
    "fit the parameter's type and allowed values. Leave unused strings empty and unused "
    "lists empty. Propose varied goals that make sense in the given state. Answer with a "
    'JSON object {"goals": [...]} and nothing else.'
)
# Records per collection shown in the summary: enough to choose from, short enough to read.
MAX_RECORDS_SHOWN = 15
MAX_REJECTED_SHOWN = 5


# --------------------------------------------------------------------------- the request


def tool_lines(model: EnvModel) -> list[str]:
    """One line per tool: name, operation and record kind, what it does, its parameters;
    for a status change, the statuses it starts from."""
    lines = []
    for tool in model.tools:
        params = ", ".join(_param_words(model, p) for p in tool.params) or "no parameters"
        label = model.entity(tool.entity).label if model.has_entity(tool.entity or "") else ""
        line = f"- {tool.name} ({tool.operation} {label}): {tool.description} "
        line += f"Parameters: {params}."
        if tool.operation == "transition":
            starts = ", ".join(from_statuses(model, tool)) or "any"
            line += f" Moves a {model.entity(tool.entity).label} from {starts} to "
            line += f"{tool.target_status}."
        lines.append(line)
    return lines


def _param_words(model: EnvModel, p: Any) -> str:
    takes = model.entity(p.takes).label if p.takes and model.has_entity(p.takes) else p.takes
    kind = f"a {takes} record" if p.takes else p.type
    allowed = f" one of {'/'.join(map(str, p.enum))}" if p.enum else ""
    return f"{p.name} ({kind}{allowed}{'' if p.required else ', optional'})"


def state_lines(model: EnvModel, state: dict[str, Any]) -> list[str]:
    """One line per record (at most MAX_RECORDS_SHOWN per collection): its handle and its
    fields, references shown as the referenced record's handle. No id is shown."""
    world = SpecModel(model, state)
    handles = {v: k for k, v in record_handles(model, state).items()}
    lines = []
    for coll in model.collections:
        if coll.shape != "keyed":
            continue
        records = sorted(world.records(coll.name).items())
        lines.append(f"{coll.label} records ({len(records)}):")
        for rid, rec in records[:MAX_RECORDS_SHOWN]:
            shown = []
            for f in coll.fields:
                value = rec.get(f.name)
                if value is None or isinstance(value, (dict, list)):
                    continue
                if f.type == "ref":
                    value = handles.get((f.ref or "", value), "(unknown)")
                shown.append(f"{f.name}={value}")
            lines.append(f"- {handles[(coll.name, rid)]}: {', '.join(shown)}")
    return lines


def request_messages(model: EnvModel, state: InitialState, n: int) -> list[dict[str, Any]]:
    lines = [
        f"Business: {model.title}",
        f"Goals wanted: {n}",
        "Tools:",
        *tool_lines(model),
        "State:",
        *state_lines(model, state.state),
    ]
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


# --------------------------------------------------------------------------- the check


def goal_fault(model: EnvModel, raw: dict[str, Any]) -> str | None:
    """Why a proposed goal is malformed for this environment, or None. Reachability is the
    planner's to judge, not this check's."""
    tool = next((t for t in model.tools if t.name == raw["tool"]), None)
    if tool is None:
        return f"no tool {raw['tool']!r}"
    if tool.operation not in KIND_OPERATIONS[raw["kind"]]:
        return f"{tool.name} is a {tool.operation} tool, not a {raw['kind']}"
    ref_params = {p.name for p in tool.params if p.takes}
    value_params = {p.name for p in tool.params if not p.takes}
    bad = [r["param"] for r in raw["refs"] if r["param"] not in ref_params]
    bad += [v["param"] for v in raw["values"] if v["param"] not in value_params]
    if bad:
        return f"{tool.name} has no parameter {bad[0]!r} of that kind"
    if raw["kind"] != "create" and not raw["target"].strip():
        return f"a {raw['kind']} goal names its record in target"
    if raw["kind"] == "ask":
        return _field_fault(model, tool, raw["field"])
    return None


def _field_fault(model: EnvModel, tool: ToolModel, fname: str) -> str | None:
    ent = model.entity(tool.entity)
    if fname not in {f.name for f in ent.fields}:
        return f"a {ent.label} has no field {fname!r}"
    return None


def answer_fault(model: EnvModel, value: dict[str, Any]) -> str | None:
    for i, raw in enumerate(value["goals"], start=1):
        fault = goal_fault(model, raw)
        if fault is not None:
            return f"goal {i}: {fault}"
    return None


# --------------------------------------------------------------------------- planning


@dataclass
class ProposedPlans:
    """What the stage added for one environment, and what it could not."""

    scenarios: list[Scenario] = field(default_factory=list)
    proposed: int = 0
    rejected: list[str] = field(default_factory=list)
    """Per goal not planned, or per call that gave no goals: `task_plan: <why>`."""
    attempts: list[LLMCall] = field(default_factory=list)

    def metadata(self) -> dict[str, Any]:
        counts = Counter(r.removeprefix(f"{STAGE}: ") for r in self.rejected)
        return {
            "plans_llm_proposed": self.proposed,
            "plans_llm_planned": len(self.scenarios),
            "plans_llm_rejected": len(self.rejected),
            "plans_llm_rejected_reasons": "; ".join(
                f"{count} x {reason}" for reason, count in counts.most_common(MAX_REJECTED_SHOWN)
            ),
        }


def propose_goals(
    client: LLMClient, model: EnvModel, state: InitialState, n: int, *, seed: int
) -> tuple[list[ProposedGoal], str | None, list[LLMCall]]:
    """Up to `n` structurally sound goals for `state`, else none and `task_plan: <why>`."""
    try:
        answer = ask_structured(
            client,
            request_messages(model, state, n),
            stage=STAGE,
            artifact_id=state.state_id,
            schema=SCHEMA,
            seed=seed,
            accept=lambda value: answer_fault(model, value),
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return [], f"{STAGE}: {exc.reason}", list(exc.attempts)
    goals = [ProposedGoal.from_json(raw) for raw in answer.value["goals"][:n]]
    return goals, None, answer.attempts


def plan_with_model(
    client: LLMClient,
    env: Environment,
    model: EnvModel,
    states: Sequence[InitialState | dict[str, Any]],
    offline: list[Scenario],
    seed: int,
    profile: Profile,
) -> ProposedPlans:
    """The profile's `llm_task_plans` goals asked for across `states` (the first states get
    the remainder), each planned; kept unless an offline candidate (or an earlier goal)
    already has its gold chain. `states` as the `initial_states` artifact holds them."""
    states = [InitialState.model_validate(s) for s in states]
    n, max_chain_length = profile.llm_task_plans, profile.max_chain_length
    out = ProposedPlans()
    if n <= 0 or not states:
        return out
    if not model.exact or env.kind == "workspace":
        # Only the exact planner has a goal-directed entry: no call is spent.
        out.rejected.append(f"{STAGE}: {'inferred model' if not model.exact else env.kind}")
        return out
    seen = {gold_chain_key(s.state_id, s.gold_chain) for s in offline}
    for i, state in enumerate(states):
        wanted = n // len(states) + (1 if i < n % len(states) else 0)
        if wanted == 0:
            continue
        goals, reason, attempts = propose_goals(client, model, state, wanted, seed=seed)
        out.attempts += attempts
        if reason is not None:
            out.rejected.append(reason)
            continue
        out.proposed += len(goals)
        for index, goal in enumerate(goals):
            planned = plan_for_goal(
                env,
                state,
                goal,
                seed=seed,
                index=index,
                model=model,
                max_chain_length=max_chain_length,
            )
            if planned.scenario is None:
                out.rejected.append(f"{STAGE}: {planned.reason}")
                continue
            key = gold_chain_key(state.state_id, planned.scenario.gold_chain)
            if key in seen:
                out.rejected.append(f"{STAGE}: an offline task has the same gold chain")
                continue
            seen.add(key)
            out.scenarios.append(planned.scenario)
    return out
