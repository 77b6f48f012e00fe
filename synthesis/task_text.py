"""How a task is worded: personas, step sentences, and the made-up values a task asks for.

Every choice draws from the planner's rng, so the words are as reproducible as the plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from synthesis.models import ToolSpec
from synthesis.topology import target_param


@dataclass(frozen=True)
class Persona:
    name: str
    openers: tuple[str, ...]
    closers: tuple[str, ...]


PERSONAS = (
    Persona(
        "support_agent",
        ("I'm working a support ticket for {title}.", "Support here, handling a request."),
        ("Thanks!", "Let me know once it's done.", ""),
    ),
    Persona(
        "operations_manager",
        ("Quick admin task for {title}.", "Operations request for {title}."),
        ("Please confirm when finished.", "Thanks.", ""),
    ),
    Persona(
        "end_user",
        ("Hi there!", "Hello, I hope you can help me.", ""),
        ("Thank you so much!", "Thanks in advance.", ""),
    ),
    Persona(
        "new_staff",
        ("I'm new on the {title} team and was asked to sort this out.",),
        ("Please tell me when it's done.", "Appreciate it!"),
    ),
)

FIRST_STEP = ("Please {p}.", "Could you {p}?", "I need you to {p}.", "{P}.")
NEXT_STEP = ("Then {p}.", "After that, {p}.", "Once that is done, {p}.")
_STATUS_VERBS = {"set", "mark", "transition", "update", "change", "move"}
_CREATE_VERBS = {"create", "add", "new", "register", "make"}

_FIRST = (
    "Avery",
    "Blake",
    "Casey",
    "Devon",
    "Emery",
    "Finley",
    "Harper",
    "Jordan",
    "Kai",
    "Logan",
    "Morgan",
    "Quinn",
    "Riley",
    "Sage",
    "Taylor",
    "Rowan",
)
_LAST = (
    "Abbott",
    "Brennan",
    "Castillo",
    "Dalton",
    "Ellison",
    "Fujita",
    "Garza",
    "Hale",
    "Ibarra",
    "Jensen",
    "Kowalski",
    "Lindqvist",
    "Moreau",
    "Nakamura",
    "Okoye",
    "Pryce",
)
_WORDS = (
    "amber",
    "cedar",
    "harbor",
    "maple",
    "north",
    "orchid",
    "silver",
    "summit",
    "willow",
    "coral",
    "granite",
    "meadow",
)


def task_text(title: str, persona: Persona, sentences: list[str], rng: random.Random) -> str:
    """The whole request: the persona's opener, one sentence per step, its closer."""
    parts = [rng.choice(persona.openers).format(title=title)]
    for i, phrase in enumerate(sentences):
        template = rng.choice(FIRST_STEP if i == 0 else NEXT_STEP)
        parts.append(template.format(p=phrase, P=phrase[:1].upper() + phrase[1:]))
    parts.append(rng.choice(persona.closers))
    return " ".join(p for p in parts if p)


def mutation_sentence(tool: ToolSpec, desc: str, args: dict[str, Any], rng: random.Random) -> str:
    """What to do to the record `desc` names, for a transition or update."""
    verb = tool.name.split("_")[0].lower()
    if tool.operation == "update":
        value = next(v for k, v in args.items() if k != target_param(tool))
        return f"change the {field_words(tool.field or '')} of {desc} to {value_words(value)}"
    if verb in _STATUS_VERBS:
        return f"mark {desc} as {tool.target_status}"
    phrase = f"{verb} {desc}"
    if rng.random() < 0.5:
        phrase += f" so that its status becomes {tool.target_status}"
    return phrase


def create_sentence(tool: ToolSpec, label: str, refs: list[str], scalars: list[str]) -> str:
    """What to create (a `label`), for which records and with which values."""
    verb = tool.name.split("_")[0].lower()
    verb = "create" if verb in _CREATE_VERBS else verb
    text = f"{verb} a new {label}"
    if refs:
        text += " for " + join_phrases(refs)
    if scalars:
        text += " with " + join_phrases(scalars)
    return text


def fresh_text(rng: random.Random, fname: str, taken: set[str]) -> str:
    """A plausible new value for text field `fname`, unlike any casefolded value in `taken`."""
    for _ in range(50):
        first, last = rng.choice(_FIRST), rng.choice(_LAST)
        if "email" in fname:
            value = f"{first}.{last}@example.com".lower()
        elif "name" in fname:
            value = f"{first} {last}"
        else:
            value = f"{rng.choice(_WORDS)} {rng.choice(_WORDS)}"
        if value.casefold() not in taken:
            return value
    return f"{fname} {rng.randint(1000, 9999)}"


def field_words(name: str) -> str:
    return name.replace("_", " ")


def value_words(v: Any) -> str:
    if isinstance(v, bool):
        return "yes" if v else "no"
    return str(v)


def join_phrases(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + " and " + parts[-1]
