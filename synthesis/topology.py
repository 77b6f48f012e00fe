"""The tool-dependency graph of an environment spec: which tool produces what another consumes."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.models import EnvSpec, ToolSpec

# Operations whose result carries ids of their entity (list/find return whole records, create
# returns the new one). A get needs the id already, but its record reveals the ids in its
# reference fields, so it can still feed a later step through those.
PRODUCING_OPERATIONS = ("list", "find", "get", "create")

EdgeKind = Literal["data", "state"]


@dataclass(frozen=True)
class ToolNode:
    name: str
    kind: str
    operation: str
    entity: str
    consumes: tuple[tuple[str, str], ...]
    """(param, entity) for every parameter that takes an id."""
    produces: tuple[str, ...]
    """Entities whose ids appear in this tool's result."""
    from_statuses: tuple[str, ...] = ()
    to_status: str | None = None


@dataclass(frozen=True)
class ToolEdge:
    """`dst` depends on `src`: src yields an id dst consumes (data) or a state dst requires."""

    src: str
    dst: str
    kind: EdgeKind
    entity: str
    param: str | None = None
    status: str | None = None
    why: str = ""


@dataclass
class ToolGraph:
    env_id: str
    nodes: dict[str, ToolNode]
    edges: list[ToolEdge] = field(default_factory=list)

    def predecessors(self, tool: str, kind: EdgeKind | None = None) -> list[ToolEdge]:
        return [e for e in self.edges if e.dst == tool and (kind is None or e.kind == kind)]

    def mutations(self) -> list[str]:
        return sorted(n.name for n in self.nodes.values() if n.kind == "mutate")

    def lookups(self, entity: str) -> list[str]:
        """Query tools that produce ids of `entity` without already needing one of its ids."""
        return sorted(
            n.name
            for n in self.nodes.values()
            if n.kind == "query" and n.operation in ("list", "find") and n.entity == entity
        )

    def goal_weight(self, tool: str) -> float:
        # A mutation that needs more produced inputs makes a longer, more instructive chain;
        # +1 keeps dependency-free mutations possible, just rarer.
        return 1.0 + len(self.predecessors(tool))

    def depends_on(self, dst: str, src: str) -> bool:
        return any(e.src == src and e.dst == dst for e in self.edges)

    def to_dict(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "nodes": [vars(self.nodes[name]) for name in sorted(self.nodes)],
            "edges": [vars(e) for e in self.edges],
        }

    def to_networkx(self) -> Any:
        import networkx as nx  # lazily: the planner itself never needs it

        g = nx.MultiDiGraph()
        for node in self.nodes.values():
            g.add_node(node.name, **vars(node))
        for e in self.edges:
            g.add_edge(e.src, e.dst, key=f"{e.kind}:{e.entity}:{e.param or e.status}", **vars(e))
        return g


def id_params(tool: ToolSpec) -> dict[str, str]:
    """Parameter name -> entity, for every parameter of `tool` that takes an id."""
    out: dict[str, str] = {}
    for p in tool.params:
        if p.ref:
            out[p.name] = p.ref
        elif p.name == f"{tool.entity}_id" and tool.operation in ("get", "transition", "update"):
            out[p.name] = tool.entity
    return out


def target_param(tool: ToolSpec) -> str | None:
    """The parameter naming the record a get/transition/update acts on."""
    if tool.operation not in ("get", "transition", "update"):
        return None
    ids = id_params(tool)
    if f"{tool.entity}_id" in ids:
        return f"{tool.entity}_id"
    return next((name for name, entity in ids.items() if entity == tool.entity), None)


def from_statuses(spec: EnvSpec, tool: ToolSpec) -> tuple[str, ...]:
    """Statuses a transition may start from: its status_in guard, else the entity's table."""
    if tool.operation != "transition":
        return ()
    for pre in tool.preconditions:
        if pre.kind == "status_in":
            return tuple(pre.values)
    entity = spec.entity(tool.entity)
    return tuple(sorted(s for s, to in entity.transitions.items() if tool.target_status in to))


def _produces(spec: EnvSpec, tool: ToolSpec) -> tuple[str, ...]:
    if tool.operation not in PRODUCING_OPERATIONS + ("transition", "update"):
        return ()
    entity = spec.entity(tool.entity)
    out = {tool.entity} | {f.ref for f in entity.fields if f.type == "ref" and f.ref}
    return tuple(sorted(out))


def build_tool_graph(spec: EnvSpec) -> ToolGraph:
    """Data-flow and state edges between the tools of `spec` (pure, deterministic)."""
    nodes: dict[str, ToolNode] = {}
    for tool in spec.tools:
        nodes[tool.name] = ToolNode(
            name=tool.name,
            kind=tool.kind,
            operation=tool.operation,
            entity=tool.entity,
            consumes=tuple(sorted(id_params(tool).items())),
            produces=_produces(spec, tool),
            from_statuses=from_statuses(spec, tool),
            to_status=tool.target_status,
        )
    edges: list[ToolEdge] = []
    for tool in spec.tools:
        edges.extend(_data_edges(spec, tool))
        edges.extend(_state_edges(spec, tool))
    edges.sort(key=lambda e: (e.dst, e.kind, e.src, e.entity, e.param or "", e.status or ""))
    return ToolGraph(env_id=spec.env_id, nodes=nodes, edges=_dedupe(edges))


def _data_edges(spec: EnvSpec, tool: ToolSpec) -> Iterable[ToolEdge]:
    for param, entity in sorted(id_params(tool).items()):
        for src in spec.tools:
            if src.name == tool.name or src.entity != entity:
                continue
            if src.operation not in PRODUCING_OPERATIONS:
                continue
            yield ToolEdge(
                src=src.name,
                dst=tool.name,
                kind="data",
                entity=entity,
                param=param,
                why=f"{src.name} yields the {entity} id that {tool.name}.{param} takes",
            )


def _state_edges(spec: EnvSpec, tool: ToolSpec) -> Iterable[ToolEdge]:
    # Own-status ordering: a transition out of S needs a record that some tool put into S.
    for status in from_statuses(spec, tool):
        for src in spec.tools:
            if src.entity != tool.entity or src.name == tool.name:
                continue
            entity = spec.entity(src.entity)
            if (src.operation == "create" and entity.initial_status == status) or (
                src.operation == "transition" and src.target_status == status
            ):
                yield ToolEdge(
                    src=src.name,
                    dst=tool.name,
                    kind="state",
                    entity=tool.entity,
                    status=status,
                    why=f"{tool.name} moves a {entity.name} out of {status!r}",
                )
    # Guards on referenced records: a create that needs slot.status == 'available' depends on
    # whatever sets a slot's status to 'available' (a cancel effect, a transition).
    params = {p.name: p for p in tool.params}
    for pre in tool.preconditions:
        if pre.kind not in ("ref_field_equals", "ref_field_gte_param") or not pre.param:
            continue
        ref_entity = params[pre.param].ref if pre.param in params else None
        if not ref_entity:
            continue
        for src in spec.tools:
            if src.name == tool.name:
                continue
            if _writes_ref_field(spec, src, ref_entity, pre.field, pre.kind, pre.value):
                yield ToolEdge(
                    src=src.name,
                    dst=tool.name,
                    kind="state",
                    entity=ref_entity,
                    param=pre.param,
                    status=str(pre.value) if pre.value is not None else None,
                    why=f"{tool.name} requires {ref_entity}.{pre.field} that {src.name} restores",
                )


def _writes_ref_field(
    spec: EnvSpec, src: ToolSpec, entity: str, field_name: str | None, kind: str, value: Any
) -> bool:
    owner = spec.entity(src.entity)
    refs = {f.name: f.ref for f in owner.fields if f.type == "ref"}
    for eff in src.effects:
        if refs.get(eff.via) != entity or eff.field != field_name:
            continue
        if kind == "ref_field_equals" and eff.kind == "set_ref_field" and eff.value == value:
            return True
        if kind == "ref_field_gte_param" and eff.kind == "adjust_ref_field" and eff.sign > 0:
            return True
    # A transition of the referenced entity itself into the required status also satisfies it.
    target = spec.entity(entity)
    return (
        kind == "ref_field_equals"
        and src.entity == entity
        and src.operation == "transition"
        and target.status_field == field_name
        and src.target_status == value
    )


def _dedupe(edges: list[ToolEdge]) -> list[ToolEdge]:
    seen: set[tuple[Any, ...]] = set()
    out = []
    for e in edges:
        key = (e.src, e.dst, e.kind, e.entity, e.param, e.status)
        if key not in seen:
            seen.add(key)
            out.append(e)
    return out
