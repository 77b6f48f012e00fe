"""Ledger reports over a project folder (synthesis/tasks/projects/ledger_reports.py): the gold
program, run in the sandbox, writes a report the format checks pass; every mistake people make
fails them, and so does every shortcut; a right report in the agent's own layout earns."""

from __future__ import annotations

import copy
import json

import pytest

from sandboxes import EnvSource
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.folder import project_folder
from synthesis.models import Topic
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.projects import scenarios
from tests.project_support import run_gold_and_mistakes

KINDS = {
    "quarter_table",
    "monthly_json",
    "item_counts",
    "clean_month",
    "half_year_pack",
    "group_items",
    "largest_rows",
}


@pytest.fixture(scope="module")
def world():
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["archetype"] == "project")
    spec = build_project_spec(Topic.model_validate(topic))
    project = project_folder(spec.workspace, 21)
    return spec, project, _ledger_tasks(project, spec.workspace)


def _ledger_tasks(project, vocabulary) -> list:
    """One task of every kind, the ledger reports among them (other modules' kinds have
    tests of their own)."""
    every = scenarios.plan_project_tasks(project, vocabulary, 5, len(scenarios.KINDS))
    return [t for t in every if t.kind in KINDS]


def _state(project, **written) -> dict:
    tree = copy.deepcopy(project.tree())
    tree["files"].update(written)
    return {"__workspace__": tree}


def _passes(task, initial, final) -> bool:
    return all(evaluate_check(o, initial, final) for o in task.outputs)


def test_the_tasks_are_work_in_their_kinds_each_with_its_mistakes(world):
    _, project, tasks = world
    assert {t.kind for t in tasks} == KINDS
    ledger = project.ledger
    for task in tasks:
        tools = [c["tool"] for c in task.gold_chain]
        outputs = [o["path"] for o in task.outputs]
        assert tools[:3] == ["tree", "cat", "cat"], tools
        # The program, a look at each report, and a clean copy's second look at its rows.
        at = _program_at(task.gold_chain)
        after = task.gold_chain[at + 1 :]
        assert [c["args"].get("path") for c in after[: len(outputs)]] == outputs, tools
        checks = ["run"] if task.kind == "clean_month" else []
        assert [c["tool"] for c in after[len(outputs) :]] == checks, tools
        assert len(tools) >= 10
        # Before it, the import log; and a copy of a month is looked at when the period
        # has that month, never otherwise.
        read = [c["args"]["path"] for c in task.gold_chain[:at] if c["tool"] == "cat"]
        months = {ledger.path(m): m for m in ledger.period}
        period = {months[p] for p in read if p in months}
        copies = [p for p in sorted(ledger.backups) if int(p.split("-")[1][:2]) in period]
        assert "logs/import.log" in read and [p for p in read if p in ledger.backups] == copies
        assert task.mistakes, task.kind
        assert all(m.chain != task.gold_chain for m in task.mistakes)
        assert all(o["path"] in task.task_text for o in task.outputs)


def test_the_plan_is_a_pure_function_of_the_folder_and_the_seed(world):
    spec, project, tasks = world
    again = _ledger_tasks(project_folder(spec.workspace, 21), spec.workspace)
    assert [(t.task_text, t.gold_chain, t.outputs) for t in again] == [
        (t.task_text, t.gold_chain, t.outputs) for t in tasks
    ]


def test_in_the_sandbox_gold_passes_and_every_mistake_fails(world):
    spec, project, tasks = world
    source = EnvSource(code=environment_code(spec))
    initial = _state(project)
    runs = run_gold_and_mistakes((source, initial, task) for task in tasks)
    for task, initial, label, result in runs:
        assert result.status == "ok", (task.kind, label, result.reason)
        ran = [
            r for c, r in zip(task.gold_chain, result.results, strict=True) if c["tool"] == "run"
        ]
        assert all(r.ok and r.result["data"]["exit_code"] == 0 for r in ran), (task.kind, label)
        verdict = _passes(task, initial, result.final_state)
        assert verdict == (label == "gold"), (task.kind, label)
        if label == "gold" and task.kind == "clean_month":
            # The check counts the copy's rows per status: all of them, none excluded.
            printed = result.results[-1].result["data"]["output"].splitlines()
            counted = {status: int(n) for n, status in (line.split(None, 1) for line in printed)}
            assert sum(counted.values()) == len(task.outputs[0]["rows"]), counted
            assert not set(counted) & set(project.ledger.void_statuses), counted


def _program_at(chain: list) -> int:
    """Where the chain runs its program (the other `run` calls are shell reads)."""
    (at,) = [i for i, c in enumerate(chain) if c["args"].get("command", "").startswith("python3 -")]
    return at


def test_a_right_report_in_the_agents_own_layout_earns(world):
    _, project, tasks = world
    initial = _state(project)
    table = next(t for t in tasks if t.kind == "quarter_table").outputs[0]
    head, *rows = [table["columns"], *table["rows"]]
    lines = [f"# Summary\n\nTotals below.\n\n| {head[0]} | {head[1]} |", "| :-- | --: |"]
    lines += [f"| {g} | ${v:,.2f} |" for g, v in reversed(rows)]
    final = _state(project, **{table["path"]: "\n".join(lines) + "\n\nDone.\n"})
    assert evaluate_check(table, initial, final)
    totals = next(t for t in tasks if t.kind == "monthly_json").outputs[0]
    pretty = json.dumps(dict(reversed(list(totals["value"].items()))), indent=4)
    assert evaluate_check(totals, initial, _state(project, **{totals["path"]: pretty}))


def test_shortcuts_earn_nothing(world):
    _, project, tasks = world
    initial = _state(project)
    ledger = project.ledger
    for task in tasks:
        output = task.outputs[0]
        path = output["path"]
        attempts = {
            "nothing written": {},
            "an input copied": {path: project.files[ledger.path(ledger.period[0])]},
            "the README copied": {path: project.files["README.md"]},
        }
        if output["type"] == "file_table":
            cols = output["columns"]
            head = "| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n"
            empty = "".join(
                "| " + " | ".join([str(r[0])] + [""] * (len(cols) - 1)) + " |\n"
                for r in output["rows"]
            )
            every = {tuple(map(str, r)) for r in output["rows"]}
            for mistake in task.mistakes:
                # Every candidate answer at once: the right rows and each mistake's.
                every |= {tuple(map(str, r)) for r in _mistake_rows(task, mistake, project)}
            attempts["headings and no numbers"] = {path: head + empty}
            attempts["every candidate row"] = {
                path: head + "".join("| " + " | ".join(r) + " |\n" for r in sorted(every))
            }
            if path.endswith(".csv"):
                attempts["headings and no numbers"] = {path: ",".join(cols) + "\n"}
        for name, written in attempts.items():
            assert not _passes(task, initial, _state(project, **written)), (task.kind, name)


def _mistake_rows(task, mistake, project) -> list:
    """Rows a wrong reading of the folder gives (over the half year: any other candidate
    rows will do), by the planner's own right-answer functions under that reading."""
    from synthesis.tasks.projects import ledger_reports as plans

    reading = {
        "reads the stale backup as a ledger": {"with_backup": True},
        "keeps the void rows": {"keep_void": True},
        "drops amounts written with a thousands separator": {"drop_separated": True},
        "ignores the corrections": {"ignore_corrections": True},
    }.get(mistake.label)
    rows = {
        "quarter_table": plans._totals,
        "item_counts": plans._item_rows,
        "clean_month": plans._clean_rows,
        "group_items": lambda project, reading: plans._totals(project, reading, "item"),
    }.get(task.kind)
    if reading is None or rows is None:
        return []
    return rows(project, plans._Reading(project.ledger.period, **reading))
