"""Planning by exploration: tasks for code whose tool semantics are inferred, not declared.

Where a compiled environment's outcomes can be predicted (synthesis.scenarios), inferred code
can only be asked: each candidate task is planned in a live sandbox on its initial state. A
goal is a mutating call, with arguments drawn from the state, that succeeds and changes the
state. Every record id it uses must come from an earlier step: an id the task cannot say
(people name records by their titles and emails) is looked up first by a query whose result
holds it, and the task names the record by its human fields instead. A goal the environment
refuses may first need another change (logging in, say); such enabling calls become goals of
their own. The plan is a task-plan record like any planner's; the sandboxed gold run judges
it as always.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.arguments import ValuePools, candidates, is_id_name, name_tokens
from synthesis.envmodel import CollectionModel, EnvModel, ToolModel
from synthesis.gold import result_failure
from synthesis.hashing import derive_seed
from synthesis.inference import collection_label
from synthesis.models import Environment, InitialState, Scenario, ToolCall
from synthesis.runtime import sandbox_source
from synthesis.scenarios import (
    ATTEMPTS_PER_SCENARIO,
    SECOND_MUTATION_PROBABILITY,
    assemble_scenario,
    gold_chain_key,
)
from synthesis.task_plan import PlanGoal, TaskPlan
from synthesis.task_text import field_words, tool_verb, value_words

GENERATOR = "explore/v1"
ARG_TRIES = 6
LOOKUP_TRIES = 4
ENABLER_TRIES = 3


def explore_scenarios(
    env: Environment,
    model: EnvModel,
    state: InitialState,
    *,
    seed: int,
    count: int,
    max_chain_length: int = 4,
    backend: str = "auto",
) -> list[Scenario]:
    """Up to `count` distinct scenarios found by exploring `state` in the sandbox."""
    goals = sorted(model.mutating_tools())
    if not goals:
        return []
    out: list[Scenario] = []
    seen: set[str] = set()
    for index in range(count * ATTEMPTS_PER_SCENARIO):
        if len(out) >= count:
            break
        rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed, index))
        plan = _Explorer(env, model, state, rng, backend, max_chain_length).plan(seed, index)
        if plan is None:
            continue
        scenario = assemble_scenario(env, state, plan, rng)
        if scenario is None:
            continue
        key = gold_chain_key(state.state_id, scenario.gold_chain)
        if key in seen:
            continue
        seen.add(key)
        out.append(scenario)
    return out


def plan_episode_seed(env_id: str, state_id: str, seed: int, index: int) -> int:
    """The world (clock, randomness) a planned task and every replay of it run in."""
    return derive_seed("episode", env_id, state_id, seed, index) % (2**31)


@dataclass
class _Reference:
    """How a task names one record: words people use, never its id."""

    words: str
    facts: list[str]


@dataclass
class _Explorer:
    env: Environment
    model: EnvModel
    state: InitialState
    rng: random.Random
    backend: str
    max_chain_length: int
    steps: list[ToolCall] = field(default_factory=list)
    roles: list[str] = field(default_factory=list)
    goals: list[PlanGoal] = field(default_factory=list)
    goal_tools: list[str] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    # Values an earlier goal's result handed over (a new record's id, a session token): the
    # agent carries them on. Values an earlier lookup showed need no new lookup, but the task
    # must still say which record is meant.
    carried: set[str] = field(default_factory=set)
    looked_up: set[str] = field(default_factory=set)
    named: dict[str, str] = field(default_factory=dict)
    hidden: set[str] = field(default_factory=set)

    def plan(self, seed: int, index: int) -> TaskPlan | None:
        from sandboxes import open_session

        world = plan_episode_seed(self.env.env_id, self.state.state_id, seed, index)
        start = self.state.start_state
        self.pools = ValuePools.from_states([start], self.model.collections)
        self.collections = self.model.collections
        self.hidden = _all_ids(self.collections, start)
        n_goals = 1
        if self.max_chain_length >= 3 and self.rng.random() < SECOND_MUTATION_PROBABILITY:
            n_goals = 2
        with open_session(
            sandbox_source(self.env), self.state.state, backend=self.backend, entropy_seed=world
        ) as session:
            self.session = session
            self.current = session.final_state()
            if self.current is None:
                return None
            try:
                for _ in range(n_goals):
                    if not self._plan_goal():
                        break
            except _SessionLost:
                return None
            final = self.current
        if not self.goals or final == start or len(self.steps) > self.max_chain_length:
            return None
        if len(self.goals) > 1 and self._redundant(world):
            return None
        self.hidden |= _all_ids(self.collections, final)
        return TaskPlan(
            env_id=self.env.env_id,
            state_id=self.state.state_id,
            seed=seed,
            index=index,
            title=self.model.title,
            goals=self.goals,
            gold_chain=self.steps,
            roles=self.roles,
            facts=list(dict.fromkeys(self.facts)),
            hidden_ids=sorted(self.hidden),
            goal_tools=self.goal_tools,
            generator=GENERATOR,
            extra={"episode_seed": world},
        )

    # -- goals -----------------------------------------------------------------------------

    def _plan_goal(self) -> bool:
        tools = [self.model.tool(n) for n in sorted(self.model.mutating_tools())]
        weights = [1.0 + len(t.id_params()) + (t.name not in self.goal_tools) for t in tools]
        order: list[ToolModel] = []
        pool = list(zip(tools, weights, strict=True))
        while pool and len(order) < 4:
            pick = self.rng.choices(range(len(pool)), weights=[w for _, w in pool])[0]
            order.append(pool.pop(pick)[0])
        for tool in order:
            if self._try_tool(tool, allow_enabler=True):
                return True
        return False

    def _try_tool(self, tool: ToolModel, *, allow_enabler: bool) -> bool:
        refused = 0
        for args in self._arg_sets(tool):
            if len(self.steps) >= self.max_chain_length:
                return False
            resolved = self._resolve_ids(tool, args)
            if resolved is None:
                continue
            lookups, refs, seen = resolved
            outcome = self._call(tool.name, args)
            if outcome == "changed":
                self._commit(tool, args, lookups, refs)
                self.looked_up |= seen
                return True
            if outcome == "failed":
                refused += 1
        if allow_enabler and refused:
            return self._try_with_enabler(tool)
        return False

    def _try_with_enabler(self, tool: ToolModel) -> bool:
        """A goal refused every time may need another change first (a login, a setup)."""
        others = [self.model.tool(n) for n in sorted(self.model.mutating_tools()) if n != tool.name]
        self.rng.shuffle(others)
        for enabler in others[:ENABLER_TRIES]:
            mark = len(self.goals)
            if not self._try_tool(enabler, allow_enabler=False):
                continue
            if self._try_tool(tool, allow_enabler=False):
                return True
            # The enabler changed the state for good; it stays, as a goal of its own.
            return len(self.goals) > mark
        return False

    def _arg_sets(self, tool: ToolModel) -> Iterable[dict[str, Any]]:
        options = {p.name: candidates(tool, p, self.pools, self.rng, limit=4) for p in tool.params}
        for _ in range(ARG_TRIES):
            args: dict[str, Any] = {}
            for p in tool.params:
                values = options[p.name]
                if not values or (not p.required and self.rng.random() < 0.5):
                    continue
                args[p.name] = self.rng.choice(values)
            yield args

    def _call(self, tool: str, args: dict[str, Any]) -> str:
        """'changed', 'unchanged' or 'failed' (the session follows the call)."""
        call = self.session.call(tool, args)
        if self.session.status != "ok":
            raise _SessionLost(self.session.reason or "sandbox session ended")
        failure = result_failure(call.ok, call.result, call.error)
        after = self.session.final_state()
        if after is None:
            raise _SessionLost(self.session.reason or "state unavailable")
        changed = after != self.current
        self.current = after
        self.last_result = call.result
        if failure is not None:
            return "failed"
        return "changed" if changed else "unchanged"

    def _commit(
        self, tool: ToolModel, args: dict[str, Any], lookups: list[ToolCall], refs: dict
    ) -> None:
        for call in lookups:
            self.steps.append(call)
            self.roles.append("lookup")
        self.steps.append(ToolCall(tool=tool.name, args=args))
        self.roles.append("mutation")
        self.goal_tools.append(tool.name)
        values, targets = [], []
        for p in tool.params:
            if p.name not in args:
                continue
            if p.name in refs:
                targets.append(refs[p.name].words)
                self.facts += refs[p.name].facts
            elif self._is_hidden(p.name, args[p.name]):
                continue  # handed over by an earlier step: the agent carries it on
            else:
                values.append((field_words(_words_of(p.name)), _say(args[p.name])))
                self.facts.append(value_words(args[p.name]))
        self.goals.append(
            PlanGoal(
                kind="action",
                tool=tool.name,
                verb=tool_verb(tool.name),
                target="; ".join(targets) or None,
                values=values,
                description=tool.description,
            )
        )
        before_ids = set(self.hidden)
        self.pools.learn(self.last_result)
        self.pools.learn(self.current)
        self.carried |= {_str_key(v) for v in _scalars(self.last_result)}
        for coll in self.collections:
            ids = self.pools.ids.setdefault(coll.name, [])
            ids += [r for r in coll.ids_in(self.current) if r not in ids]
            for rid in coll.ids_in(self.current):
                if _str_key(rid) not in before_ids:
                    self.named.setdefault(_str_key(rid), f"the new {coll.label}")
            self.hidden |= {_str_key(r) for r in coll.ids_in(self.current)}
        for p in tool.params:
            key = _str_key(args.get(p.name))
            if p.name in refs or key in self.named:
                self.named.setdefault(key, f"that {self._label_of(args[p.name])}")

    # -- ids ---------------------------------------------------------------------------------

    def _resolve_ids(
        self, tool: ToolModel, args: dict[str, Any]
    ) -> tuple[list[ToolCall], dict[str, _Reference], set[str]] | None:
        """For every hidden id in `args`: the words naming its record, and a lookup that shows
        the id unless an earlier step already did. None when some id cannot be both named
        and looked up. Also returns what the new lookups showed."""
        lookups: list[ToolCall] = []
        refs: dict[str, _Reference] = {}
        seen: set[str] = set()
        for p in tool.params:
            value = args.get(p.name)
            if value is None or not self._is_hidden(p.name, value):
                continue
            key = _str_key(value)
            if key in self.named:
                refs[p.name] = _Reference(self.named[key], [])
                if key in self.carried or key in self.looked_up:
                    continue
            located = _locate(self.collections, self.current, value)
            if key in self.carried and located is None:
                continue  # a token an earlier goal returned: the agent carries it on
            if key in self.carried | self.looked_up | seen:
                ref = self._reference_for(value)
                if ref is None:
                    return None
                refs.setdefault(p.name, ref)
                continue
            found = self._lookup(value)
            if found is None:
                return None
            call, ref, shown = found
            lookups.append(call)
            refs.setdefault(p.name, ref)
            seen |= shown
        return lookups, refs, seen

    def _is_hidden(self, param: str, value: Any) -> bool:
        key = _str_key(value)
        return key in self.hidden or (is_id_name(param) and key in self.carried)

    def _label_of(self, value: Any) -> str:
        located = _locate(self.collections, self.current, value)
        return located[0].label if located else "record"

    def _reference_for(self, value: Any) -> _Reference | None:
        located = _locate(self.collections, self.current, value)
        return _reference(located[0], located[1], self.current) if located else None

    def _lookup(self, value: Any) -> tuple[ToolCall, _Reference, set[str]] | None:
        """A query whose result holds `value`, callable with words the task can say."""
        located = _locate(self.collections, self.current, value)
        if located is None:
            return None
        coll, record = located
        ref = _reference(coll, record, self.current)
        if ref is None:
            return None
        queries = [t for t in self.model.tools if t.kind == "query"]
        self.rng.shuffle(queries)
        queries.sort(key=lambda t: len([p for p in t.params if p.required]))
        hints = ValuePools()
        hints.learn(record)
        for tool in queries[:8]:
            for args in itertools.islice(
                self._lookup_args(tool, coll, record, hints), LOOKUP_TRIES
            ):
                if any(
                    self._is_hidden(name, v)
                    and _str_key(v) not in self.carried | self.looked_up
                    for name, v in args.items()
                ):
                    continue
                call = self.session.call(tool.name, args)
                if self.session.status != "ok":
                    raise _SessionLost(self.session.reason or "sandbox session ended")
                if result_failure(call.ok, call.result, call.error) is not None:
                    continue
                shown = {_str_key(v) for v in _scalars(call.result, keys=True)}
                if _str_key(value) in shown:
                    return ToolCall(tool=tool.name, args=args), ref, shown
        return None

    def _lookup_args(
        self, tool: ToolModel, coll: CollectionModel, record: dict[str, Any], hints: ValuePools
    ) -> Iterable[dict[str, Any]]:
        label_tokens = set(name_tokens(coll.name))
        options: dict[str, list[Any]] = {}
        for p in tool.params:
            own = hints.for_param(p)
            if set(name_tokens(p.name)) & label_tokens and coll.lookup_field:
                own = [record.get(coll.lookup_field)] + own
            own = [v for v in own if v is not None and not self._is_hidden(p.name, v)]
            if p.required and not own:
                own = [
                    v
                    for v in candidates(tool, p, self.pools, self.rng)
                    if not self._is_hidden(p.name, v)
                ]
            options[p.name] = own
        yield {}
        for i in range(LOOKUP_TRIES):
            args = {}
            for p in tool.params:
                values = options[p.name]
                if values and (p.required or i % 2 == 0):
                    args[p.name] = values[i % len(values)]
            if all(p.name in args for p in tool.params if p.required):
                yield args

    # -- checks on the whole plan ------------------------------------------------------------------

    def _redundant(self, world: int) -> bool:
        """Whether a goal could be left out with the same end state: nobody could grade it."""
        from sandboxes import run_episode

        final = self.current
        for i, role in enumerate(self.roles):
            if role != "mutation":
                continue
            chain = [(c.tool, dict(c.args)) for j, c in enumerate(self.steps) if j != i]
            episode = run_episode(
                sandbox_source(self.env),
                self.state.state,
                chain,
                backend=self.backend,
                entropy_seed=world,
            )
            if episode.final_state == final:
                return True
        return False


class _SessionLost(RuntimeError):
    """The sandbox ended the exploring session (a crash, a hang): this attempt is over."""


# --------------------------------------------------------------------------- records


def _all_ids(collections: list[CollectionModel], state: dict[str, Any]) -> set[str]:
    out = set()
    for coll in collections:
        out |= {_str_key(v) for v in coll.ids_in(state)}
    return out


def _locate(
    collections: list[CollectionModel], state: dict[str, Any], value: Any
) -> tuple[CollectionModel, dict[str, Any]] | None:
    for coll in collections:
        records = state.get(coll.attribute)
        if coll.shape == "index" and isinstance(records, dict):
            for name, rid in records.items():
                if _str_key(rid) == _str_key(value):
                    return coll, {"name": name, "id": rid}
        elif coll.shape == "keyed" and isinstance(records, dict):
            for rid, rec in records.items():
                if _str_key(rid) == _str_key(value) and isinstance(rec, dict):
                    return coll, rec
        elif coll.shape == "list" and isinstance(records, list):
            for rec in records:
                if isinstance(rec, dict) and _str_key(rec.get(coll.id_field)) == _str_key(value):
                    return coll, rec
    return None


def _reference(
    coll: CollectionModel, record: dict[str, Any], state: dict[str, Any]
) -> _Reference | None:
    """Words that single the record out among its collection: its lookup field, else the
    fewest plain fields whose values no other record shares."""
    label = coll.label or collection_label(coll.attribute)
    if coll.shape == "index":
        return _Reference(f"{label} {record['name']}", [str(record["name"])])
    for name in coll.lookup_fields:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return _Reference(f"the {label} with {field_words(name)} {_say(value)}", [value])
    others = [r for r in coll.records_in(state) if r is not record and r != record]
    usable = [
        k
        for k, v in sorted(record.items())
        if k != coll.id_field and isinstance(v, (str, int, float)) and not isinstance(v, bool)
    ]
    for size in (1, 2):
        for combo in itertools.combinations(usable, size):
            if all(any(o.get(k) != record.get(k) for k in combo) for o in others):
                words = " and ".join(f"{field_words(k)} {_say(record[k])}" for k in combo)
                return _Reference(
                    f"the {label} with {words}", [value_words(record[k]) for k in combo]
                )
    return None


def _scalars(value: Any, *, keys: bool = False) -> list[Any]:
    out: list[Any] = []
    stack = [(value, 0)]
    while stack:
        cur, depth = stack.pop()
        if depth > 10:
            continue
        if isinstance(cur, dict):
            if keys:
                out += list(cur.keys())
            stack.extend((v, depth + 1) for v in cur.values())
        elif isinstance(cur, list):
            stack.extend((v, depth + 1) for v in cur)
        elif isinstance(cur, (str, int, float)) and not isinstance(cur, bool):
            out.append(cur)
    return out


def _str_key(value: Any) -> str:
    return str(value)


def _words_of(param: str) -> str:
    return "_".join(name_tokens(param))


def _say(value: Any) -> str:
    """A value as the task says it: text in quotes when it has spaces, lists joined."""
    if isinstance(value, list):
        return ", ".join(_say(v) for v in value)
    if isinstance(value, str) and (" " in value or not value):
        return f'"{value}"'
    return value_words(value)
