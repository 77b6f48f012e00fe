"""What an environment is up to renaming: the shape of its program and of its tool graph.

Two environments written from one template with other names and strings are one program
(`program_shape`): the split keeps them on one side, and "distinct program shapes" counts
them once. Two environments whose tools depend on each other the same way, whatever the
tools are called, have one tool graph (`tool_graph_shape`).
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING

from synthesis.hashing import content_hash, sha256_text

if TYPE_CHECKING:
    from synthesis.environments.model import EnvModel

SHAPE_LENGTH = 16
# What every identifier, string and number becomes: only the structure is left.
_NAME = "_"
_STRING = "<str>"
_NUMBER = "<num>"
# A literal collection of constants (an enum's values, a price table) is data, however long.
_DATA = "<data>"
_DEFINITIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def program_shape(code: str, class_name: str | None = None) -> str | None:
    """A hash of the code's AST with identifiers, strings and numbers abstracted, literal
    collections of constants collapsed to one datum (an enum of three values or of four is
    one program) and docstrings dropped (None when the code does not parse).

    `class_name`: in a file that defines several classes, the shape is that class's (with
    the classes it derives from in the file and the module's other code), so two classes
    of one file are two programs. Methods and other definitions are taken in a canonical
    order: reordering them does not make another program.
    """
    try:
        tree = ast.parse(code)
        if class_name:
            tree.body = _without_other_classes(tree.body, class_name)
        tree = _CollapseLiterals().visit(tree)
        dumped: dict[int, str] = {}
        return sha256_text(_dump(_abstract(tree, dumped), dumped))[:SHAPE_LENGTH]
    except (SyntaxError, ValueError, RecursionError):
        # Code nested too deeply to walk is as unusable as code that does not parse.
        return None


def _without_other_classes(body: list[ast.stmt], class_name: str) -> list[ast.stmt]:
    classes = {n.name: n for n in body if isinstance(n, ast.ClassDef)}
    if class_name not in classes:
        return body
    keep, todo = set(), [class_name]
    while todo:
        name = todo.pop()
        if name in keep or name not in classes:
            continue
        keep.add(name)
        todo += [b.id for b in classes[name].bases if isinstance(b, ast.Name)]
    return [n for n in body if not isinstance(n, ast.ClassDef) or n.name in keep]


class _CollapseLiterals(ast.NodeTransformer):
    """Every tuple, list, set or dict made only of constants becomes one data constant; an
    f-string keeps only what it formats."""

    def _collapse(self, node: ast.AST, parts: list[ast.AST | None]) -> ast.AST:
        self.generic_visit(node)
        if all(isinstance(p, ast.Constant) for p in parts):
            return ast.copy_location(ast.Constant(value=_DATA), node)
        return node

    def visit_Tuple(self, node: ast.Tuple) -> ast.AST:
        return self._collapse(node, node.elts)

    def visit_List(self, node: ast.List) -> ast.AST:
        return self._collapse(node, node.elts)

    def visit_Set(self, node: ast.Set) -> ast.AST:
        return self._collapse(node, node.elts)

    def visit_Dict(self, node: ast.Dict) -> ast.AST:
        return self._collapse(node, [*node.keys, *node.values])

    def visit_JoinedStr(self, node: ast.JoinedStr) -> ast.AST:
        # An f-string's text is text: only the values it formats are program.
        self.generic_visit(node)
        node.values = [v for v in node.values if not isinstance(v, ast.Constant)]
        return node


def _abstract(node: ast.AST, dumped: dict[int, str]) -> ast.AST:
    """`node` with identifiers and constants abstracted, in canonical order (children first,
    so a definition's sort key already holds no names). `dumped`: see `_dump`."""
    has_body = isinstance(node, (ast.Module, *_DEFINITIONS))
    if has_body:
        node.body = _without_docstring(node.body)
    for child in ast.iter_child_nodes(node):
        _abstract(child, dumped)
    if isinstance(node, ast.Constant):
        node.value = _constant(node.value)
        node.kind = None
        return node
    for name, value in ast.iter_fields(node):
        # Every string-valued field of the AST is an identifier (names, attributes,
        # arguments, keywords, imports, type comments).
        if isinstance(value, str):
            setattr(node, name, _NAME)
        elif isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            setattr(node, name, [_NAME] * len(value))
    if has_body:
        # Definitions after the other statements, sorted: reordering methods does not make
        # another program.
        others = [n for n in node.body if not isinstance(n, _DEFINITIONS)]
        definitions = [n for n in node.body if isinstance(n, _DEFINITIONS)]
        node.body = others + sorted(definitions, key=lambda d: _dump(d, dumped))
    return node


def _dump(node: object, dumped: dict[int, str]) -> str:
    """`ast.dump(node)` as Python 3.11 writes it with its default arguments, each definition's
    text made once and kept in `dumped` (by node id): a definition is its parent's sort key,
    and again part of every enclosing one's and of the module's, so `ast.dump` made a method's
    text three times. A definition is dumped only when it is final (its parent sorts its body
    after abstracting it)."""
    if isinstance(node, ast.AST):
        known = dumped.get(id(node))
        if known is not None:
            return known
        cls = type(node)
        fields = []
        for name in node._fields:
            try:
                value = getattr(node, name)
            except AttributeError:
                continue
            # A field left at its default of None is left out, as ast.dump leaves it.
            if value is None and getattr(cls, name, ...) is None:
                continue
            fields.append(f"{name}={_dump(value, dumped)}")
        text = f"{cls.__name__}({', '.join(fields)})"
        if isinstance(node, _DEFINITIONS):
            dumped[id(node)] = text
        return text
    if isinstance(node, list):
        return "[" + ", ".join(_dump(item, dumped) for item in node) + "]"
    return repr(node)


def _without_docstring(body: list[ast.stmt]) -> list[ast.stmt]:
    if (
        body
        and isinstance(body[0], ast.Expr)
        and isinstance(body[0].value, ast.Constant)
        and isinstance(body[0].value.value, str)
    ):
        return body[1:]
    return body


def _constant(value: object) -> object:
    # None, True, False and ... are part of the program's logic, not data.
    if value is None or isinstance(value, bool) or value is Ellipsis or value == _DATA:
        return value
    if isinstance(value, (str, bytes)):
        return _STRING
    return _NUMBER


def tool_graph_shape(nodes: Mapping[str, str], edges: Iterable[tuple[str, str, str]]) -> str:
    """A hash of a labelled directed graph that is equal for isomorphic graphs.

    `nodes`: node → label; `edges`: (source, destination, label), repeats counted.
    Weisfeiler–Lehman colour refinement over in- and out-edges, run until the partition of
    the nodes stops growing (a stopping rule that is itself invariant under isomorphism);
    the hash is of every round's colour histogram. Isomorphic graphs always agree; graphs
    that WL cannot tell apart (rare, regular structures) would share a hash.
    """
    names = sorted(nodes)
    out_edges: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    in_edges: dict[str, list[tuple[str, str]]] = {n: [] for n in names}
    for src, dst, label in edges:
        out_edges[src].append((label, dst))
        in_edges[dst].append((label, src))
    colours = {n: sha256_text(nodes[n])[:SHAPE_LENGTH] for n in names}
    rounds = [_histogram(colours)]
    for _ in names:
        refined = {
            n: content_hash(
                [
                    colours[n],
                    sorted((label, colours[m]) for label, m in out_edges[n]),
                    sorted((label, colours[m]) for label, m in in_edges[n]),
                ]
            )[:SHAPE_LENGTH]
            for n in names
        }
        grew = len(set(refined.values())) > len(set(colours.values()))
        colours = refined
        rounds.append(_histogram(colours))
        if not grew:
            break
    return content_hash(rounds)[:SHAPE_LENGTH]


def _histogram(colours: Mapping[str, str]) -> list[tuple[str, int]]:
    return sorted(Counter(colours.values()).items())


def environment_tool_graph_shape(model: EnvModel) -> str:
    """The tool-graph shape of an environment model: a node per tool labelled with what it
    does (query or mutate, and its operation), an edge per data or state dependency."""
    # The graph the tasks stage plans over; imported here, as the environments stage does
    # not otherwise depend on the tasks stage.
    from synthesis.environments.topology import build_tool_graph

    graph = build_tool_graph(model)
    return tool_graph_shape(
        {name: f"{node.kind}:{node.operation}" for name, node in graph.nodes.items()},
        [(e.src, e.dst, e.kind) for e in graph.edges],
    )
