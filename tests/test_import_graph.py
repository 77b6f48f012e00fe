"""Dependencies point one way (docs/architecture.md, "Layers and folders"):
orchestration → assets → (quality, synthesis) → sandboxes. Read from every module's import
statements, wherever they sit (a lazy import runs too), without importing anything."""

from __future__ import annotations

import ast
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from synthesis.code_versions import import_statements

REPO = Path(__file__).resolve().parents[1]
PACKAGES = ("orchestration", "assets", "quality", "synthesis", "sandboxes")


@cache
def modules() -> dict[str, Path]:
    """Every module of the layered packages by dotted name (a package by its own name)."""
    found = {}
    for package in PACKAGES:
        for path in (REPO / package).rglob("*.py"):
            parts = list(path.relative_to(REPO).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


@cache
def imports(module: str) -> frozenset[str]:
    """The modules of ours that importing `module` (or calling its functions) imports."""
    path = modules()[module]
    package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
    named: list[str] = []
    for statement in import_statements(path.read_text(encoding="utf-8")):
        if isinstance(statement, ast.Import):
            named += [alias.name for alias in statement.names]
            continue
        base = statement.module or ""
        if statement.level:
            base = ".".join([*package[: len(package) - statement.level + 1], base]).rstrip(".")
        named += [f"{base}.{alias.name}" for alias in statement.names]
    return frozenset(m for name in named if (m := _ours(name)) is not None and m != module)


def _ours(name: str) -> str | None:
    """The module of ours `name` is or is in (`pkg.mod.attribute` → `pkg.mod`), if any."""
    while name and name not in modules():
        name = name.rpartition(".")[0]
    return name or None


def reachable(start: str) -> dict[str, str]:
    """Each module importing `start` imports in turn, with the module that imports it."""
    via: dict[str, str] = {}
    pending = [start]
    while pending:
        current = pending.pop()
        for found in imports(current):
            if found not in via and found != start:
                via[found] = current
                pending.append(found)
    return via


def path_to(start: str, end: str, via: dict[str, str]) -> str:
    chain = [end]
    while chain[-1] != start:
        chain.append(via[chain[-1]])
    return " → ".join(reversed(chain))


def under(package: str) -> list[str]:
    return sorted(m for m in modules() if m == package or m.startswith(package + "."))


def test_assets_never_import_orchestration_not_even_through_the_engine():
    found = []
    for module in under("assets"):
        via = reachable(module)
        found += [path_to(module, m, via) for m in via if m.split(".")[0] == "orchestration"]
    assert found == []


def test_sandboxes_import_nothing_above_them():
    above = ("synthesis", "quality", "assets", "orchestration")
    found = [
        f"{module} → {other}"
        for module in under("sandboxes")
        for other in sorted(imports(module))
        if other.split(".")[0] in above
    ]
    assert found == []


def test_orchestration_has_no_import_circle():
    own = under("orchestration")
    graph = {m: sorted(i for i in imports(m) if i in own) for m in own}
    assert circles(graph) == []


def circles(graph: dict[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in graph.get(node, ()):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            component = []
            while not component or component[-1] != node:
                component.append(stack.pop())
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_the_readings_find_imports_and_circles():
    """What the tests above rely on: relative and lazy imports are read, a circle is found."""
    assert "orchestration.fastrun.lifeline" in imports("orchestration.definitions")
    assert "orchestration.build" in imports("orchestration.build_process")  # a lazy import
    assert circles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
