"""The reference data of a project folder: the tables a ledger is joined with, and a contacts
export with the duplicates real ones have.

Beside its ledgers a team keeps what the rows refer to: a table of its items (each one's
category and unit cost, under `data/reference/`), a JSON file of its groups (each one's
manager, country and quarterly targets) and the contacts its CRM exports as JSON Lines. The
noise is what such files have: an item the ledgers use is missing from the item table, one
item is listed twice because its cost changed on a date (`effective_from`), an older draft of
the table sits beside it under a name that sounds newer (`..._final_v2.csv`), and the contacts
export holds the same person more than once (the email in another case or with spaces round
it, a Gmail address without its dots, the name typed without its accent, a record merged into
another) next to two different people who share a name.

`reference_data` returns the files, a README section saying which file is the real one and
how contacts are told apart, and the truth they were written from (`ReferenceData`): the
table rows, the groups and the contact records with each person's current record, from which
a planner computes what a right answer holds.
"""

from __future__ import annotations

import csv
import datetime
import io
import json
import random
import unicodedata
from dataclasses import dataclass
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from synthesis.environments.projects.ledgers import CENT, YEAR, Ledger, quarter_months

if TYPE_CHECKING:
    from synthesis.environments.projects.folder import Part

# Names a team gives its item categories: neutral enough for any ledger's items.
CATEGORY_NAMES = ("Core", "Extras", "Premium", "Essentials", "Specialist", "Seasonal")
# What the item table's category column is called, unless the ledger has a column so named.
CATEGORY_COLUMNS = ("category", "budget_line")
# When the table's rows first applied: before any ledger, this year's or last year's.
BASE_DATES = ("2022-01-01", "2022-07-01", "2023-01-01")

FIRST_NAMES = (
    "Zoë", "José", "Renée", "Björn", "Chloé", "Siobhán", "Amara", "Daniel", "Priya", "Tom",
    "Grace", "Omar", "Lena", "Marco", "Hannah", "Kofi", "Ines", "Sam", "Yuki", "Ruth",
)  # fmt: skip
LAST_NAMES = (
    "Martin", "García", "Okafor", "Lindqvist", "Patel", "Nowak", "Byrne", "Rossi", "Evans",
    "Müller", "Haddad", "Kim", "Moreau", "Silva", "O'Neill", "Brennan",
)  # fmt: skip
DOMAINS = ("example.com", "example.org", "example.net", "gmail.com")
COUNTRIES = ("Ireland", "Spain", "Germany", "France", "Portugal", "Netherlands", "Poland")
PEOPLE = (9, 12)  # how many people the contacts export holds


@dataclass(frozen=True)
class ItemEntry:
    """One row of an item table: from `effective_from` on, the item is in `category` and costs
    `unit_cost` a unit."""

    item: str
    category: str
    unit_cost: Decimal
    effective_from: str  # YYYY-MM-DD


@dataclass(frozen=True)
class GroupEntry:
    """One group of the groups file: its manager, country and target per quarter."""

    name: str
    manager: str
    country: str
    targets: dict[str, int]  # "2024-Q1" -> target


@dataclass(frozen=True)
class Contact:
    """One record of the contacts export, as the file has it (spaces and case included)."""

    id: int
    name: str
    email: str
    group: str
    updated: str  # YYYY-MM-DD
    merged_into: int | None = None


@dataclass(frozen=True)
class ReferenceData:
    """What the reference files were written from."""

    item_field: str  # the ledger's item column, the tables' key
    category_column: str
    items_path: str  # the real item table
    draft_path: str  # the older draft whose name sounds newer
    entries: tuple[ItemEntry, ...]  # the real table's rows, in file order
    draft_entries: tuple[ItemEntry, ...]
    missing: str  # an item the ledgers use that the real table does not list
    changed: str  # the item listed twice, its cost changed on a date
    groups_path: str
    groups: tuple[GroupEntry, ...]  # in file order
    contacts_path: str
    contacts: tuple[Contact, ...]  # every record, in file order
    person: dict[int, int]  # record id -> the id of that person's current record

    def entry_on(self, item: str, day: str, entries: tuple[ItemEntry, ...] | None = None):
        """The row of the table that applies to `item` on `day` (the latest `effective_from`
        on or before it), or None when the table does not list the item."""
        dated = [e for e in entries or self.entries if e.item == item and e.effective_from <= day]
        return max(dated, key=lambda e: e.effective_from, default=None)

    @property
    def current(self) -> list[Contact]:
        """Each person once, as their most recent record says, in id order."""
        by_id = {c.id: c for c in self.contacts}
        return [by_id[i] for i in sorted(set(self.person.values()))]


def plural(word: str) -> str:
    """A field name as a file of its values is called: "product" -> "products"."""
    if word.endswith("y") and word[-2:-1] not in tuple("aeiou"):
        return word[:-1] + "ies"
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    return word + "s"


def reference_data(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random) -> Part:
    """The reference part of a project folder (a `folder.PARTS` maker)."""
    # folder.py lists this maker in its PARTS, so its Part is imported when called.
    from synthesis.environments.projects.folder import Part

    category_column = next(c for c in CATEGORY_COLUMNS if c not in ledger.columns)
    # "<item>_list", not the plural: a ledger may be named for its items ("treatments" of
    # treatment), and a table of that name beside it would pass for one of its files.
    items_stem = f"data/reference/{ledger.item_field}_list"
    entries, draft, missing, changed = _item_tables(vocabulary, ledger, rng)
    groups = _groups(vocabulary, ledger, rng)
    contacts, person = _contacts(vocabulary, ledger, rng)
    truth = ReferenceData(
        item_field=ledger.item_field,
        category_column=category_column,
        items_path=f"{items_stem}.csv",
        draft_path=f"{items_stem}_final_v2.csv",
        entries=entries,
        draft_entries=draft,
        missing=missing,
        changed=changed,
        groups_path=f"data/reference/{plural(ledger.group_field)}.json",
        groups=groups,
        contacts_path="data/exports/contacts.jsonl",
        contacts=contacts,
        person=person,
    )
    files = {
        truth.items_path: _table_text(truth, entries),
        truth.draft_path: _table_text(truth, draft),
        truth.groups_path: _groups_text(ledger, groups),
        truth.contacts_path: _contacts_text(ledger, contacts),
    }
    return Part(files=files, truth=truth, readme=_readme(ledger, truth))


# --------------------------------------------------------------------------- the item table


def _item_tables(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random):
    """The real table, the older draft, the item the real one leaves out and the item whose
    cost changed (on a day of the ledgers' half year, after its first month)."""
    items = sorted(vocabulary["items"])
    missing = rng.choice(items)
    listed = [i for i in items if i != missing]
    names = rng.sample(CATEGORY_NAMES, 2)
    order = rng.sample(listed, len(listed))
    # Every category holds an item; the rest fall where they may.
    category = {
        item: names[i] if i < len(names) else rng.choice(names) for i, item in enumerate(order)
    }
    since = rng.choice(BASE_DATES)
    cost = {item: _cost(vocabulary["items"][item], rng) for item in items}
    changed = rng.choice(listed)
    new_cost = (cost[changed] * Decimal(str(rng.uniform(1.08, 1.3)))).quantize(CENT)
    changed_on = f"{YEAR}-{rng.choice(ledger.period[1:5]):02d}-{rng.choice((1, 15)):02d}"
    entries: list[ItemEntry] = []
    for item in listed:
        old = ItemEntry(item, category[item], cost[item], since)
        if item == changed:
            new = ItemEntry(item, category[item], new_cost, changed_on)
            # Listed newest first as often as oldest first: a reader taking the first or the
            # last row it meets is right only by luck.
            entries += [old, new] if rng.random() < 0.5 else [new, old]
        else:
            entries.append(old)
    # The draft predates the change and the table's last tidy-up: it still lists the missing
    # item, files one item under the other category and has an older cost for another.
    moved = rng.choice(listed)
    cheaper = rng.choice([i for i in listed if i != moved] or listed)
    draft = []
    for item in items:
        entry_category = category.get(item, rng.choice(names))
        if item == moved:
            entry_category = names[1] if category[item] == names[0] else names[0]
        entry_cost = cost[item]
        if item == cheaper:
            entry_cost = (entry_cost * Decimal("0.9")).quantize(CENT)
        draft.append(ItemEntry(item, entry_category, entry_cost, since))
    return tuple(entries), tuple(draft), missing, changed


def _cost(price_range: list[float], rng: random.Random) -> Decimal:
    """What a unit costs the team: below the lowest price it is sold at."""
    low = price_range[0]
    return max(
        Decimal("0.50"), Decimal(str(round(rng.uniform(0.35, 0.75) * low, 2))).quantize(CENT)
    )


def _table_text(truth: ReferenceData, entries: tuple[ItemEntry, ...]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([truth.item_field, truth.category_column, "unit_cost", "effective_from"])
    for e in entries:
        writer.writerow([e.item, e.category, f"{e.unit_cost:.2f}", e.effective_from])
    return out.getvalue()


# --------------------------------------------------------------------------- the groups file


def quarter_key(quarter: int, year: int = YEAR) -> str:
    """How the groups file names a quarter's target: "2024-Q3"."""
    return f"{year}-Q{quarter}"


def target_quarters(ledger: Ledger) -> tuple[str, ...]:
    """The quarters the groups file holds targets for: the quarter before the ledgers' half
    year, its two, and the quarter after (the year's last, or next year's first)."""
    first, second = ledger.quarters
    before = quarter_key(4, YEAR - 1) if first == 1 else quarter_key(first - 1)
    after = quarter_key(1, YEAR + 1) if second == 4 else quarter_key(second + 1)
    return (before, quarter_key(first), quarter_key(second), after)


def _groups(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random):
    """Each group with a manager, a country and targets near what it truly did, so a share
    achieved is a plausible percentage (some over 100)."""
    names = [f"{f} {last}" for f in FIRST_NAMES[6:] for last in LAST_NAMES[:8]]
    managers = rng.sample(names, len(vocabulary["groups"]))
    # The half's quarters are set against what was done in them; the others, which no
    # ledger shows, against the half's first quarter.
    held = {quarter_key(q): quarter_months(q) for q in ledger.quarters}
    keys = target_quarters(ledger)
    out = []
    for name, manager in zip(vocabulary["groups"], managers, strict=True):
        done = {q: _done(ledger, name, held.get(q, ledger.period[:3])) for q in keys}
        targets = {
            q: max(100, round(float(done[q]) * rng.uniform(0.75, 1.3) / 100) * 100) for q in keys
        }
        # A share exactly halfway between two tenths rounds one way or the other by how a
        # program computes it: a target is moved off such a tie.
        for quarters in (*((q,) for q in held), tuple(held)):
            while _halfway(sum(done[q] for q in quarters), sum(targets[q] for q in quarters)):
                targets[quarters[-1]] += 100
        out.append(GroupEntry(name, manager, rng.choice(COUNTRIES), targets))
    return tuple(out)


def _done(ledger: Ledger, group: str, months: tuple[int, ...]) -> Decimal:
    """What a group truly did in `months`: its counted rows' amounts."""
    rows = [r for m in months for r in ledger.months[m] if r.group == group and ledger.counted(r)]
    return sum((r.amount for r in rows), Decimal(0))


def _halfway(total: Decimal, target: int) -> bool:
    """Whether total / target as a percentage lies exactly halfway between two tenths."""
    twentieths = total * 2000 / target
    return twentieths == twentieths.to_integral_value() and int(twentieths) % 2 == 1


def _groups_text(ledger: Ledger, groups: tuple[GroupEntry, ...]) -> str:
    records = [
        {
            ledger.group_field: g.name,
            "manager": g.manager,
            "country": g.country,
            "targets": g.targets,
        }
        for g in groups
    ]
    return json.dumps(records, indent=2, ensure_ascii=False) + "\n"


# --------------------------------------------------------------------------- the contacts


@dataclass
class _Person:
    first: str
    last: str
    email: str
    group: str


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _local(*parts: str) -> str:
    """An address's part before the @ as a CRM makes it from a name: "Zoë", "O'Neill" ->
    "zoe.oneill"."""
    return ".".join(_ascii(p).lower().replace("'", "") for p in parts)


def _people(vocabulary: dict[str, Any], rng: random.Random) -> list[_Person]:
    """Distinct people: one with an accented first name, one Gmail user, and two who share a
    name (different addresses: not the same person)."""
    count = rng.randint(*PEOPLE)
    firsts = rng.sample(FIRST_NAMES[1:], count - 1)
    firsts.insert(rng.randrange(count), FIRST_NAMES[0])  # a Zoë: the accent a retyped record loses
    lasts = [rng.choice(LAST_NAMES) for _ in range(count)]
    people = []
    for index, (first, last) in enumerate(zip(firsts, lasts, strict=True)):
        domain = DOMAINS[index % (len(DOMAINS) - 1)]
        email = f"{_local(first, last)}@{domain}"
        people.append(_Person(first, last, email, rng.choice(vocabulary["groups"])))
    gmail = rng.choice(people)
    gmail.email = gmail.email.split("@")[0] + "@gmail.com"
    # A namesake: another person of the same name, at another address. Not Zoë's: her
    # retyped record's unaccented name would hide a merge by name.
    twin = rng.choice([p for p in people if p.first != FIRST_NAMES[0]])
    domain = next(d for d in DOMAINS[:3] if not twin.email.endswith(d))
    email = f"{_local(twin.first, twin.last, str(rng.randint(2, 9)))}@{domain}"
    namesake = _Person(twin.first, twin.last, email, rng.choice(vocabulary["groups"]))
    people.insert(rng.randrange(len(people) + 1), namesake)
    return people


def _identity(email: str) -> str:
    """Who an address belongs to, by the README's rule."""
    local, _, domain = email.strip().lower().partition("@")
    if domain == "gmail.com":
        local = local.replace(".", "")
    return f"{local}@{domain}"


def _contacts(vocabulary: dict[str, Any], ledger: Ledger, rng: random.Random):
    """The export's records (each person once, some more than once in a near-duplicate form,
    one through a merge) and, for each record, the id of its person's current record."""
    people = _people(vocabulary, rng)
    if len({_identity(p.email) for p in people}) != len(people):
        raise ValueError("two people drawn with one address")
    # (person, name, email, group, merged): a record before ids and dates are given.
    drafts: list[tuple[int, str, str, str, bool]] = []
    for index, p in enumerate(people):
        drafts.append((index, f"{p.first} {p.last}", p.email, p.group, False))
    zoe = next(i for i, p in enumerate(people) if p.first == FIRST_NAMES[0])
    gmail = next(i for i, p in enumerate(people) if p.email.endswith("@gmail.com"))
    others = [i for i in range(len(people)) if i not in (zoe, gmail)]
    cased, spaced, merged = rng.sample(others, 3)
    p = people[zoe]
    drafts.append((zoe, f"{_ascii(p.first)} {p.last}", p.email, p.group, False))
    p = people[gmail]
    local, _, domain = p.email.partition("@")
    drafts.append(
        (gmail, f"{p.first} {p.last}", local.replace(".", "") + "@" + domain, p.group, False)
    )
    p = people[cased]
    # Re-entered in capitals after the person moved to another group: whichever of the two
    # records is later says where they are now.
    moved = rng.choice([g for g in vocabulary["groups"] if g != p.group])
    drafts.append((cased, f"{p.first} {p.last}", p.email.title(), moved, False))
    p = people[spaced]
    drafts.append((spaced, f" {p.first}  {p.last}", f" {p.email} ", p.group, False))
    p = people[merged]
    old = f"{_local(p.first)[0]}{_local(p.last)}@example.net"  # an old address, merged since
    drafts.append((merged, f"{p.first} {p.last}", old, p.group, True))
    # Ids in creation order: each person's first record, then the later ones, in a draw.
    later = drafts[len(people) :]
    ordered = drafts[: len(people)] + rng.sample(later, len(later))
    main_id = {person: 1001 + n for n, (person, *_) in enumerate(ordered[: len(people)])}
    # Distinct update days of the half year: a person's latest record is the current one, by
    # any reader. A merged record is older than the records of its person that remain.
    days = rng.sample(range(180), len(ordered))
    for n, (person, *_, is_merged) in enumerate(ordered):
        if is_merged:
            oldest = min((m for m, d in enumerate(ordered) if d[0] == person), key=days.__getitem__)
            days[n], days[oldest] = days[oldest], days[n]
    records = tuple(
        Contact(
            1001 + n, name, email, group, _day(ledger, days[n]), main_id[person] if merged else None
        )
        for n, (person, name, email, group, merged) in enumerate(ordered)
    )
    current: dict[int, Contact] = {}
    for (person, *_), record in zip(ordered, records, strict=True):
        best = current.get(person)
        if record.merged_into is None and (best is None or record.updated > best.updated):
            current[person] = record
    return records, {r.id: current[d[0]].id for d, r in zip(ordered, records, strict=True)}


def _day(ledger: Ledger, offset: int) -> str:
    """The day `offset` days after the ledgers' half year began (within it)."""
    start = datetime.date(YEAR, ledger.period[0], 1)
    return (start + datetime.timedelta(days=offset)).isoformat()


def _contacts_text(ledger: Ledger, contacts: tuple[Contact, ...]) -> str:
    lines = []
    accented = 0
    for c in contacts:
        record: dict[str, Any] = {
            "id": c.id,
            "name": c.name,
            "email": c.email,
            ledger.group_field: c.group,
            "updated": c.updated,
        }
        if c.merged_into is not None:
            record["merged_into"] = c.merged_into
        # Records written by two export tools in turn: one writes "Zoë" as it is, the other
        # as "Zo\u00eb" (a grep for the name finds only one of them).
        if not c.name.isascii():
            accented += 1
        lines.append(json.dumps(record, ensure_ascii=accented % 2 == 0))
    return "\n".join(lines) + "\n"


def _readme(ledger: Ledger, truth: ReferenceData) -> str:
    item, group = ledger.item_field.replace("_", " "), ledger.group_field.replace("_", " ")
    return (
        "## Reference data\n\n"
        f"- `{truth.items_path}` is the {item} table: each {item}'s "
        f"`{truth.category_column}` and `unit_cost`. When a {item} is listed more than once its "
        "cost changed: the row with the latest `effective_from` on or before a row's date is "
        "the one that applies to it.\n"
        f"- `{truth.draft_path}` is an old draft, whatever its name says: "
        f"`{truth.items_path.rsplit('/', 1)[1]}` replaced it. Do not use it.\n"
        f"- `{truth.groups_path}` lists each {group} with its manager, country and its "
        f'target per quarter (`targets`, keyed like "{quarter_key(ledger.quarters[0])}").\n'
        f"- `{truth.contacts_path}` is the CRM's contact export, one JSON record a line. It "
        "repeats people: one email address is one person, whatever its case or the spaces "
        "around it, and at gmail.com the dots before the @ do not matter. A record with "
        "`merged_into` was merged into the record with that id. A person's most recently "
        "`updated` record is their current one.\n"
    )
