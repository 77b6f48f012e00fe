"""The ledgers of a project folder: a team's monthly data files, with the noise real ones have.

A topic's ledger (sales, expenses, orders...) is kept as one CSV file per month under `data/`,
described by a README that says which rows count. A folder covers one half of the year, drawn
per folder (January to June or July to December): a month one folder of a topic holds is
missing from another, so whether a period's data is there is read from the folder, never
from the month asked. Around the ledgers is the noise real folders have: a stale backup of
a ledger with other numbers, last year's files (the same months) under `archive/`, an
import log, a report configuration, amounts written with thousands separators, rows a
README rule excludes (a void status), incomplete rows (a missing amount), one file with
Windows line endings and one with a byte-order mark. Tasks over such a folder are work: read
the README, pick the right files, filter, aggregate and write the result
(synthesis.tasks.projects).

`ledger_files` returns the files and, beside them, the rows as they truly are (`Ledger`),
from which a planner computes what a right answer holds: the same generator makes both, so
they cannot disagree. Everything is a pure function of the vocabulary and the random draw.
"""

from __future__ import annotations

import calendar
import csv
import dataclasses
import io
import random
from dataclasses import dataclass, field
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

YEAR = 2024
ARCHIVE_YEAR = YEAR - 1
# The half years a folder may cover (its `Ledger.half`): two quarters each, so a wrong period
# is at hand.
HALVES = {1: (1, 2, 3, 4, 5, 6), 2: (7, 8, 9, 10, 11, 12)}
# Written out rather than read from `calendar`, whose names follow the process's locale.
MONTH_NAMES = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
ROWS_PER_MONTH = (9, 14)
# Shares of a month's rows that a README rule excludes, and that are incomplete.
VOID_SHARE = 0.12
INCOMPLETE_SHARE = 0.08
# How often a month's export repeats a row (an import that ran twice over a line).
REPEAT_SHARE = 0.5
# An amount this large is written with a thousands separator ("1,250.00"): a reader that
# parses numbers naively drops or misreads it.
SEPARATED_FROM = Decimal("1000")
CENT = Decimal("0.01")
CORRECTIONS_PATH = "data/corrections.csv"
# How many rows of the half year were corrected after their export.
CORRECTED_ROWS = (2, 4)
_CORRECTION_NOTES = ("price error", "credit note issued", "typo in the export", "late discount")


@dataclass(frozen=True)
class Row:
    """One ledger row as it truly is; `amount` None when the file leaves it out."""

    day: str  # YYYY-MM-DD
    group: str  # the grouping field's value (a region, a category)
    item: str
    amount: Decimal | None
    status: str


@dataclass
class Ledger:
    """The project's ledger as its files say it, and which rows a right reading counts."""

    name: str  # "sales"
    group_field: str  # "region"
    item_field: str  # "product"
    amount_field: str  # "amount"
    status_field: str  # "status"
    void_statuses: tuple[str, ...]
    half: int  # the half of YEAR the ledgers cover: 1 (January to June) or 2 (July on)
    months: dict[int, list[Row]] = field(default_factory=dict)  # this year's, by month
    archive: dict[int, list[Row]] = field(default_factory=dict)  # last year's, by month
    backups: dict[str, list[Row]] = field(default_factory=dict)  # path -> the stale rows
    repeats: dict[int, list[Row]] = field(default_factory=dict)  # rows a month's file repeats
    # Amounts corrected after the export: (the row as its file holds it, the right amount).
    corrections: list[tuple[Row, Decimal]] = field(default_factory=list)

    @property
    def period(self) -> tuple[int, ...]:
        """The months of YEAR the ledgers cover, in order (last year's files, the same)."""
        return HALVES[self.half]

    @property
    def quarters(self) -> tuple[int, int]:
        """The calendar quarters of the half year the ledgers cover: (1, 2) or (3, 4)."""
        return (2 * self.half - 1, 2 * self.half)

    @property
    def columns(self) -> list[str]:
        """The header every ledger file of the project has."""
        return ["date", self.group_field, self.item_field, self.amount_field, self.status_field]

    def path(self, month: int, year: int = YEAR) -> str:
        folder = "data" if year == YEAR else f"archive/{year}"
        return f"{folder}/{self.name}_{year}-{month:02d}.csv"

    def counted(self, row: Row) -> bool:
        """What the README says counts: a complete row that is not void."""
        return row.amount is not None and row.status not in self.void_statuses

    @property
    def corrections_columns(self) -> list[str]:
        return [
            "date",
            self.group_field,
            self.item_field,
            self.amount_field,
            f"corrected_{self.amount_field}",
            "note",
        ]

    def corrected(self, row: Row) -> Row:
        """`row` with the amount its correction gives (itself when none names it): a
        correction names a row by its date, group, item and amount as the file holds them."""
        named = (row.day, row.group, row.item, row.amount)
        for wrong, right in self.corrections:
            if named == (wrong.day, wrong.group, wrong.item, wrong.amount):
                return dataclasses.replace(row, amount=right)
        return row


def quarter_months(quarter: int) -> tuple[int, int, int]:
    """The months of a calendar quarter (3 -> July, August, September)."""
    return (3 * quarter - 2, 3 * quarter - 1, 3 * quarter)


def ledger_files(
    vocabulary: dict[str, Any], rng: random.Random, half: int
) -> tuple[dict[str, str], Ledger]:
    """The ledger part of a project folder: the monthly files of the half year `half` (1 or
    2) with their noise, last year's, a stale backup, the README, the report configuration
    and the import log; and the rows as they truly are. `vocabulary` keys: `ledger` (file
    stem), `group_field` and its `groups`, `item_field` and its `items` (name -> [low,
    high] price), `status_field`, `statuses` (counted) and `void_statuses`, `title`."""
    ledger = Ledger(
        name=vocabulary["ledger"],
        group_field=vocabulary["group_field"],
        item_field=vocabulary["item_field"],
        amount_field=vocabulary.get("amount_field", "amount"),
        status_field=vocabulary["status_field"],
        void_statuses=tuple(vocabulary["void_statuses"]),
        half=half,
    )
    for month in ledger.period:
        ledger.months[month] = _month_rows(vocabulary, rng, YEAR, month)
        ledger.archive[month] = _month_rows(vocabulary, rng, ARCHIVE_YEAR, month)
    files: dict[str, str] = {}
    crlf_month, bom_month = rng.sample(ledger.period, 2)
    for month in ledger.period:
        rows = ledger.months[month]
        counted = [r for r in rows if ledger.counted(r)]
        if counted and rng.random() < REPEAT_SHARE:
            # The repeat follows its row, as a doubled export line does.
            ledger.repeats[month] = rng.sample(counted, min(len(counted), rng.randint(1, 2)))
            rows = [twin for r in rows for twin in ([r, r] if r in ledger.repeats[month] else [r])]
        text = _csv_text(ledger, rows)
        if month == crlf_month:
            text = text.replace("\n", "\r\n")
        if month == bom_month:
            text = "\ufeff" + text
        files[ledger.path(month)] = text
        files[ledger.path(month, ARCHIVE_YEAR)] = _csv_text(ledger, ledger.archive[month])
    # A stale copy beside one month: made before the month's last rows came in and with an
    # amount that was corrected since.
    stale_month = rng.choice(ledger.period[:3])
    stale = _stale(ledger.months[stale_month], rng)
    backup = ledger.path(stale_month).replace(".csv", rng.choice(("_backup.csv", " (copy).csv")))
    ledger.backups[backup] = stale
    files[backup] = _csv_text(ledger, stale)
    files["README.md"] = _readme(vocabulary, ledger)
    files["config/report.yaml"] = _config(vocabulary)
    files["logs/import.log"] = _import_log(ledger, rng)
    files["reports/.keep"] = ""
    ledger.corrections = _corrections(ledger, rng)
    files[CORRECTIONS_PATH] = _corrections_text(ledger, rng)
    return files, ledger


def _corrections(ledger: Ledger, rng: random.Random) -> list[tuple[Row, Decimal]]:
    """Counted rows of different months whose amount was corrected after the export."""
    months = rng.sample(ledger.period, rng.randint(*CORRECTED_ROWS))
    out = []
    for month in sorted(months):
        rows = ledger.months[month]
        named = [(r.day, r.group, r.item, r.amount) for r in rows]
        # A correction names one row: never one whose date, group, item and amount another
        # row shares.
        counted = [
            r
            for r, key in zip(rows, named, strict=True)
            if ledger.counted(r) and named.count(key) == 1
        ]
        if not counted:
            continue
        row = rng.choice(counted)
        change = Decimal(rng.randint(3, 40)) + Decimal(rng.randint(0, 99)) / 100
        right = row.amount - change if row.amount > change * 2 else row.amount + change
        out.append((row, right.quantize(CENT)))
    return out


def _corrections_text(ledger: Ledger, rng: random.Random) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ledger.corrections_columns)
    for row, right in ledger.corrections:
        writer.writerow(
            [
                row.day,
                row.group,
                row.item,
                _amount_text(row.amount),
                _amount_text(right),
                rng.choice(_CORRECTION_NOTES),
            ]
        )
    return out.getvalue()


def _month_rows(vocabulary: dict[str, Any], rng: random.Random, year: int, month: int) -> list:
    items = vocabulary["items"]
    names = sorted(items)
    rows: list[Row] = []
    days = calendar.monthrange(year, month)[1]
    wanted = rng.randint(*ROWS_PER_MONTH)
    for _ in range(wanted * 3):
        if len(rows) == wanted:
            break
        item = rng.choice(names)
        low, high = items[item]
        amount = Decimal(str(round(rng.uniform(low, high), 2))).quantize(CENT)
        status = rng.choice(vocabulary["statuses"])
        roll = rng.random()
        if roll < VOID_SHARE:
            status = rng.choice(vocabulary["void_statuses"])
        elif roll < VOID_SHARE + INCOMPLETE_SHARE:
            amount = None
        row = Row(
            day=f"{year}-{month:02d}-{rng.randint(1, days):02d}",
            group=rng.choice(vocabulary["groups"]),
            item=item,
            amount=amount,
            status=status,
        )
        # Rows are distinct: a line the file holds twice is always a repeated export.
        if row not in rows:
            rows.append(row)
    rows.sort(key=lambda r: (r.day, r.item, r.group))
    return rows


def _stale(rows: list[Row], rng: random.Random) -> list[Row]:
    kept = rows[: max(1, len(rows) - rng.randint(2, 4))]
    index = rng.randrange(len(kept))
    row = kept[index]
    amount = (row.amount or Decimal("10.00")) + Decimal(rng.randint(5, 90))
    return (
        kept[:index] + [Row(row.day, row.group, row.item, amount, row.status)] + kept[index + 1 :]
    )


def _csv_text(ledger: Ledger, rows: list[Row]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(ledger.columns)
    for row in rows:
        writer.writerow([row.day, row.group, row.item, _amount_text(row.amount), row.status])
    return out.getvalue()


def _amount_text(amount: Decimal | None) -> str:
    if amount is None:
        return ""
    if amount >= SEPARATED_FROM:
        return f"{amount:,.2f}"  # csv quotes it: "1,250.00"
    return f"{amount:.2f}"


def _readme(vocabulary: dict[str, Any], ledger: Ledger) -> str:
    amount, status = ledger.amount_field, vocabulary["status_field"]
    voids = " or ".join(f"`{s}`" for s in ledger.void_statuses)
    return (
        f"# {vocabulary['title']}\n\n"
        f"Monthly {ledger.name} ledgers live in `data/`, one file per month named "
        f"`{ledger.name}_YYYY-MM.csv`. Earlier years are kept under `archive/`.\n\n"
        "## Which rows count\n\n"
        f"- A row whose `{status}` is {voids} does not count towards any total.\n"
        f"- A row with an empty `{amount}` is incomplete: leave it out of totals.\n"
        f"- Amounts are in {vocabulary.get('currency', 'USD')}; large ones are written with "
        "a thousands separator.\n"
        "- An export can repeat a row: the same line twice is one row, counted once.\n"
        "- Copies and backups of a ledger are not ledgers: only the `data/` files named as "
        "above are.\n"
        f"- `{CORRECTIONS_PATH}` lists amounts corrected after an export, each row named by "
        f"its date, `{ledger.group_field}`, `{ledger.item_field}` and `{amount}` as the ledger "
        f"holds them: use the `corrected_{amount}` instead.\n\n"
        "Reports go in `reports/`.\n"
    )


def _config(vocabulary: dict[str, Any]) -> str:
    return (
        "# Settings for the monthly reports\n"
        f"currency: {vocabulary.get('currency', 'USD')}\n"
        "decimals: 2\n"
        f"group_by: {vocabulary['group_field']}\n"
    )


def _import_log(ledger: Ledger, rng: random.Random) -> str:
    lines = []
    for month in ledger.period:
        rows = ledger.months[month]
        skipped = sum(r.amount is None for r in rows)
        # A month is imported early the next month: December's in January of the next year.
        next_month = f"{YEAR + month // 12}-{month % 12 + 1:02d}"
        stamp = f"{next_month}-0{rng.randint(1, 5)}T0{rng.randint(6, 9)}:15:00Z"
        lines.append(
            f"{stamp} INFO imported {ledger.path(month)}: {len(rows)} rows, "
            f"{skipped} without {ledger.amount_field}"
        )
    return "\n".join(lines) + "\n"


def money(value: Decimal) -> float:
    """A total as a report states it: rounded to the cent, half up."""
    return float(value.quantize(CENT, rounding=ROUND_HALF_UP))
