"""Fake model answers for the LLM agent's episodes, computed from each request's content.

`answer_user_sim(request)`: a good simulated user (synthesis.llm.user_sim): it says the
offline answer its prompt gives ("What you answer:"), after a few words of its own.
`answer_asking_agent(request)`: an agent whose first turn asks the user for anything left out
of the request, in words the offline user answers with every detail it holds back. Each
returns None for a request that is not its own, so a build-wide responder can chain them
with the other stages' (first non-None answer wins). The asking agent cannot tell a
multi-turn opening from a whole request: in a single-turn episode its question is the final
reply, so a test whose agent must act there asks only of the tasks it knows are multi-turn.
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.openai_server import final_answer

USER_SIM = "user_sim"
# Asks (a question mark) for more in general ("anything else"): the offline user gives
# every detail it still holds back (synthesis.tasks.envfoundry_user).
ASK = "Before I begin: is there anything else I should know?"
WORDING = "Of course."


def _stage(request: dict[str, Any]) -> str | None:
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("name")


def _prompt_line(request: dict[str, Any], label: str) -> str | None:
    """A line of a user_sim request's prompt (its first user message; a repair request
    appends its own after it)."""
    prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
    for line in prompt.splitlines():
        if line.startswith(label):
            return line.removeprefix(label)
    return None


def offline_answer(request: dict[str, Any]) -> str:
    """The offline answer a user_sim request asks the model to word."""
    return _prompt_line(request, "What you answer: ") or ""


def values_to_state(request: dict[str, Any]) -> list[str]:
    """The values a user_sim request says the answer must state."""
    line = _prompt_line(request, "Values to state: ") or "(none)"
    return [] if line == "(none)" else line.split("; ")


def answer_user_sim(request: dict[str, Any]) -> dict[str, Any] | None:
    """The offline answer with a few words of the user's own, or None (not a user_sim call)."""
    if _stage(request) != USER_SIM:
        return None
    return final_answer(json.dumps({"text": f"{WORDING} {offline_answer(request)}"}))


def answer_asking_agent(request: dict[str, Any]) -> dict[str, Any] | None:
    """The agent's question on its first turn, else None (the agent acts: another
    responder's turn)."""
    if _stage(request) is not None or not request.get("tools"):
        return None
    if any(m["role"] == "assistant" for m in request["messages"]):
        return None
    return final_answer(ASK)
