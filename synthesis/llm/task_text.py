"""The `task_text` stage: a model rewords a planned task's offline text in its persona's voice.

It reads only the task-plan record (synthesis.tasks.plan), the offline text and the persona,
and is told nothing the text must not say (the plan's hidden ids are never sent). An answer
is accepted only when it keeps every fact the offline text states (normalised as reply
checks are, synthesis.tasks.envfoundry_reward), names no hidden id, writes no ISO timestamp or
snake_case code, has a sane length and leaves the reply contract as it was. Anything else
(a rejected answer after its repairs, an unreachable endpoint, a spent budget) keeps the
offline text and says why: never a traceback. Rejected answers are never cached, so the
next build asks again.

A workspace task's checks read files, not a reply: its request must keep what they read,
the paths and columns of its outputs (scenario provenance `outputs`), the periods and
numbers it names ("Q1 2024", "the 3 largest") and where the rules are ("the README"). Those
the offline text states are facts a wording must keep, beside the plan's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Scenario
from synthesis.tasks.assembly import mentions_an_id, reworded, safe_reply
from synthesis.tasks.dialogue import stated
from synthesis.tasks.plan import TaskPlan
from synthesis.tasks.text.values import has_iso_timestamp, snake_case_tokens
from synthesis.tasks.text.voices import PERSONAS, Persona

STAGE = "task_text"
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "minLength": 1}},
    "required": ["text"],
    "additionalProperties": False,
}
PROMPT = (
    "You rewrite requests sent to a business's assistant so they read like a real person "
    "wrote them. Keep the request's meaning, every step it asks for and their order. Keep "
    "every listed fact exactly as written (names, emails, amounts, dates, codes, statuses). "
    "Add no new facts, record ids or codes, and no dates in YYYY-MM-DD form or "
    "words_joined_by_underscores. Write as the given persona, in one short message of plain "
    'text. Answer with a JSON object {"text": "..."} and nothing else.'
)
VOICES = {
    "customer": "a customer writing about their own records",
    "on_behalf": "someone at the front desk passing on a customer's request",
    "staff": "a member of staff asking a colleague to do back-office work",
}
# How the persona writes (synthesis.tasks.text.voices.REGISTERS), as the prompt says it.
REGISTER_WORDS = {
    "terse": ", writing tersely (no greeting, no thanks)",
    "chatty": ", writing chattily and warmly",
    "formal": ", writing formally (no contractions)",
    "non_native": ", writing in English as a second language (simple, slightly unidiomatic)",
}
# Bounds on the answer's length relative to the offline text: a much shorter text has
# dropped something; a much longer one has invented something.
MIN_RATIO = 0.4
MAX_RATIO = 3.0
MAX_EXTRA_CHARS = 200

Source = Literal["llm", "offline"]
_PERSONAS = {p.name: p for p in PERSONAS}


@dataclass
class PhrasedText:
    """The text a scenario carries, where it came from and (offline) why."""

    text: str
    source: Source
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)

    def provenance(self) -> dict[str, Any]:
        out: dict[str, Any] = {"text_source": self.source}
        if self.reason is not None:
            out["text_fallback_reason"] = self.reason
        return out


# A period or a number as a workspace request names one: "Q1", "2024", "2024-01", "3".
_PERIOD_OR_NUMBER = re.compile(r"\b(?:Q[1-4]|H[12]|\d+(?:[-.]\d+)*)\b")
# Words that tell the agent where the rules and the precision are.
_WORKSPACE_WORDS = ("README", "to the cent")


def output_facts(outputs: Iterable[dict[str, Any]], offline_text: str) -> list[str]:
    """What a workspace task's checks read from its request: each output's path and
    columns, the periods and numbers the text names, and where its rules are."""
    facts: list[str] = []
    for output in outputs:
        facts.append(str(output["path"]))
        facts += [str(c) for c in output.get("columns", [])]
    facts += _PERIOD_OR_NUMBER.findall(offline_text)
    facts += _WORKSPACE_WORDS
    return list(dict.fromkeys(facts))


def required_facts(plan: TaskPlan, offline_text: str, extra: Sequence[str] = ()) -> list[str]:
    """The plan's facts (and `extra`, a workspace task's `output_facts`) the offline text
    states: what any wording of it must keep."""
    facts = dict.fromkeys([*plan.facts, *extra])
    return [f for f in facts if stated(offline_text, f)]


def text_fault(
    plan: TaskPlan, offline_text: str, text: str, extra: Sequence[str] = ()
) -> str | None:
    """Why `text` cannot stand in for `offline_text`, or None. Reasons name no hidden id.
    `extra`: facts beyond the plan's (a workspace task's `output_facts`)."""
    if not text.strip():
        return "empty: the text is blank"
    low = max(1, int(len(offline_text) * MIN_RATIO))
    high = int(len(offline_text) * MAX_RATIO) + MAX_EXTRA_CHARS
    if not low <= len(text) <= high:
        return f"size: {len(text)} characters, outside {low}..{high}"
    if mentions_an_id(text, plan.hidden_ids):
        return "leak: the text names a hidden record id"
    missing = [f for f in required_facts(plan, offline_text, extra) if not stated(text, f)]
    if missing:
        return f"fact: missing {', '.join(repr(f) for f in missing[:3])}"
    if has_iso_timestamp(text):
        return "format: an ISO timestamp"
    codes = snake_case_tokens(text)
    if codes:
        return f"format: snake_case {', '.join(repr(c) for c in codes[:3])}"
    # Words that name a decoy's value take it off the reply's guard (`safe_reply`), which
    # would weaken the checks and void the planner's wrong-record screen: keep the contract.
    if safe_reply(plan, text) != safe_reply(plan, offline_text):
        return "reply: the text names a value the reply must not contain"
    return None


def request_messages(
    plan: TaskPlan, offline_text: str, persona: Persona, extra: Sequence[str] = ()
) -> list[dict[str, Any]]:
    facts = required_facts(plan, offline_text, extra)
    who = VOICES.get(persona.voice, persona.voice) + REGISTER_WORDS.get(persona.register, "")
    lines = [
        f"Business: {plan.title}",
        f"Persona: {who}",
        f"Request: {offline_text}",
        "Facts to keep exactly: " + ("; ".join(facts) if facts else "(none)"),
    ]
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def phrase_task(
    client: LLMClient,
    plan: TaskPlan,
    offline_text: str,
    persona: Persona,
    *,
    artifact_id: str | None,
    extra: Sequence[str] = (),
) -> PhrasedText:
    """The model's wording of the task when it passes every check, else the offline text
    with the reason (`task_text: <why>`). `extra`: facts beyond the plan's to keep."""
    try:
        answer = ask_structured(
            client,
            request_messages(plan, offline_text, persona, extra),
            stage=STAGE,
            artifact_id=artifact_id,
            schema=SCHEMA,
            seed=plan.seed,
            accept=lambda value: text_fault(plan, offline_text, value["text"].strip(), extra),
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return PhrasedText(offline_text, "offline", f"{STAGE}: {exc.reason}", list(exc.attempts))
    return PhrasedText(answer.value["text"].strip(), "llm", None, answer.attempts)


def phrase_scenario(client: LLMClient, scenario: Scenario) -> tuple[Scenario, PhrasedText]:
    """`scenario` worded by the model (its id follows the words; its reply contract is the
    same, `text_fault` sees to it), or as it was; either way its provenance says which
    (`text_source`) and, offline, why. The ledger rows of its calls are relabelled with the
    id the scenario ends with."""
    plan = scenario._plan
    persona = _PERSONAS.get(scenario.provenance.get("persona", ""))
    if persona is not None:  # the register the offline text was written in, kept
        register = scenario.provenance.get("register", persona.register)
        persona = dataclasses.replace(persona, register=register)
    if plan is None or persona is None:
        phrased = PhrasedText(scenario.task_text, "offline", f"{STAGE}: no task plan or persona")
    else:
        outputs = scenario.provenance.get("outputs") or []
        extra = output_facts(outputs, scenario.task_text) if outputs else []
        phrased = phrase_task(
            client,
            plan,
            scenario.task_text,
            persona,
            artifact_id=scenario.scenario_id,
            extra=extra,
        )
    out = reworded(scenario, phrased.text, phrased.provenance())
    # Ledger rows name the scenario the build publishes (its id follows the words); the
    # asset spools them after this, so the spool has the final id.
    for call in phrased.attempts:
        call.artifact_id = out.scenario_id
    return out, phrased
