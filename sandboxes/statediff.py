"""A readable diff of two JSON states (what a tool call changed), one line per change."""

from __future__ import annotations

from typing import Any

import orjson

_MAX_VALUE = 200


def diff_states(before: Any, after: Any, path: str = "") -> list[str]:
    """Lines "+ path: value", "- path: value", "~ path: old -> new"; empty when equal."""
    if before == after:
        return []
    if isinstance(before, dict) and isinstance(after, dict):
        lines = []
        for key in sorted(set(before) | set(after), key=str):
            where = f"{path}.{key}" if path else str(key)
            if key not in before:
                lines.append(f"+ {where}: {_show(after[key])}")
            elif key not in after:
                lines.append(f"- {where}: {_show(before[key])}")
            else:
                lines += diff_states(before[key], after[key], where)
        return lines
    if isinstance(before, list) and isinstance(after, list):
        lines = []
        for index in range(max(len(before), len(after))):
            where = f"{path}[{index}]"
            if index >= len(before):
                lines.append(f"+ {where}: {_show(after[index])}")
            elif index >= len(after):
                lines.append(f"- {where}: {_show(before[index])}")
            else:
                lines += diff_states(before[index], after[index], where)
        return lines
    return [f"~ {path or '(root)'}: {_show(before)} -> {_show(after)}"]


def _show(value: Any) -> str:
    # Keys sorted: a record reads the same whatever order its class built it in.
    text = orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS | orjson.OPT_SORT_KEYS).decode()
    return text if len(text) <= _MAX_VALUE else text[:_MAX_VALUE] + "..."
