"""Scenario planning: tasks walked over the tool graph, every id looked up before it is used.

A scenario is a pure function of (environment, initial state, seed, index): pick one or two
mutations weighted by the tool graph, choose targets whose guards hold in the state, and
prepend the lookups (find by a human field, or list filtered by a reference) that produce
every id the mutations consume. The planner reads the environment model
(synthesis.environments.model) and emits a task-plan record (synthesis.tasks.plan); phrasing
(synthesis.tasks.phrasing) reads only that record and names records by human fields, so an agent
has to perform the lookups itself. For an exact (compiled) model nothing is executed here:
outcomes are predicted with `SpecModel`; an inferred model is planned by exploring it in the
sandbox (synthesis.tasks.explorer). Either way the sandboxed gold run (synthesis.tasks.gold)
is the judge.
"""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.field_forms import field_form, money_range
from synthesis.environments.free_text import is_free_text, text_topic
from synthesis.environments.model import CollectionModel, EnvModel, ToolModel, model_of
from synthesis.environments.splits import environment_split
from synthesis.environments.values import calendar_of, price_point
from synthesis.hashing import content_hash, derive_seed, short_id
from synthesis.models import Environment, InitialState, Scenario, ToolCall
from synthesis.rollouts.agents import wrong_record_earns, wrong_record_policy
from synthesis.tasks.chains import Outcome, plan_chain
from synthesis.tasks.checks import (
    REMOVED,
    AskedValue,
    derive_checks,
    diff_states,
    grade,
    reply_request,
)
from synthesis.tasks.conditionals import plan_conditional
from synthesis.tasks.difficulty import difficulty_record
from synthesis.tasks.envfoundry_reward import error_tells, mentions
from synthesis.tasks.infeasible import attribute_values, plan_infeasible
from synthesis.tasks.phrasing import (
    STATUS_VERBS,
    field_words,
    fresh_text,
    join_phrases,
    phrase,
    tool_verb,
    value_words,
)
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.questions import STEP_RESULT, plan_questions
from synthesis.tasks.spec_model import SpecModel, is_number, json_copy, same_value
from synthesis.tasks.text.values import quoted_text
from synthesis.tasks.topology import (
    ToolGraph,
    build_tool_graph,
    from_statuses,
    id_params,
    target_param,
)

GENERATOR = "topology_walk/v1"
# Candidates per requested scenario before giving up: infeasible draws and duplicates are
# common in small states, and each draw is cheap (no execution).
ATTEMPTS_PER_SCENARIO = 8
SECOND_MUTATION_PROBABILITY = 0.4
MAX_QUALIFIERS = 3
# Verbs that undo what a task just created: "book it, then cancel it" is no errand.
UNDO_VERBS = frozenset({"cancel", "void", "delete", "remove", "reject", "revoke", "withdraw"})
# Longest gold chain a plan may have unless the profile says otherwise.
DEFAULT_MAX_CHAIN = 14


def gold_chain_key(state_id: str, gold_chain: Iterable[ToolCall]) -> str:
    """Dedup key: two tasks with the same state and gold chain are the same task."""
    return content_hash([state_id, [c.model_dump(mode="json") for c in gold_chain]])


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


# --------------------------------------------------------------------------- planner

# Fields that name a record for people, shown beside its lookup value when they differ.
_NAME_FIELDS = ("name", "full_name", "title", "display_name", "label")


@dataclass
class _Resolution:
    steps: list[ToolCall]
    text: str
    # (label, words) of a record found by its own lookup field ("artist", "Ada (ada@x)"), and
    # for a record named through such an owner: the owner and the record's words without it.
    found: tuple[str, str] | None = None
    owner: tuple[str, str] | None = None
    own: str | None = None


@dataclass
class _Planner:
    model: EnvModel
    world: SpecModel
    """What the tools would do to the state so far (predicted; nothing runs)."""
    initial: SpecModel
    rng: random.Random
    steps: list[ToolCall] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    known: dict[str, set[str]] = field(default_factory=dict)
    names: dict[tuple[str, str], str] = field(default_factory=dict)
    touched: list[tuple[str, str]] = field(default_factory=list)
    goals: list[PlanGoal] = field(default_factory=list)
    acted: set[tuple[str, str]] = field(default_factory=set)
    """Records a goal already acts on or asks about: no second goal may (no "change it,
    then cancel it"), except one on a record this task created."""
    created: set[tuple[str, str]] = field(default_factory=set)
    require_related: bool = False
    """While set, a new goal must act on a record related to what the task touched."""
    # How records named through their owner read from the owner's side (phrasing's voices).
    owners: dict[tuple[str, str], tuple[str, tuple[str, str], str]] = field(default_factory=dict)

    # -- bookkeeping ---------------------------------------------------------------

    def is_known(self, entity: str, rid: str) -> bool:
        return rid in self.known.get(entity, set())

    def mark(self) -> tuple[int, dict[str, set[str]], dict[tuple[str, str], str]]:
        return len(self.steps), {k: set(v) for k, v in self.known.items()}, dict(self.names)

    def rollback(self, mark: tuple[int, dict[str, set[str]], dict[tuple[str, str], str]]) -> None:
        # Only lookups (queries) run between a mark and a rollback, so the model's state
        # needs no restoring.
        n_steps, known, names = mark
        del self.steps[n_steps:]
        del self.roles[n_steps:]
        self.known, self.names = known, names

    def snapshot(self) -> tuple[Any, ...]:
        """Everything planning a goal changes, to undo a goal that does not fit."""
        return (
            self.world.checkpoint(),
            len(self.steps),
            len(self.goals),
            {k: set(v) for k, v in self.known.items()},
            dict(self.names),
            list(self.touched),
            set(self.acted),
            set(self.created),
            dict(self.owners),
        )

    def restore(self, snap: tuple[Any, ...]) -> None:
        state, n_steps, n_goals, known, names, touched, acted, created, owners = snap
        self.owners = dict(owners)
        self.world.state = state  # the model copies what it changes: `state` stays as it is
        del self.steps[n_steps:]
        del self.roles[n_steps:]
        del self.goals[n_goals:]
        self.known, self.names = {k: set(v) for k, v in known.items()}, dict(names)
        self.touched, self.acted, self.created = list(touched), set(acted), set(created)

    def related(self, entity: str, rec: dict[str, Any]) -> bool:
        """Whether `rec` shares a record with what the task already touched (the same
        customer's other order, the product an order is for): what makes goals one task."""
        if not self.touched:
            return False
        mine = self._neighbourhood(entity, rec)
        for other_entity, rid in self.touched:
            other = self.world.records(other_entity).get(rid)
            if other is not None and mine & self._neighbourhood(other_entity, other):
                return True
        return False

    def _neighbourhood(self, entity: str, rec: dict[str, Any]) -> set[tuple[str, str]]:
        out = {(entity, str(rec.get("id")))}
        for f in self.model.entity(entity).fields:
            if f.type == "ref" and f.ref and rec.get(f.name) is not None:
                out.add((f.ref, str(rec[f.name])))
        return out

    def free(self, entity: str, rid: str) -> bool:
        """Whether a new goal may act on this record (see `acted`)."""
        return (entity, rid) not in self.acted

    def run(self, call: ToolCall, role: str) -> dict[str, Any] | None:
        """Append a step after checking its ids were produced earlier; None if it fails."""
        tool = self.model.tool(call.tool)
        for param, entity in id_params(tool).items():
            value = call.args.get(param)
            if value is not None and not self.is_known(entity, value):
                return None
        result = self.world.call(call.tool, call.args)
        if not result.get("success"):
            return None
        self.steps.append(call)
        self.roles.append(role)
        self._learn(tool.entity, result.get("data"))
        return result

    def attempt(self, call: ToolCall) -> bool:
        """Append a call the tool's guard refuses (an infeasible task's request), after
        checking its ids were looked up; False if it would succeed (or an id is unknown)."""
        tool = self.model.tool(call.tool)
        for param, entity in id_params(tool).items():
            value = call.args.get(param)
            if value is not None and not self.is_known(entity, value):
                return False
        before = self.world.checkpoint()
        result = self.world.call(call.tool, call.args)
        if result.get("success") or self.world.state != before:
            self.world.state = before
            return False
        self.steps.append(call)
        self.roles.append("refused")
        return True

    def _learn(self, entity: str, data: Any) -> None:
        records = data if isinstance(data, list) else [data]
        ent = self.model.entity(entity)
        refs = {f.name: f.ref for f in ent.fields if f.type == "ref" and f.ref}
        for rec in records:
            if not isinstance(rec, dict) or "id" not in rec:
                continue
            self.known.setdefault(entity, set()).add(rec["id"])
            for fname, ref in refs.items():
                if rec.get(fname) is not None:
                    self.known.setdefault(ref, set()).add(rec[fname])

    # -- naming records --------------------------------------------------------------

    def display(self, entity: str, rec: dict[str, Any]) -> str | None:
        """How people name a record (e.g. 'Ada Lovelace (ada@example.com)'), if they can."""
        ent = self.model.entity(entity)
        if not ent.lookup_field or not _texty(rec.get(ent.lookup_field)):
            return None
        key = str(rec[ent.lookup_field])
        for name_field in _NAME_FIELDS:
            other = rec.get(name_field)
            if name_field != ent.lookup_field and _texty(other) and other != key:
                return f"{other} ({key})"
        return key

    def qualifier(self, entity: str, rec: dict[str, Any], fname: str) -> str | None:
        ent = self.model.entity(entity)
        value = rec.get(fname)
        if value is None or fname == "id":
            return None
        fspec = ent.field(fname)
        if fspec.type == "ref":
            ref_rec = self.world.records(fspec.ref or "").get(value)
            shown = self.display(fspec.ref or "", ref_rec) if ref_rec else None
            return f"{self.model.entity(fspec.ref or '').label} {shown}" if shown else None
        if isinstance(value, (dict, list)):
            return None
        return f"{field_words(fname)} {quoted_text(fname, value_words(value))}"

    def distinguish(
        self, entity: str, rec: dict[str, Any], among: list[dict[str, Any]], skip: set[str]
    ) -> tuple[str, ...] | None:
        """The fewest fields whose values single `rec` out of `among` (None if none do)."""
        ent = self.model.entity(entity)
        others = [o for o in among if o.get("id") != rec.get("id")]
        if not others:
            return ()
        fields = [f.name for f in ent.fields if f.name not in skip]
        # Status and plain values first: a reference qualifier costs the agent (and the gold
        # chain) one more lookup to match ids against.
        fields.sort(key=lambda n: (n != ent.status_field, ent.field(n).type == "ref"))
        usable = [f for f in fields if self.qualifier(entity, rec, f) is not None]
        for size in range(1, min(MAX_QUALIFIERS, len(usable)) + 1):
            for combo in itertools.combinations(usable, size):
                if all(any(o.get(f) != rec.get(f) for f in combo) for o in others):
                    return combo
        return None

    # -- resolving ids through lookups ----------------------------------------------------

    def resolve(self, entity: str, rid: str, depth: int = 0) -> _Resolution | None:
        """Lookup steps that produce `rid` (not yet run) and the words that name it.

        A record the task already named (found, created or acted on) needs no new lookup. An
        id merely seen inside another record does: the agent has no way to tell from the
        task's words that it is the one meant.
        """
        if (entity, rid) in self.names and self.is_known(entity, rid):
            return _Resolution([], self.names[(entity, rid)])
        rec = self.world.records(entity).get(rid)
        if rec is None or depth > 2:
            return None
        options = self._lookup_options(entity, rec, depth)
        self.rng.shuffle(options)
        # Finds read best; list-by-reference makes longer chains, so it keeps a fair share.
        if self.rng.random() < 0.6:
            options.sort(key=lambda o: o[0] != "find")
        for _, make in options:
            res = make()
            if res is not None:
                return res
        return None

    def _lookup_options(self, entity: str, rec: dict[str, Any], depth: int) -> list:
        ent = self.model.entity(entity)
        options: list = []
        for tool in self.model.tools:
            if tool.entity != entity or tool.kind != "query":
                continue
            if tool.operation == "get" and self.is_known(entity, rec["id"]):
                options.append(("get", lambda t=tool: self._via_get(ent, t, rec)))
            if tool.operation == "find" and tool.field and _texty(rec.get(tool.field)):
                options.append(("find", lambda t=tool: self._via_find(ent, t, rec)))
            elif tool.operation in ("list", "search"):
                if not any(p.required for p in tool.params):
                    options.append(
                        ("list", lambda t=tool: self._via_list(ent, t, rec, None, depth))
                    )
                for p in tool.params:
                    if (
                        p.takes
                        and p.takes != entity
                        and rec.get(p.field or p.name) is not None
                        and depth < 2
                    ):
                        options.append(
                            (
                                "list_by_ref",
                                lambda t=tool, p=p: self._via_list(ent, t, rec, p, depth),
                            )
                        )
        return options

    def _via_get(
        self, ent: CollectionModel, tool: ToolModel, rec: dict[str, Any]
    ) -> _Resolution | None:
        """Read a record by the id a named record refers to ("the product of that order")."""
        tp = target_param(tool)
        if tp is None:
            return None
        for (owner_entity, owner_id), owner_text in sorted(self.names.items()):
            owner = self.world.records(owner_entity).get(owner_id)
            # "that order" names one record only while it is the latest the task touched.
            latest = bool(self.touched) and self.touched[-1] == (owner_entity, owner_id)
            if owner is None or (owner_text.startswith("that ") and not latest):
                continue
            for f in self.model.entity(owner_entity).fields:
                if f.type == "ref" and f.ref == ent.name and owner.get(f.name) == rec["id"]:
                    return _Resolution(
                        [ToolCall(tool=tool.name, args={tp: rec["id"]})],
                        f"the {ent.label} of {owner_text}",
                    )
        return None

    def _via_find(
        self, ent: CollectionModel, tool: ToolModel, rec: dict[str, Any]
    ) -> _Resolution | None:
        value = rec[tool.field or ""]
        matches = [
            r
            for r in self.world.records(ent.name).values()
            if same_value(r.get(tool.field or ""), value)
        ]
        shown = self.display(ent.name, rec)
        if len(matches) != 1 or shown is None:
            return None
        param = next(
            (p.name for p in tool.params if (p.field or p.name) == tool.field),
            tool.params[0].name if tool.params else None,
        )
        if param is None:
            return None
        return _Resolution(
            [ToolCall(tool=tool.name, args={param: value})],
            f"{ent.label} {shown}",
            found=(ent.label, shown),
        )

    def _via_list(
        self, ent: CollectionModel, tool: ToolModel, rec: dict[str, Any], by: Any, depth: int
    ) -> _Resolution | None:
        steps: list[ToolCall] = []
        args: dict[str, Any] = {}
        skip: set[str] = set()
        prefix = ""
        owner = None
        if by is not None:
            owner_id = rec[by.field or by.name]
            owner = self.world.records(by.takes).get(owner_id)
            if owner is None or self.display(by.takes, owner) is None:
                return None
            owner_res = self.resolve(by.takes, owner_id, depth + 1)
            if owner_res is None:
                return None
            steps.extend(owner_res.steps)
            args[by.name] = owner_id
            skip.add(by.field or by.name)
            prefix = f" of {owner_res.text}"
            owner = owner_res.found
        listed = self.world.call(tool.name, args).get("data") or []
        if not any(r.get("id") == rec["id"] for r in listed):
            return None
        fields = self.distinguish(ent.name, rec, listed, skip)
        if fields is None or (not fields and not prefix):
            return None
        if not self._still_true_at_start(tool, args, rec, fields):
            return None
        quals = []
        for fname in fields:
            fspec = ent.field(fname)
            if fspec.type == "ref":
                # To match "with product Sencha" against listed ids the agent needs Sencha's
                # id first, so the gold chain looks it up too.
                ref_res = self.resolve(fspec.ref or "", rec[fname], depth + 1)
                if ref_res is None:
                    return None
                steps.extend(ref_res.steps)
            quals.append(self.qualifier(ent.name, rec, fname) or "")
        text = f"the {ent.label}{prefix}"
        own = ent.label
        if quals:
            text += " with " + join_phrases(quals)
            own += " with " + join_phrases(quals)
        steps.append(ToolCall(tool=tool.name, args=args))
        return _Resolution(_unique_calls(steps), text, owner=owner, own=own if owner else None)

    def _still_true_at_start(
        self, tool: ToolModel, args: dict[str, Any], rec: dict[str, Any], fields: tuple[str, ...]
    ) -> bool:
        # The agent reads the whole task before acting: a description made after the first
        # mutation ("the confirmed appointment") must also single the record out, and still
        # be true of it, in the initial state.
        before = self.initial.records(tool.entity).get(rec["id"])
        if before is None:
            return True
        if any(before.get(f) != rec.get(f) for f in fields):
            return False
        listed = self.initial.call(tool.name, args).get("data") or []
        return all(
            any(o.get(f) != rec.get(f) for f in fields) for o in listed if o.get("id") != rec["id"]
        ) and (bool(fields) or len(listed) == 1)

    def name(self, entity: str, rid: str) -> str | None:
        """Look a record up (steps appended) and return the words that name it."""
        res = self.resolve(entity, rid)
        if res is None:
            return None
        mark = self.mark()
        if not self.adopt(entity, rid, res):
            self.rollback(mark)
            return None
        return self.names.get((entity, rid), res.text)

    def adopt(self, entity: str, rid: str, res: _Resolution) -> bool:
        for call in res.steps:
            if call in self.steps:
                continue  # the task already looked this up (the same customer, again)
            if self.run(call, "lookup") is None:
                return False
        if not self.is_known(entity, rid):
            return False
        self.names.setdefault((entity, rid), res.text)
        if res.owner and res.own:
            self.owners.setdefault((entity, rid), (res.text, res.owner, res.own))
        return True

    # -- binding a mutation ----------------------------------------------------------------

    def plan_mutation(self, tool: ToolModel, follow: tuple[str, str] | None) -> bool:
        op = tool.operation
        if op == "create":
            return self._plan_create(tool)
        if op in ("transition", "update"):
            return self._plan_on_record(tool, follow)
        return False

    def _eligible(self, tool: ToolModel, rec: dict[str, Any]) -> bool:
        if tool.operation == "transition":
            ent = self.model.entity(tool.entity)
            status = rec.get(ent.status_field or "status")
            return status in from_statuses(self.model, tool) and status != tool.target_status
        return True

    def _plan_on_record(self, tool: ToolModel, follow: tuple[str, str] | None) -> bool:
        tp = target_param(tool)
        if tp is None:
            return False
        recs = self.world.records(tool.entity)
        candidates = [
            rid
            for rid in sorted(recs)
            if self._eligible(tool, recs[rid])
            and self.free(tool.entity, rid)
            and not ((tool.entity, rid) in self.created and not _composes_with_create(tool))
        ]
        self.rng.shuffle(candidates)
        candidates.sort(key=lambda rid: not self.related(tool.entity, recs[rid]))
        if self.require_related:
            candidates = [rid for rid in candidates if self.related(tool.entity, recs[rid])]
        if follow and follow[0] == tool.entity and follow[1] in candidates:
            candidates.remove(follow[1])
            candidates.insert(0, follow[1])
        for rid in candidates:
            args: dict[str, Any] = {tp: rid}
            if tool.operation == "update":
                value_param = next((p for p in tool.params if p.name != tp), None)
                value = self._new_value(tool, recs[rid])
                if value_param is None or value is None:
                    return False
                args[value_param.name] = value
            if self.act_on(tool, rid, args) is None:
                return True
        return False

    def act_on(self, tool: ToolModel, rid: str, args: dict[str, Any]) -> str | None:
        """Look record `rid` up and call `tool` on it with `args` (steps and goal appended);
        None when done, else why not (nothing appended)."""
        recs = self.world.records(tool.entity)
        guard = self.world.guard_error(tool, args, recs[rid])
        if guard is not None:
            return f"refused by the tool's guard: {guard}"
        res = self.resolve(tool.entity, rid)
        if res is None:
            return "no lookup chain names the record"
        mark = self.mark()
        if not self.adopt(tool.entity, rid, res):
            self.rollback(mark)
            return "its lookup chain fails"
        desc = self.names.get((tool.entity, rid), res.text)
        if self.run(ToolCall(tool=tool.name, args=args), "mutation") is None:
            self.rollback(mark)
            return "the call fails"
        goal = self._mutation_goal(tool, desc, args)
        owned = self.owners.get((tool.entity, rid))
        if owned and owned[0] == desc:
            goal = goal.model_copy(update={"owner": owned[1], "own_target": owned[2]})
        self.goals.append(goal)
        self.touched.append((tool.entity, rid))
        self.acted.add((tool.entity, rid))
        self.names[(tool.entity, rid)] = f"that {self.model.entity(tool.entity).label}"
        return None

    def _mutation_goal(self, tool: ToolModel, desc: str, args: dict[str, Any]) -> PlanGoal:
        verb = tool_verb(tool.name)
        if tool.operation == "update":
            value = next(v for k, v in args.items() if k != target_param(tool))
            return PlanGoal(
                kind="update",
                tool=tool.name,
                verb=verb,
                target=desc,
                values=[(field_words(tool.field or ""), value_words(value))],
            )
        # Whether the text also states the resulting status is a choice of what the task says,
        # so it is drawn here, in plan order (phrasing draws nothing mid-plan).
        says_result = verb not in STATUS_VERBS and self.rng.random() < 0.5
        return PlanGoal(
            kind="transition",
            tool=tool.name,
            verb=verb,
            target=desc,
            to_status=tool.target_status,
            says_result=says_result,
        )

    def _plan_create(self, tool: ToolModel) -> bool:
        ref_params = [p for p in tool.params if p.takes]
        choices: dict[str, list[str]] = {}
        for p in ref_params:
            recs = self.world.records(p.takes or "")
            ok = [rid for rid in sorted(recs) if self._ref_ok(tool, p.name, recs[rid])]
            self.rng.shuffle(ok)
            ok.sort(key=lambda rid, p=p: not self.related(p.takes or "", recs[rid]))
            if not ok:
                return False
            choices[p.name] = ok[:4]
        combos = list(itertools.product(*(choices[p.name] for p in ref_params)))[:8]
        done = {
            tuple(c.args.get(p.name) for p in ref_params)
            for c, role in zip(self.steps, self.roles, strict=True)
            if c.tool == tool.name and role == "mutation"
        }
        for combo in combos:
            if combo in done:
                continue  # the same record twice reads as a mistake, not a second goal
            if self.require_related and not any(
                self.related(p.takes or "", self.world.records(p.takes or "")[rid])
                for p, rid in zip(ref_params, combo, strict=True)
            ):
                continue
            args = dict(zip([p.name for p in ref_params], combo, strict=True))
            # Free text is written last, about the record the other arguments make.
            for p in sorted(tool.params, key=lambda p: self._writes_free_text(tool, p)):
                if p.takes:
                    continue
                value = self._param_value(tool, p, args)
                if value is None:
                    break
                args[p.name] = value
            else:
                if self.create_with(tool, args) is None:
                    return True
        return False

    def create_with(self, tool: ToolModel, args: dict[str, Any]) -> str | None:
        """Look up the records `args` refers to and call create `tool` (steps and goal
        appended); None when done, else why not (nothing appended)."""
        guard = self.world.guard_error(tool, args, None)
        if guard is not None:
            return f"refused by the tool's guard: {guard}"
        ref_params = [p for p in tool.params if p.takes]
        mark = self.mark()
        quals: list[str] = []
        owner, others = None, []
        for p in ref_params:
            res = self.resolve(p.takes or "", args[p.name])
            if res is None or not self.adopt(p.takes or "", args[p.name], res):
                self.rollback(mark)
                return f"no lookup chain names its {field_words(p.name)}"
            text = self.names.get((p.takes or "", args[p.name]), res.text)
            quals.append(text)
            # The first record found by its own lookup field is whom the new one is
            # for (the customer of an order), when phrasing speaks as them.
            if owner is None and res.found and text == res.text:
                owner = res.found
            else:
                others.append(text)
        result = self.run(ToolCall(tool=tool.name, args=args), "mutation")
        if result is None:
            self.rollback(mark)
            return "the call fails"
        new = result["data"]
        scalars = [
            (field_words(p.field or p.name), value_words(args[p.name]))
            for p in tool.params
            if not p.takes
        ]
        label = self.model.entity(tool.entity).label
        self.goals.append(
            PlanGoal(
                kind="create",
                tool=tool.name,
                verb=tool_verb(tool.name),
                label=label,
                refs=quals,
                values=scalars,
                owner=owner,
                own_target=join_phrases(others) if owner else None,
            )
        )
        self.touched.append((tool.entity, new["id"]))
        self.created.add((tool.entity, new["id"]))
        self.names[(tool.entity, new["id"])] = f"that new {label}"
        return None

    def _ref_ok(self, tool: ToolModel, param: str, rec: dict[str, Any]) -> bool:
        for pre in tool.preconditions:
            if pre.param != param:
                continue
            if pre.kind == "ref_field_equals" and rec.get(pre.field or "") != pre.value:
                return False
            if pre.kind == "ref_field_in" and rec.get(pre.field or "") not in pre.values:
                return False
            if pre.kind == "ref_field_gte_param":
                have = rec.get(pre.field or "")
                if not (is_number(have) and have >= 1):
                    return False
        return True

    def _param_value(self, tool: ToolModel, p: Any, args: dict[str, Any]) -> Any:
        ent = self.model.entity(tool.entity)
        fname = p.field or p.name
        fspec = next((f for f in ent.fields if f.name == fname), None)
        enum = p.enum or (fspec.values if fspec and fspec.type == "enum" else None)
        if enum:
            return self.rng.choice(sorted(enum))
        cap = None
        for pre in tool.preconditions:
            if pre.kind == "ref_field_gte_param" and pre.other == p.name:
                ref_param = next(q for q in tool.params if q.name == pre.param)
                ref = self.world.records(ref_param.takes or "").get(args.get(pre.param))
                have = ref.get(pre.field or "") if ref else None
                cap = have if cap is None or not is_number(have) else min(cap, have)
            elif pre.kind == "param_at_most" and pre.param == p.name:
                cap = pre.value if cap is None else min(cap, pre.value)
        lo = max(1, int(p.minimum or 1))
        if p.type == "integer":
            hi = lo + 3 if cap is None else min(int(cap), lo + 3)
            return self.rng.randint(lo, hi) if hi >= lo else None
        if p.type == "number":
            bounds = money_range(fspec) if fspec is not None else None
            if bounds is not None:
                # An amount the topic prices (a lesson's fee) costs what its records cost.
                high = bounds[1] if cap is None else min(bounds[1], cap)
                return price_point(self.rng, bounds[0], high) if high >= bounds[0] else None
            value = round(self.rng.uniform(lo, lo + 40), 2)
            return value if cap is None or value <= cap else None
        if p.type == "boolean":
            return self.rng.random() < 0.5
        if fspec is not None and fspec.type == "datetime":
            return self.rng.choice(calendar_of(fspec))
        record = {q.field or q.name: args[q.name] for q in tool.params if q.name in args}
        return self._fresh_text(ent, fname, record)

    def _writes_free_text(self, tool: ToolModel, p: Any) -> bool:
        ent = self.model.entity(tool.entity)
        fspec = next((f for f in ent.fields if f.name == (p.field or p.name)), None)
        return fspec is not None and is_free_text(fspec)

    def _new_value(self, tool: ToolModel, rec: dict[str, Any]) -> Any:
        ent = self.model.entity(tool.entity)
        fname = tool.field or ""
        current = rec.get(fname)
        fspec = next((f for f in ent.fields if f.name == fname), None)
        if fspec is None:
            return None
        if fspec.type == "enum":
            others = [v for v in fspec.values if v != current]
            return self.rng.choice(others) if others else None
        if fspec.type == "bool":
            return not current
        if fspec.type == "int":
            return (current if is_number(current) else 0) + self.rng.randint(1, 5)
        if fspec.type == "float":
            base = float(current) if is_number(current) and current > 0 else 10.0
            value = round(base * self.rng.choice((0.8, 0.9, 1.1, 1.25)), 2)
            value = value if value != current and value > 0 else round(base + 1.0, 2)
            form = field_form(fspec)
            return value if form is None or form.admits(value) else None
        if fspec.type == "datetime":
            moments = [m for m in calendar_of(fspec) if m != current]
            return self.rng.choice(moments) if moments else None
        if fspec.type == "ref":
            return None
        return self._fresh_text(ent, fname, rec)

    def _fresh_text(self, ent: CollectionModel, fname: str, record: dict[str, Any]) -> str:
        """New text for field `fname` of a record of `ent` (`record`: its fields so far),
        about what the record is about, unlike the text any of its records has."""
        taken = {str(r.get(fname)).casefold() for r in self.world.records(ent.name).values()}
        topic = text_topic(self.model.collections, ent.name, record, self.world.records)
        return fresh_text(self.rng, fname, taken, topic)


def _composes_with_create(tool: ToolModel) -> bool:
    """Whether a goal may act on a record the task just created: moving it on (pay, confirm)
    composes; changing what was just set or undoing the creation does not."""
    return tool.operation == "transition" and tool_verb(tool.name) not in UNDO_VERBS


def _unique_calls(calls: list[ToolCall]) -> list[ToolCall]:
    seen: set[str] = set()
    out = []
    for call in calls:
        key = content_hash(call.model_dump(mode="json"))
        if key not in seen:
            seen.add(key)
            out.append(call)
    return out


def _texty(v: Any) -> bool:
    return isinstance(v, str) and bool(v.strip())


# --------------------------------------------------------------------------- assembly


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
    plan = _plan_task(model, graph, state, seed, index, max_chain_length, rng)
    scenario = assemble_scenario(env, state, plan, rng) if plan is not None else None
    if scenario is None or wrong_record_solves(scenario, model):
        return None
    if credit_falls(scenario, model):
        return None
    return scenario


def credit_falls(scenario: Scenario, model: EnvModel) -> bool:
    """Whether partial credit would fall somewhere along the gold chain: an agent that has
    done the first k steps must never score more than one that has done k + 1 (a step that
    changes a field no check allows, undone by a later one, would punish progress). Played
    in the exact model, graded by the checks the gold run yields, with no reply (a reply's
    credit comes at the end, whatever the path)."""
    world = SpecModel(model, scenario.initial_state)
    states = [json_copy(world.state)]
    results = []
    for call in scenario.gold_chain:
        results.append(world.call(call.tool, call.args))
        states.append(json_copy(world.state))
    played = scenario.model_copy(update={"final_state": world.state, "gold_results": results})
    checks = derive_checks(played, model=model)
    rewards = [grade(checks, scenario.start_state, state, "").reward for state in states]
    return any(later < earlier for earlier, later in zip(rewards, rewards[1:], strict=False))


def wrong_record_solves(scenario: Scenario, model: EnvModel) -> bool:
    """Whether the wrong-record baseline would earn a reward on this planned task.

    Every family's reply value (asked of a record found by a lookup, a listing or through a
    reference; a conditional's reading; an infeasible request's refused fact) ends up here,
    so the task is judged whole, as the self-test will judge it: the gold chain and the
    baseline's chain (the same decoys, `synthesis.rollouts.agents.wrong_record_policy`) are
    played in the exact model, and the baseline's honest reply is graded by the checks the
    gold run yields. A look-alike record that shares the asked value (three accounts named
    alike, all of them active) makes the task unprovable; the self-test would quarantine it.
    """
    gold = SpecModel(model, scenario.initial_state)
    results = [gold.call(c.tool, c.args) for c in scenario.gold_chain]
    played = scenario.model_copy(update={"final_state": gold.state, "gold_results": results})
    wrong = wrong_record_policy(played, model)
    if wrong is None:
        return False  # no decoy: the self-test runs no wrong-record baseline either
    world = SpecModel(model, scenario.initial_state)
    wrong_results = [world.call(c.tool, c.args) for c in wrong.chain]
    checks = derive_checks(played, model=model)
    return wrong_record_earns(played, checks, world.state, wrong_results, model) is not None


# Which family a candidate comes from (weights). Infeasible draws fail more often (not every
# environment state affords one, and the planner drops those a look-alike record's fact
# would answer: `wrong_record_solves`), so they are drawn well above the 10% of published
# tasks they must reach.
FAMILIES: tuple[tuple[str, float], ...] = (
    ("chain", 0.56),
    ("ask", 0.14),
    ("conditional", 0.14),
    ("infeasible", 0.16),
)
_FAMILY_PLANNERS = {
    "chain": plan_chain,
    "ask": plan_questions,
    "conditional": plan_conditional,
    "infeasible": plan_infeasible,
}


def _plan_task(
    model: EnvModel,
    graph: ToolGraph,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
    rng: random.Random,
) -> TaskPlan | None:
    planner = _Planner(model, SpecModel(model, state.state), SpecModel(model, state.state), rng)
    family = rng.choices([f for f, _ in FAMILIES], weights=[w for _, w in FAMILIES])[0]
    outcome = _FAMILY_PLANNERS[family](planner, graph, state.state, max_chain_length)
    if outcome is None:
        return None
    return task_plan_of(
        planner, outcome, state, seed, index, max_chain_length, extra={"family": family}
    )


def task_plan_of(
    planner: _Planner,
    outcome: Outcome,
    state: InitialState,
    seed: int,
    index: int,
    max_chain_length: int,
    *,
    extra: dict[str, Any],
) -> TaskPlan | None:
    """The task-plan record of what `planner` planned (None if it makes no gradable task:
    no goal, too long, or no change and no reply to grade). An infeasible task's refused
    request changes nothing (`_Planner.attempt`); its other goals may."""
    model = planner.model
    if not planner.goals or len(planner.steps) > max_chain_length:
        return None
    reply = outcome.expected_reply()
    changed = planner.world.state != state.state
    if outcome.kind == "feasible" and not changed and reply is None:
        return None
    if reply is not None:
        reply["candidates"] = candidate_values(planner, outcome)
    if reply is not None and "refusal" in reply:
        # Refused alone, a reply that claims something was done is false; beside goals that
        # were done, it may say so of them.
        reply["refusal"] = {**reply["refusal"], "alone": not changed}
    if reply is not None and changed:
        # The right reply states what changed ("its price is now 90 (it was 110.83)"): a
        # decoy's value that the changes themselves carry cannot tell a wrong reply apart.
        said = _changed_words(state.state, planner.world.state)
        for key in ("exclude", "candidates"):
            reply[key] = [v for v in reply[key] if value_words(v).casefold() not in said]
    hidden = hidden_lookups(model, planner.steps, planner.roles)
    # The gold chain played once in the exact model: both readings below need its results.
    results = chain_results(model, state.state, planner.steps)
    decoys = listed_decoys(model, state.state, planner.steps, planner.roles, results=results)
    return TaskPlan(
        env_id=model.env_id,
        state_id=state.state_id,
        seed=seed,
        index=index,
        title=model.title,
        labels=[c.label for c in model.collections],
        goals=list(planner.goals),
        gold_chain=list(planner.steps),
        roles=list(planner.roles),
        facts=plan_facts(model, planner.steps),
        hidden_ids=sorted(state_ids(state.state, planner.world.state)),
        goal_tools=list(outcome.goal_tools),
        generator=GENERATOR,
        extra=dict(extra),
        kind="infeasible" if outcome.kind == "infeasible" else "feasible",
        expected_reply=reply,
        asked=[
            a.to_json()
            for a in asked_in_chain(
                model, state.state, planner.steps, outcome.asked, results=results
            )
        ],
        difficulty=difficulty_record(
            steps=len(planner.steps),
            n_mutations=planner.roles.count("mutation"),
            n_lookups=planner.roles.count("lookup"),
            hidden_lookups=hidden,
            decoys=decoys + len(outcome.exclude),
            conditionals=outcome.conditionals,
            infeasible=outcome.kind == "infeasible",
        ),
    )


def candidate_values(planner: _Planner, outcome: Outcome) -> list[Any]:
    """The values a hedge would state beside the right one: every other value the asked
    attributes have among the records (and may take, for an enum), and the other values of
    a refusal's facts. A reply that states one of them is not a specific answer."""
    asked = [a for a in outcome.asked if a[0] not in (STEP_RESULT, "#count", "#aggregate")]
    said = {repr(planner.world.records(e).get(rid, {}).get(f)) for e, rid, f, _ in asked}
    values: dict[str, Any] = {}
    for entity, _rid, fname, _what in asked:
        for value in attribute_values(planner, entity, fname):
            values.setdefault(repr(value), value)
    for value in (outcome.refusal or {}).get("candidates", []):
        values.setdefault(repr(value), value)
    return [values[k] for k in sorted(values) if k not in said]


def _changed_words(initial: dict[str, Any], final: dict[str, Any]) -> set[str]:
    """Casefolded words of every value the changes from `initial` to `final` set or replace,
    and of the fields of records they create: what a reply stating the outcome may say."""
    diff = diff_states(initial, final)
    values: list[Any] = []
    for coll, rid, fname, new in diff.changed:
        values += [new, initial[coll][rid].get(fname, REMOVED)]
    for _, _, record in diff.created:
        values += list(record.values())
    return {value_words(v).casefold() for v in values if v is not REMOVED and v is not None}


def chain_results(
    model: EnvModel, initial: dict[str, Any], chain: list[ToolCall]
) -> list[dict[str, Any]]:
    """What each call of `chain` returns when played from `initial` in the exact model."""
    world = SpecModel(model, initial)
    return [world.call(c.tool, c.args) for c in chain]


def asked_in_chain(
    model: EnvModel,
    initial: dict[str, Any],
    chain: list[ToolCall],
    asked: list[tuple[str, str, str, str]],
    *,
    results: list[dict[str, Any]] | None = None,
) -> list[AskedValue]:
    """Each asked value with the last gold step whose result shows it (and where), so the
    oracle's answer, and a mutant's, read it from what that run saw. `results` are the
    chain's (`chain_results`) when the caller has them."""
    if results is None:
        results = chain_results(model, initial, chain)
    out = []
    for entity, rid, fname, what in asked:
        if entity == STEP_RESULT:
            # A figure a step computed (an aggregate): its value where that step shows it.
            step, path = int(rid), tuple(fname)
            value: Any = results[step]
            for key in path:
                value = value[key]
            out.append(AskedValue(what, value, step, path))
            continue
        # The value before the chain, as a fresh SpecModel reads it (only the value copied).
        value = json_copy(initial.get(model.entity(entity).collection, {})[rid][fname])
        step: int | None = None
        path: tuple[Any, ...] = (model.entity(entity).collection, rid, fname)
        for i, result in enumerate(results):
            data = result.get("data") if result.get("success") else None
            if isinstance(data, dict) and data.get("id") == rid and fname in data:
                step, path = i, ("data", fname)
            elif isinstance(data, list):
                for j, rec in enumerate(data):
                    if isinstance(rec, dict) and rec.get("id") == rid and fname in rec:
                        step, path = i, ("data", j, fname)
        out.append(AskedValue(what, value, step, path))
    return out


def hidden_lookups(model: EnvModel, chain: list[ToolCall], roles: list[str]) -> int:
    """Lookups that take an id an earlier step revealed (chained reads)."""
    n = 0
    for call, role in zip(chain, roles, strict=True):
        if role == "lookup" and any(
            call.args.get(p) is not None for p in id_params(model.tool(call.tool))
        ):
            n += 1
    return n


def listed_decoys(
    model: EnvModel,
    initial: dict[str, Any],
    chain: list[ToolCall],
    roles: list[str],
    *,
    results: list[dict[str, Any]] | None = None,
) -> int:
    """Records the agent must tell apart from the one meant: the others each listing shows
    (`results`: the chain's, `chain_results`, when the caller has them)."""
    if results is None:
        results = chain_results(model, initial, chain)
    n = 0
    for call, role, result in zip(chain, roles, results, strict=True):
        if role == "lookup" and model.tool(call.tool).operation == "list":
            n += max(0, len(result.get("data") or []) - 1)
    return n


def plan_facts(model: EnvModel, chain: Iterable[ToolCall]) -> list[str]:
    """The values a task's words must carry: every argument that is not a record id."""
    facts: list[str] = []
    for call in chain:
        ids = id_params(model.tool(call.tool))
        for name, value in call.args.items():
            if name not in ids and isinstance(value, (str, int, float, bool)):
                facts.append(value_words(value))
    return list(dict.fromkeys(facts))


def assemble_scenario(
    env: Environment, state: InitialState, plan: TaskPlan, rng: random.Random
) -> Scenario | None:
    """A scenario from a plan, worded by the offline phrasing (None if the words leak an id)."""
    text, persona = phrase(plan, rng, archetype=env.archetype)
    if mentions_an_id(text, plan.hidden_ids):
        return None
    chain = list(plan.gold_chain)
    n_mutations = plan.n_mutations
    reply = safe_reply(plan, text)
    if plan.expected_reply is not None and (reply is None or not plan.asked):
        return None
    refusal = (plan.expected_reply or {}).get("refusal") or {}
    if refusal and not error_tells(refusal["reasons"], text):
        return None  # the tool's error is the request's own words: quoting it shows nothing
    facts = int(refusal.get("asked_facts", 0))
    if any(mentions(text, a["value"], spoken=True) for a in plan.asked[facts:]):
        return None  # a request that states its own answer: echoing it back would earn
    extra = dict(plan.extra)
    if reply is not None:
        # The reply contract the checks, the oracle and the self-test read (checks.py).
        extra["reply"] = reply_request(
            [AskedValue(a["what"], a["value"], a["step"], tuple(a["path"])) for a in plan.asked],
            reply["exclude"],
            candidates=reply["candidates"],
            refusal=reply.get("refusal"),
            rules=env.spec.rules if env.spec is not None else (),
            tools=[t.description for t in env.spec.tools if t.description]
            if env.spec is not None
            else (),
        )
    scenario = Scenario(
        scenario_id=scenario_id_of(env.env_id, state.state_id, chain, text),
        env_id=env.env_id,
        state_id=state.state_id,
        kind=plan.kind,
        task_text=text,
        initial_state=json_copy(state.state),
        initial_dump=json_copy(state.dump) if state.dump is not None else None,
        gold_chain=chain,
        split=environment_split(env),
        difficulty=dict(plan.difficulty)
        or difficulty_record(
            steps=len(chain),
            n_mutations=n_mutations,
            n_lookups=plan.roles.count("lookup"),
            hidden_lookups=0,
            decoys=0,
            conditionals=0,
            infeasible=False,
        ),
        expected_reply=reply,
        provenance={
            "generator": plan.generator,
            "seed": plan.seed,
            "index": plan.index,
            "persona": persona.name,
            "goal": list(plan.goal_tools),
            "roles": list(plan.roles),
            **extra,
        },
    )
    scenario._plan = plan
    return scenario


def scenario_id_of(env_id: str, state_id: str, chain: list[ToolCall], text: str) -> str:
    """A scenario's id: its environment, state, gold chain and words."""
    return short_id("scenario", env_id, state_id, [c.model_dump(mode="json") for c in chain], text)


def reworded(scenario: Scenario, text: str, provenance: dict[str, Any]) -> Scenario:
    """`scenario` asking for the same plan in other words, `provenance` added to its own.

    Its id follows the words. Nothing else changes: the caller has checked that the words
    leave the reply contract as it was (`safe_reply` of either text is the same), so the
    checks, and the wrong-record screen the planner ran on them, still hold."""
    out = scenario.model_copy(
        update={
            "scenario_id": scenario_id_of(
                scenario.env_id, scenario.state_id, scenario.gold_chain, text
            ),
            "task_text": text,
            "provenance": {**scenario.provenance, **provenance},
        }
    )
    out._plan = scenario._plan
    return out


def safe_reply(plan: TaskPlan, text: str) -> dict[str, Any] | None:
    """The plan's reply contract without decoys a right reply could innocently contain.

    A decoy that is in the task text, is (part of) a value the reply must carry, or is a
    status or value the task's own changes set ("I cancelled it") is dropped. None when the
    plan has no contract, or when nothing is left for the reply to carry.
    """
    if plan.expected_reply is None:
        return None
    include = [str(v) for v in plan.expected_reply.get("include", [])]
    said = [text.casefold()] + [v.casefold() for v in include]
    for goal in plan.goals:
        for g in (goal, goal.then):
            if g is None:
                continue
            said += [str(g.to_status or "").casefold()] + [v.casefold() for _, v in g.values]

    def innocent(v: Any) -> bool:
        words = value_words(v).casefold()
        return any(words in s or (s and s in words) for s in said[1:]) or words in said[0]

    exclude = [str(v) for v in plan.expected_reply.get("exclude", []) if not innocent(v)]
    candidates = [v for v in plan.expected_reply.get("candidates", []) if not innocent(v)]
    if not include:
        return None
    out: dict[str, Any] = {"include": include, "exclude": exclude, "candidates": candidates}
    if "rule" in plan.expected_reply:
        out["rule"] = plan.expected_reply["rule"]
    if "refusal" in plan.expected_reply:
        out["refusal"] = plan.expected_reply["refusal"]
    return out


def state_ids(*states: dict[str, Any]) -> set[str]:
    """Every record id in the given states (the keys of each id-keyed collection)."""
    out: set[str] = set()
    for st in states:
        for coll in st.values():
            if isinstance(coll, dict):
                out.update(str(rid) for rid in coll)
    return out


def mentions_an_id(text: str, ids: Iterable[str]) -> bool:
    """Whether `text` names an internal id (which would let an agent skip a lookup)."""
    # Most ids are nowhere in the text: a plain substring test rules them out before the
    # regex (sound only for ASCII text, where IGNORECASE folds exactly as lower() does).
    folded = text.lower() if text.isascii() else None
    for rid in ids:
        # Bare numbers ("3") would match any quantity; only id-shaped tokens can leak.
        if rid.isdigit() and len(rid) < 4:
            continue
        if folded is not None and rid.isascii():
            if _ascii_token_in(folded, rid.lower()):
                return True
            continue
        if re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text, re.IGNORECASE):
            return True
    return False


# What `[\w-]` matches next to an ASCII token in ASCII text, lower-cased.
_ASCII_WORD = frozenset("abcdefghijklmnopqrstuvwxyz0123456789_-")


def _ascii_token_in(folded: str, token: str) -> bool:
    """Whether lower-cased ASCII `token` occurs in lower-cased ASCII `folded` with no word
    character or hyphen on either side: the regex above, without compiling a pattern per id
    (the planner asks this of every id of every state for each candidate)."""
    at = folded.find(token)
    while at >= 0:
        end = at + len(token)
        if (at == 0 or folded[at - 1] not in _ASCII_WORD) and (
            end == len(folded) or folded[end] not in _ASCII_WORD
        ):
            return True
        at = folded.find(token, at + 1)
    return False
