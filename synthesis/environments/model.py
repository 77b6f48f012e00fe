"""The environment model: what every stage after `environments` knows about an environment.

Tools (schema, kind and how the kind is known, which parameters take which record ids, which
collections a tool's results reveal) and record collections (where they live in the state,
their id and lookup fields, status fields and transitions). A compiled environment's model is
read off its EnvSpec exactly (`from_spec`); code without a spec gets an inferred model
(synthesis.environments.inference: AST analysis plus probing in the sandbox). Planner, audit,
checks and rollouts read this model, never the spec, so every source meets them the same way.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_serializer

from synthesis.models import Effect, Environment, EnvSpec, FieldSpec, Precondition

ModelSource = Literal["spec", "inferred"]
# How a tool's kind is known: declared by the spec (and cross-checked by the analysis), seen in
# probes (a successful call changed the state, or calls succeeded without changing it), from
# the AST alone (it sees a write no probe confirmed), or not at all ("unconfirmed": no call
# worked, so it is taken to write, the safe side).
KindEvidence = Literal["spec", "probe", "ast", "unconfirmed"]
Operation = Literal[
    "list",
    "get",
    "find",
    "create",
    "transition",
    "update",
    "delete",
    "action",
    "search",
    "aggregate",
    "compare",
]
CollectionShape = Literal["keyed", "list", "index"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")

    # Fields the search/aggregate tools added are left out while unset, so the model of an
    # environment that does not use them keeps its bytes.
    _omit_when_none: ClassVar[tuple[str, ...]] = ()

    @model_serializer(mode="wrap")
    def _serialize(self, handler: Any) -> Any:
        data = handler(self)
        for name in self._omit_when_none:
            if isinstance(data, dict) and data.get(name) is None:
                data.pop(name, None)
        return data


class ParamModel(_Model):
    _omit_when_none = ("role",)

    name: str
    type: str | None = Field(default=None, description="JSON type: string, integer, ...")
    description: str = ""
    required: bool = True
    enum: list[Any] | None = None
    takes: str | None = Field(default=None, description="collection whose record id it takes")
    field: str | None = Field(default=None, description="record field it sets or filters")
    minimum: float | None = None
    role: str | None = Field(
        default=None,
        description="search/aggregate tools: eq, min, max, contains, sort_by, order, limit, "
        "function (synthesis.models.ParamSpec.role)",
    )


class ToolModel(_Model):
    _omit_when_none = ("aggregate", "fixed")

    name: str
    description: str = ""
    schema_: dict[str, Any] = Field(alias="schema", description="OpenAI function definition")
    kind: Literal["query", "mutate"]
    kind_evidence: KindEvidence
    ast_kind: Literal["query", "mutate"]
    operation: Operation | None = None
    entity: str | None = Field(default=None, description="the collection the tool acts on")
    params: list[ParamModel] = Field(default_factory=list)
    produces: list[str] = Field(
        default_factory=list, description="collections whose ids appear in the tool's results"
    )
    field: str | None = None
    target_status: str | None = None
    # Known exactly only for compiled environments; an inferred model leaves them empty and
    # the planner learns what a guard refuses by calling the tool in the sandbox.
    preconditions: list[Precondition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    derived: dict[str, list[str]] = Field(default_factory=dict)
    aggregate: str | None = None
    fixed: dict[str, Any] | None = None
    reads: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)
    examples: list[dict[str, Any]] = Field(
        default_factory=list,
        description="arguments of calls that worked while probing (for a mutation: changed "
        "the state), a planner's first guesses",
    )

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def id_params(self) -> dict[str, str]:
        """Parameter name -> collection, for every parameter that takes a record id."""
        return {p.name: p.takes for p in self.params if p.takes}

    def param(self, name: str) -> ParamModel | None:
        return next((p for p in self.params if p.name == name), None)


class CollectionModel(_Model):
    """A collection of records in the state, and how people name its records."""

    name: str = Field(description="singular name, e.g. 'order'")
    attribute: str = Field(description="the top-level state attribute holding the records")
    shape: CollectionShape = Field(
        default="keyed",
        description="keyed: {id: record}; list: [record with an id field]; "
        "index: {lookup value: id}, e.g. a user name -> user id map",
    )
    id_field: str = "id"
    id_prefix: str | None = None
    label: str
    fields: list[FieldSpec] = Field(default_factory=list)
    lookup_field: str | None = None
    lookup_fields: list[str] = Field(default_factory=list)
    status_field: str | None = None
    statuses: list[str] = Field(default_factory=list)
    initial_status: str | None = None
    transitions: dict[str, list[str]] = Field(default_factory=dict)

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"collection {self.name!r} has no field {name!r}")

    # The planner's vocabulary is the spec's: an entity's collection is its attribute.
    @property
    def collection(self) -> str:
        return self.attribute

    def ids_in(self, state: dict[str, Any]) -> list[Any]:
        """The ids of this collection's records in `state`."""
        records = state.get(self.attribute)
        if self.shape == "keyed" and isinstance(records, dict):
            return list(records)
        if self.shape == "list" and isinstance(records, list):
            return [r[self.id_field] for r in records if isinstance(r, dict) and self.id_field in r]
        if self.shape == "index" and isinstance(records, dict):
            return list(records.values())
        return []

    def records_in(self, state: dict[str, Any]) -> list[dict[str, Any]]:
        """The records in `state` (an index's entries as {"name": key, "id": value})."""
        records = state.get(self.attribute)
        if self.shape == "keyed" and isinstance(records, dict):
            return [r for r in records.values() if isinstance(r, dict)]
        if self.shape == "list" and isinstance(records, list):
            return [r for r in records if isinstance(r, dict)]
        if self.shape == "index" and isinstance(records, dict):
            return [{"name": k, "id": v} for k, v in records.items()]
        return []


class KindDisagreement(_Model):
    """A tool whose AST label differs from what its calls did to the state."""

    tool: str
    ast_kind: Literal["query", "mutate"]
    observed_kind: Literal["query", "mutate"]
    evidence: str


class EnvModel(_Model):
    env_id: str
    source: ModelSource
    title: str
    description: str = ""
    rules: list[str] = Field(default_factory=list)
    tools: list[ToolModel]
    collections: list[CollectionModel] = Field(default_factory=list)
    disagreements: list[KindDisagreement] = Field(default_factory=list)
    probes: dict[str, Any] = Field(
        default_factory=dict, description="what inference observed (counts, per-tool outcomes)"
    )

    def tool(self, name: str) -> ToolModel:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"environment {self.env_id!r} has no tool {name!r}")

    def entity(self, name: str) -> CollectionModel:
        for c in self.collections:
            if c.name == name:
                return c
        raise KeyError(f"environment {self.env_id!r} has no collection {name!r}")

    def has_entity(self, name: str) -> bool:
        return any(c.name == name for c in self.collections)

    @property
    def exact(self) -> bool:
        """Whether tool semantics are known exactly (compiled), so outcomes can be predicted."""
        return self.source == "spec"

    def mutating_tools(self) -> set[str]:
        """Tools that write, or may: a tool whose kind no call confirmed counts as writing."""
        return {
            t.name for t in self.tools if t.kind == "mutate" or t.kind_evidence == "unconfirmed"
        }


# --------------------------------------------------------------------------- from a spec


def _own_id_param(spec_tool: Any, name: str) -> bool:
    return name == f"{spec_tool.entity}_id" and spec_tool.operation in (
        "get",
        "transition",
        "update",
    )


def from_spec(spec: EnvSpec, env: Environment | None = None) -> EnvModel:
    """The exact model of a compiled environment: the spec's meaning, the analysis's schemas.

    Kinds are the spec's, which the environments stage already cross-checked against the
    AST (a disagreement quarantines the environment there), so nothing here is guessed.
    """
    analysed = {t.name: t for t in env.tools} if env is not None else {}
    tools = []
    for t in spec.tools:
        info = analysed.get(t.name)
        schema = info.schema_ if info is not None else {}
        params = [
            ParamModel(
                name=p.name,
                type=p.type,
                description=p.description,
                required=p.required,
                enum=list(p.enum) if p.enum is not None else None,
                takes=p.ref or (t.entity if _own_id_param(t, p.name) else None),
                field=p.field,
                minimum=p.minimum,
                role=p.role,
            )
            for p in t.params
        ]
        tools.append(
            ToolModel(
                name=t.name,
                description=t.description,
                schema=schema,
                kind=t.kind,
                kind_evidence="spec",
                ast_kind=info.kind if info is not None else t.kind,
                operation=t.operation,
                entity=t.entity,
                params=params,
                produces=_spec_produces(spec, t),
                field=t.field,
                target_status=t.target_status,
                preconditions=[p.model_copy() for p in t.preconditions],
                effects=[e.model_copy() for e in t.effects],
                derived={k: list(v) for k, v in t.derived.items()},
                aggregate=t.aggregate,
                fixed=dict(t.fixed) if t.fixed is not None else None,
                reads=list(info.reads) if info is not None else [],
                writes=list(info.writes) if info is not None else [],
            )
        )
    collections = [
        CollectionModel(
            name=e.name,
            attribute=e.collection,
            shape="keyed",
            id_field="id",
            id_prefix=e.id_prefix,
            label=e.label,
            fields=[f.model_copy() for f in e.fields],
            lookup_field=e.lookup_field,
            lookup_fields=[e.lookup_field] if e.lookup_field else [],
            status_field=e.status_field,
            statuses=list(e.field(e.status_field).values) if e.status_field else [],
            initial_status=e.initial_status,
            transitions={k: list(v) for k, v in e.transitions.items()},
        )
        for e in spec.entities
    ]
    return EnvModel(
        env_id=spec.env_id,
        source="spec",
        title=spec.title,
        description=spec.description,
        rules=list(spec.rules),
        tools=tools,
        collections=collections,
    )


# Operations whose result carries ids of their entity (list/find return whole records, create
# returns the new one, get/transition/update the record acted on) and of the entities its
# reference fields point to.
_PRODUCING = ("list", "find", "get", "create", "transition", "update", "search", "compare")


def _spec_produces(spec: EnvSpec, tool: Any) -> list[str]:
    if tool.operation not in _PRODUCING:
        return []
    entity = spec.entity(tool.entity)
    return sorted({tool.entity} | {f.ref for f in entity.fields if f.type == "ref" and f.ref})


def from_analysis(env: Environment) -> EnvModel:
    """A model from the static analysis alone: schemas and AST kinds, no collections.

    What a stage can know of code nobody probed; the pipeline infers a probed model instead
    (synthesis.environments.inference), so this serves notebooks, tests and the first step
    of inference.
    """
    tools = []
    for info in env.tools:
        function = info.schema_.get("function", {})
        parameters = function.get("parameters", {})
        required = set(parameters.get("required", []))
        params = [
            ParamModel(
                name=name,
                type=prop.get("type") if isinstance(prop.get("type"), str) else None,
                description=str(prop.get("description", "")),
                required=name in required,
                enum=list(prop["enum"]) if isinstance(prop.get("enum"), list) else None,
            )
            for name, prop in parameters.get("properties", {}).items()
        ]
        tools.append(
            ToolModel(
                name=info.name,
                description=str(function.get("description", "")),
                schema=info.schema_,
                kind=info.kind,
                kind_evidence="ast",
                ast_kind=info.kind,
                params=params,
                reads=list(info.reads),
                writes=list(info.writes),
            )
        )
    return EnvModel(env_id=env.env_id, source="inferred", title=env.class_name, tools=tools)


def model_of(env: Environment, stored: dict[str, Any] | None = None) -> EnvModel:
    """The model a stage reads: the stored artifact when given, else exact from the spec.

    Without either, only what the AST says (`from_analysis`).
    """
    if stored is not None:
        return EnvModel.model_validate(stored)
    if env.spec is not None:
        return from_spec(env.spec, env)
    return from_analysis(env)
