"""The `agent` stage as the other LLM stages describe themselves (STAGE, SCHEMA, PROMPT), for
the stages page (synthesis/llm/stages.py): the agent itself is `LLMPolicy` in agents.py.

Unlike the structured stages it sends no `response_format`: it answers with the Chat
Completions tool-calling turn. SCHEMA is the turn the client accepts (`_unactionable`
there): tool calls naming offered tools with JSON-object arguments, or a final message.
PROMPT is the system prompt template of every rollout (filled per environment).
"""

from __future__ import annotations

from typing import Any

from synthesis.rollouts.agents import AGENT_STAGE
from synthesis.rollouts.episodes import SYSTEM_TEMPLATE

STAGE = AGENT_STAGE
SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "One assistant turn: tool calls (run in order) or a final message.",
    "properties": {
        "content": {"type": ["string", "null"], "description": "the final reply"},
        "tool_calls": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "type": {"const": "function"},
                    "function": {
                        "type": "object",
                        "properties": {
                            "name": {"type": "string", "description": "one of the offered tools"},
                            "arguments": {
                                "type": "string",
                                "description": "a JSON object, as text",
                            },
                        },
                        "required": ["name", "arguments"],
                    },
                },
                "required": ["function"],
            },
        },
    },
}
PROMPT = SYSTEM_TEMPLATE
