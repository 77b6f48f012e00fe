"""How a task is worded (offline): personas, one sentence per plan goal, and made-up values.

Phrasing reads only the task-plan record (synthesis.tasks.plan). Its choices draw from the rng
it is handed: the planner's own stream, continued, so the words are as reproducible as the
plan.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.wordbank import FIRST_NAMES, LAST_NAMES, WORDS


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
STATUS_VERBS = {"set", "mark", "transition", "update", "change", "move"}
_CREATE_VERBS = {"create", "add", "new", "register", "make"}


def task_text(title: str, persona: Persona, sentences: list[str], rng: random.Random) -> str:
    """The whole request: the persona's opener, one sentence per step, its closer."""
    parts = [rng.choice(persona.openers).format(title=title)]
    for i, phrase in enumerate(sentences):
        template = rng.choice(FIRST_STEP if i == 0 else NEXT_STEP)
        parts.append(template.format(p=phrase, P=phrase[:1].upper() + phrase[1:]))
    parts.append(rng.choice(persona.closers))
    return " ".join(p for p in parts if p)


def phrase(plan: TaskPlan, rng: random.Random) -> tuple[str, Persona]:
    """The request for `plan`, and the persona who makes it."""
    persona = rng.choice(PERSONAS)
    sentences = [goal_sentence(goal) for goal in plan.goals]
    return task_text(plan.title, persona, sentences, rng), persona


def goal_sentence(goal: PlanGoal) -> str:
    """One goal in words: what to do, to which record (named, never by id), with what."""
    if goal.kind == "update":
        what, value = goal.values[0]
        return f"change the {what} of {goal.target} to {value}"
    if goal.kind == "transition":
        if goal.verb in STATUS_VERBS:
            return f"mark {goal.target} as {goal.to_status}"
        phrase = f"{goal.verb} {goal.target}"
        if goal.says_result:
            phrase += f" so that its status becomes {goal.to_status}"
        return phrase
    if goal.kind == "create":
        verb = "create" if goal.verb in _CREATE_VERBS else goal.verb
        text = f"{verb} a new {goal.label}"
        if goal.refs:
            text += " for " + join_phrases(goal.refs)
        if goal.values:
            text += " with " + join_phrases([f"{what} {value}" for what, value in goal.values])
        return text
    if goal.kind == "ask":
        return ask_sentence(goal)
    if goal.kind == "conditional":
        return conditional_sentence(goal)
    if goal.kind == "refuse":
        return refuse_sentence(goal)
    return action_sentence(goal)


def ask_sentence(goal: PlanGoal) -> str:
    """An information-seeking goal: 'tell me the status of the order ...'."""
    return f"tell me {goal.question}"


def conditional_sentence(goal: PlanGoal) -> str:
    """'if the booking ... is still confirmed, cancel it; otherwise tell me its status'."""
    then = goal_sentence(goal.then) if goal.then is not None else goal.verb
    return (
        f"check {goal.target}: if it is still {goal.condition}, {then}; "
        f"otherwise tell me {goal.otherwise}"
    )


def refuse_sentence(goal: PlanGoal) -> str:
    """A request that may break a rule; the task asks to be told why if it can't be done."""
    then = goal_sentence(goal.then) if goal.then is not None else goal.verb
    return f"{then} (if that isn't possible, tell me why)"


def action_sentence(goal: PlanGoal) -> str:
    """A tool call said through the tool's own description, with its values and targets."""
    summary = goal.description.strip().rstrip(".") or field_words(goal.tool)
    first, _, rest = summary.partition(". ")
    body = first[:1].lower() + first[1:]
    details = [f"{what} {value}" for what, value in goal.values]
    if goal.target:
        details.insert(0, goal.target)
    return body + (" — " + ", ".join(details) if details else "")


def tool_verb(tool_name: str) -> str:
    return tool_name.split("_")[0].lower()


def fresh_text(rng: random.Random, fname: str, taken: set[str]) -> str:
    """A plausible new value for text field `fname`, unlike any casefolded value in `taken`."""
    for _ in range(50):
        first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
        if "email" in fname:
            value = f"{first}.{last}@example.com".lower()
        elif "name" in fname:
            value = f"{first} {last}"
        else:
            value = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
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
