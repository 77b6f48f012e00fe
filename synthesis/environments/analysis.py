"""Static analysis of an environment class: OpenAI tool schemas and read/write sets, by AST.

Parsing is not executing: this runs on untrusted source in the pipeline's own process safely,
and it is the only place tool schemas come from (they are never hand-maintained).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from sandboxes.inside.conventions import (
    DISCOVERABLE_DECORATORS,
    TOOL_DECORATORS,
    is_tool_name,
    marked_tools,
)
from synthesis.models import ToolInfo

_SCALARS = {
    "str": "string",
    "int": "integer",
    "float": "number",
    "bool": "boolean",
    "dict": "object",
    "list": "array",
    "tuple": "array",
    "Any": None,
}
_MUTATORS = {
    "append",
    "extend",
    "insert",
    "pop",
    "popitem",
    "remove",
    "clear",
    "update",
    "setdefault",
    "add",
    "discard",
    "sort",
    "reverse",
    "__setitem__",
    "__delitem__",
}
_SECTION = re.compile(
    r"^\s*(Args|Arguments|Parameters|Returns|Raises|Yields|Example|Examples)\s*:\s*$"
)
_ARG_LINE = re.compile(r"^\s*(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$")


class AnalysisError(ValueError):
    """The source cannot be analysed (syntax error, no such class, no tools)."""


# Finds the module an import names: (module, level, importer) -> (where, code) or None, where
# `importer` is the `where` of the module holding the import ("" for the analysed source).
# Given, a base class imported from another module is read from there (a class's tools and
# state include what it inherits: ACEBench's FoodPlatform logs in after BaseApi's
# turn_on_wifi); without one, such a base is invisible, as before.
Locate = Callable[[str, int, str], tuple[str, str] | None]


def find_class(tree: ast.Module, class_name: str | None) -> ast.ClassDef:
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef)]
    if class_name is not None:
        for node in classes:
            if node.name == class_name:
                return node
        raise AnalysisError(f"no class named {class_name!r} in the source")
    public = [c for c in classes if not c.name.startswith("_")]
    if len(public) != 1:
        raise AnalysisError(f"expected exactly one public class, found {[c.name for c in public]}")
    return public[0]


def analyze_class(
    code: str, class_name: str | None = None, locate: Locate | None = None
) -> list[dict[str, Any]]:
    """Per tool (sandboxes.inside.conventions decides which methods are tools): name, kind
    (query|mutate), OpenAI schema, reads, writes. `locate` reads bases from other modules."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise AnalysisError(f"syntax error at line {exc.lineno}: {exc.msg}") from exc
    cls = find_class(tree, class_name)
    lineage = _lineage(tree, cls, locate)
    state_attrs = _state_attributes(lineage)
    tools = []
    for node in _tool_methods(lineage):
        reads, writes = _reads_writes(node, state_attrs)
        declared = _declared_kind(node)
        tools.append(
            {
                "name": node.name,
                # A kind the class declares (tau2's ToolType.WRITE) is taken as the AST's
                # guess; probing confirms or overrules it, as it does the guess.
                "kind": declared or ("mutate" if writes else "query"),
                "schema": _schema(node),
                "reads": sorted(reads),
                "writes": sorted(writes),
            }
        )
    if not tools:
        raise AnalysisError(f"class {cls.name} has no public methods (no tools)")
    return tools


# --------------------------------------------------------------------------- which methods


def _lineage(
    tree: ast.Module, cls: ast.ClassDef, locate: Locate | None = None
) -> list[ast.ClassDef]:
    """`cls` and its bases, in method resolution (C3) order.

    A base name means the last class of that name defined before the class statement, as it
    does when the module runs; a base imported from another module is read from there when
    `locate` finds that module; bases that cannot be seen are left out.
    """
    # Each module read, by its `where` (the analysed source is ""): only parsed modules
    # reach `parents`.
    parsed: dict[str, ast.Module | None] = {"": tree}

    def parents(node: ast.ClassDef, where: str) -> list[tuple[ast.ClassDef, str]]:
        body = parsed[where].body  # type: ignore[union-attr]
        index = next(i for i, n in enumerate(body) if n is node)
        earlier = {n.name: n for n in body[:index] if isinstance(n, ast.ClassDef)}
        found = []
        for base in node.bases:
            if isinstance(base, ast.Name) and base.id in earlier:
                found.append((earlier[base.id], where))
            elif locate is not None:
                outside = _imported_class(body[:index], base, where, locate, parsed)
                if outside is not None:
                    found.append(outside)
        return found

    def mro(node: ast.ClassDef, where: str, depth: int = 0) -> list[ast.ClassDef]:
        direct = parents(node, where) if depth < 12 else []
        sequences = [mro(p, w, depth + 1) for p, w in direct] + [[p for p, _ in direct]]
        order = [node]
        while sequences := [s for s in sequences if s]:
            for sequence in sequences:
                head = sequence[0]
                if not any(head in s[1:] for s in sequences):
                    break
            else:  # no consistent order (Python would refuse the class): keep what we have
                return order + [n for s in sequences for n in s if n not in order]
            order.append(head)
            sequences = [s[1:] if s[0] is head else s for s in sequences]
        return order

    return mro(cls, "") if any(n is cls for n in tree.body) else [cls]


def _imported_class(
    before: list[ast.stmt],
    base: ast.expr,
    where: str,
    locate: Locate,
    parsed: dict[str, ast.Module | None],
    hops: int = 0,
) -> tuple[ast.ClassDef, str] | None:
    """The class a base expression names through an import above the class statement
    (`from .base_api import BaseApi`, `import pkg.base as b` with `b.BaseApi`), read from
    the module `locate` finds, following a package that re-exports it (`from pkg import
    BaseApi`, its `__init__` importing it) a few hops; None when none defines it."""
    target: tuple[str, int, str] | None = None  # (module, level, class name)
    for node in before:
        if isinstance(node, ast.ImportFrom) and isinstance(base, ast.Name):
            for alias in node.names:
                if (alias.asname or alias.name) == base.id:
                    target = (node.module or "", node.level, alias.name)
        elif isinstance(node, ast.Import) and isinstance(base, ast.Attribute):
            dotted = _dotted(base.value)
            for alias in node.names:
                if dotted is not None and (alias.asname or alias.name) == dotted:
                    target = (alias.name, 0, base.attr)
    if target is None:
        return None
    name, level, class_name = target
    found = locate(name, level, where)
    if found is None:
        return None
    other, code = found
    if other not in parsed:
        try:
            parsed[other] = ast.parse(code)
        except SyntaxError:
            parsed[other] = None
    tree = parsed[other]
    if tree is None:
        return None
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    if classes:
        return classes[-1], other
    if hops >= 3:
        return None
    named = ast.Name(id=class_name, ctx=ast.Load())
    return _imported_class(tree.body, named, other, locate, parsed, hops + 1)


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        head = _dotted(node.value)
        return None if head is None else f"{head}.{node.attr}"
    return None


_NOT_METHODS = {"staticmethod", "classmethod", "property", "cached_property"}


def _tool_methods(lineage: list[ast.ClassDef]) -> list[ast.FunctionDef]:
    """The conventions' tool rule, on the AST: the most derived definition of a name decides."""
    seen: set[str] = set()
    candidates: list[ast.FunctionDef] = []
    for cls in lineage:
        for node in cls.body:
            for name, function in _members(node):
                if name in seen:
                    continue
                seen.add(name)
                if function is None or not is_tool_name(name):
                    continue
                if _decorated(function, DISCOVERABLE_DECORATORS):
                    continue
                candidates.append(function)
    marked = {f.name for f in candidates if _decorated(f, TOOL_DECORATORS)}
    if not marked:
        helpers = _helpers(candidates, lineage)
        candidates = [f for f in candidates if f.name not in helpers]
    keep = set(marked_tools([f.name for f in candidates], marked))
    return [f for f in candidates if f.name in keep]


def _helpers(candidates: list[ast.FunctionDef], lineage: list[ast.ClassDef]) -> set[str]:
    """The public methods of a class that marks none which are helpers by what they do, not
    by whether they have a docstring (ACEBench's Travel documents its helpers and not its
    bookings):
      - a method another method of the class calls, with a parameter it uses as a record
        (`user["cash_balance"] += amount`): an agent has no record to give it
        (`update_balance(user, ...)`, `process_refund(user, amount)`);
      - in a class that documents its tools, a method with neither docstring nor type
        annotation that another method calls (`authenticate_user`) or that is a function of
        its arguments alone, never touching `self` (`format_money`).
    A documented or typed method nothing calls is a tool, and so is an undocumented one that
    works on the instance (`reserve_flight`): BFCL's documented, self-free `list_all_airports`
    stays one too, though its `book_flight` calls it."""
    called = _called_by_others(lineage)
    documented = any(has_docstring(ast.get_docstring(f)) for f in candidates)
    helpers = set()
    for fn in candidates:
        bare = not has_docstring(ast.get_docstring(fn)) and not _annotated(fn)
        if fn.name in called and _record_params(fn):
            helpers.add(fn.name)
        elif documented and bare and (fn.name in called or not _uses_self(fn)):
            helpers.add(fn.name)
    return helpers


def has_docstring(doc: str | None) -> bool:
    return isinstance(doc, str) and doc.strip() != ""


def _called_by_others(lineage: list[ast.ClassDef]) -> set[str]:
    """Names the class's methods call on `self` from another method."""
    called = set()
    for cls in lineage:
        for fn in cls.body:
            if not isinstance(fn, ast.FunctionDef):
                continue
            for node in ast.walk(fn):
                if (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and isinstance(node.func.value, ast.Name)
                    and node.func.value.id == "self"
                    and node.func.attr != fn.name
                ):
                    called.add(node.func.attr)
    return called


def _record_params(fn: ast.FunctionDef) -> set[str]:
    """Parameters the method reads or writes as records: `p["field"]`, `p.get("field")`."""
    params = {a.arg for a in fn.args.args[1:] + fn.args.kwonlyargs}
    found = set()
    for node in ast.walk(fn):
        if (
            isinstance(node, ast.Subscript)
            and isinstance(node.value, ast.Name)
            and node.value.id in params
            and isinstance(node.slice, ast.Constant)
            and isinstance(node.slice.value, str)
        ):
            found.add(node.value.id)
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and isinstance(node.func.value, ast.Name)
            and node.func.value.id in params
            and node.args
            and isinstance(node.args[0], ast.Constant)
            and isinstance(node.args[0].value, str)
        ):
            found.add(node.func.value.id)
    return found


def _uses_self(fn: ast.FunctionDef) -> bool:
    first = fn.args.args[0].arg if fn.args.args else None
    return first is not None and any(
        isinstance(n, ast.Name) and n.id == first for n in ast.walk(fn)
    )


def _decorated(fn: ast.FunctionDef, names: tuple[str, ...]) -> bool:
    """Whether a decorator of `fn` is one of `names` (called or not, by any prefix)."""
    for decorator in fn.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        if _name(target) in names:
            return True
    return False


def _declared_kind(fn: ast.FunctionDef) -> str | None:
    """The kind a tool marker declares: `@is_tool(ToolType.WRITE)` (or `"write"`) is mutate,
    READ, THINK and GENERIC are query, and an explicit `mutates_state=` overrides the type
    (tau2's WRITE tool that changes nothing); None when undeclared."""
    for decorator in fn.decorator_list:
        if not isinstance(decorator, ast.Call) or _name(decorator.func) not in TOOL_DECORATORS:
            continue
        for keyword in decorator.keywords:
            if keyword.arg == "mutates_state" and isinstance(keyword.value, ast.Constant):
                if isinstance(keyword.value.value, bool):
                    return "mutate" if keyword.value.value else "query"
        declared = (
            decorator.args[0]
            if decorator.args
            else next((k.value for k in decorator.keywords if k.arg == "tool_type"), None)
        )
        if declared is None:
            return "query"  # is_tool's default is READ
        text = _name(declared) if not isinstance(declared, ast.Constant) else declared.value
        if isinstance(text, str):
            return "mutate" if text.lower() == "write" else "query"
    return None


def _annotated(fn: ast.FunctionDef) -> bool:
    args = fn.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return fn.returns is not None or any(a is not None and a.annotation for a in every)


def _members(node: ast.stmt) -> list[tuple[str, ast.FunctionDef | None]]:
    """The names a class-body statement defines, with the function when it can be a tool."""
    if isinstance(node, ast.FunctionDef):
        for decorator in node.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = _name(target)
            if name in _NOT_METHODS or name in ("setter", "getter", "deleter"):
                return [(node.name, None)]
        return [(node.name, node)]
    if isinstance(node, (ast.AsyncFunctionDef, ast.ClassDef)):
        return [(node.name, None)]
    targets = _assigned_targets(node) if isinstance(node, (ast.Assign, ast.AnnAssign)) else []
    return [(t.id, None) for target in targets for t in ast.walk(target) if isinstance(t, ast.Name)]


def analyze_tools(
    code: str, class_name: str | None = None, locate: Locate | None = None
) -> list[ToolInfo]:
    return [ToolInfo.model_validate(t) for t in analyze_class(code, class_name, locate)]


# --------------------------------------------------------------------------- schema


def _schema(fn: ast.FunctionDef) -> dict[str, Any]:
    summary, arg_docs = _parse_docstring(ast.get_docstring(fn) or "")
    args = fn.args.args[1:]  # drop self
    defaults = [None] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    properties: dict[str, Any] = {}
    required: list[str] = []
    for arg, default in zip(args, defaults, strict=True):
        prop, optional = _annotation_schema(arg.annotation)
        if arg.arg in arg_docs:
            prop["description"] = arg_docs[arg.arg]
        properties[arg.arg] = prop
        if default is None and not optional:
            required.append(arg.arg)
    for arg, default in zip(fn.args.kwonlyargs, fn.args.kw_defaults, strict=True):
        prop, optional = _annotation_schema(arg.annotation)
        if arg.arg in arg_docs:
            prop["description"] = arg_docs[arg.arg]
        properties[arg.arg] = prop
        if default is None and not optional:
            required.append(arg.arg)
    return {
        "type": "function",
        "function": {
            "name": fn.name,
            "description": summary or fn.name.replace("_", " "),
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


def _annotation_schema(node: ast.expr | None) -> tuple[dict[str, Any], bool]:
    """JSON schema of a type hint, and whether the hint admits None."""
    if node is None:
        return {}, False
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        try:
            node = ast.parse(node.value, mode="eval").body  # string annotations
        except SyntaxError:
            return {}, False
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        parts = _union_parts(node)
        optional = any(_is_none(p) for p in parts)
        rest = [p for p in parts if not _is_none(p)]
        schema = _annotation_schema(rest[0])[0] if len(rest) == 1 else {}
        return schema, optional
    if isinstance(node, ast.Subscript):
        head = _name(node.value)
        inner = node.slice
        items = list(inner.elts) if isinstance(inner, ast.Tuple) else [inner]
        if head == "Optional":
            return _annotation_schema(items[0])[0], True
        if head == "Union":
            rest = [p for p in items if not _is_none(p)]
            schema = _annotation_schema(rest[0])[0] if len(rest) == 1 else {}
            return schema, len(rest) < len(items)
        if head == "Literal":
            values = [i.value for i in items if isinstance(i, ast.Constant)]
            kinds = {type(v) for v in values}
            schema: dict[str, Any] = {"enum": values}
            if len(kinds) == 1:
                schema["type"] = {
                    str: "string",
                    int: "integer",
                    float: "number",
                    bool: "boolean",
                }.get(kinds.pop(), "string")
            return schema, False
        if head in ("list", "List", "tuple", "Tuple", "set", "Set", "Sequence"):
            item_schema = _annotation_schema(items[0])[0] if items else {}
            return (
                {"type": "array", "items": item_schema} if item_schema else {"type": "array"}
            ), False
        if head in ("dict", "Dict", "Mapping"):
            return {"type": "object"}, False
    name = _name(node)
    if name == "None":
        return {}, True
    json_type = _SCALARS.get(name or "")
    return ({"type": json_type} if json_type else {}), False


def _union_parts(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
        return _union_parts(node.left) + _union_parts(node.right)
    return [node]


def _is_none(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and node.value is None or _name(node) == "None"


def _name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """Summary (text before the first section) and per-argument descriptions (Google style)."""
    summary_lines: list[str] = []
    arg_docs: dict[str, str] = {}
    section = None
    current = None
    for line in doc.splitlines():
        match = _SECTION.match(line)
        if match:
            section = match.group(1)
            current = None
            continue
        if section is None:
            summary_lines.append(line.strip())
        elif section in ("Args", "Arguments", "Parameters"):
            arg = _ARG_LINE.match(line)
            if arg and (current is None or _indent(line) <= current[1]):
                current = (arg.group(1).lstrip("*"), _indent(line))
                arg_docs[current[0]] = arg.group(3).strip()
            elif current and line.strip():
                arg_docs[current[0]] = (arg_docs[current[0]] + " " + line.strip()).strip()
    summary = " ".join(part for part in summary_lines if part).strip()
    return summary, arg_docs


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


# --------------------------------------------------------------------------- reads / writes


def _assigned_targets(node: ast.AST) -> list[ast.expr]:
    """What a statement stores into or deletes (empty for anything else)."""
    if isinstance(node, (ast.Assign, ast.Delete)):
        return node.targets
    if isinstance(node, (ast.AnnAssign, ast.AugAssign)):
        return [node.target]
    return []


def _state_attributes(lineage: list[ast.ClassDef]) -> set[str]:
    """Public attributes assigned on self anywhere in the class (or its bases): its state."""
    methods = {n.name for cls in lineage for n in cls.body if isinstance(n, ast.FunctionDef)}
    attrs: set[str] = set()
    for node in (n for cls in lineage for n in ast.walk(cls)):
        for target in _assigned_targets(node):
            for t in ast.walk(target):
                if (
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == "self"
                    and not t.attr.startswith("_")
                    and t.attr not in methods
                ):
                    attrs.add(t.attr)
    return attrs


def _is_state_attr(node: ast.AST, state: set[str]) -> bool:
    """`self.<attr>` where attr is one of the environment's state attributes."""
    return (
        isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and node.attr in state
    )


def _self_attrs_in(node: ast.AST, state: set[str], aliases: dict[str, set[str]]) -> set[str]:
    found: set[str] = set()
    for n in ast.walk(node):
        if _is_state_attr(n, state):
            found.add(n.attr)
        elif isinstance(n, ast.Name) and n.id in aliases:
            found |= aliases[n.id]
    return found


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, (ast.Subscript, ast.Attribute, ast.Call)):
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
        ):
            return node
        node = node.func if isinstance(node, ast.Call) else node.value
    return node


def _attrs_of_root(root: ast.expr, state: set[str], aliases: dict[str, set[str]]) -> set[str]:
    if isinstance(root, ast.Attribute) and root.attr in state:
        return {root.attr}
    if isinstance(root, ast.Name):
        return aliases.get(root.id, set())
    return set()


def _reads_writes(fn: ast.FunctionDef, state: set[str]) -> tuple[set[str], set[str]]:
    # Aliases: local names bound to (parts of) state, e.g. `record = self.orders.get(oid)`.
    # Writing through an alias writes that state. Over-approximation is the safe direction.
    aliases: dict[str, set[str]] = {}
    for node in ast.walk(fn):
        if isinstance(node, (ast.Assign, ast.For, ast.comprehension, ast.With)):
            value = getattr(node, "value", None) or getattr(node, "iter", None)
            if value is None:
                continue
            sources = _self_attrs_in(value, state, aliases)
            if not sources:
                continue
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                for t in ast.walk(target):
                    if isinstance(t, ast.Name):
                        aliases.setdefault(t.id, set()).update(sources)
    reads = _self_attrs_in(fn, state, aliases)
    writes: set[str] = set()
    for node in ast.walk(fn):
        for target in _assigned_targets(node):
            for t in [target] if not isinstance(target, ast.Tuple) else target.elts:
                if _is_state_attr(t, state):
                    writes.add(t.attr)
                elif isinstance(t, (ast.Subscript, ast.Attribute)):
                    writes |= _attrs_of_root(_root(t.value), state, aliases)
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _MUTATORS
        ):
            writes |= _attrs_of_root(_root(node.func.value), state, aliases)
    return reads, writes
