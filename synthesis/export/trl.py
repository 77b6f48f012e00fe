"""Chat rows as Hugging Face parquet in the shape TRL's SFT trainer takes: `messages`, `tools`.

TRL applies the model's chat template, and the Qwen2.5 / Llama 3.1 templates write a tool
call's `arguments` with `tojson`: arguments stored as JSON text (as the OpenAI fine-tuning
JSONL must keep them) would come out encoded twice. Here they are objects.

Arrow has one type per column, so storing objects as structs would give every call the
union of all tools' argument names, the missing ones as nulls: `{"id": "A-1"}` would load as
`{"id": "A-1", "limit": null, ...}`. Each call's arguments, and each tool schema, are stored
instead in Arrow's JSON extension type (`arrow.json`: the canonical JSON text, tagged), which
`datasets` reads as its `Json` feature and decodes into exactly the object that was written.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pyarrow as pa

from synthesis import codec

_STR = pa.string()
_JSON = pa.json_(_STR)


def _message_type(arguments: pa.DataType) -> pa.DataType:
    function = pa.struct([("name", _STR), ("arguments", arguments)])
    call = pa.struct([("id", _STR), ("type", _STR), ("function", function)])
    return pa.struct(
        [
            ("role", _STR),
            ("content", _STR),
            ("tool_calls", pa.list_(call)),
            ("tool_call_id", _STR),
        ]
    )


def _schema(json_type: pa.DataType) -> pa.Schema:
    return pa.schema(
        [("messages", pa.list_(_message_type(json_type))), ("tools", pa.list_(json_type))]
    )


TRL_SCHEMA = _schema(_JSON)
# What the rows are built in: the same shape with plain strings (pyarrow builds extension
# arrays by casting from their storage).
_STORAGE_SCHEMA = _schema(_STR)


def trl_table(rows: Iterable[tuple[str, str]]) -> pa.Table:
    """The TRL table of (messages_json, tools_json) rows (canonical JSON, OpenAI chat shape)."""
    # An environment's episodes share one tools list: each distinct one is split once.
    tools: dict[str, list[str]] = {}
    pylist = []
    for messages_json, tools_json in rows:
        if tools_json not in tools:
            tools[tools_json] = [codec.dumps_str(t) for t in codec.loads(tools_json)]
        pylist.append(
            {
                "messages": [_message(m) for m in codec.loads(messages_json)],
                "tools": tools[tools_json],
            }
        )
    return pa.Table.from_pylist(pylist, schema=_STORAGE_SCHEMA).cast(TRL_SCHEMA)


def _message(m: dict[str, Any]) -> dict[str, Any]:
    calls = m.get("tool_calls")
    content = m.get("content")
    return {
        "role": m["role"],
        "content": content if isinstance(content, str) else None,
        "tool_calls": None
        if calls is None
        else [
            {
                "id": c.get("id"),
                "type": c.get("type", "function"),
                "function": {
                    "name": c["function"]["name"],
                    "arguments": _arguments_json(c["function"].get("arguments")),
                },
            }
            for c in calls
        ],
        "tool_call_id": m.get("tool_call_id"),
    }


def _arguments_json(arguments: Any) -> str:
    """A call's arguments as JSON text of the object: the episode's own text when it is one
    (episodes write them canonical, codec.dumps_str), else the object's canonical JSON."""
    if isinstance(arguments, str) and arguments.startswith("{"):
        return arguments
    value = codec.loads(arguments) if isinstance(arguments, str) else arguments
    if value is None:
        value = {}
    if not isinstance(value, dict):
        raise ValueError(f"tool call arguments are not a JSON object: {arguments!r}")
    return codec.dumps_str(value)
