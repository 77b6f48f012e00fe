"""The task modules import one way: tasks sits below rollouts and the LLM stages, families
never import the dispatcher that draws them, and no two task modules import each other."""

from __future__ import annotations

import ast
from pathlib import Path

from synthesis.config import REPO_ROOT

TASKS = REPO_ROOT / "synthesis" / "tasks"
DISPATCHER = "synthesis.tasks.scenarios"
# The stages above tasks: they run, reword or ship tasks, so tasks may not import them.
ABOVE = ("synthesis.rollouts", "synthesis.llm", "synthesis.export", "quality", "assets")


def _module(path: Path) -> str:
    parts = path.relative_to(REPO_ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: Path) -> set[str]:
    """Every module `path` imports (type-only imports too: a circle in types is still one)."""
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            out.update(f"{node.module}.{alias.name}" for alias in node.names)
    return out


def _graph() -> dict[str, set[str]]:
    modules = {_module(p): p for p in TASKS.rglob("*.py")}
    return {name: {m for m in _imports(p) if m in modules} - {name} for name, p in modules.items()}


def test_tasks_import_nothing_from_the_stages_above_them():
    wrong = {
        (_module(p), m) for p in TASKS.rglob("*.py") for m in _imports(p) if m.startswith(ABOVE)
    }
    assert wrong == set()


def test_no_task_module_imports_the_dispatcher():
    assert {name for name, deps in _graph().items() if DISPATCHER in deps} == set()


def test_task_modules_import_each_other_without_a_circle():
    graph = _graph()
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, " -> ".join((*path, name))
        if name in done:
            return
        for dep in sorted(graph[name]):
            visit(dep, (*path, name))
        done.add(name)

    for name in sorted(graph):
        visit(name, ())
