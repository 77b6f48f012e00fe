"""The `user_sim` stage: a simulated user who reveals a task's facts over the turns of an episode.

A multi-turn episode opens with the task's text with some of its facts withheld: our code,
not the model, picks them (every stated fact after the first, in the order the text states
them) and puts a numbered marker in their place ("[detail 1]"), so the opening is a pure
function of the scenario. When the agent answers with text instead of acting while facts
are still withheld, the user answers it. The model plays the user in the scenario's persona
and is told the details to give now; its answer is accepted only when it is not empty,
names no hidden record id, states every detail it was asked to give, lists as revealed
only the plan's own facts and states no other value (a number or an email) that neither
the request nor the conversation holds. A rejected answer is repaired (bounded), never
cached. Anything else (no usable answer, an unreachable endpoint, a spent budget) falls
back to an offline reply that states the details verbatim, with the reason recorded: the
episode goes on either way, and its user turns are bounded (`MAX_USER_TURNS`).

The episode is graded by the scenario's checks as any other (synthesis.rollouts.episodes):
the final state and the final reply, whatever turns led there.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.llm.client import REJECTED_PREFIX, LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.llm.task_text import VOICES, stated
from synthesis.models import Scenario
from synthesis.tasks.assembly import mentions_an_id, plan_facts, state_ids
from synthesis.tasks.text.voices import PERSONAS

STAGE = "user_sim"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "minLength": 1},
        "facts": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["text", "facts"],
    "additionalProperties": False,
}
PROMPT = (
    "You play a person who sent a request to a business's assistant. Your first message "
    "left some details out; each is marked like [detail 1]. The assistant has just replied "
    "instead of finishing the job. Answer it as that person, in one short message of plain "
    "text, giving exactly the details listed under 'Give now', each written exactly as "
    "listed. Do not give other details, invent values, or mention record ids or codes. "
    'Answer with a JSON object {"text": "...", "facts": ["<each value you gave, exactly as '
    'listed>"]} and nothing else.'
)
# At most this many user turns after the opening: every fact is revealed by the last one.
MAX_USER_TURNS = 3
# Facts shorter than this ("1", "no") are never withheld: their marker would replace
# parts of other words and numbers, and they are rarely what a task hinges on.
MIN_WITHHELD_CHARS = 3
MARKER = "[detail {n}]"
FALLBACK_OPENER = "Sorry, I left that out."
# Values that, stated by the user and absent from everything said so far, are invented.
_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+|\d+(?:[.,:/-]\d+)*")
_PERSONAS = {p.name: p for p in PERSONAS}


@dataclass(frozen=True)
class Withheld:
    """A fact kept out of the opening message, and the number of its marker."""

    number: int
    fact: str

    def offline(self) -> str:
        return f"Detail {self.number} is {self.fact}."


# ----------------------------------------------------------------------------- the opening


def episode_facts(scenario: Scenario, model: EnvModel | None) -> tuple[list[str], list[str]]:
    """The scenario's facts and hidden ids: its plan's when it carries one (in the process
    that planned it), else recomputed as the planner computes them (from the gold chain's
    arguments, and every record id of the start and final states)."""
    plan = scenario._plan
    if plan is not None:
        return list(plan.facts), list(plan.hidden_ids)
    hidden = sorted(state_ids(scenario.start_state, scenario.final_state or {}))
    if model is None:
        return [], hidden
    try:
        return plan_facts(model, scenario.gold_chain), hidden
    except (KeyError, ValueError):  # a tool the model does not know: no facts to withhold
        return [], hidden


def _pattern(fact: str) -> re.Pattern[str]:
    # Whole words only, so withholding "Lee" leaves "Leeds" alone.
    return re.compile(rf"(?<!\w){re.escape(fact)}(?!\w)", re.IGNORECASE)


def withhold(text: str, facts: Sequence[str]) -> tuple[str, list[Withheld]]:
    """`text` with every stated fact after the first replaced by a numbered marker, and the
    facts withheld. A fact is withheld only when its marker leaves every kept fact stated
    and the fact itself no longer stated; otherwise it stays in the text."""
    located = []
    for fact in dict.fromkeys(facts):
        found = _pattern(fact).search(text) if len(fact) >= MIN_WITHHELD_CHARS else None
        if found is not None:
            located.append((found.start(), fact))
    ordered = [fact for _, fact in sorted(located)]
    kept = [f for f in facts if stated(text, f) and f not in ordered[1:]]
    opening, withheld = text, []
    for fact in ordered[1:]:
        candidate = _pattern(fact).sub(MARKER.format(n=len(withheld) + 1), opening)
        if stated(candidate, fact) or not all(stated(candidate, k) for k in kept):
            kept.append(fact)
            continue
        opening = candidate
        withheld.append(Withheld(len(withheld) + 1, fact))
    return opening, withheld


# ----------------------------------------------------------------------------- the answers


def answer_fault(
    answer: dict[str, Any],
    *,
    give: Sequence[Withheld],
    facts: Sequence[str],
    hidden_ids: Sequence[str],
    known: str,
) -> str | None:
    """Why the user's answer cannot be used, or None. Reasons name no hidden id."""
    text = answer["text"].strip()
    if not text:
        return "empty: the answer is blank"
    if mentions_an_id(text, hidden_ids):
        return "leak: the answer names a hidden record id"
    allowed = {f.casefold() for f in facts}
    foreign = [f for f in answer["facts"] if f.strip().casefold() not in allowed]
    if foreign:
        return f"fact: {foreign[0]!r} is not a fact of the task"
    missing = [w.fact for w in give if not stated(text, w.fact)]
    if missing:
        return f"fact: does not give {', '.join(repr(f) for f in missing)}"
    known_folded = known.casefold()
    invented = [v for v in _VALUE.findall(text) if v.casefold() not in known_folded]
    if invented:
        return f"fact: states {invented[0]!r}, which the request does not"
    return None


@dataclass
class UserTurn:
    """One answer of the simulated user, where it came from and (offline) why."""

    text: str
    source: str  # "llm" or "offline"
    revealed: list[Withheld]
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)


def offline_answer(give: Sequence[Withheld]) -> str:
    """The user's answer without a model: the details, verbatim."""
    return " ".join([FALLBACK_OPENER, *(w.offline() for w in give)])


def _last_assistant_text(messages: Sequence[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


class SimulatedUser:
    """The user of one multi-turn episode (the `user` of synthesis.rollouts.episodes.rollout).

    `opening` is the first user message; `answer(messages)` is the next user message after
    the agent's text turn, or None when the user has nothing more to say (every fact given,
    or the user turns used up), which ends the episode."""

    def __init__(
        self,
        client: LLMClient | None,
        scenario: Scenario,
        model: EnvModel | None,
        *,
        seed: int = 0,
        max_turns: int = MAX_USER_TURNS,
    ) -> None:
        self.client = client
        self.scenario = scenario
        self.title = model.title if model is not None else scenario.env_id
        self.facts, self.hidden_ids = episode_facts(scenario, model)
        self.opening, self.withheld = withhold(scenario.task_text, self.facts)
        self.seed = seed
        self.max_turns = max_turns
        self.turns: list[UserTurn] = []

    @property
    def pending(self) -> list[Withheld]:
        given = {w.number for turn in self.turns for w in turn.revealed}
        return [w for w in self.withheld if w.number not in given]

    def answer(self, messages: Sequence[dict[str, Any]]) -> str | None:
        pending = self.pending
        if not pending or len(self.turns) >= self.max_turns:
            return None
        # An agent whose output was rejected has stopped; the user does not talk it round.
        if _last_assistant_text(messages).startswith(REJECTED_PREFIX):
            return None
        # Spread what is left over the turns left, so the last turn gives everything.
        give = pending[: math.ceil(len(pending) / (self.max_turns - len(self.turns)))]
        turn = self._ask(messages, give)
        self.turns.append(turn)
        return turn.text

    def _ask(self, messages: Sequence[dict[str, Any]], give: Sequence[Withheld]) -> UserTurn:
        if self.client is None:
            return UserTurn(offline_answer(give), "offline", list(give), f"{STAGE}: no endpoint")
        # What the user may repeat: its own words and the agent's, never a tool result (the
        # user has not seen them; a decoy's value there is not the task's).
        said = [str(m.get("content") or "") for m in messages if m.get("role") != "tool"]
        known = "\n".join([self.scenario.task_text, *said])
        try:
            answer = ask_structured(
                self.client,
                self.request_messages(messages, give),
                stage=STAGE,
                artifact_id=self.scenario.scenario_id,
                schema=SCHEMA,
                seed=self.seed,
                accept=lambda value: answer_fault(
                    value, give=give, facts=self.facts, hidden_ids=self.hidden_ids, known=known
                ),
            )
        except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
            return UserTurn(
                offline_answer(give),
                "offline",
                list(give),
                f"{STAGE}: {exc.reason}",
                list(exc.attempts),
            )
        text = answer.value["text"].strip()
        # What the answer states counts as given, beyond what it was asked to give.
        revealed = [w for w in self.pending if stated(text, w.fact)]
        return UserTurn(text, "llm", revealed, None, answer.attempts)

    def request_messages(
        self, messages: Sequence[dict[str, Any]], give: Sequence[Withheld]
    ) -> list[dict[str, Any]]:
        """The prompt: the persona, the request in full and as shown, the agent's last words
        and the details to give. No tool result is sent (they carry record ids)."""
        persona = _PERSONAS.get(str(self.scenario.provenance.get("persona", "")))
        voice = VOICES.get(persona.voice, persona.voice) if persona else "a customer"
        lines = [
            f"Business: {self.title}",
            f"Persona: {voice}",
            f"Your full request: {self.scenario.task_text}",
            f"Your first message: {self.opening}",
            f"The assistant's reply: {_last_assistant_text(messages)}",
            "Give now: " + "; ".join(f"detail {w.number} = {w.fact}" for w in give),
        ]
        return [
            {"role": "system", "content": PROMPT},
            {"role": "user", "content": "\n".join(lines)},
        ]

    def metadata(self) -> dict[str, Any]:
        """What the trajectory records of its user: turns (user messages, the opening
        included), where the answers came from, and why any fell back."""
        sources = sorted({t.source for t in self.turns})
        out: dict[str, Any] = {
            "turns": 1 + len(self.turns),
            "user_sim": sources[0] if len(sources) == 1 else ("mixed" if sources else "none"),
            "withheld": len(self.withheld),
            "revealed": len(self.withheld) - len(self.pending),
        }
        reasons = [t.reason for t in self.turns if t.reason]
        if not self.withheld:
            reasons.append(f"{STAGE}: the task states fewer than two facts to withhold")
        if reasons:
            out["user_sim_reasons"] = reasons
        return out

    @property
    def attempts(self) -> list[LLMCall]:
        return [call for turn in self.turns for call in turn.attempts]
