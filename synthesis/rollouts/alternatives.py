"""Correct alternatives: right answers given another way, which must keep reward 1.

A reward that pays only for the oracle's exact wording teaches a model that wording, and
scores a right answer 0: as much a defect of the dataset as a shortcut that pays. The
self-test plays these beside the shortcuts, and a task ships only when every one earns 1
(quality/selftest.py); the dataset card publishes how often they failed on the candidates
(the false-negative rate).

* Replies: the asked values written as people write them (a phone number in its national
  form, a handle with or without "@", a small number as a word, an amount with separators
  and a currency code, a date without its year and a 12-hour time); the same answer with
  pleasantries around it; a refusal that quotes the tool's own error, or names any one rule
  that blocks the request, in the rule's words or by its fact.
* Chains: independent steps in another order, and a lookup left out when nothing the answer
  states came from it and the ids it found are known otherwise; played in the sandbox, kept
  only when they reach exactly the gold run's final state.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from synthesis.models import Scenario, ToolCall
from synthesis.tasks.checks import asked_values
from synthesis.tasks.envfoundry_reward import decline_cue

SMALL_NUMBER_WORDS = (
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
    "fifteen sixteen seventeen eighteen nineteen twenty"
).split()
_PHONE = re.compile(r"^\+1-(\d{3})-(\d{3})-(\d{4})$")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?)?$")


@dataclass(frozen=True)
class AlternativeReply:
    name: str
    reply: str


def written_otherwise(value: Any) -> str | None:
    """`value` as a person might write it instead of how the state holds it (None: no other
    usual form)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        if 0 <= value <= 20:
            return SMALL_NUMBER_WORDS[value]
        return f"{value:,}" if abs(value) >= 1000 else None
    if isinstance(value, float):
        return f"USD {value:,.2f}"
    if not isinstance(value, str):
        return None
    phone = _PHONE.match(value)
    if phone:
        return f"({phone.group(1)}) {phone.group(2)}-{phone.group(3)}"
    if value.startswith("@") and len(value) > 1:
        return value[1:]
    if _ISO.match(value):
        moment = datetime.fromisoformat(value)
        day = f"{moment:%A}, {moment:%B} {moment.day}"
        if len(value) <= 10:
            return day
        hour = moment.hour % 12 or 12
        clock = f"{hour}:{moment.minute:02d}" if moment.minute else f"{hour}"
        return f"{day} at {clock} {'pm' if moment.hour >= 12 else 'am'}"
    return None


def reply_alternatives(
    scenario: Scenario, oracle_reply: str, results: Sequence[Any]
) -> list[AlternativeReply]:
    """Right replies other than the oracle's to the gold run of `scenario` (`results`: its
    calls' results)."""
    out = [
        AlternativeReply(
            "pleasantries",
            f"Sure, happy to help! {oracle_reply} Let me know if there is anything else.",
        )
    ]
    reply = (scenario.provenance or {}).get("reply") or {}
    refusal = reply.get("refusal")
    if refusal is not None:
        # Refused alone, nothing changed; beside other goals, the oracle's account of those
        # comes first and the refusal is of the one request.
        alone = refusal.get("alone", True)
        told = _done_part(oracle_reply)
        done = f"{told} " if told else ""
        unchanged = " Nothing was changed." if alone else ""
        error = _refusal_error(results)
        if error:
            out.append(
                AlternativeReply(
                    "refusal_quoting_the_error",
                    f"{done}I'm sorry, I couldn't do that one. The system said: {error}."
                    + unchanged,
                )
            )
        for i, reason in enumerate(refusal.get("reasons") or ()):
            for j, text in enumerate(reason.get("texts") or ()):
                out.append(
                    AlternativeReply(
                        f"refusal_by_rule_{i}_{j}",
                        f"{done}Unfortunately one part isn't possible: {text.rstrip('.')}."
                        + unchanged,
                    )
                )
        return out
    asked = asked_values(reply)
    forms = [(a.what, written_otherwise(a.value)) for a in asked]
    if asked and all(form is not None for _, form in forms):
        said = " ".join(f"{_capital(what)}: {form}." for what, form in forms)
        out.append(AlternativeReply("values_as_people_write_them", said))
    return out


def chain_alternatives(
    scenario: Scenario, roles: Sequence[str], depends: Any
) -> list[tuple[str, tuple[ToolCall, ...], tuple[int, ...]]]:
    """(name, chain, the gold step each step comes from) of other valid paths: the first
    pair of adjacent steps that do not depend on each other swapped, and the first lookup
    that nothing after it needs left out. `depends(a, b)`: whether gold step b relies on a
    (synthesis.environments.topology via the self-test)."""
    chain = list(scenario.gold_chain)
    out: list[tuple[str, tuple[ToolCall, ...], tuple[int, ...]]] = []
    for a in range(len(chain) - 1):
        b = a + 1
        if chain[a].tool != chain[b].tool and not depends(a, b):
            order = list(range(len(chain)))
            order[a], order[b] = b, a
            out.append((f"steps {a + 1} and {b + 1} swapped", _chain(chain, order), tuple(order)))
            break
    asked_steps = {a.step for a in asked_values((scenario.provenance or {}).get("reply"))}
    for i, role in enumerate(roles):
        if role != "lookup" or i in asked_steps:
            continue
        if any(depends(i, j) for j in range(i + 1, len(chain))):
            continue
        order = [j for j in range(len(chain)) if j != i]
        out.append((f"lookup {i + 1} skipped", _chain(chain, order), tuple(order)))
        break
    return out


def _chain(chain: Sequence[ToolCall], order: Sequence[int]) -> tuple[ToolCall, ...]:
    return tuple(chain[i] for i in order)


def _done_part(oracle_reply: str) -> str:
    """The oracle's sentences but its refusal: what was done and what was asked."""
    sentences = re.split(r"(?<=[.!?])\s+", oracle_reply.strip())
    return " ".join(s for s in sentences if not decline_cue(s))


def _refusal_error(results: Sequence[Any]) -> str:
    for result in reversed(results):
        if isinstance(result, dict) and result.get("success") is False and result.get("error"):
            return str(result["error"]).strip().rstrip(".")
    return ""


def _capital(text: str) -> str:
    return text[:1].upper() + text[1:]
