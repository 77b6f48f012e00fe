"""The reference part of a project folder (synthesis/environments/projects/reference_data.py):
the files say what its truth says, and they have the noise real reference data has."""

from __future__ import annotations

import csv
import io
import json
import posixpath
from decimal import Decimal

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.projects.ledgers import YEAR
from synthesis.environments.projects.reference_data import target_quarters
from synthesis.models import Topic


def _vocabularies() -> list[dict]:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return [
        build_project_spec(Topic.model_validate(t)).workspace
        for t in catalogue["topics"]
        if t["archetype"] == "project"
    ]


@pytest.fixture(scope="module")
def vocabularies() -> list[dict]:
    return _vocabularies()


def _identity(email: str) -> str:
    # The README's rule, as a reader of it would write it.
    local, _, domain = email.strip().lower().partition("@")
    return (local.replace(".", "") if domain == "gmail.com" else local) + "@" + domain


def test_the_same_seed_makes_the_same_files_and_another_seed_others(vocabularies):
    first = project_folder(vocabularies[0], 7)
    ref = first.parts["reference_data"]
    paths = (ref.items_path, ref.draft_path, ref.groups_path, ref.contacts_path)
    again = project_folder(vocabularies[0], 7)
    other = project_folder(vocabularies[0], 8)
    assert [first.files[p] for p in paths] == [again.files[p] for p in paths]
    assert [first.files[p] for p in paths] != [other.files[p] for p in paths]


def test_the_item_tables_are_what_the_truth_says_with_their_traps(vocabularies):
    for vocabulary in vocabularies:
        for seed in range(6):
            project = project_folder(vocabulary, seed)
            ref, ledger = project.parts["reference_data"], project.ledger
            assert ref.items_path == f"data/reference/{ledger.item_field}_list.csv"
            # Never a name the ledger's own files could be taken for.
            assert not posixpath.basename(ref.items_path).startswith(ledger.name)
            assert ref.category_column not in ledger.columns
            table = list(csv.DictReader(io.StringIO(project.files[ref.items_path])))
            assert [
                (r[ref.item_field], r[ref.category_column], Decimal(r["unit_cost"])) for r in table
            ] == [(e.item, e.category, e.unit_cost) for e in ref.entries]
            used = {r.item for m in ledger.period for r in ledger.months[m] if ledger.counted(r)}
            listed = [r[ref.item_field] for r in table]
            # One item the ledgers use is missing; one is listed twice, its cost changed on a
            # day of the half year the ledgers cover, after its first month.
            assert ref.missing in used and ref.missing not in listed
            assert [i for i in listed if listed.count(i) > 1] == [ref.changed] * 2
            changes = [e for e in ref.entries if e.item == ref.changed]
            old, new = sorted(changes, key=lambda e: e.effective_from)
            assert old.unit_cost != new.unit_cost
            first, *_, last = ledger.period
            assert f"{YEAR}-{first + 1:02d}-01" <= new.effective_from <= f"{YEAR}-{last - 1:02d}-15"
            assert ref.entry_on(ref.changed, new.effective_from) == new
            assert ref.entry_on(ref.changed, f"{YEAR}-{first:02d}-01") == old
            # The draft is older and wrong: it lists the missing item, files one item under
            # the other category, and knows nothing of the change.
            draft = list(csv.DictReader(io.StringIO(project.files[ref.draft_path])))
            assert ref.missing in {r[ref.item_field] for r in draft}
            assert (
                {(e.item, e.category) for e in ref.draft_entries}
                - {(e.item, e.category) for e in ref.entries}
                - {(ref.missing, e.category) for e in ref.draft_entries}
            )
            assert all(r["effective_from"] < f"{YEAR}-01-01" for r in draft)


@pytest.mark.parametrize("seed", [3, 9])  # a folder of each half
def test_the_groups_file_has_every_group_and_plausible_targets(vocabularies, seed):
    for vocabulary in vocabularies:
        project = project_folder(vocabulary, seed)
        ref, ledger = project.parts["reference_data"], project.ledger
        groups = json.loads(project.files[ref.groups_path])
        assert [g[ledger.group_field] for g in groups] == list(vocabulary["groups"])
        assert groups == [
            {
                ledger.group_field: g.name,
                "manager": g.manager,
                "country": g.country,
                "targets": g.targets,
            }
            for g in ref.groups
        ]
        # The targets of the half's quarters, the one before it and the one after.
        halves = {f"{YEAR}-Q{q}" for q in ledger.quarters}
        for group in ref.groups:
            assert tuple(group.targets) == target_quarters(ledger) and halves < set(group.targets)
            assert all(isinstance(t, int) and t >= 100 for t in group.targets.values())
        said = f'keyed like "{YEAR}-Q{ledger.quarters[0]}"'
        assert said in project.files["README.md"]


def test_the_contacts_repeat_people_in_the_ways_exports_do(vocabularies):
    for vocabulary in vocabularies:
        for seed in range(6):
            project = project_folder(vocabulary, seed)
            ref = project.parts["reference_data"]
            text = project.files[ref.contacts_path]
            records = [json.loads(line) for line in text.splitlines()]
            assert [r["id"] for r in records] == [c.id for c in ref.contacts]
            assert [(r["name"], r["email"]) for r in records] == [
                (c.name, c.email) for c in ref.contacts
            ]
            current = {c.id for c in ref.current}
            merged = [r for r in records if "merged_into" in r]
            kept = {r["id"] for r in records if "merged_into" not in r}
            assert len(merged) == 1 and merged[0]["merged_into"] in kept
            people = {_identity(r["email"]) for r in records if "merged_into" not in r}
            # One person a current record; more records than people.
            assert len(people) == len(current) < len(records) - 1
            # Near-duplicates an exact comparison misses: case, spaces, Gmail's dots.
            emails = [r["email"] for r in records]
            assert len(set(emails)) > len(people) + 1
            assert any(e != e.strip() for e in emails) and any(e != e.lower() for e in emails)
            assert sum(_identity(e).endswith("@gmail.com") for e in emails) >= 2
            # Two different people who share a name, and a name typed with and without
            # its accent; the accent sometimes escaped in the file, sometimes not.
            names = [" ".join(c.name.split()) for c in ref.current]
            assert len(set(names)) < len(names)
            assert any(not c.name.isascii() for c in ref.contacts)
            assert "\\u" in text and any(not line.isascii() for line in text.splitlines())
            # The current record is a person's latest, and every record points at one. They
            # were updated in the half year the ledgers cover.
            first, *_, last = project.ledger.period
            assert all(
                f"{YEAR}-{first:02d}-01" <= c.updated <= f"{YEAR}-{last:02d}-31"
                for c in ref.contacts
            )
            by_id = {c.id: c for c in ref.contacts}
            for record_id, current_id in ref.person.items():
                assert by_id[current_id].updated >= by_id[record_id].updated


def test_the_readme_says_which_table_is_real_and_who_is_who(vocabularies):
    project = project_folder(vocabularies[0], 2)
    ref = project.parts["reference_data"]
    readme = project.files["README.md"]
    section = readme[readme.index("## Reference data") :]
    assert f"`{ref.draft_path}` is an old draft" in section and "Do not use it" in section
    assert "effective_from" in section and "merged_into" in section and "gmail.com" in section
    assert readme.index("## Which rows count") < readme.index("## Reference data")


def test_the_part_is_made_for_every_topic_and_many_seeds(vocabularies):
    for vocabulary in vocabularies:
        for seed in range(12):
            ref = project_folder(vocabulary, seed).parts["reference_data"]
            assert ref.current and ref.entries
