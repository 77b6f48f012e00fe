"""The `project_topic` stage: a model writes the vocabulary of a mined `project` topic.

A project topic is a team's data folder (synthesis.environments.projects): monthly ledgers
of one kind of row (sales, expenses), grouped by one field (a region), one item field with
each item's amount range, a status field with the statuses that count and those that do
not. The topic stage names the business; this stage writes what its folder holds, as JSON
under a strict schema, so a mined project topic has its own data rather than a copy of a
catalogue topic's.

What the model writes becomes file names, CSV headers, dict keys and string literals in the
gold programs, table cells the checks compare, and the README's rules. So an answer is
taken only when every name is safe there (fields are lowercase identifiers, distinct, none
the name of a column the reports add; item, group and status names are short words with no
commas, pipes, quotes or path separators, none both counted and void), the lists are neither
trivial nor huge, the amounts are sane, it is no copy of a catalogue topic, and our own code
accepts it: the spec validates (`validate_project_spec`), the folder is made, its ledger
files are not mistaken for the folder's other files, and every kind of task is planned over
it. Every problem is listed at once, so the one repair can fix them all. The proofs (the
gold program passing in the sandbox, every mistake failing) come later, in the build, as for
the catalogue's topics; a rejected answer leaves no topic and a reason `project_topic: <why>`.
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.archetypes.project import (
    OPTIONAL_VERBS,
    REQUIRED,
    validate_project_spec,
)
from synthesis.environments.projects.folder import Project, project_folder
from synthesis.environments.projects.ledgers import ARCHIVE_YEAR
from synthesis.environments.specgen import generate_spec
from synthesis.hashing import derive_seed
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Topic
from synthesis.tasks.projects.scenarios import KINDS, plan_project_tasks

STAGE = "project_topic"
# One repair: the rejection lists every problem, so a second chance is enough to fix them,
# and a model that cannot is not asked a third time.
REPAIRS = 1
MAX_PROBLEMS = 12
# Field names become CSV headers, dict keys in the gold programs and parts of file names.
FIELD = r"^[a-z][a-z0-9_]*$"
MAX_FIELD = 30
# Item, group and status names are cells and literals: letters first, then letters, digits,
# spaces, underscores (status codes: "no_show") and a little punctuation; never a comma
# (CSV), pipe (Markdown tables), quote, backtick (the README's rules quote statuses), slash
# or backslash (paths).
NAME = re.compile(r"[A-Za-z][A-Za-z0-9 _&'+.()-]*")
MAX_NAME = 40
GROUPS = (2, 8)  # one group makes a total per group a copy of the grand total
ITEMS = (2, 8)
STATUSES = (1, 4)
MAX_FEATURES = 6
# Amounts a month's rows are drawn from: cents from a unit up to a large invoice.
MIN_AMOUNT = 1
MAX_AMOUNT = 100_000
# Every ledger has a `date` column beside the topic's fields; reports by group or by item
# add "Rows" and "Total" columns beside the field's own (a field called so would make a
# table with two columns of one name).
DATE_FIELD = "date"
REPORT_COLUMNS = ("total", "rows")
EXAMPLE_TOPIC = "regional_sales_reports"
CURRENCY = r"^[A-Z]{3}$"

_FIELDS = ("ledger", "group_field", "item_field", "status_field", "amount_field")
_REPORTED = ("group_field", "item_field")  # fields whose values head a report's rows
_NAMES = {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": MAX_NAME}}
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        **{name: {"type": "string", "pattern": FIELD, "maxLength": MAX_FIELD} for name in _FIELDS},
        "groups": {**_NAMES, "minItems": GROUPS[0], "maxItems": GROUPS[1]},
        "items": {
            "type": "array",
            "minItems": ITEMS[0],
            "maxItems": ITEMS[1],
            "items": {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "minLength": 1, "maxLength": MAX_NAME},
                    "low": {"type": "number"},
                    "high": {"type": "number"},
                },
                "required": ["name", "low", "high"],
                "additionalProperties": False,
            },
        },
        "statuses": {**_NAMES, "minItems": STATUSES[0], "maxItems": STATUSES[1]},
        "void_statuses": {**_NAMES, "minItems": STATUSES[0], "maxItems": STATUSES[1]},
        "currency": {"type": "string", "pattern": CURRENCY},
        "features": {
            "type": "array",
            "maxItems": MAX_FEATURES,
            "items": {"type": "string", "enum": list(OPTIONAL_VERBS)},
        },
    },
    # What the archetype requires (its title is the topic's), and what it would default.
    "required": [
        *(key for key in REQUIRED if key != "title"),
        "amount_field",
        "currency",
        "features",
    ],
    "additionalProperties": False,
}


def _answer_form(vocabulary: dict[str, Any]) -> dict[str, Any]:
    """A vocabulary as the schema writes it (items a list, not a mapping)."""
    items = [{"name": n, "low": lo, "high": hi} for n, (lo, hi) in vocabulary["items"].items()]
    answer = {key: vocabulary[key] for key in SCHEMA["required"] if key in vocabulary}
    return {**answer, "items": items, "amount_field": vocabulary.get("amount_field", "amount")}


def example_vocabulary() -> dict[str, Any]:
    """The vocabulary the prompt shows: a catalogue topic's (so it follows the catalogue)."""
    from synthesis.environments.topics import load_catalogue

    return next(t for t in load_catalogue() if t.topic_id == EXAMPLE_TOPIC).vocabulary


PROMPT = (
    "You design the data folder of a team that works on its files with a shell: monthly CSV "
    "ledgers of one kind of row (sales, expense claims, invoices), which the team totals "
    "into reports. Given the business, write what its ledgers hold: `ledger` (the files' "
    "name, e.g. sales_2024-01.csv), `group_field` and its `groups` (what reports total by, "
    "e.g. a region: 2 to 8 names), `item_field` and its `items` (what a row is for, 2 to 8, "
    "each with the `low` and `high` amount one row of it costs, in the currency, between "
    f"{MIN_AMOUNT} and {MAX_AMOUNT}), `amount_field`, `status_field` with the `statuses` "
    "whose rows count and the `void_statuses` whose rows do not (1 to 4 each, none in both), "
    "an ISO `currency` code, and `features`: the extra shell verbs the team uses (0 to "
    f"{MAX_FEATURES} of {', '.join(OPTIONAL_VERBS)}). Field and ledger names are lowercase "
    "identifiers (a-z, digits, underscores), all different, none called "
    f"{DATE_FIELD}, and the group and item fields not {' or '.join(REPORT_COLUMNS)}. "
    "Group, item and status names are short words as the team "
    "writes them (start with a letter; no commas, double quotes, pipes, slashes or backticks), "
    "different from each other. Make them fit the business; do not copy the example. Answer "
    "with the JSON object only. Example (a sales team):\n"
    + json.dumps(_answer_form(example_vocabulary()), separators=(",", ":"))
)


@dataclass
class WrittenVocabulary:
    """The vocabulary a model wrote for a topic (None when none was usable), and why not."""

    topic_id: str
    vocabulary: dict[str, Any] | None
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)


def vocabulary_of(title: str, value: dict[str, Any]) -> dict[str, Any]:
    """The answer as a project vocabulary (synthesis.environments.archetypes.project)."""
    return {
        "title": title,
        "ledger": value["ledger"],
        "group_field": value["group_field"],
        "groups": list(value["groups"]),
        "item_field": value["item_field"],
        "items": {item["name"]: [item["low"], item["high"]] for item in value["items"]},
        "status_field": value["status_field"],
        "statuses": list(value["statuses"]),
        "void_statuses": list(value["void_statuses"]),
        "amount_field": value["amount_field"],
        "currency": value["currency"],
        "features": list(value["features"]),
    }


def with_vocabulary(topic: Topic, vocabulary: dict[str, Any]) -> Topic:
    """`topic` with `vocabulary`, validated as a catalogue entry is (word lengths)."""
    return Topic.model_validate({**topic.model_dump(), "vocabulary": vocabulary})


# --------------------------------------------------------------------------- the checks


def _key(name: str) -> str:
    # As the checks compare cells: case-folded, runs of whitespace as one.
    return " ".join(name.split()).casefold()


def _slug(name: str) -> str:
    # As a group's report is named (synthesis.tasks.projects.ledger_reports).
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-")


def field_problems(value: dict[str, Any]) -> list[str]:
    """The ledger's and the fields' names: identifiers, distinct, none a column we add."""
    problems = []
    for name in _FIELDS:
        text = value[name]
        if not re.fullmatch(FIELD, text) or len(text) > MAX_FIELD:
            problems.append(
                f"{name} {text!r}: a lowercase identifier (a-z, 0-9, _) of at most "
                f"{MAX_FIELD} characters"
            )
    columns = [value[name] for name in _FIELDS[1:]]
    twins = sorted({c for c in columns if columns.count(c) > 1})
    if twins:
        problems.append(f"fields {twins} name two columns; every field needs its own name")
    for name in _FIELDS[1:]:
        reserved = (DATE_FIELD, *REPORT_COLUMNS) if name in _REPORTED else (DATE_FIELD,)
        if _key(value[name].replace("_", " ")) in reserved:
            problems.append(f"{name} {value[name]!r}: a column the ledgers or reports have")
    return problems


def name_problems(key: str, names: list[str]) -> list[str]:
    """Group, item or status names: safe as cells and literals, none twice."""
    problems = [
        f"{key} {name!r}: start with a letter; letters, digits, spaces and _ & ' + . ( ) - only"
        for name in names
        if not NAME.fullmatch(name) or "  " in name or name != name.strip()
    ]
    keys = [_key(n) for n in names]
    twins = sorted({n for n, k in zip(names, keys, strict=True) if keys.count(k) > 1})
    if twins:
        problems.append(f"{key} {twins}: the same name twice (case and spaces aside)")
    return problems


def amount_problems(items: list[dict[str, Any]]) -> list[str]:
    """Each item's amount range: a real range within the bounds a ledger row may take."""
    problems = []
    for item in items:
        low, high = item["low"], item["high"]
        if not (MIN_AMOUNT <= low < high <= MAX_AMOUNT):
            problems.append(
                f"item {item['name']!r}: amounts [{low}, {high}] must satisfy "
                f"{MIN_AMOUNT} <= low < high <= {MAX_AMOUNT}"
            )
    return problems


def list_problems(value: dict[str, Any]) -> list[str]:
    """The lists' sizes, the features and the currency code."""
    sizes = {
        "groups": GROUPS,
        "items": ITEMS,
        "statuses": STATUSES,
        "void_statuses": STATUSES,
    }
    problems = [
        f"{key}: {len(value[key])} given; {low} to {high} expected"
        for key, (low, high) in sizes.items()
        if not low <= len(value[key]) <= high
    ]
    features = value["features"]
    if len(set(features)) != len(features) or len(features) > MAX_FEATURES:
        problems.append(f"features: at most {MAX_FEATURES}, each once")
    unknown = sorted(set(features) - set(OPTIONAL_VERBS))
    if unknown:
        problems.append(f"features {unknown}: not among {', '.join(OPTIONAL_VERBS)}")
    if not re.fullmatch(CURRENCY, value["currency"]):
        problems.append(f"currency {value['currency']!r}: a three-letter ISO code")
    return problems


def answer_problems(value: dict[str, Any], taken: Iterable[dict[str, Any]] = ()) -> list[str]:
    """What is wrong with a schema-valid answer before our code reads it: every problem."""
    items = [item["name"] for item in value["items"]]
    problems = field_problems(value) + list_problems(value)
    for key, names in (("groups", value["groups"]), ("items", items)):
        problems += name_problems(key, names)
    problems += name_problems("statuses", value["statuses"])
    problems += name_problems("void_statuses", value["void_statuses"])
    both = sorted({_key(s) for s in value["statuses"]} & {_key(s) for s in value["void_statuses"]})
    if both:
        problems.append(f"statuses {both}: both counted and void")
    slugs = [_slug(g) for g in value["groups"]]
    if len(set(slugs)) != len(slugs):
        problems.append("groups: two of them make one report file name (letters and digits)")
    problems += amount_problems(value["items"])
    for copied in taken:
        if _same_data(value, copied):
            problems.append(
                f"a copy of the catalogue's {copied.get('title', 'topic')!r} folder (its "
                "groups and items): write this business's own"
            )
    return problems


def _same_data(value: dict[str, Any], other: dict[str, Any]) -> bool:
    # The same groups and items are the same rows whatever the files and fields are called.
    groups = {_key(g) for g in value["groups"]}
    items = {_key(i["name"]) for i in value["items"]}
    theirs = {_key(g) for g in other.get("groups", [])}, {_key(i) for i in other.get("items", {})}
    return (groups, items) == theirs


def folder_problems(project: Project) -> list[str]:
    """The ledger's files must not be mistaken for the folder's other files: its name is no
    other file's or folder's, and no other file takes the name the README gives ledgers."""
    ledger = project.ledger
    own = {ledger.path(m) for m in ledger.period}
    own |= {ledger.path(m, ARCHIVE_YEAR) for m in ledger.period}
    own |= set(ledger.backups)
    others = sorted(set(project.files) - own)
    stems = {posixpath.basename(p).split(".")[0] for p in others}
    stems |= {posixpath.basename(d) for d in project.dirs}
    problems = []
    if ledger.name in stems:
        problems.append(f"ledger {ledger.name!r}: the name of another file or folder")
    lookalikes = [p for p in others if posixpath.basename(p).startswith(f"{ledger.name}_")]
    if lookalikes:
        problems.append(f"ledger {ledger.name!r}: other files look like its ledgers {lookalikes}")
    return problems


def project_problems(topic: Topic) -> list[str]:
    """What our own code says of the vocabulary: the spec, the folder, the tasks."""
    try:
        spec = generate_spec(topic)
        problems = validate_project_spec(spec)
        if problems:
            return problems
        project = project_folder(spec.workspace, 0)
        problems = folder_problems(project)
        if problems:
            return problems
        plan_project_tasks(project, spec.workspace, 0, len(KINDS))
    except Exception as exc:  # noqa: BLE001 - whatever our code trips on rejects it, said why
        return [f"{type(exc).__name__}: {exc}"]
    return []


def vocabulary_fault(
    topic: Topic, value: dict[str, Any], taken: Iterable[dict[str, Any]] = ()
) -> str | None:
    """Why `value` cannot be `topic`'s vocabulary, or None (`accept` of the structured call).
    `taken`: the catalogue's project vocabularies, which it must not copy."""
    problems = answer_problems(value, taken)
    if not problems:
        try:
            written = with_vocabulary(topic, vocabulary_of(topic.title, value))
        except ValueError as exc:
            return f"topic: {exc}"
        problems = [f"project: {p}" for p in project_problems(written)]
    if not problems:
        return None
    more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
    return "vocabulary: " + "; ".join(problems[:MAX_PROBLEMS]) + more


# --------------------------------------------------------------------------- the model's part


def request_messages(topic: Topic, request: str) -> list[dict[str, Any]]:
    """The topic as the model sees it: the business and the request that suggested it."""
    shown = {"title": topic.title, "description": topic.description, "request": request}
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "Topic: " + json.dumps(shown, sort_keys=True)},
    ]


def write_vocabulary(
    client: LLMClient,
    topic: Topic,
    request: str,
    *,
    seed: int = 0,
    taken: Iterable[dict[str, Any]] = (),
) -> WrittenVocabulary:
    """The model's vocabulary for the project `topic` (its id, title and description set;
    its vocabulary ignored) when it passes every check, else None and the reason
    (`project_topic: <why>`). `request`: the corpus request the topic was mined from."""
    # The example is the answer a model most likely copies, whatever the build's catalogue.
    taken = [*taken, example_vocabulary()]
    try:
        answer = ask_structured(
            client,
            request_messages(topic, request),
            stage=STAGE,
            artifact_id=topic.topic_id,
            schema=SCHEMA,
            repairs=REPAIRS,
            seed=derive_seed(STAGE, topic.topic_id, seed),
            accept=lambda value: vocabulary_fault(topic, value, taken),
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return WrittenVocabulary(topic.topic_id, None, f"{STAGE}: {exc.reason}", exc.attempts)
    vocabulary = vocabulary_of(topic.title, answer.value)
    return WrittenVocabulary(topic.topic_id, vocabulary, None, answer.attempts)
