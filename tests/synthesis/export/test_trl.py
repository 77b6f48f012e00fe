"""The TRL table, built column by column, is the table of its rows as Arrow converts them."""

from __future__ import annotations

import pyarrow as pa

from synthesis import codec
from synthesis.export import trl
from synthesis.export.shards import _parquet_bytes

_TOOLS = codec.dumps_str(
    [{"type": "function", "function": {"name": "find", "parameters": {"type": "object"}}}]
)


def _rows() -> list[tuple[str, str, str]]:
    calls = [
        # Arguments as the episodes write them (canonical JSON text), as an object, absent.
        {"id": "c1", "type": "function", "function": {"name": "find", "arguments": '{"id":1}'}},
        {"id": "c2", "function": {"name": "find", "arguments": {"id": 2, "deep": [1, {}]}}},
        {"function": {"name": "list"}},
    ]
    episodes = [
        [
            {"role": "system", "content": "You act."},
            {"role": "user", "content": "Find it."},
            {"role": "assistant", "content": None, "tool_calls": calls},
            {"role": "tool", "tool_call_id": "c1", "content": '{"ok":true}'},
            {"role": "assistant", "content": [{"type": "text", "text": "not a string"}]},
            {"role": "assistant", "content": "Done.", "tool_calls": []},
        ],
        [],  # an episode of no message
        [{"role": "user", "content": "Only a question."}],
    ]
    tools = [_TOOLS, "[]", _TOOLS]  # two episodes of one environment share its tools
    return [
        (f"scn-{i}", codec.dumps_str(m), t)
        for i, (m, t) in enumerate(zip(episodes, tools, strict=True))
    ]


def _converted(rows: list[tuple[str, str, str]]) -> pa.Table:
    """The rows as dicts, converted by Arrow: what the columns must equal."""

    def message(m):
        calls = m.get("tool_calls")
        return {
            "role": m["role"],
            "content": m["content"] if isinstance(m.get("content"), str) else None,
            "tool_calls": None
            if calls is None
            else [
                {
                    "id": c.get("id"),
                    "type": c.get("type", "function"),
                    "function": {
                        "name": c["function"]["name"],
                        "arguments": trl._arguments_json(c["function"].get("arguments")),
                    },
                }
                for c in calls
            ],
            "tool_call_id": m.get("tool_call_id"),
        }

    pylist = [
        {
            "scenario_id": scenario_id,
            "messages": [message(m) for m in codec.loads(messages)],
            "tools": [codec.dumps_str(t) for t in codec.loads(tools)],
        }
        for scenario_id, messages, tools in rows
    ]
    return pa.Table.from_pylist(pylist, schema=trl._schema(pa.string())).cast(trl.TRL_SCHEMA)


def test_the_columns_are_the_rows_and_write_the_same_parquet():
    rows = _rows()
    table = trl.trl_table(rows)
    expected = _converted(rows)
    assert table.schema == trl.TRL_SCHEMA
    assert table.equals(expected)
    assert _parquet_bytes(table) == _parquet_bytes(expected)
    messages = table["messages"].to_pylist()
    assert [len(m) for m in messages] == [6, 0, 1]
    assistant = messages[0][2]
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == [
        '{"id":1}',
        codec.dumps_str({"id": 2, "deep": [1, {}]}),
        "{}",
    ]
    # No calls and an empty list of calls stay apart.
    assert messages[0][0]["tool_calls"] is None and messages[0][5]["tool_calls"] == []
    assert table["tools"].to_pylist()[1] == []
    assert table["scenario_id"].to_pylist() == ["scn-0", "scn-1", "scn-2"]
