"""Topic → EnvSpec: build a spec with the topic's archetype and prove it is self-consistent."""

from __future__ import annotations

import keyword

from synthesis.environments.archetypes import get_archetype
from synthesis.environments.archetypes.naming import NamingError
from synthesis.models import AGGREGATE_FUNCTIONS, EntitySpec, EnvSpec, ToolSpec, Topic


class SpecError(ValueError):
    """A spec that cannot be compiled; the message lists every problem found."""


def generate_spec(topic: Topic) -> EnvSpec:
    """The programmatic (offline) spec for a topic; raises SpecError if it is inconsistent."""
    builder = get_archetype(topic.archetype)  # KeyError: archetype not implemented
    try:
        spec = builder(topic)
    except KeyError as exc:
        raise SpecError(
            f"topic {topic.topic_id}: archetype {topic.archetype} needs "
            f"vocabulary entry {exc.args[0]!r}"
        ) from exc
    except NamingError as exc:
        raise SpecError(f"topic {topic.topic_id}: {exc}") from exc
    ensure_valid(spec)
    return spec


def ensure_valid(spec: EnvSpec) -> None:
    problems = validate_spec(spec)
    if problems:
        raise SpecError(f"spec {spec.env_id} is invalid: " + "; ".join(problems))


def _is_identifier(name: str) -> bool:
    return name.isidentifier() and not keyword.iskeyword(name) and not name.startswith("_")


def validate_spec(spec: EnvSpec) -> list[str]:
    """Every semantic problem of a spec (an LLM-authored spec goes through the same check).

    Pydantic already checked the shape; this checks that names resolve and rules agree.
    """
    if spec.kind == "workspace":
        from synthesis.environments.archetypes.project import FAMILY, validate_project_spec
        from synthesis.environments.archetypes.workspace import validate_workspace_spec

        if (spec.workspace or {}).get("family") == FAMILY:
            return validate_project_spec(spec)

        return validate_workspace_spec(spec)
    problems: list[str] = []
    if not spec.class_name.isidentifier() or keyword.iskeyword(spec.class_name):
        problems.append(f"class name {spec.class_name!r} is not an identifier")
    entities = {e.name: e for e in spec.entities}
    if len(entities) != len(spec.entities):
        problems.append("entity names are not unique")
    for attr in ("collection", "id_prefix"):
        values = [getattr(e, attr) for e in spec.entities]
        if len(set(values)) != len(values):
            problems.append(f"entity {attr}s are not unique: {values}")
    for entity in spec.entities:
        # Entity names become parameter and variable names (`<name>_id`, `linked_<name>`).
        if not entity.name.isidentifier():
            problems.append(f"entity name {entity.name!r} is not an identifier")
        if not _is_identifier(entity.collection):
            problems.append(f"collection {entity.collection!r} is not a public identifier")
        fields = {f.name: f for f in entity.fields}
        for f in entity.fields:
            if f.type == "ref" and f.ref not in entities:
                problems.append(f"{entity.name}.{f.name} references unknown entity {f.ref!r}")
            if f.type == "enum" and not f.values:
                problems.append(f"{entity.name}.{f.name} is an enum without values")
        if entity.lookup_field and entity.lookup_field not in fields:
            problems.append(f"{entity.name} lookup field {entity.lookup_field!r} does not exist")
        if entity.status_field:
            status = fields.get(entity.status_field)
            if status is None or status.type != "enum":
                problems.append(f"{entity.name} status field must be an existing enum")
            else:
                allowed = set(status.values)
                if entity.initial_status and entity.initial_status not in allowed:
                    problems.append(
                        f"{entity.name} initial status {entity.initial_status!r} unknown"
                    )
                for src, dsts in entity.transitions.items():
                    for s in [src, *dsts]:
                        if s not in allowed:
                            problems.append(f"{entity.name} transition uses unknown status {s!r}")

    tool_names = [t.name for t in spec.tools]
    if len(set(tool_names)) != len(tool_names):
        problems.append("tool names are not unique")
    for tool in spec.tools:
        where = f"tool {tool.name}"
        if not _is_identifier(tool.name):
            problems.append(f"{where}: name is not a public identifier")
        entity = entities.get(tool.entity)
        if entity is None:
            problems.append(f"{where}: unknown entity {tool.entity!r}")
            continue
        fields = {f.name: f for f in entity.fields}
        params = {p.name: p for p in tool.params}
        if len(params) != len(tool.params):
            problems.append(f"{where}: parameter names are not unique")
        for p in tool.params:
            if not _is_identifier(p.name):
                problems.append(f"{where}: parameter {p.name!r} is not an identifier")
            if p.ref and p.ref not in entities:
                problems.append(f"{where}: parameter {p.name} references unknown entity {p.ref!r}")
            if p.field and p.field not in fields:
                problems.append(f"{where}: parameter {p.name} maps to unknown field {p.field!r}")
        own_id = f"{entity.name}_id"
        if tool.operation in ("get", "transition", "update") and own_id not in params:
            problems.append(f"{where}: {tool.operation} needs a parameter {own_id!r}")
        if tool.operation in ("find", "update") and tool.field not in fields:
            problems.append(f"{where}: field {tool.field!r} does not exist on {entity.name}")
        if tool.operation == "find" and tool.field not in params:
            problems.append(f"{where}: find needs a parameter named {tool.field!r}")
        if tool.operation == "transition":
            if not entity.status_field:
                problems.append(f"{where}: transition on an entity without status")
            elif tool.target_status not in fields[entity.status_field].values:
                problems.append(f"{where}: unknown target status {tool.target_status!r}")
        if tool.operation in ("search", "aggregate", "compare"):
            problems += [f"{where}: {p}" for p in _read_tool_problems(tool, entity)]
        if tool.operation == "create":
            for f in entity.fields:
                settable = {p.field for p in tool.params} | set(tool.fixed or {})
                if f.name in settable or f.name == entity.status_field or f.name in tool.derived:
                    continue
                problems.append(f"{where}: field {f.name!r} is neither a parameter nor derived")
        for pre in tool.preconditions:
            # A guard on a linked record names fields of the record, not parameters.
            names = () if pre.kind == "linked_field_gte_field" else (pre.param, pre.other)
            for name in names:
                if name and name not in params:
                    problems.append(f"{where}: precondition names unknown parameter {name!r}")
            if pre.kind == "status_in" and tool.operation not in ("transition", "update"):
                problems.append(f"{where}: status_in applies to an existing record only")
            problems += [f"{where}: {p}" for p in _guard_problems(pre, tool, entity, entities)]
        for effect in tool.effects:
            via = fields.get(effect.via)
            if via is None or via.type != "ref":
                problems.append(f"{where}: effect goes through {effect.via!r}, not a reference")
            elif effect.field not in {f.name for f in entities[via.ref].fields}:
                problems.append(f"{where}: effect sets unknown field {via.ref}.{effect.field}")
            if effect.kind == "adjust_ref_field" and effect.by_field not in fields:
                problems.append(f"{where}: effect adjusts by unknown field {effect.by_field!r}")
        for name, (ref_param, _ref_field, times) in tool.derived.items():
            if ref_param not in params or times not in params:
                problems.append(f"{where}: derived {name!r} uses unknown parameters")
    return problems


_NUMERIC = ("int", "float")


def _read_tool_problems(tool: ToolSpec, entity: EntitySpec) -> list[str]:
    """What is wrong with a search, aggregate or compare tool's parameters."""
    fields = {f.name: f for f in entity.fields}
    problems = []
    if tool.operation == "compare":
        own = [p for p in tool.params if p.ref == entity.name]
        if len(own) != 2 or len(tool.params) != 2:
            problems.append(f"compare takes exactly two {entity.name} ids")
        return problems
    roles = [p.role for p in tool.params if p.role]
    for role in ("sort_by", "order", "limit", "function"):
        if roles.count(role) > 1:
            problems.append(f"more than one {role} parameter")
    for p in tool.params:
        role = p.role or ("eq" if p.field else None)
        if role in ("eq", "min", "max", "contains"):
            f = fields.get(p.field or "")
            if f is None:
                problems.append(f"filter {p.name} needs a field of {entity.name}")
            elif role in ("min", "max") and f.type not in _NUMERIC:
                problems.append(f"range filter {p.name} on non-numeric field {f.name!r}")
            elif role == "contains" and (f.type != "str" or p.type != "string"):
                problems.append(f"text filter {p.name} needs a text field and a string")
        elif role == "sort_by":
            unknown = [v for v in p.enum or [] if v not in fields]
            if not p.enum or unknown:
                problems.append(f"sort parameter {p.name} must list fields (unknown: {unknown})")
        elif role == "order" and sorted(p.enum or []) != ["asc", "desc"]:
            problems.append(f"order parameter {p.name} must be one of ['asc', 'desc']")
        elif role == "limit" and p.type != "integer":
            problems.append(f"limit parameter {p.name} must be an integer")
        elif role == "function":
            if not p.enum or any(v not in AGGREGATE_FUNCTIONS for v in p.enum):
                problems.append(f"function parameter {p.name} must list aggregate functions")
            if not p.required:
                problems.append(f"function parameter {p.name} must be required")
        elif role is None:
            problems.append(f"parameter {p.name} neither filters nor shapes the result")
    if tool.operation == "aggregate":
        chooser = any(p.role == "function" for p in tool.params)
        if not chooser and tool.aggregate is None:
            problems.append("aggregate needs a function (or a 'function' parameter)")
        only_count = not chooser and tool.aggregate == "count"
        f = fields.get(tool.field or "")
        if not only_count and (f is None or f.type not in _NUMERIC):
            problems.append(f"aggregate over {tool.field!r}, not a numeric field")
    return problems


def _guard_problems(pre, tool: ToolSpec, entity: EntitySpec, entities: dict) -> list[str]:
    """What is wrong with one of the guards added with the ledger/inventory archetypes."""
    params = {p.name: p for p in tool.params}
    problems = []
    if pre.kind == "param_at_most" and not isinstance(pre.value, (int, float)):
        problems.append(f"param_at_most needs a numeric value, not {pre.value!r}")
    if pre.kind in ("count_below", "no_duplicate"):
        if tool.operation != "create":
            problems.append(f"{pre.kind} guards a create only")
        names = [pre.param] + ([pre.other] if pre.kind == "no_duplicate" else [])
        for name in names:
            if name in params and params[name].field not in {f.name for f in entity.fields}:
                problems.append(f"{pre.kind} parameter {name!r} maps to no field")
        if pre.kind == "count_below" and not isinstance(pre.value, int):
            problems.append("count_below needs an integer value")
        if pre.values and not entity.status_field:
            problems.append(f"{pre.kind} counts statuses of an entity without status")
    if pre.kind == "linked_field_gte_field":
        if tool.operation not in ("transition", "update"):
            problems.append("linked_field_gte_field applies to an existing record only")
        via = next((f for f in entity.fields if f.name == pre.param), None)
        if via is None or via.type != "ref":
            problems.append(f"linked_field_gte_field goes through {pre.param!r}, not a reference")
        elif pre.field not in {f.name for f in entities[via.ref].fields}:
            problems.append(f"linked_field_gte_field reads unknown field {via.ref}.{pre.field}")
        if pre.other not in {f.name for f in entity.fields}:
            problems.append(f"linked_field_gte_field compares unknown field {pre.other!r}")
    return problems
