"""Log triage over a project folder: what went wrong after a deploy, from the service's logs.

A task names a deploy of the service (synthesis.environments.projects.service_logs) by its
version and asks for the first ERROR after it (a JSON summary), the ERROR lines per component
in the hours after it (a Markdown table), or every distinct ERROR message while it was live
with when it was first seen and how often (a JSON list, earliest first). What a right answer
holds is computed here from the lines as they are; the checks read the output by its format
(`file_json`, `file_table`), so the same answer in another layout earns.

The gold solution reads the README, the deploy list, the log files' lengths (the rotation's
leftover is part of a day again) and the day files the window covers, then runs a program
(python3's standard library, over the files) that converts the deploy's local time to UTC,
keeps only the service's ERROR lines and writes the output; then it reads the window again
with awk to hold the answer against: every line from the deploy to the first error, or the
service's ERROR lines counted per component or per message. Beside it, the
mistakes people make with such logs, each as the same program with one thing wrong: the
first error of the deploy's day rather than after the deploy, the WARN retries that mention
an error counted, the previous deploy read, the rotation's leftover copy read too, another
service's lines counted, deploys.log's local time taken for UTC, a window a clock hour too
long, a window run past the next deploy, the carriage returns of a Windows-ended day kept. A
mistake is kept only when its output differs from the right one.

Each kind's declined twin (`DECLINED`) is the same request for a version deploys.log does not
list and no file names (the release after the last deploy, or one before it): there is no
deploy time to start from, so the right outcome is to look, write nothing and say which
deploys there are.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.service_logs import ServiceLogs, stamp
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

PART = "service_logs"
WINDOW_HOURS = (6, 12, 24)
TIME_FORMAT = "YYYY-MM-DDTHH:MM:SSZ"


@dataclass(frozen=True)
class _Reading:
    """How a program reads the logs: the right way, or with one mistake."""

    deploy: int  # which line of deploys.log the work starts from
    local_clock: bool = False  # deploys.log's wall clock taken for UTC (its offset dropped)
    from_midnight: bool = False  # from the start of the deploy's day, not the deploy
    whole_hours: bool = False  # the window in clock hours: from the deploy's hour, one more
    open_end: bool = False  # past the next deploy, to the end of the logs
    with_warn: bool = False  # every line that mentions an error, WARN retries among them
    any_service: bool = False  # the other service's lines too
    with_stale: bool = False  # the rotation's leftover `.log.1` copy read too
    keep_cr: bool = False  # lines read with their carriage returns (newline='')


@dataclass(frozen=True)
class _Error:
    at: datetime
    component: str
    message: str


# Why someone wants the triage, now and then said with the request: an incident's reasons.
_PURPOSES = (
    "It's for the incident review on {d}.",
    "I need it for the postmortem on {d}.",
    "The on-call handover is on {d} and this goes in it.",
    "The upstream team wants to know by {d}.",
)
_DAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
PURPOSE_SHARE = 0.7


def _framed(request: str, rng: random.Random) -> str:
    if rng.random() >= PURPOSE_SHARE:
        return request
    reason = rng.choice(_PURPOSES).format(d=rng.choice(_DAYS))
    return f"{request} {reason}" if rng.random() < 0.6 else f"{reason} {request}"


# Each kind's requests, for a deploy named by its version: a feasible request and its
# declined twin (a version deploys.log does not list) are worded alike.
FIRST_ERROR_REQUESTS = (
    "Something broke after we shipped {service} {version}. Could you find the first"
    " ERROR our service logged after that deploy and write it up in {path}? A JSON"
    ' object with the keys "deploy" ("{version}"), "deployed_at" (when deploys.log'
    ' says it went out), "first_error_at", "component" (without the brackets) and'
    ' "message" (as the line has it). Times in UTC, written {fmt}.',
    "Can you check the logs for the first error after the {version} deploy of"
    ' {service}? Put it in {path} as JSON: "deploy" = "{version}", "deployed_at" = the'
    ' deploy time from logs/deploys.log, "first_error_at", "component" (no brackets)'
    ' and "message", with both times in UTC as {fmt}. Only ERROR lines of {service}'
    " count.",
    "Please write {path}: the first ERROR {service} logged after {version} went out."
    ' Keys: "deploy" (the version, "{version}"), "deployed_at", "first_error_at",'
    ' "component" and "message" - times in UTC ({fmt}), the component without its'
    " brackets. The README says how to read the logs.",
)
COMPONENT_COUNTS_REQUESTS = (
    "How bad were the first {hours} hours after the {version} deploy of {service}?"
    " In {path}, a table with the columns Component and Errors: how many ERROR lines"
    " each component of {service} logged from the deploy time in deploys.log to"
    " {hours} hours later, one row per component that logged any.",
    "Please count {service}'s ERROR lines per component for the {hours} hours after"
    " {version} was deployed (start at the time deploys.log gives) and write them to"
    " {path} as a table headed Component and Errors, a row for each component with"
    " errors. The README explains the log format.",
    "I need {path}: a table of Component and Errors for {service}, counting the ERROR"
    " lines in the {hours} hours that followed the {version} deploy (from the deploy"
    " time in deploys.log). Only components that logged an error get a row.",
)
COUNT_COLUMNS = ["Component", "Errors"]
DISTINCT_ERRORS_REQUESTS = (
    "Could you list every distinct ERROR message {service} logged {window}? Write"
    ' them to {path} as a JSON list, earliest first, each an object with "message",'
    ' "component" (no brackets), "first_seen" (UTC, {fmt}) and "count" (how many times'
    " it was logged).",
    "For the {version} review I need {path}: a JSON list of the distinct ERROR"
    " messages of {service} {window}, ordered by when each was first seen. Each entry"
    ' has the keys "message", "component", "first_seen" (in UTC as {fmt}) and "count".'
    " Deploy times are in logs/deploys.log.",
)


# --------------------------------------------------------------------------- the kinds


def _first_error(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The first ERROR after a deploy, as a JSON summary."""
    logs: ServiceLogs = project.parts[PART]
    index = rng.randrange(len(logs.deploys))
    version = logs.deploys[index].version
    text, path = _first_error_request(logs, version, rng)
    right = _Reading(index)
    value = _summary(logs, right, version)
    output = {"type": "file_json", "path": path, "value": value}

    last = _first_after(logs, right)
    days = _days_between(logs, right, last and last.at)
    # Every line from the deploy to the error: nothing of ours failed in between.
    check = _window_check(logs, days, _deploy_at(logs, right), last and last.at)

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _reader(logs, reading, version) + _first_error_program(path, reading)
        return _work(logs, version, days, program, path, check)

    mistakes = _mistakes(logs, right, lambda r: _summary(logs, r, version), value, chain)
    return ProjectTask("first_error", _framed(text, rng), chain(right), [output], mistakes)


def _first_error_request(logs: ServiceLogs, version: str, rng: random.Random) -> tuple[str, str]:
    """(the request, the summary's path) for the first ERROR after deploy `version`."""
    path = f"reports/{logs.service}_{version}_first_error.json"
    text = rng.choice(FIRST_ERROR_REQUESTS).format(
        service=logs.service, version=version, path=path, fmt=TIME_FORMAT
    )
    return text, path


def _component_counts(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """ERROR lines per component in the hours after a deploy, as a Markdown table."""
    logs: ServiceLogs = project.parts[PART]
    index = rng.randrange(len(logs.deploys))
    version = logs.deploys[index].version
    hours = rng.choice(WINDOW_HOURS)
    text, path = _component_counts_request(logs, version, hours, rng)
    right = _Reading(index)
    rows = _counts(logs, right, hours)
    output = {"type": "file_table", "path": path, "columns": COUNT_COLUMNS, "rows": rows}

    end = _deploy_at(logs, right) + timedelta(hours=hours)
    days = _days_between(logs, right, end)
    # The table's counts again, by awk over the window's lines.
    check = _window_check(logs, days, _deploy_at(logs, right), end, "print $4", COUNTED)

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _reader(logs, reading, version) + _counts_program(path, reading, hours)
        return _work(logs, version, days, program, path, check)

    mistakes = _mistakes(
        logs, right, lambda r: _counts(logs, r, hours), rows, chain, window=("hours",)
    )
    return ProjectTask("component_counts", _framed(text, rng), chain(right), [output], mistakes)


def _component_counts_request(
    logs: ServiceLogs, version: str, hours: int, rng: random.Random
) -> tuple[str, str]:
    """(the request, the table's path) for the ERROR lines per component in the `hours`
    after deploy `version`."""
    path = f"reports/{logs.service}_{version}_errors_by_component.md"
    text = rng.choice(COMPONENT_COUNTS_REQUESTS).format(
        service=logs.service, version=version, hours=hours, path=path
    )
    return text, path


def _distinct_errors(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Every distinct ERROR message while a version was live: first seen and how often."""
    logs: ServiceLogs = project.parts[PART]
    index = rng.randrange(len(logs.deploys))
    version = logs.deploys[index].version
    last = index == len(logs.deploys) - 1
    text, path = _distinct_errors_request(logs, version, last, rng)
    right = _Reading(index)
    value = _listing(logs, right)
    output = {"type": "file_json", "path": path, "value": value}

    end = None if last else logs.deploys[index + 1].at
    days = _days_between(logs, right, end)
    # Each message's count again, by awk over the window's lines (a Windows-ended day's
    # carriage returns dropped, as the program's reading drops them).
    messages = 'sub(/\\r$/, ""); print'
    check = _window_check(
        logs, days, _deploy_at(logs, right), end, messages, " | cut -d' ' -f4-" + COUNTED
    )

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _reader(logs, reading, version) + _listing_program(path, reading)
        return _work(logs, version, days, program, path, check)

    mistakes = _mistakes(logs, right, lambda r: _listing(logs, r), value, chain, window=("next",))
    return ProjectTask("distinct_errors", _framed(text, rng), chain(right), [output], mistakes)


def _distinct_errors_request(
    logs: ServiceLogs, version: str, last: bool, rng: random.Random
) -> tuple[str, str]:
    """(the request, the list's path) for the distinct ERROR messages while `version` was
    live: `last`, the version the logs end with (still live), or one the next deploy ended."""
    path = f"reports/{logs.service}_{version}_errors.json"
    # The window in words: the last version is still live; an earlier one until the next.
    window = (
        "since {version} went out (to the end of the logs)"
        if last
        else "while {version} was live (from its deploy until the next deploy)"
    ).format(version=version)
    text = rng.choice(DISTINCT_ERRORS_REQUESTS).format(
        service=logs.service, window=window, path=path, fmt=TIME_FORMAT, version=version
    )
    return text, path


KINDS = (_first_error, _component_counts, _distinct_errors)


# --------------------------------------------------------------------------- right answers


def _deploy_at(logs: ServiceLogs, reading: _Reading, index: int | None = None) -> datetime:
    """When the deploy went out, as the reading takes deploys.log's time."""
    deploy = logs.deploys[reading.deploy if index is None else index]
    if not reading.local_clock:
        return deploy.at
    local = deploy.at.astimezone(timezone(timedelta(hours=deploy.offset_hours)))
    return local.replace(tzinfo=UTC)


def _start(logs: ServiceLogs, reading: _Reading) -> datetime:
    at = _deploy_at(logs, reading)
    if reading.from_midnight:
        return at.replace(hour=0, minute=0, second=0)
    if reading.whole_hours:
        return at.replace(minute=0, second=0)
    return at


def _errors(logs: ServiceLogs, reading: _Reading) -> list[_Error]:
    """The lines the reading takes for the service's errors, in time order."""
    sources = [(line, False) for line in logs.lines]
    if reading.with_stale:
        sources += [(line, True) for line in logs.stale_lines]
    out = []
    for line, stale in sources:
        if line.service != logs.service and not reading.any_service:
            continue
        if line.level != "ERROR" and not (reading.with_warn and "error" in line.text().lower()):
            continue
        message = line.message
        if reading.keep_cr and not stale and stamp(line.at)[:10] == logs.crlf_day:
            message += "\r"
        out.append(_Error(line.at, line.component, message))
    return sorted(out, key=lambda e: (e.at, e.component, e.message))


def _first_after(logs: ServiceLogs, reading: _Reading) -> _Error | None:
    start = _start(logs, reading)
    return next((e for e in _errors(logs, reading) if e.at > start), None)


def _summary(logs: ServiceLogs, reading: _Reading, version: str) -> dict[str, Any] | None:
    first = _first_after(logs, reading)
    if first is None:
        return None
    return {
        "deploy": version,
        "deployed_at": stamp(_deploy_at(logs, reading)),
        "first_error_at": stamp(first.at),
        "component": first.component,
        "message": first.message,
    }


def _counts(logs: ServiceLogs, reading: _Reading, hours: int) -> list[list[Any]]:
    start = _start(logs, reading)
    end = start + timedelta(hours=hours + (1 if reading.whole_hours else 0))
    if reading.from_midnight:
        end = _deploy_at(logs, reading) + timedelta(hours=hours)
    counts: dict[str, int] = {}
    for error in _errors(logs, reading):
        if start < error.at <= end:
            counts[error.component] = counts.get(error.component, 0) + 1
    return [[component, count] for component, count in sorted(counts.items())]


def _listing(logs: ServiceLogs, reading: _Reading) -> list[dict[str, Any]]:
    start = _start(logs, reading)
    after = reading.deploy + 1
    end = None
    if after < len(logs.deploys) and not reading.open_end:
        end = _deploy_at(logs, reading, after)
    seen: dict[str, dict[str, Any]] = {}
    for error in _errors(logs, reading):
        if error.at <= start or (end is not None and error.at > end):
            continue
        entry = seen.setdefault(
            error.message,
            {
                "message": error.message,
                "component": error.component,
                "first_seen": stamp(error.at),
                "count": 0,
            },
        )
        entry["count"] += 1
    return list(seen.values())


def _mistakes(
    logs: ServiceLogs,
    right: _Reading,
    compute: Callable[[_Reading], Any],
    answer: Any,
    chain: Callable[[_Reading], list[dict[str, Any]]],
    window: tuple[str, ...] = (),
) -> list[Mistake]:
    """The mistakes whose output differs from the right one (and that write one), each as a
    chain; `window` the mistakes about the window's end the kind has ("hours", "next")."""
    index = right.deploy
    candidates = [
        ("starts at the deploy day's midnight", _Reading(index, from_midnight=True)),
        ("counts the WARN retries that mention an error", _Reading(index, with_warn=True)),
        ("reads the rotation's leftover copy too", _Reading(index, with_stale=True)),
        ("counts the other service's lines", _Reading(index, any_service=True)),
        ("takes deploys.log's local time for UTC", _Reading(index, local_clock=True)),
        ("keeps the carriage returns of the Windows-ended day", _Reading(index, keep_cr=True)),
    ]
    if "hours" in window:
        whole = _Reading(index, whole_hours=True)
        candidates.append(("counts whole clock hours, one too many", whole))
    if "next" in window:
        candidates.append(("counts past the next deploy", _Reading(index, open_end=True)))
    if index > 0:
        candidates.append(("reads the previous deploy", _Reading(index - 1)))
    out = []
    for label, reading in candidates:
        wrong = compute(reading)
        if wrong is None or wrong == []:
            continue  # a program that writes nothing (or nothing at all) is no answer
        if json.dumps(wrong, sort_keys=True) != json.dumps(answer, sort_keys=True):
            out.append(Mistake(label, chain(reading)))
    return out


# --------------------------------------------------------------------------- gold programs


def _days_between(logs: ServiceLogs, reading: _Reading, end: datetime | None) -> list[str]:
    """The day files a careful reader opens: the deploy's day through the window's end."""
    first = stamp(_deploy_at(logs, reading))[:10]
    last = stamp(end)[:10] if end is not None else logs.days[-1]
    return [day for day in logs.days if first <= day <= last]


def _work(
    logs: ServiceLogs,
    version: str,
    days: list[str],
    program: str,
    path: str,
    check: dict[str, Any],
) -> list:
    """The calls a careful person makes: the folder, the README's notes on the logs, the
    deploy list, the log files with their lengths (the rotation's leftover beside its day),
    where the version shows in the logs and where the errors are, the day files the window
    covers, the program, a look at what it wrote, and `check`: the window's lines read again
    another way, to hold the answer against."""
    return [
        *look_around(),
        cat("logs/deploys.log"),
        shell("wc -l logs/app-*.log*"),
        {"tool": "grep", "args": {"pattern": version, "folder": "logs"}},
        {"tool": "grep", "args": {"pattern": "ERROR", "folder": "logs"}},
        *(cat(logs.path(day)) for day in days),
        program_call(program),
        cat(path),
        check,
    ]


# How a check counts the lines its awk prints.
COUNTED = " | sort | uniq -c"


def _window_check(
    logs: ServiceLogs,
    days: list[str],
    start: datetime,
    end: datetime | None,
    action: str = "",
    then: str = "",
) -> dict[str, Any]:
    """A `run` of awk over the day files: every line logged after `start` up to `end` (None:
    the end of the logs) or, given an awk `action`, the service's ERROR lines among them each
    passed to it (the README: a line is time, service, level, [component], message); what it
    prints piped into `then`."""
    condition = f'$1 > "{stamp(start)}"' + (f' && $1 <= "{stamp(end)}"' if end else "")
    if action:
        condition += f' && $2 == "{logs.service}" && $3 == "ERROR" {{ {action} }}'
    files = " ".join(logs.path(day) for day in days)
    return shell(f"awk '{condition}' {files}{then}")


_READER = """import glob, json, os
from datetime import datetime, timedelta, timezone

SERVICE = {service!r}
VERSION = {version!r}


def utc(text):
    {clock}


def stamp(at):
    return at.strftime('%Y-%m-%dT%H:%M:%SZ')


deploys = []
with open('logs/deploys.log', encoding='utf-8') as handle:
    for line in handle:
        fields = line.split()
        if len(fields) >= 3 and fields[1] == SERVICE:
            deploys.append((utc(fields[0]), fields[2]))
deploys.sort()
index = [version for _, version in deploys].index(VERSION){previous}
deployed_at = deploys[index][0]
next_deploy = deploys[index + 1][0] if index + 1 < len(deploys) else None
start = deployed_at{start}


def errors():
    found = []
    for path in sorted(glob.glob({pattern!r})):
        with open(path, encoding='utf-8'{newline}) as handle:
            for line in handle:
                parts = line.rstrip('\\n').split(' ', 4)
                if len(parts) < 5:
                    continue
                at, service, level, component, message = parts
                if {foreign}service != SERVICE:
                    continue
                if {level}:
                    continue
                found.append((utc(at), component.strip('[]'), message))
    return sorted(found)


os.makedirs('reports', exist_ok=True)
"""


def _reader(logs: ServiceLogs, reading: _Reading, version: str) -> str:
    if reading.local_clock:
        clock = "return datetime.fromisoformat(text[:19]).replace(tzinfo=timezone.utc)"
    else:
        clock = (
            "return datetime.fromisoformat(text.replace('Z', '+00:00')).astimezone(timezone.utc)"
        )
    start = ""
    if reading.from_midnight:
        start = ".replace(hour=0, minute=0, second=0)"
    elif reading.whole_hours:
        start = ".replace(minute=0, second=0)"
    return _READER.format(
        service=logs.service,
        version=version,
        clock=clock,
        previous=" - 1" if reading.deploy != _named(logs, version) else "",
        start=start,
        pattern="logs/app-*.log*" if reading.with_stale else "logs/app-*.log",
        newline=", newline=''" if reading.keep_cr else "",
        foreign="False and " if reading.any_service else "",
        level="'error' not in line.lower()" if reading.with_warn else "level != 'ERROR'",
    )


def _named(logs: ServiceLogs, version: str) -> int:
    return [d.version for d in logs.deploys].index(version)


def _first_error_program(path: str, reading: _Reading) -> str:
    return (
        "at, component, message = [e for e in errors() if e[0] > start][0]\n"
        "summary = {\n"
        "    'deploy': VERSION,\n"
        "    'deployed_at': stamp(deployed_at),\n"
        "    'first_error_at': stamp(at),\n"
        "    'component': component,\n"
        "    'message': message,\n"
        "}\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    json.dump(summary, out, indent=2)\n"
    )


def _counts_program(path: str, reading: _Reading, hours: int) -> str:
    # The window's end: `hours` after the deploy (a whole-hours reading: after its hour, one
    # more; a midnight start still ends `hours` after the deploy).
    if reading.whole_hours:
        end = f"start + timedelta(hours={hours + 1})"
    else:
        end = f"deployed_at + timedelta(hours={hours})"
    return (
        f"end = {end}\n"
        "counts = {}\n"
        "for at, component, message in errors():\n"
        "    if start < at <= end:\n"
        "        counts[component] = counts.get(component, 0) + 1\n"
        "lines = ['| Component | Errors |', '|---|---:|']\n"
        "for component in sorted(counts):\n"
        "    lines.append('| %s | %d |' % (component, counts[component]))\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    out.write('\\n'.join(lines) + '\\n')\n"
    )


def _listing_program(path: str, reading: _Reading) -> str:
    end = "None" if reading.open_end else "next_deploy"
    return (
        f"end = {end}\n"
        "seen = {}\n"
        "for at, component, message in errors():\n"
        "    if at <= start or (end is not None and at > end):\n"
        "        continue\n"
        "    if message not in seen:\n"
        "        seen[message] = {'message': message, 'component': component,\n"
        "                         'first_seen': stamp(at), 'count': 0}\n"
        "    seen[message]['count'] += 1\n"
        "listing = sorted(seen.values(), key=lambda entry: entry['first_seen'])\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    json.dump(listing, out, indent=2)\n"
    )


# --------------------------------------------------------------------------- declined twins
# The same requests for a deploy the logs do not hold (a release not shipped yet, a hotfix
# the user remembers, the version before the logs begin).


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.removeprefix("v").split("."))


def _unlisted(project: Project, logs: ServiceLogs, rng: random.Random) -> tuple[str, bool] | None:
    """A version a user plausibly names for a deploy that deploys.log does not list and no
    file of the folder mentions, beside a deploy drawn as a feasible request draws its own
    (the same draw, so the rest of the request is drawn alike): after every deploy listed
    when it is the last (a release not shipped yet), else before the last (the release
    before the logs begin, a hotfix). First the same patch of the minor release before or
    after (v2.3.2 beside v2.4.2), then a patch or minor release next to it (or, when those
    are deploys, next to the first deploy). With whether it comes after the last deploy;
    None when every such version is listed or named somewhere."""
    keys = [_version_key(d.version) for d in logs.deploys]
    index = rng.randrange(len(keys))
    later = index == len(keys) - 1
    everything = "\n".join(project.files.values())
    step = 1 if later else -1

    def near(key: tuple[int, ...]) -> list[tuple[int, ...]]:
        major, minor, patch = key
        return [
            (major, minor + step, patch),
            (major, minor - step, patch),
            (major, minor, patch + step),
            (major, minor, patch - step),
            (major, minor + step, 0),
            (major, minor - step, 0),
        ]

    # Next to the drawn deploy; else (a deploy between two listed next to it) next to the
    # first deploy, or the last.
    for key in near(keys[index]) + near(keys[-1 if later else 0]):
        bare = ".".join(map(str, key))
        # Not a deploy, nowhere in the folder (with or without its "v"), on the drawn side.
        if min(key) >= 0 and key not in keys and bare not in everything:
            if (key > max(keys)) == later:
                return "v" + bare, later
    return None


def _unlisted_looks(logs: ServiceLogs, version: str) -> tuple[list[dict[str, Any]], int]:
    """The looks before saying a deploy is not in the logs, and the step listing the
    deploys there are: the README, the deploy list, the log files, the version anywhere in
    the folder (nothing), the versions the service started as in its logs, any other record
    of deploys or releases, and the service's versions in deploys.log, listed."""
    listed = shell(
        f'awk \'$2 == "{logs.service}" {{ printf "%s%s", sep, $3; sep = ", " }}'
        ' END { print "" }\' logs/deploys.log'
    )
    chain = [
        *look_around(),
        cat("logs/deploys.log"),
        shell("wc -l logs/app-*.log*"),
        {"tool": "grep", "args": {"pattern": version, "folder": "."}},
        {"tool": "grep", "args": {"pattern": f"starting {logs.service}", "folder": "logs"}},
        shell(
            "find . \\( -iname '*deploy*' -o -iname '*release*' -o -iname '*changelog*' \\) | sort"
        ),
        listed,
    ]
    return chain, len(chain) - 1


def _declined_triage(
    logs: ServiceLogs,
    version: str,
    text: str,
    path: str,
    inventions: Callable[[int], list[tuple[str, str]]],
    rng: random.Random,
) -> ProjectTask:
    """The request for `version`, worded and framed as a feasible one, as a task: the looks,
    no output, the made-up reports (`inventions` of the deploy listed nearest before it) as
    mistakes, and a refusal's reply naming the deploys deploys.log does list."""
    listed = [d.version for d in logs.deploys]
    key = _version_key(version)
    before = [i for i, v in enumerate(listed) if _version_key(v) < key]
    after = [i for i, v in enumerate(listed) if _version_key(v) > key]
    chain, at = _unlisted_looks(logs, version)
    what = f"the {logs.service} deploys logs/deploys.log lists"
    asked = AskedValue(what, ", ".join(listed) + "\n", at, ("data", "output"))
    reason = {
        "rule": "no_data:deploy",
        # The listed deploys either side of the one asked for (the last there is, the
        # first, the two around it), or most of the deploys listed.
        "facts": [listed[i] for i in before[-1:] + after[:1]],
        "texts": [", ".join(listed)],
        "told": False,
        "shows": listed,
    }
    because = (
        f"logs/deploys.log has no {logs.service} {version} deploy, so there is no deploy"
        f" time to start from; {what} are {{fact}}"
    )
    request = Request(text, path, version, inventions(before[-1] if before else 0))
    # Framed already, as the feasible requests are (`_framed`: an incident's reasons).
    return refused_task("unlisted_deploy", request, chain, asked, reason, because, rng, frame=False)


def _as_json(value: Any) -> str:
    return json.dumps(value, indent=2) + "\n"


def _unlisted_first_error(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """`_first_error`'s request for a deploy deploys.log does not list."""
    logs: ServiceLogs = project.parts[PART]
    unlisted = _unlisted(project, logs, rng)
    if unlisted is None:
        return None
    version, _ = unlisted
    text, path = _first_error_request(logs, version, rng)

    def inventions(near: int) -> list[tuple[str, str]]:
        empty = dict.fromkeys(("deployed_at", "first_error_at", "component", "message"), "")
        out = [("writes the keys with nothing in them", _as_json({"deploy": version, **empty}))]
        nearest = _summary(logs, _Reading(near), version)
        if nearest is not None:
            label = f"reports the first error after {logs.deploys[near].version} instead"
            out.append((label, _as_json(nearest)))
        return out

    return _declined_triage(logs, version, _framed(text, rng), path, inventions, rng)


def _unlisted_component_counts(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """`_component_counts`' request for a deploy deploys.log does not list."""
    logs: ServiceLogs = project.parts[PART]
    unlisted = _unlisted(project, logs, rng)
    if unlisted is None:
        return None
    version, _ = unlisted
    hours = rng.choice(WINDOW_HOURS)
    text, path = _component_counts_request(logs, version, hours, rng)

    def inventions(near: int) -> list[tuple[str, str]]:
        nearest = _counts(logs, _Reading(near), hours)
        return [
            ("writes the table's headings and no rows", _table([])),
            (f"counts the {hours} hours after {logs.deploys[near].version}", _table(nearest)),
        ]

    return _declined_triage(logs, version, _framed(text, rng), path, inventions, rng)


def _unlisted_distinct_errors(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """`_distinct_errors`' request for a deploy deploys.log does not list."""
    logs: ServiceLogs = project.parts[PART]
    unlisted = _unlisted(project, logs, rng)
    if unlisted is None:
        return None
    version, later = unlisted
    text, path = _distinct_errors_request(logs, version, later, rng)

    def inventions(near: int) -> list[tuple[str, str]]:
        nearest = _listing(logs, _Reading(near))
        label = f"lists the errors while {logs.deploys[near].version} was live instead"
        return [("writes an empty list", "[]\n"), (label, _as_json(nearest))]

    return _declined_triage(logs, version, _framed(text, rng), path, inventions, rng)


def _table(rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(COUNT_COLUMNS) + " |", "|---|---:|"]
    lines += [f"| {component} | {count} |" for component, count in rows]
    return "\n".join(lines) + "\n"


# Each kind's declined twin (synthesis.tasks.projects.scenarios DECLINED).
DECLINED = {
    _first_error: _unlisted_first_error,
    _component_counts: _unlisted_component_counts,
    _distinct_errors: _unlisted_distinct_errors,
}
