"""Requests a project folder cannot support (synthesis/tasks/projects/missing_data.py): asked in
a feasible report's words, answered by looking and declining with the fact a call showed. In
the sandbox the gold run passes, every made-up report fails, the oracle's answer is grounded;
through the shipped module a right refusal in the agent's own words earns 1, and doing
nothing, a false "done", a reason-less or false refusal, and an invented report earn 0."""

from __future__ import annotations

import json
import re
import statistics

import pytest

from quality.grounding import answer_problems, episode_messages
from quality.selftest import selftest_outcomes
from synthesis.config import DATA_DIR
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.models import Topic
from synthesis.rollouts.episodes import system_prompt
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.projects import ledger_reports
from synthesis.tasks.projects.scenarios import (
    INFEASIBLE_SHARE,
    infeasible_quota,
    plan_infeasible_tasks,
    plan_project_scenarios,
    plan_project_tasks,
)
from tests.project_support import months_said
from tests.shard_support import task_shards

REQUESTS = (
    ledger_reports.QUARTER_TABLE_REQUESTS
    + ledger_reports.ITEM_COUNTS_REQUESTS
    + ledger_reports.LARGEST_ROWS_REQUESTS
    + ledger_reports.CLEAN_MONTH_REQUESTS
    + ledger_reports.GROUP_ITEMS_REQUESTS
)


def _topic(n: int = 0) -> Topic:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return Topic.model_validate([t for t in catalogue["topics"] if t["archetype"] == "project"][n])


@pytest.fixture(scope="module")
def built():
    """The first project topic's environment and its infeasible tasks, run and checked."""
    env = build_environment(generate_spec(_topic()))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    model = from_spec(env.spec, env)
    planned = plan_project_scenarios(env, state, seed=5, count=24)
    refused = [s for s in planned if s.kind == "infeasible"]
    executed = execute_gold(env, refused, model=model)
    assert [s.status for s in executed] == ["published"] * len(executed), executed[0].reason
    items = [(s, derive_checks(s, model=model)) for s in executed]
    return env, model, items, selftest_outcomes(env, items, model=model)


def _shape(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z0-9]+\}", template[0].upper() + template[1:])
    return re.compile(".+?".join(re.escape(p) for p in parts))


def test_each_kind_is_asked_in_the_words_of_a_feasible_report_and_planned_alike():
    topic = _topic()
    spec = generate_spec(topic)
    project = project_folder(spec.workspace, 4)
    tasks = plan_infeasible_tasks(project, spec.workspace, 9, 6)
    assert {t.kind for t in tasks} == {"missing_period", "missing_group", "missing_figure"}
    again = plan_infeasible_tasks(project_folder(spec.workspace, 4), spec.workspace, 9, 6)
    assert [(t.task_text, t.gold_chain, t.mistakes, t.reply) for t in again] == [
        (t.task_text, t.gold_chain, t.mistakes, t.reply) for t in tasks
    ]
    shapes = [_shape(r) for r in REQUESTS]
    for task in tasks:
        assert any(s.search(task.task_text) for s in shapes), task.task_text
        path = task.reply["refusal"]["declined"]["what"].removeprefix("write ")
        assert path in task.task_text and path.startswith("reports/")
        tools = [c["tool"] for c in task.gold_chain]
        assert tools[:3] == ["tree", "cat", "cat"] and "write" not in tools, tools
        assert len(tools) >= 10, tools  # it looks everywhere the data could be
        assert not task.outputs and len(task.mistakes) >= 2
        assert all(m.chain[-1]["tool"] == "write" for m in task.mistakes)


def test_the_missing_data_is_truly_missing_from_the_folder():
    topic = _topic()
    spec = generate_spec(topic)
    for seed in range(4):
        project = project_folder(spec.workspace, seed)
        ledgers = [p for p in project.files if re.fullmatch(r"data/\w+_2024-\d\d\.csv", p)]
        for task in plan_infeasible_tasks(project, spec.workspace, seed, 4):
            text = task.task_text
            if task.kind == "missing_figure":
                figure = "VAT" if "VAT" in text else "sales tax"
                assert figure in text and figure not in project.ledger.columns
                assert all(figure.casefold() not in t.casefold() for t in project.files.values())
            elif task.kind == "missing_group":
                # The refusal's reason names the group: "no sales row has region Midlands; ..."
                because = task.reply["refusal"]["declined"]["because"]
                field = spec.workspace["group_field"].replace("_", " ")
                group = because.split(f" has {field} ", 1)[1].split(";", 1)[0]
                assert group in text and group not in spec.workspace["groups"]
                assert all(group.casefold() not in t.casefold() for t in project.files.values())
            else:
                # A period of the half year the folder does not hold: after its ledgers,
                # which end in June, or before them, which start in July.
                asked = months_said(text)
                assert asked and not asked & set(project.ledger.period), text
                if max(asked) > 6:
                    assert max(ledgers) == f"data/{project.ledger.name}_2024-06.csv"
                else:
                    assert min(ledgers) == f"data/{project.ledger.name}_2024-07.csv"


def test_a_share_of_each_states_tasks_is_infeasible_and_the_feasible_ones_stay_as_they_were():
    quotas = [infeasible_quota(6, "env", f"state-{i}", 0) for i in range(400)]
    assert abs(statistics.mean(quotas) / 6 - INFEASIBLE_SHARE) < 0.02
    topic = _topic()
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    planned = plan_project_scenarios(env, state, seed=5, count=24)
    refused = [s for s in planned if s.kind == "infeasible"]
    assert 1 <= len(refused) <= 5 and planned[-len(refused) :] == refused
    assert all(s.difficulty["infeasible"] and s.provenance["reply"]["refusal"] for s in refused)
    project = project_folder(env.spec.workspace, state.seed)
    assert len(plan_project_tasks(project, env.spec.workspace, 1, 3)) == 3


def test_in_the_sandbox_gold_is_proven_and_every_made_up_report_fails(built):
    _, _, items, outcomes = built
    assert {s.provenance["workspace_goals"][0] for s, _ in items} == {
        "missing_period",
        "missing_group",
        "missing_figure",
    }
    for (scenario, checks), outcome in zip(items, outcomes, strict=True):
        st = outcome.selftest
        assert st.gold_pass and st.noop_fail and st.deterministic, st.reason
        assert st.shortcuts_fail and st.alternatives_pass, st.shortcut_rewards
        assert st.mutation_kill_rate == 1.0
        verdicts = {m.label: v for m, v in outcome.mutants if m.kind == "mistake"}
        labels = [m["label"] for m in scenario.provenance["mistakes"]]
        assert labels and all(verdicts[label] == "killed" for label in labels), verdicts
        assert scenario.final_state == scenario.start_state  # the gold run wrote nothing
        types = {c.spec["type"] for c in checks}
        assert {"reply_refuses", "no_other_file_changes"} <= types


def test_the_oracle_states_the_reason_its_calls_showed_and_nothing_else(built):
    _, model, items, _ = built
    for scenario, _ in items:
        reply = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
        assert reply.startswith("I couldn't write reports/") and "Nothing was changed." in reply
        messages = episode_messages(
            system_prompt(model),
            scenario.task_text,
            [(c.tool, dict(c.args)) for c in scenario.gold_chain],
            scenario.gold_results,
            reply,
        )
        assert answer_problems(messages, scenario.start_state, scenario.final_state) == []
        # A run that did not look cannot give the reason: it says it could not look it up.
        blind = [None] * len(scenario.gold_results)
        unseen = oracle_answer(scenario, scenario.final_state, blind, model=model)
        assert "could not look up" in unseen


def _graded(scenario, checks, reply: str, written: dict | None = None) -> float:
    shown = [
        efr.observation(c.tool, dict(c.args), r)
        for c, r in zip(scenario.gold_chain, scenario.gold_results, strict=True)
    ]
    final = json.loads(json.dumps(scenario.final_state))
    final["__workspace__"]["files"].update(written or {})
    specs = [c.spec for c in checks]
    return efr.grade(specs, scenario.start_state, final, reply, shown=shown)[0]


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    _, model, items, _ = built
    for scenario, checks in items:
        kind = scenario.provenance["workspace_goals"][0]
        oracle = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
        path = scenario.provenance["reply"]["refusal"]["declined"]["what"].removeprefix("write ")
        if kind == "missing_period":
            # The ledgers stop at June 2024, or start at July 2024: the folder's half.
            edge = scenario.provenance["reply"]["refusal"]["reasons"][0]["texts"][0]
            ends = "stop" if edge.startswith("June") else "start"
            right = f"I can't make that report: the sales ledgers in data/ {ends} at {edge}."
            false = "I can't make that report: there are no sales ledgers after March 2024."
        elif kind == "missing_figure":
            columns = scenario.provenance["reply"]["refusal"]["reasons"][0]["texts"][0]
            right = f"I can't work the tax out: each row only records {columns}."
            false = "I can't, the tax rates for that period are not agreed yet."
        else:
            groups = scenario.provenance["reply"]["refusal"]["reasons"][0]["texts"][0]
            right = f"Sorry, I couldn't find that region in the ledgers; they only have {groups}."
            false = "Sorry, I couldn't do it: that region's ledger file is locked."
        assert _graded(scenario, checks, oracle) == 1.0
        assert _graded(scenario, checks, right) == 1.0, right
        for wrong in (
            "",
            false,
            "Sorry, I can't help with that request.",
            f"Done: the report is in {path}.",
            f"I couldn't write {path}: I'm not able to do that.",
        ):
            assert _graded(scenario, checks, wrong) == 0.0, wrong
        invented = {path: scenario.provenance["mistakes"][0]["chain"][-1]["args"]["text"]}
        assert _graded(scenario, checks, oracle, invented) == 0.0


def test_the_rl_line_grades_through_the_shipped_module(built, tmp_path):
    env, model, items, _ = built
    scenario, checks = items[0]
    line = task_shards(tmp_path, env, scenario, checks, "You work in a project folder.")
    task = json.loads(line.read_text().splitlines()[0])
    oracle = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
    played = efr.load_env(task, trust=True, root=str(tmp_path))
    assert efr.score(task, played) == {"reward": 0.0, "success": False}
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(played, call.tool, call.args) == expected
    assert efr.score(task, played, oracle) == {"reward": 1.0, "success": True}
    assert efr.score(task, played, "")["reward"] == 0.0
    made_up = efr.load_env(task, trust=True, root=str(tmp_path))
    for call in scenario.provenance["mistakes"][-1]["chain"]:
        efr.step(made_up, call["tool"], call["args"])
    assert efr.score(task, made_up, oracle)["reward"] == 0.0
