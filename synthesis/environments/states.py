"""Initial states: seeded base records, then a seeded history of real tool calls in the sandbox.

Records of entities that no tool creates (customers, products, slots) are generated from
data; records that tools create (orders, bookings) come from replaying plausible past calls
through the environment itself, so every initial state obeys the environment's own rules
(stock, slot occupancy, status machines) by construction. Records made from other made
records (reviews of completed bookings, notes on tickets) come in a second round, once the
first round's records have moved through their statuses.

Field values come from the generators in `values.py`. The history's choices give a working
business's mix (most records live, a minority finished or cancelled), and the state carries
deliberate decoys (people sharing a surname, look-alike names, one customer with several
orders), listed in `InitialState.provenance["decoys"]` (see `find_decoys`).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

from synthesis.environments.free_text import is_free_text
from synthesis.environments.runtime import sandbox_source
from synthesis.environments.values import (
    QUANTITIES,
    ValueMaker,
    name_words,
    similar_names,
    value_pool_size,
)
from synthesis.hashing import derive_seed, short_id
from synthesis.models import (
    EntitySpec,
    Environment,
    EnvSpec,
    InitialState,
    ParamSpec,
    ToolSpec,
)

STATES_GENERATOR = "states/v3"

# Statuses that leave the usual path: most records in a real history never take them.
_EXIT_WORDS = (
    "cancel",
    "reject",
    "declin",
    "refund",
    "fail",
    "void",
    "expire",
    "withdraw",
    "no_show",
    "lost",
    "abandon",
)
# Relative weights of one more step in a record's history (staying put weighs 1): records
# usually move along, a few reach an end (completed, delivered), fewer take a side exit.
_FORWARD, _TO_END, _SIDE_EXIT = 1.2, 0.3, 0.12
_MAX_HISTORY_STEPS = 4


def _record_id(entity: EntitySpec, n: int) -> str:
    return f"{entity.id_prefix}-{n:04d}"


def _entity_order(spec: EnvSpec) -> list[EntitySpec]:
    """Entities ordered so that every referenced entity comes before its referrers."""
    done: list[EntitySpec] = []
    pending = list(spec.entities)
    while pending:
        for entity in pending:
            refs = {f.ref for f in entity.fields if f.type == "ref"} - {entity.name}
            if refs <= {e.name for e in done}:
                done.append(entity)
                pending.remove(entity)
                break
        else:
            raise ValueError(f"spec {spec.env_id} has a reference cycle between entities")
    return done


def _created_by_tools(spec: EnvSpec) -> set[str]:
    return {t.entity for t in spec.tools if t.operation == "create"}


def base_state(spec: EnvSpec, seed: int, records_per_entity: int) -> dict[str, dict]:
    """Records of every entity that no tool creates; tool-created collections start empty."""
    maker = ValueMaker(seed)
    created = _created_by_tools(spec)
    state: dict[str, dict] = {e.collection: {} for e in spec.entities}
    for entity in _entity_order(spec):
        if entity.name in created:
            continue
        # Entities that hang off another (slots of a provider) get more records.
        has_ref = any(f.type == "ref" for f in entity.fields)
        count = records_per_entity * (2 if has_ref else 1)
        pools = [n for n in (value_pool_size(f) for f in entity.fields) if n is not None]
        if pools:
            count = min(count, *pools)
        for n in range(1, count + 1):
            record: dict[str, Any] = {"id": _record_id(entity, n)}
            for f in entity.fields:
                record[f.name] = maker.value(entity, f, record, state, spec)
            state[entity.collection][record["id"]] = record
    return state


def _param_value(
    tool: ToolSpec,
    param,
    spec: EnvSpec,
    state: dict,
    rng: random.Random,
    taken: set[str],
    maker: ValueMaker | None = None,
    record: dict | None = None,
) -> Any:
    """A plausible argument for `param`; `record` holds the fields the call sets so far (the
    text of a new ticket is about the category it has)."""
    if param.ref:
        target = spec.entity(param.ref)
        candidates = sorted(state[target.collection])
        records = state[target.collection]
        for pre in tool.preconditions:
            if pre.kind == "ref_field_equals" and pre.param == param.name:
                candidates = [
                    c
                    for c in candidates
                    if records[c].get(pre.field) == pre.value and c not in taken
                ]
            elif pre.kind == "ref_field_gte_param" and pre.param == param.name:
                # Nobody orders what the shop shows as out of stock.
                candidates = [c for c in candidates if _positive(records[c].get(pre.field))]
        if not candidates:
            return None
        choice = rng.choice(candidates)
        taken.add(choice)
        return choice
    if param.enum:
        return rng.choice(param.enum)
    if maker is not None and param.field and param.type in ("string", "number"):
        # Text a create stores (a title, a subject, a start time) and an amount with a range
        # of its own (a fee) are drawn the way the entity's own records are, so past records
        # read like the rest of the state.
        entity = spec.entity(tool.entity)
        try:
            fspec = entity.field(param.field)
        except KeyError:
            fspec = None
        if fspec is not None and (param.type == "string" or fspec.generator):
            return maker.value(entity, fspec, record or {}, state, spec)
    if param.type == "integer":  # quantities and counts: small, so stock usually covers them
        return rng.choice(QUANTITIES)
    if param.type == "number":
        return round(rng.uniform(1, 50), 2)
    if param.type == "boolean":
        return rng.random() < 0.5
    return f"value-{rng.randint(1, 999)}"


def _owner_param(tool: ToolSpec, spec: EnvSpec) -> ParamSpec | None:
    """The parameter naming whose record a create makes (the customer of an order): the first
    reference to an entity no tool creates, with no guard on which record it may be."""
    created = _created_by_tools(spec)
    guarded = {pre.param for pre in tool.preconditions if pre.kind == "ref_field_equals"}
    return next(
        (p for p in tool.params if p.ref and p.ref not in created and p.name not in guarded),
        None,
    )


def _positive(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def plan_history_creates(
    spec: EnvSpec,
    state: dict,
    rng: random.Random,
    per_tool: int,
    tools: list[ToolSpec] | None = None,
) -> list[tuple[str, dict]]:
    """Past create calls with plausible arguments (of `tools`, default every create tool).
    One owner per create tool is a regular (every third call is theirs), so some customer
    always has several orders or bookings: a decoy that makes "the order of X" need one more
    detail to be unambiguous."""
    calls = []
    maker = ValueMaker(rng.randrange(2**32))
    creates = tools if tools is not None else [t for t in spec.tools if t.operation == "create"]
    for tool in creates:
        taken: set[str] = set()
        owner = _owner_param(tool, spec)
        regular = None
        if owner is not None and state[spec.entity(owner.ref).collection]:
            regular = rng.choice(sorted(state[spec.entity(owner.ref).collection]))
        # Free text is written last, about the record the other arguments make.
        params = sorted(tool.params, key=lambda p: _free_text_param(tool, p, spec))
        for n in range(per_tool):
            args = {}
            for p in params:
                record = {q.field: args[q.name] for q in tool.params if q.field and q.name in args}
                value = _param_value(tool, p, spec, state, rng, taken, maker, record)
                if p is owner and regular is not None and n % 3 == 0:
                    value = regular
                if value is None and p.required:
                    break
                if value is not None:
                    args[p.name] = value
            else:
                calls.append((tool.name, args))
    return calls


def _free_text_param(tool: ToolSpec, param: ParamSpec, spec: EnvSpec) -> bool:
    fields = {f.name: f for f in spec.entity(tool.entity).fields}
    f = fields.get(param.field or "")
    return f is not None and is_free_text(f)


# Runs a batch of (tool, args) calls and gives each call's result dict (None when it failed).
RunCalls = Callable[[list[tuple[str, dict]]], list[Any]]


def replay_history(
    spec: EnvSpec,
    state: dict[str, dict],
    rng: random.Random,
    per_tool: int,
    run: RunCalls,
    now: Callable[[], dict[str, dict]],
) -> None:
    """A seeded past of real calls through `run` (the sandboxed environment, or a model of
    it in tests): creates, then each made record's status walk.

    Records made from other made records (a review of a completed booking, a note on a
    ticket, a waitlist entry for a booked slot) have nothing to point at in the base state:
    their create tools get a second round, planned on the state `now()` reports once the
    first round's records have lived their history.
    """
    creates = plan_history_creates(spec, state, rng, per_tool=per_tool)
    _create_and_walk(spec, creates, rng, run)
    planned = {name for name, _ in creates}
    later = [t for t in spec.tools if t.operation == "create" and t.name not in planned]
    if later:
        current = now() or {}
        current = {e.collection: current.get(e.collection, {}) for e in spec.entities}
        more = plan_history_creates(spec, current, rng, per_tool=per_tool, tools=later)
        if more:
            _create_and_walk(spec, more, rng, run)


def _create_and_walk(spec: EnvSpec, creates: list, rng: random.Random, run: RunCalls) -> None:
    created, entity_of = [], []
    for (tool_name, _), value in zip(creates, run(creates), strict=True):
        if isinstance(value, dict) and value.get("success"):
            created.append(value["data"])
            entity_of.append(spec.tool(tool_name).entity)
    transitions = plan_history_transitions(spec, created, entity_of, rng)
    if transitions:
        run(transitions)


def _is_side_exit(status: str | None) -> bool:
    return bool(status) and any(word in status.lower() for word in _EXIT_WORDS)


def plan_history_transitions(
    spec: EnvSpec, created: list[dict], entity_of: list[str], rng: random.Random
) -> list[tuple[str, dict]]:
    """A weighted walk over each created record's status machine.

    At each step the record stays where it is (weight 1), moves along the usual path, reaches
    an end status (one with no way out: completed, delivered) or takes a side exit
    (cancelled, rejected …), with the weights above. So most records are live, a minority
    finished, a few cancelled, the mix a working business has, and every one of them got
    there through real tool calls.
    """
    calls = []
    # The newest record of each entity was only just made: nobody has acted on it yet, so
    # every state holds at least one record in its first status (a pending order to pay).
    newest = {name: i for i, name in enumerate(entity_of)}
    final: dict[int, Any] = {}  # each walked record's status once its walk is planned
    for n, (record, entity_name) in enumerate(zip(created, entity_of, strict=True)):
        entity = spec.entity(entity_name)
        if not entity.status_field:
            continue
        status = record.get(entity.status_field)
        final[n] = status
        if newest[entity_name] == n:
            continue
        for _ in range(_MAX_HISTORY_STEPS):
            options = [
                t
                for t in spec.tools
                if t.operation == "transition"
                and t.entity == entity_name
                and any(status in p.values for p in t.preconditions if p.kind == "status_in")
            ]
            weights = [1.0] + [_step_weight(entity, t.target_status) for t in options]
            pick = rng.choices(range(len(weights)), weights=weights)[0]
            if pick == 0:
                break
            tool = options[pick - 1]
            calls.append((tool.name, {f"{entity_name}_id": record["id"]}))
            status = tool.target_status
        final[n] = status
    return calls + _cover_statuses(spec, created, entity_of, final, newest, rng)


def _cover_statuses(
    spec: EnvSpec,
    created: list[dict],
    entity_of: list[str],
    final: dict[int, Any],
    newest: dict[str, int],
    rng: random.Random,
) -> list[tuple[str, dict]]:
    """Walks that leave at least one record in every status a record can reach, where the
    weighted walk left none: a working business has a cancelled booking somewhere, and an
    agent reading the state sees every status its answers must tell apart. (A state with no
    cancelled operation let "it is completed, or scheduled", a hedge over the statuses in
    view, answer every refusal of an operation: the reply guard names the missing status and
    no hedge built from the state ever says it.) Each walk takes a record whose status
    another record shares, so no status is lost to cover one."""
    calls: list[tuple[str, dict]] = []
    for entity in spec.entities:
        if not entity.status_field:
            continue
        edges: dict[Any, list[tuple[str, Any]]] = {}
        for tool in spec.tools:
            if tool.operation != "transition" or tool.entity != entity.name:
                continue
            for pre in tool.preconditions:
                if pre.kind == "status_in":
                    for value in pre.values:
                        edges.setdefault(value, []).append((tool.name, tool.target_status))
        mine = [n for n, name in enumerate(entity_of) if name == entity.name and n in final]
        for missing in sorted({t for out in edges.values() for _, t in out if t}, key=str):
            held = [final[n] for n in mine]
            if missing in held:
                continue
            spare = [n for n in mine if n != newest[entity.name] and held.count(final[n]) > 1]
            paths = {n: _path(edges, final[n], missing) for n in spare}
            reachable = [n for n in spare if paths[n]]
            if not reachable:
                continue
            n = rng.choice(reachable)
            for tool_name in paths[n] or ():
                calls.append((tool_name, {f"{entity.name}_id": created[n]["id"]}))
            final[n] = missing
    return calls


def _path(
    edges: dict[Any, list[tuple[str, Any]]], start: Any, goal: Any, limit: int = 4
) -> list[str] | None:
    """The tool names of a shortest walk from status `start` to `goal` (None: none within
    `limit` steps)."""
    frontier: list[tuple[Any, list[str]]] = [(start, [])]
    seen = {start}
    for _ in range(limit):
        nxt = []
        for status, path in frontier:
            for tool_name, target in edges.get(status, ()):
                if target == goal:
                    return [*path, tool_name]
                if target not in seen:
                    seen.add(target)
                    nxt.append((target, [*path, tool_name]))
        frontier = nxt
    return None


def _step_weight(entity: EntitySpec, target: str | None) -> float:
    if _is_side_exit(target):
        return _SIDE_EXIT
    if not entity.transitions.get(target or "", []):
        return _TO_END
    return _FORWARD


# --------------------------------------------------------------------------- decoys


def find_decoys(spec: EnvSpec, state: dict[str, dict]) -> dict[str, Any]:
    """Records a careless agent could take for one another, found in the finished state.

    - `same_surname`: people (a `person_name` field) sharing a last name;
    - `similar_name`: things whose names share a significant word ("Court 1", "Court 2");
    - `same_owner`: several records of one owner (three orders of one customer).

    Returns {"groups": [{"kind", "collection", "field", "shared", "records"}, …],
    "decoys_of": {record id: [ids of its decoys]}}; record ids are unique across the
    collections of a compiled spec (distinct id prefixes), so one flat map serves.
    """
    groups: list[dict[str, Any]] = []
    for entity in spec.entities:
        records = state.get(entity.collection, {})
        for f in entity.fields:
            if f.type != "str" or f.generator not in ("person_name", "item", "choice", None):
                continue
            values = {rid: r.get(f.name) for rid, r in sorted(records.items())}
            values = {rid: v for rid, v in values.items() if isinstance(v, str) and v}
            if f.generator == "person_name":
                groups += _grouped(entity, f.name, "same_surname", values, _surname_key)
            elif f.name in ("name", "title"):
                groups += _similar_groups(entity, f.name, values)
        owner = next((f for f in entity.fields if f.type == "ref"), None)
        if owner is not None and entity.name in _created_by_tools(spec):
            values = {rid: r.get(owner.name) for rid, r in sorted(records.items())}
            groups += _grouped(entity, owner.name, "same_owner", values, lambda v: v)
    decoys_of: dict[str, set[str]] = {}
    for group in groups:
        for rid in group["records"]:
            decoys_of.setdefault(rid, set()).update(r for r in group["records"] if r != rid)
    return {
        "groups": groups,
        "decoys_of": {rid: sorted(others) for rid, others in sorted(decoys_of.items())},
    }


def _surname_key(name: Any) -> str | None:
    words = str(name).split()
    return words[-1].casefold() if len(words) >= 2 else None


def _grouped(entity: EntitySpec, fname: str, kind: str, values: dict, key) -> list[dict]:
    by_key: dict[str, list[str]] = {}
    for rid, value in values.items():
        k = key(value) if value is not None else None
        if k is not None:
            by_key.setdefault(str(k), []).append(rid)
    return [
        {
            "kind": kind,
            "collection": entity.collection,
            "field": fname,
            "shared": shared,
            "records": rids,
        }
        for shared, rids in sorted(by_key.items())
        if len(rids) >= 2
    ]


def _similar_groups(entity: EntitySpec, fname: str, values: dict[str, str]) -> list[dict]:
    """One group per shared significant word held by two or more names."""
    by_word: dict[str, list[str]] = {}
    for rid, value in values.items():
        for word in sorted(name_words(value)):
            by_word.setdefault(word, []).append(rid)
    return [
        {
            "kind": "similar_name",
            "collection": entity.collection,
            "field": fname,
            "shared": word,
            "records": rids,
        }
        for word, rids in sorted(by_word.items())
        if len(rids) >= 2 and any(similar_names(values[a], values[b]) for a in rids for b in rids)
    ]


def build_initial_state(
    env: Environment,
    *,
    seed: int,
    index: int,
    records_per_entity: int,
    backend: str = "auto",
    pool: Any = None,
) -> InitialState:
    """Initial state `index` of an environment: a pure function of (env, seed, index).

    The history calls run in the sandbox: the environment code is untrusted. `pool`: the
    WorkerPool to take the session from (sandboxes.session_in), else a sandbox of its own.
    """
    from sandboxes import session_in  # the engine's only door to generated code

    spec = env.spec
    if spec is None:
        raise ValueError(f"environment {env.env_id} has no spec to generate states from")
    if spec.kind == "workspace":
        from synthesis.environments.workspace_tree import build_workspace_state

        return build_workspace_state(
            env,
            seed=seed,
            index=index,
            records_per_entity=records_per_entity,
            backend=backend,
            pool=pool,
        )
    state_seed = derive_seed("initial_state", env.env_id, seed, index)
    rng = random.Random(state_seed)
    state = base_state(spec, state_seed, records_per_entity)
    with session_in(pool, sandbox_source(env), state, backend=backend) as session:

        def run(calls: list[tuple[str, dict]]) -> list[Any]:
            return [r.result if r.ok else None for r in session.call_batch(calls)]

        replay_history(
            spec, state, rng, max(2, records_per_entity), run, lambda: session.final_state() or {}
        )
        final = session.final_state()
        if session.status != "ok":
            raise RuntimeError(f"history replay of {env.env_id} failed: {session.reason}")
    state = {e.collection: final.get(e.collection, {}) for e in spec.entities}
    return InitialState(
        state_id=f"{env.env_id}-s{index}-{short_id(env.env_id, seed, index, state, length=6)}",
        env_id=env.env_id,
        seed=state_seed,
        state=state,
        provenance={"generator": STATES_GENERATOR, "decoys": find_decoys(spec, state)},
    )
