"""Shared assertions on a built environment's tools: each is a valid OpenAI function
definition, and reads are queries while everything else writes (the AST agrees)."""

from __future__ import annotations

import re

from jsonschema import Draft202012Validator

READ_OPERATIONS = ("get", "list", "find", "search", "aggregate", "compare")


def assert_valid_tools(spec, env) -> None:
    assert 8 <= len(env.tools) <= 30
    for info in env.tools:
        function = info.schema_["function"]
        assert info.schema_["type"] == "function"
        assert re.fullmatch(r"[A-Za-z0-9_-]{1,64}", function["name"])
        assert isinstance(function["description"], str) and function["description"].strip()
        parameters = function["parameters"]
        Draft202012Validator.check_schema(parameters)
        assert parameters["type"] == "object"
        assert set(parameters["required"]) <= set(parameters["properties"])
        for name, prop in parameters["properties"].items():
            assert prop.get("type") in ("string", "integer", "number", "boolean"), (name, prop)
            assert prop.get("description"), (function["name"], name)
    kinds = {t.name: t.kind for t in env.tools}
    for tool in spec.tools:
        read = tool.operation in READ_OPERATIONS
        assert kinds[tool.name] == ("query" if read else "mutate"), tool.name
