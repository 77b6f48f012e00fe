"""Project folders (synthesis/environments/projects/): the noise real folders have, and rows
that are what the files say."""

from __future__ import annotations

import csv
import io
import json
import re
from decimal import Decimal

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import (
    CORE_VERBS,
    build_project_spec,
    validate_project_spec,
)
from synthesis.environments.build import build_environment
from synthesis.environments.projects.folder import folder_half, project_folder
from synthesis.environments.projects.ledgers import ARCHIVE_YEAR, CORRECTIONS_PATH, HALVES, YEAR
from synthesis.environments.shape import program_shape
from synthesis.models import Topic


def project_topics() -> list[Topic]:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"]


@pytest.fixture(scope="module")
def vocabulary() -> dict:
    return build_project_spec(project_topics()[0]).workspace


def _parsed(text: str) -> list[dict]:
    # As a careful reader parses it: the byte-order mark and either line ending.
    return list(csv.DictReader(io.StringIO(text.lstrip("\ufeff"), newline="")))


def test_the_same_seed_makes_the_same_folder_and_another_seed_another(vocabulary):
    assert project_folder(vocabulary, 4).tree() == project_folder(vocabulary, 4).tree()
    assert project_folder(vocabulary, 4).files != project_folder(vocabulary, 5).files


def test_the_folder_has_the_noise_real_folders_have(vocabulary):
    project = project_folder(vocabulary, 4)
    files, ledger = project.files, project.ledger
    ledgers = [ledger.path(m) for m in ledger.period]
    assert all(p in files for p in ledgers)
    assert all(ledger.path(m, ARCHIVE_YEAR) in files for m in ledger.period)
    (backup,) = ledger.backups
    assert backup.startswith("data/") and backup not in ledgers and files[backup] != ""
    assert sum("\r\n" in files[p] for p in ledgers) == 1
    assert sum(files[p].startswith("\ufeff") for p in ledgers) == 1
    rows = [r for m in ledger.period for r in ledger.months[m]]
    assert any(r.status in ledger.void_statuses for r in rows)
    assert any(r.amount is None for r in rows)
    assert any(r.amount is not None and r.amount >= 1000 for r in rows)
    assert ledger.repeats and all(
        ledger.counted(r) for repeated in ledger.repeats.values() for r in repeated
    )
    assert '"' in "".join(files[p] for p in ledgers)  # a separated amount is quoted
    readme = files["README.md"]
    assert all(f"`{s}`" in readme for s in ledger.void_statuses)
    assert "backups" in readme and "empty" in readme and "repeat" in readme
    assert {"config/report.yaml", "logs/import.log"} <= set(files)


def test_the_rows_are_what_the_files_say(vocabulary):
    project = project_folder(vocabulary, 9)
    ledger = project.ledger
    assert ledger.half == 2  # the second half's months: two digits, a new year's import
    for month in ledger.period:
        lines = _parsed(project.files[ledger.path(month)])
        # A repeated export line follows its row; the rows themselves are distinct.
        parsed = [line for i, line in enumerate(lines) if i == 0 or line != lines[i - 1]]
        assert len(lines) - len(parsed) == len(ledger.repeats.get(month, []))
        assert len(parsed) == len(ledger.months[month])
        for line, row in zip(parsed, ledger.months[month], strict=True):
            text = line[ledger.amount_field].replace(",", "")
            assert (Decimal(text) if text else None) == row.amount
            assert (line["date"], line[ledger.group_field], line[ledger.status_field]) == (
                row.day,
                row.group,
                row.status,
            )
    # The backup is a stale copy: fewer rows, and an amount that was corrected since.
    ((path, stale),) = ledger.backups.items()
    month = int(path.split("-")[1][:2])
    assert len(stale) < len(ledger.months[month])
    assert stale != ledger.months[month][: len(stale)]


def test_a_folder_covers_the_half_year_its_seed_draws_and_nothing_of_the_other(vocabulary):
    # About half the folders are of each half, whatever the topic.
    shares = [folder_half(seed) for seed in range(400)]
    assert 0.4 < shares.count(2) / len(shares) < 0.6
    halves = set()
    for seed in range(8):
        project = project_folder(vocabulary, seed)
        ledger, files = project.ledger, project.files
        halves.add(ledger.half)
        assert ledger.period == HALVES[folder_half(seed)] == tuple(sorted(ledger.months))
        assert ledger.quarters == (2 * ledger.half - 1, 2 * ledger.half)
        # This year's ledgers and last year's are of the half's months, each row of its file's.
        named = sorted(p for p in files if re.fullmatch(rf"(data|archive/\d+)/{ledger.name}_.*", p))
        months = {int(p.split("-")[-1][:2]) for p in named}
        assert months == set(ledger.period), named
        dated = re.findall(r"^(\d{4})-(\d\d)-\d\d,", "\n".join(files[p] for p in named), re.M)
        assert {int(m) for _, m in dated} == set(ledger.period)
        assert {int(y) for y, _ in dated} == {YEAR, ARCHIVE_YEAR}
        (backup,) = ledger.backups
        assert int(backup.split(f"{YEAR}-")[1][:2]) in ledger.period[:3]
        # The import log has a line a month, each month imported early the next one.
        log = files["logs/import.log"].splitlines()
        assert all(ledger.path(m) in line for m, line in zip(ledger.period, log, strict=True))
        last = f"{YEAR + 1}-01" if ledger.half == 2 else f"{YEAR}-07"
        assert log[-1].startswith(last), log[-1]
    assert halves == {1, 2}


def test_each_correction_names_one_counted_row_of_a_ledger_and_changes_its_amount(vocabulary):
    for seed in range(6):
        project = project_folder(vocabulary, seed)
        ledger = project.ledger
        lines = _parsed(project.files[CORRECTIONS_PATH])
        assert [list(line) for line in lines[:1]] == [ledger.corrections_columns]
        assert len(lines) == len(ledger.corrections) >= 1
        for line, (row, right) in zip(lines, ledger.corrections, strict=True):
            amount = ledger.amount_field
            named = (
                line["date"],
                line[ledger.group_field],
                line[ledger.item_field],
                Decimal(line[amount].replace(",", "")),
            )
            matches = [
                r
                for r in ledger.months[int(row.day[5:7])]
                if (r.day, r.group, r.item, r.amount) == named
            ]
            # One counted row of the ledger: a correction is never ambiguous, never void.
            assert matches == [row] and ledger.counted(row)
            assert Decimal(line[f"corrected_{amount}"].replace(",", "")) == right != row.amount
            assert ledger.corrected(row).amount == right
        assert CORRECTIONS_PATH in project.files["README.md"]


def test_every_catalogue_topic_makes_a_valid_spec_of_its_own_program_shape():
    topics = project_topics()
    assert len(topics) >= 6
    shapes = set()
    for topic in topics:
        spec = build_project_spec(topic)
        assert validate_project_spec(spec) == [], topic.topic_id
        assert set(CORE_VERBS) <= {t.name for t in spec.tools}
        env = build_environment(spec)
        shapes.add(program_shape(env.code, env.class_name))
    assert len(shapes) == len(topics)  # one can be held out for test without the others


def test_a_broken_vocabulary_is_refused_with_its_reasons():
    topic = project_topics()[0]
    spec = build_project_spec(topic)
    broken = spec.model_copy(
        update={
            "workspace": {
                **spec.workspace,
                "items": {"Desk lamp": [50, 10]},
                "void_statuses": ["paid"],
                "features": ["teleport"],
            }
        }
    )
    problems = " | ".join(validate_project_spec(broken))
    assert "unknown project features ['teleport']" in problems
    assert "amounts must be [low, high]" in problems
    assert "cannot both count and be void" in problems
