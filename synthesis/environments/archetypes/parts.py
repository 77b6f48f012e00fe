"""Spec parts several archetypes share: people who are customers, and lookup tools."""

from __future__ import annotations

from synthesis.environments.archetypes.naming import Noun
from synthesis.models import EntitySpec, FieldSpec, ParamSpec, ToolSpec


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
