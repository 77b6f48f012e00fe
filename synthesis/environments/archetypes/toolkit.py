"""The archetype toolkit: the small named blocks every archetype builds its spec from.

Blocks: entities (`entity`, `noun_entity`, `person_entity`, `add_lifecycle`, `ref_field`,
`enum_field`), parameters (`ref`, `own_id`, `value`, `choice`, `text`, `amount`, the filters and
`shaping_params`), guards (`status_in`, `ref_is`, `ref_in`, `covers`, `linked_covers`,
`positive`, `at_most`, `count_below`, `no_duplicate`, `once`, `field_in`), effects (`adjust`,
`set_ref`), tools (`find_tool`, `find_by_email`, `find_by_name`, `get_tool`, `list_tool`,
`list_by_tool`, `create_tool`, `transition_tool`, `update_tool`, `search_tool`,
`aggregate_tool`, `compare_tool`) and `SpecDraft`, the spec being built.

How to add an archetype (booking.py is the worked example):

1. One module in this package, named for the domain, opening with a sentence on what its
   environments are and a paragraph on its optional features; import it in `__init__.py`.
2. `FEATURES`, the optional feature names in draw order (the seeded choice reads this order:
   reordering it changes which features every topic gets), and
   `optional = FeatureSet("<archetype>", FEATURES, at_least=3)`.
3. A draft, `class Booking(SpecDraft)`, whose `__init__` reads the topic's vocabulary once:
   nouns (`noun(vocab, "customer")`), id prefixes (`assign_prefixes`), value lists, tool names
   features refer to. Class annotations name the records `core` adds.
4. `core(d)`: the program every topic gets, built from the blocks here, and its rules. A
   feature that changes the core's statuses or the words of its guards is read here, with
   `d.has(name)`, where the statuses are laid out; everything else a feature does waits.
5. One function per feature, `@optional.feature def waitlist(d: Booking) -> None`, with a
   one-line docstring saying what the feature is. It adds its entities, tools and rules and
   may extend what the core built: `d.add_status`, `d.add_field`, `d.guard` (a guard on an
   existing tool, its rule stated with the core's), `add_filter`, `add_lifecycle`. Features
   apply in the order their functions are defined, which places their tools and rules.
   `@optional.feature(otherwise=f)` runs the core's `f` in the feature's place when a topic
   lacks it; `FeatureSet(..., requires={"a": "b"})` drops `a` without `b`.
6. `@register_archetype("<archetype>") def build_<archetype>_spec(topic)`: make the draft,
   `core(d)`, `optional.apply(d)`, `return d.spec()`.
7. Topics in data/topics.json; a test building one with every feature on (see
   tests/synthesis/environments/test_workflow_archetypes.py); then renew the spec pins
   (tests/data/archetype_specs.json, see test_archetype_spec_pins.py).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import Noun, class_name, plural
from synthesis.models import (
    Effect,
    EntitySpec,
    EnvSpec,
    FieldSpec,
    ParamSpec,
    Precondition,
    ToolSpec,
    Topic,
)

# --------------------------------------------------------------------------- words


def a(label: str) -> str:
    """`label` with its indefinite article: "an account", "a ledger"."""
    return ("an " if label[:1].lower() in "aeiou" else "a ") + label


def words(items: Sequence[str]) -> str:
    """ "a, b or c" for rule texts."""
    items = [str(i).replace("_", " ") for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def only(sources: Sequence[str], label: str, done: str) -> str:
    """ "only an open or active ticket can be resolved": a status guard's refusal, which
    infeasible tasks' replies quote, so it reads as English (articles, no snake_case)."""
    return f"only {a(words(sources))} {label} can be {done.replace('_', ' ')}"


# --------------------------------------------------------------------------- entities


def entity(
    name: str,
    label: str,
    prefix: str,
    fields: Iterable[FieldSpec],
    *,
    collection: str | None = None,
    statuses: Sequence[str] | None = None,
    transitions: dict[str, list[str]] | None = None,
    lookup: str | None = None,
) -> EntitySpec:
    """A record type. With `statuses`, a status field (last) whose first value is the initial
    status and moves to the others, unless `transitions` says otherwise."""
    spec = EntitySpec(
        name=name,
        collection=collection or plural(name),
        id_prefix=prefix,
        label=label,
        lookup_field=lookup,
        fields=list(fields),
    )
    if statuses:
        add_lifecycle(spec, statuses, transitions)
    return spec


def noun_entity(noun: Noun, prefix: str, fields: Iterable[FieldSpec], **shape: Any) -> EntitySpec:
    """A record type named by a vocabulary noun (its plural names the collection)."""
    return entity(noun.name, noun.label, prefix, fields, collection=noun.plural, **shape)


def person_entity(noun: Noun, prefix: str, extra: FieldSpec) -> EntitySpec:
    """A person looked up by email (patients, readers, members …), with one extra field."""
    return noun_entity(
        noun,
        prefix,
        [
            FieldSpec(name="name", type="str", generator="person_name"),
            FieldSpec(name="email", type="str", generator="email", unique=True),
            extra,
        ],
        lookup="email",
    )


def add_lifecycle(
    record: EntitySpec, statuses: Sequence[str], transitions: dict[str, list[str]] | None = None
) -> None:
    """Give `record` a status field (appended): it starts in the first status and moves to
    the others, unless `transitions` says otherwise (`{}`: only effects change it)."""
    record.fields.append(enum_field("status", statuses))
    record.status_field = "status"
    record.initial_status = statuses[0]
    record.transitions = (
        {statuses[0]: list(statuses[1:])} if transitions is None else dict(transitions)
    )


def ref_field(target: str, name: str | None = None) -> FieldSpec:
    """A field holding the id of a `target` record (`<target>_id` unless named)."""
    return FieldSpec(name=name or f"{target}_id", type="ref", ref=target)


def enum_field(name: str, values: Iterable[str]) -> FieldSpec:
    return FieldSpec(name=name, type="enum", values=list(values))


# --------------------------------------------------------------------------- parameters


def own_id(record: EntitySpec) -> ParamSpec:
    """The id of the record a get/transition/update acts on."""
    return ParamSpec(
        name=f"{record.name}_id",
        type="string",
        ref=record.name,
        description=f"Id of the {record.label}.",
    )


def ref(
    record: EntitySpec,
    name: str | None = None,
    description: str | None = None,
    *,
    field: str | None = None,
) -> ParamSpec:
    """A parameter taking an id of `record`, set on (or filtering) the field `field` (by
    default the parameter's own name, `<record>_id`)."""
    name = name or f"{record.name}_id"
    return ParamSpec(
        name=name,
        type="string",
        ref=record.name,
        field=field or name,
        description=description or f"Id of the {record.label}.",
    )


def value(
    name: str,
    kind: str,
    description: str,
    *,
    enum: Sequence[str] | None = None,
    required: bool = True,
    minimum: float | None = None,
) -> ParamSpec:
    """A parameter setting (or filtering) the field of the same name."""
    return ParamSpec(
        name=name,
        type=kind,  # type: ignore[arg-type]
        field=name,
        description=description,
        enum=list(enum) if enum else None,
        required=required,
        minimum=minimum,
    )


def amount(name: str, description: str, *, integer: bool = False) -> ParamSpec:
    """A positive quantity (at least 1) or sum of money (at least 0.01)."""
    kind = "integer" if integer else "number"
    return value(name, kind, description, minimum=1 if integer else 0.01)


def choice(
    name: str, description: str, values: Sequence[str], *, required: bool = True
) -> ParamSpec:
    """A text parameter taking one of `values` (an enum field of the same name)."""
    return value(name, "string", description, enum=values, required=required)


def text(name: str, description: str) -> ParamSpec:
    """A free-text parameter setting the field of the same name."""
    return value(name, "string", description)


def status_filter(statuses: Sequence[str], label: str) -> ParamSpec:
    """The optional `status` filter of a list tool: "Only <label> with this status."."""
    return choice("status", f"Only {label} with this status.", statuses, required=False)


def eq_filter(
    field: str, description: str, *, enum: Sequence[str] | None = None, ref: str = ""
) -> ParamSpec:
    """An optional equality filter on an enum, reference or boolean field (named as it)."""
    return ParamSpec(
        name=field,
        type="string",
        field=field,
        required=False,
        enum=list(enum) if enum else None,
        ref=ref or None,
        role="eq",
        description=description,
    )


def ref_filter(target: str, description: str) -> ParamSpec:
    """An optional filter on the `<target>_id` field: only records of one `target`."""
    return eq_filter(f"{target}_id", description, ref=target)


def range_filters(field: str, words: str, *, integer: bool = False) -> list[ParamSpec]:
    """`min_<field>` and `max_<field>`: an inclusive numeric range, either end optional."""
    kind = "integer" if integer else "number"
    return [
        ParamSpec(
            name=f"{bound}_{field}",
            type=kind,
            field=field,
            required=False,
            role=bound,
            description=f"Only records whose {words} is at {'least' if bound == 'min' else 'most'}"
            " this.",
        )
        for bound in ("min", "max")
    ]


def contains_filter(field: str, words: str) -> ParamSpec:
    """`<field>_contains`: text the field must contain, ignoring case."""
    return ParamSpec(
        name=f"{field}_contains",
        type="string",
        field=field,
        required=False,
        role="contains",
        description=f"Only records whose {words} contains this text (case ignored).",
    )


SHAPING_ROLES = ("sort_by", "order", "limit")


def shaping_params(sort_fields: Sequence[str], *, limit: bool) -> list[ParamSpec]:
    """Sorting (a field, ascending or descending) and an optional maximum count."""
    params = []
    if sort_fields:
        params += [
            ParamSpec(
                name="sort_by",
                type="string",
                required=False,
                enum=list(sort_fields),
                role="sort_by",
                description="Sort the results by this field (default: by id).",
            ),
            ParamSpec(
                name="order",
                type="string",
                required=False,
                enum=["asc", "desc"],
                role="order",
                description="Sort order when sort_by is given: asc (default) or desc.",
            ),
        ]
    if limit:
        params.append(
            ParamSpec(
                name="limit",
                type="integer",
                required=False,
                minimum=1,
                role="limit",
                description="Return at most this many records.",
            )
        )
    return params


def param(tool: ToolSpec, name: str) -> ParamSpec:
    """The parameter `name` of `tool`."""
    return next(p for p in tool.params if p.name == name)


def add_filter(search: ToolSpec, *filters: ParamSpec) -> None:
    """More filters for a search tool: after its filters, before its sorting and limit."""
    at = next((i for i, p in enumerate(search.params) if p.role in SHAPING_ROLES), None)
    at = len(search.params) if at is None else at
    search.params[at:at] = filters


# --------------------------------------------------------------------------- guards


def status_in(values: Sequence[str], error: str) -> Precondition:
    """The record acted on is in one of `values`."""
    return Precondition(kind="status_in", values=list(values), error=error)


def field_in(field: str, values: Sequence[str], error: str) -> Precondition:
    """The record acted on has `field` in `values` (escalate only urgent tickets)."""
    return Precondition(kind="field_in", field=field, values=list(values), error=error)


def ref_is(param: str, field: str, value: Any, error: str) -> Precondition:
    """The record the argument `param` names has `field` == `value` (an active account)."""
    return Precondition(kind="ref_field_equals", param=param, field=field, value=value, error=error)


def ref_in(param: str, field: str, values: Sequence[str], error: str) -> Precondition:
    """The record the argument `param` names has `field` in `values`."""
    return Precondition(
        kind="ref_field_in", param=param, field=field, values=list(values), error=error
    )


def covers(param: str, field: str, other: str, error: str) -> Precondition:
    """The record `param` names has `field` >= the argument `other` (stock, a balance)."""
    return Precondition(
        kind="ref_field_gte_param", param=param, field=field, other=other, error=error
    )


def linked_covers(via: str, field: str, other: str, error: str) -> Precondition:
    """On an existing record: the record its field `via` points to has `field` >= the
    record's own `other` (a reversal never overdraws the receiver)."""
    return Precondition(
        kind="linked_field_gte_field", param=via, field=field, other=other, error=error
    )


def positive(param: str, error: str) -> Precondition:
    return Precondition(kind="param_positive", param=param, error=error)


def at_most(param: str, limit: float, error: str) -> Precondition:
    """A per-call cap on the argument `param`."""
    return Precondition(kind="param_at_most", param=param, value=limit, error=error)


def count_below(param: str, limit: int, statuses: Sequence[str], error: str) -> Precondition:
    """Fewer than `limit` records (in `statuses`) share the argument `param`: a quota."""
    return Precondition(
        kind="count_below", param=param, value=limit, values=list(statuses), error=error
    )


def no_duplicate(param: str, other: str, statuses: Sequence[str], error: str) -> Precondition:
    """No record (in `statuses`) already has both arguments: a product once per wishlist."""
    return Precondition(
        kind="no_duplicate", param=param, other=other, values=list(statuses), error=error
    )


def once(fields: Sequence[str], error: str, statuses: Sequence[str] | None = None) -> Precondition:
    """No record of the tool's entity already has the new record's values in all of `fields`
    (only records in `statuses`, when given): one review per booking, one shipment per order."""
    return Precondition(kind="no_conflict", values=list(fields), value=statuses, error=error)


# --------------------------------------------------------------------------- effects


def adjust(via: str, field: str, by: str, sign: int, *, money: bool = False) -> Effect:
    """Add (sign 1) or take (sign -1) a record's `by` field to/from the linked record's field."""
    return Effect(
        kind="adjust_ref_field",
        via=via,
        field=field,
        by_field=by,
        sign=sign,
        digits=2 if money else None,
    )


def set_ref(via: str, field: str, value: Any) -> Effect:
    """Set `field` of the record the field `via` points to (a booked slot)."""
    return Effect(kind="set_ref_field", via=via, field=field, value=value)


# --------------------------------------------------------------------------- tools


def find_tool(record: EntitySpec, description: str, param_description: str) -> ToolSpec:
    """`find_<record>_by_<lookup field>`: how a task's human description becomes an id."""
    field = record.lookup_field
    return ToolSpec(
        name=f"find_{record.name}_by_{field}",
        kind="query",
        operation="find",
        entity=record.name,
        field=field,
        description=description,
        params=[ParamSpec(name=field, type="string", description=param_description)],
    )


def find_by_email(person: EntitySpec, description: str) -> ToolSpec:
    return find_tool(person, description, "Email address.")


def find_by_name(record: EntitySpec, description: str) -> ToolSpec:
    return find_tool(record, description, f"The {record.label}'s name.")


def get_tool(record: EntitySpec, description: str | None = None) -> ToolSpec:
    """`get_<record>`: one record by its id."""
    return ToolSpec(
        name=f"get_{record.name}",
        kind="query",
        operation="get",
        entity=record.name,
        description=description or f"Get one {record.label} by id.",
        params=[own_id(record)],
    )


def list_tool(name: str, record: EntitySpec, description: str, *filters: ParamSpec) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind="query",
        operation="list",
        entity=record.name,
        description=description,
        params=list(filters),
    )


def list_by_tool(
    name: str,
    record: EntitySpec,
    owner: EntitySpec,
    field: str,
    description: str,
    status: Sequence[str] | None = None,
) -> ToolSpec:
    """`list_...`: the records of `record` that belong to one `owner`, optionally by status."""
    filters = [ref(owner, field=field, name=f"{owner.name}_id")]
    if status:
        filters.append(status_filter(status, "records"))
    return list_tool(name, record, description, *filters)


def create_tool(
    name: str,
    record: EntitySpec,
    description: str,
    params: Iterable[ParamSpec],
    *,
    guards: Iterable[Precondition] = (),
    effects: Iterable[Effect] = (),
    derived: dict[str, list[str]] | None = None,
) -> ToolSpec:
    """A tool that makes a new `record` from its arguments, if every guard holds."""
    return ToolSpec(
        name=name,
        kind="mutate",
        operation="create",
        entity=record.name,
        description=description,
        params=list(params),
        preconditions=list(guards),
        effects=list(effects),
        derived=derived or {},
    )


def transition_tool(
    verb: str,
    record: EntitySpec,
    target: str,
    sources: Sequence[str],
    description: str,
    *,
    name: str | None = None,
    guards: Iterable[Precondition] = (),
    effects: Iterable[Effect] = (),
    refusal: str | None = None,
) -> ToolSpec:
    """`<verb>_<record>` (or `name`): a status change from one of `sources` to `target`,
    refused with `only(...)` words (or `refusal`) from any other status."""
    return ToolSpec(
        name=name or f"{verb}_{record.name}",
        kind="mutate",
        operation="transition",
        entity=record.name,
        target_status=target,
        description=description,
        params=[own_id(record)],
        preconditions=[
            status_in(sources, refusal or only(sources, record.label, target)),
            *guards,
        ],
        effects=list(effects),
    )


def update_tool(
    name: str,
    record: EntitySpec,
    new_value: ParamSpec,
    description: str,
    *,
    guards: Iterable[Precondition] = (),
) -> ToolSpec:
    """A tool that sets one field of an existing record (the field `new_value` maps to)."""
    return ToolSpec(
        name=name,
        kind="mutate",
        operation="update",
        entity=record.name,
        field=new_value.field,
        description=description,
        params=[own_id(record), new_value],
        preconditions=list(guards),
    )


def search_tool(
    name: str,
    record: EntitySpec,
    description: str,
    filters: Iterable[ParamSpec],
    shaping: Iterable[ParamSpec],
) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind="query",
        operation="search",
        entity=record.name,
        description=description,
        params=[*filters, *shaping],
    )


def aggregate_tool(
    name: str,
    record: EntitySpec,
    description: str,
    field: str | None,
    filters: Iterable[ParamSpec],
    *,
    functions: Sequence[str] | None = None,
    fixed: str | None = None,
) -> ToolSpec:
    """An aggregate over `field` of the filtered records: one fixed function, or chosen by
    a required `function` parameter from `functions`."""
    params = list(filters)
    if functions:
        params.insert(
            0,
            ParamSpec(
                name="function",
                type="string",
                enum=list(functions),
                role="function",
                description="What to compute: " + ", ".join(functions) + ".",
            ),
        )
    return ToolSpec(
        name=name,
        kind="query",
        operation="aggregate",
        entity=record.name,
        description=description,
        field=field,
        aggregate=None if functions else fixed,  # type: ignore[arg-type]
        params=params,
    )


def compare_tool(record: EntitySpec, description: str) -> ToolSpec:
    """`compare_<records>`: two records side by side and the fields where they differ."""
    return ToolSpec(
        name=f"compare_{plural(record.name)}",
        kind="query",
        operation="compare",
        entity=record.name,
        description=description,
        params=[
            ParamSpec(
                name=f"{which}_{record.name}_id",
                type="string",
                ref=record.name,
                description=f"Id of the {which} {record.label}.",
            )
            for which in ("first", "second")
        ],
    )


# --------------------------------------------------------------------------- the draft


class SpecDraft:
    """A spec being built: the core's entities, tools and rules, then each chosen feature's.

    Archetypes subclass it to hold what they read from the topic's vocabulary (nouns, value
    lists), so feature functions take the draft alone.
    """

    def __init__(self, topic: Topic, optional: FeatureSet) -> None:
        self.topic = topic
        self.vocab = topic.vocabulary
        self.archetype = optional.archetype
        self.features = optional.choose(topic)
        self.entities: list[EntitySpec] = []
        self.tools: list[ToolSpec] = []
        self.rules: list[str] = []
        # Rules of guards features add to the core's tools read next to the core's rules,
        # before the features' own (where `_core_rules` marks the end of the core's).
        self.guard_rules: list[str] = []
        self._core_rules: int | None = None

    def has(self, feature: str) -> bool:
        return feature in self.features

    def begin_features(self) -> None:
        """Called by FeatureSet.apply: the rules so far are the core's."""
        self._core_rules = len(self.rules)

    def entity(self, name: str) -> EntitySpec:
        return next(e for e in self.entities if e.name == name)

    def tool(self, name: str) -> ToolSpec:
        return next(t for t in self.tools if t.name == name)

    def find(self, name: str) -> ToolSpec | None:
        """The tool `name`, if a feature has added it."""
        return next((t for t in self.tools if t.name == name), None)

    def guard(self, tool: str, *guards: Precondition, rule: str | None = None) -> None:
        """More guards on an existing tool; `rule` says so among the core's rules."""
        self.tool(tool).preconditions.extend(guards)
        if rule:
            self.guard_rules.append(rule)

    def add_field(
        self,
        record: EntitySpec,
        field: FieldSpec,
        *,
        create: str | None = None,
        arg: ParamSpec | None = None,
    ) -> None:
        """A new field of `record` (appended), set by the argument `arg` of the tool `create`."""
        record.fields.append(field)
        if create and arg:
            self.tool(create).params.append(arg)

    def add_status(
        self,
        record: EntitySpec,
        status: str,
        *,
        after: Sequence[str] = (),
        back_to: Sequence[str] = (),
    ) -> None:
        """A new status of `record`, reached from `after` and left for `back_to`; every status
        filter already built on `record` offers it too."""
        status_field = record.field(record.status_field or "status")
        status_field.values.append(status)
        for source in after:
            record.transitions.setdefault(source, []).append(status)
        if back_to:
            record.transitions[status] = list(back_to)
        for tool in self.tools:
            for p in tool.params if tool.entity == record.name else ():
                if p.field == status_field.name and p.enum:
                    p.enum.append(status)

    def spec(self) -> EnvSpec:
        topic, cut = self.topic, len(self.rules) if self._core_rules is None else self._core_rules
        return EnvSpec(
            env_id=f"{topic.topic_id}-{self.archetype}",
            topic_id=topic.topic_id,
            archetype=self.archetype,
            class_name=class_name(topic.topic_id),
            title=topic.title,
            description=topic.description,
            entities=self.entities,
            tools=self.tools,
            rules=[*self.rules[:cut], *self.guard_rules, *self.rules[cut:]],
        )
