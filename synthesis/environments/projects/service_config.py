"""The configuration of a project's small job: an INI file per environment, the limits it must
keep, and the validator the team runs after a change.

The job (`<ledger>_export`: it sends the monthly ledgers on to finance) reads
`config/app.ini`: a `[defaults]` section and one section per environment (`staging`,
`production`, sometimes `qa`), a key an environment leaves out taken from `[defaults]`. The
rules its settings follow are written twice, as people keep them: in prose in
`docs/operations.md` (what each rule means) and as numbers in `config/limits.json` (the
most workers per environment, the batch size's step and maximum, the throughput the
timeout rule reads, where debug may be on). `tools/check_config.py` reads both and prints
every problem. Beside them is the noise a real config folder has: the template the job
shipped with (`config/app.example.ini`, placeholder values) and an old copy of the settings
(`.bak` or `.old.ini`) that no longer matches. Comments in the INI files say why a value is
what it is.

The folder's settings are valid as made (the validator prints no problem), with room under
every limit, so a task can ask for a change up to a limit (synthesis.tasks.projects.config_changes).
The truth (`ServiceConfig`) is the sections as text, the limits and the files' paths.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from synthesis.environments.projects.ledgers import Ledger

if TYPE_CHECKING:
    from synthesis.environments.projects.folder import Part

CONFIG = "config/app.ini"
EXAMPLE = "config/app.example.ini"
LIMITS = "config/limits.json"
OPERATIONS = "docs/operations.md"
VALIDATOR = "tools/check_config.py"
# The keys a program reads as numbers and as a boolean; every other value is text.
WHOLE_NUMBERS = ("workers", "batch_size", "timeout_s", "retries")
BOOLEANS = ("debug",)
# Where debug may be on: never in production, where it logs customers' rows.
DEBUG_ALLOWED = {"production": False, "staging": True, "qa": True}
# The most workers an environment may have, drawn in these bounds: production's leave room
# to raise its workers; staging's and qa's are small boxes.
WORKERS_MAX = {"production": (8, 16), "staging": (3, 5), "qa": (2, 4)}


@dataclass(frozen=True)
class ServiceConfig:
    """What the configuration files were written from."""

    job: str  # the job's name, "sales_export"
    sections: dict[str, dict[str, str]]  # section -> key -> the value's text, in file order
    limits: dict[str, Any]  # config/limits.json, as loaded
    backup: str  # the old copy's path

    @property
    def environments(self) -> list[str]:
        """The environment sections, in file order (every section but `[defaults]`)."""
        return [name for name in self.sections if name != "defaults"]

    def effective(self, section: str, key: str) -> str:
        """A key's value in an environment, `[defaults]` filling what the section leaves out."""
        return self.sections[section].get(key, self.sections["defaults"][key])

    def min_timeout(self, batch_size: int) -> int:
        """The shortest timeout the limits allow for a batch size: `factor` times the
        seconds a batch takes at the stated throughput, rounded up to a whole second."""
        rule = self.limits["timeout_s"]
        needed = rule["factor"] * batch_size
        return -(-needed // rule["records_per_second"])


def typed(key: str, text: str) -> Any:
    """A setting as the job reads it: a whole number, a boolean, or text."""
    if key in WHOLE_NUMBERS:
        return int(text)
    if key in BOOLEANS:
        return text.strip().lower() in ("1", "yes", "true", "on")
    return text


def service_config(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random) -> Part:
    """The configuration part of a project folder (registered in folder.PARTS)."""
    # folder.py lists this maker in its PARTS, so it is imported from here when called.
    from synthesis.environments.projects.folder import Part

    job = f"{ledger.name}_export"
    environments = (
        ["qa", "staging", "production"] if rng.random() < 0.5 else ["staging", "production"]
    )
    limits = _limits(environments, rng)
    sections = _sections(vocabulary, ledger, limits, environments, rng)
    truth = ServiceConfig(
        job=job,
        sections=sections,
        limits=limits,
        backup=rng.choice(("config/app.ini.bak", "config/app.old.ini")),
    )
    files = {
        CONFIG: _ini_text(truth, truth.sections),
        EXAMPLE: _example_text(truth),
        truth.backup: _ini_text(truth, _older(truth, rng), stale=True),
        LIMITS: json.dumps(limits, indent=2) + "\n",
        OPERATIONS: _operations(truth),
        VALIDATOR: VALIDATOR_SOURCE,
    }
    return Part(files=files, truth=truth, readme=_readme(truth))


def _limits(environments: list[str], rng: random.Random) -> dict[str, Any]:
    step = rng.choice((25, 50, 100))
    return {
        "batch_size": {"multiple_of": step, "max": step * rng.randint(8, 16)},
        "timeout_s": {
            "records_per_second": rng.choice((10, 20, 25, 40)),
            "factor": rng.choice((2, 3)),
        },
        "environments": {
            name: {"workers_max": rng.randint(*WORKERS_MAX[name]), "debug": DEBUG_ALLOWED[name]}
            for name in environments
        },
        "schedule": "HH:MM, 24-hour clock, UTC",
    }


def _sections(vocabulary, ledger, limits, environments, rng) -> dict[str, dict[str, str]]:
    step, most = limits["batch_size"]["multiple_of"], limits["batch_size"]["max"]
    rule = limits["timeout_s"]

    def timeout(batch: int, slack: int) -> str:
        # Valid with a little slack: a raised batch size may then need a longer timeout.
        return str(-(-rule["factor"] * batch // rule["records_per_second"]) + slack)

    def batch(low_steps: int, high_steps: int) -> int:
        return step * rng.randint(low_steps, min(high_steps, most // step))

    default_batch = batch(2, 4)
    sections: dict[str, dict[str, str]] = {
        "defaults": {
            "workers": "2",
            "batch_size": str(default_batch),
            "timeout_s": timeout(default_batch, rng.randint(0, 10)),
            "retries": str(rng.randint(2, 4)),
            "debug": "false",
            "schedule": _clock(rng.randint(0, 5), rng.choice((0, 15, 30, 45))),
            "export_dir": f"exports/{ledger.name}",
            "currency": vocabulary.get("currency", "USD"),
        }
    }
    for name in environments:
        cap = limits["environments"][name]["workers_max"]
        if name == "production":
            size = batch(3, (most // step) // 2)
            sections[name] = {
                "workers": str(rng.randint(2, cap - 2)),
                "batch_size": str(size),
                "timeout_s": timeout(size, rng.randint(0, 15)),
                "debug": "false",
                "schedule": _clock(rng.randint(1, 4), rng.choice((0, 15, 30, 45))),
                "retries": str(rng.randint(4, 6)),
            }
        elif name == "staging":
            size = batch(1, 3)
            sections[name] = {
                "workers": str(rng.randint(1, cap - 1)),
                "batch_size": str(size),
                "timeout_s": timeout(size, rng.randint(0, 10)),
                "debug": "false",
                "schedule": _clock(rng.randint(5, 8), rng.choice((0, 30))),
                "export_dir": f"exports/{ledger.name}_staging",
            }
        else:  # qa: debug left to [defaults]
            sections[name] = {
                "workers": "1",
                "export_dir": f"exports/{ledger.name}_qa",
            }
    return sections


def _clock(hour: int, minute: int) -> str:
    return f"{hour:02d}:{minute:02d}"


# Why a value is what it is, written above it in the INI (a key of a section: its comment).
_COMMENTS = {
    ("defaults", "workers"): "Every environment starts from these values.",
    ("defaults", "timeout_s"): "Seconds one batch may take before it is retried.",
    ("defaults", "schedule"): "Daily start, UTC (docs/operations.md).",
    ("staging", "workers"): "Staging's database is a small copy: keep the load small.",
    ("production", "workers"): "Raised after the March backlog.",
    ("production", "debug"): "Never on in production: debug logs customers' rows.",
    ("qa", "workers"): "One worker: qa runs on a laptop-sized box.",
}


def _ini_text(
    truth: ServiceConfig, sections: dict[str, dict[str, str]], stale: bool = False
) -> str:
    lines = [
        f"; Settings of the {truth.job} job, one section per environment.",
        "; A key an environment leaves out is taken from [defaults].",
        "; After any change run: python3 tools/check_config.py",
    ]
    if stale:
        lines.insert(0, "; OLD COPY kept before the spring changes; the job does not read it.")
    for name, values in sections.items():
        lines += ["", f"[{name}]"]
        for key, value in values.items():
            note = _COMMENTS.get((name, key))
            if note:
                lines.append(f"# {note}")
            lines.append(f"{key} = {value}")
    return "\n".join(lines) + "\n"


def _example_text(truth: ServiceConfig) -> str:
    """The template the job shipped with: every key, placeholder values, two sections."""
    placeholder = {
        "workers": "1",
        "batch_size": str(truth.limits["batch_size"]["multiple_of"]),
        "timeout_s": "60",
        "retries": "3",
        "debug": "true",
        "schedule": "00:00",
        "export_dir": "exports/CHANGE_ME",
        "currency": "USD",
    }
    return (
        "; Example settings: copy to app.ini and fill in. Not read by the job.\n\n"
        "[defaults]\n"
        + "".join(f"{key} = {value}\n" for key, value in placeholder.items())
        + "\n[production]\nworkers = 1\ndebug = false\n"
    )


def _older(truth: ServiceConfig, rng: random.Random) -> dict[str, dict[str, str]]:
    """The settings as they were before the spring changes: fewer production workers,
    another schedule, and no qa section yet."""
    old = {name: dict(values) for name, values in truth.sections.items() if name != "qa"}
    production = old["production"]
    production["workers"] = str(max(1, int(production["workers"]) - rng.randint(1, 2)))
    production["schedule"] = _clock(rng.randint(1, 4), 0)
    production["debug"] = "true"
    return old


def _operations(truth: ServiceConfig) -> str:
    job = truth.job
    return (
        f"# Operating {job}\n\n"
        f"The job reads `{CONFIG}` at start. It has a `[defaults]` section and one section per\n"
        "environment; a key an environment's section leaves out is taken from `[defaults]`.\n"
        f"The numbers the rules below refer to are in `{LIMITS}`.\n\n"
        "## Rules for the settings\n\n"
        "- `workers`: at most the environment's `workers_max` in the limits file.\n"
        "- `batch_size`: a multiple of `batch_size.multiple_of`, and at most `batch_size.max`.\n"
        "- `timeout_s`: whole seconds, at least `timeout_s.factor` times the time one batch\n"
        "  takes (`batch_size` divided by `timeout_s.records_per_second`), rounded up.\n"
        "- `debug`: `true` or `false`; only on in an environment whose `debug` is true in the\n"
        "  limits file. Never in production: debug logs customers' rows.\n"
        "- `schedule`: the daily start time as `HH:MM` on the 24-hour clock, in UTC (the\n"
        "  servers' clock), whatever time zone the request came in.\n\n"
        "## Changing a setting\n\n"
        f"Edit `{CONFIG}` only: `{EXAMPLE}` is the template the job shipped with and the\n"
        f"`{truth.backup}` file is an old copy; the job reads neither. Then run\n"
        f"`python3 {VALIDATOR}`: it prints every problem and exits 1 if there is one.\n"
    )


def _readme(truth: ServiceConfig) -> str:
    return (
        "## The export job's settings\n\n"
        f"The `{truth.job}` job's settings are in `{CONFIG}`, one section per environment on\n"
        f"top of `[defaults]`. The rules they follow are in `{OPERATIONS}` (the numbers in\n"
        f"`{LIMITS}`); check a change with `python3 {VALIDATOR}`. `{EXAMPLE}` and\n"
        f"`{truth.backup}` are not read by the job.\n"
    )


# The team's validator, shipped in the folder as it is: the standard library only, the same
# reading as the job's (configparser, no interpolation, keys case-insensitive).
VALIDATOR_SOURCE = '''"""Check config/app.ini against config/limits.json by docs/operations.md.

Usage: python3 tools/check_config.py [INI] [LIMITS]
Prints every problem found and exits 1 if there is one.
"""
import configparser
import json
import re
import sys

ini_path = sys.argv[1] if len(sys.argv) > 1 else "config/app.ini"
limits_path = sys.argv[2] if len(sys.argv) > 2 else "config/limits.json"

parser = configparser.ConfigParser(interpolation=None)
with open(ini_path, encoding="utf-8") as handle:
    parser.read_file(handle)
with open(limits_path, encoding="utf-8") as handle:
    limits = json.load(handle)

problems = []
if not parser.has_section("defaults"):
    problems.append("no [defaults] section")
defaults = dict(parser["defaults"]) if parser.has_section("defaults") else {}
for name in parser.sections():
    if name != "defaults" and name not in limits["environments"]:
        problems.append("[%s]: not an environment the limits file knows" % name)

for name in ["defaults"] + sorted(limits["environments"]):
    if not parser.has_section(name):
        if name != "defaults":
            problems.append("[%s]: section missing" % name)
        continue
    values = dict(defaults)
    values.update(parser[name])

    def number(key):
        try:
            return int(values[key])
        except (KeyError, ValueError):
            problems.append("[%s] %s: not a whole number: %r" % (name, key, values.get(key)))
            return None

    batch = number("batch_size")
    rule = limits["batch_size"]
    if batch is not None and (batch % rule["multiple_of"] or not 0 < batch <= rule["max"]):
        problems.append(
            "[%s] batch_size %d: must be a multiple of %d, at most %d"
            % (name, batch, rule["multiple_of"], rule["max"])
        )
    timeout = number("timeout_s")
    rule = limits["timeout_s"]
    if batch is not None and timeout is not None:
        needed = -(-rule["factor"] * batch // rule["records_per_second"])
        if timeout < needed:
            problems.append(
                "[%s] timeout_s %d: at least %d for batches of %d" % (name, timeout, needed, batch)
            )
    number("retries")
    workers = number("workers")
    if name != "defaults":
        most = limits["environments"][name]["workers_max"]
        if workers is not None and not 1 <= workers <= most:
            problems.append("[%s] workers %d: between 1 and %d" % (name, workers, most))
    try:
        debug = parser.getboolean(name, "debug", vars=None, fallback=None)
        if debug is None:
            debug = parser.getboolean("defaults", "debug")
    except (ValueError, configparser.Error):
        problems.append("[%s] debug: not true or false" % name)
        debug = False
    if debug and name != "defaults" and not limits["environments"][name]["debug"]:
        problems.append("[%s] debug: must be off here" % name)
    if not re.fullmatch(r"([01][0-9]|2[0-3]):[0-5][0-9]", values.get("schedule", "")):
        problems.append("[%s] schedule %r: HH:MM, 24-hour, UTC" % (name, values.get("schedule")))

for problem in problems:
    print("PROBLEM " + problem)
print("%s: %d problem(s)" % (ini_path, len(problems)))
sys.exit(1 if problems else 0)
'''
