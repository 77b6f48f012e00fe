"""The export job's settings in a project folder (synthesis/environments/projects/
service_config.py): the settings are what the truth says, valid under the folder's own
limits with room to change, beside a template and an old copy that are noise; the team's
validator finds a broken setting."""

from __future__ import annotations

import configparser
import json
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.projects.folder import folder_half, project_folder
from synthesis.environments.projects.ledgers import ledger_files
from synthesis.environments.projects.service_config import (
    CONFIG,
    EXAMPLE,
    LIMITS,
    OPERATIONS,
    VALIDATOR,
)
from synthesis.models import Topic


def _vocabularies() -> list[dict]:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return [
        build_project_spec(Topic.model_validate(t)).workspace
        for t in catalogue["topics"]
        if t["archetype"] == "project"
    ]


@pytest.fixture(scope="module")
def vocabulary() -> dict:
    return _vocabularies()[0]


def _read(text: str) -> dict[str, dict[str, str]]:
    parser = configparser.ConfigParser(interpolation=None)
    parser.read_string(text)
    return {name: dict(parser[name]) for name in parser.sections()}


def _validate(tmp_path: Path, files: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    return subprocess.run(
        [sys.executable, VALIDATOR, *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=30,
        env={"LC_ALL": "C", "TZ": "UTC", "PATH": "/usr/bin:/bin"},
    )


def test_the_same_seed_makes_the_same_settings_and_the_ledgers_stay_as_they_were(vocabulary):
    assert project_folder(vocabulary, 4).files == project_folder(vocabulary, 4).files
    assert (
        project_folder(vocabulary, 4).files[CONFIG] != project_folder(vocabulary, 5).files[CONFIG]
    )
    # The part draws from a seed of its own: the ledgers' files are those made without it.
    alone, _ = ledger_files(vocabulary, random.Random(4), folder_half(4))
    made = project_folder(vocabulary, 4).files
    assert all(made[path] == text for path, text in alone.items() if path != "README.md")
    assert made["README.md"].startswith(alone["README.md"].rstrip("\n"))


def test_the_settings_are_what_the_truth_says_and_the_noise_differs(vocabulary):
    project = project_folder(vocabulary, 7)
    truth = project.parts["service_config"]
    files = project.files
    assert _read(files[CONFIG]) == truth.sections
    assert list(truth.sections)[0] == "defaults"
    assert {"staging", "production"} <= set(truth.environments)
    assert json.loads(files[LIMITS]) == truth.limits
    assert _read(files[truth.backup]) != truth.sections
    assert _read(files[EXAMPLE]) != truth.sections
    assert "#" in files[CONFIG] and ";" in files[CONFIG]  # comments say why
    readme = files["README.md"]
    assert all(p in readme for p in (CONFIG, OPERATIONS, LIMITS, VALIDATOR, EXAMPLE))
    assert truth.backup in readme and truth.backup in files[OPERATIONS]
    # The rules are in prose, their numbers only in the limits file.
    assert str(truth.limits["batch_size"]["max"]) not in files[OPERATIONS]


def test_every_topics_settings_pass_the_validator_with_room_under_the_limits(tmp_path):
    for index, vocabulary in enumerate(_vocabularies()):
        for seed in range(1):
            project = project_folder(vocabulary, seed)
            truth = project.parts["service_config"]
            done = _validate(tmp_path / f"{index}-{seed}", project.files)
            assert done.returncode == 0, (index, seed, done.stdout, done.stderr)
            assert done.stdout.strip() == f"{CONFIG}: 0 problem(s)"
            production = truth.sections["production"]
            assert (
                int(production["workers"])
                < truth.limits["environments"]["production"]["workers_max"]
            )
            assert 2 * int(production["batch_size"]) <= truth.limits["batch_size"]["max"]


def _production_set(text: str, key: str, value: str) -> str:
    """The settings with one production key's line set to `value`."""
    at = text.index("[production]")
    head, tail = text[:at], text[at:]
    return head + re.sub(rf"(?m)^{key} = .*$", f"{key} = {value}", tail, count=1)


@pytest.mark.parametrize(
    ("key", "value", "problem"),
    [
        ("workers", "99", "[production] workers 99: between 1 and"),
        ("debug", "true", "[production] debug: must be off here"),
        ("debug", "enabled", "[production] debug: not true or false"),
        ("timeout_s", "1", "[production] timeout_s 1: at least"),
        ("batch_size", "7", "[production] batch_size 7: must be a multiple of"),
        ("schedule", "7:30", "[production] schedule '7:30': HH:MM"),
    ],
)
def test_the_validator_finds_a_broken_setting(tmp_path, vocabulary, key, value, problem):
    files = dict(project_folder(vocabulary, 7).files)
    files[CONFIG] = _production_set(files[CONFIG], key, value)
    done = _validate(tmp_path, files)
    assert done.returncode == 1
    assert f"PROBLEM {problem}" in done.stdout, done.stdout


def test_the_validator_refuses_a_repeated_key(tmp_path, vocabulary):
    files = dict(project_folder(vocabulary, 7).files)
    files[CONFIG] = files[CONFIG].replace("[production]\n", "[production]\nworkers = 3\n")
    done = _validate(tmp_path, files)
    assert done.returncode == 1 and "DuplicateOptionError" in done.stderr


def test_the_old_copy_fails_the_validator(tmp_path, vocabulary):
    project = project_folder(vocabulary, 7)
    truth = project.parts["service_config"]
    done = _validate(tmp_path, project.files, truth.backup)
    assert done.returncode == 1 and "[production] debug: must be off here" in done.stdout
