"""Requests a project folder cannot support: the data they need is not there (issue 41).

Every ledger report kind (synthesis.tasks.projects.ledger_reports) has a declined twin here
(`DECLINED`): the same request, built by the kind's own request builder in its own words,
for a report the folder has no data for. Mostly that is a period of the half year its
ledgers do not cover (Q3 2024 when they run January to June, Q1 2024 when they run July to
December: which half a folder holds is drawn per folder, so a month asked is refused in one
folder of a topic and reported on in another, and a twin's words are those of a feasible
request of another folder); now and then a group (a region, a branch) no ledger row has, of
one group's report, or a figure no ledger records (the VAT per region, when a row holds
only its amount), of a summary. The right outcome is to look, find the data missing, write
nothing and say why. The gold chain is that looking: the tree, the README, the report
settings, then the listing or the program whose result shows what the ledgers do hold (the
fact the reply states, as a refusal's reason is in the tool environments:
synthesis.tasks.families.refusals), and everywhere else the data could be before a refusal
rests on it (last year's files, the copies, the other tables, a search of the whole
folder). Its reply contract (`ProjectTask.reply`) is a refusal's: decline, claim nothing
done, and give a true reason a call showed.

The mistakes are the reports people make up instead (headings with no numbers, zeros, the
nearest period's figures, every group's figures, another group's): each is the gold reads
and then a write, which the workspace guard fails. Replies that claim the report was
written, or decline with no reason or a false one, are the self-test's shortcuts and the
tests' (tests/synthesis/tasks/projects/test_missing_data.py).
"""

from __future__ import annotations

import json
import random
import re
import shlex
from decimal import Decimal
from typing import Any

from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.ledgers import (
    ARCHIVE_YEAR,
    CORRECTIONS_PATH,
    HALVES,
    MONTH_NAMES,
    YEAR,
    Ledger,
    Row,
    money,
    quarter_months,
)
from synthesis.environments.projects.reference_data import ReferenceData
from synthesis.tasks.checks import AskedValue
from synthesis.tasks.projects import ledger_reports
from synthesis.tasks.projects.ledger_reports import (
    QUARTER_TABLE_REQUESTS,
    clean_month_request,
    group_items_request,
    half_periods,
    half_year_pack_request,
    item_counts_request,
    largest_rows_request,
    monthly_request,
    periods,
    span,
    summary_request,
)
from synthesis.tasks.projects.work import (
    ProjectTask,
    Request,
    cat,
    framed,
    look_around,
    refused_task,
    shell,
    survey_call,
)

# Names of the kind a topic's groups are, that its ledgers never hold, by the field they are
# values of: a request for one reads like a request for a real one. A topic whose field is
# not here (and whose groups are no numbered run: "Plant A", "Year 7") has its one-group
# reports declined for a period only.
ABSENT_GROUPS = {
    "region": ("Central", "Midlands", "Northeast", "Southwest", "Overseas"),
    "department": ("Finance", "Legal", "Customer Support", "Facilities", "Catering"),
    "clinic": ("Lakeside", "Parkview", "Old Town"),
    "carrier": ("Royal Mail", "DPD", "TNT"),
    "campaign": ("Summer fete", "Christmas appeal", "Easter raffle"),
    "site": ("Warehouse", "Lakeside", "Riverside", "Annex"),
    "customer_type": ("Caterer", "Deli", "Farm shop"),
    "branch": ("Westfield", "Lakeside", "Old Town", "Northgate"),
    "venue": ("Bandstand", "Studio Theatre", "Town Hall"),
    "year_group": ("Year 11", "Year 12"),
    "team": ("Social", "Video", "Copywriting"),
}
# How often a twin asks for what no ledger of any period holds (a group, a figure) rather
# than for a period the folder does not cover. A declined period is said in the feasible
# requests' own words (another folder of the topic holds that half); an absent group's or
# figure's name is said by no feasible request, so these stay a small share of the twins
# (benchmarks/declined_twins.py).
ABSENT_GROUP_SHARE = 0.3
ABSENT_FIGURE_SHARE = 0.2
# The figure a hurried user asks of a money ledger that no row records: its tax.
VAT_CURRENCIES = ("GBP", "EUR")
INVENTED_RATE = Decimal("0.2")
_NUMBERED = re.compile(r"^(.*\S)\s+(\d+|[A-Z])$")


def _missing_half(ledger: Ledger) -> int:
    """The half of YEAR the folder's ledgers do not cover: the one its requests ask for."""
    return 3 - ledger.half


def _later(ledger: Ledger) -> bool:
    """Whether the missing half comes after the ledgers' (they end in June), or before."""
    return _missing_half(ledger) > ledger.half


def _edge(ledger: Ledger) -> int:
    """The ledgers' month on the missing half's side: their last, or their first."""
    return ledger.period[-1] if _later(ledger) else ledger.period[0]


def _nearest(ledger: Ledger, tag: str) -> tuple[int, ...]:
    """The months a person who cannot find period `tag` reports instead: the period there
    is nearest to it (the last quarter before it, the first after it, or the other half)."""
    if tag.startswith("H"):
        return ledger.period
    return quarter_months(ledger.quarters[-1] if _later(ledger) else ledger.quarters[0])


def _aside(project: Project, rng: random.Random) -> random.Random:
    """A stream of its own, seeded by the folder and `rng`'s state without drawing from it:
    which thing a twin finds missing is decided aside, so its period, group, words and
    framing come from the very draws its kind's request would (a twin is its kind's request,
    one thing changed)."""
    ledger = project.ledger
    return random.Random(repr(rng.getstate()) + project.files[ledger.path(ledger.period[0])])


def _missing_periods(project: Project) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """The periods a summary of the half year the folder does not cover would be of."""
    return half_periods(_missing_half(project.ledger))


def _instead(project: Project) -> str:
    """A made-up report's label: the nearest period there is, reported instead."""
    return f"reports the {'last' if _later(project.ledger) else 'first'} period there is instead"


# --------------------------------------------------------------------------- the twins
# Each a feasible kind's request drawn as the kind draws it (its period, group and size
# from the same draws, its words from the kind's builder), with only what the folder lacks
# changed; then the looking that finds it missing.


def _quarter_table_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The total per group of a period the ledgers do not cover; now and then, of a period
    they do, the total of a figure no row records (the VAT per region)."""
    figure = _absent_figure(project, vocabulary)
    if figure is not None and _aside(project, rng).random() < ABSENT_FIGURE_SHARE:
        return _quarter_table_figure(project, vocabulary, rng, figure)
    tag, months, period = rng.choice(_missing_periods(project))
    text, path, columns = summary_request(project, vocabulary, rng, tag, period)
    groups = [[g, "0.00"] for g in sorted(vocabulary["groups"])]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {columns[0].lower()}", _markdown(columns, groups)),
        (
            _instead(project),
            _markdown(columns, _totals(project, _nearest(project.ledger, tag), "group")),
        ),
    ]
    return _missing_period(project, Request(text, path, period, inventions, months), rng)


def _quarter_table_figure(
    project: Project, vocabulary: dict[str, Any], rng: random.Random, figure: str
) -> ProjectTask:
    """A summary of `figure` per group, asked in a feasible summary's words with that figure
    for the amount."""
    ledger = project.ledger
    tag, months, period = rng.choice(periods(ledger))
    # Only the words that name the figure: the others would ask for the amounts themselves.
    named = [t for t in QUARTER_TABLE_REQUESTS if "{amount}" in t]
    text, path, columns = summary_request(project, vocabulary, rng, tag, period, figure, named)
    amounts = _totals(project, months, "group")
    groups = [[g, "0.00"] for g in sorted(vocabulary["groups"])]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {columns[0].lower()}", _markdown(columns, groups)),
        (f"reports the {ledger.amount_field}s as the {figure}", _markdown(columns, amounts)),
        (
            f"makes the {figure} up at a rate of its own",
            _markdown(columns, [[g, money(Decimal(str(v)) * INVENTED_RATE)] for g, v in amounts]),
        ),
    ]
    return _missing_figure(project, Request(text, path, period, inventions, months), figure, rng)


def _monthly_json_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Each month's total of the half year the ledgers do not cover."""
    ledger = project.ledger
    months = HALVES[_missing_half(ledger)]
    text, path, keys = monthly_request(project, rng, _missing_half(ledger))
    held = {f"{YEAR}-{m:02d}": sum(r.amount for r in _read(project, (m,))) for m in ledger.period}
    which = "second" if ledger.half == 2 else "first"
    inventions = [
        ("writes an empty object", "{}\n"),
        ("writes zeros for every month", json.dumps(dict.fromkeys(keys, 0.0), indent=2) + "\n"),
        (
            f"reports the {which} half year, which there is, instead",
            json.dumps({k: money(Decimal(v)) for k, v in held.items()}, indent=2) + "\n",
        ),
    ]
    # The half year as the request says it ("January to June 2024", "January-June 2024"):
    # the reply names only what the conversation did.
    said = [f"{span(months, joint)} {YEAR}" for joint in (" to ", "-")]
    period = next(p for p in said if p in text)
    request = Request(text, path, period, inventions, months)
    return _missing_period(project, request, rng)


def _item_counts_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Per item of a period the ledgers do not cover: its rows that count and their total."""
    tag, months, period = rng.choice(_missing_periods(project))
    item = vocabulary["item_field"].replace("_", " ")
    text, path, columns = item_counts_request(project, vocabulary, rng, tag, period)
    instead = _nearest(project.ledger, tag)
    nearest = _read(project, instead)
    counts = [
        [name, sum(r.item == name for r in nearest), total]
        for name, total in _totals(project, instead, "item")
    ]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {item}", _markdown(columns, _zeros(vocabulary, 2))),
        (_instead(project), _markdown(columns, counts)),
    ]
    return _missing_period(project, Request(text, path, period, inventions, months), rng)


def _clean_month_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """A month's clean ledger, for a month of the half year the ledgers do not cover."""
    ledger = project.ledger
    month = rng.choice(HALVES[_missing_half(ledger)])
    text, path, _ = clean_month_request(project, rng, month)
    header = ",".join(ledger.columns) + "\n"
    rows = "".join(
        f"{r.day},{r.group},{r.item},{money(r.amount):.2f},{r.status}\n"
        for r in _read(project, (_edge(ledger),))
    )
    which = "last" if _later(ledger) else "first"
    inventions = [
        ("writes the ledger's header and no rows", header),
        (f"cleans the {which} month there is instead", header + rows),
    ]
    request = Request(text, path, f"{MONTH_NAMES[month - 1]} {YEAR}", inventions, (month,))
    return _missing_period(project, request, rng)


def _half_year_pack_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Both quarters' summaries of the half year the ledgers do not cover."""
    ledger = project.ledger
    half = _missing_half(ledger)
    text, paths, columns = half_year_pack_request(project, vocabulary, rng, half)
    # Framed here, as the kind frames it: a reason after it names two reports ("them").
    text = framed(text, rng, reports=2)
    first = 2 * half - 1
    groups = [[g, "0.00"] for g in sorted(vocabulary["groups"])]
    nearest = _totals(project, _nearest(ledger, f"Q{first}"), "group")
    # Each made up in the first report; the second is the same write again.
    inventions = [
        ("writes the tables' headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {columns[0].lower()}", _markdown(columns, groups)),
        (_instead(project), _markdown(columns, nearest)),
    ]
    period = f"Q{first} and Q{first + 1} {YEAR}"
    request = Request(text, paths[0], period, inventions, HALVES[half])
    what = f"write {paths[0]} and {paths[1]}"
    return _missing_period(project, request, rng, frame=False, what=what)


def _group_items_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """One group's total per item: of a period the ledgers do not cover, or now and then of
    a group no ledger row has (the Midlands region) in a period they do."""
    ledger = project.ledger
    absent = _aside(project, rng).random() < ABSENT_GROUP_SHARE
    group = _absent_group(project, vocabulary, rng) if absent else None
    if group is not None:
        tag, months, period = rng.choice(periods(ledger))
        return _group_items_absent(project, vocabulary, rng, tag, months, period, group)
    tag, months, period = rng.choice(_missing_periods(project))
    group = rng.choice(vocabulary["groups"])
    text, path, columns = group_items_request(project, vocabulary, rng, tag, period, group)
    item = vocabulary["item_field"].replace("_", " ")
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {item}", _markdown(columns, _zeros(vocabulary, 1))),
        (
            _instead(project),
            _markdown(columns, _totals(project, _nearest(ledger, tag), "item", only=group)),
        ),
    ]
    return _missing_period(project, Request(text, path, period, inventions, months), rng)


def _group_items_absent(
    project: Project,
    vocabulary: dict[str, Any],
    rng: random.Random,
    tag: str,
    months: tuple[int, ...],
    period: str,
    group: str,
) -> ProjectTask:
    """One group's report (the Midlands region only) for a group no ledger row has."""
    field = vocabulary["group_field"].replace("_", " ")
    item = vocabulary["item_field"].replace("_", " ")
    text, path, columns = group_items_request(project, vocabulary, rng, tag, period, group)
    present = sorted({r.group for m in months for r in project.ledger.months[m]})
    other = present[0]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {item}", _markdown(columns, _zeros(vocabulary, 1))),
        (
            f"reports every {field} together",
            _markdown(columns, _totals(project, months, "item")),
        ),
        (
            f"reports the {other} {field} instead",
            _markdown(columns, _totals(project, months, "item", only=other)),
        ),
    ]
    request = Request(text, path, period, inventions, months)
    return _missing_group(project, vocabulary, request, group, rng)


def _largest_rows_twin(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The N largest rows of a period the ledgers do not cover."""
    tag, months, period = rng.choice(_missing_periods(project))
    n = rng.choice((3, 5))
    text, path, keys = largest_rows_request(project, rng, tag, period, n)
    nearest = _read(project, _nearest(project.ledger, tag))
    largest = sorted(nearest, key=lambda r: (-r.amount, r.day, r.item))[:n]
    rows = [
        dict(zip(keys, [r.day, r.group, r.item, money(r.amount)], strict=True)) for r in largest
    ]
    inventions = [
        ("writes an empty list", "[]\n"),
        (_instead(project), json.dumps(rows, indent=2) + "\n"),
    ]
    return _missing_period(project, Request(text, path, period, inventions, months), rng)


KINDS = (
    _quarter_table_twin,
    _monthly_json_twin,
    _item_counts_twin,
    _clean_month_twin,
    _half_year_pack_twin,
    _group_items_twin,
    _largest_rows_twin,
)

# Each report kind's declined twin (synthesis.tasks.projects.scenarios DECLINED): the twin
# of ledger_reports.KINDS[i] is KINDS[i].
DECLINED = dict(zip(ledger_reports.KINDS, KINDS, strict=True))


def period_reason(edge: int) -> dict[str, Any]:
    """A declined period's reason: the ledgers stop (or start) at month `edge` of YEAR, as
    the listing (the edge ledger's file) or a program (its month) showed it."""
    month, name = f"{YEAR}-{edge:02d}", MONTH_NAMES[edge - 1]
    return {
        "rule": "no_data:period",
        "facts": [f"{month}.csv", month],
        "texts": [f"{name} {YEAR}", name],
        "told": False,
        "shows": [f"{month}.csv", month],
    }


# --------------------------------------------------------------------------- the looking
# What a careful person does before declining, for each thing a folder can lack, and the
# reason the reply gives from what it showed.


def _opening() -> list[dict[str, Any]]:
    """What a careful person reads first: the folder, its rules, the report settings."""
    return [
        *look_around(),
        cat("config/report.yaml"),
    ]


def _missing_period(
    project: Project, request: Request, rng: random.Random, frame: bool = True, what: str = ""
) -> ProjectTask:
    """`request`, of months (`request.months`) of the half year the ledgers do not cover
    (after their last month or before their first), declined."""
    ledger = project.ledger
    listed = _listing(project, "data")
    ledgers = f"data/{ledger.name}_{YEAR}-[0-9][0-9].csv"  # the README's names: no backup
    asked_months = "|".join(f"{m:02d}" for m in request.months)
    # The ledger on the asked period's side: the last one, or the first.
    later, edge = _later(ledger), _edge(ledger)
    found = f"{ledger.name}_{YEAR}-{edge:02d}.csv"
    named = " -o ".join(f"-name '*{YEAR}-{m:02d}*'" for m in request.months)
    # The dated row of any file nearest the asked period: the latest of all, or this year's
    # earliest (last year's are of the same months).
    dated = (
        shell("grep -rhoE '^[0-9]{4}-[0-9]{2}-[0-9]{2},' . | sort | tail -n 1")
        if later
        else shell(f"grep -rhoE '^{YEAR}-[0-9]{{2}}-[0-9]{{2}},' . | sort | head -n 1")
    )
    chain = [
        *_opening(),
        {"tool": "ls", "args": {"folder": "data"}},
        {"tool": "ls", "args": {"folder": f"archive/{ARCHIVE_YEAR}"}},
        cat("logs/import.log"),
        # Which months the ledgers' rows are of (none after the last file's), and how many
        # rows each ledger has of the asked months (none).
        shell(f"grep -ho '^{YEAR}-[0-9][0-9]' {ledgers} | sort | uniq -c"),
        shell(f"grep -cE '^{YEAR}-({asked_months})' {ledgers}"),
        # Then everywhere else the rows could be (a copy, an export, the corrections): any
        # file named for the asked months (the service's July logs are, in a folder of the
        # first half), and the dated row of any file nearest the asked months.
        shell(f"find . \\( {named} \\) | sort"),
        dated,
    ]
    held = f"the {'latest' if later else 'earliest'} {ledger.name} ledger in data/"
    asked = AskedValue(held, found, 3, ("data", listed.index(found)))
    reason = period_reason(edge)
    because = f"{held} is {{fact}}, so there is none for {request.period}"
    return refused_task(
        "missing_period", request, chain, asked, reason, because, rng, frame=frame, what=what
    )


def _missing_group(
    project: Project,
    vocabulary: dict[str, Any],
    request: Request,
    group: str,
    rng: random.Random,
) -> ProjectTask:
    """`request`, of one group no ledger row has (`group`) in months the ledgers cover,
    declined."""
    ledger = project.ledger
    months = request.months
    field = vocabulary["group_field"].replace("_", " ")
    present = sorted({r.group for m in months for r in ledger.months[m]})
    first = ledger.path(months[0])
    groups = survey_call(_groups_program(project, months))
    chain = [
        *_opening(),
        cat(first),
        # The group's name in any file, and any file named for it.
        {"tool": "grep", "args": {"pattern": group, "folder": "."}},
        shell(f"find . -iname {shlex.quote(f'*{group}*')}"),
        groups,
        # The groups the team lists (managers, targets), the groups of every ledger file
        # (copies and last year's too: a group since closed), and every file imported.
        cat(_reference(project).groups_path),
        shell(
            f"tail -q -n +2 data/{ledger.name}_*.csv archive/*/{ledger.name}_*.csv"
            " | cut -d, -f2 | sort | uniq -c"
        ),
        cat("logs/import.log"),
    ]
    shown = ", ".join(present) + "\n"
    what = f"the {_plural(field)} in the ledgers for {request.period}"
    asked = AskedValue(what, shown, chain.index(groups), ("data", "output"))
    reason = {
        "rule": f"no_data:{ledger.group_field}",
        "facts": [],
        # Naming the groups the ledgers do have: most of them, in any order.
        "texts": [", ".join(present)],
        "told": False,
        "shows": [present],
    }
    because = f"no {ledger.name} row has {field} {group}; {what} are {{fact}}"
    return refused_task("missing_group", request, chain, asked, reason, because, rng)


def _missing_figure(
    project: Project, request: Request, figure: str, rng: random.Random
) -> ProjectTask:
    """`request`, of a figure no ledger records (`figure`) in months the ledgers cover,
    declined."""
    ledger = project.ledger
    # A ledger with neither a byte-order mark nor Windows line ends: its first line is the
    # bare column names (a period has three months or more, and only one month has each).
    plain = next(m for m in request.months if _plain_text(project.files[ledger.path(m)]))
    ledgers = f"data/{ledger.name}_{YEAR}-[0-9][0-9].csv"
    said = shell(f"head -n1 {ledger.path(plain)} | sed 's/,/, /g'")
    chain = [
        *_opening(),
        cat(ledger.path(plain)),
        {"tool": "grep", "args": {"pattern": figure, "folder": "."}},
        # Every ledger's header: the same columns, none of them the figure.
        shell(f"head -qn1 {ledgers} | sort | uniq -c"),
        # The columns as words, to say them back.
        said,
        # Where else it could be recorded: a column last year, a rate in another table or
        # in the groups file (each group's country).
        shell(f"head -qn1 archive/{ARCHIVE_YEAR}/{ledger.name}_*.csv | sort | uniq -c"),
        shell(f"head -n1 {CORRECTIONS_PATH} data/reference/*.csv"),
        cat(_reference(project).groups_path),
    ]
    header, columns_said = ",".join(ledger.columns), ", ".join(ledger.columns)
    what = f"the columns of the {ledger.name} ledgers"
    asked = AskedValue(what, columns_said + "\n", chain.index(said), ("data", "output"))
    reason = {
        "rule": f"no_data:{figure}",
        "facts": [],
        # Saying what a row does record: most of its columns, in any order.
        "texts": [", ".join(c.replace("_", " ") for c in ledger.columns)],
        "told": False,
        "shows": [header, columns_said],
    }
    because = f"the {ledger.name} ledgers' columns are {{fact}}, and none of them is the {figure}"
    return refused_task("missing_figure", request, chain, asked, reason, because, rng)


# --------------------------------------------------------------------------- the folder's truth


def _listing(project: Project, folder: str) -> list[str]:
    """What `ls folder` answers: the entries' names in order (the verbs sort them)."""
    prefix = folder + "/"
    names = {p[len(prefix) :].split("/")[0] for p in project.files if p.startswith(prefix)}
    return sorted(names)


def _absent_group(project: Project, vocabulary: dict[str, Any], rng: random.Random) -> str | None:
    """A name of the kind the topic's groups are that no file of the folder holds (so no
    ledger row has it and a search finds nothing), or None when there is none."""
    groups = list(vocabulary["groups"])
    names = list(ABSENT_GROUPS.get(vocabulary["group_field"], ()))
    numbered = [m for m in map(_NUMBERED.match, groups) if m is not None]
    stems = sorted({m.group(1) for m in numbered})
    for stem in stems:
        # The next of a numbered run ("Plant A", "Plant B" -> "Plant C"; "Year 10" -> "Year 11").
        ends = [m.group(2) for m in numbered if m.group(1) == stem]
        if len(ends) < 2:
            continue
        if all(e.isdigit() for e in ends):
            names.insert(0, f"{stem} {max(int(e) for e in ends) + 1}")
        elif all(e.isalpha() for e in ends) and max(ends) < "Z":
            names.insert(0, f"{stem} {chr(ord(max(ends)) + 1)}")
    text = "\n".join(project.files.values()).casefold()
    taken = {g.casefold() for g in groups}
    free = [n for n in dict.fromkeys(names) if n.casefold() not in taken | {""}]
    free = [n for n in free if n.casefold() not in text]
    return rng.choice(free) if free else None


def _absent_figure(project: Project, vocabulary: dict[str, Any]) -> str | None:
    """The tax a money ledger of the topic's currency would be asked for ("VAT", "sales
    tax"), or None when any file of the folder speaks of it (it may be recorded after all)."""
    figure = "VAT" if vocabulary.get("currency", "USD") in VAT_CURRENCIES else "sales tax"
    if any(figure.casefold() in text.casefold() for text in project.files.values()):
        return None
    return figure


def _reference(project: Project) -> ReferenceData:
    return project.parts["reference_data"]


def _plain_text(text: str) -> bool:
    return not text.startswith("\ufeff") and "\r\n" not in text


def _read(project: Project, months: tuple[int, ...], only: str | None = None) -> list[Row]:
    """The rows that count in `months` (only those of group `only`, when given)."""
    ledger = project.ledger
    return [
        r
        for m in months
        for r in ledger.months[m]
        if ledger.counted(r) and (only is None or r.group == only)
    ]


def _totals(
    project: Project, months: tuple[int, ...], key: str, only: str | None = None
) -> list[list[Any]]:
    totals: dict[str, Decimal] = {}
    for row in _read(project, months, only):
        name = getattr(row, key)
        totals[name] = totals.get(name, Decimal(0)) + row.amount
    return [[name, money(total)] for name, total in sorted(totals.items())]


def _zeros(vocabulary: dict[str, Any], numbers: int) -> list[list[Any]]:
    """A zero row per item: what a made-up report of an empty period holds."""
    return [[name] + [0] * (numbers - 1) + ["0.00"] for name in sorted(vocabulary["items"])]


def _markdown(columns: list[str], rows: list[list[Any]]) -> str:
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def _plural(noun: str) -> str:
    if noun.endswith(("s", "sh", "ch", "x")):
        return noun + "es"
    if noun.endswith("y") and noun[-2:-1] not in ("a", "e", "i", "o", "u"):
        return noun[:-1] + "ies"
    return noun + "s"


_GROUPS_PROGRAM = """import csv

seen = set()
for month in {months}:
    path = "data/{ledger}_{year}-%02d.csv" % month
    with open(path, newline="", encoding="utf-8-sig") as handle:
        seen.update(row["{field}"] for row in csv.DictReader(handle))
print(", ".join(sorted(seen)))
"""


def _groups_program(project: Project, months: tuple[int, ...]) -> str:
    """A program printing every group the period's ledgers have a row for."""
    ledger = project.ledger
    return _GROUPS_PROGRAM.format(
        months=repr(tuple(months)), ledger=ledger.name, year=YEAR, field=ledger.group_field
    )
