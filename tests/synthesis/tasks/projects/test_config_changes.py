"""Configuration changes under constraints (synthesis/tasks/projects/config_changes.py): the
gold program, run in the sandbox, leaves settings the checks pass and the team's validator
accepts; every mistake people make fails the checks, and so does every shortcut; a right
change written in another layout earns."""

from __future__ import annotations

import configparser
import copy
import json
import random

import pytest

from sandboxes import EnvSource
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.projects.service_config import CONFIG, EXAMPLE, VALIDATOR
from synthesis.models import Topic
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.projects import config_changes
from synthesis.tasks.projects.scenarios import KINDS, plan_project_tasks
from synthesis.tasks.workspace_checks import workspace_check_specs
from tests.project_support import run_gold_and_mistakes

CONFIG_KINDS = {"max_workers", "batch_size", "debug_on", "schedule_utc"}


def _topic_spec(index: int = 0):
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topics = [t for t in catalogue["topics"] if t["archetype"] == "project"]
    return build_project_spec(Topic.model_validate(topics[index]))


def _plan(project, vocabulary, seed: int):
    rng = random.Random(seed)
    return [kind(project, vocabulary, rng) for kind in config_changes.KINDS]


def _has_qa(project) -> bool:
    return "qa" in project.parts["service_config"].environments


@pytest.fixture(scope="module")
def world():
    """Two folders: the first from seed 20 on with a qa section (debug from [defaults]),
    and the first without one; every config kind planned in each."""
    spec = _topic_spec()
    seeds = [
        next(s for s in range(20, 40) if _has_qa(project_folder(spec.workspace, s)) == qa)
        for qa in (True, False)
    ]
    folders = [project_folder(spec.workspace, seed) for seed in seeds]
    tasks = [(project, task) for project in folders for task in _plan(project, spec.workspace, 5)]
    return spec, seeds, tasks


def _state(project, **written) -> dict:
    tree = copy.deepcopy(project.tree())
    tree["files"].update(written)
    return {"__workspace__": tree}


def _checks(project, task, gold_final) -> list[dict]:
    """The task's checks as a build derives them: the gold run's changes, the settings read
    by their values, the guard on everything else."""
    return workspace_check_specs(_state(project), gold_final, task.outputs)


def _earns(checks, initial, final) -> bool:
    return all(evaluate_check(c, initial, final) for c in checks)


def test_the_kinds_are_drawn_among_the_feasible_kinds():
    assert set(config_changes.KINDS) <= set(KINDS)
    project = project_folder(_topic_spec().workspace, 21)
    kinds = [t.kind for t in plan_project_tasks(project, _topic_spec().workspace, 3, len(KINDS))]
    assert set(kinds) >= CONFIG_KINDS


def test_the_tasks_are_a_careful_persons_work_each_with_its_mistakes(world):
    _, _, tasks = world
    assert {t.kind for _, t in tasks} == CONFIG_KINDS
    for project, task in tasks:
        tools = [c["tool"] for c in task.gold_chain]
        assert tools == ["tree"] + ["cat"] * 5 + ["run"] * 3 + ["cat"], tools
        read = [c["args"]["path"] for c in task.gold_chain if c["tool"] == "cat"]
        assert read[:5] == [
            "README.md",
            "docs/operations.md",
            "config/limits.json",
            CONFIG,
            VALIDATOR,
        ]
        assert CONFIG in task.task_text
        # The request says the value it wants (the limit itself, it may be), never the rules:
        # the folder states them.
        for rule in ("workers_max", "multiple", "records_per_second", "factor", "never"):
            assert rule not in task.task_text.lower(), (task.kind, rule)
        labels = [m.label for m in task.mistakes]
        assert len(labels) >= 5, (task.kind, labels)
        assert {
            "edits the example file instead",
            "edits the old copy instead",
            "writes only the changed settings",
        } <= set(labels)
        assert all(m.chain != task.gold_chain for m in task.mistakes)
        if task.kind == "debug_on" and "qa" in project.parts["service_config"].environments:
            assert "misses the section without its own debug line" in labels


def test_the_plan_is_a_pure_function_of_the_folder_and_the_seed(world):
    spec, seeds, tasks = world
    again = [
        task
        for seed in seeds
        for task in _plan(project_folder(spec.workspace, seed), spec.workspace, 5)
    ]
    assert [(t.task_text, t.gold_chain, t.outputs, t.mistakes) for t in again] == [
        (t.task_text, t.gold_chain, t.outputs, t.mistakes) for _, t in tasks
    ]


def test_in_the_sandbox_gold_passes_and_every_mistake_fails(world):
    """One sandbox run of every chain (the slow part, so one test): the gold change passes
    the checks derived from it, the validator accepts the folder before and the gold change
    after, the comments stay; every mistake fails."""
    spec, _, tasks = world
    source = EnvSource(code=environment_code(spec))
    played = run_gold_and_mistakes((source, _state(project), task) for project, task in tasks)
    projects = {id(task): project for project, task in tasks}
    golds = {id(t): r.final_state for t, _, label, r in played if label == "gold"}
    for task, _, label, result in played:
        project = projects[id(task)]
        assert result.status == "ok", (task.kind, label, result.reason)
        change, before, after = result.results[7], result.results[6], result.results[8]
        assert change.ok and change.result["data"]["exit_code"] == 0, (task.kind, label, change)
        assert before.result["data"]["exit_code"] == 0, before.result
        checks = _checks(project, task, golds[id(task)])
        assert sorted(c["type"] for c in checks) == ["file_ini", "no_other_file_changes"]
        verdict = _earns(checks, _state(project), result.final_state)
        assert verdict == (label == "gold"), (task.kind, label)
        if label == "gold":
            assert after.result["data"]["exit_code"] == 0, (task.kind, after.result)
            assert "0 problem(s)" in after.result["data"]["output"]
            old = project.files[CONFIG].splitlines()
            new = result.final_state["__workspace__"]["files"][CONFIG].splitlines()
            comments = [line for line in old if line.startswith(("#", ";"))]
            assert [line for line in new if line.startswith(("#", ";"))] == comments


def _rewritten(sections: dict, style: str) -> str:
    """The settings written by hand in another layout: no comments, keys in another order
    and case, booleans as other words configparser reads."""
    words = {"yes-no": ("yes", "no"), "True-False": ("True", "False"), "on-off": ("on", "off")}
    true, false = words[style]
    lines = []
    for name, values in reversed(list(sections.items())):
        lines.append(f"[{name}]")
        for key, value in reversed(list(values.items())):
            if isinstance(value, bool):
                value = true if value else false
            lines.append(f"{key.upper() if style == 'yes-no' else key}={value}")
        lines.append("")
    return "\n".join(lines)


def _right_checks(project, task) -> list[dict]:
    """The checks a build derives (the guard allows exactly the settings file to change:
    the gold run changes only it, as the sandbox test shows)."""
    rewritten = _rewritten(task.outputs[0]["sections"], "yes-no")
    return _checks(project, task, _state(project, **{CONFIG: rewritten}))


@pytest.mark.parametrize("style", ["yes-no", "True-False", "on-off"])
def test_a_right_change_in_another_layout_earns(world, style):
    _, _, tasks = world
    for project, task in tasks:
        text = _rewritten(task.outputs[0]["sections"], style)
        parsed = configparser.ConfigParser(interpolation=None)
        parsed.read_string(text)  # a file the job reads
        final = _state(project, **{CONFIG: text})
        assert _earns(_right_checks(project, task), _state(project), final), (task.kind, style)


def test_shortcuts_earn_nothing(world):
    _, _, tasks = world
    for project, task in tasks:
        checks = _right_checks(project, task)
        initial = _state(project)
        files = project.files
        right = _rewritten(task.outputs[0]["sections"], "on-off")
        attempts = {
            "nothing done": {},
            "the example copied over the settings": {CONFIG: files[EXAMPLE]},
            "the old copy restored": {CONFIG: files[project.parts["service_config"].backup]},
            "the validator's output written": {CONFIG: f"{CONFIG}: 0 problem(s)\n"},
            "the validator made to pass": {VALIDATOR: "print('0 problem(s)')\n"},
            "the right change, and the validator edited": {
                CONFIG: right,
                VALIDATOR: "import sys\nsys.exit(0)\n",
            },
            "the right change, and a stray copy": {CONFIG: right, "config/app.ini.new": right},
            "the right change in the example only": {EXAMPLE: right},
            "the right settings in comments only": {
                CONFIG: files[CONFIG] + "\n# " + right.replace("\n", "\n# ") + "\n"
            },
        }
        assert _earns(checks, initial, _state(project, **{CONFIG: right}))
        for name, written in attempts.items():
            final = _state(project, **written)
            assert not _earns(checks, initial, final), (task.kind, name)


def test_every_project_topic_plans_its_config_tasks():
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    count = sum(t["archetype"] == "project" for t in catalogue["topics"])
    for index in range(count):
        vocabulary = _topic_spec(index).workspace
        for seed in range(6):
            project = project_folder(vocabulary, seed)
            for task in _plan(project, vocabulary, seed):
                before = config_changes._read_as_typed(project.parts["service_config"].sections)
                assert task.outputs[0]["sections"] != before, (index, seed, task.kind)
                assert len(task.mistakes) >= 4, (index, seed, task.kind)
