"""The libraries an environment imports when its module loads, read from its source text.

A worker imports them before the environment's own code, under the entropy of seed 0 (see
sandboxes/inside/entropy.py, `begin`): what a library reads of the clock or of randomness while
it loads is then the same in every episode, whatever the episode's seed, so a zygote may load
them once and fork its workers from there (pandas, pydantic and their kind cost ~0.5 s per
episode otherwise). Only the import statements that run when a module loads count (module level,
class bodies, `try`/`if` blocks, not function bodies nor `if TYPE_CHECKING:`), followed through
the environment's own package to every module of it that loads; a library is the top-level name
of an import outside that package and outside the standard library. Reading is all: nothing
here imports or runs what it reads.
"""

from __future__ import annotations

import ast
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

# Enough for any package's load graph; a package larger than this keeps what was found.
_MAX_FILES = 400
_STDLIB = frozenset(sys.stdlib_module_names) | {"__future__"}


def code_libraries(code: str) -> tuple[str, ...]:
    """The libraries a single source text imports at module level, in the order it does."""
    return _code_libraries(code)


@functools.lru_cache(maxsize=64)
def _code_libraries(code: str) -> tuple[str, ...]:
    found: list[str] = []
    for name, level in _loaded_imports(_parse(code)):
        top = name.split(".")[0]
        if level == 0 and top and top not in _STDLIB and top not in found:
            found.append(top)
    return tuple(found)


def module_libraries(module: str, package_dir: Path) -> tuple[str, ...]:
    """The libraries `module` (of the package at `package_dir`, a folder or a single file) and
    the modules of its package that load with it import, in the order they are met."""
    stamp = _stamp(package_dir)
    return _module_libraries(module, str(package_dir), stamp)


def _stamp(path: Path) -> int:
    # A package edited while a process lives (a warm run host) is read again.
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return 0


@functools.lru_cache(maxsize=64)
def _module_libraries(module: str, package_dir: str, stamp: int) -> tuple[str, ...]:
    root = Path(package_dir)
    top = module.split(".")[0]
    found: list[str] = []
    seen: set[str] = set()
    pending = [*_parents(module), module]
    while pending and len(seen) < _MAX_FILES:
        name = pending.pop(0)
        if name in seen:
            continue
        seen.add(name)
        path = _module_file(root, top, name)
        if path is None:
            continue
        is_package = path.name == "__init__.py"
        for imported, level in _loaded_imports(_parse(_read(path))):
            absolute = _absolute(name, is_package, imported, level)
            if absolute is None:
                continue
            first = absolute.split(".")[0]
            if first == top:
                # The package's own module, its parents, and (from a import b) a submodule b.
                pending += [*_parents(absolute), absolute]
            elif first not in _STDLIB and first not in found:
                found.append(first)
    return tuple(found)


def _loaded_imports(tree: ast.AST | None) -> Iterator[tuple[str, int]]:
    """(dotted name, level) of each import that runs when the module loads; `from a import b`
    gives a.b as well as a, since b may be a submodule."""
    if tree is None:
        return
    stack = list(reversed(getattr(tree, "body", [])))
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, 0
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            yield base, node.level
            for alias in node.names:
                if alias.name != "*":
                    yield f"{base}.{alias.name}" if base else alias.name, node.level
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            continue
        elif isinstance(node, ast.If) and _is_type_checking(node.test):
            stack.extend(reversed(node.orelse))
        else:
            children = [
                child
                for child in ast.iter_child_nodes(node)
                if isinstance(child, (ast.stmt, ast.excepthandler))
            ]
            stack.extend(reversed(children))


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _absolute(name: str, is_package: bool, imported: str, level: int) -> str | None:
    if level == 0:
        return imported or None
    parts = name.split(".")
    package = parts if is_package else parts[:-1]
    if level - 1 > len(package) - 1:
        return None
    base = package[: len(package) - (level - 1)]
    return ".".join([*base, imported] if imported else base) or None


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


def _module_file(root: Path, top: str, name: str) -> Path | None:
    """The file of `name` under the package folder `root` (named `top`), or `root` itself when
    the package is a single module file."""
    if root.is_file():
        return root if name == top else None
    rest = name.split(".")[1:]
    base = root.joinpath(*rest)
    candidates = [base / "__init__.py"] + ([base.with_suffix(".py")] if rest else [])
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    return None


def _parse(text: str | None) -> ast.AST | None:
    if text is None:
        return None
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError):
        return None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
