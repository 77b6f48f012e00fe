"""Where an environment's code comes from, and what a worker needs to load it."""

from __future__ import annotations

import functools
import importlib.util
import os
import sysconfig
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from sandboxes.errors import SandboxError
from sandboxes.imports import code_libraries, module_libraries
from sandboxes.layout import SANDBOX_ROOT, Mount

Loader = Literal["auto", "attributes", "load_scenario", "constructor"]
LOADERS = ("auto", "attributes", "load_scenario", "constructor")
# Besides these, a dumper may be the name of a method of the class.
DUMPERS = ("auto", "attributes")


@dataclass(frozen=True)
class EnvSource:
    """Exactly one of `code` (source text), `path` (a .py file) or `module` (importable name).

    `module` may be written "package.module:Class". `class_name` None means the single public
    class the source defines.

    `loader` picks how the initial state gets in: "attributes" sets one attribute per top-level
    key (the EnvFoundry contract), "load_scenario" calls `obj._load_scenario(state)` (BFCL
    style), "constructor" passes it to `__init__` (a config-like parameter takes the whole
    dict, else keys go in as keyword arguments and the rest become attributes). "auto" picks
    load_scenario when the class has `_load_scenario`, else constructor when `__init__` needs
    an argument or its first parameter is config-like, else attributes.

    `dumper` picks how the final state comes out: "attributes" snapshots the public attributes,
    a method name calls that method, "auto" calls the first of conventions.DUMPER_NAMES the
    class has (callable without arguments), else snapshots. sandboxes/inside/conventions.py
    holds the names.

    `reuse_interpreter` says the class's whole state is the plain data its loader sets, as in
    the classes our own compiler writes: a pool may then play its episodes one after another
    in one warm worker, which re-executes the module and constructs a fresh instance per
    episode (sandboxes/warm.py), instead of a fresh worker each. Never set it for code whose
    behaviour we do not know (foreign, model-written): such code gets a fresh worker per
    episode.

    `tools` names the tools the session offers, when the caller read them from the source
    (synthesis/environments/analysis.py tells helpers from tools by what they do, which a
    live class cannot show): a helper such as `update_balance(user, amount)` is then not
    callable, by name or otherwise. None offers every tool conventions.tool_names finds.

    `libraries` mounts this interpreter's site-packages read-only beside the code, so it
    imports what is installed here (a foreign class's pydantic, a toolkit's dependencies).
    A module source always has them unless its package is itself in a site-packages, which
    is then mounted whole.
    """

    code: str | None = None
    path: str | None = None
    module: str | None = None
    class_name: str | None = None
    loader: Loader = "auto"
    dumper: str = "auto"
    reuse_interpreter: bool = False
    libraries: bool = False
    tools: tuple[str, ...] | None = None

    def __post_init__(self) -> None:
        given = [name for name in ("code", "path", "module") if getattr(self, name) is not None]
        if len(given) != 1:
            raise SandboxError(f"EnvSource needs exactly one of code, path, module; got {given}")
        if self.loader not in LOADERS:
            raise SandboxError(f"EnvSource.loader must be one of {LOADERS}, got {self.loader!r}")
        if not isinstance(self.dumper, str) or not self.dumper.isidentifier():
            raise SandboxError(
                f"EnvSource.dumper must be one of {DUMPERS} or a method name, got {self.dumper!r}"
            )
        if self.path is not None:
            object.__setattr__(self, "path", os.fspath(self.path))
        if self.module is not None and ":" in self.module:
            module, _, class_name = self.module.partition(":")
            if self.class_name is not None and self.class_name != class_name:
                raise SandboxError(
                    f"class given twice: {self.module!r} and class_name={self.class_name!r}"
                )
            object.__setattr__(self, "module", module)
            object.__setattr__(self, "class_name", class_name or None)

    @classmethod
    def parse(
        cls,
        spec: str,
        class_name: str | None = None,
        loader: Loader = "auto",
        dumper: str = "auto",
    ) -> EnvSource:
        """`PATH.py` or `package.module[:Class]`, as written on a command line."""
        if spec.endswith(".py") or os.sep in spec:
            return cls(path=spec, class_name=class_name, loader=loader, dumper=dumper)
        return cls(module=spec, class_name=class_name, loader=loader, dumper=dumper)

    def read_code(self) -> str:
        """The source text (for a module: its file), e.g. for static analysis."""
        if self.code is not None:
            return self.code
        if self.path is not None:
            return _read(Path(self.path))
        spec = _find_spec(self.module)
        if spec.origin is None or not spec.origin.endswith(".py"):
            raise SandboxError(f"module {self.module!r} has no Python source file")
        return _read(Path(spec.origin))


@dataclass(frozen=True)
class ResolvedSource:
    """The init payload's source part, plus the mounts and sys.path a module source needs."""

    payload: dict[str, Any]
    mounts: tuple[Mount, ...] = ()
    sys_path: tuple[str, ...] = field(default_factory=tuple)


def resolve(source: EnvSource) -> ResolvedSource:
    if source.code is not None:
        payload = {"kind": "code", "code": source.code, "filename": "<environment>"}
    elif source.path is not None:
        path = Path(source.path)
        payload = {"kind": "code", "code": _read(path), "filename": str(path)}
    else:
        return _resolve_module(source.module)
    if not source.libraries:
        return ResolvedSource(payload)
    ahead = code_libraries(payload["code"])
    if ahead:
        payload["library_imports"] = list(ahead)
    mounts, paths = _libraries()
    return ResolvedSource(payload, mounts, paths)


@functools.cache
def _libraries() -> tuple[tuple[Mount, ...], tuple[str, ...]]:
    """This interpreter's site-packages (pure and platform, each once), read-only, and the
    sys.path entries that reach them. Asked at every session start: worked out once."""
    sites: list[str] = []
    for key in ("purelib", "platlib"):
        path = os.path.realpath(sysconfig.get_paths()[key])
        if os.path.isdir(path) and path not in sites:
            sites.append(path)
    inside = [f"{SANDBOX_ROOT}/site{i}" for i in range(len(sites))]
    return tuple(Mount(site, at) for site, at in zip(sites, inside, strict=True)), tuple(inside)


def _resolve_module(module: str) -> ResolvedSource:
    """Mount the module's top-level package read-only, never the directory around it.

    A repository root may hold secrets (.env files); a site-packages directory does not, and
    mounting it whole lets a foreign package import its own dependencies. A package found
    elsewhere (a source tree on PYTHONPATH, whatever its folder is called) gets this
    interpreter's site-packages beside it, read-only, where its dependencies are installed.
    """
    top = module.split(".")[0]
    spec = _find_spec(top)
    locations = list(spec.submodule_search_locations or [])
    if locations:
        package = Path(locations[0]).resolve()
    elif spec.origin and spec.origin.endswith(".py"):
        package = Path(spec.origin).resolve()
    else:
        raise SandboxError(f"module {top!r} is not a Python source package (origin {spec.origin})")
    root = package.parent
    payload: dict[str, Any] = {"kind": "module", "module": module}
    ahead = module_libraries(module, package)
    if ahead:
        # Imported ahead of the environment's own code, under seed 0 (sandboxes/imports.py).
        payload["library_imports"] = list(ahead)
    if root.name in ("site-packages", "dist-packages"):
        inside = f"{SANDBOX_ROOT}/site"
        return ResolvedSource(payload, (Mount(str(root), inside),), (inside,))
    inside = f"{SANDBOX_ROOT}/mods"
    mounts, paths = _libraries()
    package_mount = Mount(str(package), f"{inside}/{package.name}")
    return ResolvedSource(payload, (package_mount, *mounts), (inside, *paths))


def _find_spec(name: str):
    # Locating a submodule with importlib would import its parent packages in *this* process;
    # only the top-level package is located here, submodules by path.
    top = name.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError) as exc:
        raise SandboxError(f"cannot locate module {name!r}: {exc}") from exc
    if spec is None:
        raise SandboxError(f"no module named {top!r}")
    return spec if name == top else _find_file(name, spec)


def _find_file(name: str, top_spec):
    """A submodule's spec located by path, without executing any package __init__."""
    parts = name.split(".")
    locations = list(top_spec.submodule_search_locations or [])
    if not locations:
        raise SandboxError(f"{parts[0]!r} is not a package, so {name!r} cannot exist")
    base = Path(locations[0]).joinpath(*parts[1:])
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return importlib.util.spec_from_file_location(name, candidate)
    raise SandboxError(f"no module named {name!r} (looked for {base}.py)")


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise SandboxError(f"cannot read environment source {path}: {exc}") from exc
