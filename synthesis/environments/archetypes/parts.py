"""Spec parts several archetypes share: people, lookup and read tools, guards, features."""

from __future__ import annotations

import random

from synthesis.environments.archetypes.naming import Noun, plural
from synthesis.hashing import derive_seed
from synthesis.models import (
    Effect,
    EntitySpec,
    FieldSpec,
    ParamSpec,
    Precondition,
    ToolSpec,
    Topic,
)


def person_entity(noun: Noun, prefix: str, extra: FieldSpec) -> EntitySpec:
    """A person looked up by email (patients, readers, members …), with one extra field."""
    return EntitySpec(
        name=noun.name,
        collection=noun.plural,
        id_prefix=prefix,
        label=noun.label,
        lookup_field="email",
        fields=[
            FieldSpec(name="name", type="str", generator="person_name"),
            FieldSpec(name="email", type="str", generator="email", unique=True),
            extra,
        ],
    )


def a(label: str) -> str:
    """`label` with its indefinite article: "an account", "a ledger"."""
    return ("an " if label[:1].lower() in "aeiou" else "a ") + label


def find_tool(entity: EntitySpec, description: str, param_description: str) -> ToolSpec:
    """`find_<entity>_by_<lookup field>`: how a task's human description becomes an id."""
    field = entity.lookup_field
    return ToolSpec(
        name=f"find_{entity.name}_by_{field}",
        kind="query",
        operation="find",
        entity=entity.name,
        field=field,
        description=description,
        params=[ParamSpec(name=field, type="string", description=param_description)],
    )


def id_param(entity: EntitySpec, field: str | None = None) -> ParamSpec:
    """A parameter taking the id of `entity` (mapped onto `field` when it sets or filters one)."""
    return ParamSpec(
        name=f"{entity.name}_id",
        type="string",
        ref=entity.name,
        field=field,
        description=f"Id of the {entity.label}.",
    )


# --------------------------------------------------------------------------- program shape


def pick_features(topic: Topic, archetype: str, optional: list[str], *, at_least: int) -> set[str]:
    """Which optional features (refunds, holds, quotas …) an environment of `topic` has.

    A topic may list them (`vocabulary["features"]`); otherwise each is on or off by a seed
    from the topic id, so the choice is deterministic, differs between topics, and never
    depends on catalogue order. At least `at_least` are on, so no environment is bare.
    """
    listed = topic.vocabulary.get("features")
    if isinstance(listed, list):
        return {f for f in listed if f in optional}
    rng = random.Random(derive_seed("archetype-features", archetype, topic.topic_id))
    chosen = {f for f in optional if rng.random() < 0.5}
    rest = [f for f in optional if f not in chosen]
    rng.shuffle(rest)
    return chosen | set(rest[: max(0, at_least - len(chosen))])


# --------------------------------------------------------------------------- read tools


def get_tool(entity: EntitySpec, description: str | None = None) -> ToolSpec:
    """`get_<entity>`: one record by its id."""
    return ToolSpec(
        name=f"get_{entity.name}",
        kind="query",
        operation="get",
        entity=entity.name,
        description=description or f"Get one {entity.label} by id.",
        params=[id_param(entity)],
    )


def eq_filter(
    name: str, field: str, description: str, *, enum: list[str] | None = None, ref: str = ""
) -> ParamSpec:
    """An optional equality filter on an enum, reference or boolean field."""
    return ParamSpec(
        name=name,
        type="string",
        field=field,
        required=False,
        enum=list(enum) if enum else None,
        ref=ref or None,
        role="eq",
        description=description,
    )


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


def shaping_params(sort_fields: list[str], *, limit: bool) -> list[ParamSpec]:
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


def search_tool(
    name: str, entity: EntitySpec, description: str, filters: list[ParamSpec], shaping: list
) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind="query",
        operation="search",
        entity=entity.name,
        description=description,
        params=[*filters, *shaping],
    )


def aggregate_tool(
    name: str,
    entity: EntitySpec,
    description: str,
    field: str | None,
    filters: list[ParamSpec],
    *,
    functions: list[str] | None = None,
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
        entity=entity.name,
        description=description,
        field=field,
        aggregate=None if functions else fixed,
        params=params,
    )


def compare_tool(entity: EntitySpec, description: str) -> ToolSpec:
    """`compare_<entities>`: two records side by side and the fields where they differ."""
    return ToolSpec(
        name=f"compare_{plural(entity.name)}",
        kind="query",
        operation="compare",
        entity=entity.name,
        description=description,
        params=[
            ParamSpec(
                name=f"{which}_{entity.name}_id",
                type="string",
                ref=entity.name,
                description=f"Id of the {which} {entity.label}.",
            )
            for which in ("first", "second")
        ],
    )


def list_by_tool(
    name: str, entity: EntitySpec, owner: EntitySpec, field: str, description: str, status=None
) -> ToolSpec:
    """`list_...`: the records of `entity` that belong to one `owner`, optionally by status."""
    params = [id_param(owner, field=field)]
    if status:
        params.append(
            ParamSpec(
                name="status",
                type="string",
                field="status",
                required=False,
                enum=list(status),
                description="Only records with this status.",
            )
        )
    return ToolSpec(
        name=name,
        kind="query",
        operation="list",
        entity=entity.name,
        description=description,
        params=params,
    )


def amount_param(name: str, field: str, description: str, *, integer: bool = False) -> ParamSpec:
    return ParamSpec(
        name=name,
        type="integer" if integer else "number",
        field=field,
        minimum=1 if integer else 0.01,
        description=description,
    )


def transition_tool(
    name: str,
    entity: EntitySpec,
    target: str,
    sources: list[str],
    description: str,
    *,
    effects: list[Effect] | None = None,
    guards: list[Precondition] | None = None,
) -> ToolSpec:
    """A status change guarded by the statuses it may start from."""
    return ToolSpec(
        name=name,
        kind="mutate",
        operation="transition",
        entity=entity.name,
        target_status=target,
        description=description,
        params=[id_param(entity)],
        preconditions=[
            Precondition(
                kind="status_in",
                values=list(sources),
                error=f"only {a(' or '.join(sources))} {entity.label} can be {target}",
            ),
            *(guards or []),
        ],
        effects=list(effects or []),
    )


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
