"""Planning by exploration: tasks for code whose tool semantics are inferred, not declared.

Where a compiled environment's outcomes can be predicted (synthesis.tasks.planner), inferred code
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
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.arguments import (
    ValuePools,
    argument_groups,
    candidates,
    coherent_args,
    enum_of,
    fresh_value,
    is_id_name,
    made_up,
    name_tokens,
)
from synthesis.environments.free_text import TextTopic, free_text, holds_text
from synthesis.environments.inference import collection_label
from synthesis.environments.model import CollectionModel, EnvModel, ToolModel
from synthesis.environments.runtime import result_failure, sandbox_source
from synthesis.hashing import content_hash, derive_seed
from synthesis.models import Environment, InitialState, Scenario, ToolCall
from synthesis.tasks.assembly import assemble_scenario, keep_distinct
from synthesis.tasks.decoys import record_named_by
from synthesis.tasks.gold import given_collections
from synthesis.tasks.phrasing import field_noun, tool_verb, value_words
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.planner import ATTEMPTS_PER_SCENARIO

GENERATOR = "explore/v1"
SECOND_MUTATION_PROBABILITY = 0.4
MAX_MISSES_IN_A_ROW = 12
ARG_TRIES = 6
LOOKUP_TRIES = 4
MAX_LOOKUP_DEPTH = 2
# Calls one candidate task may spend on lookups: past it, the attempt gives up (a state where
# nothing can be found cheaply yields no task rather than a slow build).
LOOKUP_CALL_BUDGET = 150
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
    pool: Any = None,
) -> list[Scenario]:
    """Up to `count` distinct scenarios found by exploring `state` in the sandbox (its sessions
    and replays from `pool`, the sandboxes' WorkerPool, when given)."""
    goals = sorted(model.mutating_tools())
    if not goals:
        return []
    out: list[Scenario] = []
    seen: set[str] = set()
    # Lookups found in one attempt serve the next: keyed by the state they ran in, and a
    # query changes no state, so the answer holds. (The final replay still checks.)
    lookups: dict[tuple[str, str, int], Any] = {}
    # Goals each tool already has among this state's tasks: the next task leans on the
    # others (a retail state's tasks were nearly all address changes).
    used: dict[str, int] = {}
    misses = 0
    for index in range(count * ATTEMPTS_PER_SCENARIO):
        # A state that gave nothing for a while will not start now: stop paying sandboxes.
        if len(out) >= count or misses >= MAX_MISSES_IN_A_ROW:
            break
        misses += 1
        rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed, index))
        explorer = _Explorer(
            env,
            model,
            state,
            rng,
            backend,
            max_chain_length,
            lookups=lookups,
            used=used,
            sandbox_pool=pool,
        )
        plan = explorer.plan(seed, index)
        if plan is None:
            continue
        scenario = assemble_scenario(env, state, plan, rng)
        if scenario is not None and keep_distinct(scenario, seen, out):
            misses = 0
            for name in plan.goal_tools:
                used[name] = used.get(name, 0) + 1
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
    # Lookups found (or not), by (state, value, depth); shared by the attempts on one state.
    lookups: dict[tuple[str, str, int], Any] = field(default_factory=dict)
    # Goals per tool among the tasks already kept on this state (explore_scenarios).
    used: dict[str, int] = field(default_factory=dict)
    lookup_calls: int = 0
    no_lookup: set[tuple[str, str, int]] = field(default_factory=set)
    # The sandboxes' WorkerPool the sessions and replays come from (None: each its own).
    sandbox_pool: Any = None

    def plan(self, seed: int, index: int) -> TaskPlan | None:
        from sandboxes import session_in

        world = plan_episode_seed(self.env.env_id, self.state.state_id, seed, index)
        start = self.state.start_state
        self.pools = ValuePools.from_states([start], self.model.collections)
        # Ids some query hands out are hidden (the agent must look them up); ids no query
        # reveals (branch codes an environment takes as given) are said in the task.
        given = given_collections(self.model)
        self.collections = [c for c in self.model.collections if c.name not in given]
        self.hidden = _all_ids(self.collections, start)
        n_goals = 1
        if self.max_chain_length >= 3 and self.rng.random() < SECOND_MUTATION_PROBABILITY:
            n_goals = 2
        with session_in(
            self.sandbox_pool,
            sandbox_source(self.env),
            self.state.state,
            backend=self.backend,
            entropy_seed=world,
        ) as session:
            self.session = session
            self.current = session.final_state()
            if self.current is None:
                return None
            try:
                for _ in range(n_goals):
                    if not self._plan_goal():
                        break
            except (_SessionLost, _OverBudget):
                return None
            final = self.current
        if not self.goals or final == start or len(self.steps) > self.max_chain_length:
            return None
        if not self._replays(world, final):
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
            labels=[c.label for c in self.model.collections],
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
        weights = [
            (1.0 + len(t.id_params()) + (t.name not in self.goal_tools))
            / (1 + self.used.get(t.name, 0))
            for t in tools
        ]
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
        done = [c.args for c in self.steps if c.tool == tool.name]
        for args in self._arg_sets(tool):
            if len(self.steps) >= self.max_chain_length:
                return False
            if args in done:
                continue  # the same call twice reads as a mistake, not a second goal
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
        options = {}
        # A tool that acts on no record makes one (a reminder, a message): its text is new,
        # not a copy of a record's, which would be a duplicate no check tells from the
        # original. Such text is never taken from a record or a probe's call.
        new_text = not tool.id_params() and tool.kind == "mutate"
        # Parameters whose values are made here, never taken from a record or a probe's call.
        fresh: set[str] = set()
        wrote_text = False
        for p in tool.params:
            values = candidates(tool, p, self.pools, self.rng, limit=4)
            if not (p.takes or is_id_name(p.name)):
                # A record's id is no value for a name or a message.
                values = [v for v in values if _str_key(v) not in self.hidden]
            # A task says what a person would: values the state holds, or text of the
            # field's kind (a reason, a message), never words put together for a probe.
            values = [v for v in values if not made_up(v)]
            if _credential(p.name) and not self.pools.for_param(p):
                # Credentials no record keeps (BFCL's TradingBot lets anyone in): a user name
                # and password of their own kind, not any text of the state ("user name Sell").
                values = [fresh_value(p, self.rng, self.pools)]
                fresh.add(p.name)
            elif p.type in ("string", None) and holds_text(p.name) and (new_text or not values):
                label = collection_label(tool.entity) if tool.entity else self.model.title
                values = [free_text(self.rng, p.name, TextTopic(label=label)) for _ in range(2)]
                fresh.add(p.name)
                wrote_text |= new_text
            options[p.name] = values
        if wrote_text:
            # The new record's other values are its own too: one only some record has (its
            # time) would name that record, and a careless agent's copy of another record's
            # would pass for it.
            for p in tool.params:
                if p.name not in fresh and not (p.takes or is_id_name(p.name)):
                    own = [v for v in options[p.name] if record_named_by(self.current, v) is None]
                    options[p.name] = own or options[p.name]
                    fresh.add(p.name)  # not from a record's or a probe's values either
        examples = [e for e in tool.examples if not made_up(e)]
        self.rng.shuffle(examples)
        # Walked once: the state does not change while a tool's tries are refused.
        groups = argument_groups(tool, self.current)
        for attempt in range(ARG_TRIES):
            # Tries alternate: arguments that worked while probing, what one record can
            # fill together (a user's own password), and values drawn one by one. Values one
            # object of the state holds together (an address) stay together in every try.
            group = dict(self.rng.choice(groups)) if groups else {}
            if attempt % 3 == 0 and examples:
                together = {**examples[(attempt // 3) % len(examples)], **group}
            elif attempt % 3 == 1:
                together = coherent_args(tool, self.model.collections, self.current, self.rng)
            else:
                together = group
            args: dict[str, Any] = {}
            for p in tool.params:
                values = options[p.name]
                if p.name in together and p.name not in fresh:
                    args[p.name] = together[p.name]
                elif values and (p.required or self.rng.random() >= 0.5):
                    args[p.name] = self.rng.choice(values)
            yield args

    def _call(self, tool: str, args: dict[str, Any]) -> str:
        """'changed', 'unchanged' or 'failed' (the session follows the call)."""
        call = self.session.call(tool, args)
        if self.session.status != "ok":
            raise _SessionLost(self.session.reason or "sandbox session ended")
        failure = result_failure(call.ok, call.result, call.error)
        self.last_result = call.result
        if failure is not None:
            # A refused call leaves the state as it was: the audit refuses a class whose
            # failed calls change it, and the plan's replay in a fresh sandbox would tell.
            # Not reading it back spares most of exploring a large database (τ² retail: 351
            # reads of 1.5 MB, half its time).
            return "failed"
        after = self.session.final_state()
        if after is None:
            raise _SessionLost(self.session.reason or "state unavailable")
        changed = after != self.current
        self.current = after
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
                code = bool(enum_of(p))
                values.append((field_noun(_words_of(p.name)), _say(args[p.name], code=code)))
                self.facts.append(_fact(args[p.name], code=code))
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
        self.pools.learn(self.last_result, tool.name, result=True)
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
            found = self._lookup(value, known=frozenset(seen))
            if found is None:
                return None
            calls, ref, shown = found
            lookups += calls
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
        if located is None:
            return None
        return _reference(located[0], located[1], self.current, self._nested_words)

    def _nested_words(self, value: Any) -> _Reference | None:
        """How a record another record points at is named inside that record's words."""
        located = _locate(self.collections, self.current, value)
        if located is None:
            return None
        coll, record = located
        return _reference(coll, record, self.current, None)

    def _lookup(
        self, value: Any, depth: int = 0, known: frozenset[str] = frozenset()
    ) -> tuple[list[ToolCall], _Reference, set[str]] | None:
        """Queries whose last result holds `value`, callable with what the task can say.

        A query may need another hidden id first (the loans of a member need the member's
        id): that id is looked up the same way, one level deeper, and its steps come first.
        """
        memo = (content_hash(self.current), _str_key(value), depth)
        if memo in self.lookups:
            return self.lookups[memo]
        if memo in self.no_lookup:
            return None
        found = self._find_lookup(value, depth, known)
        # A way found holds for every attempt on this state; "no way" is only sure for what
        # was known at the time, so it holds for this attempt alone.
        if found is not None or not known:
            self.lookups[memo] = found
        else:
            self.no_lookup.add(memo)
        return found

    def _find_lookup(
        self, value: Any, depth: int, known: frozenset[str]
    ) -> tuple[list[ToolCall], _Reference, set[str]] | None:
        ref = self._reference_for(value)
        if ref is None:
            return None
        coll, record = _locate(self.collections, self.current, value)
        # Only tools seen not to write serve as lookups: a lookup must leave the state alone.
        queries = [
            t for t in self.model.tools if t.kind == "query" and t.kind_evidence != "unconfirmed"
        ]
        self.rng.shuffle(queries)
        queries.sort(key=lambda t: len([p for p in t.params if p.required]))
        hints = ValuePools()
        hints.learn(record)
        known = known | self.carried | self.looked_up
        for tool in queries[:8]:
            for args in itertools.islice(
                self._lookup_args(tool, coll, record, hints), LOOKUP_TRIES
            ):
                steps: list[ToolCall] = []
                shown_before: set[str] = set()
                for name, v in args.items():
                    key = _str_key(v)
                    if not self._is_hidden(name, v) or key in known | shown_before:
                        continue
                    if depth >= MAX_LOOKUP_DEPTH or key == _str_key(value):
                        break
                    inner = self._lookup(v, depth + 1, known | shown_before)
                    if inner is None:
                        break
                    steps += inner[0]
                    shown_before |= inner[2]
                else:
                    self.lookup_calls += 1
                    if self.lookup_calls > LOOKUP_CALL_BUDGET:
                        raise _OverBudget
                    call = self.session.call(tool.name, args)
                    if self.session.status != "ok":
                        raise _SessionLost(self.session.reason or "sandbox session ended")
                    if result_failure(call.ok, call.result, call.error) is not None:
                        continue
                    shown = {_str_key(v) for v in _scalars(call.result, keys=True)}
                    if _str_key(value) in shown:
                        steps.append(ToolCall(tool=tool.name, args=args))
                        return steps, ref, shown | shown_before
        return None

    def _lookup_args(
        self, tool: ToolModel, coll: CollectionModel, record: dict[str, Any], hints: ValuePools
    ) -> Iterable[dict[str, Any]]:
        """Arguments for a lookup of `record`: its own field values first (its name for a
        `name` parameter, its member's id for `member_id`), then anything the state offers."""
        label_tokens = set(name_tokens(coll.label))
        options: dict[str, list[Any]] = {}
        for p in tool.params:
            own = hints.for_param(p)
            if set(name_tokens(p.name)) & label_tokens and coll.lookup_field:
                own = [record.get(coll.lookup_field)] + own
            if p.takes and self.model.has_entity(p.takes):
                # Any id of that collection the record holds (an event's attendees, for
                # `get_agenda(member_id)`): resolved in turn by a nested lookup.
                theirs = {_str_key(i) for i in self.model.entity(p.takes).ids_in(self.current)}
                own += [v for v in _scalars(record) if _str_key(v) in theirs]
            own = [v for v in own if v is not None]
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

    def _replays(self, world: int, final: dict[str, Any]) -> bool:
        """Whether the chain alone, in a fresh sandbox, does what exploring saw it do.

        Calls tried on the way (and not kept) may have changed what the state does not
        show (a private cart, a current directory); a plan that relied on that is dropped.
        (A pool's worker is as fresh: forked by a zygote for a class we did not compile.)
        """
        from sandboxes import episode_in

        episode = episode_in(
            self.sandbox_pool,
            sandbox_source(self.env),
            self.state.state,
            [(c.tool, dict(c.args)) for c in self.steps],
            backend=self.backend,
            entropy_seed=world,
        )
        failed = any(result_failure(r.ok, r.result, r.error) for r in episode.results)
        return episode.status == "ok" and not failed and episode.final_state == final

    def _redundant(self, world: int) -> bool:
        """Whether a goal could be left out with the same end state: nobody could grade it."""
        from sandboxes import episode_in

        final = self.current
        for i, role in enumerate(self.roles):
            if role != "mutation":
                continue
            chain = [(c.tool, dict(c.args)) for j, c in enumerate(self.steps) if j != i]
            episode = episode_in(
                self.sandbox_pool,
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


class _OverBudget(RuntimeError):
    """The attempt spent its lookup budget without finding a task."""


# --------------------------------------------------------------------------- records


def _credential(param: str) -> bool:
    """Whether a parameter takes a log-in credential: a user name, a password."""
    words = set(name_tokens(param))
    return bool(words & {"password", "passcode", "username", "login"}) or words == {"user", "name"}


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
    coll: CollectionModel,
    record: dict[str, Any],
    state: dict[str, Any],
    nested: Any,
) -> _Reference | None:
    """Words that single the record out among its collection: its lookup field, else the
    fewest fields whose values no other record shares. A field holding another record's id
    is said through that record's own words (`nested`), never as the id."""
    label = coll.label or collection_label(coll.attribute)
    if coll.shape == "index":
        return _Reference(f"{label} {record['name']}", [str(record["name"])])
    for name in coll.lookup_fields:
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            return _Reference(f"the {label} with {field_noun(name)} {_say(value)}", [value])
    others = [r for r in coll.records_in(state) if r is not record and r != record]
    words: dict[str, _Reference] = {}
    for key, value in sorted(record.items()):
        if key == coll.id_field or isinstance(value, (bool, dict, list)) or value is None:
            continue
        if is_id_name(key) or _str_key(value) in _all_ids([coll], state):
            inner = nested(value) if nested is not None else None
            if inner is not None:
                words[key] = _Reference(inner.words.removeprefix("the "), inner.facts)
        elif not (isinstance(value, str) and _looks_like_id(value)):
            words[key] = _Reference(f"{field_noun(key)} {_say(value)}", [_fact(value)])
    usable = list(words)
    for size in (1, 2):
        for combo in itertools.combinations(usable, size):
            if all(any(o.get(k) != record.get(k) for k in combo) for o in others):
                return _Reference(
                    f"the {label} with " + " and ".join(words[k].words for k in combo),
                    [fact for k in combo for fact in words[k].facts],
                )
    return None


def _looks_like_id(text: str) -> bool:
    return bool(re.fullmatch(r"[A-Za-z]{0,6}[-_]?\d+[A-Za-z0-9-]*", text.strip()))


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


def _say(value: Any, *, code: bool = False) -> str:
    """A value as the task says it: text in quotes when it has spaces, lists joined. A
    snake_case string is a code in words when the parameter lists its values (a status),
    else an identifier (a file, a user name) kept verbatim in quotes."""
    if isinstance(value, list):
        return ", ".join(_say(v, code=code) for v in value)
    if isinstance(value, str) and _SNAKE.match(value) and not code:
        return f'"{value}"'
    if isinstance(value, str) and (" " in value or not value):
        return f'"{value}"'
    return value_words(value)


def _fact(value: Any, *, code: bool = False) -> str:
    """The words of `value` the task text carries (as `_say` writes them, without quotes)."""
    if isinstance(value, str) and _SNAKE.match(value) and not code:
        return value
    return value_words(value)


_SNAKE = re.compile(r"^[a-z][a-z0-9]*(?:_[a-z0-9]+)+$")
