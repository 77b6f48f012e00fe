"""AST analysis: schemas, requiredness, enums, docstrings, and read/write sets."""

from __future__ import annotations

import pytest

from synthesis.environments.analysis import AnalysisError, analyze_class
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue

SOURCE = '''
from typing import Literal, Optional


class Shop:
    """A tiny shop."""

    def __init__(self):
        self.items = {}
        self.log = []
        self._secret = 1

    def _helper(self):
        self.items.clear()

    def find_item(self, name: str, colour: Optional[str] = None) -> dict:
        """Find an item.

        Args:
            name (str): Item name,
                spanning two lines.
            colour: Optional colour.
        """
        for key, item in self.items.items():
            if item["name"] == name:
                return {"success": True, "data": item}
        return {"success": False, "error": "none"}

    def restock(self, item_id: str, amount: int, mode: Literal["add", "set"] = "add") -> dict:
        """Restock an item."""
        item = self.items.get(item_id)
        item["stock"] += amount
        return {"success": True, "data": item}

    def note(self, text: str, tags: list[str] | None = None) -> dict:
        self.log.append(text)
        return {"success": True, "message": "ok"}
'''


def _tools():
    return {t["name"]: t for t in analyze_class(SOURCE)}


def test_private_methods_are_not_tools():
    assert set(_tools()) == {"find_item", "restock", "note"}


def test_schema_types_requiredness_enum_and_descriptions():
    find = _tools()["find_item"]["schema"]["function"]
    assert find["description"] == "Find an item."
    params = find["parameters"]
    assert params["required"] == ["name"]
    assert params["properties"]["name"] == {
        "type": "string",
        "description": "Item name, spanning two lines.",
    }
    restock = _tools()["restock"]["schema"]["function"]["parameters"]
    assert restock["required"] == ["item_id", "amount"]
    assert restock["properties"]["amount"]["type"] == "integer"
    assert restock["properties"]["mode"] == {"enum": ["add", "set"], "type": "string"}
    note = _tools()["note"]["schema"]["function"]["parameters"]
    assert note["properties"]["tags"] == {"type": "array", "items": {"type": "string"}}
    assert note["required"] == ["text"]


def test_reads_and_writes_follow_aliases():
    tools = _tools()
    assert tools["find_item"]["kind"] == "query" and tools["find_item"]["writes"] == []
    assert tools["restock"]["writes"] == ["items"]  # written through the alias `item`
    assert tools["note"]["writes"] == ["log"] and tools["note"]["kind"] == "mutate"


def test_syntax_errors_and_missing_classes_are_clear():
    with pytest.raises(AnalysisError, match="syntax error"):
        analyze_class("class X(:\n  pass")
    with pytest.raises(AnalysisError, match="no class named"):
        analyze_class(SOURCE, "Nope")


def test_compiled_environment_schemas_match_its_spec():
    topic = next(t for t in load_catalogue() if t.topic_id == "dental_clinic")
    spec = generate_spec(topic)
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    by_name = {t.name: t for t in env.tools}
    assert {t.name for t in spec.tools} == set(by_name)
    create = by_name["create_appointment"]
    assert create.kind == "mutate" and set(create.writes) == {"appointments", "slots"}
    props = create.schema_["function"]["parameters"]["properties"]
    assert props["service"]["enum"] == spec.tool("create_appointment").params[2].enum
    assert by_name["list_dentist_slots"].schema_["function"]["parameters"]["required"] == [
        "dentist_id"
    ]


def test_compilation_is_deterministic_and_analysis_catches_lying_code():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    spec = generate_spec(topic)
    assert compile_spec(spec) == compile_spec(generate_spec(topic))
    # A spec that claims a mutating tool is a query must be caught by the cross-check.
    spec.tool("pay_order").kind = "query"
    env = build_environment(spec)
    assert env.status == "quarantined"
    assert "pay_order is declared query but the code is mutate" in env.reason
