"""Fake model answers for the LLM agent's episodes, computed from each request's content.

`answer_user_sim(request)`: a good simulated user (synthesis.llm.user_sim): it gives exactly
the details the prompt's "Give now:" line lists, verbatim. `answer_asking_agent(request)`:
an agent that, shown a request with [detail N] markers, asks for them once before acting.
Each returns None for a request that is not its own, so a build-wide responder can chain
them with the other stages' (first non-None answer wins).
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.openai_server import final_answer

USER_SIM = "user_sim"
ASK = "Before I start: could you give me the details marked in your message?"
_DETAIL = re.compile(r"detail (\d+) = (.*?)(?=; detail \d+ = |$)")
_MARKER = re.compile(r"\[detail \d+\]")
_GIVEN = re.compile(r"detail (\d+)", re.IGNORECASE)  # how either user answer names one


def _stage(request: dict[str, Any]) -> str | None:
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("name")


def details_to_give(request: dict[str, Any]) -> list[tuple[int, str]]:
    """The (number, fact) pairs a user_sim request asks to give (its prompt is the first
    user message; a repair request appends its own after it)."""
    prompt = next(m["content"] for m in request["messages"] if m["role"] == "user")
    for line in prompt.splitlines():
        if line.startswith("Give now: "):
            return [(int(n), f) for n, f in _DETAIL.findall(line.removeprefix("Give now: "))]
    return []


def answer_user_sim(request: dict[str, Any]) -> dict[str, Any] | None:
    """A user's answer giving every listed detail verbatim, or None (not a user_sim call)."""
    if _stage(request) != USER_SIM:
        return None
    give = details_to_give(request)
    text = "Of course. " + " ".join(f"For detail {n}, it is {fact}." for n, fact in give)
    return final_answer(json.dumps({"text": text, "facts": [fact for _, fact in give]}))


def answer_asking_agent(request: dict[str, Any]) -> dict[str, Any] | None:
    """The agent's question while the opening hides details no later user message has
    given, else None (the agent acts: another responder's turn)."""
    if _stage(request) is not None or not request.get("tools"):
        return None
    users = [m.get("content") or "" for m in request["messages"] if m["role"] == "user"]
    if not users:
        return None
    hidden = set(_MARKER.findall(users[0]))
    given = {f"[detail {n}]" for text in users[1:] for n in _GIVEN.findall(text)}
    return final_answer(ASK) if hidden - given else None
