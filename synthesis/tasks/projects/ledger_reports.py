"""Work over a project folder: read the README, pick the ledgers, filter, aggregate, write.

A task asks for a report computed from a project's data (synthesis.environments.projects.ledgers):
the total per group for a quarter as a Markdown table, or the total per month of the half
year as JSON. What a right report holds is computed here from the rows the folder was made
from; the checks read the report by its format (`file_table`, `file_json` in the shipped
reward module), so a right report written in the agent's own way (other row order, `$1,234.50`)
earns, and one with the right headings and wrong numbers does not.

The gold solution is a program run in the sandbox with the environment's `run` verb: it
reads only the standard library and the files, as an agent's program would. Before it, the
reads a careful person makes: the rules, the settings, the corrections, the rows the import
logged per month against the lines of the period's files (where a copy of a month shows up,
to be looked at and left alone), each ledger and the lines its export repeated; after it, the
report, and for a clean copy of a month its rows counted per status. Beside it, the
mistakes people make with such folders, each as the same program with one thing wrong: the
stale backup read as a ledger, void rows kept, the corrections ignored, amounts with a
thousands separator dropped, the wrong quarter, last year's files, the quarter's last month
forgotten. A mistake is kept only when its report differs from the right one; each must fail
the checks (the self-test's mutants, run in the sandbox like the gold program).
"""

from __future__ import annotations

import dataclasses
import json
import random
import re
from dataclasses import dataclass
from decimal import Decimal
from typing import Any, NamedTuple

from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.ledgers import (
    CORRECTIONS_PATH,
    HALVES,
    MONTH_NAMES,
    YEAR,
    Ledger,
    Row,
    money,
    quarter_months,
)
from synthesis.tasks.projects.work import (
    Mistake,
    ProjectTask,
    cat,
    framed,
    look_around,
    program_call,
    shell,
)

# What the import wrote per month: the rows it took and how many lacked an amount.
IMPORT_LOG = "logs/import.log"
# The lines a file holds twice: an export's repeats, which the README counts once.
REPEATED_LINES = "awk 'seen[FILENAME, $0]++ { print FILENAME \": \" $0 }'"


@dataclass(frozen=True)
class _Reading:
    """How a program reads the folder: the right way, or with one mistake."""

    months: tuple[int, ...]
    year: int = YEAR
    with_backup: bool = False
    keep_void: bool = False
    drop_separated: bool = False
    keep_repeats: bool = False
    ignore_corrections: bool = False
    # Only the rows of this group (a region, a branch), when the request names one.
    only: str | None = None
    # A half year read per quarter: each quarter's months (a period mistake shifts them).
    quarters: tuple[tuple[int, ...], ...] | None = None


# --------------------------------------------------------------------------- the kinds


def half_periods(half: int) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """The periods a summary of half year `half` covers: (tag in file names, months, how a
    request says it). The half year is drawn as often as both quarters: reading six ledgers
    is the longer work."""
    months = HALVES[half]
    first, second = 2 * half - 1, 2 * half
    return (
        (f"Q{first}", quarter_months(first), f"Q{first} {YEAR}"),
        (f"Q{second}", quarter_months(second), f"Q{second} {YEAR}"),
        (f"H{half}", months, f"the {('first', 'second')[half - 1]} half of {YEAR}"),
        (f"H{half}", months, f"{span(months)} {YEAR}"),
    )


def periods(ledger: Ledger) -> tuple[tuple[str, tuple[int, ...], str], ...]:
    """The periods a summary of the folder's ledgers covers (`half_periods`)."""
    return half_periods(ledger.half)


def span(months: tuple[int, ...], joint: str = " to ") -> str:
    """A run of months in words: "January to June"."""
    return f"{MONTH_NAMES[months[0] - 1]}{joint}{MONTH_NAMES[months[-1] - 1]}"


# The words of each kind's request: module constants, so a request the folder cannot
# support (synthesis.tasks.projects.missing_data) is asked in the very words of a feasible one.
QUARTER_TABLE_REQUESTS = (
    "Could you put together the {ledger} summary for {period}? I need it in {path}: one table"
    " with the columns {g} and Total, the total {amount} per {group} to the cent. The README"
    " in the folder says which rows count.",
    "Please write up {period} for the {ledger} ledgers as {path} - a table of {g} and Total,"
    " one row per {group} that had anything counted, totals to the cent. Go by the README's"
    " rules on which rows count.",
    "I'm after the {ledger} totals for {period}, by {group}. Save them in {path} as a table"
    " with the columns {g} and Total (to the cent), and only count the rows the README says"
    " count.",
    "{period}: total {amount} per {group}, please. Table with columns {g} and Total, to the"
    " cent, in {path}. Rules for what counts are in the README.",
    "Would you mind adding up the {ledger} for {period}? What I need is the total {amount} for"
    " each {group}, to the cent, as a table headed {g} and Total in {path}. Mind the README -"
    " not every row counts.",
    "We still have no {ledger} figures for {period}. Could you total them by {group} into"
    " {path}? One table, columns {g} and Total, amounts to the cent, and leave out whatever"
    " the README says does not count.",
)
ITEM_COUNTS_REQUESTS = (
    "Could you break {period} down by {item} for me? In {path}, a table with the columns {c0},"
    " Rows and Total: for each {item}, how many {ledger} rows counted and their total {amount}"
    " to the cent. The README says which rows count.",
    "I need a per-{item} view of the {ledger} for {period}: write {path} with one table ({c0},"
    " Rows, Total), the number of counted rows and the total to the cent for each {item}."
    " Count only what the README says counts.",
    "Which {item} did best in {period}? Put a table in {path} with the columns {c0}, Rows and"
    " Total - the number of {ledger} rows that count and their total to the cent, for every"
    " {item}. The README says what counts.",
    "Can you count the {ledger} by {item} for {period}? I'd like {path} to hold a table with"
    " {c0}, Rows and Total: how many rows counted for each {item} and what they add up to, to"
    " the cent. Use the README's rules.",
    "For {period}, per {item}: number of counted {ledger} rows and their total {amount} (to"
    " the cent), as a table {c0} | Rows | Total in {path}. Rows the README excludes stay out.",
)
CLEAN_MONTH_REQUESTS = (
    "Please make a clean copy of the {month} {y} {ledger} ledger as {path}: the same columns,"
    " only the rows the README says count, amounts as plain numbers (and corrected where the"
    " corrections file says so).",
    "Could you write {path} with just the {month} {y} {ledger} rows that count (the README has"
    " the rules)? Keep the ledger's columns and write amounts without thousands separators,"
    " with any corrections applied.",
    "The {month} {y} {ledger} file is a mess. I need a tidy version in {path}: same columns,"
    " only rows that count under the README, and plain numbers for the amounts (no thousands"
    " separators, corrections applied).",
    "Can you clean up the {ledger} of {month} {y} into {path}? Keep the columns as they are, drop"
    " every row the README says does not count, apply the corrections and write the amounts as"
    " plain numbers.",
    "Our import tool chokes on the {month} {y} {ledger} ledger. Please save a cleaned version"
    " as {path}: same header, only the rows that count per the README, amounts corrected where"
    " the corrections say so and without thousands separators.",
    "I'd like a version of the {ledger} ledger for {month} {y} with only the rows that count,"
    " in {path}. Same columns, corrected amounts, plain numbers (1234.50, not 1,234.50). The"
    " README has the rules.",
)
GROUP_ITEMS_REQUESTS = (
    "Could you pull the {ledger} for {field} {group} only, {period}? I need the total {amount}"
    " per {item} to the cent, as a table with the columns {c0} and Total in {path}. The README"
    " says which rows count.",
    "Just {group} this time: a table in {path} of {c0} and Total, the {ledger} {amount} per"
    " {item} for {period}, to the cent. Leave out the other {field}s, and whatever the README"
    " says does not count.",
    "How did {group} do in {period}? Break its {ledger} down by {item} for me - total {amount}"
    " per {item}, to the cent - and put the table (columns {c0} and Total) in {path}. Only"
    " rows that count under the README, and nothing from other {field}s.",
    "The {group} lead wants their own numbers for {period}. Can you write {path} with a table"
    " headed {c0} and Total: what each {item} brought in for {field} {group} alone, to the"
    " cent? The README explains which {ledger} rows to leave out.",
    "For {field} {group} and {period} only: one table in {path}, {c0} and Total, the {amount}"
    " summed per {item} to the cent. Please stick to the README's rules on what counts.",
    "I need {group}'s {ledger} per {item} for {period}. Table with columns {c0} and Total (to"
    " the cent) saved as {path}; skip the other {field}s and anything the README excludes.",
)
LARGEST_ROWS_REQUESTS = (
    "Which were the {n} largest {ledger} rows of {period}? Save them in {path} as a JSON list,"
    " largest first, each an object of the row's {keys}, keyed by the ledger's own column"
    " names (the amount a number to the cent). Only rows that count under the README.",
    "I want the top {n} {ledger} entries by {amount} for {period} in {path}: a JSON list from"
    " the largest down, every entry the row's {keys} under the ledger's column names. The"
    " README says which rows count.",
    "Could you find the {n} biggest {ledger} rows in {period} and write them to {path}? A JSON"
    " list, biggest first; for each, an object with the row's {keys} (use the ledger's column"
    " names as keys, the amount as a number to the cent). Go by the README on which rows"
    " count.",
    "Top {n} by {amount}, {period}, please - as a JSON list in {path}, largest first. Each"
    " entry: the row's {keys}, keyed like the ledger's header, amounts as numbers to the cent."
    " Rows the README excludes don't count.",
    "We're reviewing the largest {ledger} of {period}. Please list the {n} largest rows that"
    " count (see the README) in {path}: JSON, a list from the largest down, each an object of"
    " {keys} named as in the ledger's header, amounts to the cent.",
)
MONTHLY_JSON_REQUESTS = (
    "Can you work out the total {amount} of the {ledger} ledgers for each month from"
    " {span} {y} and save it as JSON in {path}? An object keyed by month"
    ' ("{first}" ...) with the totals as numbers, to the cent; the README says which'
    " rows count.",
    "For the half-year review I need {path}: a JSON object from month (YYYY-MM,"
    " {span} {y}) to that month's total {ledger} {amount}, rounded to the cent."
    " Follow the README on which rows count.",
    "Monthly {ledger} totals for {dashed} {y} as JSON in {path}, please: keys"
    ' "{first}" to "{last}", values the totals to the cent. Count per the README.',
    "I'd like to chart the {ledger} month by month. Could you put each month's total"
    " {amount} from {span} {y} into {path}? A JSON object with the months as"
    ' keys ("{first}" and so on) and numbers to the cent; the README explains which'
    " rows to count.",
)
HALF_YEAR_PACK_REQUESTS = (
    "For the half-year pack I need both quarter summaries of the {ledger} ledgers:"
    " {p1} and {p2}, each one table with the columns {g} and Total, the total {amount}"
    " per {group} to the cent. The README says which rows count.",
    "Could you do the Q{q1} and Q{q2} {y} {ledger} summaries? Put them in {p1} and"
    " {p2}: a table of {g} and Total in each, totals to the cent, counting only the"
    " rows the README says count.",
    "Two reports, please: the {ledger} totals per {group} for Q{q1} {y} in {p1} and"
    " for Q{q2} {y} in {p2}. Each a table with columns {g} and Total, to the cent; the"
    " README has the rules on what counts.",
)


class Request(NamedTuple):
    """A report's request: its words, the path it names and the report's columns."""

    text: str
    path: str
    columns: list[str]


# One builder per kind of report, each drawing only its words: a feasible kind and a request
# the folder cannot support (synthesis.tasks.projects.missing_data) ask in the same words.


def summary_request(
    project: Project,
    vocabulary: dict[str, Any],
    rng: random.Random,
    tag: str,
    period: str,
    figure: str | None = None,
    templates: tuple[str, ...] | list[str] = QUARTER_TABLE_REQUESTS,
) -> Request:
    """The total per group of `period` (of `figure`: the amount unless named)."""
    ledger = project.ledger
    path = f"reports/{YEAR}-{tag}_{ledger.name}_summary.md"
    group_title = vocabulary["group_field"].replace("_", " ").capitalize()
    text = rng.choice(templates).format(
        period=period,
        ledger=ledger.name,
        path=path,
        g=group_title,
        amount=figure or ledger.amount_field,
        group=vocabulary["group_field"].replace("_", " "),
    )
    return Request(text, path, [group_title, "Total"])


def item_counts_request(
    project: Project, vocabulary: dict[str, Any], rng: random.Random, tag: str, period: str
) -> Request:
    """Per item of `period`: the rows that count and their total."""
    ledger = project.ledger
    item = vocabulary["item_field"].replace("_", " ")
    path = f"reports/{YEAR}-{tag}_{ledger.name}_by_{vocabulary['item_field']}.md"
    columns = [item.capitalize(), "Rows", "Total"]
    text = rng.choice(ITEM_COUNTS_REQUESTS).format(
        period=period,
        item=item,
        path=path,
        c0=columns[0],
        ledger=ledger.name,
        amount=ledger.amount_field,
    )
    return Request(text, path, columns)


def clean_month_request(project: Project, rng: random.Random, month: int) -> Request:
    """One month's ledger with only the rows that count."""
    ledger = project.ledger
    path = f"reports/{ledger.name}_{YEAR}-{month:02d}_clean.csv"
    text = rng.choice(CLEAN_MONTH_REQUESTS).format(
        month=MONTH_NAMES[month - 1], y=YEAR, ledger=ledger.name, path=path
    )
    return Request(text, path, ledger.columns)


def group_items_request(
    project: Project,
    vocabulary: dict[str, Any],
    rng: random.Random,
    tag: str,
    period: str,
    group: str,
) -> Request:
    """One group's total per item of `period`."""
    ledger = project.ledger
    field = vocabulary["group_field"].replace("_", " ")
    item = vocabulary["item_field"].replace("_", " ")
    slug = re.sub(r"[^a-z0-9]+", "-", group.lower()).strip("-")
    path = f"reports/{YEAR}-{tag}_{ledger.name}_{slug}.md"
    columns = [item.capitalize(), "Total"]
    text = rng.choice(GROUP_ITEMS_REQUESTS).format(
        ledger=ledger.name,
        field=field,
        group=group,
        period=period,
        amount=ledger.amount_field,
        item=item,
        c0=columns[0],
        path=path,
    )
    return Request(text, path, columns)


def largest_rows_request(
    project: Project, rng: random.Random, tag: str, period: str, n: int
) -> Request:
    """The `n` largest rows of `period`; `columns` are each entry's keys."""
    ledger = project.ledger
    path = f"reports/{YEAR}-{tag}_{ledger.name}_top{n}.json"
    keys = ["date", ledger.group_field, ledger.item_field, ledger.amount_field]
    text = rng.choice(LARGEST_ROWS_REQUESTS).format(
        n=n,
        ledger=ledger.name,
        period=period,
        path=path,
        amount=ledger.amount_field,
        # Said in words: the agent finds the names in the ledger's header.
        keys=", ".join(k.replace("_", " ") for k in keys[:-1])
        + " and "
        + keys[-1].replace("_", " "),
    )
    return Request(text, path, keys)


def monthly_request(project: Project, rng: random.Random, half: int) -> Request:
    """Each month's total of half year `half`, as JSON; `columns` are the object's keys."""
    ledger = project.ledger
    months = HALVES[half]
    path = f"reports/{ledger.name}_{YEAR}_H{half}_by_month.json"
    keys = [f"{YEAR}-{m:02d}" for m in months]
    text = rng.choice(MONTHLY_JSON_REQUESTS).format(
        amount=ledger.amount_field,
        ledger=ledger.name,
        y=YEAR,
        path=path,
        span=span(months),
        dashed=span(months, "-"),
        first=keys[0],
        last=keys[-1],
    )
    return Request(text, path, keys)


def half_year_pack_request(
    project: Project, vocabulary: dict[str, Any], rng: random.Random, half: int
) -> tuple[str, list[str], list[str]]:
    """Both quarters' summaries of half year `half`: the words, the two paths, the columns."""
    ledger = project.ledger
    quarters = (2 * half - 1, 2 * half)
    group_title = vocabulary["group_field"].replace("_", " ").capitalize()
    paths = [f"reports/{YEAR}-Q{q}_{ledger.name}_summary.md" for q in quarters]
    text = rng.choice(HALF_YEAR_PACK_REQUESTS).format(
        ledger=ledger.name,
        p1=paths[0],
        p2=paths[1],
        g=group_title,
        amount=ledger.amount_field,
        group=vocabulary["group_field"].replace("_", " "),
        y=YEAR,
        q1=quarters[0],
        q2=quarters[1],
    )
    return text, paths, [group_title, "Total"]


def _quarter_table(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    tag, months, period = rng.choice(periods(project.ledger))
    right = _Reading(months)
    rows = _totals(project, right)
    text, path, columns = summary_request(project, vocabulary, rng, tag, period)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _totals_program(project, reading, path, columns, project.ledger.group_field)
        return _work(project, right.months, program, path)

    mistakes = _mistakes(project, right, lambda r: _totals(project, r), rows, chain)
    return ProjectTask("quarter_table", framed(text, rng), chain(right), [output], mistakes)


def _monthly_json(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    ledger = project.ledger
    right = _Reading(ledger.period)
    value = _month_totals(project, right)
    text, path, _ = monthly_request(project, rng, ledger.half)
    output = {"type": "file_json", "path": path, "value": value}

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        return _work(project, right.months, _json_program(project, reading, path), path)

    mistakes = _mistakes(project, right, lambda r: _month_totals(project, r), value, chain)
    return ProjectTask("monthly_json", framed(text, rng), chain(right), [output], mistakes)


def _item_counts(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Per item of a period: how many rows counted and their total, a Markdown table."""
    tag, months, period = rng.choice(periods(project.ledger))
    right = _Reading(months)
    rows = _item_rows(project, right)
    text, path, columns = item_counts_request(project, vocabulary, rng, tag, period)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _item_program(project, reading, path, columns)
        return _work(project, right.months, program, path)

    mistakes = _mistakes(project, right, lambda r: _item_rows(project, r), rows, chain)
    return ProjectTask("item_counts", framed(text, rng), chain(right), [output], mistakes)


def _clean_month(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """One month's ledger cleaned: only the rows that count, in a CSV of its own."""
    month = rng.choice(project.ledger.period)
    right = _Reading((month,))
    rows = _clean_rows(project, right)
    text, path, columns = clean_month_request(project, rng, month)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    # The rows the copy kept, per status: no status the README excludes is among them.
    statuses = shell(f"awk -F, 'NR > 1 {{ print $NF }}' {path} | sort | uniq -c")

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _clean_program(project, reading, path)
        return _work(project, right.months, program, path, check=statuses)

    mistakes = _mistakes(project, right, lambda r: _clean_rows(project, r), rows, chain)
    return ProjectTask("clean_month", framed(text, rng), chain(right), [output], mistakes)


def _half_year_pack(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Both quarters' summaries in one request: two reports from the six ledgers."""
    ledger = project.ledger
    right = _Reading(ledger.period)

    def tables(reading: _Reading) -> list[list[list[Any]]]:
        # A reading of the half year, split into its quarters (a mistake's period shifts
        # or shortens each quarter alike).
        return [_totals(project, _quarter_of(project, reading, i)) for i in (0, 1)]

    answer = tables(right)
    text, paths, columns = half_year_pack_request(project, vocabulary, rng, ledger.half)
    outputs = [
        {"type": "file_table", "path": path, "columns": columns, "rows": rows}
        for path, rows in zip(paths, answer, strict=True)
    ]

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        programs = [
            _totals_program(
                project, _quarter_of(project, reading, i), path, columns, ledger.group_field
            )
            for i, path in enumerate(paths)
        ]
        # One program writes both: the second's reader is the first's, with its months.
        return _work(project, right.months, "\n".join(programs), *paths)

    mistakes = _mistakes(project, right, tables, answer, chain, quarterly=True)
    text = framed(text, rng, reports=2)
    return ProjectTask("half_year_pack", text, chain(right), outputs, mistakes)


def _quarter_of(project: Project, reading: _Reading, index: int) -> _Reading:
    """`reading` narrowed to the months it reads for the half year's quarter `index` (0, 1)."""
    quarters = reading.quarters or tuple(quarter_months(q) for q in project.ledger.quarters)
    return dataclasses.replace(reading, months=quarters[index], quarters=None)


def _group_items(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """One group's share of a period (the North region only): its total per item."""
    tag, months, period = rng.choice(periods(project.ledger))
    group = rng.choice(vocabulary["groups"])
    right = _Reading(months, only=group)
    rows = _totals(project, right, "item")
    text, path, columns = group_items_request(project, vocabulary, rng, tag, period, group)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        program = _totals_program(project, reading, path, columns, project.ledger.item_field)
        return _work(project, right.months, program, path)

    mistakes = _mistakes(project, right, lambda r: _totals(project, r, "item"), rows, chain)
    return ProjectTask("group_items", framed(text, rng), chain(right), [output], mistakes)


def _largest_rows(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The N largest rows that count in a period, largest first, as a JSON list."""
    tag, months, period = rng.choice(periods(project.ledger))
    n = rng.choice((3, 5))
    right = _Reading(months)
    value = _largest(project, right, n)
    text, path, _ = largest_rows_request(project, rng, tag, period, n)
    output = {"type": "file_json", "path": path, "value": value}

    def chain(reading: _Reading) -> list[dict[str, Any]]:
        return _work(project, right.months, _largest_program(project, reading, path, n), path)

    mistakes = _mistakes(project, right, lambda r: _largest(project, r, n), value, chain)
    return ProjectTask("largest_rows", framed(text, rng), chain(right), [output], mistakes)


KINDS = (
    _quarter_table,
    _monthly_json,
    _item_counts,
    _clean_month,
    _half_year_pack,
    _group_items,
    _largest_rows,
)


# --------------------------------------------------------------------------- right answers


def _read_rows(project: Project, reading: _Reading) -> list[tuple[int, Row]]:
    ledger = project.ledger
    source = ledger.months if reading.year == YEAR else ledger.archive
    rows = [(m, r) for m in reading.months for r in source[m]]
    if reading.keep_repeats and reading.year == YEAR:
        rows += [(m, r) for m in reading.months for r in ledger.repeats.get(m, [])]
    if reading.with_backup:
        for path, stale in sorted(ledger.backups.items()):
            month = _backup_month(path)
            if month in reading.months:
                rows += [(month, r) for r in stale]
    out = []
    for month, row in rows:
        if row.amount is None:
            continue
        if row.status in ledger.void_statuses and not reading.keep_void:
            continue
        if reading.drop_separated and row.amount >= Decimal("1000"):
            continue
        if reading.only is not None and row.group != reading.only:
            continue
        out.append((month, row if reading.ignore_corrections else ledger.corrected(row)))
    return out


def _backup_month(path: str) -> int:
    """The month a backup copies, from its name (`data/sales_2024-03 (copy).csv`: 3)."""
    return int(path.split(f"{YEAR}-")[1][:2])


def _totals(project: Project, reading: _Reading, key: str = "group") -> list[list[Any]]:
    """[name, total] per value of the row's `key` ("group" or "item"), sorted by name."""
    totals: dict[str, Decimal] = {}
    for _, row in _read_rows(project, reading):
        name = getattr(row, key)
        totals[name] = totals.get(name, Decimal(0)) + row.amount
    return [[name, money(total)] for name, total in sorted(totals.items())]


def _item_rows(project: Project, reading: _Reading) -> list[list[Any]]:
    counts: dict[str, int] = {}
    totals: dict[str, Decimal] = {}
    for _, row in _read_rows(project, reading):
        counts[row.item] = counts.get(row.item, 0) + 1
        totals[row.item] = totals.get(row.item, Decimal(0)) + row.amount
    return [[item, counts[item], money(totals[item])] for item in sorted(totals)]


def _largest(project: Project, reading: _Reading, n: int) -> list[dict[str, Any]]:
    ledger = project.ledger
    rows = sorted((r for _, r in _read_rows(project, reading)), key=_largest_first)[:n]
    return [
        {
            "date": r.day,
            ledger.group_field: r.group,
            ledger.item_field: r.item,
            ledger.amount_field: money(r.amount),
        }
        for r in rows
    ]


def _largest_first(row: Row) -> tuple:
    # Ties (none are drawn, but an exact order needs a rule) go by date, then item.
    return (-row.amount, row.day, row.item)


def _clean_rows(project: Project, reading: _Reading) -> list[list[Any]]:
    return [
        [row.day, row.group, row.item, money(row.amount), row.status]
        for _, row in _read_rows(project, reading)
    ]


def _month_totals(project: Project, reading: _Reading) -> dict[str, float]:
    totals = {f"{YEAR}-{m:02d}": Decimal(0) for m in reading.months}
    for month, row in _read_rows(project, reading):
        totals[f"{YEAR}-{month:02d}"] += row.amount
    return {key: money(total) for key, total in totals.items()}


def _mistakes(project, right, compute, answer, chain, quarterly=False) -> list[Mistake]:
    """The mistakes whose report differs from the right one, each as a chain. `quarterly`:
    the answer is per quarter of a half year, so the period mistakes are a quarter's."""
    months, only = right.months, right.only
    held = project.ledger.period
    last = months[-1]
    candidates = [
        ("reads the stale backup as a ledger", _Reading(months, with_backup=True, only=only)),
        ("keeps the void rows", _Reading(months, keep_void=True, only=only)),
        (
            "drops amounts written with a thousands separator",
            _Reading(months, drop_separated=True, only=only),
        ),
        ("reads last year's files", _Reading(months, year=YEAR - 1, only=only)),
        ("counts a repeated row twice", _Reading(months, keep_repeats=True, only=only)),
        ("ignores the corrections", _Reading(months, ignore_corrections=True, only=only)),
    ]
    if right.only is not None:
        candidates.append(("forgets the filter", _Reading(months)))
    if quarterly:
        # Each quarter read a month short, or a month late (a late second quarter has no
        # ledger for its last month: the folder ends before it).
        quarters = [quarter_months(q) for q in project.ledger.quarters]
        short = tuple(q[:-1] for q in quarters)
        late = tuple(tuple(m + 1 for m in q if m + 1 in held) for q in quarters)
        candidates.append(("forgets each quarter's last month", _Reading(months, quarters=short)))
        candidates.append(("takes each quarter a month late", _Reading(months, quarters=late)))
    elif len(months) > 1:
        candidates.append(("forgets the last month", _Reading(months[:-1], only=only)))
    if not quarterly and last + 1 in held:
        shifted = tuple(m + 1 for m in months)
        candidates.append(("takes the wrong period", _Reading(shifted, only=only)))
    out = []
    for label, reading in candidates:
        if json.dumps(compute(reading), sort_keys=True) != json.dumps(answer, sort_keys=True):
            out.append(Mistake(label, chain(reading)))
    return out


# --------------------------------------------------------------------------- gold programs


def _work(
    project: Project,
    months: tuple[int, ...],
    program: str,
    *paths: str,
    check: dict[str, Any] | None = None,
) -> list:
    """The calls a careful person makes: the folder's files, the README's rules, the report
    settings and the corrections; the rows the import logged per month against the lines of
    the period's files (a copy of a month shows up among them); each ledger the report reads,
    the copy beside it (looked at, not used) and the lines an export repeated; the program, a
    look at what it wrote, and `check`, the kind's second look at it from another side."""
    ledger = project.ledger
    ledgers = [ledger.path(m) for m in months]
    copies = [p for p in sorted(ledger.backups) if _backup_month(p) in months]
    return [
        *look_around(),
        cat("config/report.yaml"),
        cat(CORRECTIONS_PATH),
        cat(IMPORT_LOG),
        shell(f"wc -l {_period_files(project, months)}"),
        *(cat(p) for p in ledgers),
        *(cat(p) for p in copies),
        shell(f"{REPEATED_LINES} {' '.join(ledgers)}"),
        program_call(program),
        *(cat(p) for p in paths),
        *([check] if check else []),
    ]


def _period_files(project: Project, months: tuple[int, ...]) -> str:
    """Shell patterns for the period's files in `data/`, a month's copies among them: one a
    tens digit of the months' numbers ("0[789]", "1[012]")."""
    patterns = []
    for tens in sorted({m // 10 for m in months}):
        units = "".join(str(m % 10) for m in months if m // 10 == tens)
        month = f"{tens}{units}" if len(units) == 1 else f"{tens}[{units}]"
        patterns.append(f"data/{project.ledger.name}_{YEAR}-{month}*.csv")
    return " ".join(patterns)


_READER = """import csv, glob, json, os
from decimal import Decimal, ROUND_HALF_UP

VOID = {void}
MONTHS = {months}
YEAR = {year}
ONLY = {only}


def amount(text):
    text = text.strip()
    if not text:
        return None
    text = text.replace(",", "")
    {separated}
    return Decimal(text)


def corrections():
    # The right amount of a row, by the row's date, group, item and amount as filed.
    fixes = {{}}
    if {ignore_corrections}:
        return fixes
    with open("{corrections_path}", newline="", encoding="utf-8-sig") as handle:
        for row in csv.DictReader(handle):
            key = (
                row["date"],
                row["{group_field}"],
                row["{item_field}"],
                Decimal(row["{amount_field}"].replace(",", "")),
            )
            fixes[key] = Decimal(row["corrected_{amount_field}"].replace(",", ""))
    return fixes


FIXES = corrections()


def rows():
    paths = []
    for month in MONTHS:
        folder = "data" if YEAR == {this_year} else "archive/%d" % YEAR
        paths.append((month, "%s/{ledger}_%d-%02d.csv" % (folder, YEAR, month)))
    {backups}
    for month, path in paths:
        seen = set()
        with open(path, newline="", encoding="utf-8-sig") as handle:
            for row in csv.DictReader(handle):
                line = tuple(row.values())
                if line in seen and not {keep_repeats}:
                    continue
                seen.add(line)
                value = amount(row["{amount_field}"])
                if value is None:
                    continue
                if row["{status_field}"] in VOID and not {keep_void}:
                    continue
                if ONLY is not None and row["{group_field}"] != ONLY:
                    continue
                key = (row["date"], row["{group_field}"], row["{item_field}"], value)
                yield month, row, FIXES.get(key, value)


def cents(value):
    return float(value.quantize(Decimal("0.01"), rounding=ROUND_HALF_UP))


os.makedirs("reports", exist_ok=True)
"""


def _reader(project: Project, reading: _Reading) -> str:
    ledger = project.ledger
    # A backup's name ends in something other than the month's digits ("_backup", " (copy)").
    backups = (
        "paths += [(int(p.rsplit('-', 1)[1][:2]), p) for p in "
        f"sorted(glob.glob('data/{ledger.name}_*-*[!0-9].csv')) "
        "if int(p.rsplit('-', 1)[1][:2]) in MONTHS]"
        if reading.with_backup
        else "pass"
    )
    separated = (
        'if len(text.split(".")[0]) > 3:\n        return None' if reading.drop_separated else ""
    )
    return _READER.format(
        void=repr(tuple(sorted(ledger.void_statuses))),
        months=repr(tuple(reading.months)),
        year=reading.year,
        this_year=YEAR,
        ledger=ledger.name,
        amount_field=ledger.amount_field,
        status_field=ledger.status_field,
        keep_void=reading.keep_void,
        keep_repeats=reading.keep_repeats,
        ignore_corrections=reading.ignore_corrections,
        corrections_path=CORRECTIONS_PATH,
        item_field=ledger.item_field,
        only=repr(reading.only),
        group_field=ledger.group_field,
        backups=backups,
        separated=separated,
    )


def _totals_program(
    project: Project, reading: _Reading, path: str, columns: list[str], field: str
) -> str:
    """The program writing a two-column table: the total per value of the ledger's `field`."""
    return _reader(project, reading) + (
        "totals = {}\n"
        "for month, row, value in rows():\n"
        f'    totals[row["{field}"]] = totals.get(row["{field}"], Decimal(0)) + value\n'
        f"lines = ['| {columns[0]} | {columns[1]} |', '|---|---:|']\n"
        "for key in sorted(totals):\n"
        "    lines.append('| %s | %.2f |' % (key, cents(totals[key])))\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    out.write('\\n'.join(lines) + '\\n')\n"
    )


def _item_program(project: Project, reading: _Reading, path: str, columns: list[str]) -> str:
    item = project.ledger.item_field
    return _reader(project, reading) + (
        "counts, totals = {}, {}\n"
        "for month, row, value in rows():\n"
        f'    key = row["{item}"]\n'
        "    counts[key] = counts.get(key, 0) + 1\n"
        "    totals[key] = totals.get(key, Decimal(0)) + value\n"
        f"lines = ['| {' | '.join(columns)} |', '|---|---:|---:|']\n"
        "for key in sorted(totals):\n"
        "    lines.append('| %s | %d | %.2f |' % (key, counts[key], cents(totals[key])))\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    out.write('\\n'.join(lines) + '\\n')\n"
    )


def _clean_program(project: Project, reading: _Reading, path: str) -> str:
    ledger = project.ledger
    return _reader(project, reading) + (
        f"with open({path!r}, 'w', encoding='utf-8', newline='') as out:\n"
        "    writer = csv.writer(out, lineterminator='\\n')\n"
        "    fields = None\n"
        "    for month, row, value in rows():\n"
        "        if fields is None:\n"
        "            fields = list(row)\n"
        "            writer.writerow(fields)\n"
        f"        row['{ledger.amount_field}'] = '%.2f' % cents(value)\n"
        "        writer.writerow([row[f] for f in fields])\n"
        "    if fields is None:\n"
        f"        writer.writerow({ledger.columns!r})\n"
    )


def _largest_program(project: Project, reading: _Reading, path: str, n: int) -> str:
    ledger = project.ledger
    return _reader(project, reading) + (
        "found = [(value, row) for month, row, value in rows()]\n"
        f"found.sort(key=lambda p: (-p[0], p[1]['date'], p[1]['{ledger.item_field}']))\n"
        "top = [\n"
        "    {\n"
        "        'date': row['date'],\n"
        f"        '{ledger.group_field}': row['{ledger.group_field}'],\n"
        f"        '{ledger.item_field}': row['{ledger.item_field}'],\n"
        f"        '{ledger.amount_field}': cents(value),\n"
        "    }\n"
        f"    for value, row in found[:{n}]\n"
        "]\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    json.dump(top, out, indent=2)\n"
    )


def _json_program(project: Project, reading: _Reading, path: str) -> str:
    return _reader(project, reading) + (
        # Keyed by this year's months whichever files were read (a mistake reads last year's).
        f"totals = {{'{YEAR}-%02d' % m: Decimal(0) for m in MONTHS}}\n"
        "for month, row, value in rows():\n"
        f"    totals['{YEAR}-%02d' % month] += value\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    json.dump({k: cents(v) for k, v in totals.items()}, out, indent=2)\n"
    )


# --------------------------------------------------------------------------- shared reading
# What other kinds over the same ledgers build on (synthesis.tasks.projects.joins): how a
# reading is described, the rows it counts, and the program text that reads them so. Named
# here rather than renamed above, so the kinds' code is untouched.
Reading = _Reading
read_rows = _read_rows
reader_program = _reader
