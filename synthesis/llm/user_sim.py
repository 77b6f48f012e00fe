"""The `user_sim` stage: a model plays a multi-turn task's user, in the persona's own words.

A multi-turn task (`Scenario.user`, synthesis.tasks.dialogue) carries the record its user is
played from: the opening (the request with a value or two held back) and what the user says
when asked. The shipped offline simulator (synthesis.tasks.envfoundry_user) plays it as is;
this one plays the same record with a model wording the answers. The opening is the
record's. After each text turn of the agent, the offline simulator, fed the same messages,
decides: when it ends the conversation (the agent's final reply) so does this user, so it
never stops before the agent does; when it answers, the model is shown that answer and the
values it states and says the same thing as the persona would. The model's answer is used
only when it is not empty, names no hidden record id, states every value the offline
answer states, states no held value the user has not been asked for yet, and states no
other value (a number or an email) that neither the whole request nor the conversation
holds. A rejected answer is repaired (bounded), never cached. Anything else (no usable
answer, an unreachable endpoint, a spent budget) falls back to the offline answer, with
the reason recorded: the user never raises, and the conversation is the offline one's in
all but wording (the same turns, the same details given).

A single-turn task (no `user`) has no simulated user: the agent is told `task_text`.
The episode is graded by the scenario's checks as any other (synthesis.rollouts.episodes):
the final state and the final reply, whatever turns led there.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.llm.task_text import VOICES, stated
from synthesis.models import Scenario
from synthesis.tasks import envfoundry_user
from synthesis.tasks.assembly import mentions_an_id, state_ids
from synthesis.tasks.text.voices import PERSONAS

STAGE = "user_sim"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1}},
    "required": ["text"],
    "additionalProperties": False,
}
PROMPT = (
    "You play a person who sent a request to a business's assistant. The assistant has "
    "just replied to you. You are told what the person answers: say the same thing as that "
    "person would, in one short message of plain text. Write every value listed under "
    "'Values to state' exactly as listed. Do not give other details, invent values, or "
    'mention record ids or codes. Answer with a JSON object {"text": "..."} and nothing else.'
)
# Values that, stated by the user and absent from everything said so far, are invented.
_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d+(?:[.,:/-]\d+)*")
_PERSONAS = {p.name: p for p in PERSONAS}


def hidden_ids(scenario: Scenario) -> list[str]:
    """The record ids the user must never name: its plan's (in the process that planned
    it), else every record id of the start and final states, as the planner computes them."""
    plan = scenario._plan
    if plan is not None:
        return list(plan.hidden_ids)
    return sorted(state_ids(scenario.start_state, scenario.final_state or {}))


def answer_fault(
    answer: dict[str, Any],
    *,
    facts: Sequence[str],
    held: Sequence[str],
    hidden_ids: Sequence[str],
    known: str,
) -> str | None:
    """Why the model's wording of an offline answer cannot be used, or None: it must state
    every one of `facts` (the offline answer's), none of `held` (values the user has not been
    asked for yet), no hidden id and no value `known` (the whole request and the
    conversation) does not hold. Reasons name no hidden id."""
    text = answer["text"].strip()
    if not text:
        return "empty: the answer is blank"
    if mentions_an_id(text, hidden_ids):
        return "leak: the answer names a hidden record id"
    missing = [f for f in facts if not stated(text, f)]
    if missing:
        return f"fact: does not give {', '.join(repr(f) for f in missing)}"
    early = [f for f in held if stated(text, f)]
    if early:
        return f"fact: gives {early[0]!r}, which was not asked for yet"
    known_folded = known.casefold()
    invented = [v for v in _VALUE.findall(text) if v.casefold() not in known_folded]
    if invented:
        return f"fact: states {invented[0]!r}, which the request does not"
    return None


@dataclass
class UserTurn:
    """One answer of the simulated user: its text, where it came from, the offline answer
    it stands for and (offline) why the model's was not used."""

    text: str
    source: str  # "llm" or "offline"
    offline: str
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)


def _last_assistant_text(messages: Sequence[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


class SimulatedUser:
    """The user of one multi-turn episode as a model plays it (the `user` of
    synthesis.rollouts.episodes.rollout): `opening` is the record's; `answer(messages)` is
    the next user message after the agent's text turn, or None exactly when the offline
    user of the same record ends the conversation. Raises ValueError for a single-turn
    scenario (it has no user)."""

    def __init__(
        self,
        client: LLMClient | None,
        scenario: Scenario,
        model: EnvModel | None = None,
        *,
        seed: int = 0,
    ) -> None:
        if scenario.user is None:
            raise ValueError(f"{scenario.scenario_id} is single-turn: it has no simulated user")
        self.client = client
        self.scenario = scenario
        self.title = model.title if model is not None else scenario.env_id
        self.offline = envfoundry_user.SimulatedUser(scenario.user)
        self.opening = self.offline.opening
        self.hidden_ids = hidden_ids(scenario)
        self.seed = seed
        self.turns: list[UserTurn] = []

    @property
    def pending(self) -> list[envfoundry_user.Detail]:
        """The held details not said yet (the offline user's: the same record, turns)."""
        return self.offline.pending

    @property
    def given(self) -> set[int]:
        return self.offline.given

    def answer(self, messages: Sequence[dict[str, Any]]) -> str | None:
        offline = self.offline.answer(messages)
        if offline is None:
            return None
        turn = self._ask(messages, offline)
        self.turns.append(turn)
        return turn.text

    def stated_facts(self, offline: str) -> list[str]:
        """The values the offline answer states: those of every detail (held or known)
        whose answer it says."""
        details = [*self.offline.details, *self.offline.known, *self.offline.stages]
        facts = [f for d in details if d.say and d.say in offline for f in d.facts]
        return list(dict.fromkeys(facts))

    def _ask(self, messages: Sequence[dict[str, Any]], offline: str) -> UserTurn:
        if self.client is None:
            return UserTurn(offline, "offline", offline, f"{STAGE}: no endpoint")
        facts = self.stated_facts(offline)
        # What the user may repeat: its own words and the agent's, never a tool result (the
        # user has not seen them; a decoy's value there is not the task's).
        said = [str(m.get("content") or "") for m in messages if m.get("role") != "tool"]
        # Values still held back that nobody has said: not to be given before asked for.
        # A later request the user has not made yet is held back as a detail is.
        later = self.offline.stages[self.offline.staged :]
        held = [
            f
            for d in [*self.offline.pending, *later]
            for f in d.facts
            if f not in facts and not any(stated(s, f) for s in said)
        ]
        known = "\n".join([self.scenario.task_text, offline, *said])
        try:
            answer = ask_structured(
                self.client,
                self.request_messages(messages, offline, facts),
                stage=STAGE,
                artifact_id=self.scenario.scenario_id,
                schema=SCHEMA,
                seed=self.seed,
                accept=lambda value: answer_fault(
                    value, facts=facts, held=held, hidden_ids=self.hidden_ids, known=known
                ),
            )
        except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
            return UserTurn(
                offline, "offline", offline, f"{STAGE}: {exc.reason}", list(exc.attempts)
            )
        return UserTurn(answer.value["text"].strip(), "llm", offline, None, answer.attempts)

    def request_messages(
        self, messages: Sequence[dict[str, Any]], offline: str, facts: Sequence[str]
    ) -> list[dict[str, Any]]:
        """The prompt: the persona, the user's first message, the agent's last words, the
        offline answer and the values it states. No tool result is sent (they carry record
        ids), nor the whole request (it holds the values not asked for yet)."""
        persona = _PERSONAS.get(str(self.scenario.provenance.get("persona", "")))
        voice = VOICES.get(persona.voice, persona.voice) if persona else "a customer"
        lines = [
            f"Business: {self.title}",
            f"Persona: {voice}",
            f"Your first message: {self.opening}",
            f"The assistant's reply: {_last_assistant_text(messages)}",
            f"What you answer: {offline}",
            "Values to state: " + ("; ".join(facts) if facts else "(none)"),
        ]
        return [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": "\n".join(lines)},
        ]

    def metadata(self) -> dict[str, Any]:
        """What the trajectory records of its user, as the offline simulator does: turns
        (user messages, the opening included), the details held back and given, where the
        answers came from ("none" before any) and why any fell back."""
        sources = sorted({t.source for t in self.turns})
        out: dict[str, Any] = {
            **self.offline.metadata(),
            "user_sim": sources[0] if len(sources) == 1 else ("mixed" if sources else "none"),
        }
        reasons = [t.reason for t in self.turns if t.reason]
        if reasons:
            out["user_sim_reasons"] = reasons
        return out

    @property
    def attempts(self) -> list[LLMCall]:
        return [call for turn in self.turns for call in turn.attempts]
