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
    # The scenario id joins a training row to its RL task (rl/<split>.jsonl) and checks.
    return pa.schema(
        [
            ("scenario_id", _STR),
            ("messages", pa.list_(_message_type(json_type))),
            ("tools", pa.list_(json_type)),
        ]
    )


TRL_SCHEMA = _schema(_JSON)


def trl_table(rows: Iterable[tuple[str, str, str]]) -> pa.Table:
    """The TRL table of (scenario_id, messages_json, tools_json) rows (canonical JSON, OpenAI
    chat shape)."""
    # Built column by column: Arrow's conversion of nested dicts (`from_pylist`) took most
    # of this function's time on a full build's 25K episodes. Same table, same parquet bytes
    # (tests/synthesis/export/test_trl.py compares the two ways).
    columns = _Columns()
    # An environment's episodes share one tools list: each distinct one is split once.
    tools: dict[str, list[str]] = {}
    for scenario_id, messages_json, tools_json in rows:
        if tools_json not in tools:
            tools[tools_json] = [codec.dumps_str(t) for t in codec.loads(tools_json)]
        columns.add_row(scenario_id, codec.loads(messages_json), tools[tools_json])
    return columns.table()


class _Columns:
    """The flat values and list offsets of the TRL table's columns, filled row by row."""

    def __init__(self) -> None:
        self.scenario_ids: list[str] = []
        self.message_offsets, self.tool_offsets, self.tools = [0], [0], []
        self.role, self.content, self.tool_call_id = [], [], []
        self.call_offsets, self.no_calls = [0], []
        self.call_id, self.call_type, self.name, self.arguments = [], [], [], []

    def add_row(self, scenario_id: str, messages: list[dict[str, Any]], tools: list[str]) -> None:
        self.scenario_ids.append(scenario_id)
        for m in messages:
            self.role.append(m["role"])
            content = m.get("content")
            self.content.append(content if isinstance(content, str) else None)
            self.tool_call_id.append(m.get("tool_call_id"))
            calls = m.get("tool_calls")
            self.no_calls.append(calls is None)
            for c in calls or ():
                self.call_id.append(c.get("id"))
                self.call_type.append(c.get("type", "function"))
                self.name.append(c["function"]["name"])
                self.arguments.append(_arguments_json(c["function"].get("arguments")))
            self.call_offsets.append(len(self.call_id))
        self.message_offsets.append(len(self.role))
        self.tools.extend(tools)
        self.tool_offsets.append(len(self.tools))

    def table(self) -> pa.Table:
        function = pa.StructArray.from_arrays(
            [pa.array(self.name, _STR), pa.array(self.arguments, _STR).cast(_JSON)],
            names=["name", "arguments"],
        )
        calls = pa.StructArray.from_arrays(
            [pa.array(self.call_id, _STR), pa.array(self.call_type, _STR), function],
            names=["id", "type", "function"],
        )
        messages = pa.StructArray.from_arrays(
            [
                pa.array(self.role, _STR),
                pa.array(self.content, _STR),
                pa.ListArray.from_arrays(
                    pa.array(self.call_offsets, pa.int32()),
                    calls,
                    mask=pa.array(self.no_calls, pa.bool_()),
                ),
                pa.array(self.tool_call_id, _STR),
            ],
            fields=list(TRL_SCHEMA.field("messages").type.value_type),
        )
        return pa.table(
            [
                pa.array(self.scenario_ids, _STR),
                pa.ListArray.from_arrays(pa.array(self.message_offsets, pa.int32()), messages),
                pa.ListArray.from_arrays(
                    pa.array(self.tool_offsets, pa.int32()), pa.array(self.tools, _STR).cast(_JSON)
                ),
            ],
            schema=TRL_SCHEMA,
        )


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
