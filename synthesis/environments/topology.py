"""The tool-dependency graph of an environment: which tool produces what another consumes.

Built from the environment model (synthesis.environments.model), so compiled and inferred
environments get the same graph: exact for a spec, from observed producers for inferred code.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.environments.model import EnvModel, ToolModel

# Operations whose result carries ids of their entity (list/find return whole records, create
# returns the new one). A get needs the id already, but its record reveals the ids in its
# reference fields, so it can still feed a later step through those.
PRODUCING_OPERATIONS = ("list", "find", "get", "create", "search", "compare")

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
            if n.kind == "query"
            and n.operation in ("list", "find", "search")
            and n.entity == entity
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


def id_params(tool: ToolModel) -> dict[str, str]:
    """Parameter name -> entity, for every parameter of `tool` that takes an id."""
    return tool.id_params()


def target_param(tool: ToolModel) -> str | None:
    """The parameter naming the record a get/transition/update acts on."""
    if tool.operation not in ("get", "transition", "update"):
        return None
    ids = id_params(tool)
    if f"{tool.entity}_id" in ids:
        return f"{tool.entity}_id"
    return next((name for name, entity in ids.items() if entity == tool.entity), None)


def from_statuses(model: EnvModel, tool: ToolModel) -> tuple[str, ...]:
    """Statuses a transition may start from: its status_in guard, else the entity's table."""
    if tool.operation != "transition":
        return ()
    for pre in tool.preconditions:
        if pre.kind == "status_in":
            return tuple(pre.values)
    if tool.entity is None or not model.has_entity(tool.entity):
        return ()
    entity = model.entity(tool.entity)
    return tuple(sorted(s for s, to in entity.transitions.items() if tool.target_status in to))


def build_tool_graph(model: EnvModel) -> ToolGraph:
    """Data-flow and state edges between the tools of `model` (pure, deterministic)."""
    nodes: dict[str, ToolNode] = {}
    for tool in model.tools:
        nodes[tool.name] = ToolNode(
            name=tool.name,
            kind=tool.kind,
            operation=tool.operation or "action",
            entity=tool.entity or "",
            consumes=tuple(sorted(id_params(tool).items())),
            produces=tuple(tool.produces),
            from_statuses=from_statuses(model, tool),
            to_status=tool.target_status,
        )
    edges: list[ToolEdge] = []
    for tool in model.tools:
        edges.extend(_data_edges(model, tool))
        edges.extend(_state_edges(model, tool))
    edges.sort(key=lambda e: (e.dst, e.kind, e.src, e.entity, e.param or "", e.status or ""))
    return ToolGraph(env_id=model.env_id, nodes=nodes, edges=_dedupe(edges))


def yields_ids_of(model: EnvModel, src: ToolModel, entity: str) -> bool:
    """Whether `src` hands out ids of `entity` a later step can consume.

    A compiled tool does when it lists, finds, gets or creates records of that entity; for
    inferred code, whatever probing saw in its results is the evidence.
    """
    if model.exact:
        return src.entity == entity and src.operation in PRODUCING_OPERATIONS
    return entity in src.produces


def _data_edges(model: EnvModel, tool: ToolModel) -> Iterable[ToolEdge]:
    for param, entity in sorted(id_params(tool).items()):
        for src in model.tools:
            if src.name == tool.name or not yields_ids_of(model, src, entity):
                continue
            yield ToolEdge(
                src=src.name,
                dst=tool.name,
                kind="data",
                entity=entity,
                param=param,
                why=f"{src.name} yields the {entity} id that {tool.name}.{param} takes",
            )


def _state_edges(model: EnvModel, tool: ToolModel) -> Iterable[ToolEdge]:
    # Own-status ordering: a transition out of S needs a record that some tool put into S.
    for status in from_statuses(model, tool):
        for src in model.tools:
            if src.entity != tool.entity or src.name == tool.name:
                continue
            entity = model.entity(src.entity)
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
        ref_entity = params[pre.param].takes if pre.param in params else None
        if not ref_entity:
            continue
        for src in model.tools:
            if src.name == tool.name:
                continue
            if _writes_ref_field(model, src, ref_entity, pre.field, pre.kind, pre.value):
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
    model: EnvModel, src: ToolModel, entity: str, field_name: str | None, kind: str, value: Any
) -> bool:
    if not src.effects and src.operation != "transition":
        return False
    owner = model.entity(src.entity)
    refs = {f.name: f.ref for f in owner.fields if f.type == "ref"}
    for eff in src.effects:
        if refs.get(eff.via) != entity or eff.field != field_name:
            continue
        if kind == "ref_field_equals" and eff.kind == "set_ref_field" and eff.value == value:
            return True
        if kind == "ref_field_gte_param" and eff.kind == "adjust_ref_field" and eff.sign > 0:
            return True
    # A transition of the referenced entity itself into the required status also satisfies it.
    target = model.entity(entity)
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
