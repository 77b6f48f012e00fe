"""Log triage over a project folder (synthesis/tasks/projects/log_triage.py): the gold program,
run in the sandbox, writes an answer the format checks pass; every mistake people make with
such logs fails them, and so does every shortcut; a right answer in another layout earns."""

from __future__ import annotations

import copy
import json
import random

import pytest

from sandboxes import EnvSource
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.folder import project_folder
from synthesis.models import Topic
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.projects import log_triage
from synthesis.tasks.projects.scenarios import KINDS as ALL_KINDS
from tests.project_support import run_gold_and_mistakes

KINDS = ("first_error", "component_counts", "distinct_errors")
# Folders whose draws between them give every kind each mistake it can make (checked below).
SEEDS = (0, 3, 11)


def _plan(vocabulary: dict, seed: int) -> list:
    project = project_folder(vocabulary, seed)
    rng = random.Random(seed)
    return [kind(project, vocabulary, rng) for kind in log_triage.KINDS]


@pytest.fixture(scope="module")
def world():
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["archetype"] == "project")
    spec = build_project_spec(Topic.model_validate(topic))
    projects = {seed: project_folder(spec.workspace, seed) for seed in SEEDS}
    tasks = {seed: _plan(spec.workspace, seed) for seed in SEEDS}
    return spec, projects, tasks


def _state(project, **written) -> dict:
    tree = copy.deepcopy(project.tree())
    tree["files"].update(written)
    return {"__workspace__": tree}


def _passes(task, initial, final) -> bool:
    return all(evaluate_check(o, initial, final) for o in task.outputs)


def test_the_kinds_follow_the_ledger_kinds_in_the_draw():
    assert ALL_KINDS[-len(log_triage.KINDS) :] == log_triage.KINDS


def test_the_tasks_are_triage_with_real_reads_and_mistakes(world):
    _, projects, tasks = world
    for seed, planned in tasks.items():
        logs = projects[seed].parts["service_logs"]
        assert [t.kind for t in planned] == list(KINDS)
        for task in planned:
            tools = [c["tool"] for c in task.gold_chain]
            read = [c["args"].get("path") for c in task.gold_chain if c["tool"] == "cat"]
            # The program, a look at what it wrote, and the check that reads the logs again.
            assert tools[:3] == ["tree", "cat", "cat"] and tools[-3:] == ["run", "cat", "run"]
            assert _program_at(task.gold_chain) == len(tools) - 3
            assert "logs/deploys.log" in read and any(p.startswith("logs/app-") for p in read)
            assert logs.stale_path not in read  # a careful reader leaves the leftover alone
            assert len(tools) >= 10
            assert task.mistakes and all(m.chain != task.gold_chain for m in task.mistakes)
            assert task.outputs[0]["path"] in task.task_text
            version = next(d.version for d in logs.deploys if d.version in task.task_text)
            assert logs.service in task.task_text and version in task.outputs[0]["path"]


def test_every_mistake_is_made_somewhere():
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["archetype"] == "project")
    vocabulary = build_project_spec(Topic.model_validate(topic)).workspace
    made = {
        (t.kind, m.label) for seed in range(12) for t in _plan(vocabulary, seed) for m in t.mistakes
    }
    for label in (
        "starts at the deploy day's midnight",
        "counts the WARN retries that mention an error",
        "counts the other service's lines",
        "takes deploys.log's local time for UTC",
        "reads the previous deploy",
    ):
        assert {(kind, label) for kind in KINDS} <= made, label
    assert ("distinct_errors", "counts past the next deploy") in made
    assert ("distinct_errors", "keeps the carriage returns of the Windows-ended day") in made
    assert any(label == "reads the rotation's leftover copy too" for _, label in made)


def test_the_plan_is_a_pure_function_of_the_folder_and_the_seed(world):
    spec, _, tasks = world
    for seed in SEEDS:
        again = _plan(spec.workspace, seed)
        assert [(t.task_text, t.gold_chain, t.outputs) for t in again] == [
            (t.task_text, t.gold_chain, t.outputs) for t in tasks[seed]
        ]
        assert [(m.label, m.chain) for t in again for m in t.mistakes] == [
            (m.label, m.chain) for t in tasks[seed] for m in t.mistakes
        ]


def test_in_the_sandbox_gold_passes_and_every_mistake_fails(world):
    spec, projects, tasks = world
    source = EnvSource(code=environment_code(spec))
    cases = [
        (source, _state(projects[seed]), task)
        for seed, planned in tasks.items()
        for task in planned
    ]
    for task, initial, label, result in run_gold_and_mistakes(cases):
        assert result.status == "ok", (task.kind, label, result.reason)
        runs = [
            r for c, r in zip(task.gold_chain, result.results, strict=True) if c["tool"] == "run"
        ]
        assert all(r.ok and r.result["data"]["exit_code"] == 0 for r in runs), (task.kind, label)
        assert _passes(task, initial, result.final_state) == (label == "gold"), (task.kind, label)
        if label == "gold":
            _the_check_agrees(task, result.results[-1].result["data"]["output"])


def _program_at(chain: list) -> int:
    """Where the chain runs its program (the other `run` calls are shell reads)."""
    (at,) = [i for i, c in enumerate(chain) if c["args"].get("command", "").startswith("python3 -")]
    return at


def _the_check_agrees(task, printed: str) -> None:
    """The gold chain's last call, awk over the window's lines, says what the output says."""
    output = task.outputs[0]
    lines = printed.splitlines()
    if task.kind == "first_error":
        # Every line from the deploy to the error: the error last, none of ours before it.
        first = output["value"]
        assert lines[-1].startswith(first["first_error_at"] + " "), lines
        assert lines[-1].endswith(f"ERROR [{first['component']}] {first['message']}"), lines
        service = lines[-1].split()[1]
        assert not any(f"{service} ERROR" in line for line in lines[:-1]), lines
    elif task.kind == "component_counts":
        counted = [line.split() for line in lines]
        assert [[c.strip("[]"), int(n)] for n, c in counted] == output["rows"], lines
    else:
        counted = {line.split(" ", 2)[2]: int(line.split()[0]) for line in map(str.strip, lines)}
        assert counted == {e["message"]: e["count"] for e in output["value"]}, lines


def test_a_right_answer_in_another_layout_earns(world):
    _, projects, tasks = world
    project, planned = projects[SEEDS[0]], tasks[SEEDS[0]]
    initial = _state(project)
    first, counts, listing = (t.outputs[0] for t in planned)
    # Keys in another order, other whitespace.
    reordered = json.dumps(dict(reversed(list(first["value"].items()))), indent=None)
    assert evaluate_check(first, initial, _state(project, **{first["path"]: reordered}))
    entries = [dict(sorted(e.items())) for e in listing["value"]]
    written = json.dumps(entries, indent=4, separators=(",", " : "))
    assert evaluate_check(listing, initial, _state(project, **{listing["path"]: written}))
    # A table below a heading and a note, its rows in another order, left-aligned.
    rows = [f"| {c} | {n} |" for c, n in reversed(counts["rows"])]
    table = "## Errors after the deploy\n\n| Component | Errors |\n| :-- | :-- |\n"
    table += "\n".join(rows) + "\n\nCounted from the deploy time.\n"
    assert evaluate_check(counts, initial, _state(project, **{counts["path"]: table}))


def test_shortcuts_earn_nothing(world):
    _, projects, tasks = world
    for seed, planned in tasks.items():
        project = projects[seed]
        logs = project.parts["service_logs"]
        initial = _state(project)
        every_error = [
            {
                "message": x.message,
                "component": x.component,
                "first_seen": x.text()[:20],
                "count": 1,
            }
            for x in logs.lines
            if x.level == "ERROR"
        ]
        for task in planned:
            output = task.outputs[0]
            path = output["path"]
            attempts = {
                "nothing written": {},
                "an empty file": {path: ""},
                "deploys.log copied": {path: project.files["logs/deploys.log"]},
                "a day's log copied": {path: project.files[logs.path(logs.days[-1])]},
                "every error listed": {path: json.dumps(every_error)},
            }
            if output["type"] == "file_json" and isinstance(output["value"], dict):
                empty = {key: "" for key in output["value"]}
                attempts["right keys, empty values"] = {path: json.dumps(empty)}
            if output["type"] == "file_json" and isinstance(output["value"], list):
                empty = [{key: "" for key in entry} for entry in output["value"]]
                attempts["right keys, empty values"] = {path: json.dumps(empty)}
            if output["type"] == "file_table":
                head = "| Component | Errors |\n|---|---|\n"
                components = sorted({x.component for x in logs.lines})
                attempts["headings and no numbers"] = {
                    path: head + "".join(f"| {c} |  |\n" for c, _ in output["rows"])
                }
                attempts["every component, every count"] = {
                    path: head
                    + "".join(f"| {c} | {n} |\n" for c in components for n in range(1, 9))
                }
            for name, written in attempts.items():
                assert not _passes(task, initial, _state(project, **written)), (task.kind, name)
