"""The service logs of a project folder: a week of a small service's daily logs and its deploys.

The job that keeps a topic's ledgers in sync (`sales-sync`, or the vocabulary's `service`)
writes one log file a day under `logs/` (`app-YYYY-MM-DD.log`), each line its time in UTC,
the service, the level and the component; `logs/deploys.log` lists the production deploys,
written by a release script in its machine's local time with the UTC offset. Around them is
the noise real logs have: errors before and after every deploy, a new version's error that
repeats, WARN lines for retries whose message mentions an error, lines another service on the
host wrote into the same file, a day whose file has Windows line endings, and a `.log.1`
copy of part of a day that a rotation run twice left behind.

The truth (`ServiceLogs`) is the lines and deploys as they are, from which a planner
(synthesis.tasks.projects.log_triage) computes what a right triage says.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from typing import TYPE_CHECKING, Any

from synthesis.environments.projects.ledgers import YEAR, Ledger

if TYPE_CHECKING:
    from synthesis.environments.projects.folder import Part

# The week the logs cover starts in July, after the half year the ledgers hold.
FIRST_DAYS = (8, 20)  # the first log day of July is drawn from this range
DAY_COUNT = (5, 7)
DEPLOY_COUNT = 3
# Lines of the service's own a day beside its errors: health checks, syncs, debug noise.
ROUTINE_LINES = (14, 22)
BACKGROUND_ERRORS = (1, 3)  # errors a day that have nothing to do with a deploy
# The release machine's offset from UTC, as the deploy script writes it.
OFFSETS = (1, 2, -4, -5)
OTHER_SERVICE = "backup-agent"
LEVELS = ("DEBUG", "INFO", "WARN", "ERROR")


@dataclass(frozen=True)
class LogLine:
    at: datetime  # UTC
    service: str
    level: str
    component: str
    message: str

    def text(self) -> str:
        return f"{stamp(self.at)} {self.service} {self.level} [{self.component}] {self.message}"


@dataclass(frozen=True)
class Deploy:
    version: str  # "v2.7.1", as deploys.log writes it
    at: datetime  # UTC
    offset_hours: int  # the release machine's offset, which deploys.log writes
    by: str

    def local_text(self) -> str:
        """The time as the release script writes it: local wall clock with its offset."""
        zone = timezone(timedelta(hours=self.offset_hours))
        return self.at.astimezone(zone).isoformat()


@dataclass(frozen=True)
class ServiceLogs:
    """The service's logs as they are: every line of the day files in time order (the
    service's and the other service's), the deploys, and where the noise is."""

    service: str
    days: tuple[str, ...]  # "2024-07-09", in order: one log file each
    lines: tuple[LogLine, ...]
    deploys: tuple[Deploy, ...]  # in time order
    crlf_day: str  # the day whose file has Windows line endings
    stale_day: str  # the day a `.log.1` copy is left beside
    stale_lines: tuple[LogLine, ...]  # what the copy holds: the day's first lines

    @staticmethod
    def path(day: str) -> str:
        return f"logs/app-{day}.log"

    @property
    def stale_path(self) -> str:
        return self.path(self.stale_day) + ".1"


def stamp(at: datetime) -> str:
    """A UTC time as the logs write it: 2024-07-09T14:07:33Z."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def service_name(vocabulary: dict[str, Any], ledger: Ledger) -> str:
    return vocabulary.get("service") or f"{ledger.name.replace('_', '-')}-sync"


def service_logs(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random) -> Part:
    """The `service_logs` part of a project folder (see synthesis.environments.projects.folder)."""
    # Imported here: folder.py imports this module to list it among its PARTS.
    from synthesis.environments.projects.folder import Part

    logs = _draw(service_name(vocabulary, ledger), ledger, rng)
    files = {}
    for day in logs.days:
        text = "".join(line.text() + "\n" for line in logs.lines if _day(line.at) == day)
        if day == logs.crlf_day:
            text = text.replace("\n", "\r\n")
        files[logs.path(day)] = text
    files[logs.stale_path] = "".join(line.text() + "\n" for line in logs.stale_lines)
    files["logs/deploys.log"] = "".join(
        f"{d.local_text()} {logs.service} {d.version} deployed by {d.by}\n" for d in logs.deploys
    )
    return Part(files=files, truth=logs, readme=_readme(logs))


# --------------------------------------------------------------------------- the draw


def _draw(service: str, ledger: Ledger, rng: random.Random) -> ServiceLogs:
    first = date(YEAR, 7, rng.randint(*FIRST_DAYS))
    days = [first + timedelta(days=i) for i in range(rng.randint(*DAY_COUNT))]
    day_names = tuple(d.isoformat() for d in days)
    catalogue = _messages(ledger)
    taken: set[datetime] = set()  # every line its own second: "first" is never a tie
    lines: list[LogLine] = []

    def add(at: datetime, level: str, component: str, message: str, who: str = service):
        while at in taken:
            at += timedelta(seconds=1)
        taken.add(at)
        lines.append(LogLine(at, who, level, component, message))

    for day in days:
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        for _ in range(rng.randint(*ROUTINE_LINES)):
            component, level, message = rng.choice(catalogue["routine"])
            add(_moment(start, rng), level, component, message)
        for _ in range(rng.randint(*BACKGROUND_ERRORS)):
            component, message = rng.choice(catalogue["background"])
            add(_moment(start, rng), "ERROR", component, message)
        if rng.random() < 0.6:
            component, message = rng.choice(catalogue["retry"])
            add(_moment(start, rng), "WARN", component, message)
    # The other service's lines land in a few days' files (a shared log target).
    for day in rng.sample(days, max(2, len(days) // 2)):
        start = datetime(day.year, day.month, day.day, tzinfo=UTC)
        add(_moment(start, rng), "ERROR", "disk", rng.choice(catalogue["other"]), OTHER_SERVICE)

    deploys = _deploys(service, days, rng)
    regressions = rng.sample(catalogue["regression"], len(deploys))
    restarts = []
    for deploy, (component, message) in zip(deploys, regressions, strict=True):
        # The new version starts a little after the release script says it deployed.
        started = deploy.at + timedelta(seconds=rng.randint(20, 75))
        restarts.append((deploy.at, started))
        add(started, "INFO", "api", f"starting {service} {deploy.version}")
        # What deploys bring: a retry warning and the other service's line now and then,
        # soon after; the new version's own error, which then repeats.
        at = started + timedelta(minutes=rng.randint(2, 20))
        if rng.random() < 0.75:
            retry_component, retry = rng.choice(catalogue["retry"])
            add(at, "WARN", retry_component, retry)
        if rng.random() < 0.5:
            other = rng.choice(catalogue["other"])
            add(at + timedelta(minutes=rng.randint(1, 15)), "ERROR", "disk", other, OTHER_SERVICE)
        at += timedelta(minutes=rng.randint(20, 150))
        for _ in range(rng.randint(2, 4)):
            add(at, "ERROR", component, message)
            at += timedelta(minutes=rng.randint(3, 240))
    # Nothing of the service's is logged while it restarts.
    lines = [
        x
        for x in lines
        if x.service != service or not any(down <= x.at < up for down, up in restarts)
    ]
    end = datetime(days[-1].year, days[-1].month, days[-1].day, tzinfo=UTC) + timedelta(days=1)
    lines = sorted((x for x in lines if x.at < end), key=lambda x: x.at)

    crlf_day = rng.choice(day_names)
    # The copy is of a day after the first deploy, when someone looked into the logs.
    # The rotation ran again when the service was restarted by hand, hours after a deploy
    # (its error had shown up): the copy holds that day's lines up to then.
    looked_at = rng.choice(deploys).at + timedelta(minutes=rng.randint(180, 360))
    stale_day = _day(looked_at) if _day(looked_at) in day_names else day_names[-1]
    day_lines = [x for x in lines if _day(x.at) == stale_day]
    before = sum(x.at <= looked_at for x in day_lines)
    stale_lines = tuple(day_lines[: max(1, min(before, len(day_lines) - 1))])
    return ServiceLogs(
        service=service,
        days=day_names,
        lines=tuple(lines),
        deploys=tuple(deploys),
        crlf_day=crlf_day,
        stale_day=stale_day,
        stale_lines=stale_lines,
    )


def _moment(day_start: datetime, rng: random.Random) -> datetime:
    return day_start + timedelta(seconds=rng.randrange(24 * 3600))


def _day(at: datetime) -> str:
    return at.astimezone(UTC).date().isoformat()


def _deploys(service: str, days: list[date], rng: random.Random) -> list[Deploy]:
    """Three production deploys on days between the first and the last (errors come before
    the first, and the last has a day after it), in working hours of the release machine."""
    offset = rng.choice(OFFSETS)
    people = rng.sample(("maria", "jon", "priya", "tomas", "wei", "sam"), 2)
    major, minor, patch = rng.randint(1, 3), rng.randint(0, 9), rng.randint(0, 4)
    out = []
    for day in sorted(rng.sample(days[1:-1], DEPLOY_COUNT)):
        if rng.random() < 0.5:
            patch += 1
        else:
            minor, patch = minor + 1, 0
        local = datetime(day.year, day.month, day.day, rng.randint(9, 16), rng.randint(0, 59))
        local += timedelta(seconds=rng.randint(0, 59))
        at = local.replace(tzinfo=timezone(timedelta(hours=offset))).astimezone(UTC)
        out.append(Deploy(f"v{major}.{minor}.{patch}", at, offset, rng.choice(people)))
    return out


def _messages(ledger: Ledger) -> dict[str, list]:
    """What the service logs, in the topic's words. Error messages are distinct across
    components, and no routine line mentions an error: only a retry's WARN does."""
    name, amount = ledger.name, ledger.amount_field
    return {
        "routine": [
            ("api", "INFO", "GET /health 200"),
            ("api", "INFO", f"GET /{name}/export 200"),
            ("worker", "INFO", f"synced {name} batch from upstream"),
            ("worker", "DEBUG", f"batch checksum matches for {name}"),
            ("scheduler", "INFO", f"queued nightly {name} reconciliation"),
            ("scheduler", "DEBUG", "next run in 15m"),
            ("store", "DEBUG", "connection pool size 8"),
            ("store", "INFO", "vacuum finished"),
        ],
        "background": [
            ("api", "upstream timeout after 30s"),
            ("store", "connection refused by database"),
            ("scheduler", "job overran its window"),
        ],
        "retry": [
            ("worker", "retrying after error: connection reset by peer (attempt 1 of 3)"),
            ("api", "upstream returned error 503, retrying"),
        ],
        "regression": [
            ("worker", f"failed to parse {name} batch: unexpected column {amount}_cents"),
            ("store", f"insert into {name} failed: duplicate key"),
            ("api", f"GET /{name}/export 500: serializer crashed"),
            ("worker", f"{name} batch rejected: {amount} is not a number"),
            ("scheduler", "reconciliation aborted: lock held by another run"),
        ],
        "other": [
            "snapshot of /var/lib/app failed: no space left on device",
            "upload to offsite store failed: error 403",
        ],
    }


def _readme(logs: ServiceLogs) -> str:
    return (
        "## Service logs\n\n"
        f"`{logs.service}`, the job that keeps the ledgers in sync, logs to `logs/`, one file "
        "per day: `logs/app-YYYY-MM-DD.log` is that day's whole log. A `.log.1` file beside "
        "one is a leftover of a log rotation that ran twice (part of the same day again): "
        "ignore it.\n\n"
        "- Each line is: time in UTC (`2024-07-09T14:07:33Z`), service, level (DEBUG, INFO, "
        "WARN, ERROR), `[component]`, message.\n"
        "- Other services on the host log to the same place, so now and then a line is "
        f"theirs: only lines with `{logs.service}` are ours.\n"
        "- Retries are logged as WARN; only ERROR lines are failures.\n"
        "- `logs/deploys.log` has one line per production deploy: time, service, version, "
        "who. The release script writes the time of its machine with its UTC offset.\n"
    )
