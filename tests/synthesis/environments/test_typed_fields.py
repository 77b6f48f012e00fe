"""Typed fields: a compiled environment refuses an argument that is not in its field's form (a
date and time, an email address, a phone number, an amount of money, a count, an enum value)
with an error naming the argument and the form, changes nothing, and accepts one that is.
SpecModel predicts the same refusals.

Compiled code runs in-process with `exec` (only our own compiler's output is involved, as in
test_workflow_archetypes); one test runs it in the sandbox, where the pipeline runs it.
"""

from __future__ import annotations

import copy
import importlib
import random
from functools import cache

import pytest

from sandboxes import EnvSource, run_episode
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.field_forms import (
    MONEY_CEILING,
    FieldForm,
    argument_error,
    field_form,
    param_forms,
)
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.environments.values import calendar_of
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, ParamSpec, ToolSpec, Topic
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.tasks.planner_worlds import history_state

# Workspace and project environments keep a file tree: their verbs take paths, file text and
# commands, not values of record fields.
ARCHETYPES = sorted(a for a in supported_archetypes() if a not in ("workspace", "project"))
ILL_FORMED = {
    "datetime": ["summit north", "2026-02-30T09:00", "2026-03-02 09:00", "2026-03-02T09:00:00"],
    "email": ["jane.doe.example.com", "jane@", "Jane Doe"],
    "phone": ["555 0100", "+1 555 010 0199"],
    "count": [-1],
    "enum": ["not-a-value"],
}


def _ill_formed(form: FieldForm) -> list:
    if form.kind == "money":
        return [-5.0, -0.01, form.ceiling + 1]
    return ILL_FORMED[form.kind]


def _topic(archetype: str) -> Topic:
    """The archetype's first catalogue topic, with every optional feature on (an SLA's due
    date, an event's start), so every typed field the archetype can have is there."""
    topic = next(t for t in load_catalogue() if t.archetype == archetype)
    module = importlib.import_module(f"synthesis.environments.archetypes.{archetype}")
    features = getattr(module, "FEATURES", None)
    if features is None:
        return topic
    return topic.model_copy(update={"vocabulary": {**topic.vocabulary, "features": list(features)}})


@cache
def _world(archetype: str):
    spec = generate_spec(_topic(archetype))
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    namespace: dict = {}
    exec(compile(env.code, f"<{spec.env_id}>", "exec"), namespace)  # noqa: S102
    state = history_state(env, 0, 8).state
    return spec, env, namespace[spec.class_name], state


def _instance(cls, spec: EnvSpec, state: dict):
    instance = cls()
    for entity in spec.entities:
        setattr(instance, entity.collection, copy.deepcopy(state.get(entity.collection, {})))
    return instance


def _state_of(instance, spec: EnvSpec) -> dict:
    return {e.collection: getattr(instance, e.collection) for e in spec.entities}


def _typed_params(spec: EnvSpec) -> list[tuple[ToolSpec, ParamSpec, FieldForm]]:
    """Every parameter with a form: what `param_forms` gives, and the parameters with an enum
    of their own (checked against it since before field forms)."""
    out = []
    for tool in spec.tools:
        forms = param_forms(tool, spec.entity(tool.entity).fields)
        for p in tool.params:
            if p.name in forms:
                out.append((tool, p, forms[p.name]))
            elif p.enum:
                out.append((tool, p, FieldForm("enum", values=tuple(p.enum))))
    return out


def _well_formed(tool, p, form: FieldForm, spec: EnvSpec, state: dict, rng: random.Random):
    entity = spec.entity(tool.entity)
    if form.kind in ("email", "phone") or (tool.operation == "find" and tool.field):
        field = p.field or tool.field
        return rng.choice([r[field] for r in state[entity.collection].values()])
    if form.kind == "datetime":
        return rng.choice(calendar_of(entity.field(p.field or p.name)))
    if form.kind == "money":
        return rng.choice([1.0, 2.5, 5.0, 12.0])
    if form.kind == "count":
        return rng.choice([1, 2])
    return rng.choice(list(form.values))


def _args(tool: ToolSpec, spec: EnvSpec, state: dict, rng: random.Random) -> dict:
    """Well-typed arguments for every parameter of `tool` (ids of existing records)."""
    args: dict = {}
    for p in tool.params:
        ref = p.ref or (tool.entity if p.name == f"{tool.entity}_id" else None)
        if ref:
            ids = sorted(state[spec.entity(ref).collection])
            if not ids:
                return {}
            args[p.name] = rng.choice(ids)
        elif p.enum:
            args[p.name] = rng.choice(p.enum)
        elif p.type == "integer":
            args[p.name] = 1
        elif p.type == "number":
            args[p.name] = 5.0
        elif p.type == "boolean":
            args[p.name] = rng.random() < 0.5
        else:
            args[p.name] = "Checked and sorted on Friday"
    return args


def _with_guards_held(tool: ToolSpec, spec: EnvSpec, state: dict, args: dict) -> dict:
    """`state` with the records `args` refer to in the status the tool's guards ask of them
    (a review needs a completed booking), so a call tests its arguments, not the history."""
    state = copy.deepcopy(state)
    params = {p.name: p for p in tool.params}
    for pre in tool.preconditions:
        if pre.kind not in ("ref_field_equals", "ref_field_in") or pre.param not in args:
            continue
        target = spec.entity(params[pre.param].ref).collection
        record = state[target][args[pre.param]]
        record[pre.field] = pre.value if pre.kind == "ref_field_equals" else pre.values[0]
    return state


def _accepted(cls, tool, p, form, spec, state, rng) -> tuple[dict, dict] | None:
    """Arguments with a well-formed `p`, and a state, on which the tool accepts them (its
    other guards hold); None when none of the tries passes."""
    forms = param_forms(tool, spec.entity(tool.entity).fields)
    for _ in range(80):
        args = _args(tool, spec, state, rng)
        if not args and tool.params:
            continue
        args[p.name] = _well_formed(tool, p, form, spec, state, rng)
        for other in tool.params:  # the other typed arguments well formed too
            if other.name != p.name and other.name in forms:
                args[other.name] = _well_formed(tool, other, forms[other.name], spec, state, rng)
        held = _with_guards_held(tool, spec, state, args)
        if getattr(_instance(cls, spec, held), tool.name)(**args)["success"]:
            return args, held
    return None


@pytest.mark.parametrize("archetype", ARCHETYPES)
def test_typed_arguments_in_form_are_accepted_and_ill_formed_ones_refused_changing_nothing(
    archetype,
):
    spec, env, cls, state = _world(archetype)
    model = from_spec(spec, env)
    rng = random.Random(7)
    typed = _typed_params(spec)
    kinds = {form.kind for _, _, form in typed}
    # Every archetype has people found by email, and enum values it stores.
    assert {"email", "enum"} <= kinds, kinds
    for tool, p, form in typed:
        accepted = _accepted(cls, tool, p, form, spec, state, rng)
        assert accepted is not None, f"{tool.name} accepted no well-formed {p.name}"
        args, held = accepted
        for bad in _ill_formed(form):
            instance = _instance(cls, spec, held)
            result = getattr(instance, tool.name)(**{**args, p.name: bad})
            where = (tool.name, p.name, bad, result)
            assert result["success"] is False, where
            assert result["error"] == f"{p.name} must be {form.expected()}", where
            assert _state_of(instance, spec) == held, where
            predicted = SpecModel(model, held).call(tool.name, {**args, p.name: bad})
            assert predicted == result, where


def test_the_archetypes_between_them_check_every_form_their_fields_have():
    kinds = {form.kind for a in ARCHETYPES for _, _, form in _typed_params(_world(a)[0])}
    # Phone numbers are stored but no archetype's tool takes one (see the hand-made spec).
    assert {"datetime", "email", "money", "count", "enum"} <= kinds


def test_a_money_field_is_bounded_by_its_topic_range_with_headroom():
    price = FieldSpec(name="price", type="float", generator="price:2:45")
    assert field_form(price) == FieldForm("money", high=90.0)
    table = FieldSpec(
        name="price", type="float", generator='item_price:name:{"A": [7, 15], "B": [8, 60]}'
    )
    assert field_form(table).high == 120.0
    amount = FieldSpec(name="amount", type="float")
    assert field_form(amount).ceiling == MONEY_CEILING
    assert field_form(FieldSpec(name="rating", type="float", generator="decimal:2.5:5:1")) is None
    assert field_form(price).admits(0) and field_form(price).admits(90.0)
    assert not field_form(price).admits(90.01) and not field_form(price).admits(float("nan"))
    assert not field_form(price).admits(True)


# --------------------------------------------------------------------------- every form


def _people_spec() -> EnvSpec:
    """One entity with a field of every form, a lookup by phone and tools writing each."""
    fields = [
        FieldSpec(name="name", type="str", generator="person_name"),
        FieldSpec(name="email", type="str", generator="email", unique=True),
        FieldSpec(name="phone", type="str", generator="phone"),
        FieldSpec(name="joined", type="datetime"),
        FieldSpec(name="credit", type="float", generator="price:5:50"),
        FieldSpec(name="visits", type="int", generator="int:0:9"),
        FieldSpec(name="tier", type="enum", values=["silver", "gold"]),
        FieldSpec(name="note", type="str"),
    ]
    person = EntitySpec(
        name="person",
        collection="people",
        id_prefix="PRS",
        label="person",
        lookup_field="email",
        fields=fields,
    )

    def param(name: str, kind: str, required: bool = True) -> ParamSpec:
        return ParamSpec(name=name, type=kind, field=name, required=required)

    create = ToolSpec(
        name="add_person",
        kind="mutate",
        operation="create",
        entity="person",
        description="Add a person.",
        params=[
            param("name", "string"),
            param("email", "string"),
            param("phone", "string", required=False),
            param("joined", "string"),
            param("credit", "number"),
            param("visits", "integer", required=False),
            param("tier", "string"),  # no enum of its own: the field's values apply
            param("note", "string", required=False),
        ],
    )
    own_id = ParamSpec(name="person_id", type="string")
    update = ToolSpec(
        name="change_phone",
        kind="mutate",
        operation="update",
        entity="person",
        description="Change a person's phone number.",
        field="phone",
        params=[own_id, param("phone", "string")],
    )
    find = ToolSpec(
        name="find_person_by_phone",
        kind="query",
        operation="find",
        entity="person",
        description="Find a person by phone number.",
        field="phone",
        params=[ParamSpec(name="phone", type="string")],
    )
    return EnvSpec(
        env_id="people-test",
        topic_id="people",
        archetype="test",
        class_name="PeopleEnv",
        title="People",
        description="A list of people.",
        entities=[person],
        tools=[create, update, find],
    )


GOOD_PERSON = {
    "name": "Ada Lee",
    "email": "ada.lee12@example.com",
    "phone": "+1-555-014-2368",
    "joined": "2026-03-04T10:00",
    "credit": 12.5,
    "visits": 0,
    "tier": "gold",
    "note": "Prefers mornings",
}


def test_every_form_is_checked_for_required_and_optional_arguments_alike():
    spec = _people_spec()
    namespace: dict = {}
    exec(compile(compile_spec(spec), "<people>", "exec"), namespace)  # noqa: S102
    env = namespace["PeopleEnv"]()
    added = env.add_person(**GOOD_PERSON)
    assert added["success"], added
    assert env.add_person(**{**GOOD_PERSON, "phone": None, "visits": None})["success"]
    assert env.find_person_by_phone(phone=" +1-555-014-2368 ")["data"]["name"] == "Ada Lee"
    assert env.change_phone(person_id="PRS-0001", phone="+1-555-014-9999")["success"]
    before = copy.deepcopy(env.people)
    refusals = {
        ("add_person", "joined"): "summit north",
        ("add_person", "email"): "ada.lee.example.com",
        ("add_person", "phone"): "555-0100",
        ("add_person", "credit"): -1.0,
        ("add_person", "visits"): -2,
        ("add_person", "tier"): "platinum",
        ("change_phone", "phone"): "call me",
        ("find_person_by_phone", "phone"): "Ada Lee",
    }
    model = from_spec(spec)
    for (tool, name), bad in refusals.items():
        args = {**GOOD_PERSON} if tool == "add_person" else {"person_id": "PRS-0001"}
        if tool == "find_person_by_phone":
            args = {}
        result = getattr(env, tool)(**{**args, name: bad})
        assert result["success"] is False and result["error"].startswith(f"{name} must be ")
        assert env.people == before, (tool, name)
        tool_model = model.tool(tool)
        fields = model.entity("person").fields
        assert argument_error(tool_model, fields, {**args, name: bad}) == result["error"]
    # Text a person writes has no form: any words go.
    assert env.add_person(**{**GOOD_PERSON, "note": "granite north"})["success"]


def test_a_money_argument_over_the_topic_range_is_refused_with_the_range_in_the_message():
    spec = _people_spec()
    namespace: dict = {}
    exec(compile(compile_spec(spec), "<people>", "exec"), namespace)  # noqa: S102
    env = namespace["PeopleEnv"]()
    result = env.add_person(**{**GOOD_PERSON, "credit": 450.0})  # a slipped digit of 45.0
    assert result == {
        "success": False,
        "error": "credit must be an amount of money from 0 to 100",
    }
    assert env.add_person(**{**GOOD_PERSON, "credit": 100.0})["success"]


def test_the_sandboxed_environment_refuses_a_placeholder_start_and_takes_a_real_one():
    spec, env, _, state = _world("scheduling")
    tool = next(t for t in spec.tools if t.operation == "update" and t.field == "start")
    entity = spec.entity(tool.entity)
    records = sorted(state[entity.collection].items())
    rid, record = next((rid, r) for rid, r in records if r["status"] == "scheduled")
    moments = [m for m in calendar_of(entity.field("start")) if m != record["start"]]
    taken = {r["start"] for r in state[entity.collection].values()}
    moment = next(m for m in moments if m not in taken)
    id_param = f"{entity.name}_id"
    episode = run_episode(
        EnvSource(code=env.code, class_name=env.class_name),
        state,
        [
            (tool.name, {id_param: rid, "start": "summit north"}),
            (tool.name, {id_param: rid, "start": moment}),
        ],
    )
    assert episode.status == "ok", episode.reason
    refused, moved = (r.result for r in episode.results)
    assert refused == {
        "success": False,
        "error": "start must be a date and time written like 2026-03-02T09:00",
    }
    assert moved["success"] and moved["data"]["start"] == moment
    assert episode.final_state[entity.collection][rid]["start"] == moment
