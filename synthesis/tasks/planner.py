"""The planner every task family plans with: goals added one at a time to a predicted state.

A `Planner` holds what a task has done so far in the exact model (`SpecModel`: predicted, nothing
runs): the gold chain's steps and their roles, the goals, the ids the chain has looked up and
the words that name each record. A family (synthesis.tasks.families) adds goals through it:
`plan_mutation` picks a target whose guards hold and prepends the lookups (find by a human
field, list filtered by a reference, get by an id a named record refers to) that produce every
id the goal consumes, so an agent has to perform them too; `snapshot`/`restore` undo a goal
that does not fit. What the planner planned becomes a task-plan record in
synthesis.tasks.assembly.
"""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.field_forms import field_form, money_range
from synthesis.environments.free_text import is_free_text, text_topic
from synthesis.environments.model import CollectionModel, EnvModel, ToolModel
from synthesis.environments.topology import ToolGraph, from_statuses, id_params, target_param
from synthesis.environments.values import calendar_of, price_point
from synthesis.hashing import content_hash
from synthesis.models import ToolCall
from synthesis.tasks.phrasing import (
    STATUS_VERBS,
    field_noun,
    field_words,
    fresh_text,
    join_phrases,
    tool_verb,
    value_words,
)
from synthesis.tasks.plan import PlanGoal
from synthesis.tasks.spec_model import SpecModel, is_number, same_value
from synthesis.tasks.text.values import quoted_text

# Longest gold chain a plan may have unless the profile says otherwise.
DEFAULT_MAX_CHAIN = 14
# Candidates per requested scenario before giving up: infeasible draws and duplicates are
# common in small states, and each draw is cheap (no execution).
ATTEMPTS_PER_SCENARIO = 8
MAX_QUALIFIERS = 3
# Verbs that undo what a task just created: "book it, then cancel it" is no errand.
UNDO_VERBS = frozenset({"cancel", "void", "delete", "remove", "reject", "revoke", "withdraw"})
# An asked value a step's result holds rather than a record's field (an aggregate's value):
# `(STEP_RESULT, step index, path in the result, words)` in `Outcome.asked`.
STEP_RESULT = "#step"


@dataclass
class Outcome:
    """What a task family planned beyond the planner's steps and goals: what its `plan`
    returns (synthesis.tasks.scenarios.TaskFamily), read with the planner into a task plan."""

    goal_tools: list[str]
    kind: str = "feasible"
    include: list[str] = field(default_factory=list)
    """Values the final reply must contain (read from the state)."""
    exclude: list[str] = field(default_factory=list)
    """Decoys' values the final reply must not contain."""
    rule: str | None = None
    conditionals: int = 0
    asked: list[tuple[str, str, str, str]] = field(default_factory=list)
    """(entity, record id, field, words for it) of each value the reply must state."""
    refusal: dict[str, Any] | None = None
    """An infeasible request's reasons (every rule that blocks it, with its facts and words)
    and the rules that do not block it (synthesis.tasks.families.refusals.refusal_of)."""

    def expected_reply(self) -> dict[str, Any] | None:
        if not self.include and not self.exclude and self.refusal is None:
            return None
        reply: dict[str, Any] = {"include": list(self.include), "exclude": list(self.exclude)}
        if self.rule is not None:
            reply["rule"] = self.rule
        if self.refusal is not None:
            reply["refusal"] = self.refusal
        return reply


# Fields that name a record for people, shown beside its lookup value when they differ.
_NAME_FIELDS = ("name", "full_name", "title", "display_name", "label")


@dataclass
class Resolution:
    """Lookup steps that produce a record's id, and the words that name it."""

    steps: list[ToolCall]
    text: str
    # (label, words) of a record found by its own lookup field ("artist", "Ada (ada@x)"), and
    # for a record named through such an owner: the owner and the record's words without it.
    found: tuple[str, str] | None = None
    owner: tuple[str, str] | None = None
    own: str | None = None


@dataclass
class Planner:
    """One task being planned: its steps, goals and names, over a predicted state."""

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

    @classmethod
    def start(cls, model: EnvModel, state: dict[str, Any], rng: random.Random) -> Planner:
        """A planner with nothing planned yet in `state`: the world its goals change, and
        the initial state every description must also hold in."""
        return cls(model, SpecModel(model, state), SpecModel(model, state), rng)

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
        mine = self.neighbourhood(entity, rec)
        for other_entity, rid in self.touched:
            other = self.world.records(other_entity).get(rid)
            if other is not None and mine & self.neighbourhood(other_entity, other):
                return True
        return False

    def neighbourhood(self, entity: str, rec: dict[str, Any]) -> set[tuple[str, str]]:
        """`rec` and the records its references name, as (entity, id)."""
        out = {(entity, str(rec.get("id")))}
        for f in self.model.entity(entity).fields:
            if f.type == "ref" and f.ref and rec.get(f.name) is not None:
                out.add((f.ref, str(rec[f.name])))
        return out

    def attribute_values(self, entity: str, fname: str) -> list[Any]:
        """Every value field `fname` of `entity` has in the state or may take (an enum's)."""
        values = [r.get(fname) for _, r in sorted(self.world.records(entity).items())]
        spec = next((f for f in self.model.entity(entity).fields if f.name == fname), None)
        if spec is not None and spec.type == "enum":
            values += list(spec.values)
        return [v for v in values if v is not None and not isinstance(v, (dict, list))]

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
        return f"{field_noun(fname)} {quoted_text(fname, value_words(value))}"

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

    def resolve(self, entity: str, rid: str, depth: int = 0) -> Resolution | None:
        """Lookup steps that produce `rid` (not yet run) and the words that name it.

        A record the task already named (found, created or acted on) needs no new lookup. An
        id merely seen inside another record does: the agent has no way to tell from the
        task's words that it is the one meant.
        """
        if (entity, rid) in self.names and self.is_known(entity, rid):
            return Resolution([], self.names[(entity, rid)])
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
    ) -> Resolution | None:
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
                    return Resolution(
                        [ToolCall(tool=tool.name, args={tp: rec["id"]})],
                        f"the {ent.label} of {owner_text}",
                    )
        return None

    def _via_find(
        self, ent: CollectionModel, tool: ToolModel, rec: dict[str, Any]
    ) -> Resolution | None:
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
        return Resolution(
            [ToolCall(tool=tool.name, args={param: value})],
            f"{ent.label} {shown}",
            found=(ent.label, shown),
        )

    def _via_list(
        self, ent: CollectionModel, tool: ToolModel, rec: dict[str, Any], by: Any, depth: int
    ) -> Resolution | None:
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
        return Resolution(_unique_calls(steps), text, owner=owner, own=own if owner else None)

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

    def adopt(self, entity: str, rid: str, res: Resolution) -> bool:
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
                value = self.new_value(tool, recs[rid])
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
        goal = self.mutation_goal(tool, desc, args)
        owned = self.owners.get((tool.entity, rid))
        if owned and owned[0] == desc:
            goal = goal.model_copy(update={"owner": owned[1], "own_target": owned[2]})
        self.goals.append(goal)
        self.touched.append((tool.entity, rid))
        self.acted.add((tool.entity, rid))
        self.names[(tool.entity, rid)] = f"that {self.model.entity(tool.entity).label}"
        return None

    def mutation_goal(self, tool: ToolModel, desc: str, args: dict[str, Any]) -> PlanGoal:
        """The goal of calling transition or update `tool` with `args` on the record `desc`
        names."""
        verb = tool_verb(tool.name)
        if tool.operation == "update":
            value = next(v for k, v in args.items() if k != target_param(tool))
            return PlanGoal(
                kind="update",
                tool=tool.name,
                verb=verb,
                target=desc,
                values=[(field_noun(tool.field or ""), value_words(value))],
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
            ok = [rid for rid in sorted(recs) if self.ref_ok(tool, p.name, recs[rid])]
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
                value = self.param_value(tool, p, args)
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
            (field_noun(p.field or p.name), value_words(args[p.name]))
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

    def ref_ok(self, tool: ToolModel, param: str, rec: dict[str, Any]) -> bool:
        """Whether `rec` meets what create `tool` requires of the record `param` refers to."""
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

    def param_value(self, tool: ToolModel, p: Any, args: dict[str, Any]) -> Any:
        """A value for plain parameter `p` of create `tool` (`args`: the others so far) that
        its guards admit, or None."""
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

    def new_value(self, tool: ToolModel, rec: dict[str, Any]) -> Any:
        """A value update `tool` may set on `rec` other than the one it has, or None."""
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


def mutation_tools(model: EnvModel, graph: ToolGraph) -> list[str]:
    """The tools a task's goals may ask for: those that create, move or change a record."""
    return [
        t
        for t in graph.mutations()
        if model.tool(t).operation in ("create", "transition", "update")
    ]
