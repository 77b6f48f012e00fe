"""Agent policies: what acts in a rollout, one decision per observation (oracle and baselines).

A policy sees only what a real agent would (the task, the tools, the conversation so far)
and returns one tool call, a turn of several tool calls (run in order) or a final message.
LLM agents plug in behind the same protocol. The baselines keep rewards honest: doing
nothing (`noop`), refusing (`refuse_always`) and doing the right thing to the wrong record
(`wrong_record`) must all earn 0.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from synthesis.environments.model import EnvModel
from synthesis.llm.client import REJECTED_PREFIX, LLMClient, LLMRejected
from synthesis.models import Scenario
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.decoys import pick_decoys, swapped_chain


@dataclass(frozen=True)
class ToolCallAction:
    tool: str
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class FinalAnswer:
    text: str


@dataclass(frozen=True)
class ToolCallTurn:
    """Several tool calls made in one turn (as models do, whatever `parallel_tool_calls`
    says): the rollout runs every one, in order, and feeds each result back."""

    calls: tuple[ToolCallAction, ...]


Action = ToolCallAction | ToolCallTurn | FinalAnswer


@dataclass
class Observation:
    """What the agent knows before its next decision."""

    task_text: str
    tools: list[dict[str, Any]]
    messages: list[dict[str, Any]]
    step: int
    """Tool calls made so far in this episode."""
    last_result: Any = None
    read_state: Callable[[], dict[str, Any] | None] | None = None
    """The environment's current state. Only scripted policies (the oracle and baselines,
    which report what their run did) read it; an agent under test never does."""


@runtime_checkable
class Policy(Protocol):
    name: str

    def next_action(self, observation: Observation) -> Action: ...


def scripted_calls(policy: Policy) -> list[tuple[str, dict[str, Any]]] | None:
    """The tool calls `policy` makes whatever they return, in order (its `scripted_calls`),
    or None for a policy that decides after every result. A rollout sends a script's calls
    to the sandbox in one message instead of one exchange per call; the results, and so the
    episode, are the same, because a script does not look at them."""
    script = getattr(policy, "scripted_calls", None)
    return list(script) if script is not None else None


class OraclePolicy:
    """Replays the scenario's gold chain call by call, then states the outcome.

    It is built per scenario because it is the one policy allowed to know the answer; it is
    what the fine-tuning shards are made of. Its final answer says what changed and the
    values asked for, read from its own run (`synthesis.tasks.answers`).
    """

    name = "oracle"

    def __init__(self, scenario: Scenario, model: EnvModel | None = None):
        self.scenario = scenario
        self.model = model
        self.chain = list(scenario.gold_chain)
        self.question = oracle_question(scenario)

    @property
    def scripted_calls(self) -> list[tuple[str, dict[str, Any]]]:
        """Its calls (see `scripted_calls`): the chain, whatever the results say."""
        return [(call.tool, dict(call.args)) for call in self.chain]

    def next_action(self, observation: Observation) -> Action:
        asking = ask_first(self.question, observation)
        if asking is not None:
            return asking
        # Keyed on the step count, not internal state, so one instance can serve retries.
        if observation.step < asked_steps(self.scenario, observation, len(self.chain)):
            call = self.chain[observation.step]
            return ToolCallAction(tool=call.tool, args=dict(call.args))
        if observation.step < len(self.chain):
            # Done what it was asked so far: it says so, and the user asks for what is next.
            return FinalAnswer(STAGE_DONE)
        return FinalAnswer(self._answer(observation))

    def _answer(self, observation: Observation) -> str:
        results = [_content(m) for m in observation.messages if m.get("role") == "tool"]
        state = (
            observation.read_state()
            if observation.read_state is not None
            else self.scenario.final_state
        )
        return oracle_answer(self.scenario, state, results, model=self.model)


# The oracle's reply when it has done what it was asked so far and the user has more to ask.
STAGE_DONE = "That's done. Anything else?"


def asked_steps(scenario: Scenario, observation: Observation, total: int) -> int:
    """How many gold calls the requests made so far ask for: a task asked one request at a
    time (`stage_steps` of its provenance) allows the calls of the requests the user has
    made, so no call is made for a request the conversation has not shown."""
    steps = (scenario.provenance or {}).get("stage_steps") or []
    stages = [s["say"] for s in (scenario.user or {}).get("stages") or ()]
    made = sum(
        1 for m in observation.messages if m.get("role") == "user" and m.get("content") in stages
    )
    return steps[made] if made < len(steps) else total


def oracle_question(scenario: Scenario) -> str:
    """What the oracle asks a multi-turn task's user first: every detail it holds back, in
    the words of the detail's own question ("" for a single-turn task)."""
    details = (scenario.user or {}).get("details") or []
    questions = [d["question"] for d in details]
    if not questions:
        return ""
    lead = ["Before I start:", *["And"] * (len(questions) - 1)]
    return " ".join(f"{w} {q[:1].lower()}{q[1:]}" for w, q in zip(lead, questions, strict=True))


def ask_first(question: str, observation: Observation) -> FinalAnswer | None:
    """A multi-turn task's held details are asked for before anything is done: the calls
    use them, and no value may be used before the user said it. The question, as the
    agent's first turn; None once it was asked (or when there is none to ask)."""
    said = any(m.get("role") == "assistant" and m.get("content") for m in observation.messages)
    return FinalAnswer(question) if question and not said else None


def _content(message: dict[str, Any]) -> Any:
    try:
        return json.loads(message.get("content") or "null")
    except ValueError:
        return message.get("content")


NOOP_ANSWER = "I have reviewed your request, but I have not made any changes."
REFUSAL = "I'm sorry, but I can't help with that request."


class NoopPolicy:
    """Answers without touching anything: the do-nothing baseline, which must earn 0."""

    name = "noop"

    def next_action(self, observation: Observation) -> Action:
        return FinalAnswer(NOOP_ANSWER)


class RefuseAlwaysPolicy:
    """Refuses every request without a call: a baseline that must earn 0 (also on tasks whose
    right outcome is to change nothing, because the reply must state the facts)."""

    name = "refuse_always"

    def next_action(self, observation: Observation) -> Action:
        return FinalAnswer(REFUSAL)


class WrongRecordPolicy(OraclePolicy):
    """The gold chain with each record the task acts on swapped for a decoy of the same
    collection (`synthesis.tasks.decoys`), and an answer that honestly reports what that
    run did: a baseline that must earn 0 (`synthesis.tasks.screens.wrong_record_earns`)."""

    name = "wrong_record"

    def __init__(self, scenario: Scenario, model: EnvModel | None, swaps: dict[Any, Any]) -> None:
        super().__init__(scenario, model)
        self.swaps = dict(swaps)
        self.chain = swapped_chain(scenario.gold_chain, self.swaps)

    @property
    def label(self) -> str:
        return ", ".join(f"{t} -> {d}" for t, d in self.swaps.items())


def wrong_record_policy(scenario: Scenario, model: EnvModel | None) -> WrongRecordPolicy | None:
    """The wrong-record baseline for `scenario`, or None when a record it acts on has no
    decoy."""
    swaps = pick_decoys(scenario, model)
    return WrongRecordPolicy(scenario, model, swaps) if swaps is not None else None


AGENT_STAGE = "agent"
# Attempts after the first sample the model (temperature > 0, the attempt as the seed), so
# k attempts are k draws and each has its own cache key; attempt 0 is the greedy answer.
SAMPLING_TEMPERATURE = 0.7


class LLMPolicy:
    """A model behind an OpenAI-compatible endpoint acting as the agent.

    It sees exactly what the rollout shows any policy (the chat so far and the tool schemas).
    A turn's tool calls are all returned, in order. An answer that cannot be acted on (cut,
    empty, an unknown tool, arguments that are not a JSON object) is rejected by the client
    with its reason recorded (never cached), and the episode ends there instead of guessing.

    `attempt` (difficulty calibration, synthesis.tasks.calibration): which of k attempts
    this is; it names the trajectory and sets the sampling (`sampling`). None: one attempt,
    greedy, as before attempts existed.
    """

    def __init__(self, client: LLMClient, artifact_id: str, attempt: int | None = None) -> None:
        self.client = client
        self.artifact_id = artifact_id
        self.name = f"llm:{client.settings.model}"
        self.attempt = attempt
        self.temperature, self.seed = sampling(attempt)
        self.tokens_in = 0
        self.tokens_out = 0
        self.cost_usd = 0.0
        self.rejections: list[str] = []

    def next_action(self, observation: Observation) -> Action:
        offered = {t.get("function", {}).get("name") for t in observation.tools}
        try:
            answer = self.client.chat(
                observation.messages,
                tools=observation.tools,
                stage=AGENT_STAGE,
                artifact_id=self.artifact_id,
                temperature=self.temperature,
                seed=self.seed,
                accept=lambda message: _unactionable(message, offered),
            )
        except LLMRejected as exc:
            self._account(exc.attempts)
            return self._reject(exc.reason)
        self._account(answer.attempts)
        tool_calls = answer.message.get("tool_calls") or []
        if not tool_calls:
            return FinalAnswer(str(answer.message.get("content") or ""))
        actions = tuple(_action(call) for call in tool_calls)
        return actions[0] if len(actions) == 1 else ToolCallTurn(actions)

    def _account(self, attempts) -> None:
        self.tokens_in += sum(c.tokens_in for c in attempts)
        self.tokens_out += sum(c.tokens_out for c in attempts)
        self.cost_usd += sum(c.cost_usd for c in attempts)

    def _reject(self, reason: str) -> FinalAnswer:
        self.rejections.append(reason)
        return FinalAnswer(f"{REJECTED_PREFIX} {reason}]")

    @property
    def metadata(self) -> dict[str, Any]:
        """What the trajectory records of the attempt (nothing for a lone attempt)."""
        if self.attempt is None:
            return {}
        return {"attempt": self.attempt, "temperature": self.temperature, "seed": self.seed}


def sampling(attempt: int | None) -> tuple[float, int]:
    """(temperature, seed) of an attempt: greedy with seed 0 for the first (or only) one,
    sampled with the attempt index as the seed for the others."""
    if not attempt:
        return 0.0, 0
    return SAMPLING_TEMPERATURE, attempt


def _unactionable(message: dict[str, Any], offered: set[str]) -> str | None:
    """Why a turn's tool calls cannot all be run (checked before any runs), or None."""
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        name, raw = function.get("name"), function.get("arguments") or "{}"
        if name not in offered:
            return f"tool: unknown tool {name!r}"
        try:
            args = json.loads(raw)
        except (TypeError, ValueError) as exc:
            return f"tool: arguments of {name!r} are not JSON: {exc}"
        if not isinstance(args, dict):
            return f"tool: arguments of {name!r} are not a JSON object: {raw!r}"
    return None


def _action(call: dict[str, Any]) -> ToolCallAction:
    function = call["function"]
    return ToolCallAction(function["name"], json.loads(function.get("arguments") or "{}"))
