"""A good `task_plan` answer computed from the request alone, for tests and tiny builds.

`answer_task_plan(request)` reads the tool lines and the state summary the stage sends
(synthesis/llm/task_plan.py) and proposes what a careful model would: status changes of
records that are in a status the tool starts from (the summary says which), then questions
about a numeric field of a record some find/get tool reads. It never sees an id, as the
real model does not.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.openai_server import final_answer

STAGE = "task_plan"
_TOOL = re.compile(r"^- (\w+) \((\w+) ([^)]*)\): (.*)$")
_MOVES = re.compile(r"Moves an? (.+?) from (.+?) to ([^.]+)\.$")
_RECORD = re.compile(r"^- (.+? \d+): (.*)$")


def answer_task_plan(request: dict[str, Any]) -> dict[str, Any] | None:
    """The assistant message proposing goals for a `task_plan` request, else None."""
    fmt = request.get("response_format") or {}
    if (fmt.get("json_schema") or {}).get("name") != STAGE:
        return None
    text = request["messages"][1]["content"]
    wanted = int(re.search(r"^Goals wanted: (\d+)$", text, re.M).group(1))
    tools, records = _parse(text)
    goals = _transitions(tools, records) + _questions(tools, records)
    return final_answer(json.dumps({"goals": goals[:wanted]}))


def _parse(text: str) -> tuple[list[dict[str, Any]], list[tuple[str, str, dict[str, str]]]]:
    """(tools: name, operation, label, start statuses) and (handle, label, fields) records."""
    tools, records = [], []
    for line in text.splitlines():
        tool = _TOOL.match(line)
        if tool:
            moves = _MOVES.search(tool.group(4))
            starts = moves.group(2).split(", ") if moves else []
            tools.append(
                {"name": tool.group(1), "op": tool.group(2), "label": tool.group(3), "from": starts}
            )
            continue
        record = _RECORD.match(line)
        if record:
            handle = record.group(1)
            fields = dict(kv.split("=", 1) for kv in record.group(2).split(", ") if "=" in kv)
            records.append((handle, handle.rsplit(" ", 1)[0], fields))
    return tools, records


def _goal(kind: str, tool: str, target: str, field: str = "") -> dict[str, Any]:
    return {"kind": kind, "tool": tool, "target": target, "refs": [], "values": [], "field": field}


def _transitions(tools, records) -> list[dict[str, Any]]:
    out, used = [], set()
    for tool in tools:
        if tool["op"] != "transition":
            continue
        for handle, label, fields in records:
            if (
                label == tool["label"]
                and handle not in used
                and fields.get("status") in tool["from"]
            ):
                out.append(_goal("transition", tool["name"], handle))
                used.add(handle)
                break
    return out


def _questions(tools, records) -> list[dict[str, Any]]:
    out = []
    for tool in tools:
        if tool["op"] not in ("find", "get"):
            continue
        for handle, label, fields in records:
            numeric = [f for f, v in fields.items() if re.fullmatch(r"-?\d+(\.\d+)?", v)]
            if label == tool["label"] and numeric:
                out.append(_goal("ask", tool["name"], handle, numeric[0]))
                break
    return out
