"""Whether an answer can be used at all, before any stage looks at what it says.

A cut, empty or oversized answer is rejected with its reason: it is never cached or stored
as a final answer, and the next build asks again.
"""

from __future__ import annotations

import json

from synthesis.llm.transport import RawAnswer


def unusable(answer: RawAnswer, max_chars: int) -> str | None:
    """Why `answer` cannot be used, or None when it can."""
    message = answer.message
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    tool_calls = message.get("tool_calls") or []
    size = len(text) + (len(json.dumps(tool_calls)) if tool_calls else 0)
    if size > max_chars:
        return f"oversized: answer of {size} characters exceeds the cap of {max_chars}"
    if answer.finish_reason == "length":
        return "length: answer cut at max_tokens"
    if answer.finish_reason == "content_filter":
        return "content_filter: the server withheld the answer"
    if not tool_calls:
        stripped = text.strip()
        if not stripped:
            return "empty: no content and no tool calls"
        if stripped == "{}":
            return "empty: the answer is an empty JSON object"
    return None
