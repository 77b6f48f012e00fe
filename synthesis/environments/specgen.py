"""Topic → EnvSpec: build a spec with the topic's archetype and prove it is self-consistent."""

from __future__ import annotations

import keyword

from synthesis.environments.archetypes import get_archetype
from synthesis.environments.archetypes.naming import NamingError
from synthesis.models import EnvSpec, Topic


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
        from synthesis.environments.archetypes.workspace import validate_workspace_spec

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
        if tool.operation == "create":
            for f in entity.fields:
                settable = {p.field for p in tool.params}
                if f.name in settable or f.name == entity.status_field or f.name in tool.derived:
                    continue
                problems.append(f"{where}: field {f.name!r} is neither a parameter nor derived")
        for pre in tool.preconditions:
            for name in (pre.param, pre.other):
                if name and name not in params:
                    problems.append(f"{where}: precondition names unknown parameter {name!r}")
            if pre.kind == "status_in" and tool.operation not in ("transition", "update"):
                problems.append(f"{where}: status_in applies to an existing record only")
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
