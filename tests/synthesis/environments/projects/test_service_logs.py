"""The service logs of a project folder (synthesis/environments/projects/service_logs.py): the
files say what the truth says, with the noise real logs have."""

from __future__ import annotations

import json
from datetime import datetime

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.projects.service_logs import OTHER_SERVICE, stamp
from synthesis.models import Topic


@pytest.fixture(scope="module")
def vocabulary() -> dict:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["archetype"] == "project")
    return build_project_spec(Topic.model_validate(topic)).workspace


def _lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").splitlines()


def test_the_logs_are_the_same_for_a_seed_and_other_for_another(vocabulary):
    one, again, other = (project_folder(vocabulary, s) for s in (4, 4, 5))
    logs = {p: t for p, t in one.files.items() if p.startswith("logs/")}
    assert logs == {p: t for p, t in again.files.items() if p.startswith("logs/")}
    assert logs != {p: t for p, t in other.files.items() if p.startswith("logs/")}


def test_the_day_files_are_the_lines_as_they_are(vocabulary):
    project = project_folder(vocabulary, 7)
    logs = project.parts["service_logs"]
    assert logs.service == f"{vocabulary['ledger']}-sync"
    written = []
    for day in logs.days:
        text = project.files[logs.path(day)]
        assert ("\r\n" in text) == (day == logs.crlf_day)
        assert all(line.startswith(day + "T") for line in _lines(text))
        written += _lines(text)
    assert written == [line.text() for line in logs.lines]
    times = [line.at for line in logs.lines]
    assert times == sorted(times) and len(set(times)) == len(times)  # no two at one second


def test_the_noise_is_there(vocabulary):
    project = project_folder(vocabulary, 7)
    logs = project.parts["service_logs"]
    ours = [x for x in logs.lines if x.service == logs.service]
    levels = {x.level for x in ours}
    assert levels == {"DEBUG", "INFO", "WARN", "ERROR"}
    # A WARN that mentions an error; no INFO or DEBUG line does.
    assert any(x.level == "WARN" and "error" in x.message.lower() for x in ours)
    assert not any(x.level in ("INFO", "DEBUG") and "error" in x.message.lower() for x in ours)
    assert any(x.service == OTHER_SERVICE and x.level == "ERROR" for x in logs.lines)
    # An error repeats: one message logged more than once.
    errors = [x.message for x in ours if x.level == "ERROR"]
    assert len(set(errors)) < len(errors)
    # The leftover copy is the first part of its day again.
    copy = _lines(project.files[logs.stale_path])
    day = _lines(project.files[logs.path(logs.stale_day)])
    assert copy and len(copy) < len(day) and day[: len(copy)] == copy


def test_deploys_are_in_local_time_with_errors_before_and_after_each(vocabulary):
    project = project_folder(vocabulary, 7)
    logs = project.parts["service_logs"]
    written = _lines(project.files["logs/deploys.log"])
    assert len(written) == len(logs.deploys) == 3
    errors = [x.at for x in logs.lines if x.service == logs.service and x.level == "ERROR"]
    for line, deploy in zip(written, logs.deploys, strict=True):
        when, service, version, *_ = line.split()
        assert (service, version) == (logs.service, deploy.version)
        # The offset is written; read with it, the time is the deploy's UTC time.
        assert not when.endswith("Z") and datetime.fromisoformat(when) == deploy.at
        assert any(at < deploy.at for at in errors) and any(at > deploy.at for at in errors)
        # The new version says it started, in UTC, soon after.
        started = f"starting {logs.service} {deploy.version}"
        (line,) = [x for x in logs.lines if x.message == started]
        assert 0 < (line.at - deploy.at).total_seconds() < 120
    # Each deploy a newer version than the one before (compared as numbers: v2.10 > v2.9).
    numbers = [tuple(map(int, d.version[1:].split("."))) for d in logs.deploys]
    assert numbers == sorted(set(numbers))


def test_the_readme_says_where_the_logs_are_and_how_to_read_them(vocabulary):
    project = project_folder(vocabulary, 7)
    logs = project.parts["service_logs"]
    readme = project.files["README.md"]
    assert "## Service logs" in readme and "UTC" in readme and ".log.1" in readme
    assert f"`{logs.service}`" in readme and "deploys.log" in readme
    assert stamp(logs.deploys[0].at) not in readme  # it explains, it does not answer
