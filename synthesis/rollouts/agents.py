"""Agent policies: what acts in a rollout, one decision per observation (oracle and baselines).

A policy sees only what a real agent would (the task, the tools, the conversation so far)
and returns either one tool call or a final message. LLM agents plug in behind the same
protocol.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from synthesis.llm.client import LLMClient
from synthesis.models import Scenario


@dataclass(frozen=True)
class ToolCallAction:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FinalAnswer:
    text: str


Action = ToolCallAction | FinalAnswer


@dataclass
class Observation:
    """What the agent knows before its next decision."""

    task_text: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    step: int
    """Tool calls made so far in this episode."""
    last_result: Any = None


@runtime_checkable
class Policy(Protocol):
    name: str

    def next_action(self, observation: Observation) -> Action: ...


class OraclePolicy:
    """Replays the scenario's gold chain call by call, then reports what it did.

    It is built per scenario because it is the one policy allowed to know the answer; it is
    what the fine-tuning shards are made of.
    """

    name = "oracle"

    def __init__(self, scenario: Scenario):
        self.chain = list(scenario.gold_chain)
        self.expected_reply = scenario.expected_reply
        self.infeasible = scenario.kind == "infeasible"

    def next_action(self, observation: Observation) -> Action:
        # Keyed on the step count, not internal state, so one instance can serve retries.
        if observation.step < len(self.chain):
            call = self.chain[observation.step]
            return ToolCallAction(tool=call.tool, args=dict(call.args))
        return FinalAnswer(self._summary(observation))

    def _summary(self, observation: Observation) -> str:
        done = [m["content"] for m in observation.messages if m.get("role") == "tool"]
        failures = sum('"success":false' in c for c in done)
        tools = ", ".join(dict.fromkeys(c.tool for c in self.chain))
        if self.expected_reply:
            # A reply task: state the values read (minimal; the SFT answer owner words it).
            values = "; ".join(str(v) for v in self.expected_reply.get("include", []))
            if self.infeasible:
                return f"I could not do that, because of what the records show: {values}."
            return f"Here is what I found: {values}."
        if failures:
            return (
                f"I attempted the request ({tools}), but {failures} step(s) failed; "
                "please review the errors above."
            )
        return f"Done. I looked up the records you described and completed the request ({tools})."


class NoopPolicy:
    """Answers without touching anything: the do-nothing baseline checks must fail."""

    name = "noop"

    def next_action(self, observation: Observation) -> Action:
        return FinalAnswer("I have reviewed your request, but I have not made any changes.")


class LLMPolicy:
    """A model behind an OpenAI-compatible endpoint acting as the agent.

    It sees exactly what the rollout shows any policy (the chat so far and the tool schemas).
    An answer that cannot be acted on (unknown shape, arguments that are not a JSON object)
    is rejected with its reason recorded, and the episode ends there instead of guessing.
    """

    def __init__(self, client: LLMClient, artifact_id: str) -> None:
        self.client = client
        self.artifact_id = artifact_id
        self.name = f"llm:{client.settings.model}"
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd = 0.0
        self.rejections: list[str] = []

    def next_action(self, observation: Observation) -> Action:
        answer = self.client.chat(
            observation.messages,
            tools=observation.tools,
            stage="trajectories",
            artifact_id=self.artifact_id,
        )
        self.tokens_in += answer.call.tokens_in
        self.tokens_out += answer.call.tokens_out
        self.cost_usd += answer.call.cost_usd
        tool_calls = answer.message.get("tool_calls") or []
        if not tool_calls:
            return FinalAnswer(str(answer.message.get("content") or ""))
        function = tool_calls[0].get("function") or {}
        name, raw = function.get("name"), function.get("arguments") or "{}"
        try:
            args = json.loads(raw)
        except (TypeError, ValueError) as exc:
            return self._reject(f"arguments of {name!r} are not JSON: {exc}")
        if not isinstance(name, str) or not isinstance(args, dict):
            return self._reject(f"tool call needs a name and a JSON object, got {name!r}, {raw!r}")
        return ToolCallAction(name, args)

    def _reject(self, reason: str) -> FinalAnswer:
        self.rejections.append(reason)
        return FinalAnswer(f"[model output rejected: {reason}]")
