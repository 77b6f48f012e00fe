"""Work that joins a project's ledgers with its reference data, or cleans that data.

Four kinds over a folder with a reference part (synthesis.environments.projects.reference_data):
the total per category of a period, the ledger rows joined to the item table on the item and
the row's date (`category_totals`); each group's total against its target from the groups
file, with the share achieved (`group_targets`); the contacts export with each person once
(`dedup_contacts`); one month's ledger converted to JSON Lines with typed values
(`month_jsonl`). The ledgers are read as the ledger reports read them (`ledger_reports.Reading`
and the program text `reader_program`), so the ledger's own noise is handled, and mistaken,
the same way.

Each kind computes its right answer from the part's truth, writes a gold program run in the
sandbox, and lists the mistakes people make with such data, each the same program with one
thing wrong: the draft item table used because its name sounds final, the old cost kept after
it changed (or the new one taken for every row), the item the table does not list dropped
instead of reported as uncategorised, the share computed on the wrong base or against the
wrong quarter's target, near-duplicate contacts kept, two people merged because they share a
name, the oldest record kept instead of the current one, amounts left as text, and the
ledger mistakes that apply. A mistake is kept only when its output differs from the right one.

The contacts and a month's conversion are short programs over one file: their gold chains
also count what the file holds before the program (the duplicates, the noise) and check
what it wrote after it, as a careful person does with data that is about to be sent on.

Each kind has a declined twin (`DECLINED`, drawn by synthesis.tasks.projects.scenarios): the
kind's request, from the kind's own request builder, for data the folder does not hold. The
totals by category, the targets and a month's JSON Lines are asked for a period of the half
year the ledgers do not cover (word for word a feasible request of a folder of the other
half); the contacts with a column no record of the export has (a department, when each
record says only its region). The twin's gold chain is the looking that finds the data
missing, and its reply declines with what that looking showed, as the reports' twins do
(synthesis.tasks.projects.missing_data).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import random
import re
from dataclasses import dataclass
from decimal import ROUND_HALF_UP, Decimal
from typing import Any

from synthesis.environments.projects.folder import Project
from synthesis.environments.projects.ledgers import (
    ARCHIVE_YEAR,
    CORRECTIONS_PATH,
    HALVES,
    MONTH_NAMES,
    YEAR,
    Ledger,
    money,
)
from synthesis.environments.projects.reference_data import (
    Contact,
    ItemEntry,
    ReferenceData,
    plural,
    quarter_key,
)
from synthesis.tasks.checks import AskedValue
from synthesis.tasks.projects.ledger_reports import (
    Reading,
    half_periods,
    read_rows,
    reader_program,
)
from synthesis.tasks.projects.missing_data import period_reason
from synthesis.tasks.projects.work import (
    Mistake,
    ProjectTask,
    Request,
    cat,
    framed,
    look_around,
    program_call,
    refused_task,
    shell,
    survey_call,
)
from synthesis.tasks.text.grammar import with_article

# What a careful reader of the ledgers reads besides them: the report settings and the
# corrections the README says replace an amount (the reading applies them).
LEDGER_RULES = ("config/report.yaml", CORRECTIONS_PATH)
# What a report calls the rows whose item the table does not list (the request says so).
UNCATEGORISED = "Uncategorised"


def _periods(
    ledger: Ledger, half: int | None = None
) -> list[tuple[str, tuple[int, ...], str, tuple[str, ...]]]:
    """The periods of half year `half` (by default the folder's: ledger_reports.periods),
    each with the quarters whose targets apply to it: (tag in file names, months, how a
    request says it, the quarters' keys)."""
    half = ledger.half if half is None else half
    halves = (quarter_key(2 * half - 1), quarter_key(2 * half))
    return [
        (tag, months, said, halves if tag.startswith("H") else (f"{YEAR}-{tag}",))
        for tag, months, said in half_periods(half)
    ]


def _reference(project: Project) -> ReferenceData:
    return project.parts["reference_data"]


def _words(name: str) -> str:
    return name.replace("_", " ")


def _slug(name: str) -> str:
    """A group's name as a file name takes it: "Year 7" -> "year-7"."""
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


# --------------------------------------------------------------------------- category totals


@dataclass(frozen=True)
class _Join:
    """How a program joins the ledger rows to the item table: right, or with one mistake."""

    ledger: Reading
    draft: bool = False  # reads the draft table, whose name sounds final
    # Which of an item's rows applies: "dated" (the latest in effect on the row's date), or
    # the "old" or the "new" one for every row, whatever its date.
    pick: str = "dated"
    drop_missing: bool = False  # leaves out the rows of an item the table does not list


# The words of a request for a period's totals by category: the feasible kind's and its
# declined twin's (a period the ledgers do not cover).
_CATEGORY_REQUESTS = (
    "Could you total the {ledger} of {period} by {category}? The {item} table is in"
    " data/reference. I need {path} with one table, columns {c0}, Total and Cost: the"
    " total {amount} of the counted rows and what their {items} cost us (the unit cost"
    " that applied on each row's date, added up), both to the cent. Anything the table"
    " doesn't list goes under {unc} with the cost left blank. The README says which"
    " rows count and which table to use.",
    "I need the {period} {ledger} by {category} in {path}: a table headed {c0}, Total,"
    " Cost. Join each counted row to its {item} in the {item} table under"
    " data/reference; Total is the {amount} and Cost the unit cost on the row's date,"
    " both summed to the cent. Put {items} missing from the table under {unc}, cost"
    " blank. Rules are in the README.",
    "Finance wants {category} figures for {period}. Please write {path} with a table of"
    " {c0}, Total and Cost - the {ledger} {amount} and the unit costs (as of each row's"
    " date) of the rows that count, to the cent, per {category} from the {item} table"
    " in data/reference. If {an_item} isn't in the table, report it as {unc} and leave"
    " its cost empty. Check the README first.",
)


def _category_request(
    project: Project, rng: random.Random, tag: str, period: str
) -> tuple[str, str, list[str]]:
    """A request for the totals by category of `period` (file tag `tag`): its words, the
    report's path and its columns."""
    ledger, ref = project.ledger, _reference(project)
    category = _words(ref.category_column)
    path = f"reports/{YEAR}-{tag}_{ledger.name}_by_{ref.category_column}.md"
    columns = [category.capitalize(), "Total", "Cost"]
    text = rng.choice(_CATEGORY_REQUESTS).format(
        ledger=ledger.name,
        period=period,
        category=category,
        item=_words(ledger.item_field),
        an_item=with_article(_words(ledger.item_field)),
        items=plural(_words(ledger.item_field)),
        path=path,
        c0=columns[0],
        amount=ledger.amount_field,
        unc=UNCATEGORISED,
    )
    return text, path, columns


def _category_totals(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The total and the unit cost per category of a period: the ledger joined to the items."""
    ledger, ref = project.ledger, _reference(project)
    tag, months, period, _ = rng.choice(_periods(ledger))
    right = _Join(Reading(months))
    rows = _category_rows(project, right)
    text, path, columns = _category_request(project, rng, tag, period)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    def chain(join: _Join) -> list[dict[str, Any]]:
        program = _category_program(project, join, path, columns)
        reads = [*LEDGER_RULES, ref.items_path, *(ledger.path(m) for m in months)]
        return _work(reads, program, path)

    candidates = [(label, _Join(reading)) for label, reading in _ledger_slips(ledger, months)]
    candidates += [
        ("uses the draft item table", _Join(right.ledger, draft=True)),
        ("keeps the old cost after it changed", dataclasses.replace(right, pick="old")),
        ("takes the new cost for every row", dataclasses.replace(right, pick="new")),
        ("drops the item the table does not list", dataclasses.replace(right, drop_missing=True)),
    ]
    mistakes = _kept(candidates, lambda j: _category_rows(project, j), rows, chain)
    task_text = framed(text, rng)
    return ProjectTask("category_totals", task_text, chain(right), [output], mistakes)


def _entry(ref: ReferenceData, join: _Join, item: str, day: str) -> ItemEntry | None:
    entries = ref.draft_entries if join.draft else ref.entries
    if join.pick == "dated":
        return ref.entry_on(item, day, entries)
    listed = sorted((e for e in entries if e.item == item), key=lambda e: e.effective_from)
    if not listed:
        return None
    return listed[0] if join.pick == "old" else listed[-1]


def _category_rows(project: Project, join: _Join) -> list[list[Any]]:
    ref = _reference(project)
    totals: dict[str, Decimal] = {}
    costs: dict[str, Decimal | None] = {}
    for _, row in read_rows(project, join.ledger):
        entry = _entry(ref, join, row.item, row.day)
        if entry is None and join.drop_missing:
            continue
        name = UNCATEGORISED if entry is None else entry.category
        totals[name] = totals.get(name, Decimal(0)) + row.amount
        cost = None if entry is None else costs.get(name, Decimal(0)) + entry.unit_cost
        costs[name] = cost
    return [
        [name, money(totals[name]), None if costs[name] is None else money(costs[name])]
        for name in sorted(totals)
    ]


def _category_program(project: Project, join: _Join, path: str, columns: list[str]) -> str:
    ref = _reference(project)
    table = ref.draft_path if join.draft else ref.items_path
    # A wrong pick reads an item's rows in date order and takes one end, whatever the date.
    pick = {
        "dated": "[e for e in entries if e['effective_from'] <= day][-1:]",
        "old": "entries[:1]",
        "new": "entries[-1:]",
    }[join.pick]
    missing = "continue" if join.drop_missing else f"category, cost = {UNCATEGORISED!r}, None"
    return reader_program(project, join.ledger) + (
        "listed = {}\n"
        f"with open({table!r}, newline='', encoding='utf-8') as handle:\n"
        "    for entry in csv.DictReader(handle):\n"
        f"        listed.setdefault(entry[{ref.item_field!r}], []).append(entry)\n"
        "\n"
        "\n"
        "def entry_on(item, day):\n"
        "    entries = sorted(listed.get(item, []), key=lambda e: e['effective_from'])\n"
        f"    found = {pick}\n"
        "    return found[0] if found else None\n"
        "\n"
        "\n"
        "totals, costs = {}, {}\n"
        "for month, row, value in rows():\n"
        f"    entry = entry_on(row[{ref.item_field!r}], row['date'])\n"
        "    if entry is None:\n"
        f"        {missing}\n"
        "    else:\n"
        f"        category, cost = entry[{ref.category_column!r}], Decimal(entry['unit_cost'])\n"
        "    totals[category] = totals.get(category, Decimal(0)) + value\n"
        "    costs[category] = None if cost is None else costs.get(category, Decimal(0)) + cost\n"
        f"lines = ['| {' | '.join(columns)} |', '|---|---:|---:|']\n"
        "for name in sorted(totals):\n"
        "    cost = '' if costs[name] is None else '%.2f' % cents(costs[name])\n"
        "    lines.append('| %s | %.2f | %s |' % (name, cents(totals[name]), cost))\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    out.write('\\n'.join(lines) + '\\n')\n"
    )


# --------------------------------------------------------------------------- group targets


@dataclass(frozen=True)
class _Targets:
    """How a program sets each group's total against its target."""

    ledger: Reading
    quarters: tuple[str, ...]  # whose targets, added up, are the period's target
    # What the share is of: "target" (right), "all" (every group's total), or "inverse"
    # (the target as a share of the total).
    base: str = "target"


# The words of a request for each group's total against its target: the feasible kind's and
# its declined twin's (a period the ledgers do not cover).
_TARGET_REQUESTS = (
    "How did each {group} do against target in {period}? Please write {path}: a table"
    " with the columns {c0}, Manager, Total, Target and Achieved, one row for every"
    " {group} in {groups}. Total is its {ledger} {amount} that counts (to the cent),"
    " Target {whose}, and Achieved the total as a percentage of the target, to one"
    " decimal. The README says which rows count.",
    "I need {period} {ledger} against target per {group} in {path}. One table: {c0},"
    " Manager, Total, Target, Achieved. Take every {group}, its manager and targets"
    " from {groups}; Total is the counted {amount} to the cent, Target {whose}, and"
    " Achieved is Total as a % of Target to 1 decimal. Go by the README for what"
    " counts.",
    "Are we on target? For {period}, write {path} with a table of {c0}, Manager,"
    " Total, Target and Achieved: every {group} listed in {groups}, the {ledger}"
    " {amount} that counts under the README (to the cent), {whose}, and what"
    " percentage of that target the total reached, one decimal.",
    "Please put the {period} target review in {path}. Columns {c0}, Manager, Total,"
    " Target, Achieved - a row for each {group} in {groups} (even one with nothing"
    " counted), Total its counted {ledger} {amount} to the cent, Target {whose},"
    " Achieved the total as a percentage of the target to one decimal place. The"
    " README says which rows count.",
)


def _targets_request(
    project: Project, rng: random.Random, tag: str, period: str, quarters: tuple[str, ...]
) -> tuple[str, str, list[str]]:
    """A request for each group's total of `period` against its target (the targets of
    `quarters` added up): its words, the report's path and its columns."""
    ledger, ref = project.ledger, _reference(project)
    group = _words(ledger.group_field)
    path = f"reports/{YEAR}-{tag}_{ledger.name}_vs_target.md"
    columns = [group.capitalize(), "Manager", "Total", "Target", "Achieved"]
    said = [q.rsplit("-", 1)[1] for q in quarters]  # "2024-Q1" -> "Q1"
    whose = (
        f"its {period} target"
        if len(said) == 1
        else f"its target for the half year (the {said[0]} and {said[1]} targets added up)"
    )
    text = rng.choice(_TARGET_REQUESTS).format(
        group=group,
        period=period,
        path=path,
        c0=columns[0],
        groups=ref.groups_path,
        ledger=ledger.name,
        amount=ledger.amount_field,
        whose=whose,
    )
    return text, path, columns


def _group_targets(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Each group's total of a period against its target, with the share achieved."""
    ledger, ref = project.ledger, _reference(project)
    tag, months, period, quarters = rng.choice(_periods(ledger))
    right = _Targets(Reading(months), quarters)
    rows = _target_rows(project, right)
    text, path, columns = _targets_request(project, rng, tag, period, quarters)
    output = {"type": "file_table", "path": path, "columns": columns, "rows": rows}

    def chain(targets: _Targets) -> list[dict[str, Any]]:
        program = _target_program(project, targets, path, columns)
        reads = [*LEDGER_RULES, ref.groups_path, *(ledger.path(m) for m in months)]
        return _work(reads, program, path)

    slips = _ledger_slips(ledger, months)
    candidates = [(label, _Targets(reading, quarters)) for label, reading in slips]
    other = _other(ledger, quarters)
    candidates += [
        ("takes the share of all groups' total", dataclasses.replace(right, base="all")),
        ("takes the target as a share of the total", dataclasses.replace(right, base="inverse")),
        ("uses another quarter's target", dataclasses.replace(right, quarters=other)),
    ]
    mistakes = _kept(candidates, lambda t: _target_rows(project, t), rows, chain)
    return ProjectTask("group_targets", framed(text, rng), chain(right), [output], mistakes)


def _other(ledger: Ledger, quarters: tuple[str, ...]) -> tuple[str, ...]:
    """The quarters a reader takes by mistake: the other quarter of the half year, or for the
    half year its last quarter's alone."""
    if len(quarters) > 1:
        return quarters[-1:]
    halves = [quarter_key(q) for q in ledger.quarters]
    return tuple(q for q in halves if q not in quarters)


def _share(part: Decimal, whole: Decimal) -> float | None:
    """`part` as a percentage of `whole`, to one decimal, half up (None for a zero whole)."""
    if not whole:
        return None
    return float((part * 100 / whole).quantize(Decimal("0.1"), rounding=ROUND_HALF_UP))


def _target_rows(project: Project, targets: _Targets) -> list[list[Any]]:
    ref = _reference(project)
    totals: dict[str, Decimal] = {}
    for _, row in read_rows(project, targets.ledger):
        totals[row.group] = totals.get(row.group, Decimal(0)) + row.amount
    everything = sum(totals.values(), Decimal(0))
    out = []
    for group in ref.groups:
        total = totals.get(group.name, Decimal(0))
        target = sum(group.targets[q] for q in targets.quarters)
        part, whole = {
            "target": (total, Decimal(target)),
            "all": (total, everything),
            "inverse": (Decimal(target), total),
        }[targets.base]
        out.append([group.name, group.manager, money(total), target, _share(part, whole)])
    return out


def _target_program(project: Project, targets: _Targets, path: str, columns: list[str]) -> str:
    ref, field = _reference(project), project.ledger.group_field
    share = {
        "target": "share(total, Decimal(target))",
        "all": "share(total, sum(totals.values(), Decimal(0)))",
        "inverse": "share(Decimal(target), total)",
    }[targets.base]
    return reader_program(project, targets.ledger) + (
        f"with open({ref.groups_path!r}, encoding='utf-8') as handle:\n"
        "    groups = json.load(handle)\n"
        f"QUARTERS = {targets.quarters!r}\n"
        "\n"
        "\n"
        "def share(part, whole):\n"
        "    if not whole:\n"
        "        return ''\n"
        "    tenths = (part * 100 / whole).quantize(Decimal('0.1'), rounding=ROUND_HALF_UP)\n"
        "    return '%s%%' % tenths\n"
        "\n"
        "\n"
        "totals = {}\n"
        "for month, row, value in rows():\n"
        f"    totals[row[{field!r}]] = totals.get(row[{field!r}], Decimal(0)) + value\n"
        f"lines = ['| {' | '.join(columns)} |', '|---|---|---:|---:|---:|']\n"
        "for group in groups:\n"
        f"    total = totals.get(group[{field!r}], Decimal(0))\n"
        "    target = sum(group['targets'][q] for q in QUARTERS)\n"
        "    lines.append('| %s | %s | %.2f | %d | %s |' % (\n"
        f"        group[{field!r}], group['manager'], cents(total), target, {share}))\n"
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    out.write('\\n'.join(lines) + '\\n')\n"
    )


# --------------------------------------------------------------------------- contacts


@dataclass(frozen=True)
class _Dedup:
    """How a program tells people apart in the contacts export."""

    # "email" (the README's rule), "no_dots" (case and spaces, but Gmail's dots count),
    # "raw" (the address exactly as written) or "name" (whoever shares a name is one).
    key: str = "email"
    skip_merged: bool = True
    latest: bool = True  # keeps the most recently updated record, else the oldest
    # Only the people whose current record is in this group, when the request names one.
    only: str | None = None
    filter_first: bool = False  # filters the records by group before telling people apart


# Two ways a request asks for the contacts: a CSV (rows in any order, read by `file_table`)
# or JSON Lines (one object a line in id order, read by `file_json` by exact value: so the
# request says how the name and address are to be written).
_CSV_REQUESTS = (
    "Our contacts export ({contacts}) has the same people in it several times. Could you"
    " write {path} with every person once? Columns id, name, email and {field}, taken from each"
    " person's current record; the README says how to tell who is who.",
    "Please dedupe {contacts} into {path}: one row per person, with the columns id, name,"
    " email, {field} from their current record. Check the README for what makes two records"
    " the same person.",
    "I'm about to mail everyone in {contacts} and don't want anyone twice. Can you make {path}"
    " - one line per actual person, columns id, name, email and {field} as their current"
    " record has them (the README explains the duplicates)?",
    "The CRM export in {contacts} is full of duplicates. I need a clean list in {path}: each"
    " person once, with id, name, email and {field} from the record that's current for them."
    " The README has the rules for spotting the same person.",
)
_JSONL_REQUESTS = (
    "Could you turn {contacts} into a clean list in {path}? JSON Lines, one object per person"
    " (keys id, name, email, {field}) from their current record, in id order, with the email"
    " trimmed and lowercased and single spaces in names. The README says who is the same"
    " person.",
    "I need the contacts without duplicates as {path}: one JSON object a line, sorted by id,"
    " keys id, name, email and {field}, taken from each person's current record in"
    " {contacts}. Lowercase and trim the emails, and collapse extra spaces in the names. See"
    " the README for how duplicates are told apart.",
)


@dataclass(frozen=True)
class _ContactsRequest:
    """A request for the contacts export with each person once, its words drawn but for the
    last column's name: the group field, which every record has (or, for the declined twin,
    a field none has, drawn after the words so both kinds draw their words alike)."""

    template: str  # with a {field} left to fill
    contacts: str
    path: str
    as_lines: bool  # JSON Lines (else a CSV)
    only: str | None  # the one group whose people are wanted, if any
    only_said: str  # how the request says so ("" when it wants everyone)

    def columns(self, field: str) -> list[str]:
        return ["id", "name", "email", field]

    def text(self, field: str) -> str:
        said = self.template.format(contacts=self.contacts, path=self.path, field=field)
        return said + self.only_said


def _contacts_request(project: Project, rng: random.Random) -> _ContactsRequest:
    """A request for the deduplicated contacts with the columns id, name, email and a field."""
    ledger, ref = project.ledger, _reference(project)
    stem = rng.choice(("reports/contacts_deduplicated", "reports/contacts_clean"))
    as_lines = rng.random() < 0.5
    path = stem + (".jsonl" if as_lines else ".csv")
    # Half the requests want one group's people: a group with at least two.
    groups = sorted({c.group for c in ref.current})
    crowded = [g for g in groups if sum(c.group == g for c in ref.current) >= 2]
    only = rng.choice(crowded) if crowded and rng.random() < 0.5 else None
    if only is not None:
        path = path.replace("contacts_", f"contacts_{_slug(only)}_")
    template = rng.choice(_JSONL_REQUESTS if as_lines else _CSV_REQUESTS)
    only_said = ""
    if only is not None:
        only_said = rng.choice(
            (
                f" Only the people whose current {_words(ledger.group_field)} is {only}.",
                f" Just {only}, please: people whose current record says {only}.",
            )
        )
    return _ContactsRequest(template, ref.contacts_path, path, as_lines, only, only_said)


def _dedup_contacts(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The contacts export with each person once, as their current record says."""
    ledger, ref = project.ledger, _reference(project)
    request = _contacts_request(project, rng)
    text, columns = request.text(ledger.group_field), request.columns(ledger.group_field)
    path, as_lines, only = request.path, request.as_lines, request.only
    right = _Dedup(only=only)

    def answer(dedup: _Dedup) -> Any:
        rows = _contact_rows(ref, dedup)
        if not as_lines:
            return rows
        return [
            dict(zip(columns, [i, name, email.lower(), group], strict=True))
            for i, name, email, group in rows
        ]

    value = answer(right)
    if as_lines:
        output = {"type": "file_json", "path": path, "value": value}
    else:
        output = {"type": "file_table", "path": path, "columns": columns, "rows": value}

    looks = _contact_looks(ref.contacts_path)
    check = survey_call(_dedup_check(ref.contacts_path, path, as_lines))

    def chain(dedup: _Dedup) -> list[dict[str, Any]]:
        program = _dedup_program(project, dedup, path, columns, as_lines)
        return _work([ref.contacts_path], program, path, extra=looks, checks=[check])

    candidates = [
        ("keeps near-duplicates (the address as written)", _Dedup(key="raw", only=only)),
        ("ignores the Gmail dots rule", _Dedup(key="no_dots", only=only)),
        ("merges two people who share a name", _Dedup(key="name", only=only)),
        ("keeps merged records", _Dedup(skip_merged=False, only=only)),
        ("keeps each person's oldest record", _Dedup(latest=False, only=only)),
    ]
    if only is not None:
        candidates.append(("forgets the filter", _Dedup()))
        candidates.append(
            (
                "filters the records before telling people apart",
                dataclasses.replace(right, filter_first=True),
            )
        )
    mistakes = _kept(candidates, answer, value, chain)
    # Not framed: its reasons are for reports of figures, and a contact list is none.
    return ProjectTask("dedup_contacts", text, chain(right), [output], mistakes)


def _identity(contact: Contact, key: str) -> str:
    if key == "name":
        return " ".join(contact.name.split()).casefold()
    if key == "raw":
        return contact.email
    local, _, domain = contact.email.strip().lower().partition("@")
    if key == "email" and domain == "gmail.com":
        local = local.replace(".", "")
    return f"{local}@{domain}"


def _contact_rows(ref: ReferenceData, dedup: _Dedup) -> list[list[Any]]:
    kept: dict[str, Contact] = {}
    for contact in ref.contacts:
        if dedup.skip_merged and contact.merged_into is not None:
            continue
        if dedup.filter_first and contact.group != dedup.only:
            continue
        key = _identity(contact, dedup.key)
        best = kept.get(key)
        if best is None or (contact.updated > best.updated) == dedup.latest:
            kept[key] = contact
    return [
        [c.id, " ".join(c.name.split()), c.email.strip(), c.group]
        for c in sorted(kept.values(), key=lambda c: c.id)
        if dedup.only is None or c.group == dedup.only
    ]


def _dedup_program(
    project: Project, dedup: _Dedup, path: str, columns: list[str], as_lines: bool
) -> str:
    ref = _reference(project)
    body = {
        "raw": "    return record['email']\n",
        "name": "    return ' '.join(record['name'].split()).casefold()\n",
    }.get(dedup.key)
    if body is None:
        local = "local.replace('.', '') if domain == 'gmail.com' else local"
        body = (
            "    local, _, domain = record['email'].strip().lower().partition('@')\n"
            f"    return ({local if dedup.key == 'email' else 'local'}) + '@' + domain\n"
        )
    newer = ">" if dedup.latest else "<"
    field = columns[-1]
    early = f"    if record[{field!r}] != {dedup.only!r}:\n        continue\n"
    late = (
        f"current = {{k: r for k, r in current.items() if r[{field!r}] == {dedup.only!r}}}\n"
        if dedup.only is not None
        else ""
    )
    merged = "    if record.get('merged_into') is not None:\n        continue\n"
    return (
        "import csv, json, os\n"
        "\n"
        "\n"
        "def person(record):\n"
        f"{body}"
        "\n"
        "\n"
        f"with open({ref.contacts_path!r}, encoding='utf-8') as handle:\n"
        "    records = [json.loads(line) for line in handle if line.strip()]\n"
        "current = {}\n"
        "for record in records:\n"
        f"{merged if dedup.skip_merged else ''}"
        f"{early if dedup.filter_first else ''}"
        "    best = current.get(person(record))\n"
        f"    if best is None or record['updated'] {newer} best['updated']:\n"
        "        current[person(record)] = record\n"
        f"{late}"
        "os.makedirs('reports', exist_ok=True)\n"
        + (_jsonl_writer(path, columns) if as_lines else _csv_writer(path, columns))
    )


# Who an address belongs to, by the README's rule: what the looks and the check share.
_PERSON = """def person(email):
    local, _, domain = email.strip().lower().partition('@')
    if domain == 'gmail.com':
        local = local.replace('.', '')
    return local + '@' + domain
"""


def _contact_looks(contacts: str) -> list[dict[str, Any]]:
    """What a careful person counts before deduplicating: the records, the addresses that
    repeat by the README's rule, the merged records, and the names that repeat (two people
    who share a name have two addresses)."""
    read = (
        "import collections, json\n"
        "\n"
        f"with open({contacts!r}, encoding='utf-8') as handle:\n"
        "    records = [json.loads(line) for line in handle if line.strip()]\n"
    )
    addresses = read + (
        "\n"
        "\n"
        f"{_PERSON}"
        "\n"
        "\n"
        "ids = collections.defaultdict(list)\n"
        "for record in records:\n"
        "    ids[person(record['email'])].append(record['id'])\n"
        "print(len(ids), 'addresses, once the case, spaces and Gmail dots are set aside')\n"
        "for address, found in sorted(ids.items()):\n"
        "    if len(found) > 1:\n"
        "        print(address, found)\n"
    )
    names = read + (
        "emails = collections.defaultdict(set)\n"
        "for record in records:\n"
        "    name = ' '.join(record['name'].split()).casefold()\n"
        "    emails[name].add(record['email'].strip().lower())\n"
        "for name, found in sorted(emails.items()):\n"
        "    if len(found) > 1:\n"
        "        print(name, sorted(found))\n"
    )
    folder = contacts.rsplit("/", 1)[0]
    return [
        shell(f"wc -l {contacts}"),
        survey_call(addresses),
        {"tool": "grep", "args": {"pattern": "merged_into", "folder": folder}},
        survey_call(names),
    ]


def _dedup_check(contacts: str, path: str, as_lines: bool) -> str:
    """A program checking the written list against the export: one row a person, and no
    record that was merged into another."""
    rows = (
        "    rows = [json.loads(line) for line in handle if line.strip()]\n"
        if as_lines
        else "    rows = list(csv.DictReader(handle))\n"
    )
    return (
        "import csv, json\n"
        "\n"
        "\n"
        f"{_PERSON}"
        "\n"
        "\n"
        f"with open({contacts!r}, encoding='utf-8') as handle:\n"
        "    records = [json.loads(line) for line in handle if line.strip()]\n"
        "merged = {r['id'] for r in records if r.get('merged_into') is not None}\n"
        f"with open({path!r}, encoding='utf-8', newline='') as handle:\n"
        f"{rows}"
        "print(len(rows), 'rows,', len({person(r['email']) for r in rows}), 'people')\n"
        "kept = sorted(int(r['id']) for r in rows if int(r['id']) in merged)\n"
        "print('merged records kept:', kept)\n"
    )


def _csv_writer(path: str, columns: list[str]) -> str:
    return (
        f"with open({path!r}, 'w', encoding='utf-8', newline='') as out:\n"
        "    writer = csv.writer(out, lineterminator='\\n')\n"
        f"    writer.writerow({columns!r})\n"
        "    for record in sorted(current.values(), key=lambda r: r['id']):\n"
        "        writer.writerow([record['id'], ' '.join(record['name'].split()),"
        f" record['email'].strip(), record[{columns[-1]!r}]])\n"
    )


def _jsonl_writer(path: str, columns: list[str]) -> str:
    return (
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    for record in sorted(current.values(), key=lambda r: r['id']):\n"
        "        entry = {\n"
        "            'id': record['id'],\n"
        "            'name': ' '.join(record['name'].split()),\n"
        "            'email': record['email'].strip().lower(),\n"
        f"            {columns[-1]!r}: record[{columns[-1]!r}],\n"
        "        }\n"
        "        out.write(json.dumps(entry, ensure_ascii=False) + '\\n')\n"
    )


# --------------------------------------------------------------------------- JSON Lines


@dataclass(frozen=True)
class _Conversion:
    ledger: Reading
    amount_text: bool = False  # leaves the amount as the file writes it ("1,250.00")
    keep_bom: bool = False  # reads the byte-order mark into the first column's name


# The words of a request for one month's ledger as JSON Lines: the feasible kind's and its
# declined twin's (a month with no ledger).
_MONTH_REQUESTS = (
    "Could you convert the {month} {y} {ledger} ledger to JSON Lines in {path}? One"
    " object a line for each row that counts (the README says which), in the order of"
    " the file, keyed by the ledger's column names, with the {amount} as a number and"
    " everything else as text.",
    "I need {month} {y}'s {ledger} as {path} for the import tool: JSON Lines, one"
    " object per counted row (see the README), same order as the ledger, the CSV's"
    " column names as keys, {amount} a plain number, the rest strings.",
    "Please export the {month} {y} {ledger} to {path} as JSON Lines: a JSON object per"
    " line for every row that counts under the README, in the ledger's order, using"
    " the ledger's header as keys. The {amount} should be a number, not text; the other"
    " fields stay strings.",
    "The new dashboard reads JSON Lines. Could you write {path} from the {month} {y}"
    " {ledger} ledger - only the rows that count (README), same order as the CSV, one"
    " object a line keyed by its column names, {amount} numeric and the rest as text?",
)


def _month_request(project: Project, rng: random.Random, month: int) -> tuple[str, str]:
    """A request for `month`'s ledger as JSON Lines: its words and the file's path."""
    ledger = project.ledger
    path = f"reports/{ledger.name}_{YEAR}-{month:02d}.jsonl"
    text = rng.choice(_MONTH_REQUESTS).format(
        month=MONTH_NAMES[month - 1],
        y=YEAR,
        ledger=ledger.name,
        path=path,
        amount=ledger.amount_field,
    )
    return text, path


def _month_jsonl(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """One month's counted rows as JSON Lines, in the file's order, with typed values."""
    ledger = project.ledger
    month = rng.choice(ledger.period)
    right = _Conversion(Reading((month,)))
    value = _jsonl_value(project, right)
    text, path = _month_request(project, rng, month)
    output = {"type": "file_json", "path": path, "value": value}

    looks = _month_looks(project, month)
    check = survey_call(_jsonl_check(project, path))

    def chain(conversion: _Conversion) -> list[dict[str, Any]]:
        program = _jsonl_program(project, conversion, path)
        reads = [*LEDGER_RULES, ledger.path(month)]
        return _work(reads, program, path, extra=looks, checks=[check])

    slips = _ledger_slips(ledger, (month,))
    candidates = [(label, _Conversion(reading)) for label, reading in slips]
    candidates.append(("leaves the amount as text", dataclasses.replace(right, amount_text=True)))
    if project.files[ledger.path(month)].startswith("\ufeff"):
        bom = dataclasses.replace(right, keep_bom=True)
        candidates.append(("reads the byte-order mark into the first key", bom))
    mistakes = _kept(candidates, lambda c: _jsonl_value(project, c), value, chain)
    return ProjectTask("month_jsonl", framed(text, rng), chain(right), [output], mistakes)


def _jsonl_value(project: Project, conversion: _Conversion) -> list[dict[str, Any]]:
    ledger = project.ledger
    first = ("\ufeff" if conversion.keep_bom else "") + "date"
    out = []
    for _, row in read_rows(project, conversion.ledger):
        amount: Any = money(row.amount)
        if conversion.amount_text:
            amount = f"{row.amount:,.2f}" if row.amount >= 1000 else f"{row.amount:.2f}"
        out.append(
            {
                first: row.day,
                ledger.group_field: row.group,
                ledger.item_field: row.item,
                ledger.amount_field: amount,
                ledger.status_field: row.status,
            }
        )
    return out


def _month_looks(project: Project, month: int) -> list[dict[str, Any]]:
    """What a careful person checks before converting a month: the month's other copies
    (a backup, last year's), what the import log says the month's file held, and the
    file's own noise (a byte-order mark, Windows line ends, repeated lines, rows without an
    amount, the statuses)."""
    ledger = project.ledger
    path = ledger.path(month)
    survey = (
        "import collections, csv\n"
        "\n"
        f"with open({path!r}, 'rb') as handle:\n"
        "    raw = handle.read()\n"
        "print('byte-order mark:', raw.startswith(b'\\xef\\xbb\\xbf'), end=', ')\n"
        "print('Windows line ends:', b'\\r\\n' in raw)\n"
        f"with open({path!r}, newline='', encoding='utf-8-sig') as handle:\n"
        "    rows = list(csv.DictReader(handle))\n"
        "print(len(rows), 'rows,', len({tuple(r.values()) for r in rows}), 'distinct')\n"
        f"print('without {ledger.amount_field}:',"
        f" sum(not r[{ledger.amount_field!r}].strip() for r in rows))\n"
        f"statuses = collections.Counter(r[{ledger.status_field!r}] for r in rows)\n"
        "print('by status:', dict(sorted(statuses.items())))\n"
    )
    return [
        shell(f"find . -name '{ledger.name}_*-{month:02d}*' | sort"),
        {"tool": "grep", "args": {"pattern": path, "folder": "logs"}},
        survey_call(survey),
    ]


def _jsonl_check(project: Project, path: str) -> str:
    """A program checking the written lines: how many, their keys, the amounts numbers, and
    their total (to set against the ledger's rows)."""
    amount = project.ledger.amount_field
    return (
        "import json\n"
        "\n"
        f"with open({path!r}, encoding='utf-8') as handle:\n"
        "    records = [json.loads(line) for line in handle]\n"
        f"amounts = [r.get({amount!r}) for r in records]\n"
        "numbers = [a for a in amounts if isinstance(a, (int, float))]\n"
        "print(len(records), 'lines, keys', sorted({k for r in records for k in r}))\n"
        "print(len(numbers), 'amounts are numbers, total', round(sum(numbers), 2))\n"
    )


def _jsonl_program(project: Project, conversion: _Conversion, path: str) -> str:
    amount = project.ledger.amount_field
    typed = "" if conversion.amount_text else f"        record[{amount!r}] = cents(value)\n"
    program = reader_program(project, conversion.ledger) + (
        f"with open({path!r}, 'w', encoding='utf-8') as out:\n"
        "    for month, row, value in rows():\n"
        "        record = dict(row)\n"
        f"{typed}"
        "        out.write(json.dumps(record, ensure_ascii=False) + '\\n')\n"
    )
    if conversion.keep_bom:
        program = program.replace('encoding="utf-8-sig"', 'encoding="utf-8"')
    return program


# --------------------------------------------------------------------------- declined twins
# Each kind's request for data the folder does not hold, in the kind's own words (the request
# builders above): the totals or the targets of a period of the half year the ledgers do not
# cover, a month with no ledger, or a contact field no record of the export has. The right
# outcome is to look, write nothing and say why a call showed (as for the reports of
# synthesis.tasks.projects.missing_data); the gold chain is that looking, and the mistakes are
# the outputs people make up instead, each a write the workspace guard fails.

# Fields a contact record is often asked for that no folder's contacts export has: where a
# person is (their region, site, branch), or what they are to the team (their department or
# team, the kind of customer they are, the campaign that brought them in). A folder whose
# group is a place (`PLACE_GROUPS`) is asked for one of the second kind, any other folder for
# a place: a field of the group's own kind could be read as the group under another name (a
# site for a branch), and the request would not be declined but answered.
PLACE_FIELDS = ("region", "site", "branch")
PERSON_FIELDS = ("department", "team", "customer_type", "campaign")
PLACE_GROUPS = frozenset(
    {
        "region", "clinic", "site", "branch", "venue", "property", "kitchen", "station",
        "location", "shop", "practice", "area", "campus", "pitch", "workshop", "salon",
    }
)  # fmt: skip


def _missing_category_period(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The totals by category of a period the ledgers do not cover."""
    ledger, ref = project.ledger, _reference(project)
    tag, months, period, _ = rng.choice(_periods(ledger, _missing_half(ledger)))
    text, path, columns = _category_request(project, rng, tag, period)
    categories = sorted({e.category for e in ref.entries} | {UNCATEGORISED})
    _, nearest, _, _ = _nearest(ledger, tag)
    instead = [
        [name, f"{total:.2f}", None if cost is None else f"{cost:.2f}"]
        for name, total, cost in _category_rows(project, _Join(Reading(nearest)))
    ]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (
            f"writes zeros for every {_words(ref.category_column)}",
            _markdown(
                columns, [[c, "0.00", None if c == UNCATEGORISED else "0.00"] for c in categories]
            ),
        ),
        (_instead(ledger), _markdown(columns, instead)),
    ]
    request = Request(text, path, period, inventions, months)
    chain, asked, reason, because = _no_ledger(project, request, [ref.items_path])
    return refused_task("missing_category_period", request, chain, asked, reason, because, rng)


def _missing_target_period(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """Each group's total against its target for a period the ledgers do not cover."""
    ledger, ref = project.ledger, _reference(project)
    tag, months, period, quarters = rng.choice(_periods(ledger, _missing_half(ledger)))
    text, path, columns = _targets_request(project, rng, tag, period, quarters)
    zeros = []
    for group in ref.groups:
        # The groups file holds targets for the quarter after the ledgers' half year (or the
        # one before it), not for its other quarter.
        if all(q in group.targets for q in quarters):
            target = sum(group.targets[q] for q in quarters)
            zeros.append([group.name, group.manager, "0.00", target, "0.0%"])
        else:
            zeros.append([group.name, group.manager, "0.00", None, None])
    _, nearest, _, keys = _nearest(ledger, tag)
    instead = [
        [name, manager, f"{total:.2f}", target, None if share is None else f"{share}%"]
        for name, manager, total, target, share in _target_rows(
            project, _Targets(Reading(nearest), keys)
        )
    ]
    inventions = [
        ("writes the table's headings and no numbers", _markdown(columns, [])),
        (f"writes zeros for every {_words(ledger.group_field)}", _markdown(columns, zeros)),
        (_instead(ledger), _markdown(columns, instead)),
    ]
    request = Request(text, path, period, inventions, months)
    chain, asked, reason, because = _no_ledger(project, request, [ref.groups_path])
    return refused_task("missing_target_period", request, chain, asked, reason, because, rng)


def _missing_contact_field(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """The deduplicated contacts with a column no record of the export has (a department,
    when each record says only its region), asked as the feasible list is. None when every
    such field is named somewhere in the folder."""
    ledger, ref = project.ledger, _reference(project)
    request = _contacts_request(project, rng)
    field = _absent_field(project, rng)
    if field is None:
        return None
    rows = _contact_rows(ref, _Dedup(only=request.only))
    as_lines, columns = request.as_lines, request.columns(field)
    group = _words(ledger.group_field)
    inventions = [
        ("writes an empty list", _contact_list(columns, [], as_lines)),
        (
            f"leaves the {_words(field)} blank",
            _contact_list(columns, [[*r[:3], ""] for r in rows], as_lines),
        ),
        (
            f"writes each person's {group} as their {_words(field)}",
            _contact_list(columns, rows, as_lines),
        ),
    ]
    said = Request(request.text(field), request.path, "", inventions)
    keys = _record_keys(project)
    fields = survey_call(_keys_program(ref.contacts_path))
    chain = [
        *look_around(),
        cat(ref.contacts_path),
        # The field as a key of any JSON record (another export, the groups file).
        {"tool": "grep", "args": {"pattern": f'"{field}"', "folder": "."}},
        fields,
        # Everywhere else a person's details could be: the other exports, the groups file
        # (each group's manager and country), and every table's header.
        {"tool": "ls", "args": {"folder": ref.contacts_path.rsplit("/", 1)[0]}},
        cat(ref.groups_path),
        shell("head -qn1 data/*.csv data/reference/*.csv | sort | uniq -c"),
    ]
    shown = ", ".join(keys)
    what = f"the fields of the records in {ref.contacts_path}"
    asked = AskedValue(what, shown + "\n", chain.index(fields), ("data", "output"))
    reason = {
        "rule": f"no_data:{field}",
        "facts": [],
        # Saying what a record does hold: most of its fields, in any order.
        "texts": [", ".join(_words(k) for k in keys)],
        "told": False,
        "shows": [shown],
    }
    because = f"no record in {ref.contacts_path} has a {_words(field)}: their fields are {{fact}}"
    # Not framed, as the feasible list is not.
    return refused_task(
        "missing_contact_field", said, chain, asked, reason, because, rng, frame=False
    )


def _missing_jsonl_month(project: Project, vocabulary: dict[str, Any], rng: random.Random):
    """A month's ledger as JSON Lines, for a month of the half year the ledgers do not
    cover."""
    ledger = project.ledger
    month = rng.choice(HALVES[_missing_half(ledger)])
    text, path = _month_request(project, rng, month)
    edge = _jsonl_value(project, _Conversion(Reading((_edge(ledger),))))
    which = "last" if _later(ledger) else "first"
    inventions = [
        ("writes an empty file", ""),
        (
            f"converts the {which} month there is instead",
            "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in edge),
        ),
    ]
    request = Request(text, path, f"{MONTH_NAMES[month - 1]} {YEAR}", inventions, (month,))
    chain, asked, reason, because = _no_ledger(project, request, [])
    return refused_task("missing_jsonl_month", request, chain, asked, reason, because, rng)


# The half year a folder does not cover, and the proof that no ledger holds a period of it.


def _missing_half(ledger: Ledger) -> int:
    """The half of YEAR the folder's ledgers do not cover (which half they do is drawn per
    folder, so a month declined in one folder of a topic is reported on in another)."""
    return 3 - ledger.half


def _later(ledger: Ledger) -> bool:
    """Whether the missing half comes after the ledgers' (they end in June), or before."""
    return _missing_half(ledger) > ledger.half


def _edge(ledger: Ledger) -> int:
    """The ledgers' month on the missing half's side: their last, or their first."""
    return ledger.period[-1] if _later(ledger) else ledger.period[0]


def _nearest(ledger: Ledger, tag: str) -> tuple[str, tuple[int, ...], str, tuple[str, ...]]:
    """The period a person who cannot find period `tag` reports instead (a `_periods` entry):
    the half year there is, or its quarter nearest the one asked."""
    first, second, half = _periods(ledger)[:3]
    if tag.startswith("H"):
        return half
    return second if _later(ledger) else first


def _instead(ledger: Ledger) -> str:
    """A made-up report's label: the nearest period there is, reported instead."""
    return f"reports the {'last' if _later(ledger) else 'first'} period there is instead"


def _no_ledger(
    project: Project, request: Request, reads: list[str]
) -> tuple[list[dict[str, Any]], AskedValue, dict[str, Any], str]:
    """The looking that shows no ledger holds `request.months`, and what a refusal rests on:
    the chain (the folder, the README, the report settings, the files `reads` the request
    names, the ledgers' months, then everywhere else the rows could be), the fact it shows
    (the ledger on the asked months' side: the last one, or the first), the reason and the
    reply's because."""
    ledger = project.ledger
    ledgers = f"data/{ledger.name}_{YEAR}-[0-9][0-9].csv"  # the README's names: no copy
    later, edge = _later(ledger), _edge(ledger)
    asked_months = "|".join(f"{m:02d}" for m in request.months)
    named = " -o ".join(f"-name '*{YEAR}-{m:02d}*'" for m in request.months)
    listing = {"tool": "ls", "args": {"folder": "data"}}
    chain = [
        *look_around(),
        cat("config/report.yaml"),
        *(cat(p) for p in reads),
        listing,
        {"tool": "ls", "args": {"folder": f"archive/{ARCHIVE_YEAR}"}},
        cat("logs/import.log"),
        # Which months the ledgers' rows are of, and how many rows each has of the asked
        # months (none).
        shell(f"grep -ho '^{YEAR}-[0-9][0-9]' {ledgers} | sort | uniq -c"),
        shell(f"grep -cE '^{YEAR}-({asked_months})' {ledgers}"),
        # Everywhere else the rows could be (a copy, an export, the corrections): any file
        # named for the asked months, and the dated row of any file nearest them (the latest
        # of all, or this year's earliest: last year's are of the same months).
        shell(f"find . \\( {named} \\) | sort"),
        shell("grep -rhoE '^[0-9]{4}-[0-9]{2}-[0-9]{2},' . | sort | tail -n 1")
        if later
        else shell(f"grep -rhoE '^{YEAR}-[0-9]{{2}}-[0-9]{{2}},' . | sort | head -n 1"),
    ]
    found = ledger.path(edge).rsplit("/", 1)[1]
    what = f"the {'latest' if later else 'earliest'} {ledger.name} ledger in data/"
    asked = AskedValue(
        what, found, chain.index(listing), ("data", _listing(project, "data").index(found))
    )
    because = f"{what} is {{fact}}, so there is none for {request.period}"
    return chain, asked, period_reason(edge), because


def _listing(project: Project, folder: str) -> list[str]:
    """What `ls folder` answers: the entries' names in order (the verbs sort them)."""
    prefix = folder + "/"
    return sorted({p[len(prefix) :].split("/")[0] for p in project.files if p.startswith(prefix)})


def _markdown(columns: list[str], rows: list[list[Any]]) -> str:
    """A made-up report's table (a cell None is left blank)."""
    lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join("" if v is None else str(v) for v in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


# The contacts export's fields, and a field it lacks.


def _absent_field(project: Project, rng: random.Random) -> str | None:
    """A field of the other kind than the folder's group (`PLACE_GROUPS`) that no file of
    the folder names as a word (so no record, table or note has it), or None."""
    group = project.ledger.group_field
    names = PERSON_FIELDS if group in PLACE_GROUPS else PLACE_FIELDS
    text = "\n".join(project.files.values()).casefold()
    free = [
        n for n in names if not any(re.search(rf"(?<!\w){w}(?!\w)", text) for w in (n, _words(n)))
    ]
    return rng.choice(free) if free else None


def _record_keys(project: Project) -> list[str]:
    """The fields the export's records have, in the order the file first has them."""
    keys: dict[str, None] = {}
    for line in project.files[_reference(project).contacts_path].splitlines():
        keys.update(dict.fromkeys(json.loads(line)))
    return list(keys)


def _keys_program(contacts: str) -> str:
    """A program printing the fields of the export's records, in the order they first come."""
    return (
        "import json\n"
        "\n"
        "keys = {}\n"
        f"with open({contacts!r}, encoding='utf-8') as handle:\n"
        "    for line in handle:\n"
        "        if line.strip():\n"
        "            keys.update(dict.fromkeys(json.loads(line)))\n"
        "print(', '.join(keys))\n"
    )


def _contact_list(columns: list[str], rows: list[list[Any]], as_lines: bool) -> str:
    """A contact list as the request's format writes it (made up: `rows` are not its)."""
    if as_lines:
        return "".join(
            json.dumps(
                dict(zip(columns, [i, name, email.strip().lower(), value], strict=True)),
                ensure_ascii=False,
            )
            + "\n"
            for i, name, email, value in rows
        )
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(rows)
    return out.getvalue()


# --------------------------------------------------------------------------- shared


KINDS = (_category_totals, _group_targets, _dedup_contacts, _month_jsonl)


def _ledger_slips(ledger: Ledger, months: tuple[int, ...]) -> list[tuple[str, Reading]]:
    """The ledger mistakes that apply to a reading of `months` (those of ledger_reports)."""
    slips = [
        ("reads the stale backup as a ledger", Reading(months, with_backup=True)),
        ("keeps the void rows", Reading(months, keep_void=True)),
        ("drops amounts written with a thousands separator", Reading(months, drop_separated=True)),
        ("reads last year's files", Reading(months, year=YEAR - 1)),
        ("counts a repeated row twice", Reading(months, keep_repeats=True)),
    ]
    if months[-1] + 1 in ledger.period:
        slips.append(("takes the wrong period", Reading(tuple(m + 1 for m in months))))
    return slips


def _kept(candidates, compute, answer, chain) -> list[Mistake]:
    """The candidate mistakes whose output differs from the right one, each as a chain."""
    right = json.dumps(answer, sort_keys=True)
    return [
        Mistake(label, chain(wrong))
        for label, wrong in candidates
        if json.dumps(compute(wrong), sort_keys=True) != right
    ]


def _work(
    reads: list[str],
    program: str,
    *outputs: str,
    extra: list | None = None,
    checks: list | None = None,
) -> list:
    """What a careful person does: the folder's tree, the README's rules, each file the work
    reads (and any look it needs, `extra`), the program, any check of what it wrote against
    the inputs (`checks`), and a look at what it wrote."""
    # The checks come before the look: a look before the program would fail, where a check
    # run too early only prints its error, so the self-test's swap of the program and the
    # step after it reaches the gold run's state and reply alike.
    return [
        *look_around(),
        *(cat(p) for p in reads),
        *(extra or []),
        program_call(program),
        *(checks or []),
        *(cat(p) for p in outputs),
    ]


# Each kind's declined twin (synthesis.tasks.projects.scenarios DECLINED).
DECLINED = {
    _category_totals: _missing_category_period,
    _group_targets: _missing_target_period,
    _dedup_contacts: _missing_contact_field,
    _month_jsonl: _missing_jsonl_month,
}
