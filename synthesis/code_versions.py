"""What a stage's code version is made of: the engine modules it can run, found by following
imports from what the stage calls, and the files those modules run in the sandbox or ship.

A version kept by hand goes stale the day someone adds a module and forgets the list (a task
family missing from the `scenarios` list once let a rebuild publish tasks made by old code
under the new code's name). So the closure is computed: every `import` statement of a module,
wherever it sits (a lazy import inside a function runs when the stage calls that function),
followed through the engine packages, with each module's parent packages (importing
`a.b.c` runs `a/__init__.py` and `a/b/__init__.py`, where registries import their members).
Imports under `if TYPE_CHECKING:` never run and are not followed.

A module that runs or ships a file it does not import (the sandbox worker, the shipped reward
module, the docker backend's container guard) names it in a module-level `VERSIONED_FILES`
tuple of paths relative to the module's folder (a folder stands for every file under it);
the closure covers those files too. `tests/synthesis/test_code_versions.py` holds every
engine file that nothing imports to being named so.

Everything is read from source, never imported, so the code of another checkout (a test's
edited copy) is versioned exactly as this one.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from synthesis.config import REPO_ROOT
from synthesis.hashing import sha256_bytes, sha256_text

# The packages a stage's code lives in. `assets/` and `orchestration/` sit above them: their
# own code is not per stage (and Dagster loads it anew with the code location).
ENGINE_PACKAGES = ("synthesis", "sandboxes", "quality")
DECLARATION = "VERSIONED_FILES"
# Bytecode under a VERSIONED_FILES folder is not code of ours.
_SKIPPED_SUFFIXES = (".pyc", ".pyo")


@dataclass(frozen=True)
class CodeClosure:
    """The engine modules and files (repository-relative) a stage's code version covers."""

    root: Path
    modules: tuple[str, ...]
    files: tuple[str, ...]

    def version(self) -> str:
        digests = (f"{name}\0{_file_digest(self.root / name)}" for name in self.files)
        return sha256_text("\n".join(digests))[:16]


def code_closure(
    entries: Iterable[str], extra_files: Iterable[str] = (), root: Path = REPO_ROOT
) -> CodeClosure:
    """Every engine module reachable from `entries` by import, with the files they declare;
    `extra_files` (repository-relative) are added as they are."""
    code = _Checkout(root)
    seen: set[str] = set()
    pending = [code.engine_module(name) for name in entries]
    while pending:
        name = pending.pop()
        if name not in seen:
            seen.add(name)
            pending.extend(m for m in code.imports_of(name) if m not in seen)
    files = {code.relative(code.module_file(name)) for name in seen}
    for name in seen:
        files.update(code.declared_files(name))
    files.update(code.relative(p) for e in extra_files for p in code.expand(root / e))
    return CodeClosure(root, tuple(sorted(seen)), tuple(sorted(files)))


def code_version(*entries: str, root: Path = REPO_ROOT) -> str:
    """A 16-hex code version of everything `code_closure(entries)` covers."""
    return code_closure(entries, root=root).version()


def function_entries(
    module: str, function: str, follow: Iterable[str] = (), root: Path = REPO_ROOT
) -> tuple[str, ...]:
    """The engine modules function `function` of `module` calls into, read from its source:
    every name its definition uses (body, defaults, annotations; not its decorators) that
    was imported from the engine, at module level or inside the definition; followed through
    the module's own definitions it uses, and through what it imports from the `follow`
    packages (an asset's shared helpers), which are read the same way. A stage's code
    version is `code_version(*function_entries(...))`, with nothing listed by hand."""
    code = _Checkout(root)
    follow = tuple(follow)
    found: set[str] = set()
    seen: set[tuple[str, str]] = set()
    pending = [(module, function)]
    while pending:
        where, name = pending.pop()
        if (where, name) in seen:
            continue
        seen.add((where, name))
        scope = code.scope(where)
        node = scope.definitions.get(name)
        if node is None:
            raise LookupError(f"{where} defines no {name!r}")
        local = _local_imports(node, where, scope.is_package)
        imports = {**scope.imports, **local}
        for used in _names_used(node) | set(local):
            if used in imports:
                source, attribute = imports[used]
                submodule = f"{source}.{attribute}" if attribute else source
                top = source.split(".")[0]
                if top in ENGINE_PACKAGES:
                    found.add(submodule if code.is_module(submodule) else source)
                elif top in follow and attribute and not code.is_module(submodule):
                    pending.append((source, attribute))
            elif used in scope.definitions:
                pending.append((where, used))
    return tuple(sorted(found))


def import_statements(source: str) -> list[ast.Import | ast.ImportFrom]:
    """The import statements of `source` that can run, wherever they sit, skipping those
    under `if TYPE_CHECKING:`.

    Read line by line rather than by parsing the module: a stage's closure is read each time
    the code location loads, and parsing the engine costs about 0.7 s there against a few
    milliseconds. An import statement always starts a logical line; a line of a docstring
    that reads like one is at worst followed too (a version that covers a little more is
    safe), and the tests hold this to the parser's answer for every engine module."""
    found: list[ast.Import | ast.ImportFrom] = []
    lines = source.splitlines()
    skipping_deeper_than: int | None = None
    i = 0
    while i < len(lines):
        line = lines[i]
        i += 1
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        indent = len(line) - len(line.lstrip())
        if skipping_deeper_than is not None:
            if indent > skipping_deeper_than:
                continue
            skipping_deeper_than = None
        if _TYPE_CHECKING.match(line):
            skipping_deeper_than = indent
            continue
        if _IMPORT_LINE.match(line):
            statement, i = _logical_line(stripped, lines, i)
            found.extend(
                n for n in _parsed(statement) if isinstance(n, ast.Import | ast.ImportFrom)
            )
    return found


_IMPORT_LINE = re.compile(r"[ \t]*(?:import|from)[ \t]")
_TYPE_CHECKING = re.compile(r"[ \t]*if[ \t]+(?:typing\.)?TYPE_CHECKING[ \t]*:")
_VERSIONED_LINE = re.compile(rf"{DECLARATION}[ \t]*(?::[^=]*)?=")


def _logical_line(first: str, lines: list[str], i: int) -> tuple[str, int]:
    """`first` joined with the lines that continue it (open brackets, backslashes)."""
    statement = _code_of(first)
    while i < len(lines) and (
        statement.count("(") > statement.count(")") or statement.endswith("\\")
    ):
        statement = statement.rstrip("\\") + " " + _code_of(lines[i])
        i += 1
    return statement, i


def _code_of(line: str) -> str:
    # Import statements hold no strings, so a "#" starts a comment (a linter directive, say).
    return line.split("#", 1)[0].strip()


def _parsed(statement: str) -> list[ast.stmt]:
    try:
        return ast.parse(statement).body
    except SyntaxError:
        return []  # prose in a docstring


class _Checkout:
    """The engine's source files under one repository root."""

    def __init__(self, root: Path):
        self.root = root.resolve()

    def relative(self, path: Path) -> str:
        return path.resolve().relative_to(self.root).as_posix()

    def module_file(self, name: str) -> Path:
        base = self.root.joinpath(*name.split("."))
        for candidate in (base / "__init__.py", base.with_suffix(".py")):
            if candidate.is_file():
                return candidate
        raise ModuleNotFoundError(f"{name} is not a module under {self.root}")

    def is_module(self, name: str) -> bool:
        base = self.root.joinpath(*name.split("."))
        return (base / "__init__.py").is_file() or base.with_suffix(".py").is_file()

    def engine_module(self, name: str) -> str:
        if name.split(".")[0] not in ENGINE_PACKAGES:
            raise ValueError(
                f"{name!r}: a stage's code version follows the engine's modules only "
                f"({', '.join(ENGINE_PACKAGES)}); name the engine module the stage calls"
            )
        self.module_file(name)
        return name

    def imports_of(self, name: str) -> tuple[str, ...]:
        """The engine modules importing `name` can run, its parent packages included."""
        path = self.module_file(name)
        stat = path.stat()
        found = set(_parents(name))
        for source, attribute in _imported(path, stat.st_mtime_ns, stat.st_size, name):
            for candidate in (source, f"{source}.{attribute}" if attribute else ""):
                # `from pkg import sub` runs the submodule `pkg.sub` when there is one.
                if candidate.split(".")[0] in ENGINE_PACKAGES and self.is_module(candidate):
                    found.update((candidate, *_parents(candidate)))
        found.discard(name)
        return tuple(sorted(found))

    def declared_files(self, name: str) -> set[str]:
        """The files module `name` runs or ships without importing them."""
        path = self.module_file(name)
        declared = set()
        for relative in _declared(path, path.stat().st_mtime_ns):
            declared.update(self.relative(p) for p in self.expand(path.parent / relative))
        return declared

    def expand(self, path: Path) -> set[Path]:
        if path.is_file():
            return {path}
        if not path.is_dir():
            raise FileNotFoundError(f"{path} is named in a {DECLARATION} but does not exist")
        return {
            p
            for p in path.rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in _SKIPPED_SUFFIXES
        }

    def scope(self, module: str) -> _Scope:
        path = self.module_file(module)
        return _scope(path, path.stat().st_mtime_ns, module)


# Reading a file is keyed by its stat, so an edited file is read again in the same process.
@cache
def _imported(path: Path, _mtime_ns: int, _size: int, name: str) -> tuple[tuple[str, str], ...]:
    """(module, attribute) for every import statement of module `name` that can run."""
    is_package = path.name == "__init__.py"
    pairs: set[tuple[str, str]] = set()
    for statement in import_statements(path.read_text(encoding="utf-8")):
        if isinstance(statement, ast.Import):
            pairs.update((alias.name, "") for alias in statement.names)
        else:
            source = _absolute(name, is_package, statement.module, statement.level)
            pairs.update((source, alias.name) for alias in statement.names)
    return tuple(sorted(pairs))


@cache
def _declared(path: Path, _mtime_ns: int) -> tuple[str, ...]:
    """The literal VERSIONED_FILES of the module at `path` (relative to its folder)."""
    text = path.read_text(encoding="utf-8")
    if DECLARATION not in text:
        return ()
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if _VERSIONED_LINE.match(line):
            statement, _ = _logical_line(line.strip(), lines, i + 1)
            try:
                value = ast.literal_eval(_parsed(statement)[0].value)
            except (IndexError, ValueError, AttributeError) as exc:
                raise ValueError(
                    f"{path}: {DECLARATION} must be a literal tuple of paths relative to "
                    f"the module's folder"
                ) from exc
            return tuple(str(v) for v in value)
    return ()


def _file_digest(path: Path) -> str:
    stat = path.stat()
    return _digest(path, stat.st_mtime_ns, stat.st_size)


@cache
def _digest(path: Path, _mtime_ns: int, _size: int) -> str:
    return sha256_bytes(path.read_bytes())


def _absolute(name: str, is_package: bool, module: str | None, level: int) -> str:
    if level == 0:
        return module or ""
    package = name.split(".") if is_package else name.split(".")[:-1]
    base = package[: len(package) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _parents(name: str) -> list[str]:
    parts = name.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


@dataclass(frozen=True)
class _Scope:
    # name → (module it was imported from, attribute or "" for `import module`)
    imports: dict[str, tuple[str, str]]
    # name → the module-level statement defining it (def, class, assignment)
    definitions: dict[str, ast.AST]
    is_package: bool


@cache
def _scope(path: Path, _mtime_ns: int, module: str) -> _Scope:
    tree = ast.parse(path.read_bytes(), filename=str(path))
    imports: dict[str, tuple[str, str]] = {}
    definitions: dict[str, ast.AST] = {}
    is_package = path.name == "__init__.py"
    for node in tree.body:
        imports.update(_bindings(node, module, is_package))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions[node.name] = node
        elif isinstance(node, ast.Assign | ast.AnnAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for name in ast.walk(target):
                    if isinstance(name, ast.Name):
                        definitions[name.id] = node
    return _Scope(imports, definitions, is_package)


def _local_imports(node: ast.AST, module: str, is_package: bool) -> dict[str, tuple[str, str]]:
    found: dict[str, tuple[str, str]] = {}
    for sub in ast.walk(node):
        found.update(_bindings(sub, module, is_package))
    return found


def _bindings(node: ast.AST, module: str, is_package: bool) -> dict[str, tuple[str, str]]:
    """name → (module, attribute) for the names an import statement binds."""
    if isinstance(node, ast.Import):
        # `import a.b` binds `a` and runs `a.b`: the whole name is what it brings.
        return {(a.asname or a.name.split(".")[0]): (a.name, "") for a in node.names}
    if isinstance(node, ast.ImportFrom):
        source = _absolute(module, is_package, node.module, node.level)
        return {(a.asname or a.name): (source, a.name) for a in node.names}
    return {}


def _names_used(node: ast.AST) -> set[str]:
    """Global names a definition reads: its parameters and the names it assigns are its own
    (an asset's parameter `mined_topics` is an input, not the function of that name), and
    its decorators are left out (they configure the stage, they do not run it)."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        roots = [child for child in ast.iter_child_nodes(node) if child not in node.decorator_list]
    else:
        roots = [node]
    loaded: set[str] = set()
    local: set[str] = set()
    for root in roots:
        for sub in ast.walk(root):
            if isinstance(sub, ast.Name):
                (loaded if isinstance(sub.ctx, ast.Load) else local).add(sub.id)
            elif isinstance(sub, ast.arg):
                local.add(sub.arg)
    return loaded - local
