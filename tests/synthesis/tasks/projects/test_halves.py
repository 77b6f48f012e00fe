"""Folders of either half of the year (synthesis/environments/projects/ledgers.py, `HALVES`):
every project kind plans over both and asks of its own folder's months, a declined period is
one of the half the folder does not hold, and a month declined in one folder of a topic is
reported on in another, so no month alone tells a request is to be declined. In a folder of
the second half every kind's gold run passes its checks in the sandbox and every mistake
fails them, and so does a code fix's for each bug of a quarter's months."""

from __future__ import annotations

import copy
import random
import re

import pytest

from sandboxes import EnvSource
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.code_project import STATE_KEY
from synthesis.environments.projects.folder import folder_half, project_folder
from synthesis.environments.projects.ledgers import HALVES
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.projects import code_fixes, joins, ledger_reports, missing_data, scenarios
from synthesis.tasks.workspace_checks import workspace_check_specs
from tests.project_support import months_said, run_gold_and_mistakes
from tests.shard_support import first_topic

# The kinds whose requests name a period or a month of the ledgers (the logs' and the
# settings' kinds name none).
DATED = (*ledger_reports.KINDS, *joins.KINDS, *code_fixes.KINDS)
EVERY_KIND = (*scenarios.KINDS, *missing_data.KINDS)


@pytest.fixture(scope="module")
def spec():
    return build_project_spec(first_topic("project"))


def _seed_of(half: int) -> int:
    return next(seed for seed in range(20) if folder_half(seed) == half)


def _missing_months(task) -> set[int]:
    return months_said(task.reply["refusal"]["declined"]["what"])


def test_every_kind_plans_over_both_halves_and_asks_of_its_folders_own_months(spec):
    vocabulary = spec.workspace
    for half in (1, 2):
        project = project_folder(vocabulary, _seed_of(half))
        ledger = project.ledger
        assert ledger.half == half
        for kind in EVERY_KIND:
            for draw in range(4):
                task = kind(project, vocabulary, random.Random(draw))
                assert task.gold_chain, (half, task.kind)
                said = months_said(task.task_text)
                if task.kind == "missing_period":
                    # Of the other half only, named in the request and its report's path.
                    assert said and said <= set(HALVES[3 - half]), task.task_text
                    assert _missing_months(task) == said, task.task_text
                elif kind in DATED or kind in missing_data.KINDS:
                    assert said <= set(ledger.period), (task.kind, task.task_text)
        # The team's tests are of the folder's months too, as a team tests the data it has.
        code = project.parts["code_project"]
        tests = "".join(project.files[code.test_path(m)] for m in ("parse", "totals"))
        assert {int(m) for m in re.findall(r'"2024-(\d\d)-\d\d"', tests)} <= set(ledger.period)
        assert {int(q) for q in re.findall(r"quarter_months\((\d)\)", tests)} <= set(
            ledger.quarters
        )


def test_a_month_declined_in_one_folder_is_reported_on_in_another_of_the_topic(spec):
    vocabulary = spec.workspace
    declined: dict[int, set[int]] = {}  # month -> the seeds of folders that decline it
    reported: dict[int, set[int]] = {}  # month -> the seeds of folders that report on it
    for seed in range(6):
        project = project_folder(vocabulary, seed)
        ledger = project.ledger
        for draw in range(12):
            # Every kind's twin that declines a period (others decline a group or a figure
            # of the folder's own months).
            for twin in missing_data.KINDS:
                task = twin(project, vocabulary, random.Random(draw))
                if task.kind != "missing_period":
                    continue
                for month in _missing_months(task):
                    assert ledger.path(month) not in project.files
                    declined.setdefault(month, set()).add(seed)
            for kind in ledger_reports.KINDS:
                task = kind(project, vocabulary, random.Random(draw))
                for month in months_said(" ".join(o["path"] for o in task.outputs)):
                    assert ledger.path(month) in project.files
                    reported.setdefault(month, set()).add(seed)
    # Every month is declined by some folders and reported on by others.
    assert set(declined) == set(reported) == set(range(1, 13))
    assert all(not declined[m] & reported[m] for m in declined)


def _state(project) -> dict:
    return {"__workspace__": copy.deepcopy(project.tree())}


def test_in_the_sandbox_a_second_half_folder_proves_every_kind(spec):
    source = EnvSource(code=environment_code(spec))
    project = project_folder(spec.workspace, _seed_of(2))
    tasks = [kind(project, spec.workspace, random.Random(5)) for kind in EVERY_KIND]
    assert {t.kind for t in tasks} >= {"half_year_pack", "group_targets", "missing_period"}
    cases = [(source, _state(project), task) for task in tasks]
    # The bugs of a quarter's months, in folders of the second half: their tests ask of Q3
    # and Q4, so a fix that answers only those fails the held-back cases of Q1 and Q2.
    for bug in ("quarter_of", "quarter_months"):
        seed = next(
            s
            for s in range(100)
            if folder_half(s) == 2
            and project_folder(spec.workspace, s).parts["code_project"].broken == bug
        )
        fixed = project_folder(spec.workspace, seed)
        (task,) = [kind(fixed, spec.workspace, random.Random(5)) for kind in code_fixes.KINDS]
        assert any(w in task.task_text for w in ("September", "Q3", "Q4", "quarter")), task
        cases.append((source, _state(fixed), task))
    runs = run_gold_and_mistakes(cases)
    gold = {id(task): result.final_state for task, _, label, result in runs if label == "gold"}
    for task, initial, label, result in runs:
        assert result.status == "ok", (task.kind, label, result.reason)
        checks = workspace_check_specs(initial, gold[id(task)], task.outputs)
        if task.kind == "code_fix":
            assert gold[id(task)].get(STATE_KEY) == "passing"
            checks.append({"type": "attribute_equals", "attribute": STATE_KEY, "value": "passing"})
        if label == "gold" and task.outputs:
            ran = [
                r
                for c, r in zip(task.gold_chain, result.results, strict=True)
                if c["tool"] == "run"
            ]
            # Every command of the gold run works on the second half's files (but the code
            # fix's first run of the tests, which fails: that is the bug).
            failing = [r for r in ran if r.result["data"]["exit_code"] != 0]
            assert len(failing) <= (task.kind == "code_fix"), (task.kind, failing)
        elif label == "gold" and task.kind == "missing_period":
            # The looking shows what the reply says: no ledger row of the asked months, and
            # the ledgers start in July.
            shown = [r.result["data"]["output"] for r in result.results if r.tool == "run"]
            counts = next(o for o in shown if o.startswith("data/"))
            assert set(re.findall(r":(\d+)$", counts, re.M)) == {"0"}, counts
            assert shown[-1].startswith("2024-07-"), shown[-1]
        verdict = all(evaluate_check(c, initial, result.final_state) for c in checks)
        assert verdict == (label == "gold"), (task.kind, label)
