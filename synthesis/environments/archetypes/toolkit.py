"""Small spec constructors the workflow archetypes (ticketing, scheduling, approvals,
messaging) share: reference and value parameters, list/get/transition/update tools, guards."""

from __future__ import annotations

from synthesis.environments.archetypes.parts import a
from synthesis.models import EntitySpec, ParamSpec, Precondition, ToolSpec


def ref(entity: EntitySpec, name: str | None = None, description: str | None = None) -> ParamSpec:
    """A parameter (and field) taking an id of `entity`."""
    name = name or f"{entity.name}_id"
    return ParamSpec(
        name=name,
        type="string",
        ref=entity.name,
        field=name,
        description=description or f"Id of the {entity.label}.",
    )


def own_id(entity: EntitySpec) -> ParamSpec:
    """The id of the record a get/transition/update acts on."""
    return ParamSpec(
        name=f"{entity.name}_id",
        type="string",
        ref=entity.name,
        description=f"Id of the {entity.label}.",
    )


def value(
    name: str,
    kind: str,
    description: str,
    *,
    enum: list[str] | None = None,
    required: bool = True,
    minimum: float | None = None,
) -> ParamSpec:
    return ParamSpec(
        name=name,
        type=kind,  # type: ignore[arg-type]
        field=name,
        description=description,
        enum=list(enum) if enum else None,
        required=required,
        minimum=minimum,
    )


def status_filter(statuses: list[str], label: str) -> ParamSpec:
    return ParamSpec(
        name="status",
        type="string",
        field="status",
        required=False,
        enum=list(statuses),
        description=f"Only {label} with this status.",
    )


def list_tool(name: str, entity: EntitySpec, description: str, *filters: ParamSpec) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind="query",
        operation="list",
        entity=entity.name,
        description=description,
        params=list(filters),
    )


def get_tool(entity: EntitySpec) -> ToolSpec:
    return ToolSpec(
        name=f"get_{entity.name}",
        kind="query",
        operation="get",
        entity=entity.name,
        description=f"Get one {entity.label} by id.",
        params=[own_id(entity)],
    )


def status_in(values: list[str], error: str) -> Precondition:
    return Precondition(kind="status_in", values=list(values), error=error)


def once(fields: list[str], error: str, statuses: list[str] | None = None) -> Precondition:
    """No record of the tool's entity already has the new record's values in all of `fields`
    (only records in `statuses`, when given): one review per booking, one shipment per order."""
    return Precondition(kind="no_conflict", values=list(fields), value=statuses, error=error)


def transition_tool(
    verb: str,
    entity: EntitySpec,
    target: str,
    sources: list[str],
    description: str,
    *,
    guards: list[Precondition] = (),  # type: ignore[assignment]
    effects: list = (),  # type: ignore[assignment]
) -> ToolSpec:
    return ToolSpec(
        name=f"{verb}_{entity.name}",
        kind="mutate",
        operation="transition",
        entity=entity.name,
        target_status=target,
        description=description,
        params=[own_id(entity)],
        preconditions=[
            status_in(sources, only(sources, entity.label, target)),
            *guards,
        ],
        effects=list(effects),
    )


def update_tool(
    name: str,
    entity: EntitySpec,
    param: ParamSpec,
    description: str,
    *,
    guards: list[Precondition] = (),  # type: ignore[assignment]
) -> ToolSpec:
    return ToolSpec(
        name=name,
        kind="mutate",
        operation="update",
        entity=entity.name,
        field=param.field,
        description=description,
        params=[own_id(entity), param],
        preconditions=list(guards),
    )


def only(sources: list[str], label: str, done: str) -> str:
    """ "only an open or active ticket can be resolved": a status guard's refusal, which
    infeasible tasks' replies quote, so it reads as English (articles, no snake_case)."""
    return f"only {a(words(sources))} {label} can be {done.replace('_', ' ')}"


def words(items: list[str]) -> str:
    """ "a, b or c" for rule texts."""
    items = [str(i).replace("_", " ") for i in items]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
