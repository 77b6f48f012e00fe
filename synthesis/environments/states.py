"""Initial states: seeded base records, then a seeded history of real tool calls in the sandbox.

Records of entities that no tool creates (customers, products, slots) are generated from
data; records that tools create (orders, bookings) come from replaying plausible past calls
through the environment itself, so every initial state obeys the environment's own rules
(stock, slot occupancy, status machines) by construction.
"""

from __future__ import annotations

import random
import re
from typing import Any

from faker import Faker

from synthesis.hashing import derive_seed, short_id
from synthesis.models import EntitySpec, Environment, EnvSpec, FieldSpec, InitialState, ToolSpec

# A fixed calendar origin: initial states must not depend on the day they were built.
_CALENDAR_START = (2026, 3, 2)
_SLOT_HOURS = [9, 10, 11, 13, 14, 15, 16]


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


class _ValueMaker:
    """Seeded field values; one instance per state so uniqueness is tracked per state."""

    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.fake = Faker("en_US")
        self.fake.seed_instance(seed)
        self.used: dict[tuple[str, str], set] = {}
        self.slot_counter = 0

    def value(
        self, entity: EntitySpec, f: FieldSpec, record: dict, state: dict, spec: EnvSpec
    ) -> Any:
        for _ in range(50):
            v = self._draw(entity, f, record, state, spec)
            if not f.unique:
                return v
            seen = self.used.setdefault((entity.name, f.name), set())
            if v not in seen:
                seen.add(v)
                return v
        raise ValueError(f"cannot draw unique values for {entity.name}.{f.name}")

    def _draw(
        self, entity: EntitySpec, f: FieldSpec, record: dict, state: dict, spec: EnvSpec
    ) -> Any:
        gen = f.generator or ""
        if f.type == "ref":
            target = spec.entity(f.ref)
            return self.rng.choice(sorted(state[target.collection]))
        # ---- generators of the ledger / inventory / catalogue_search archetypes (begin) ----
        # (to move into the generator registry of synthesis/environments/values.py)
        drawn = self._archetype_value(gen, f, record)
        if drawn is not None:
            return drawn
        # ---- (end) ----
        if f.type == "enum":
            if entity.status_field == f.name and entity.initial_status:
                return entity.initial_status
            return self.rng.choice(f.values)
        if gen == "choice":
            return self.rng.choice(f.values)
        if gen == "person_name":
            return self.fake.name()
        if gen == "email":
            local = re.sub(r"[^a-z]+", ".", str(record.get("name", "user")).lower()).strip(".")
            return f"{local}{self.rng.randint(1, 99)}@{self.fake.free_email_domain()}"
        if gen == "phone":
            return self.fake.numerify("+1-###-###-####")
        if gen == "city":
            return self.fake.city()
        if gen.startswith("price:"):
            low, high = (float(x) for x in gen.split(":")[1:])
            return round(self.rng.uniform(low, high), 2)
        if gen == "stock":
            # Some items out of stock, so "not enough stock" is a state the agent can meet.
            return self.rng.choice([0, 1, 2, 3, 5, 8, 12, 20])
        if gen == "quantity":
            return self.rng.randint(1, 3)
        if gen == "slot_start":
            day = self.slot_counter // len(_SLOT_HOURS)
            hour = _SLOT_HOURS[self.slot_counter % len(_SLOT_HOURS)]
            self.slot_counter += 1
            y, m, d = _CALENDAR_START
            return f"{y:04d}-{m:02d}-{d + day:02d}T{hour:02d}:00"
        # ---- workflow archetypes (ticketing, scheduling, approvals, messaging) ----
        if gen == "hours_free":  # an agent's free hours: some have none left
            return self.rng.choice([0, 1, 2, 4, 6, 8])
        if gen == "capacity":  # seats in a room: small rooms make capacity matter
            return self.rng.choice([2, 4, 6, 8, 12, 20])
        if gen.startswith("one_of:"):  # numbers from a fixed ladder (approval limits)
            return self.rng.choice([float(x) for x in gen.split(":", 1)[1].split(",")])
        if gen == "handle":  # a chat handle from the person's name
            base = re.sub(r"[^a-z]+", "", str(record.get("name", "user")).lower())[:12]
            return f"@{base or 'user'}{self.rng.randint(1, 99)}"
        # ---- end of workflow archetypes ----
        if f.type == "int":
            return self.rng.randint(0, 100)
        if f.type == "float":
            return round(self.rng.uniform(0, 100), 2)
        if f.type == "bool":
            return self.rng.random() < 0.5
        if f.type == "datetime":
            y, m, d = _CALENDAR_START
            day, hour = d + self.rng.randint(0, 20), self.rng.choice(_SLOT_HOURS)
            return f"{y:04d}-{m:02d}-{day:02d}T{hour:02d}:00"
        return self.fake.word()

    def _archetype_value(self, gen: str, f: FieldSpec, record: dict) -> Any:
        """Values of the generators `by:<field>` (follows another field through `mapping`: a
        product's category and price fit its name), `int:lo:hi`, `decimal:lo:hi:digits`,
        `steps:lo:hi:step` (round amounts such as limits), `code:PREFIX:digits` (account
        numbers, SKUs), `weighted:value=weight:...` (a realistic mix of statuses) and `zero`;
        None for any other generator."""
        kind, _, rest = gen.partition(":")
        args = rest.split(":") if rest else []
        if kind == "by" and f.mapping:
            key = str(record.get(args[0]))
            if key in f.mapping:
                return f.mapping[key]
            return self.rng.choice(sorted(f.mapping.values(), key=str))
        if kind == "int":
            return self.rng.randint(int(args[0]), int(args[1]))
        if kind == "decimal":
            return round(self.rng.uniform(float(args[0]), float(args[1])), int(args[2]))
        if kind == "steps":
            value = self.rng.randrange(int(args[0]), int(args[1]) + 1, int(args[2]))
            return float(value) if f.type == "float" else value
        if kind == "code":
            return f"{args[0]}-{self.rng.randint(10 ** (int(args[1]) - 1), 10 ** int(args[1]) - 1)}"
        if kind == "weighted":
            pairs = [a.rsplit("=", 1) for a in args]
            return self.rng.choices([v for v, _ in pairs], weights=[float(w) for _, w in pairs])[0]
        if kind == "zero":
            return 0.0 if f.type == "float" else 0
        return None


def base_state(spec: EnvSpec, seed: int, records_per_entity: int) -> dict[str, dict]:
    """Records of every entity that no tool creates; tool-created collections start empty."""
    maker = _ValueMaker(seed)
    created = _created_by_tools(spec)
    state: dict[str, dict] = {e.collection: {} for e in spec.entities}
    for entity in _entity_order(spec):
        if entity.name in created:
            continue
        # Entities that hang off another (slots of a provider) get more records.
        has_ref = any(f.type == "ref" for f in entity.fields)
        count = records_per_entity * (2 if has_ref else 1)
        unique_choices = [f for f in entity.fields if f.unique and f.generator == "choice"]
        if unique_choices:
            count = min(count, min(len(f.values) for f in unique_choices))
        for n in range(1, count + 1):
            record: dict[str, Any] = {"id": _record_id(entity, n)}
            for f in entity.fields:
                record[f.name] = maker.value(entity, f, record, state, spec)
            state[entity.collection][record["id"]] = record
    return state


def _param_value(
    tool: ToolSpec, param, spec: EnvSpec, state: dict, rng: random.Random, taken: set[str]
) -> Any:
    if param.ref:
        target = spec.entity(param.ref)
        candidates = sorted(state[target.collection])
        for pre in tool.preconditions:
            if pre.kind == "ref_field_equals" and pre.param == param.name:
                candidates = [
                    c
                    for c in candidates
                    if state[target.collection][c].get(pre.field) == pre.value and c not in taken
                ]
        if not candidates:
            return None
        choice = rng.choice(candidates)
        taken.add(choice)
        return choice
    if param.enum:
        return rng.choice(param.enum)
    if param.type == "integer":  # quantities and counts: small, so stock usually covers them
        return rng.randint(1, 3)
    if param.type == "number":
        return round(rng.uniform(1, 50), 2)
    if param.type == "boolean":
        return rng.random() < 0.5
    return f"value-{rng.randint(1, 999)}"


def plan_history_creates(
    spec: EnvSpec, state: dict, rng: random.Random, per_tool: int
) -> list[tuple[str, dict]]:
    calls = []
    for tool in (t for t in spec.tools if t.operation == "create"):
        taken: set[str] = set()
        for _ in range(per_tool):
            args = {}
            for p in tool.params:
                value = _param_value(tool, p, spec, state, rng, taken)
                if value is None and p.required:
                    break
                if value is not None:
                    args[p.name] = value
            else:
                calls.append((tool.name, args))
    return calls


def plan_history_transitions(
    spec: EnvSpec, created: list[dict], entity_of: list[str], rng: random.Random
) -> list[tuple[str, dict]]:
    """A random walk over each created record's status machine (0–3 steps)."""
    calls = []
    for record, entity_name in zip(created, entity_of, strict=True):
        entity = spec.entity(entity_name)
        if not entity.status_field:
            continue
        status = record.get(entity.status_field)
        for _ in range(rng.randint(0, 3)):
            options = [
                t
                for t in spec.tools
                if t.operation == "transition"
                and t.entity == entity_name
                and any(status in p.values for p in t.preconditions if p.kind == "status_in")
            ]
            if not options:
                break
            # The first listed next status is the usual path (paid before cancelled): most
            # records in a real history move forward, a few take the side exits.
            usual = entity.transitions.get(status, [None])[0]
            forward = [t for t in options if t.target_status == usual]
            tool = forward[0] if forward and rng.random() < 0.8 else rng.choice(options)
            calls.append((tool.name, {f"{entity_name}_id": record["id"]}))
            status = tool.target_status
    return calls


def build_initial_state(
    env: Environment, *, seed: int, index: int, records_per_entity: int, backend: str = "auto"
) -> InitialState:
    """Initial state `index` of an environment: a pure function of (env, seed, index).

    The history calls run in the sandbox: the environment code is untrusted.
    """
    from sandboxes import EnvSource, open_session  # the engine's only door to generated code

    spec = env.spec
    if spec is None:
        raise ValueError(f"environment {env.env_id} has no spec to generate states from")
    if spec.kind == "workspace":
        from synthesis.environments.workspace_tree import build_workspace_state

        return build_workspace_state(
            env, seed=seed, index=index, records_per_entity=records_per_entity, backend=backend
        )
    state_seed = derive_seed("initial_state", env.env_id, seed, index)
    rng = random.Random(state_seed)
    state = base_state(spec, state_seed, records_per_entity)
    creates = plan_history_creates(spec, state, rng, per_tool=max(2, records_per_entity // 2 + 1))
    with open_session(
        EnvSource(code=env.code, class_name=env.class_name), state, backend=backend
    ) as session:
        results = session.call_batch(creates)
        created, entity_of = [], []
        for (tool_name, _), result in zip(creates, results, strict=True):
            value = result.result if result.ok else None
            if isinstance(value, dict) and value.get("success"):
                created.append(value["data"])
                entity_of.append(spec.tool(tool_name).entity)
        transitions = plan_history_transitions(spec, created, entity_of, rng)
        if transitions:
            session.call_batch(transitions)
        final = session.final_state()
        if session.status != "ok":
            raise RuntimeError(f"history replay of {env.env_id} failed: {session.reason}")
    state = {e.collection: final.get(e.collection, {}) for e in spec.entities}
    return InitialState(
        state_id=f"{env.env_id}-s{index}-{short_id(env.env_id, seed, index, state, length=6)}",
        env_id=env.env_id,
        seed=state_seed,
        state=state,
    )
