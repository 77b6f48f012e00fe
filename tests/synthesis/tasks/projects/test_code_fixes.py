"""Code fixes in a project folder (synthesis/tasks/projects/code_fixes.py): graded by running
the project's own tests and the held-back cases in the sandbox, through the state the class
reports. The gold fix passes, and so does another right fix; every mistake people make, doing
nothing and every shortcut (hardcoding the tests' values, editing or deleting a test, a
sitecustomize.py, a stray file) fails; the shipped module with trust=True pays the gold replay
1 and nothing 0."""

from __future__ import annotations

import copy
import json
import random

import pytest

from sandboxes import EnvSource, WorkerPool
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import build_environment, environment_code
from synthesis.environments.model import from_spec
from synthesis.environments.projects.code_project import ROOT, STATE_KEY
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.projects import code_fixes, scenarios
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.workspace_checks import workspace_check_specs
from tests.shard_support import first_topic, replay_in_clean_venv, task_shards

BUGS = {"parse_amount", "quarter_of", "round_cents", "quarter_months", "is_counted", "largest"}
# Three bugs run in the sandbox (one that raises, one of two arguments, one in each module):
# the others differ only in their text, which the planning tests cover.
IN_SANDBOX = ("parse_amount", "largest", "is_counted")


@pytest.fixture(scope="module")
def folders():
    spec = build_project_spec(first_topic("project"))
    by_bug, seeds = {}, {}
    for seed in range(60):
        project = project_folder(spec.workspace, seed)
        name = project.parts["code_project"].broken
        if name not in by_bug:
            by_bug[name], seeds[name] = project, seed
    return spec, by_bug, seeds


def _task(spec, project):
    return code_fixes.KINDS[0](project, spec.workspace, random.Random(7))


def _written(project, chain) -> dict[str, str]:
    return {c["args"]["path"]: c["args"]["text"] for c in chain if c["tool"] == "write"}


def test_every_bug_is_drawn_and_each_plan_is_a_pure_function_of_the_folder(folders):
    spec, by_bug, seeds = folders
    assert set(by_bug) == BUGS
    for name, project in by_bug.items():
        code = project.parts["code_project"]
        task = _task(spec, project)
        assert task == _task(spec, project_folder(spec.workspace, seeds[name]))
        module = code.module_path(code.bug.module)
        tools = [c["tool"] for c in task.gold_chain]
        assert tools == ["tree", "cat", "run", "cat", "cat", "cat", "grep", "write", "run", "run"]
        # Both modules read: the one to fix and the other the smoke run calls.
        read = {c["args"]["path"] for c in task.gold_chain if c["tool"] == "cat"}
        assert {code.module_path("parse"), code.module_path("totals")} <= read
        assert _written(project, task.gold_chain) == {module: code.right_module()}
        # The request names the module and forbids touching the tests; the symptom is what
        # a user sees, not the function at fault.
        assert module in task.task_text and "test" in task.task_text
        assert "_" not in name or name not in task.task_text
        assert task.outputs == [{"path": module, "judged_by": "state"}]
        assert len(task.mistakes) == 5
        assert len({json.dumps(m.chain) for m in task.mistakes}) == len(task.mistakes)


def _initial(project) -> dict:
    return {"__workspace__": copy.deepcopy(project.tree())}


def _with_fix(chain: list[dict], text: str) -> list[dict]:
    """The gold chain with another text written in place of the gold fix."""
    return [
        {**c, "args": {**c["args"], "text": text}} if c["tool"] == "write" else c for c in chain
    ]


def _shortcuts(project, task) -> dict[str, list[dict]]:
    code = project.parts["code_project"]
    bug = code.bug
    tests = code.test_path(bug.module)
    fix = task.gold_chain[[c["tool"] for c in task.gold_chain].index("write")]
    always = "import unittest\nunittest.TestCase.run = lambda self, result=None: result\n"
    return {
        "nothing": [],
        "the tests emptied": [write(tests, "")],
        "a sitecustomize.py that makes tests pass": [write(f"{ROOT}/sitecustomize.py", always)],
        "the right fix and the failing test deleted": [
            fix,
            write(tests, code.test_text(bug.module, skip=bug.name)),
        ],
        "the right fix and a stray conftest.py": [fix, write(f"{ROOT}/conftest.py", always)],
        "the package made to exit before any test": [
            write(f"{ROOT}/{code.package}/__init__.py", "raise SystemExit(0)\n")
        ],
    }


def write(path: str, text: str) -> dict:
    return {"tool": "write", "args": {"path": path, "text": text}}


def test_in_the_sandbox_right_fixes_pass_and_mistakes_and_shortcuts_fail(folders):
    spec, by_bug, _ = folders
    source = EnvSource(code=environment_code(spec))
    episodes, owners = [], []
    for name in IN_SANDBOX:
        project = by_bug[name]
        code = project.parts["code_project"]
        task = _task(spec, project)
        other = code.module_text(code.bug.module, **{name: code.bug.other_right})
        chains = {"gold": task.gold_chain, "another right fix": _with_fix(task.gold_chain, other)}
        chains.update({m.label: m.chain for m in task.mistakes})
        chains.update(_shortcuts(project, task))
        for label, chain in chains.items():
            episodes.append((source, _initial(project), [(c["tool"], c["args"]) for c in chain]))
            owners.append((name, project, task, label))
    with WorkerPool(2) as pool:
        results = pool.run_episodes(episodes)
    gold_finals = {
        name: result.final_state
        for (name, _, _, label), result in zip(owners, results, strict=True)
        if label == "gold"
    }
    for (name, project, task, label), result in zip(owners, results, strict=True):
        assert result.status == "ok", (name, label, result.reason)
        initial = _initial(project)
        checks = _checks(initial, gold_finals[name], task)
        right = label in ("gold", "another right fix")
        verdict = all(efr.evaluate_check(c, initial, result.final_state) for c in checks)
        assert verdict == right, (name, label, result.final_state.get(STATE_KEY))
        # The tests' runs leave no byte code behind (it would trip the guard on any fix).
        assert not any("__pycache__" in d for d in result.final_state["__workspace__"]["dirs"])
    at = [o[3] for o in owners].index("gold")
    gold, project = results[at], owners[at][1]
    before, after, smoke = (gold.results[i].result["data"] for i in (2, 8, 9))
    assert "FAIL" in before["output"] or "Error" in before["output"]
    assert after["output"].rstrip().endswith("OK") and " in 0." not in after["output"]
    # The fixed package run over the real ledgers: both quarters of the folder's half year,
    # each with its own months.
    assert smoke["exit_code"] == 0, smoke
    for quarter in project.ledger.quarters:
        months = list(range(3 * quarter - 2, 3 * quarter + 1))
        line = f"Q{quarter}: rows of months {months}, quarter_months {months}\n"
        assert line in smoke["output"], smoke["output"]


def _checks(initial, gold_final, task) -> list[dict]:
    """The workspace checks and the state's verdict, as derive_checks makes them."""
    assert gold_final.get(STATE_KEY) == "passing"
    state = {"type": "attribute_equals", "attribute": STATE_KEY, "value": "passing"}
    return [state, *workspace_check_specs(initial, gold_final, task.outputs)]


def test_through_the_build_and_the_shipped_module(tmp_path, monkeypatch):
    """A code fix planned, played and proven as a build does it, then replayed by the
    shipped reward module alone, in a clean virtualenv without EnvFoundry: the tests run
    under bwrap where it is usable, else with trust=True."""
    monkeypatch.setattr(scenarios, "KINDS", code_fixes.KINDS)
    env = build_environment(generate_spec(first_topic("project")))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    model = from_spec(env.spec, env)
    planned = plan_scenarios(env, state, seed=5, count=1, model=model)
    (scenario,) = execute_gold(env, planned, model=model)
    checks = derive_checks(scenario, model=model)
    kinds = {c.spec["type"] for c in checks}
    assert "file_content" not in kinds  # the fix is judged by running it, not by its text
    assert {"attribute_equals", "no_other_file_changes"} <= kinds
    assert STATE_KEY not in scenario.start_state
    task_shards(tmp_path, env, scenario, checks, "You work in a project folder.")
    line = tmp_path / f"rl/{scenario.split}.jsonl"
    gold = [c.model_dump(mode="json") for c in scenario.gold_chain]
    code = project_folder(env.spec.workspace, state.seed).parts["code_project"]
    other = code.module_text(code.bug.module, **{code.broken: code.bug.other_right})
    chains = {
        "gold": gold,
        "another right fix": _with_fix(gold, other),
        **{m["label"]: m["chain"] for m in scenario.provenance["mistakes"]},
    }
    paid = replay_in_clean_venv(tmp_path, line, chains)
    assert paid.pop("commands") in ("bwrap", "unsandboxed")
    assert paid.pop("envfoundry_importable") is False
    assert paid.pop("nothing") == {"reward": 0.0, "success": False}
    assert paid.pop("gold") == {"reward": 1.0, "success": True}
    assert paid.pop("another right fix") == {"reward": 1.0, "success": True}
    assert paid and all(v["reward"] == 0.0 for v in paid.values()), paid
