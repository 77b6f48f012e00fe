"""Joins and deduplication over a project folder (synthesis/tasks/projects/joins.py): the gold
program, run in the sandbox, writes an output the format checks pass; every mistake people
make with reference data fails them, and so does every shortcut; a right output in the
agent's own layout earns."""

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
from synthesis.tasks.projects import joins
from synthesis.tasks.projects.scenarios import KINDS as ALL_KINDS
from tests.project_support import run_gold_and_mistakes

KINDS = ("category_totals", "group_targets", "dedup_contacts", "month_jsonl")
# Sales (a product table) and expenses (its items are categories: the table's category
# column is named otherwise), with seeds that ask for one region's contacts as CSV and for all
# of them as JSON Lines.
TOPICS = (("regional_sales_reports", 2), ("team_expense_claims", 1))


def _plan(topic_id: str, folder_seed: int, seed: int):
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["topic_id"] == topic_id)
    spec = build_project_spec(Topic.model_validate(topic))
    project = project_folder(spec.workspace, folder_seed)
    rng = random.Random(seed)
    return spec, project, [kind(project, spec.workspace, rng) for kind in joins.KINDS]


@pytest.fixture(scope="module")
def worlds():
    return [_plan(topic_id, 21, seed) for topic_id, seed in TOPICS]


def _state(project, **written) -> dict:
    tree = copy.deepcopy(project.tree())
    tree["files"].update(written)
    return {"__workspace__": tree}


def _passes(task, initial, final) -> bool:
    return all(evaluate_check(o, initial, final) for o in task.outputs)


def _task(world, kind):
    return next(t for t in world[2] if t.kind == kind)


def _program_step(task) -> int:
    """The index of the gold program: the one run that writes the output."""
    (step,) = [
        i
        for i, c in enumerate(task.gold_chain)
        if c["tool"] == "run" and f"open({task.outputs[0]['path']!r}, 'w'" in c["args"]["command"]
    ]
    return step


def test_the_join_kinds_are_drawn_among_the_feasible_kinds():
    assert set(joins.KINDS) <= set(ALL_KINDS)


def test_each_kind_reads_what_it_joins_and_has_the_mistakes_that_matter(worlds):
    dedup_labels = set()
    for _, project, tasks in worlds:
        ref = project.parts["reference_data"]
        assert [t.kind for t in tasks] == list(KINDS)
        for task in tasks:
            tools = [c["tool"] for c in task.gold_chain]
            assert tools[:2] == ["tree", "cat"] and len(tools) >= 10, tools
            # The program, the checks it is given (runs), then a look at what it wrote.
            after = tools[_program_step(task) + 1 :]
            assert after == ["run"] * (len(after) - len(task.outputs)) + ["cat"] * len(
                task.outputs
            ), tools
            assert all(o["path"] in task.task_text for o in task.outputs)
            assert all(m.chain != task.gold_chain for m in task.mistakes)
        read = {
            t.kind: {c["args"].get("path") for c in t.gold_chain if c["tool"] == "cat"}
            for t in tasks
        }
        assert ref.items_path in read["category_totals"]
        assert ref.draft_path not in read["category_totals"]
        assert ref.groups_path in read["group_targets"]
        assert ref.contacts_path in read["dedup_contacts"]
        labels = {t.kind: {m.label for m in t.mistakes} for t in tasks}
        assert {
            "uses the draft item table",
            "drops the item the table does not list",
            "keeps the void rows",
        } <= labels["category_totals"]
        assert labels["category_totals"] & {
            "keeps the old cost after it changed",
            "takes the new cost for every row",
        }
        assert {
            "takes the share of all groups' total",
            "takes the target as a share of the total",
        } <= labels["group_targets"]
        dedup_labels |= labels["dedup_contacts"]
        assert {"keeps the void rows", "leaves the amount as text"} <= labels["month_jsonl"]
        # The request names the category for items the table does not list.
        assert joins.UNCATEGORISED in _task((None, project, tasks), "category_totals").task_text
    assert dedup_labels == {
        "keeps near-duplicates (the address as written)",
        "ignores the Gmail dots rule",
        "merges two people who share a name",
        "keeps merged records",
        "keeps each person's oldest record",
        "forgets the filter",
        "filters the records before telling people apart",
    }


def test_the_plan_is_a_pure_function_of_the_folder_and_the_seed(worlds):
    for (topic_id, seed), (_, _, tasks) in zip(TOPICS, worlds, strict=True):
        _, _, again = _plan(topic_id, 21, seed)
        assert [(t.task_text, t.gold_chain, t.outputs, t.mistakes) for t in again] == [
            (t.task_text, t.gold_chain, t.outputs, t.mistakes) for t in tasks
        ]


def test_in_the_sandbox_gold_passes_and_every_mistake_fails(worlds):
    cases = [
        (EnvSource(code=environment_code(spec)), _state(project), task)
        for spec, project, tasks in worlds
        for task in tasks
    ]
    for task, initial, label, result in run_gold_and_mistakes(cases):
        assert result.status == "ok", (task.kind, label, result.reason)
        ran = result.results[_program_step(task)]
        assert ran.ok and ran.result["data"]["exit_code"] == 0, (task.kind, label, ran)
        assert _passes(task, initial, result.final_state) == (label == "gold"), (task.kind, label)
        if label == "gold":
            # Every look and check ran as written; the checks count what the output holds.
            chain = zip(task.gold_chain, result.results, strict=True)
            runs = [r for c, r in chain if c["tool"] == "run"]
            assert all(r.ok and r.result["data"]["exit_code"] == 0 for r in runs), task.kind
            _assert_checks_agree(task, result.results[_program_step(task) + 1])


def _assert_checks_agree(task, check) -> None:
    """The gold chain's check (the run after the program) prints what the right output
    holds."""
    output = task.outputs[0]
    if task.kind not in ("dedup_contacts", "month_jsonl"):
        return
    printed = check.result["data"]["output"]
    if task.kind == "dedup_contacts":
        rows = output["value"] if output["type"] == "file_json" else output["rows"]
        assert printed == f"{len(rows)} rows, {len(rows)} people\nmerged records kept: []\n"
    elif task.kind == "month_jsonl":
        assert printed.startswith(f"{len(output['value'])} lines, keys"), printed
        assert f"\n{len(output['value'])} amounts are numbers, total" in printed, printed


def test_a_right_output_in_the_agents_own_layout_earns(worlds):
    _, project, tasks = worlds[0]
    initial = _state(project)
    # Tables: rows in another order, currency signs and separators, a dash for no cost, a
    # percent sign, and prose around the table.
    for kind in ("category_totals", "group_targets"):
        output = _task(worlds[0], kind).outputs[0]
        lines = ["# Report", "", "| " + " | ".join(output["columns"]) + " |"]
        lines.append("|" + " :-- |" * len(output["columns"]))
        for row in reversed(output["rows"]):
            cells = [
                "-" if v is None else f"${v:,.2f}" if isinstance(v, float) else str(v) for v in row
            ]
            if kind == "group_targets":
                cells[-1] = f"{row[-1]}%"
            lines.append("| " + " | ".join(cells) + " |")
        text = "\n".join(lines) + "\n\nNumbers from the ledgers.\n"
        assert evaluate_check(output, initial, _state(project, **{output["path"]: text}))
    # The contacts: another row order, addresses in capitals, quoted cells.
    output = _task(worlds[0], "dedup_contacts").outputs[0]
    rows = [",".join(output["columns"])] + [
        f'{i},"{name}","{email.upper()}",{group}'
        for i, name, email, group in reversed(output["rows"])
    ]
    text = "\r\n".join(rows) + "\r\n"
    assert evaluate_check(output, initial, _state(project, **{output["path"]: text}))
    # The contacts as JSON Lines: keys in another order, a blank line at the end.
    output = _task(worlds[1], "dedup_contacts").outputs[0]
    assert output["type"] == "file_json" and output["path"].endswith(".jsonl")
    project = worlds[1][1]
    text = "".join(json.dumps(dict(reversed(list(v.items())))) + "\n" for v in output["value"])
    initial = _state(project)
    assert evaluate_check(output, initial, _state(project, **{output["path"]: text + "\n"}))
    # Out of id order it is another answer: the request asks for id order.
    shuffled = "".join(json.dumps(v) + "\n" for v in reversed(output["value"]))
    assert not evaluate_check(output, initial, _state(project, **{output["path"]: shuffled}))
    project = worlds[0][1]
    initial = _state(project)
    # JSON Lines: keys in another order, no spaces, amounts with a trailing zero.
    output = _task(worlds[0], "month_jsonl").outputs[0]
    text = "".join(
        json.dumps(dict(reversed(list(v.items()))), separators=(",", ":")) + "\n"
        for v in output["value"]
    )
    assert evaluate_check(output, initial, _state(project, **{output["path"]: text}))


def test_shortcuts_earn_nothing(worlds):
    for _, project, tasks in worlds:
        ref = project.parts["reference_data"]
        initial = _state(project)
        for task in tasks:
            output = task.outputs[0]
            path = output["path"]
            attempts = {
                "nothing written": {},
                "a ledger copied": {path: project.files[project.ledger.path(1)]},
                "the contacts copied": {path: project.files[ref.contacts_path]},
                "the item table copied": {path: project.files[ref.items_path]},
                "the README copied": {path: project.files["README.md"]},
            }
            if output["type"] == "file_table":
                columns = output["columns"]
                if path.endswith(".csv"):
                    attempts["headings only"] = {path: ",".join(columns) + "\n"}
                else:
                    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
                    names = "".join(
                        "| " + " | ".join([str(r[0])] + [""] * (len(columns) - 1)) + " |\n"
                        for r in output["rows"]
                    )
                    attempts["headings and no numbers"] = {path: head + names}
            else:
                attempts["keys and no values"] = {
                    path: "".join(json.dumps(dict.fromkeys(v)) + "\n" for v in output["value"])
                }
            for name, written in attempts.items():
                assert not _passes(task, initial, _state(project, **written)), (task.kind, name)


def test_every_candidate_row_at_once_earns_nothing(worlds):
    _, project, tasks = worlds[0]
    ref = project.parts["reference_data"]
    initial = _state(project)
    # Every record of the export, each trimmed: all the candidates for each person.
    output = _task(worlds[0], "dedup_contacts").outputs[0]
    assert output["type"] == "file_table"
    lines = [",".join(output["columns"])] + [
        f'{c.id},"{" ".join(c.name.split())}",{c.email.strip()},{c.group}' for c in ref.contacts
    ]
    assert not evaluate_check(
        output, initial, _state(project, **{output["path"]: "\n".join(lines)})
    )
    # The same for the contacts as JSON Lines: every record, each written as asked.
    other = worlds[1][1]
    output = _task(worlds[1], "dedup_contacts").outputs[0]
    every = "".join(
        json.dumps(
            {
                "id": c.id,
                "name": " ".join(c.name.split()),
                "email": c.email.strip().lower(),
                other.ledger.group_field: c.group,
            }
        )
        + "\n"
        for c in other.parts["reference_data"].contacts
    )
    assert not evaluate_check(output, _state(other), _state(other, **{output["path"]: every}))
    # The category table with both costs of the changed item and both tables' categories.
    output = _task(worlds[0], "category_totals").outputs[0]
    every = {tuple(map(str, r)) for r in output["rows"]}
    months = project.ledger.period
    for join in (
        joins._Join(joins.Reading(months), draft=True),
        joins._Join(joins.Reading(months), pick="old"),
        joins._Join(joins.Reading(months), pick="new"),
    ):
        every |= {tuple(map(str, r)) for r in joins._category_rows(project, join)}
    head = "| " + " | ".join(output["columns"]) + " |\n|---|---|---|\n"
    table = head + "".join(
        "| " + " | ".join("" if c == "None" else c for c in r) + " |\n" for r in sorted(every)
    )
    assert not evaluate_check(output, initial, _state(project, **{output["path"]: table}))
