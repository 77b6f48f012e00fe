"""Configuration changes under constraints: change the export job's settings as asked, within
the rules the folder states (synthesis.environments.projects.service_config).

A request asks for a change in a user's words (an environment's workers at its limit, a
batch size up to a number under a cap on the timeout, debug on where it may be, the run
moved to a time in the user's time zone); the rules that bound it are in the folder
(`docs/operations.md` says them, `config/limits.json` holds the numbers), never in the
request. The right settings are computed here from the part's truth; the check reads
`config/app.ini` by its values (`file_ini` in the shipped reward module), the whole file, so
a key dropped or another section touched fails, while comments, key order and `yes` for
`true` are free. The guard on the rest of the workspace keeps the template and the old copy
as they were.

The gold solution is what a careful person does: the tree, the README, the rules, the
limits, the settings, the validator's source and a run of it, then a program (the standard
library's configparser to read, a line edit that keeps the comments) that computes the new
value from the limits file and sets it, the validator again, and a look at the file. The
mistakes are the same program with one thing wrong: the example or the old copy edited, the
other environment's section, the limit ignored or another environment's limit read, the
time zone not converted or converted the wrong way, a batch size rounded up or one step
short, the timeout rule forgotten, a boolean configparser does not read, only the changed
keys written. Each is kept when the settings it leaves differ from the right ones, and each
must fail the checks (the self-test's mutants, run in the sandbox like the gold program).

Each kind has a declined twin (`DECLINED`): the kind's own request, built by the same
function from the same draws, for a change the folder's rules forbid - production's number
of workers asked for staging, whose limit is lower; a cap on the timeout under what the new
batch size needs, or the batch change asked of the template, which the rules say is never
edited; debug on in production ("Never in production"); the schedule written as the user's
own time, which the rules say is UTC whatever zone a request came in. The requests name both
sides alike (both environments, both files, "UTC time" and the user's, debug on and off), so
a twin differs from a feasible request only in which side is which, and only the folder
tells them apart. The right outcome is to look, change nothing and give the rule; the
changes people make anyway are the mistakes.
"""

from __future__ import annotations

import dataclasses
import random
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.service_config import (
    CONFIG,
    EXAMPLE,
    LIMITS,
    OPERATIONS,
    VALIDATOR,
    ServiceConfig,
    typed,
)
from synthesis.tasks.checks import AskedValue
from synthesis.tasks.projects.work import (
    Mistake,
    ProjectTask,
    Request,
    cat,
    look_around,
    program_call,
    refused_task,
    shell,
)

PART = "service_config"
Sections = dict[str, dict[str, str]]


@dataclass(frozen=True)
class _Edit:
    """One program's edit: the settings it sets (section -> key -> text) and how it writes
    them. `code` is the program's computing part (it calls `set_value`); `changes` is what
    that code sets in this folder, computed here alike (the two cannot disagree: the tests
    run the programs in the sandbox and read the file they leave)."""

    code: str
    changes: Sections
    path: str = CONFIG  # a mistake edits the template or the old copy
    only_changed: bool = False  # a mistake writes only the keys it set, dropping the rest


@dataclass
class _Plan:
    """A kind's request, its right edit and its wrong ones (label -> edit)."""

    kind: str
    text: str
    right: _Edit
    wrong: list[tuple[str, _Edit]] = field(default_factory=list)


# --------------------------------------------------------------------------- the kinds
# Each kind's words are built by one function that its declined twin (below, under "declined
# requests") calls too: a twin is the same request with only the value the folder's rules
# forbid, so no word tells a request the folder forbids from one it allows.


def _environment(rng: random.Random, production_share: float) -> tuple[str, str]:
    """The environment a request is about, and the other one."""
    target = "production" if rng.random() < production_share else "staging"
    return target, "staging" if target == "production" else "production"


# A workers request names both environments alike, "the workers at 16 in production and the
# workers as they are in staging", in either order. Most name a number (the limit itself, or
# more with a fallback: "or as high as we're allowed"); some ask for the most allowed in
# words. A declined one asks production's number for staging: the same words, each
# environment where it was, the two parts swapped.
WORKERS_IN_WORDS = 0.05
WORKERS_FALLBACK = 0.05
WORKERS_REQUESTS = (
    "Please have the workers {first} in {x} and the workers {second} in {y} ({config}).",
    "In {config}, we'd like the workers {first} in {x} and the workers {second} in {y}.",
    "Can you get the workers {first} in {x}, and the workers {second} in {y}? It's in {config}.",
    "Could we have the workers {first} in {x} and the workers {second} in {y}? The setting is"
    " in {config}.",
)
WORKERS_KEPT = "as they are"
WORKERS_IN_WORDS_AMOUNTS = (
    "at the most we're allowed",
    "at the most our limits permit",
    "at the highest number the rules allow",
)
# What to do when the limits do not allow the number: a fallback makes any number feasible,
# so only a feasible request says one; a condition (or none) is said by both.
WORKERS_FALLBACKS = (
    "If that's over our limit, just go as high as we're allowed.",
    "If the rules don't allow that many, go as high as they do.",
)
WORKERS_CONDITIONS = (
    "",
    "",
    "If that's over our limit, leave it as it is and tell me.",
    "Only if the rules allow it, of course.",
)


@dataclass(frozen=True)
class _WorkersAsk:
    """What a workers request asks: the environment, the number (None: the most allowed, in
    words), whether a fallback follows it, and which environment it names first."""

    target: str
    asked: int | None
    fallback: bool
    production_first: bool


def _workers_ask(config: ServiceConfig, rng: random.Random) -> _WorkersAsk:
    target, _ = _environment(rng, 0.75)
    most = _workers_max(config, target)
    way = rng.random()
    if way < WORKERS_IN_WORDS:
        asked, fallback = None, False
    elif way < WORKERS_IN_WORDS + WORKERS_FALLBACK:
        asked, fallback = most + rng.randint(2, 8), True
    else:
        asked, fallback = most, False
    return _WorkersAsk(target, asked, fallback, rng.random() < 0.5)


def _workers_request(config: ServiceConfig, ask: _WorkersAsk, rng: random.Random) -> str:
    """A workers request: the number (or the most allowed, in words) in one environment and
    the workers as they are in the other, and a fallback or a condition after it."""
    text = rng.choice(WORKERS_REQUESTS)
    if ask.asked is None:
        amount = rng.choice(WORKERS_IN_WORDS_AMOUNTS)
    else:
        amount = f"at {ask.asked}"
        after = rng.choice(WORKERS_FALLBACKS if ask.fallback else WORKERS_CONDITIONS)
        text = f"{text} {after}".rstrip()
    x, y = ("production", "staging") if ask.production_first else ("staging", "production")
    first, second = (amount, WORKERS_KEPT) if x == ask.target else (WORKERS_KEPT, amount)
    text = text.format(first=first, second=second, x=x, y=y, config=CONFIG)
    return _said(text, "max_workers", config, rng)


def _max_workers(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """As many workers in one environment as its limit allows: asked in words, as the limit's
    number, or as a larger number with "or as high as we're allowed"."""
    config = _config(project)
    ask = _workers_ask(config, rng)
    target, asked = ask.target, ask.asked
    other = "staging" if target == "production" else "production"
    most = _workers_max(config, target)

    def edit(section: str, limit_of: str | None, number: int | None = None) -> _Edit:
        if number is None:
            code = (
                f'most = LIMITS["environments"]["{limit_of}"]["workers_max"]\n'
                f'set_value("{section}", "workers", most)\n'
            )
            number = _workers_max(config, limit_of)
        else:
            code = f'set_value("{section}", "workers", {number})\n'
        return _Edit(code, {section: {"workers": str(number)}})

    right = edit(target, target)
    wrong = [
        (f"changes {other}'s workers instead", edit(other, target)),
        (f"takes {other}'s limit", edit(target, other)),
    ]
    if asked is not None and asked > most:
        wrong.append(("sets the number asked, over the limit", edit(target, None, asked)))
    text = _workers_request(config, ask, rng)
    return _task(project, _Plan("max_workers", text, right, wrong))


# A batch size asked under the maximum is said as the size the rules round it to (a multiple
# of the step); one over it is said with a fallback ("or the biggest value our rules allow
# below that"). The timeout clause asks for what the rule needs, and a cap says how long the
# user's side waits: a feasible request's cap allows the timeout the new size needs, a
# declined one's (the same words, the same size) is under it.
BATCH_REQUESTS = (
    (
        'Please set {target}\'s "batch_size" in {config} to {size}.',
        'Please set {target}\'s "batch_size" in {config} to {size}, or the biggest value our'
        " rules allow below that.",
    ),
    (
        'Could you push {target}\'s "batch_size" up to {size} in {config}?',
        "Could you push {target}'s \"batch_size\" up to {size} in {config}? If the rules don't"
        " allow exactly that, use the largest allowed size under it.",
    ),
    (
        '{Target} should send batches of {size}. It\'s "batch_size" in {config}.',
        "{Target} should send batches of {size} - or the nearest allowed size under {size} if"
        ' that one breaks the rules. It\'s "batch_size" in {config}.',
    ),
    (
        'Make {target}\'s batches {size} records each ("batch_size" in {config}).',
        "Make {target}'s batches as big as the rules allow without going over {size}"
        ' ("batch_size" in {config}).',
    ),
)
BATCH_CONDITIONS = ("", "", "If the rules don't allow exactly that, leave it and tell me.")
BATCH_TIMEOUTS = (
    'If the timeout rule then wants a longer "timeout_s", raise it to the smallest value that'
    " passes.",
    'Bump "timeout_s" to the minimum the rules need if it\'s too short for the new size.',
    'And if "timeout_s" no longer fits the bigger batches, give it just enough seconds to'
    " pass the rule.",
    'Check the timeout too: when the rules need more, set "timeout_s" to the least they accept.',
)
BATCH_CAPS = (
    'Don\'t let "timeout_s" go above {cap} seconds, though: the database drops slower calls.',
    'Keep "timeout_s" at {cap} seconds or less - the load balancer gives up after that.',
    'The database cuts a call off after {cap} seconds, so "timeout_s" can\'t be more than that.',
)
# The caps people say, in seconds.
ROUND_SECONDS = (5, 10, 15, 20, 30, 45, 60, 90, 120, 180, 240, 300, 450, 600, 900)


# Which file a request names, and which it does not: the settings, or (a declined one) the
# template, which the rules say is never edited. Both are named in every request, in the
# same places ("config/app.ini, not config/app.example.ini" or the other way round).
BATCH_FILES = (
    "That's {file}, not {not_file}.",
    "Only in {file}, not in {not_file}.",
    "The change goes in {file} - not in {not_file}.",
)


@dataclass(frozen=True)
class _BatchAsk:
    """What a batch size request asks: the environment, the size it says, whether a
    fallback follows it, the size the rules make of it, which round cap it says (0: the
    nearest the timeout rule allows, 1: the next), and a draw a declined request of it turns
    on (which change of the request makes it one)."""

    target: str
    size: int
    fallback: bool
    largest: int
    notch: int
    turn: float


def _batch_ask(config: ServiceConfig, rng: random.Random) -> _BatchAsk:
    rule = config.limits["batch_size"]
    step, most = rule["multiple_of"], rule["max"]
    target, _ = _environment(rng, 0.7)
    drawn = rng.choice(_batch_sizes(config, target))
    largest = min(most, drawn // step * step)
    fallback = drawn > most
    size = drawn if fallback else largest
    return _BatchAsk(target, size, fallback, largest, int(rng.random() < 0.5), rng.random())


def _batch_request(
    config: ServiceConfig, ask: _BatchAsk, cap: int, rng: random.Random, path: str = CONFIG
) -> str:
    """A batch size request: the size, with a fallback or a condition, the timeout clause,
    the cap on the timeout and the file it means (`path`; the other one named as not meant)."""
    exact, rounded = rng.choice(BATCH_REQUESTS)
    said = rounded if ask.fallback else f"{exact} {rng.choice(BATCH_CONDITIONS)}".rstrip()
    parts = (said, rng.choice(BATCH_TIMEOUTS), rng.choice(BATCH_CAPS), rng.choice(BATCH_FILES))
    text = " ".join(parts).format(
        config=path,
        file=path,
        not_file=EXAMPLE if path == CONFIG else CONFIG,
        size=ask.size,
        target=ask.target,
        Target=ask.target.capitalize(),
        cap=cap,
    )
    return _said(text, "batch_size", config, rng)


def _batch_cap(config: ServiceConfig, ask: _BatchAsk) -> int:
    """A feasible request's cap: a round number of seconds the new timeout keeps under (at
    least the timeout there is, and what the rule needs for the new size)."""
    needed = max(int(config.effective(ask.target, "timeout_s")), config.min_timeout(ask.largest))
    above = [s for s in ROUND_SECONDS if s >= needed] or [needed]
    return above[min(ask.notch, len(above) - 1)]


def _batch_sizes(config: ServiceConfig, target: str) -> list[int]:
    """Sizes the rules do not take as they are (not a multiple of the step, some over the
    maximum), each with room for a larger batch than today's: a request's first number."""
    rule = config.limits["batch_size"]
    step, most = rule["multiple_of"], rule["max"]
    now = int(config.sections[target]["batch_size"])
    return [n for n in range(now + step + 1, most + 2 * step) if n % step and n % 10 == 0]


def _batch_size(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The largest batch size allowed up to a number, the timeout raised when the rule
    needs it."""
    config = _config(project)
    rule = config.limits["batch_size"]
    step, most = rule["multiple_of"], rule["max"]
    ask = _batch_ask(config, rng)
    target, asked = ask.target, ask.size
    other = "staging" if target == "production" else "production"

    def edit(size_code: str, size: int, with_timeout: bool = True, section=target) -> _Edit:
        code = (
            'rule = LIMITS["batch_size"]\n'
            f"asked = {asked}\n"
            f"size = {size_code}\n"
            f'set_value("{section}", "batch_size", size)\n'
        )
        changes = {section: {"batch_size": str(size)}}
        if with_timeout:
            code += (
                'timing = LIMITS["timeout_s"]\n'
                'needed = -(-timing["factor"] * size // timing["records_per_second"])\n'
                f'if int(current("{section}", "timeout_s")) < needed:\n'
                f'    set_value("{section}", "timeout_s", needed)\n'
            )
            needed = config.min_timeout(size)
            if int(config.effective(section, "timeout_s")) < needed:
                changes[section]["timeout_s"] = str(needed)
        return _Edit(code, changes)

    largest = min(most, asked // step * step)
    rounded = 'min(rule["max"], asked // rule["multiple_of"] * rule["multiple_of"])'
    right = edit(rounded, largest)
    wrong = [
        (f"changes {other}'s batch size instead", edit(rounded, largest, section=other)),
        ("sets the size asked", edit("asked", asked)),
        (
            "rounds up to the next multiple",
            edit(
                'min(rule["max"], -(-asked // rule["multiple_of"]) * rule["multiple_of"])',
                min(most, -(-asked // step) * step),
            ),
        ),
        (
            "stops one multiple short",
            edit(
                'min(rule["max"], asked // rule["multiple_of"] * rule["multiple_of"])'
                ' - rule["multiple_of"]',
                largest - step,
            ),
        ),
        (
            "ignores the maximum",
            edit('asked // rule["multiple_of"] * rule["multiple_of"]', asked // step * step),
        ),
        (
            "forgets the timeout rule",
            edit(
                'min(rule["max"], asked // rule["multiple_of"] * rule["multiple_of"])',
                largest,
                with_timeout=False,
            ),
        ),
    ]
    text = _batch_request(config, ask, _batch_cap(config, ask), rng)
    return _task(project, _Plan("batch_size", text, right, wrong))


# Debug is asked on in some environments and off in the others, both said alike ("debug on
# in X and debug off in Y", either named first): a request for debug on in production, which
# the rules forbid, has the very words of one for staging, the two words swapped.
DEBUG_REQUESTS = (
    "Please set debug {first} in {x} and debug {second} in {y} ({config}). [defaults] stays"
    " as it is.",
    "In {config}, we need debug {first} in {x} and debug {second} in {y}; leave [defaults] alone.",
    "Can you make it debug {first} in {x}, debug {second} in {y}? It's in {config}, not"
    " [defaults].",
    "For the next few days: debug {first} in {x} and debug {second} in {y}, please. The"
    " setting is in {config}; [defaults] stays as it is.",
)


def _debug_request(config: ServiceConfig, in_forbidden: bool, rng: random.Random) -> str:
    """A debug request: on where the limits allow it and off where they do not, or (a
    declined one, `in_forbidden`) the other way round; [defaults] left alone."""

    def named(names: list[str]) -> str:
        return " and ".join(rng.sample(names, len(names)))

    allowed = named(_debug_allowed(config))
    forbidden = named([n for n in config.environments if n not in _debug_allowed(config)])
    x, y = (allowed, forbidden) if rng.random() < 0.5 else (forbidden, allowed)
    on = forbidden if in_forbidden else allowed
    first, second = ("on", "off") if x == on else ("off", "on")
    text = rng.choice(DEBUG_REQUESTS).format(first=first, second=second, x=x, y=y, config=CONFIG)
    return _said(text, "debug_on", config, rng)


def _debug_allowed(config: ServiceConfig) -> list[str]:
    return [n for n in config.environments if config.limits["environments"][n]["debug"]]


def _debug_on(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Debug on in every environment the limits allow it in (named), [defaults] left alone."""
    config = _config(project)
    allowed = _debug_allowed(config)

    def edit(sections: list[str], word: str = "true", code: str | None = None) -> _Edit:
        off = [n for n in sections if not typed("debug", config.effective(n, "debug"))]
        return _Edit(
            code or f'for name in {off!r}:\n    set_value(name, "debug", "{word}")\n',
            {name: {"debug": word} for name in off},
        )

    right = edit(
        allowed,
        code=(
            'for name, rule in LIMITS["environments"].items():\n'
            '    if rule["debug"] and current(name, "debug").lower() not in TRUE:\n'
            '        set_value(name, "debug", "true")\n'
        ),
    )
    wrong = [
        ("turns it on in production too", edit(config.environments)),
        ("turns it on in [defaults] instead", edit(["defaults"])),
        ("writes a word configparser does not read as true", edit(allowed, word="enabled")),
    ]
    explicit = [n for n in allowed if "debug" in config.sections[n]]
    if explicit != allowed:
        # `sed s/debug = false/.../` misses a section that takes debug from [defaults].
        wrong.append(("misses the section without its own debug line", edit(explicit)))
    text = _debug_request(config, False, rng)
    return _task(project, _Plan("debug_on", text, right, wrong))


# (place, minutes ahead of UTC, how a person says the offset)
ZONES = (
    ("Berlin", 60, "UTC+1"),
    ("Helsinki", 120, "UTC+2"),
    ("New York", -300, "UTC-5"),
    ("Chicago", -360, "UTC-6"),
    ("Singapore", 480, "UTC+8"),
    ("Mumbai", 330, "UTC+5:30"),
    ("Sydney", 660, "UTC+11"),
)
SCHEDULE_REQUESTS = (
    "Could you move the daily {target} run of {job} to {spoken} {place} time? We're on {said}"
    " at the moment.",
    "Please change {target}'s schedule so the {job} job starts at {spoken} our time - I'm in"
    " {place}, {said}.",
    "Can {target}'s daily {job} run start at {spoken} {place} time ({said}) from now on?",
)
# How the time goes in the file, said by every request: as UTC (as the rules want) or as the
# user's own (which they forbid), both said alike ("as UTC time, not as Berlin time").
SCHEDULE_WRITTEN = (
    "Write it in {config} as {a} time, not as {b} time.",
    "Not as {b} time, though: write it in {config} as {a} time.",
    "In {config}, put it as {a} time - not as {b} time.",
    "In {config}, not as {b} time - put it as {a} time.",
)


def _schedule_local(config: ServiceConfig, target: str, rng: random.Random):
    """A zone and a local time to move `target`'s run to, neither its time now when converted
    to UTC nor as it is: (place, offset, said, minutes after local midnight)."""
    place, offset, said = rng.choice(ZONES)
    now = config.sections[target]["schedule"]
    while True:
        local = rng.choice((5, 6, 7, 8, 9, 10, 18, 19, 20, 21, 22)) * 60 + rng.choice(
            (0, 15, 30, 45)
        )
        if _clock(local - offset) not in (now, _clock(local)):
            return place, offset, said, local


def _schedule_request(
    config: ServiceConfig,
    target: str,
    zone: tuple[str, int, str, int],
    in_utc: bool,
    rng: random.Random,
) -> str:
    """A schedule request: the time in the user's zone, and how it goes in the file (as UTC,
    or as the user's time)."""
    place, _, said, local = zone
    hours, minutes = divmod(local, 60)
    spoken = f"{(hours - 1) % 12 + 1}:{minutes:02d} {'am' if hours < 12 else 'pm'}"
    a, b = ("UTC", place) if in_utc else (place, "UTC")
    text = f"{rng.choice(SCHEDULE_REQUESTS)} {rng.choice(SCHEDULE_WRITTEN)}".format(
        target=target,
        job=_spoken(config.job),
        spoken=spoken,
        place=place,
        said=said,
        config=CONFIG,
        a=a,
        b=b,
    )
    return _said(text, "schedule_utc", config, rng)


def _schedule_utc(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """An environment's daily run moved to a time the request gives in the user's zone."""
    config = _config(project)
    target, other = _environment(rng, 0.75)
    zone = _schedule_local(config, target, rng)
    place, offset, said, local = zone

    def edit(section: str, shift: int, form: str = "%02d:%02d") -> _Edit:
        code = (
            f'local = "{_clock(local)}"  # {place} time, {said}\n'
            f"ahead_of_utc = {shift}  # minutes\n"
            'hours, minutes = map(int, local.split(":"))\n'
            "utc = (hours * 60 + minutes - ahead_of_utc) % (24 * 60)\n"
            f'set_value("{section}", "schedule", "{form}" % divmod(utc, 60))\n'
        )
        hours, minutes = divmod((local - shift) % (24 * 60), 60)
        return _Edit(code, {section: {"schedule": form % (hours, minutes)}})

    right = edit(target, offset)
    wrong = [
        ("forgets the time zone", edit(target, 0)),
        ("converts the wrong way", edit(target, -offset)),
        (f"moves {other}'s run instead", edit(other, offset)),
        ("drops the hour's leading zero", edit(target, offset, "%d:%02d")),
    ]
    text = _schedule_request(config, target, zone, True, rng)
    return _task(project, _Plan("schedule_utc", text, right, wrong))


KINDS = (_max_workers, _batch_size, _debug_on, _schedule_utc)


# Why a person asks, said now and then before the request or after it: each kind's own
# (a reason fits the change asked, nothing unrelated), so requests of one kind read apart.
REASONS = {
    "max_workers": (
        "The {job} run missed its window twice this week.",
        "Finance is waiting on the {job} exports every morning.",
        "We have a backlog from the month-end close.",
        "The queue for {job} was hours long today.",
    ),
    "batch_size": (
        "The {job} runs spend most of their time on round trips.",
        "The database team asked us to send fewer, bigger batches.",
        "Month-end volumes are up and {job} can't keep pace.",
    ),
    "debug_on": (
        "Some {job} exports are arriving with rows missing.",
        "We keep seeing duplicate lines in the {job} output.",
        "The {job} job stalls near the end and nobody knows why.",
        "Support opened a ticket about odd totals from {job}.",
    ),
    "schedule_utc": (
        "Finance wants the files before their morning starts.",
        "The current time clashes with the nightly backup.",
        "The warehouse is busiest when {job} runs now.",
    ),
}
THANKS = ("Thanks!", "Thanks a lot.", "Cheers.", "Much appreciated.")
REASON_SHARE = 0.7


def _said(request: str, kind: str, config: ServiceConfig, rng: random.Random) -> str:
    """The request with, most of the time, why it is asked before or after it, and now and
    then a thank-you."""
    if rng.random() < REASON_SHARE:
        reason = rng.choice(REASONS[kind]).format(job=_spoken(config.job))
        request = f"{reason} {request}" if rng.random() < 0.5 else f"{request} {reason}"
    if rng.random() < 0.3:
        request = f"{request} {rng.choice(THANKS)}"
    return request


# --------------------------------------------------------------------------- right settings


def _config(project: Project) -> ServiceConfig:
    return project.parts[PART]


def _workers_max(config: ServiceConfig, environment: str) -> int:
    return config.limits["environments"][environment]["workers_max"]


def _clock(minutes: int) -> str:
    hours, minute = divmod(minutes % (24 * 60), 60)
    return f"{hours:02d}:{minute:02d}"


def _settings_after(config: ServiceConfig, edit: _Edit) -> Sections:
    """What `config/app.ini` holds after an edit, section by section, as text."""
    if edit.path != CONFIG:
        return config.sections
    if edit.only_changed:
        return edit.changes
    out = {name: dict(values) for name, values in config.sections.items()}
    for name, values in edit.changes.items():
        out.setdefault(name, {}).update(values)
    return out


def _read_as_typed(sections: Sections) -> dict[str, dict[str, Any]]:
    """The settings as the check compares them: numbers and booleans as the job reads them."""
    return {
        name: {key: typed(key, text) for key, text in values.items()}
        for name, values in sections.items()
    }


def _task(project: Project, plan: _Plan) -> ProjectTask:
    """The task of a plan: its gold chain, the check of the settings and the mistakes whose
    settings differ from the right ones (the template and the old copy edited, only the
    changed keys written, and the kind's own)."""
    config = _config(project)
    before = config.sections
    after = _settings_after(config, plan.right)
    if after == before:
        raise ValueError(f"{plan.kind}: the right change changes nothing")
    right = plan.right
    wrong = [
        *plan.wrong,
        ("edits the example file instead", dataclasses.replace(right, path=EXAMPLE)),
        ("edits the old copy instead", dataclasses.replace(right, path=config.backup)),
        ("writes only the changed settings", dataclasses.replace(right, only_changed=True)),
    ]
    # An edit of another file leaves the settings as they were (so it fails their check
    # whatever it wrote, and changes a file the guard keeps): always a mistake.
    mistakes = [
        Mistake(label, _chain(edit))
        for label, edit in wrong
        if edit.path != CONFIG
        or _read_as_typed(_settings_after(config, edit)) != _read_as_typed(after)
    ]
    output = {"type": "file_ini", "path": CONFIG, "sections": _read_as_typed(after)}
    return ProjectTask(plan.kind, plan.text, _chain(right), [output], mistakes)


# --------------------------------------------------------------------------- gold programs


def _chain(edit: _Edit) -> list[dict[str, Any]]:
    """The calls a careful person makes: the folder, the README, the rules and their numbers,
    the settings, the validator (its source and a run before the change), the program that
    makes the change, the validator again and a look at the file."""
    validate = shell(f"python3 {VALIDATOR}")
    return [
        *look_around(),
        cat(OPERATIONS),
        cat(LIMITS),
        cat(CONFIG),
        cat(VALIDATOR),
        validate,
        program_call(_program(edit)),
        validate,
        cat(CONFIG),
    ]


_EDITOR = """import configparser, json

PATH = {path!r}
with open("config/limits.json", encoding="utf-8") as handle:
    LIMITS = json.load(handle)
with open(PATH, encoding="utf-8") as handle:
    lines = handle.read().splitlines()
settings = configparser.ConfigParser(interpolation=None)
settings.read_string("\\n".join(lines))
TRUE = ("1", "yes", "true", "on")
changed = {{}}


def current(section, key):
    # An environment's own value, else the one it takes from [defaults].
    if settings.has_option(section, key):
        return settings.get(section, key)
    return settings.get("defaults", key)


def set_value(section, key, value):
    # Edit the line in place, so the comments and the order stay as they were.
    text = "%s = %s" % (key, value)
    changed.setdefault(section, {{}})[key] = str(value)
    header = "[%s]" % section
    if header not in lines:
        lines.extend(["", header, text])
        return
    start = lines.index(header)
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    for i in range(start + 1, end):
        line = lines[i]
        if line.lstrip()[:1] not in ("#", ";") and "=" in line:
            if line.split("=", 1)[0].strip().lower() == key:
                lines[i] = text
                return
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, text)


"""

_WRITE_ALL = """
with open(PATH, "w", encoding="utf-8") as handle:
    handle.write("\\n".join(lines) + "\\n")
print("changed", json.dumps(changed, sort_keys=True))
"""

_WRITE_CHANGED = """
with open(PATH, "w", encoding="utf-8") as handle:
    for section, values in changed.items():
        handle.write("[%s]\\n" % section)
        for key, value in values.items():
            handle.write("%s = %s\\n" % (key, value))
print("changed", json.dumps(changed, sort_keys=True))
"""


def _program(edit: _Edit) -> str:
    footer = _WRITE_CHANGED if edit.only_changed else _WRITE_ALL
    return _EDITOR.format(path=edit.path) + edit.code + footer


def _spoken(job: str) -> str:
    """A job's name as people say it ("sales export"), not as the settings file spells it."""
    return job.replace("_", " ")


# --------------------------------------------------------------------------- declined requests
# Each kind's twin: the kind's own request (its builder above, its reasons) for a change the
# folder's rules forbid, which a careful person looks into and declines. What forbids it is
# in the folder (docs/operations.md says the rule, config/limits.json holds its number, the
# validator prints it), never in the request; the gold chain is those looks, the fact the
# reply states one of them, and the changes people make anyway are the mistakes (each a
# write of the settings file, which the workspace guard fails).


def _workers_over_limit(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """More workers for staging than its `workers_max` allows: production's limit asked for
    staging, in the words of a feasible request for it (the environments named where that
    request names them, their parts swapped)."""
    config = _config(project)
    ask = _workers_ask(config, rng)
    target = "staging"
    most = _workers_max(config, target)
    # Production's number where the feasible request was production's; one over staging's
    # own limit where it was staging's.
    asked = _workers_max(config, "production") if ask.target == "production" else most + 1
    twin = _WorkersAsk(target, asked, False, ask.production_first)
    text = _workers_request(config, twin, rng)
    original = project.files[CONFIG]
    inventions = [
        (f"sets {asked} workers anyway", _with_setting(original, target, "workers", asked)),
        (
            "sets the most the limits allow instead",
            _with_setting(original, target, "workers", most),
        ),
    ]
    limit = shell(
        f"python3 -c \"import json; print(json.load(open('{LIMITS}'))"
        f"['environments']['{target}']['workers_max'])\""
    )
    chain = [*_declined_looks("workers"), limit, _dry_run(target, {"workers": asked})]
    asked_value = AskedValue(
        f"the most workers {target} may have", f"{most}\n", chain.index(limit), ("data", "output")
    )
    reason = {
        "rule": "forbidden:workers_max",
        "facts": [most],
        "texts": [f"at most {most} workers", f"workers {asked}: between 1 and {most}"],
        "told": False,
        "shows": [most],
    }
    because = f"{target} may have at most {{fact}} workers ({LIMITS}), so {asked} is over the limit"
    return _declined(
        "forbidden_workers", text, inventions, chain, asked_value, reason, because, original
    )


# The share of declined batch requests whose cap the new size's timeout breaks; the others
# ask for the change in the template, which the rules say is never edited.
BATCH_CAP_TWINS = 0.5
# The rule's own words in docs/operations.md, as `grep -o` finds them.
TEMPLATE_RULE = "Edit `config/app.ini` only: `[^`]*` is the template the job shipped with"


def _batch_forbidden(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """A batch size change the rules forbid, in a feasible batch request's words: a cap on
    the timeout under what the size needs, or the change asked of the template."""
    config = _config(project)
    ask = _batch_ask(config, rng)
    # A size that needs five seconds or less has no cap a person says under it.
    if ask.turn < BATCH_CAP_TWINS and config.min_timeout(ask.largest) > ROUND_SECONDS[0]:
        return _batch_timeout_over_cap(project, config, ask, rng)
    return _batch_in_template(project, config, ask, rng)


def _batch_in_template(
    project: Project, config: ServiceConfig, ask: _BatchAsk, rng: random.Random
) -> ProjectTask:
    """A feasible batch request's very words with the two files' places swapped: the change
    asked of config/app.example.ini, not config/app.ini. The rules say to edit
    config/app.ini only (the job reads neither the template nor the old copy)."""
    text = _batch_request(config, ask, _batch_cap(config, ask), rng, path=EXAMPLE)
    original = project.files[EXAMPLE]
    # The template's own lines: one [defaults] section and a short [production].
    section = ask.target if f"[{ask.target}]" in original.splitlines() else "defaults"
    resized = _with_setting(original, section, "batch_size", ask.largest)
    needed = config.min_timeout(ask.largest)
    inventions = [
        ("sets the size in the template anyway", resized),
        (
            "sets the size and the timeout the rule needs in the template",
            _with_setting(resized, section, "timeout_s", needed),
        ),
    ]
    rule = shell(f"grep -o '{TEMPLATE_RULE}' {OPERATIONS}")
    chain = [*_declined_looks("batch_size"), cat(EXAMPLE), rule]
    said = f"Edit `{CONFIG}` only: `{EXAMPLE}` is the template the job shipped with"
    asked_value = AskedValue(
        "what the rules say of the template", f"{said}\n", chain.index(rule), ("data", "output")
    )
    reason = {
        "rule": "forbidden:template",
        "facts": [],
        "texts": [
            "edit config/app.ini only",
            "config/app.example.ini is the template the job shipped with",
            "the job reads neither",
        ],
        "told": False,
        "shows": [said],
    }
    because = f"{OPERATIONS} says: {{fact}}, and the job does not read it"
    return _declined(
        "forbidden_template",
        text,
        inventions,
        chain,
        asked_value,
        reason,
        because,
        original,
        path=EXAMPLE,
    )


def _batch_timeout_over_cap(
    project: Project, config: ServiceConfig, ask: _BatchAsk, rng: random.Random
) -> ProjectTask:
    """A feasible batch request's very words and size, with a cap under what the timeout
    rule needs for that size (the nearest round number of seconds under it, or the next),
    so no timeout_s both passes the rule and keeps under the cap."""
    size = ask.largest
    needed = config.min_timeout(size)
    under = [s for s in ROUND_SECONDS if s < needed]
    cap = under[max(0, len(under) - 1 - ask.notch)]
    # The size is said as it is, never with the fallback: a smaller size whose timeout
    # fits the cap would make a fallback feasible.
    ask = dataclasses.replace(ask, size=size, fallback=False)
    target = ask.target
    text = _batch_request(config, ask, cap, rng)
    original = project.files[CONFIG]
    resized = _with_setting(original, target, "batch_size", size)
    inventions = [
        (
            "sets the size with the timeout the rule needs, over the cap",
            _with_setting(resized, target, "timeout_s", needed),
        ),
        (
            "sets the size with the timeout at the cap",
            _with_setting(resized, target, "timeout_s", cap),
        ),
        ("sets the size and leaves the timeout", resized),
    ]
    timing = shell(
        f"python3 -c \"import json; t = json.load(open('{LIMITS}'))['timeout_s'];"
        f" print(-(-t['factor'] * {size} // t['records_per_second']))\""
    )
    chain = [
        *_declined_looks("timeout_s"),
        timing,
        _dry_run(target, {"batch_size": size, "timeout_s": cap}),
    ]
    asked_value = AskedValue(
        f"the shortest timeout_s the rules allow for batches of {size}",
        f"{needed}\n",
        chain.index(timing),
        ("data", "output"),
    )
    reason = {
        "rule": "forbidden:timeout_s",
        "facts": [needed],
        "texts": [f"at least {needed} for batches of {size}", f"at least {needed} seconds"],
        "told": False,
        "shows": [needed],
    }
    because = (
        f"batches of {size} need a timeout_s of at least {{fact}} seconds ({OPERATIONS}),"
        f" more than the {cap} seconds allowed"
    )
    return _declined(
        "forbidden_timeout", text, inventions, chain, asked_value, reason, because, original
    )


# The rule's own words in docs/operations.md, found by `grep -o` (to the sentence's end).
DEBUG_RULE = "Never in production[^.]*"


def _debug_in_production(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Debug asked on in production and off elsewhere, in a feasible debug request's words:
    the rules say never in production."""
    config = _config(project)
    allowed = _debug_allowed(config)
    forbidden = [n for n in config.environments if n not in allowed]
    text = _debug_request(config, True, rng)
    original = project.files[CONFIG]
    inventions = [
        ("turns it on in production anyway", _with_settings(original, forbidden, "debug", "true")),
        ("turns it on in [defaults] instead", _with_setting(original, "defaults", "debug", "true")),
        (
            "turns it on where it is allowed instead",
            _with_settings(original, allowed, "debug", "true"),
        ),
    ]
    rule = shell(f"grep -o '{DEBUG_RULE}' {OPERATIONS}")
    chain = [*_declined_looks("debug"), rule, _dry_run(forbidden[0], {"debug": "true"})]
    said = "Never in production: debug logs customers' rows"
    asked_value = AskedValue(
        "what the rules say of debug in production",
        f"{said}\n",
        chain.index(rule),
        ("data", "output"),
    )
    reason = {
        "rule": "forbidden:debug",
        "facts": [],
        "texts": ["debug logs customers' rows", "never in production", "debug: must be off here"],
        "told": False,
        "shows": [said],
    }
    because = f"{OPERATIONS} says of debug: {{fact}}"
    return _declined(
        "forbidden_debug", text, inventions, chain, asked_value, reason, because, original
    )


def _schedule_not_utc(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The run moved to a time in the user's zone and written as that zone's time, not as
    UTC: the rules say the schedule is UTC whatever zone the request came in."""
    config = _config(project)
    target, _ = _environment(rng, 0.75)
    zone = _schedule_local(config, target, rng)
    place, offset, _, local = zone
    text = _schedule_request(config, target, zone, False, rng)
    original = project.files[CONFIG]
    inventions = [
        (
            f"writes {place} time as asked",
            _with_setting(original, target, "schedule", _clock(local)),
        ),
        (
            "writes the UTC time though told not to",
            _with_setting(original, target, "schedule", _clock(local - offset)),
        ),
        (
            "writes a time converted the wrong way",
            _with_setting(original, target, "schedule", _clock(local + offset)),
        ),
    ]
    rule = shell(f"python3 -c \"import json; print(json.load(open('{LIMITS}'))['schedule'])\"")
    chain = [*_declined_looks("schedule"), rule]
    shown = config.limits["schedule"]
    asked_value = AskedValue(
        "how the schedule is written", f"{shown}\n", chain.index(rule), ("data", "output")
    )
    reason = {
        "rule": "forbidden:schedule_zone",
        "facts": [],
        "texts": [
            "whatever time zone the request came in",
            "in UTC (the servers' clock)",
            "the schedule is in UTC",
        ],
        "told": False,
        "shows": [shown],
    }
    because = (
        f"the schedule is {{fact}} ({LIMITS}), whatever time zone the request came in"
        f" ({OPERATIONS}), so it cannot hold {place} time"
    )
    return _declined(
        "forbidden_schedule", text, inventions, chain, asked_value, reason, because, original
    )


# Each kind's declined twin (synthesis.tasks.projects.scenarios DECLINED).
DECLINED = {
    _max_workers: _workers_over_limit,
    _batch_size: _batch_forbidden,
    _debug_on: _debug_in_production,
    _schedule_utc: _schedule_not_utc,
}


def _declined_looks(key: str) -> list[dict[str, Any]]:
    """What a careful person reads before declining a change: the folder, the README, the
    rules and their numbers, the settings, the validator and its verdict now, and every
    file in config/ that sets the key (the template and the old copy too)."""
    return [
        *look_around(),
        cat(OPERATIONS),
        cat(LIMITS),
        cat(CONFIG),
        cat(VALIDATOR),
        shell(f"python3 {VALIDATOR}"),
        {"tool": "grep", "args": {"pattern": key, "folder": "config"}},
    ]


def _dry_run(section: str, values: dict[str, Any]) -> dict[str, Any]:
    """The validator's verdict on the change, the settings piped to it and never written:
    `sed` sets each key's line in the section only."""
    edits = " ".join(
        f"-e '/^\\[{section}\\]/,/^\\[/ s/^{key} = .*/{key} = {value}/'"
        for key, value in values.items()
    )
    return shell(f"sed {edits} {CONFIG} | python3 {VALIDATOR} /dev/stdin")


def _declined(
    kind: str,
    text: str,
    inventions: list[tuple[str, str]],
    chain: list[dict[str, Any]],
    asked: AskedValue,
    reason: dict[str, Any],
    because: str,
    original: str,
    path: str = CONFIG,
) -> ProjectTask:
    """The refusal task of a declined change: the looks, no change, the reply stating the
    rule, and each change made anyway a mistake (one that leaves the file as it was is
    none: it changes nothing a check could catch)."""
    made = [(label, changed) for label, changed in inventions if changed != original]
    # The request is worded with its reason already (`_said`): no framing around it, so the
    # framing's draws are none (the generator is never read).
    return refused_task(
        kind,
        Request(text, path, "", made),
        chain,
        asked,
        reason,
        because,
        random.Random(0),
        frame=False,
        what=f"change {path}",
    )


def _with_setting(text: str, section: str, key: str, value: Any) -> str:
    """The settings file's text with `key` set to `value` in `section`: its own line changed,
    or a line added at the section's end (as the gold programs' `set_value` does)."""
    lines = text.splitlines()
    line = f"{key} = {value}"
    start = lines.index(f"[{section}]")
    end = next((i for i in range(start + 1, len(lines)) if lines[i].startswith("[")), len(lines))
    for i in range(start + 1, end):
        if not lines[i].lstrip().startswith(("#", ";")) and "=" in lines[i]:
            if lines[i].split("=", 1)[0].strip().lower() == key:
                lines[i] = line
                return "\n".join(lines) + "\n"
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1
    lines.insert(end, line)
    return "\n".join(lines) + "\n"


def _with_settings(text: str, sections: list[str], key: str, value: Any) -> str:
    for section in sections:
        text = _with_setting(text, section, key, value)
    return text
