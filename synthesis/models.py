"""The data model every stage shares: specs, environments, scenarios, checks, trajectories."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    field_validator,
    model_validator,
)

SPEC_SCHEMA_VERSION = 1


class _Model(BaseModel):
    # Unknown keys are an error: a malformed spec (hand-written or LLM-written) must be
    # rejected with a reason, not silently half-loaded.
    model_config = ConfigDict(extra="forbid", frozen=False)

    # Fields added after artifacts were first pinned are left out of the JSON while unset, so
    # an artifact that does not use them keeps its bytes (and its content hash).
    _omit_when_none: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        # Omitted by the field's own `exclude_if`, which pydantic's core applies, rather than
        # by a wrap serializer on every model: that one ran Python for each nested model of
        # every dump (12,910 dumps of an environment's trajectories, scenarios and checks).
        super().__pydantic_init_subclass__(**kwargs)
        if cls._omit_when_none:
            for name in cls._omit_when_none:
                cls.__pydantic_fields__[name].exclude_if = _is_none
            cls.model_rebuild(force=True)


def _is_none(value: Any) -> bool:
    return value is None


# --------------------------------------------------------------------------- topics


class Topic(_Model):
    """One domain from the catalogue (data/topics.json), with the vocabulary its specs use.

    An entry names an archetype (a spec is generated for it) or a `source` instead: an
    environment class that already exists (a `.py` file, `file.py:Class`, a directory, or
    `package.module:Class`), built as a foreign environment.
    """

    _omit_when_none = ("source",)

    topic_id: str
    title: str
    archetype: str = ""
    description: str = ""
    vocabulary: dict[str, Any] = Field(default_factory=dict)
    source: str | None = None

    # Catalogues are written by people; these texts end up in class docstrings, tool
    # descriptions and task text, where a runaway paste would ship as is.
    MAX_TITLE: ClassVar[int] = 120
    MAX_DESCRIPTION: ClassVar[int] = 2000
    MAX_WORD: ClassVar[int] = 80

    @model_validator(mode="after")
    def _archetype_or_source(self) -> Topic:
        if bool(self.archetype) == bool(self.source):
            raise ValueError("a topic names exactly one of 'archetype' or 'source'")
        return self

    @field_validator("title")
    @classmethod
    def _title_length(cls, title: str) -> str:
        _check_length("title", title, cls.MAX_TITLE)
        return title

    @field_validator("description")
    @classmethod
    def _description_length(cls, description: str) -> str:
        _check_length("description", description, cls.MAX_DESCRIPTION)
        return description

    @field_validator("vocabulary")
    @classmethod
    def _vocabulary_lengths(cls, vocabulary: dict[str, Any]) -> dict[str, Any]:
        for key, value in vocabulary.items():
            words = value if isinstance(value, list) else [value]
            for i, word in enumerate(words):
                where = f"vocabulary {key!r}" + (f"[{i}]" if isinstance(value, list) else "")
                if isinstance(word, str):
                    _check_length(where, word, cls.MAX_WORD, shown=True)
        return vocabulary


def _check_length(field: str, text: str, limit: int, *, shown: bool = False) -> None:
    """Raise naming `field` and its length when `text` is longer than `limit` characters."""
    if len(text) > limit:
        start = f" ({text[:24]!r}…)" if shown else ""
        raise ValueError(
            f"{field}{start} is {len(text)} characters long; at most {limit} are allowed"
        )


# --------------------------------------------------------------------------- specs

FieldType = Literal["str", "int", "float", "bool", "enum", "ref", "datetime"]


class FieldSpec(_Model):
    _omit_when_none = ("mapping",)

    name: str
    type: FieldType
    description: str = ""
    values: list[str] = Field(
        default_factory=list,
        description="allowed values of an enum, or the candidates of a 'choice' generator",
    )
    ref: str | None = Field(default=None, description="entity an id-valued field points to")
    generator: str | None = Field(default=None, description="seeded data generator for values")
    unique: bool = False
    mapping: dict[str, Any] | None = Field(
        default=None,
        description="for a 'by:<field>' generator: the value this field takes for each value "
        "of <field> (a product's category and price follow its name)",
    )


class EntitySpec(_Model):
    name: str = Field(description="singular snake_case, e.g. 'booking'")
    collection: str = Field(description="the state attribute holding records keyed by id")
    id_prefix: str
    label: str = Field(description="human noun used in task text")
    fields: list[FieldSpec]
    lookup_field: str | None = Field(
        default=None, description="unique field by which people name a record (e.g. email)"
    )
    status_field: str | None = None
    transitions: dict[str, list[str]] = Field(
        default_factory=dict, description="status -> statuses it may move to"
    )
    initial_status: str | None = None

    def field(self, name: str) -> FieldSpec:
        for f in self.fields:
            if f.name == name:
                return f
        raise KeyError(f"entity {self.name!r} has no field {name!r}")


# What a parameter of a search or aggregate tool does: filter by equality (enum, reference,
# boolean), by a numeric range (min/max inclusive), by text contained (case-insensitive), or
# shape the result (the field to sort by, the order, how many records, which aggregate).
ParamRole = Literal["eq", "min", "max", "contains", "sort_by", "order", "limit", "function"]
AggregateFunction = Literal["count", "sum", "min", "max", "average"]
AGGREGATE_FUNCTIONS: tuple[str, ...] = ("count", "sum", "min", "max", "average")


class ParamSpec(_Model):
    _omit_when_none = ("role",)

    name: str
    type: Literal["string", "integer", "number", "boolean"]
    description: str = ""
    required: bool = True
    enum: list[str] | None = None
    ref: str | None = Field(default=None, description="entity whose id this parameter takes")
    field: str | None = Field(default=None, description="entity field this parameter sets/filters")
    minimum: float | None = None
    role: ParamRole | None = Field(
        default=None, description="search/aggregate tools: how the parameter filters or shapes"
    )


class Precondition(_Model):
    """A declarative guard the compiled tool checks before it changes anything.

    Kinds: `ref_field_equals` (the record `param` names has `field` == `value`),
    `ref_field_gte_param` (its `field` >= the argument `other`: stock, a balance, a limit),
    `param_positive`, `status_in` (the record acted on has a status in `values`),
    `param_at_most` (the argument `param` <= `value`: a per-call cap),
    `params_differ` (the arguments named in `values`, or `param` and `other`, differ: no
    transfer to the same account, no self-delegation),
    `count_below` (fewer than `value` records of the tool's entity have the argument `param`
    in the field it maps to, counting only statuses in `values` when given: a quota),
    `no_duplicate` (no record of the tool's entity already has both arguments `param` and
    `other` in their fields, statuses in `values` when given: a product once per wishlist),
    `linked_field_gte_field` (on an existing record: the record its reference field `param`
    points to has `field` >= the record's own field `other`: a reversal never overdraws),
    `ref_field_in` (the record `param` names has `field` in `values`),
    `field_in` (the record acted on has `field` in `values`: escalate only urgent tickets),
    `ref_field_covers` (the record `param` names has `field` >= `other_field` of the record
    `other` names: an approver's limit covers the request's amount),
    `no_conflict` (no record of the tool's entity already has the new record's values in all
    of `values` (field names), counting only records whose status is in `value` when given:
    a room's scheduled event at the same start; a second membership of one channel).
    """

    _omit_when_none = ("other_field",)

    kind: Literal[
        "ref_field_equals",
        "ref_field_gte_param",
        "param_positive",
        "status_in",
        "param_at_most",
        "params_differ",
        "count_below",
        "no_duplicate",
        "linked_field_gte_field",
        "ref_field_in",
        "field_in",
        "ref_field_covers",
        "no_conflict",
    ]
    param: str | None = None
    field: str | None = None
    value: Any = None
    values: list[str] = Field(default_factory=list)
    other: str | None = None
    other_field: str | None = None
    error: str

    def differing_params(self) -> list[str]:
        """The arguments a params_differ guard keeps apart: `values`, or `param` and `other`."""
        return list(self.values) or [n for n in (self.param, self.other) if n]


class Effect(_Model):
    """A declarative side effect on another record, reached through a reference parameter."""

    _omit_when_none = ("digits",)

    kind: Literal["set_ref_field", "adjust_ref_field"]
    via: str = Field(description="the reference field on the target record")
    field: str
    value: Any = None
    by_field: str | None = Field(default=None, description="adjust by this field of the record")
    sign: int = 1
    digits: int | None = Field(
        default=None, description="round an adjusted amount to this many decimals (money)"
    )


class ToolSpec(_Model):
    _omit_when_none = ("aggregate", "fixed")

    name: str
    kind: Literal["query", "mutate"]
    operation: Literal[
        "list", "get", "find", "create", "transition", "update", "search", "aggregate", "compare"
    ]
    entity: str
    description: str
    params: list[ParamSpec] = Field(default_factory=list)
    field: str | None = Field(default=None, description="the field a find/update tool addresses")
    target_status: str | None = None
    preconditions: list[Precondition] = Field(default_factory=list)
    effects: list[Effect] = Field(default_factory=list)
    derived: dict[str, list[str]] = Field(
        default_factory=dict,
        description="create-time computed fields: name -> [ref_param, ref_field, multiplier_param]",
    )
    aggregate: AggregateFunction | None = Field(
        default=None,
        description="aggregate tools: the function over `field` (unless a 'function' parameter "
        "chooses it)",
    )
    fixed: dict[str, Any] | None = Field(
        default=None, description="create tools: fields every new record gets as they are"
    )


class EnvSpec(_Model):
    """A typed environment skeleton: entities, tools with guards and effects, domain rules."""

    _omit_when_none = ("workspace",)

    schema_version: int = SPEC_SCHEMA_VERSION
    env_id: str
    topic_id: str
    archetype: str
    kind: Literal["tool", "workspace"] = "tool"
    class_name: str
    title: str
    description: str
    entities: list[EntitySpec]
    tools: list[ToolSpec]
    rules: list[str] = Field(default_factory=list)
    workspace: dict[str, Any] | None = Field(
        default=None,
        description="kind 'workspace' only: the seeded file tree's vocabulary and the verbs' "
        "constants (synthesis.environments.archetypes.workspace)",
    )

    def entity(self, name: str) -> EntitySpec:
        for e in self.entities:
            if e.name == name:
                return e
        raise KeyError(f"spec {self.env_id!r} has no entity {name!r}")

    def tool(self, name: str) -> ToolSpec:
        for t in self.tools:
            if t.name == name:
                return t
        raise KeyError(f"spec {self.env_id!r} has no tool {name!r}")


# --------------------------------------------------------------------------- environments


class ToolInfo(_Model):
    """What static analysis learned about one tool of a class."""

    name: str
    kind: Literal["query", "mutate"]
    schema_: dict[str, Any] = Field(alias="schema", description="OpenAI function definition")
    reads: list[str] = Field(default_factory=list)
    writes: list[str] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)


class EnvOrigin(_Model):
    """Where code the project did not compile came from, and how the sandbox loads it."""

    kind: Literal["code", "module"] = Field(
        description="code: the source text travels with the environment; module: imported "
        "by name inside the sandbox, its package mounted read-only (it may import siblings)"
    )
    module: str | None = Field(default=None, description="importable module name (module kind)")
    path: str | None = Field(default=None, description="where the source was read from")
    loader: str = "auto"
    dumper: str = "auto"
    requires: list[str] = Field(
        default_factory=list, description="top-level modules it imports beyond the stdlib"
    )


class Environment(_Model):
    """A generated environment: its source code and what analysis derived from it."""

    _omit_when_none = ("origin", "program_shape", "split")

    env_id: str
    topic_id: str
    archetype: str
    kind: Literal["tool", "workspace"] = "tool"
    source: Literal["programmatic", "llm", "foreign"] = "programmatic"
    class_name: str
    code: str
    code_sha256: str
    tools: list[ToolInfo]
    spec: EnvSpec | None = None
    status: Literal["accepted", "quarantined"] = "accepted"
    audit_score: float | None = None
    reason: str | None = None
    origin: EnvOrigin | None = None
    program_shape: str | None = Field(
        default=None,
        description="hash of the code's AST with identifiers and constants abstracted "
        "(synthesis.environments.shape)",
    )
    split: Literal["train", "test"] | None = Field(
        default=None,
        description="the split of every task set in it, decided by archetype and program "
        "shape (synthesis.environments.splits); unset outside a build",
    )


class InitialState(_Model):
    _omit_when_none = ("dump", "provenance")

    state_id: str
    env_id: str
    seed: int
    state: dict[str, Any] | None = Field(
        description="what the environment is loaded from (null: the class's own defaults)"
    )
    dump: dict[str, Any] | None = Field(
        default=None,
        description="the state as the environment reports it right after loading, when that "
        "differs from what it was loaded from (checks compare reported states)",
    )
    provenance: dict[str, Any] | None = None

    @property
    def start_state(self) -> dict[str, Any]:
        return self.dump if self.dump is not None else self.state or {}


# --------------------------------------------------------------------------- scenarios


class ToolCall(_Model):
    tool: str
    args: dict[str, Any] = Field(default_factory=dict)


class Scenario(_Model):
    """A task set in an initial state, with the gold tool-call chain that solves it."""

    _omit_when_none = ("initial_dump", "expected_reply", "user")

    scenario_id: str
    env_id: str
    state_id: str
    kind: Literal["feasible", "infeasible"] = "feasible"
    task_text: str
    initial_state: dict[str, Any] | None = Field(
        description="what the environment is loaded from (null: the class's own defaults)"
    )
    gold_chain: list[ToolCall]
    gold_results: list[Any] = Field(default_factory=list)
    final_state: dict[str, Any] | None = None
    split: Literal["train", "test"] = "train"
    status: Literal["published", "quarantined"] = "published"
    reason: str | None = None
    difficulty: dict[str, Any] = Field(default_factory=dict)
    provenance: dict[str, Any] = Field(default_factory=dict)
    initial_dump: dict[str, Any] | None = Field(
        default=None,
        description="the initial state as the environment reports it, when that differs "
        "from `initial_state` (what it is loaded from)",
    )
    expected_reply: dict[str, Any] | None = Field(
        default=None,
        description="reply tasks: {'include': values the final reply must contain, "
        "'exclude': decoy values it must not, 'rule': the broken rule (infeasible only)}",
    )
    user: dict[str, Any] | None = Field(
        default=None,
        description="a multi-turn task's simulated user (synthesis.tasks.dialogue): its "
        "opening message, the details it holds back until asked, and its replies; played by "
        "the shipped envfoundry_user.py. Null: single-turn (the agent is told `task_text`)",
    )
    # The task-plan record (synthesis.tasks.plan.TaskPlan) the text was worded from, in this
    # process only (never serialised): the LLM phrasing stage rewords from it after planning.
    _plan: Any = PrivateAttr(default=None)

    @property
    def chain_length(self) -> int:
        return len(self.gold_chain)

    @property
    def start_state(self) -> dict[str, Any]:
        """The state checks compare against: what the environment reported before step one."""
        return self.initial_dump if self.initial_dump is not None else self.initial_state or {}


class Check(_Model):
    """One boolean check on a final state, as data (spec) so it can be audited and replayed."""

    check_id: str
    scenario_id: str
    description: str
    spec: dict[str, Any]


class CheckSelftest(_Model):
    scenario_id: str
    gold_pass: bool
    noop_fail: bool
    deterministic: bool
    mutation_kill_rate: float
    n_mutants: int = 0
    reason: str | None = None
    shortcuts_fail: bool = True
    """Every shortcut (synthesis.tasks.shortcuts) earns reward 0 on the task."""
    shortcut_rewards: dict[str, float] = Field(default_factory=dict)
    """What each shortcut earned (for the dataset card's reward audit)."""
    alternatives_pass: bool = True
    """Every correct alternative (synthesis.rollouts.alternatives) earns reward 1."""
    alternative_rewards: dict[str, float] = Field(default_factory=dict)
    """What each correct alternative earned (the card's false-negative rate)."""

    @property
    def proven(self) -> bool:
        return (
            self.gold_pass
            and self.noop_fail
            and self.deterministic
            and self.shortcuts_fail
            and self.alternatives_pass
        )


class Trajectory(_Model):
    _omit_when_none = ("attempt_seed", "metadata")

    traj_id: str
    scenario_id: str
    env_id: str
    policy: str
    reward: float
    success: bool
    n_steps: int
    tokens_in: int = 0
    tokens_out: int = 0
    cost_usd: float = 0.0
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = Field(default_factory=list)
    split: Literal["train", "test"] = "train"
    attempt_seed: int | None = Field(
        default=None,
        description="which seeded attempt this is, for policies that attempt a task k times "
        "(the guesser); null for the others",
    )
    metadata: dict[str, Any] | None = Field(
        default=None,
        description="what the policy and the simulated user record of the episode (the LLM "
        "agent's attempt, temperature and seed; `turns`, `user_sim`); null for the others",
    )

    def json_record(self) -> dict[str, Any]:
        """What `model_dump(mode="json")` gives, without pydantic's walk of the `Any` values:
        every field holds JSON already (an episode's messages and tool schemas are built of
        JSON values), and that walk took ~0.35 s of an environment's ~1,000 trajectories.
        The record shares its lists and dicts with this trajectory."""
        return {
            name: value
            for name, value in self.__dict__.items()
            if value is not None or name not in self._omit_when_none
        }


class QuarantineRecord(_Model):
    artifact_type: str
    artifact_id: str
    stage: str
    reason: str
