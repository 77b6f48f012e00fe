"""Inferring the model of code without a spec: AST analysis, then probing in the sandbox.

The AST gives each tool's schema and a first guess at its kind. The states give record
collections (dicts of records keyed by id, lists of records with an id field, name -> id
indexes) and the values people would use. Probing settles the rest by execution: every tool
is called with arguments drawn from those values (and from earlier results, so a login's
token feeds the next call), twice over, in a sandbox per initial state; a tool is `mutate`
when a successful call changed the reported state, `query` when successful calls never did.
Which parameters take which ids, which tools hand those ids out, and which status
transitions happen are read off the same calls. Where the AST label and the behaviour
disagree, the model records it.
"""

from __future__ import annotations

import ast
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.arguments import (
    ValuePools,
    candidates,
    coherent_args,
    is_id_name,
    name_tokens,
    singular,
    words_of,
)
from synthesis.environments.model import (
    CollectionModel,
    EnvModel,
    KindDisagreement,
    ParamModel,
    ToolModel,
    from_analysis,
)
from synthesis.environments.runtime import result_failure, sandbox_source
from synthesis.hashing import derive_seed
from synthesis.models import Environment, FieldSpec, InitialState

PROBE_ROUNDS = 3
# Successful calls, none of which changed anything, that overrule an AST saying the tool
# writes (a read that touches `self.x` through an alias looks like a write to the AST).
SETTLED_BY = 3
CANDIDATES_PER_TOOL = 3
MAX_PROBE_STATES = 3
_LABEL_SUFFIXES = {
    "list",
    "lists",
    "map",
    "maps",
    "queue",
    "record",
    "records",
    "db",
    "table",
    "index",
    "dict",
    "data",
    "store",
    "registry",
    "by",
    "id",
    "ids",
    "all",
}
_LOOKUP_HINTS = ("email", "username", "name", "title", "login", "handle", "phone", "code")
_STATUS_HINTS = ("status", "state", "stage", "phase")


# --------------------------------------------------------------------------- collections


def collection_label(attribute: str) -> str:
    """`ticket_queue` -> 'ticket', `credit_card_list` -> 'credit card', `tweets` -> 'tweet'."""
    tokens = name_tokens(attribute)
    while len(tokens) > 1 and tokens[-1] in _LABEL_SUFFIXES:
        tokens.pop()
    if tokens and tokens[0] in ("all", "my"):
        tokens = tokens[1:] or tokens
    if not tokens:
        return attribute
    tokens[-1] = singular(tokens[-1])
    return " ".join(tokens)


def _id_like(value: Any) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    return isinstance(value, str) and bool(re.search(r"\d", value)) and " " not in value.strip()


def _texty(value: Any) -> bool:
    return (
        isinstance(value, str)
        and 2 <= len(value) <= 80
        and bool(re.search(r"[A-Za-z]", value))
        and not _id_like(value)
    ) or (isinstance(value, str) and "@" in value)


def _record_list_id_field(records: list[dict[str, Any]]) -> str | None:
    common = set(records[0])
    for rec in records[1:]:
        common &= set(rec)
    ranked = sorted(common, key=lambda k: (k != "id", not name_tokens(k)[-1:] == ["id"], k))
    for key in ranked:
        values = [rec[key] for rec in records]
        hashable = all(isinstance(v, (str, int)) and not isinstance(v, bool) for v in values)
        if (
            hashable
            and len(set(values)) == len(values)
            and (key == "id" or name_tokens(key)[-1:] == ["id"])
        ):
            return key
    return None


def find_collections(states: Sequence[dict[str, Any]]) -> list[CollectionModel]:
    """Record collections among the top-level attributes of the given states."""
    shapes: dict[str, tuple[str, str]] = {}
    records: dict[str, list[list[dict[str, Any]]]] = {}
    for state in states:
        for attr, value in sorted(state.items()):
            if not isinstance(attr, str) or attr.startswith("__"):
                continue
            found = _shape_of(value)
            if found is None:
                continue
            if attr in shapes and shapes[attr][0] != found[0]:
                continue
            shapes.setdefault(attr, found)
            records.setdefault(attr, []).append(_records_of(found[0], value))
    out = []
    for attr in sorted(shapes):
        shape, id_field = shapes[attr]
        out.append(_collection(attr, shape, id_field, records[attr]))
    # An index whose ids are another collection's (`member_ids_by_name` -> members) names
    # those records: it takes their label, so a task says "member Alice", not "member ids".
    for i, coll in enumerate(out):
        if coll.shape != "index":
            continue
        ids = {str(r["id"]) for per_state in records[coll.attribute] for r in per_state}
        for other in out:
            owned = {str(r) for st in states for r in other.ids_in(st)}
            if other.shape != "index" and ids and ids <= owned:
                out[i] = coll.model_copy(update={"label": other.label})
                break
    return out


def _shape_of(value: Any) -> tuple[str, str] | None:
    if isinstance(value, dict) and value:
        items = list(value.values())
        if all(isinstance(v, dict) for v in items):
            id_field = "id"
            for key in sorted(set.intersection(*(set(v) for v in items))):
                if all(str(v[key]) == str(k) for k, v in value.items()):
                    id_field = key
                    break
            return "keyed", id_field
        keys_texty = all(isinstance(k, str) and not _id_like(k) for k in value)
        ids = list(value.values())
        if (
            len(value) >= 2
            and keys_texty
            and all(_id_like(v) for v in ids)
            and len({str(v) for v in ids}) == len(ids)
        ):
            return "index", "id"
        return None
    if isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
        id_field = _record_list_id_field(value)
        return ("list", id_field) if id_field else None
    return None


def _records_of(shape: str, value: Any) -> list[dict[str, Any]]:
    if shape == "keyed":
        return [v for v in value.values() if isinstance(v, dict)]
    if shape == "list":
        return [v for v in value if isinstance(v, dict)]
    return [{"name": k, "id": v} for k, v in value.items()]


def _collection(
    attr: str, shape: str, id_field: str, per_state: list[list[dict[str, Any]]]
) -> CollectionModel:
    """The collection at `attr`, from its records in each state (a field that names records
    must be unique within every state; the same record appears in several)."""
    label = collection_label(attr)
    records = [rec for recs in per_state for rec in recs]
    if shape == "index":
        return CollectionModel(
            name=label.replace(" ", "_"),
            attribute=attr,
            shape="index",
            id_field="id",
            label=label,
            fields=[FieldSpec(name="name", type="str"), FieldSpec(name="id", type="str")],
            lookup_field="name",
            lookup_fields=["name"],
        )
    fields: dict[str, set[str]] = {}
    values: dict[str, list[Any]] = {}
    for rec in records:
        for key, value in rec.items():
            fields.setdefault(key, set()).add(type(value).__name__)
            values.setdefault(key, []).append(value)
    lookups = []
    for key, seen in sorted(values.items()):
        if key == id_field or not all(_texty(v) for v in seen):
            continue
        if not all(_unique_in(recs, key) for recs in per_state):
            continue
        # Two distinct values are weak evidence that a field names records; a name-like
        # field (name, email, title, ...) or many records make it strong.
        if any(h in key.lower() for h in _LOOKUP_HINTS) or len(seen) >= 4:
            lookups.append(key)
    lookups.sort(key=lambda k: (not any(h in k.lower() for h in _LOOKUP_HINTS), k))
    status_field, statuses = None, []
    for key, seen in sorted(values.items()):
        words = [v for v in seen if isinstance(v, str)]
        if any(h in key.lower() for h in _STATUS_HINTS) and len(words) == len(seen) and words:
            distinct = sorted(set(words))
            if len(distinct) <= 8 and all(len(v) <= 30 for v in distinct):
                status_field, statuses = key, distinct
                break
    field_specs = [
        FieldSpec(name=key, type=_field_type(types)) for key, types in sorted(fields.items())
    ]
    return CollectionModel(
        name=label.replace(" ", "_"),
        attribute=attr,
        shape=shape,
        id_field=id_field,
        label=label,
        fields=field_specs,
        lookup_field=lookups[0] if lookups else None,
        lookup_fields=lookups,
        status_field=status_field,
        statuses=statuses,
    )


def _unique_in(records: list[dict[str, Any]], key: str) -> bool:
    values = [str(r[key]).casefold() for r in records if key in r]
    return len(values) == len(records) and len(set(values)) == len(values)


def _field_type(types: set[str]) -> str:
    if types <= {"bool"}:
        return "bool"
    if types <= {"int"}:
        return "int"
    if types <= {"int", "float"}:
        return "float"
    return "str"


# --------------------------------------------------------------------------- probing


@dataclass
class Observation:
    tool: str
    args: dict[str, Any]
    ok: bool
    failure: str | None
    changed: bool
    result: Any = None
    transitions: list[tuple[str, str, str]] = field(default_factory=list)


def probe_environment(
    env: Environment,
    model: EnvModel,
    states: Sequence[InitialState],
    *,
    seed: int,
    backend: str = "auto",
    pool: Any = None,
) -> tuple[list[Observation], ValuePools, list[dict[str, Any]]]:
    """Call every tool with drawn arguments, twice over, in a sandbox per initial state
    (from `pool`, the sandboxes' WorkerPool, when given).

    Returns what every call did, the values (and collection ids) seen along the way, and
    the states calls left behind (the last of each round).
    """
    from sandboxes import session_in

    seen: list[dict[str, Any]] = []
    pools = ValuePools.from_states([s.start_state for s in states], model.collections)
    observations: list[Observation] = []
    source = sandbox_source(env)
    for index, state in enumerate(states[:MAX_PROBE_STATES]):
        rng = random.Random(derive_seed("probe", env.env_id, seed, index))
        with session_in(
            pool,
            source,
            state.state,
            backend=backend,
            entropy_seed=derive_seed("probe", index) % 2**31,
        ) as session:
            before = session.final_state()
            if before is None:
                break
            large = exceeds(before, LARGE_STATE_VALUES)
            for round_no in range(PROBE_ROUNDS):
                # Alternate the order: a tool that needs another first (create after login,
                # close after create) finds it done in one direction or the other.
                order = model.tools if round_no % 2 == 0 else model.tools[::-1]
                for tool in order:
                    for args in _probe_args(tool, pools, rng, model.collections, before):
                        if session.status != "ok":
                            break
                        obs, after = _observe(session, tool.name, args, before, model)
                        observations.append(obs)
                        if after is None:
                            break
                        if obs.failure is None:
                            pools.learn(obs.result, tool.name, result=True)
                            if obs.changed or not large:
                                _learn_state(pools, model.collections, before, after, large)
                        before = after
                seen.append(before)
                # A session that died (a hostile or broken tool) ends this state's probing;
                # the audit will report it.
                if session.status != "ok":
                    break
        observations += _ladder(source, model, state, observations, pools, rng, backend, pool)
    return observations, pools, seen


LADDER_TARGETS = 24
LADDER_CANDIDATES = 6


def _ladder(
    source: Any,
    model: EnvModel,
    state: InitialState,
    observations: list[Observation],
    pools: ValuePools,
    rng: random.Random,
    backend: str,
    pool: Any = None,
) -> list[Observation]:
    """Tools no call has worked for yet, tried again after each change that did work.

    Many tools only work once something else happened (a login, a ticket to close, a
    resolved ticket to reopen). In a fresh session per such tool, the changes probing saw
    succeed are replayed one by one, in the order they first worked, and the tool is tried
    after each: the first that works settles it.
    """
    from sandboxes import session_in

    worked = {o.tool for o in observations if o.failure is None}
    changed = {o.tool for o in observations if o.failure is None and o.changed}
    # A tool the code says writes, whose calls so far changed nothing, may only have been
    # called when there was nothing to change (locking locked doors): it is tried again too.
    unsettled = {t.name for t in model.tools if t.ast_kind == "mutate" and t.name not in changed}
    enablers: dict[str, dict[str, Any]] = {}
    for obs in observations:
        if obs.failure is None and obs.changed and obs.tool not in enablers:
            enablers[obs.tool] = obs.args
    targets = [t for t in model.tools if t.name not in worked or t.name in unsettled]
    targets = targets[:LADDER_TARGETS]
    found: list[Observation] = []
    large = None
    for tool in targets:
        with session_in(pool, source, state.state, backend=backend, entropy_seed=0) as session:
            before = session.final_state()
            if large is None and before is not None:
                large = exceeds(before, LARGE_STATE_VALUES)
            for step in [None, *list(enablers.items())]:
                if before is None or session.status != "ok":
                    break
                if step is not None:
                    session.call(step[0], dict(step[1]))
                    previous, before = before, session.final_state()
                    if before is None:
                        break
                    _learn_state(pools, model.collections, previous, before, bool(large))
                done = False
                for args in _probe_args(
                    tool, pools, rng, model.collections, before, LADDER_CANDIDATES
                ):
                    obs, after = _observe(session, tool.name, args, before, model)
                    if after is None:
                        break
                    found.append(obs)
                    before = after
                    if obs.failure is None and obs.changed and tool.name not in enablers:
                        # Later targets may need this one first (close after create).
                        enablers[tool.name] = args
                    if obs.failure is None and (obs.changed or tool.name not in unsettled):
                        pools.learn(obs.result, tool.name, result=True)
                        done = True
                        break
                if done:
                    break
    return found


# A state holding more values than this (tau2's databases: 10^5) is too large to learn again
# after every call of a probe: only what a call changed is learned.
LARGE_STATE_VALUES = 20_000


def exceeds(value: Any, limit: int) -> bool:
    """Whether `value` holds more than `limit` values (dicts, lists and scalars), counted
    only as far as the limit."""
    stack, seen = [value], 0
    while stack:
        item = stack.pop()
        seen += 1
        if seen > limit:
            return True
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def _learn_state(
    pools: ValuePools,
    collections: list[CollectionModel],
    before: dict[str, Any],
    after: dict[str, Any],
    large: bool,
) -> None:
    """Learn the state a call left: the whole of it again, its values newest, as probes that
    need a record just changed (a room just cleaned) find it; of a large state only what
    changed (walking a database of 10^5 values per call was most of probing)."""
    if large:
        learn_change(pools, before, after)
    else:
        pools.learn(after)
    _refresh_ids(pools, collections, after)


def learn_change(pools: ValuePools, before: Any, after: Any, key: str = "", depth: int = 0) -> None:
    """Learn into `pools` what `after` holds that `before` did not, as ValuePools.learn would
    learn it from the whole of `after` (a new record's id under its collection's key, its
    values under theirs); the parts both hold alike were learned already."""
    if depth > 12:
        return
    if isinstance(before, dict) and isinstance(after, dict):
        keyed = bool(after) and all(isinstance(child, dict) for child in after.values())
        for child_key, child in after.items():
            if child_key in before and before[child_key] == child:
                continue
            if keyed and key:
                pools.add(key, child_key)
            learn_change(pools, before.get(child_key), child, str(child_key), depth + 1)
        return
    pools.learn(after, key)


def _observe(
    session: Any, tool: str, args: dict[str, Any], before: dict[str, Any], model: EnvModel
) -> tuple[Observation, dict[str, Any] | None]:
    """One call and what it did; the state after it (None when the session died)."""
    call = session.call(tool, args)
    after = session.final_state() if session.status == "ok" else None
    if after is None:
        return Observation(tool, args, False, call.error, False), None
    failure = result_failure(call.ok, call.result, call.error)
    changed = after != before
    transitions = _transitions(model.collections, before, after) if changed else []
    return Observation(tool, args, call.ok, failure, changed, call.result, transitions), after


def _probe_args(
    tool: ToolModel,
    pools: ValuePools,
    rng: random.Random,
    collections: list[CollectionModel],
    state: dict[str, Any],
    count: int = CANDIDATES_PER_TOOL,
) -> list[dict[str, Any]]:
    options = {p.name: candidates(tool, p, pools, rng, limit=max(4, count)) for p in tool.params}
    out = []
    for i in range(count):
        together = coherent_args(tool, collections, state, rng) if i == 0 else {}
        args: dict[str, Any] = {}
        for p in tool.params:
            values = options[p.name]
            if p.name in together:
                args[p.name] = together[p.name]
                continue
            if not values:
                continue
            # Optional parameters are left out half the time: defaults are behaviour too.
            if not p.required and rng.random() < 0.5:
                continue
            args[p.name] = values[i % len(values)]
        out.append(args)
    return out


def _refresh_ids(pools: ValuePools, collections: list[CollectionModel], state: dict) -> None:
    for coll in collections:
        ids = pools.ids.setdefault(coll.name, [])
        for rid in coll.ids_in(state):
            if rid not in ids:
                ids.append(rid)


def _transitions(
    collections: list[CollectionModel], before: dict, after: dict
) -> list[tuple[str, str, str]]:
    out = []
    for coll in collections:
        if not coll.status_field or coll.shape == "index":
            continue
        old = _by_id(coll, before)
        for rid, rec in _by_id(coll, after).items():
            prev = old.get(rid)
            if prev is None:
                continue
            a, b = prev.get(coll.status_field), rec.get(coll.status_field)
            if isinstance(a, str) and isinstance(b, str) and a != b:
                out.append((coll.name, a, b))
    return out


def _by_id(coll: CollectionModel, state: dict) -> dict[str, dict]:
    records = state.get(coll.attribute)
    if coll.shape == "keyed" and isinstance(records, dict):
        return {str(k): v for k, v in records.items() if isinstance(v, dict)}
    if coll.shape == "list" and isinstance(records, list):
        return {
            str(r[coll.id_field]): r for r in records if isinstance(r, dict) and coll.id_field in r
        }
    return {}


# --------------------------------------------------------------------------- the model


def infer_model(
    env: Environment,
    states: Sequence[InitialState],
    *,
    seed: int,
    backend: str = "auto",
    pool: Any = None,
) -> EnvModel:
    """The inferred model of `env`, probed over `states` in the sandbox (sessions from `pool`,
    the sandboxes' WorkerPool, when given)."""
    base = from_analysis(env)
    collections = find_collections([s.start_state for s in states])
    title, description = _class_text(env)
    tools = [_with_id_params(tool, collections) for tool in base.tools]
    model = base.model_copy(
        update={
            "tools": tools,
            "collections": collections,
            "title": title,
            "description": description,
        }
    )
    observations, pools, seen = probe_environment(
        env, model, states, seed=seed, backend=backend, pool=pool
    )
    # A collection empty in every initial state (no tweets yet) shows up once a tool fills it.
    grown = find_collections([s.start_state for s in states] + seen)
    known = {c.attribute for c in collections}
    extra = [c for c in grown if c.attribute not in known]
    if extra:
        model = model.model_copy(
            update={
                "collections": collections + extra,
                "tools": [_with_id_params(t, collections + extra) for t in base.tools],
            }
        )
        for c in extra:
            pools.ids[c.name] = list(dict.fromkeys(rid for st in seen for rid in c.ids_in(st)))
    return _settle(model, observations, pools)


def _with_id_params(tool: ToolModel, collections: list[CollectionModel]) -> ToolModel:
    """Id parameters named after a collection (`ticket_id`, `cardId`) take its ids."""
    params = []
    for p in tool.params:
        takes = None
        if is_id_name(p.name):
            wanted = {w for w in words_of(p.name) if len(w) > 1 and not w.isdigit()} - {
                "id",
                "ids",
                "uuid",
                "key",
                "number",
                "code",
            }
            # The collection named exactly so wins over one that merely mentions the word
            # (`member_id`: `members`, not `member_ids_by_name`; `from_account_id`:
            # `accounts`); records over indexes.
            ranked = sorted(
                (
                    (
                        -len(wanted & set(words_of(c.label))),
                        set(words_of(c.label)) != wanted,
                        c.shape == "index",
                        c.attribute,
                    ),
                    c.name,
                )
                for c in collections
                if wanted & (set(words_of(c.name)) | set(words_of(c.attribute)))
            )
            takes = ranked[0][1] if ranked else None
        params.append(p.model_copy(update={"takes": takes}))
    return tool.model_copy(update={"params": params})


def _settle(model: EnvModel, observations: list[Observation], pools: ValuePools) -> EnvModel:
    by_tool: dict[str, list[Observation]] = {}
    for obs in observations:
        by_tool.setdefault(obs.tool, []).append(obs)
    tools, disagreements, per_tool = [], [], {}
    transitions: dict[str, set[tuple[str, str]]] = {}
    for tool in model.tools:
        seen = by_tool.get(tool.name, [])
        successes = [o for o in seen if o.failure is None]
        changed = [o for o in successes if o.changed]
        if changed:
            kind, evidence = "mutate", "probe"
        elif successes and (tool.ast_kind == "query" or len(successes) >= SETTLED_BY):
            kind, evidence = "query", "probe"
        elif successes:
            # Calls worked and changed nothing, too few to overrule an AST that sees a write.
            kind, evidence = "mutate", "ast"
        else:
            # No call worked at all: the AST's word stands, marked unconfirmed, and every
            # stage treats the tool as one that may write (planners try it as a goal,
            # mutants drop it, the audit learns its kind instead of failing on it).
            kind, evidence = tool.ast_kind, "unconfirmed"
        if changed and tool.ast_kind == "query":
            disagreements.append(
                KindDisagreement(
                    tool=tool.name,
                    ast_kind="query",
                    observed_kind="mutate",
                    evidence=f"{len(changed)} of {len(successes)} successful calls changed "
                    f"the state, e.g. {_args_text(changed[0].args)}",
                )
            )
        elif successes and not changed and tool.ast_kind == "mutate":
            disagreements.append(
                KindDisagreement(
                    tool=tool.name,
                    ast_kind="mutate",
                    observed_kind="query",
                    evidence=f"none of {len(successes)} successful calls changed the state; "
                    + ("settled as query" if kind == "query" else "kept as mutate"),
                )
            )
        for obs in changed:
            for coll, a, b in obs.transitions:
                transitions.setdefault(coll, set()).add((a, b))
        params = [_settle_param(p, successes, model.collections, pools) for p in tool.params]
        produces = _produced(successes, model.collections, pools)
        tools.append(
            tool.model_copy(
                update={
                    "kind": kind,
                    "kind_evidence": evidence,
                    "params": params,
                    "produces": produces,
                    "entity": _entity_of(params, produces),
                    "operation": "action"
                    if kind == "mutate" or evidence == "unconfirmed"
                    else None,
                    "examples": _examples(changed if kind == "mutate" else successes),
                }
            )
        )
        per_tool[tool.name] = {
            "calls": len(seen),
            "succeeded": len(successes),
            "changed_state": len(changed),
            "failed_but_changed": sum(1 for o in seen if o.failure is not None and o.changed),
        }
    collections = [
        c.model_copy(
            update={
                "transitions": {
                    a: sorted(b for x, b in transitions.get(c.name, set()) if x == a)
                    for a in sorted({x for x, _ in transitions.get(c.name, set())})
                }
            }
        )
        for c in model.collections
    ]
    return model.model_copy(
        update={
            "tools": tools,
            "collections": collections,
            "disagreements": disagreements,
            "probes": {"calls": len(observations), "tools": per_tool},
        }
    )


MAX_EXAMPLES = 3


def _examples(observations: list[Observation]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for obs in observations:
        if obs.args not in out:
            out.append(obs.args)
        if len(out) == MAX_EXAMPLES:
            break
    return out


def _settle_param(
    param: ParamModel,
    successes: list[Observation],
    collections: list[CollectionModel],
    pools: ValuePools,
) -> ParamModel:
    """An id-named parameter whose successful values were all ids of one collection takes it."""
    if param.takes:
        return param
    used = [o.args[param.name] for o in successes if param.name in o.args]
    if not used or not is_id_name(param.name):
        return param
    for coll in collections:
        ids = {str(v) for v in pools.ids.get(coll.name, [])}
        if ids and all(str(v) in ids for v in used):
            return param.model_copy(update={"takes": coll.name})
    return param


def _ids_in_result(coll: CollectionModel, result: Any) -> list[Any]:
    found: list[Any] = []
    stack = [(None, result, 0)]
    id_keys = {coll.id_field, f"{coll.name}_id", f"{coll.name}Id"}
    while stack:
        key, value, depth = stack.pop()
        if depth > 8:
            continue
        if isinstance(value, dict):
            stack.extend((k, v, depth + 1) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((key, v, depth + 1) for v in value)
        elif key in id_keys and _id_like(value):
            found.append(value)
    return found


def _produced(
    successes: list[Observation], collections: list[CollectionModel], pools: ValuePools
) -> list[str]:
    """Collections whose ids the tool's results show: under an id key, and really theirs
    (an item's `id` 3 is no order's id)."""
    out = []
    for coll in collections:
        ids = {str(v) for v in pools.ids.get(coll.name, [])}
        if any(str(v) in ids for o in successes for v in _ids_in_result(coll, o.result)):
            out.append(coll.name)
    return sorted(out)


def _entity_of(params: list[ParamModel], produces: list[str]) -> str | None:
    takes = [p.takes for p in params if p.takes]
    if takes:
        return takes[0]
    return produces[0] if len(produces) == 1 else None


def _args_text(args: dict[str, Any]) -> str:
    return "(" + ", ".join(f"{k}={v!r}" for k, v in args.items()) + ")"


def _class_text(env: Environment) -> tuple[str, str]:
    """A title from the class name and a description from its docstring."""
    title = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", env.class_name).replace("_", " ").strip()
    try:
        tree = ast.parse(env.code)
    except SyntaxError:
        return title, ""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == env.class_name:
            doc = ast.get_docstring(node) or ""
            return title, doc.split("\n\n")[0].replace("\n", " ").strip()
    return title, ""
