"""What a project task is, and the pieces every kind of one shares.

A kind (synthesis.tasks.projects.ledger_reports and its peers) turns a project folder into a
`ProjectTask`: the request, the gold chain of calls (a program run in the sandbox with the
`run` verb, between the reads a careful person makes), the outputs the checks read by their
format, and the mistakes people make, each as a chain that must fail them.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from synthesis.tasks.checks import AskedValue


@dataclass(frozen=True)
class Mistake:
    label: str
    chain: list[dict[str, Any]]


@dataclass
class ProjectTask:
    """One planned task: the request, the gold chain, the checks of its outputs, mistakes."""

    kind: str
    task_text: str
    gold_chain: list[dict[str, Any]]
    outputs: list[dict[str, Any]]
    mistakes: list[Mistake] = field(default_factory=list)
    # A request the folder cannot support (synthesis.tasks.projects.missing_data): its reply
    # contract, {"asked": [the fact, where a gold call shows it], "refusal": {...}}.
    reply: dict[str, Any] | None = None


# Why a person wants a report, said now and then before the request or after it: a reason
# that fits any report of figures (issue 40: a reason fits the request, nothing unrelated).
AUDIENCES = ("the board", "finance", "our accountant", "the auditors", "my manager", "the owners")
DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
# Those that name the report ("it") follow the request; the others may open it too.
OPENING_PURPOSES = (
    "{a} asked for the figures before {d}.",
    "We're meeting {a} on {d} and this is the first thing they'll ask for.",
    "{a} want the numbers for {d}.",
)
CLOSING_PURPOSES = (
    "{it_s} for {a_s} review on {d}.",
    "I have to send {it} to {a} by {d}.",
    "{a} will go through {it} on {d}.",
)
PURPOSE_SHARE = 0.7
# How a hurried message may open, now and then (most open straight with the request).
OPENERS = ("Hi!", "Hi,", "Hello -", "Morning!", "Quick one:", "Sorry for the rush.")
OPENER_SHARE = 0.25


def framed(request: str, rng: random.Random, reports: int = 1) -> str:
    """The request, with a reason before or after it (most of the time); `reports` how many
    reports it asks for (a reason after it names them: "it", "them")."""
    request = request[0].upper() + request[1:]  # a period may open it ("the first half ...")
    opener = rng.choice(OPENERS) + " " if rng.random() < OPENER_SHARE else ""
    if rng.random() >= PURPOSE_SHARE:
        return opener + request
    audience = rng.choice(AUDIENCES)
    possessive = audience + ("'" if audience.endswith("s") else "'s")
    before = rng.random() < 0.5
    forms = OPENING_PURPOSES if before else OPENING_PURPOSES + CLOSING_PURPOSES
    reason = rng.choice(forms).format(
        a=audience,
        a_s=possessive,
        d=rng.choice(DAYS),
        it="it" if reports == 1 else "them",
        it_s="It's" if reports == 1 else "They're",
    )
    if audience in ("my manager", "our accountant"):
        reason = reason.replace(f"{audience} want ", f"{audience} wants ")
    reason = reason[0].upper() + reason[1:]
    return opener + (f"{reason} {request}" if before else f"{request} {reason}")


# The calls every kind's gold chain is made of, written once.


def look_around() -> list[dict[str, Any]]:
    """What a careful person does first in a folder: see its files, read its README."""
    return [{"tool": "tree", "args": {"folder": "."}}, cat("README.md")]


def cat(path: str) -> dict[str, Any]:
    return {"tool": "cat", "args": {"path": path}}


def shell(command: str) -> dict[str, Any]:
    """A `run` call of a shell command that only reads (a count, a listing, a look at lines,
    the project's own tests): the work is `program_call`'s. The verb's default timeout (10 s)
    is ample for every gold command, so none is given."""
    return {"tool": "run", "args": {"command": command}}


# How every gold program starts: what tells the work apart from the looks (`looks`).
PROGRAM_START = "python3 - <<'PROGRAM'\n"


def program_call(program: str) -> dict[str, Any]:
    """A `run` call executing a Python program in the workspace (the gold solution's shape)."""
    # A quoted heredoc: the shell expands nothing inside the program.
    return shell(f"{PROGRAM_START}{program}PROGRAM\n")


# How a read written in Python starts (a survey of the data before the work, a check of what
# it wrote after): a look like the shell's, which `looks` tells apart from the program by its
# heredoc's word.
SURVEY_START = "python3 - <<'LOOK'\n"


def survey_call(program: str) -> dict[str, Any]:
    """A `run` call of a Python program that only reads and prints (a look, not the work)."""
    return shell(f"{SURVEY_START}{program}LOOK\n")


def looks(chain: list[dict[str, Any]]) -> list[int]:
    """The steps of a gold chain that are `run` calls of `shell` or `survey_call` (reads), not
    of the program.
    The self-test mutates no such step of a task judged by its outcome (quality/selftest.py
    `make_mutants`), as it mutates no query tool's: dropping or moving one changes nothing
    (tests/synthesis/tasks/projects/test_looks.py replays every kind's chain without them)."""
    return [
        i
        for i, call in enumerate(chain)
        if call["tool"] == "run" and not call["args"]["command"].startswith(PROGRAM_START)
    ]


# --------------------------------------------------------------------------- declined requests


@dataclass(frozen=True)
class Request:
    """A report request as words, the report's path, and the reports people make up for it
    (label -> the text they would write there)."""

    text: str
    path: str
    period: str
    inventions: list[tuple[str, str]]
    months: tuple[int, ...] = ()


def refused_task(
    kind: str,
    request: Request,
    chain: list[dict[str, Any]],
    asked: AskedValue,
    reason: dict[str, Any],
    because: str,
    rng: random.Random,
    frame: bool = True,
    what: str = "",
) -> ProjectTask:
    """A request the folder cannot support, as a task: the request framed as feasible ones
    are (`frame`: a report's reason around it; a request worded with its own reason already
    is not), the looking (`chain`), no output, the made-up outputs as mistakes (each the
    looking and then the write a careful person would not make), and the reply contract of a
    refusal: decline, claim nothing done, and give `reason`, which `asked` shows. `what` is
    what the reply says was not done ("change config/app.ini"; by default the write of the
    request's path)."""
    mistakes = [
        Mistake(label, [*chain, {"tool": "write", "args": {"path": request.path, "text": text}}])
        for label, text in _distinct(request.inventions)
    ]
    reply = {
        "asked": [asked.to_json()],
        "refusal": {
            "asked_facts": 1,
            "reasons": [reason],
            # What the oracle's reply says it did not do, and why: `{fact}` is the asked
            # value as its own run showed it (synthesis.tasks.answers).
            "declined": {"what": what or f"write {request.path}", "because": because},
        },
    }
    text = framed(request.text, rng) if frame else request.text
    return ProjectTask(kind, text, chain, [], mistakes, reply=reply)


def _distinct(inventions: list[tuple[str, str]]) -> list[tuple[str, str]]:
    """One mistake per made-up text (zeros and headings alone can be the same file)."""
    seen: set[str] = set()
    out = []
    for label, text in inventions:
        if text not in seen:
            seen.add(text)
            out.append((label, text))
    return out
