"""Foreign environments: classes written elsewhere (BFCL, EnvScaler, EnvCraft, your own) as sources.

A source is written the way people point at code: `path/to/file.py`, `file.py:Class`, a
directory of `.py` files, or `package.module:Class` importable from the project's
environment. Resolving one only reads and parses files; nothing is imported or run here.
A file with several classes takes the named class, else the one that holds the state (the
class with the most tools). Source text travels with the environment; a module source is
imported by name inside the sandbox instead, with its package mounted read-only, because
such classes import their own package.
"""

from __future__ import annotations

import ast
import importlib.util
import re
import sys
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from synthesis.environments.analysis import AnalysisError, analyze_tools
from synthesis.hashing import sha256_text
from synthesis.models import Environment, EnvOrigin


class SourceError(ValueError):
    """A source that cannot be resolved (no such file, module or class); says which."""


@dataclass(frozen=True)
class ForeignSource:
    """One environment class to build, located but not yet loaded."""

    env_id: str
    class_name: str | None
    code: str
    path: str
    module: str | None = None
    states_path: str | None = None
    loader: str = "auto"
    dumper: str = "auto"

    def to_json(self) -> dict:
        return {
            "env_id": self.env_id,
            "class_name": self.class_name,
            "code": self.code,
            "path": self.path,
            "module": self.module,
            "states_path": self.states_path,
            "loader": self.loader,
            "dumper": self.dumper,
        }

    @classmethod
    def from_json(cls, data: dict) -> ForeignSource:
        return cls(**data)


def resolve_sources(spec: str, *, base: Path | None = None) -> list[ForeignSource]:
    """Every environment `spec` names (a directory names one per `.py` file in it).

    `SOURCE@STATEFILE` names the file its initial states are read from (JSON or TOML: one
    state, or a JSON list of them), instead of a `.states.json` beside the source."""
    text = spec.strip()
    if not text:
        raise SourceError("empty environment source")
    text, states = _split_states(text, base)
    if states is not None:
        sources = resolve_sources(text, base=base)
        return [replace(source, states_path=str(states)) for source in sources]
    path_part, _, class_part = text.rpartition(":") if _has_class(text) else (text, "", "")
    candidate = Path(path_part)
    if base is not None and not candidate.is_absolute():
        candidate = base / candidate
    if path_part.endswith(".py") or candidate.exists() or "/" in path_part:
        if candidate.is_dir():
            if class_part:
                raise SourceError(f"{spec}: a directory source cannot name a class")
            files = sorted(
                p for p in candidate.glob("*.py") if p.is_file() and not p.name.startswith("_")
            )
            if not files:
                raise SourceError(f"{spec}: no .py files in this directory")
            return [_file_source(p, None) for p in files]
        if not candidate.is_file():
            raise SourceError(f"{spec}: no such file")
        return [_file_source(candidate, class_part or None)]
    return [_module_source(path_part, class_part or None)]


def _split_states(text: str, base: Path | None) -> tuple[str, Path | None]:
    """(the source, its states file) of `SOURCE@STATEFILE`; (text, None) without one."""
    source, sep, states = text.rpartition("@")
    if not sep:
        return text, None
    if not source or not states:
        raise SourceError(f"{text}: expected SOURCE@STATEFILE, with both parts")
    path = Path(states).expanduser()
    if base is not None and not path.is_absolute():
        path = base / path
    if not path.is_file():
        raise SourceError(f"{text}: no states file {path}")
    if path.suffix.lower() not in (".json", ".toml"):
        raise SourceError(f"{text}: a states file is .json or .toml, not {path.name}")
    return source, path.resolve()


def _has_class(text: str) -> bool:
    head, sep, tail = text.rpartition(":")
    return bool(sep) and tail.isidentifier() and not re.match(r"^[A-Za-z]$", head)


def _file_source(path: Path, class_name: str | None) -> ForeignSource:
    try:
        code = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SourceError(f"{path}: cannot read: {exc}") from exc
    chosen = (
        _named_class(code, class_name, str(path)) if class_name else _state_class(code, str(path))
    )
    states = states_file_beside(path)
    return ForeignSource(
        env_id=env_id_for(path.stem, chosen),
        class_name=chosen,
        code=code,
        path=str(path.resolve()),
        states_path=str(states.resolve()) if states else None,
    )


def states_file_beside(path: Path) -> Path | None:
    """`<file>.states.json` beside a source: `shop.py.states.json`, or `shop.states.json`."""
    for candidate in (path.with_name(path.name + ".states.json"), path.with_suffix(".states.json")):
        if candidate.is_file():
            return candidate
    return None


def _module_source(module: str, class_name: str | None) -> ForeignSource:
    if not all(part.isidentifier() for part in module.split(".")):
        raise SourceError(f"{module!r} is neither a file nor a module name")
    origin = _module_file(module)
    code = origin.read_text(encoding="utf-8")
    chosen = _named_class(code, class_name, module) if class_name else _state_class(code, module)
    states = states_file_beside(origin)
    return ForeignSource(
        # A module's path is the package author's naming; the class is what people know.
        env_id=env_id_for(chosen, chosen),
        class_name=chosen,
        code=code,
        path=str(origin),
        module=module,
        states_path=str(states) if states else None,
    )


def _module_file(module: str) -> Path:
    """The module's source file, located without importing it (or its package) here."""
    parts = module.split(".")
    try:
        spec = importlib.util.find_spec(parts[0])
    except (ImportError, ValueError) as exc:
        raise SourceError(f"cannot locate module {module!r}: {exc}") from exc
    if spec is None:
        raise SourceError(f"no module named {parts[0]!r} in the project's environment")
    if len(parts) == 1:
        if spec.origin and spec.origin.endswith(".py"):
            return Path(spec.origin)
        raise SourceError(f"module {module!r} has no Python source file")
    locations = list(spec.submodule_search_locations or [])
    if not locations:
        raise SourceError(f"{parts[0]!r} is not a package, so {module!r} cannot exist")
    base = Path(locations[0]).joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    raise SourceError(f"no module named {module!r} (looked for {base}.py)")


def _named_class(code: str, class_name: str, where: str) -> str:
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SourceError(f"{where}: syntax error at line {exc.lineno}: {exc.msg}") from exc
    if not any(isinstance(n, ast.ClassDef) and n.name == class_name for n in tree.body):
        raise SourceError(f"{where}: no class named {class_name!r}")
    return class_name


def _state_class(code: str, where: str) -> str:
    """The class that holds the state: among public classes, the one with the most tools."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise SourceError(f"{where}: syntax error at line {exc.lineno}: {exc.msg}") from exc
    scored = []
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
            try:
                n_tools = len(analyze_tools(code, node.name))
            except AnalysisError:
                continue
            scored.append((n_tools, node.name))
    if not scored:
        raise SourceError(f"{where}: no public class with tools (public methods) found")
    scored.sort(reverse=True)
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        tied = sorted(name for n, name in scored if n == scored[0][0])
        raise SourceError(f"{where}: several classes could be the environment {tied}; name one")
    return scored[0][1]


def env_id_for(stem: str, class_name: str) -> str:
    """A readable, stable id: the file's name, plus the class's when they differ."""
    cls = snake(class_name)
    base = snake(stem)
    ident = base if base == cls else f"{base}-{cls}"
    return re.sub(r"[^a-z0-9_-]+", "_", ident)


def distinct_ids(
    sources: list[ForeignSource], taken: set[str], *, keep: set[int] = frozenset()
) -> list[ForeignSource]:
    """`sources` with ids that differ from each other and from `taken` (the build's other
    environments): two classes of the same name from different packages (ACEBench's
    `phone_platform.message:MessageApi` beside BFCL's `message_api:MessageAPI`, both
    `message_api`) each get their module's (or folder's) names before the class, one more
    part at a time until they differ. Sources whose ids are already unique keep them, so a
    build gains an environment without renaming the others, and so do those at the indexes
    in `keep` (a catalogue's topics name theirs). The same class named twice cannot be told
    apart and is left for the caller to refuse."""
    out = list(sources)
    given = Counter((s.module, s.path, s.class_name) for s in out)
    for _ in range(8):
        ids = Counter([s.env_id for s in out] + sorted(taken))
        renamed = False
        for index, source in enumerate(out):
            once = given[(source.module, source.path, source.class_name)] == 1
            if ids[source.env_id] > 1 and index not in keep and once:
                qualified = _qualified_id(source)
                renamed |= qualified != source.env_id
                out[index] = replace(source, env_id=qualified)
        if not renamed:
            break
    return out


def _qualified_id(source: ForeignSource) -> str:
    """The id with one more part of where the class lives before the class's name: the
    module's packages (or the file's folders), leaving out a module named as its class."""
    cls = snake(source.class_name or Path(source.path).stem)
    parts = (
        source.module.split(".")
        if source.module
        else [*Path(source.path).parent.parts[-6:], Path(source.path).stem]
    )
    if parts and snake(parts[-1]) == cls:
        parts = parts[:-1]
    for depth in range(1, len(parts) + 1):
        ident = re.sub(r"[^a-z0-9_-]+", "_", "-".join([*map(snake, parts[-depth:]), cls]))
        if len(ident) > len(source.env_id):
            return ident
    return source.env_id


def snake(name: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name)
    spaced = re.sub(r"([A-Z]+)([A-Z][a-z])", r"\1_\2", spaced)
    return re.sub(r"_+", "_", spaced).strip("_").lower()


def third_party_imports(code: str, own_package: str | None = None) -> list[str]:
    """Top-level modules the code imports beyond the standard library (and its own package)."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    names: set[str] = set()
    for node in _statements(tree.body):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    stdlib = set(sys.stdlib_module_names) | {"__future__"}
    return sorted(n for n in names if n not in stdlib and n != own_package)


# The fields of a node that hold statements (a class's, a function's, a block's, a handler's
# or a match case's body). An import is a statement, so a walk of these finds every one
# without visiting the expressions, nine in ten of a module's nodes.
_STATEMENT_FIELDS = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(body: list[ast.AST]) -> Iterator[ast.AST]:
    for node in body:
        yield node
        for name in _STATEMENT_FIELDS:
            inner = getattr(node, name, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def foreign_environment(source: ForeignSource) -> Environment:
    """The Environment for a foreign class: its code, AST-derived tools and how to load it.

    Quarantined (with the reason) when the class cannot be analysed; whether it loads, dumps
    its state and answers is for the sandbox to tell (initial states, audit).
    """
    own = source.module.split(".")[0] if source.module else None
    origin = EnvOrigin(
        kind="module" if source.module else "code",
        module=source.module,
        path=source.path,
        loader=source.loader,
        dumper=source.dumper,
        requires=third_party_imports(source.code, own),
    )
    env = Environment(
        env_id=source.env_id,
        topic_id=source.env_id,
        archetype="foreign",
        kind="tool",
        source="foreign",
        class_name=source.class_name or "",
        code=source.code,
        code_sha256=sha256_text(source.code),
        tools=[],
        origin=origin,
    )
    bases = BaseModules(source)
    try:
        env.tools = analyze_tools(source.code, source.class_name, bases.locate)
    except AnalysisError as exc:
        return env.model_copy(update={"status": "quarantined", "reason": f"analysis: {exc}"})
    if bases.read:
        # The class is what its bases make it: a changed base is a changed environment.
        env.code_sha256 = sha256_text(source.code + "".join(bases.read.values()))
    return env


class BaseModules:
    """Finds, for the analysis, the modules a foreign class's bases are imported from: by
    their dotted names beside a module source (relative imports resolved against its
    package), or beside a file source (its folder first, then importable here). Nothing is
    imported; `read` keeps each module's text by where it was found."""

    def __init__(self, source: ForeignSource) -> None:
        self.source = source
        self.read: dict[str, str] = {}

    def locate(self, name: str, level: int, importer: str) -> tuple[str, str] | None:
        where = importer or (
            f"module:{self.source.module}" if self.source.module else f"file:{self.source.path}"
        )
        try:
            path = self._path(name, level, where)
        except (SourceError, ValueError, ImportError):
            return None
        if path is None or not path.is_file():
            return None
        found = (
            f"file:{path}"
            if where.startswith("file:")
            else f"module:{_module_of(name, level, where)}"
        )
        try:
            code = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None
        self.read[found] = code
        return found, code

    def _path(self, name: str, level: int, where: str) -> Path | None:
        kind, _, place = where.partition(":")
        if kind == "module":
            return _module_file(_module_of(name, level, where))
        folder = Path(place).parent
        for _ in range(max(level - 1, 0)):
            folder = folder.parent
        local = folder.joinpath(*name.split(".")) if name else folder
        for candidate in (local.with_suffix(".py"), local / "__init__.py"):
            if candidate.is_file():
                return candidate
        return None if level else _module_file(name)


def _module_of(name: str, level: int, where: str) -> str:
    """The absolute module name of `from <level dots><name> import` in a module source."""
    if not level:
        return name
    importer = where.partition(":")[2]
    package = (
        importer if _module_file(importer).name == "__init__.py" else importer.rpartition(".")[0]
    )
    return importlib.util.resolve_name("." * level + name, package)
