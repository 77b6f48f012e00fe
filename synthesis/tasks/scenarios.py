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

import copy
import itertools
import random
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import CollectionModel, EnvModel, ToolModel, model_of
from synthesis.environments.splits import environment_split
from synthesis.hashing import content_hash, derive_seed, short_id
from synthesis.models import Environment, InitialState, Scenario, ToolCall
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
from synthesis.tasks.spec_model import SpecModel, is_number, same_value
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


def gold_chain_key(state_id: str, gold_chain: Iterable[ToolCall]) -> str:
    """Dedup key: two tasks with the same state and gold chain are the same task."""
    return content_hash([state_id, [c.model_dump(mode="json") for c in gold_chain]])


def plan_scenarios(
    env: Environment,
    state: InitialState,
    *,
    seed: int,
    count: int,
    max_chain_length: int = 4,
    model: EnvModel | None = None,
    backend: str = "auto",
) -> list[Scenario]:
    """Up to `count` distinct candidate scenarios (fewer when the state affords fewer).

    `model` defaults to the exact model of a compiled environment; an inferred model is
    planned by exploration in the sandbox (`backend`).
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
    max_chain_length: int = 4,
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
        return f"{field_words(fname)} {value_words(value)}"

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

    def adopt(self, entity: str, rid: str, res: _Resolution) -> bool:
        for call in res.steps:
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
        candidates = [rid for rid in sorted(recs) if self._eligible(tool, recs[rid])]
        self.rng.shuffle(candidates)
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
            if self.world.guard_error(tool, args, recs[rid]) is not None:
                continue
            res = self.resolve(tool.entity, rid)
            if res is None:
                continue
            mark = self.mark()
            if not self.adopt(tool.entity, rid, res):
                self.rollback(mark)
                continue
            desc = self.names.get((tool.entity, rid), res.text)
            if self.run(ToolCall(tool=tool.name, args=args), "mutation") is None:
                self.rollback(mark)
                continue
            goal = self._mutation_goal(tool, desc, args)
            owned = self.owners.get((tool.entity, rid))
            if owned and owned[0] == desc:
                goal = goal.model_copy(update={"owner": owned[1], "own_target": owned[2]})
            self.goals.append(goal)
            self.touched.append((tool.entity, rid))
            self.names[(tool.entity, rid)] = f"that {self.model.entity(tool.entity).label}"
            return True
        return False

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
            if not ok:
                return False
            choices[p.name] = ok[:4]
        combos = list(itertools.product(*(choices[p.name] for p in ref_params)))[:8]
        for combo in combos:
            args = dict(zip([p.name for p in ref_params], combo, strict=True))
            for p in tool.params:
                if p.takes:
                    continue
                value = self._param_value(tool, p, args)
                if value is None:
                    break
                args[p.name] = value
            else:
                if self.world.guard_error(tool, args, None) is not None:
                    continue
                mark = self.mark()
                quals: list[str] = []
                owner, others = None, []
                for p in ref_params:
                    res = self.resolve(p.takes or "", args[p.name])
                    if res is None or not self.adopt(p.takes or "", args[p.name], res):
                        break
                    text = self.names.get((p.takes or "", args[p.name]), res.text)
                    quals.append(text)
                    # The first record found by its own lookup field is whom the new one is
                    # for (the customer of an order), when phrasing speaks as them.
                    if owner is None and res.found and text == res.text:
                        owner = res.found
                    else:
                        others.append(text)
                else:
                    result = self.run(ToolCall(tool=tool.name, args=args), "mutation")
                    if result is not None:
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
                        self.names[(tool.entity, new["id"])] = f"that new {label}"
                        return True
                self.rollback(mark)
        return False

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
            value = round(self.rng.uniform(lo, lo + 40), 2)
            return value if cap is None or value <= cap else None
        if p.type == "boolean":
            return self.rng.random() < 0.5
        if fspec is not None and fspec.type == "datetime":
            return (
                f"2025-{self.rng.randint(1, 12):02d}-{self.rng.randint(1, 28):02d}T"
                f"{self.rng.randint(8, 17):02d}:00"
            )
        return self._fresh_text(ent, fname)

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
            return value if value != current and value > 0 else round(base + 1.0, 2)
        if fspec.type == "ref":
            return None
        return self._fresh_text(ent, fname)

    def _fresh_text(self, ent: CollectionModel, fname: str) -> str:
        taken = {str(r.get(fname)).casefold() for r in self.world.records(ent.name).values()}
        return fresh_text(self.rng, fname, taken)


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
    return assemble_scenario(env, state, plan, rng) if plan is not None else None


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
    mutations = [
        t
        for t in graph.mutations()
        if model.tool(t).operation in ("create", "transition", "update")
    ]
    if not mutations:
        return None
    first = rng.choices(mutations, weights=[graph.goal_weight(t) for t in mutations])[0]
    if not planner.plan_mutation(model.tool(first), None):
        return None
    goal = [first]
    if max_chain_length >= 3 and rng.random() < SECOND_MUTATION_PROBABILITY:
        # Follow-ups that depend on the first mutation (pay what was just ordered) are what
        # make a two-step goal coherent, so the graph's edges weigh them up.
        weights = [3.0 if graph.depends_on(t, first) else 1.0 for t in mutations]
        second = rng.choices(mutations, weights=weights)[0]
        mark_steps, mark_goals = len(planner.steps), len(planner.goals)
        model_state = copy.deepcopy(planner.world.state)
        known = {k: set(v) for k, v in planner.known.items()}
        names, touched = dict(planner.names), list(planner.touched)
        if planner.plan_mutation(model.tool(second), planner.touched[-1]) and not _redundant(
            model, state.state, planner.steps, planner.roles, planner.world.state
        ):
            goal.append(second)
        else:
            del planner.steps[mark_steps:]
            del planner.roles[mark_steps:]
            del planner.goals[mark_goals:]
            planner.world.state, planner.known = model_state, known
            planner.names, planner.touched = names, touched
    if len(planner.steps) > max_chain_length:
        return None
    if planner.world.state == state.state:
        return None
    return TaskPlan(
        env_id=model.env_id,
        state_id=state.state_id,
        seed=seed,
        index=index,
        title=model.title,
        goals=list(planner.goals),
        gold_chain=list(planner.steps),
        roles=list(planner.roles),
        facts=plan_facts(model, planner.steps),
        hidden_ids=sorted(state_ids(state.state, planner.world.state)),
        goal_tools=goal,
        generator=GENERATOR,
    )


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
    scenario_id = short_id(
        "scenario", env.env_id, state.state_id, [c.model_dump(mode="json") for c in chain], text
    )
    return Scenario(
        scenario_id=scenario_id,
        env_id=env.env_id,
        state_id=state.state_id,
        kind="feasible",
        task_text=text,
        initial_state=copy.deepcopy(state.state),
        initial_dump=copy.deepcopy(state.dump) if state.dump is not None else None,
        gold_chain=chain,
        split=environment_split(env),
        difficulty={
            "chain_length": len(chain),
            "n_mutations": n_mutations,
            "n_lookups": len(chain) - n_mutations,
        },
        provenance={
            "generator": plan.generator,
            "seed": plan.seed,
            "index": plan.index,
            "persona": persona.name,
            "goal": list(plan.goal_tools),
            "roles": list(plan.roles),
            **plan.extra,
        },
    )


def _redundant(
    model: EnvModel,
    initial: dict[str, Any],
    steps: list[ToolCall],
    roles: list[str],
    final: dict[str, Any],
) -> bool:
    """Whether some mutation could be left out with the same end state ("pay, then cancel").

    No final-state check can tell whether such a step was done, so the task would ask for
    work nobody can grade.
    """
    for i, role in enumerate(roles):
        if role != "mutation":
            continue
        world = SpecModel(model, initial)
        for j, call in enumerate(steps):
            if j != i:
                world.call(call.tool, call.args)
        if world.state == final:
            return True
    return False


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
    for rid in ids:
        # Bare numbers ("3") would match any quantity; only id-shaped tokens can leak.
        if rid.isdigit() and len(rid) < 4:
            continue
        if re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text, re.IGNORECASE):
            return True
    return False
