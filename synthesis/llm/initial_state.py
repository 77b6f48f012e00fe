"""The `initial_state` stage: a model writes seed records for an environment (EnvScaler's
ScenGenerator).

The model is shown the environment's collections (its EnvModel: id field and prefix, fields,
statuses, references) and one state the build already made, and answers {"state": {...}}.
The state is accepted only when
- it is a JSON object holding exactly the environment's collections, each in its shape;
- every record has an id, ids are unique within their collection (a keyed record's own id
  field, when it has one, is its key), and (compiled environments) every reference names a
  record of the state;
- loading it in the sandbox and dumping it at once gives it back unchanged (the round trip
  synthesis.environments.foreign_states checks foreign states with);
- the programmatic audit's probes (quality.audit) pass on it.
Loading runs the environment's code, so the check runs in the sandbox, never here.

An accepted state is `<env_id>-llm-<n>` and goes after the build's own states; a rejected
one (after its repairs) is never cached and is recorded as `initial_state: <why>`, as is a
stage that could not run (no answer, a spent budget, the deadline): never a traceback.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import CollectionModel, EnvModel
from synthesis.hashing import derive_seed
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Environment, InitialState

STAGE = "initial_state"
GENERATOR = "llm:initial_state"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"state": {"type": "object"}},
    "required": ["state"],
    "additionalProperties": False,
}
PROMPT = (
    "You write the starting records of a business's software environment, which an AI "
    "assistant will then operate. You are given its record collections (where each lives, "
    "its id field and id form, its fields and allowed values, which fields refer to records "
    "of another collection) and an example of a valid state. Write a new, different and "
    "realistic state: the same collections and record shapes as the example, new names and "
    "values, every id unique within its collection and in the example's form, every "
    "reference naming a record you wrote, statuses from the allowed values. Answer with a "
    'JSON object {"state": {...}} and nothing else.'
)
# The example shown is cut to this many records per collection (prompts stay small).
EXAMPLE_RECORDS = 4


@dataclass
class SeedStates:
    """The accepted states, why each other one was not, and every ledger row it took."""

    states: list[InitialState] = field(default_factory=list)
    rejections: list[str] = field(default_factory=list)
    attempts: list[LLMCall] = field(default_factory=list)


# --------------------------------------------------------------------------- the checks


def _ids(coll: CollectionModel, records: Any) -> tuple[list[Any], str | None]:
    """The ids of a collection's records as the records state them (a keyed record without
    an id field: its key), or why they cannot be read."""
    if coll.shape == "list":
        if not isinstance(records, list) or not all(isinstance(r, dict) for r in records):
            return [], f"shape: {coll.attribute} must be a list of records"
        missing = [i for i, r in enumerate(records) if coll.id_field not in r]
        if missing:
            return [], f"ids: {coll.attribute} records {missing[:3]} have no {coll.id_field!r}"
        return [r[coll.id_field] for r in records], None
    if not isinstance(records, dict):
        return [], f"shape: {coll.attribute} must be an object"
    if coll.shape == "index":
        return list(records.values()), None
    bad = [k for k, r in records.items() if not isinstance(r, dict)]
    if bad:
        return [], f"shape: {coll.attribute}[{bad[0]!r}] is not a record"
    return [r.get(coll.id_field, k) for k, r in records.items()], None


def _key_fault(coll: CollectionModel, records: Any) -> str | None:
    """A keyed record whose own id is not its key (lookups by key would miss it)."""
    if coll.shape != "keyed":
        return None
    for key, record in records.items():
        own = record.get(coll.id_field, key)
        if str(own) != str(key):
            return f"ids: {coll.attribute}[{key!r}] says its {coll.id_field} is {own!r}"
    return None


def records_fault(
    model: EnvModel, state: dict[str, Any], example: dict[str, Any] | None = None
) -> str | None:
    """Why `state` is not a set of records of the environment's collections, or None.
    `example`: a state of the environment, whose other attributes (a foreign class's flags
    and settings) a state must have too."""
    attributes = {c.attribute for c in model.collections} | set(example or {})
    unknown = sorted(set(state) - attributes)
    if unknown:
        return f"collections: unknown collection {unknown[0]!r}"
    missing = sorted(attributes - set(state))
    if missing:
        return f"collections: missing collection {missing[0]!r}"
    ids: dict[str, set[str]] = {}
    for coll in model.collections:
        found, fault = _ids(coll, state[coll.attribute])
        if fault:
            return fault
        seen = [str(i) for i in found]
        twice = sorted({i for i in seen if seen.count(i) > 1})
        if twice:
            return f"ids: duplicate {coll.attribute} id {twice[0]!r}"
        fault = _key_fault(coll, state[coll.attribute])
        if fault:
            return fault
        ids[coll.name] = set(seen)
    return _reference_fault(model, state, ids) if model.exact else None


def _reference_fault(
    model: EnvModel, state: dict[str, Any], ids: dict[str, set[str]]
) -> str | None:
    """A reference field naming no record of the state (compiled models know references)."""
    for coll in model.collections:
        refs = [f for f in coll.fields if f.type == "ref" and f.ref in ids]
        for record in coll.records_in(state):
            for f in refs:
                value = record.get(f.name)
                if value is not None and str(value) not in ids[f.ref]:
                    return f"references: {coll.attribute} {f.name} {value!r} names no {f.ref}"
    return None


def sandbox_fault(
    env: Environment, model: EnvModel, state: dict[str, Any], *, seed: int, backend: str
) -> str | None:
    """Why `state` fails the load → dump round trip or the audit's probes, or None."""
    from quality.audit import audit_environment
    from synthesis.environments.foreign_states import ForeignStateError, load_and_dump

    try:
        dump = load_and_dump(env, copy.deepcopy(state), backend=backend)
    except ForeignStateError as exc:
        return f"round trip: the environment does not load it ({exc})"
    changed = sorted(k for k in state if dump.get(k) != state[k])
    if changed:
        return f"round trip: {changed[0]} is not what was loaded when dumped"
    report = audit_environment(env, [state], seed=seed, backend=backend, model=model)
    if not report.passed:
        return f"audit: probes failed (score {report.score}): {'; '.join(report.findings()[:2])}"
    return None


def state_fault(
    env: Environment,
    model: EnvModel,
    value: dict[str, Any],
    *,
    seed: int,
    backend: str,
    example: dict[str, Any] | None = None,
) -> str | None:
    """The stage's `accept`: cheap checks first, then the sandbox's."""
    state = value["state"]
    fault = records_fault(model, state, example)
    if fault is None:
        try:
            fault = sandbox_fault(env, model, state, seed=seed, backend=backend)
        except Exception as exc:  # noqa: BLE001 - a sandbox failure rejects, never escapes
            fault = f"sandbox: {type(exc).__name__}: {exc}"
    return fault


# --------------------------------------------------------------------------- the prompt


def _example(model: EnvModel, state: dict[str, Any]) -> dict[str, Any]:
    """`state` cut to a few records per collection, minus records whose references the cut
    left dangling: the example must pass the checks it illustrates. Attributes that hold no
    records (a foreign class's flags) are shown as they are."""
    attributes = {c.attribute for c in model.collections}
    out: dict[str, Any] = {k: v for k, v in state.items() if k not in attributes}
    for coll in model.collections:
        records = state.get(coll.attribute)
        if isinstance(records, dict):
            out[coll.attribute] = dict(list(records.items())[:EXAMPLE_RECORDS])
        elif isinstance(records, list):
            out[coll.attribute] = records[:EXAMPLE_RECORDS]
    # Each pass can only orphan records one reference further down: bounded by the chain.
    for _ in range(len(model.collections)):
        if not model.exact or _reference_fault(model, out, _all_ids(model, out)) is None:
            break
        out = _without_dangling(model, out)
    return out


def _all_ids(model: EnvModel, state: dict[str, Any]) -> dict[str, set[str]]:
    return {c.name: {str(i) for i in c.ids_in(state)} for c in model.collections}


def _without_dangling(model: EnvModel, state: dict[str, Any]) -> dict[str, Any]:
    """`state` without the keyed records whose references name no record of it."""
    ids = _all_ids(model, state)
    out = dict(state)
    for coll in model.collections:
        refs = [f for f in coll.fields if f.type == "ref" and f.ref in ids]
        records = state.get(coll.attribute)
        if not refs or not isinstance(records, dict):
            continue
        out[coll.attribute] = {
            k: r
            for k, r in records.items()
            if all(r.get(f.name) is None or str(r.get(f.name)) in ids[f.ref] for f in refs)
        }
    return out


def _collection_lines(model: EnvModel) -> list[str]:
    lines = []
    for c in model.collections:
        fields = ", ".join(
            f.name
            + (f" -> {f.ref}" if f.ref else "")
            + (f" in {f.values}" if f.values else f" ({f.type})")
            for f in c.fields
        )
        shape = {"keyed": "object of id -> record", "list": "list of records"}.get(
            c.shape, "object of name -> id"
        )
        prefix = f", ids like {c.id_prefix}-0001" if c.id_prefix else ""
        lines.append(
            f"- {c.attribute} ({c.name}; {shape}; id field {c.id_field}{prefix}): "
            f"{fields or '(fields as in the example)'}"
        )
    return lines


def request_messages(model: EnvModel, example: dict[str, Any], n: int) -> list[dict[str, Any]]:
    lines = [
        f"Environment: {model.title}",
        f"Description: {model.description}",
        "Collections:",
        *_collection_lines(model),
        f"Example state: {json.dumps(_example(model, example), sort_keys=True)}",
        f"Write state number {n}.",
    ]
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


# --------------------------------------------------------------------------- the stage


def write_initial_states(
    client: LLMClient,
    env: Environment,
    model: EnvModel,
    example: InitialState,
    *,
    count: int,
    seed: int,
    backend: str = "auto",
) -> SeedStates:
    """Up to `count` states written by the model, each accepted only by every check."""
    out = SeedStates()
    shown = example.dump if example.dump is not None else (example.state or {})
    if not model.collections:
        # Code without a spec: its collections as the example shows them (a model read off
        # the AST alone has none).
        from synthesis.environments.inference import find_collections

        model = model.model_copy(update={"collections": find_collections([shown])})

    def accept(value: dict[str, Any], state_seed: int) -> str | None:
        return state_fault(env, model, value, seed=state_seed, backend=backend, example=shown)

    for n in range(1, count + 1):
        state_seed = derive_seed(STAGE, env.env_id, seed, n)
        try:
            answer = ask_structured(
                client,
                request_messages(model, shown, n),
                stage=STAGE,
                artifact_id=env.env_id,
                schema=SCHEMA,
                seed=state_seed,
                accept=lambda value, s=state_seed: accept(value, s),
            )
        except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
            out.attempts += exc.attempts
            out.rejections.append(f"{STAGE}: {exc.reason}")
            continue
        out.attempts += answer.attempts
        out.states.append(_initial_state(env, answer.value["state"], n, state_seed))
    return out


def _initial_state(env: Environment, state: dict[str, Any], n: int, seed: int) -> InitialState:
    provenance: dict[str, Any] = {"generator": GENERATOR}
    if env.spec is not None:
        # Compiled states list their decoys (similar records) for the planner, as the
        # build's own states do.
        from synthesis.environments.states import find_decoys

        provenance["decoys"] = find_decoys(env.spec, state)
    return InitialState(
        state_id=f"{env.env_id}-llm-{n}",
        env_id=env.env_id,
        seed=seed,
        state=state,
        provenance=provenance,
    )
