"""Configuration changes under constraints: change the export job's settings as asked, within
the rules the folder states (synthesis.environments.projects.service_config).

A request asks for a change in a user's words (as many production workers as allowed, a
batch size up to a number, debug on wherever it may be, the run moved to a time in the
user's time zone); the rules that bound it are in the folder (`docs/operations.md` says
them, `config/limits.json` holds the numbers), never in the request. The right settings are
computed here from the part's truth; the check reads `config/app.ini` by its values
(`file_ini` in the shipped reward module), the whole file, so a key dropped or another
section touched fails, while comments, key order and `yes` for `true` are free. The guard on
the rest of the workspace keeps the template and the old copy as they were.

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
from synthesis.tasks.projects.work import (
    Mistake,
    ProjectTask,
    cat,
    look_around,
    program_call,
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


def _max_workers(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """As many workers in one environment as its limit allows (the request may name more)."""
    config = _config(project)
    target = "production" if rng.random() < 0.75 else "staging"
    other = "staging" if target == "production" else "production"
    most = _workers_max(config, target)
    asked = most + rng.randint(2, 8) if rng.random() < 0.5 else None

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

    if asked is None:
        text = rng.choice(
            (
                "{Target} keeps falling behind on the {job} runs. Can you give it as many"
                " workers as we're allowed in {config}?",
                "Please raise the workers for {target} in {config} to the most the limits"
                " allow - the nightly {job} run is taking hours.",
                "Could you max out {target}'s workers in {config}? Only as far as our rules"
                " allow, obviously.",
                "Set {target}'s workers in {config} to the highest number our limits permit,"
                " please.",
                "How many workers is {target} allowed? Put it on exactly that many in {config}.",
            )
        )
    else:
        text = rng.choice(
            (
                "Can you bump {target} to {asked} workers in {config}? If that's over our"
                " limit, just go as high as we're allowed.",
                "{Target} needs more workers for the {job} job: {asked} if the rules allow"
                " it, otherwise the most they do. It's in {config}.",
            )
        )
    right = edit(target, target)
    wrong = [
        (f"changes {other}'s workers instead", edit(other, target)),
        (f"takes {other}'s limit", edit(target, other)),
    ]
    if asked is not None:
        wrong.append(("sets the number asked, over the limit", edit(target, None, asked)))
    text = text.format(
        target=target,
        Target=target.capitalize(),
        asked=asked,
        config=CONFIG,
        job=_spoken(config.job),
    )
    return _task(
        project, _Plan("max_workers", _said(text, "max_workers", config, rng), right, wrong)
    )


def _batch_size(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The largest batch size allowed up to a number, the timeout raised when the rule
    needs it."""
    config = _config(project)
    rule = config.limits["batch_size"]
    step, most = rule["multiple_of"], rule["max"]
    target = "production" if rng.random() < 0.7 else "staging"
    other = "staging" if target == "production" else "production"
    now = int(config.sections[target]["batch_size"])
    # A number the rules do not take as it is: not a multiple of the step, sometimes over
    # the maximum, and always room for a larger batch than today's.
    asked = rng.choice(
        [n for n in range(now + step + 1, most + 2 * step) if n % step and n % 10 == 0]
    )

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
    # The size asked and the timeout clause are said apart, so requests of this kind
    # differ in more than their number.
    size = rng.choice(
        (
            'Please set {target}\'s "batch_size" in {config} to {asked}, or the biggest value'
            " our rules allow below that.",
            'Could you push {target}\'s "batch_size" up to {asked} in {config}? If the rules'
            " don't allow exactly that, use the largest allowed size under it.",
            "{Target} should send batches of {asked} - or the nearest allowed size under"
            ' {asked} if that one breaks the rules. It\'s "batch_size" in {config}.',
            "Make {target}'s batches as big as the rules allow without going over {asked}"
            ' ("batch_size" in {config}).',
        )
    )
    timeout = rng.choice(
        (
            'If the timeout rule then wants a longer "timeout_s", raise it to the smallest'
            " value that passes.",
            'Bump "timeout_s" to the minimum the rules need if it\'s too short for the new size.',
            'And if "timeout_s" no longer fits the bigger batches, give it just enough seconds'
            " to pass the rule.",
            'Check the timeout too: when the rules need more, set "timeout_s" to the least'
            " they accept.",
        )
    )
    text = f"{size} {timeout}".format(
        job=_spoken(config.job),
        config=CONFIG,
        asked=asked,
        target=target,
        Target=target.capitalize(),
    )
    return _task(project, _Plan("batch_size", _said(text, "batch_size", config, rng), right, wrong))


def _debug_on(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Debug on in every environment the limits allow it in, [defaults] left alone."""
    config = _config(project)
    allowed = [n for n in config.environments if config.limits["environments"][n]["debug"]]

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
    text = rng.choice(
        (
            "We're chasing a bug in the {job} job this week. Please turn debug on in"
            " {config} for every environment where our rules allow it; leave [defaults]"
            " as it is.",
            "Can you switch debug on wherever it's allowed in {config}? Environments only,"
            " not [defaults]. We need the extra logging for a few days.",
            "I need debug logging from {job} for a while: set debug on in {config} in each"
            " environment that's permitted to have it. Don't change [defaults].",
            "Turn on debug for the {job} job in {config}, in every environment the rules"
            " let us - but not in [defaults].",
            "Please enable debug in {config} wherever our rules say it may be on (just the"
            " environment sections, [defaults] stays as is).",
        )
    ).format(job=_spoken(config.job), config=CONFIG)
    return _task(project, _Plan("debug_on", _said(text, "debug_on", config, rng), right, wrong))


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


def _schedule_utc(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """An environment's daily run moved to a time the request gives in the user's zone."""
    config = _config(project)
    target = "production" if rng.random() < 0.75 else "staging"
    other = "staging" if target == "production" else "production"
    place, offset, said = rng.choice(ZONES)
    now = config.sections[target]["schedule"]
    while True:
        local = rng.choice((5, 6, 7, 8, 9, 10, 18, 19, 20, 21, 22)) * 60 + rng.choice(
            (0, 15, 30, 45)
        )
        if _clock(local - offset) not in (now, _clock(local)):
            break

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
    hours, minutes = divmod(local, 60)
    spoken = f"{(hours - 1) % 12 + 1}:{minutes:02d} {'am' if hours < 12 else 'pm'}"
    text = rng.choice(
        (
            "Could you move the daily {target} run of {job} to {spoken} {place} time? We're"
            " on {said} at the moment. The setting is in {config}.",
            "Please change {target}'s schedule in {config} so the {job} job starts at"
            " {spoken} our time - I'm in {place}, {said}.",
            "Can {target}'s daily {job} run start at {spoken} {place} time ({said}) from now"
            " on? Update {config} for it.",
        )
    ).format(
        target=target,
        job=_spoken(config.job),
        spoken=spoken,
        place=place,
        said=said,
        config=CONFIG,
    )
    text = _said(text, "schedule_utc", config, rng)
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


# Each kind's declined twin (synthesis.tasks.projects.scenarios DECLINED).
DECLINED: dict = {}
