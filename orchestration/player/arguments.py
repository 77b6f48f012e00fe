"""A call's arguments checked against its tool's JSON schema before the call reaches the
sandbox."""

from __future__ import annotations

import ast
from typing import Any

from synthesis import codec


class Arguments:
    """Checks a call against its tool's JSON schema before it reaches the sandbox, so that a
    mistake in a call is a usage error naming the tool and the parameter, not a TypeError
    raised inside the environment (which would count as the environment crashing)."""

    def __init__(self, tools: list[dict[str, Any]], worker_tools: list[str], code: str) -> None:
        self.tools = {tool["name"]: tool for tool in tools}
        # The worker's list is the truth about what can be called; a tool it has that the
        # analysis cannot see (a base class from another module) is called unchecked.
        self.names = sorted(set(worker_tools) | set(self.tools))
        self.open = _takes_any_keyword(code)

    def problem(self, tool: str, args: dict[str, Any]) -> str | None:
        """Why the call is invalid, in one line, or None."""
        if tool not in self.names:
            return f"unknown tool {tool!r}; tools: {', '.join(self.names)}"
        known = self.tools.get(tool)
        if known is None:
            return None
        params = tool_parameters(known)
        properties = params.get("properties") or {}
        required = params.get("required") or []
        missing = [name for name in required if name not in args]
        if missing:
            names = ", ".join(repr(n) for n in missing)
            plural = "s" if len(missing) > 1 else ""
            return f"{tool}: missing required argument{plural} {names}; it takes {signature(known)}"
        unexpected = [name for name in args if name not in properties]
        if unexpected and tool not in self.open:
            return f"{tool}: unexpected argument {unexpected[0]!r}; it takes {signature(known)}"
        for name, value in args.items():
            wrong = _type_problem(properties.get(name), value, name in required)
            if wrong is not None:
                return f"{tool}: argument {name!r}: {wrong}"
        return None


def _type_problem(schema: dict[str, Any] | None, value: Any, required: bool) -> str | None:
    # An optional parameter's schema cannot say it admits None (analysis drops `| None`), and
    # the default is usually None, so an explicit null is let through.
    if not schema or (value is None and not required):
        return None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    message = " ".join(error.message.split())
    return message if len(message) <= 200 else message[:200] + "..."


def tool_parameters(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("schema") or {}
    function = schema.get("function") if isinstance(schema.get("function"), dict) else schema
    return function.get("parameters") or {}


def _describe_type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + " | ".join(codec.dumps_str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array" and schema.get("items"):
        return f"array of {_describe_type(schema['items'])}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return kind or "any"


def signature(tool: dict[str, Any]) -> str:
    """`name(a: string, b?: integer)`: `?` marks an argument that may be left out."""
    params = tool_parameters(tool)
    required = list(params.get("required") or [])
    properties = params.get("properties") or {}
    # Required arguments in the order the method declares them (stored schemas sort their
    # properties by name), then the optional ones.
    names = [n for n in required if n in properties]
    names += [n for n in properties if n not in required]
    parts = [
        f"{name}{'' if name in required else '?'}: {_describe_type(properties[name])}"
        for name in names
    ]
    return f"{tool['name']}({', '.join(parts)})"


def _takes_any_keyword(code: str) -> set[str]:
    """Methods declared with **kwargs: their schema cannot list every argument they take."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {
        node.name
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.args.kwarg is not None
    }
