"""Good answers for the `audit_judge` and `initial_state` stages, computed from the request.

For FakeOpenAIServer responders: each function returns an assistant message for a request
of its stage, or None for any other request, so a whole build's responders can be chained.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.openai_server import final_answer

# String fields whose values the fake rewrites in a new state (never ids, references or
# statuses, which the environment checks).
_RENAMED = ("name", "title", "city", "description", "notes")


def _stage(request: dict[str, Any]) -> str | None:
    fmt = request.get("response_format") or {}
    return (fmt.get("json_schema") or {}).get("name")


def _user_text(request: dict[str, Any]) -> str:
    return next(m["content"] for m in request["messages"] if m["role"] == "user")


def _line(text: str, prefix: str) -> str:
    return next(ln for ln in text.splitlines() if ln.startswith(prefix)).removeprefix(prefix)


# --------------------------------------------------------------------------- audit_judge


def answer_audit_judge(request: dict[str, Any]) -> dict[str, Any] | None:
    """Tester: one sensible call per tool of the request. Judge: every call passes."""
    if _stage(request) != "audit_judge":
        return None
    text = _user_text(request)
    role = text.splitlines()[0].removeprefix("Role: ")
    if role == "judge":
        calls = json.loads(_line(text, "Calls: "))
        grades = [
            {"index": c["index"], "grade": "pass", "reason": "did what it says"} for c in calls
        ]
        return final_answer(json.dumps({"grades": grades}))
    tools = json.loads(_line(text, "Tools: "))
    records = _sample_records(text)
    calls = [
        {"tool": t["name"], "arguments": _arguments(t, records), "expect": "it works"}
        for t in tools
    ]
    return final_answer(json.dumps({"calls": calls}))


def _sample_records(text: str) -> dict[str, list[dict]]:
    """Collection -> the sample records the tester's prompt shows."""
    out = {}
    for ln in text.split("Records:\n", 1)[1].splitlines():
        if ln.startswith("- ") and "): " in ln:
            head, sample = ln[2:].split("): ", 1)
            try:
                out[head.split(" (")[0]] = json.loads(sample)
            except ValueError:  # a sample cut short: its collection gets no values
                continue
    return out


def _arguments(tool: dict[str, Any], records: dict[str, list[dict]]) -> dict[str, Any]:
    params = tool.get("parameters") or {}
    props = params.get("properties") or {}
    return {n: _value(n, props[n], records) for n in params.get("required", []) if n in props}


def _value(name: str, prop: dict[str, Any], records: dict[str, list[dict]]) -> Any:
    if prop.get("enum"):
        return prop["enum"][0]
    kind = prop.get("type")
    if kind in ("integer", "number"):
        return 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if name.endswith("_id"):
        # An id: a record of the collection named like it, else any record's field of it.
        stem = name.removesuffix("_id")
        for coll, rows in records.items():
            if coll.startswith(stem) and rows and "id" in rows[0]:
                return rows[0]["id"]
    for rows in records.values():
        for row in rows:
            if isinstance(row, dict) and isinstance(row.get(name), str):
                return row[name]
    return "sample"


# --------------------------------------------------------------------------- initial_state


def answer_initial_state(request: dict[str, Any]) -> dict[str, Any] | None:
    """The example state of the prompt with its names and descriptions rewritten."""
    if _stage(request) != "initial_state":
        return None
    text = _user_text(request)
    state = json.loads(_line(text, "Example state: "))
    number = _line(text, "Write state number ").rstrip(".")
    return final_answer(json.dumps({"state": renamed(state, f" {number}b")}))


def renamed(state: dict[str, Any], suffix: str) -> dict[str, Any]:
    """`state` with each record's free-text fields (`_RENAMED`) suffixed."""

    def record(r: Any) -> Any:
        if not isinstance(r, dict):
            return r
        return {k: v + suffix if k in _RENAMED and isinstance(v, str) else v for k, v in r.items()}

    out: dict[str, Any] = {}
    for coll, records in state.items():
        if isinstance(records, dict):
            out[coll] = {k: record(r) for k, r in records.items()}
        elif isinstance(records, list):
            out[coll] = [record(r) for r in records]
        else:
            out[coll] = records
    return out
