"""Requests a project folder cannot support (synthesis/tasks/projects/missing_data.py): every
ledger report kind's declined twin, asked in the kind's own words (word for word a feasible
request of a folder of the other half, for a period), answered by looking and declining with
the fact a call showed. In the sandbox every twin's gold run passes, every made-up report
fails, the oracle's answer is grounded; through the shipped module a right refusal in the
agent's own words earns 1, and doing nothing, a false "done", a reason-less or false refusal,
and an invented report earn 0; by their words alone the twins are not told from their kinds'
feasible requests (benchmarks/declined_twins.py's measure)."""

from __future__ import annotations

import json
import random
import re
import statistics

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import folder_half, project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.projects import ledger_reports, missing_data, scenarios
from synthesis.tasks.projects.scenarios import (
    INFEASIBLE_SHARE,
    infeasible_quota,
    plan_infeasible_tasks,
    plan_project_scenarios,
    plan_project_tasks,
)
from tests.project_support import months_said
from tests.shard_support import task_shards
from tests.synthesis.tasks.projects import declined_support as support

# Each report kind's words (ledger_reports' request constants), by the kind's name.
REQUESTS = {
    "quarter_table": ledger_reports.QUARTER_TABLE_REQUESTS,
    "monthly_json": ledger_reports.MONTHLY_JSON_REQUESTS,
    "item_counts": ledger_reports.ITEM_COUNTS_REQUESTS,
    "clean_month": ledger_reports.CLEAN_MONTH_REQUESTS,
    "half_year_pack": ledger_reports.HALF_YEAR_PACK_REQUESTS,
    "group_items": ledger_reports.GROUP_ITEMS_REQUESTS,
    "largest_rows": ledger_reports.LARGEST_ROWS_REQUESTS,
}
REASONS = ("missing_period", "missing_group", "missing_figure")
# Every twin and what it finds missing: a period always; a group or a figure now and then.
COVERED = {(kind, "missing_period") for kind in REQUESTS} | {
    ("group_items", "missing_group"),
    ("quarter_table", "missing_figure"),
}


def _shape(template: str) -> re.Pattern[str]:
    parts = re.split(r"\{[a-z0-9]+\}", template[0].upper() + template[1:])
    return re.compile(".+?".join(re.escape(p) for p in parts))


SHAPES = {kind: [_shape(t) for t in templates] for kind, templates in REQUESTS.items()}


def _kind_of(text: str) -> str | None:
    """The report kind in whose words `text` asks (None: no ledger report's)."""
    kinds = [k for k, shapes in SHAPES.items() if any(s.search(text) for s in shapes)]
    assert len(kinds) <= 1, (kinds, text)
    return kinds[0] if kinds else None


def _twins(project, vocabulary, draws: int = 6):
    """(feasible kind's name, twin task) of every twin over `draws` draws."""
    for kind, twin in missing_data.DECLINED.items():
        name = kind.__name__.removeprefix("_")
        for draw in range(draws):
            yield name, twin(project, vocabulary, random.Random(draw))


@pytest.fixture(scope="module")
def built():
    """The first project topic's environment and one declined request of every twin (and of
    everything a twin finds missing), from the states' planned declined requests: a state
    asks a few, so the states are taken in turn until every twin is among them; made
    scenarios as plan_project_scenarios makes them, run and checked."""
    env = build_environment(generate_spec(support.project_topics(1)[0]))
    model = from_spec(env.spec, env)
    chosen: dict[tuple[str, str], tuple] = {}
    for index in range(24):
        state = build_initial_state(env, seed=3, index=index, records_per_entity=4)
        project = project_folder(env.spec.workspace, state.seed)
        count = len(scenarios.KINDS)
        for task in plan_infeasible_tasks(project, env.spec.workspace, index, count):
            key = (_kind_of(task.task_text), task.kind)
            if key not in COVERED or key in chosen:
                continue  # another module's twin, or one of this twin's already chosen
            # Alternate kinds' declined periods from folders of alternate halves: a period
            # declined is after some folders' ledgers and before others'.
            half = folder_half(state.seed)
            if key[1] == "missing_period" and half != 1 + list(REQUESTS).index(key[0]) % 2:
                continue
            chosen[key] = (state, task)
        if set(chosen) == COVERED:
            break
    assert set(chosen) == COVERED, sorted(COVERED - set(chosen))
    items, outcomes = support.run_and_selftest(env, model, chosen.values())
    return env, model, items, outcomes


def test_each_twin_is_asked_in_its_kinds_words_and_only_looks():
    spec = generate_spec(support.project_topics(1)[0])
    for seed in (0, 1, 4):
        project = project_folder(spec.workspace, seed)
        for name, task in _twins(project, spec.workspace):
            assert task.kind in REASONS, task.kind
            assert _kind_of(task.task_text) == name, (name, task.task_text)
            path = task.reply["refusal"]["declined"]["what"].removeprefix("write ")
            assert all(p in task.task_text for p in path.split(" and ")), path
            assert path.startswith("reports/")
            # It looks everywhere the data could be.
            support.assert_only_looks(task, ["tree", "cat", "cat"], min_calls=10, min_mistakes=2)
            assert all(m.chain[:-1] == task.gold_chain for m in task.mistakes)
            assert all(m.chain[-1]["tool"] == "write" for m in task.mistakes)
            assert all(m.chain[-1]["args"]["path"] in path for m in task.mistakes)
    # A pure function of the folder and the draw.
    project = project_folder(spec.workspace, 4)
    tasks = plan_infeasible_tasks(project, spec.workspace, 9, 12)
    again = plan_infeasible_tasks(project_folder(spec.workspace, 4), spec.workspace, 9, 12)
    assert [(t.task_text, t.gold_chain, t.mistakes, t.reply) for t in again] == [
        (t.task_text, t.gold_chain, t.mistakes, t.reply) for t in tasks
    ]


def test_a_declined_period_is_word_for_word_a_feasible_request_of_the_other_half():
    # The same draws ask the same request: declined in a folder that lacks its half, done in
    # one that holds it. Only the folder tells them apart.
    spec = generate_spec(support.project_topics(1)[0])
    seeds = {folder_half(s): s for s in range(8)}
    for half in (1, 2):
        lacking = project_folder(spec.workspace, seeds[half])
        holding = project_folder(spec.workspace, seeds[3 - half])
        for kind, twin in missing_data.DECLINED.items():
            for draw in range(6):
                declined = twin(lacking, spec.workspace, random.Random(draw))
                if declined.kind != "missing_period":
                    continue
                done = kind(holding, spec.workspace, random.Random(draw))
                assert declined.task_text == done.task_text
                assert {o["path"] for o in done.outputs} == set(
                    declined.reply["refusal"]["declined"]["what"][6:].split(" and ")
                )


def test_the_missing_data_is_truly_missing_from_the_folder():
    for topic in support.project_topics(4):
        vocabulary = generate_spec(topic).workspace
        for seed in range(4):
            project = project_folder(vocabulary, seed)
            ledger = project.ledger
            text_of_all = "\n".join(project.files.values()).casefold()
            for _, task in _twins(project, vocabulary, draws=4):
                text = task.task_text
                if task.kind == "missing_figure":
                    figure = "VAT" if "VAT" in text else "sales tax"
                    assert figure in text and figure not in ledger.columns
                    assert figure.casefold() not in text_of_all
                elif task.kind == "missing_group":
                    # The refusal's reason names the group: "no sales row has region Midlands".
                    because = task.reply["refusal"]["declined"]["because"]
                    field = vocabulary["group_field"].replace("_", " ")
                    group = because.split(f" has {field} ", 1)[1].split(";", 1)[0]
                    assert group in text and group not in vocabulary["groups"]
                    assert group.casefold() not in text_of_all
                    rows = [r for m in ledger.period for r in ledger.months[m]]
                    assert all(r.group != group for r in rows)
                else:
                    # A period of the half year the folder does not hold: after its ledgers,
                    # which end in June, or before them, which start in July; no ledger of
                    # its months and no dated row of them in any table of the folder.
                    asked = months_said(text)
                    assert asked and not asked & set(ledger.period), text
                    assert all(ledger.path(m) not in project.files for m in asked)
                    dated = re.compile("^2024-(" + "|".join(f"{m:02d}" for m in asked) + ")-", re.M)
                    tables = [t for p, t in project.files.items() if p.endswith(".csv")]
                    assert not any(dated.search(t.lstrip("\ufeff")) for t in tables)
                    ledgers = sorted(
                        p for p in project.files if re.fullmatch(r"data/\w+_2024-\d\d\.csv", p)
                    )
                    if max(asked) > 6:
                        assert ledgers[-1] == f"data/{ledger.name}_2024-06.csv"
                    else:
                        assert ledgers[0] == f"data/{ledger.name}_2024-07.csv"


def test_a_share_of_each_states_tasks_is_infeasible_and_the_feasible_ones_stay_as_they_were():
    quotas = [infeasible_quota(6, "env", f"state-{i}", 0) for i in range(400)]
    assert abs(statistics.mean(quotas) / 6 - INFEASIBLE_SHARE) < 0.02
    topic = support.project_topics(1)[0]
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    planned = plan_project_scenarios(env, state, seed=5, count=24)
    refused = [s for s in planned if s.kind == "infeasible"]
    assert 1 <= len(refused) <= 5 and planned[-len(refused) :] == refused
    assert all(s.difficulty["infeasible"] and s.provenance["reply"]["refusal"] for s in refused)
    project = project_folder(env.spec.workspace, state.seed)
    assert len(plan_project_tasks(project, env.spec.workspace, 1, 3)) == 3


def test_in_the_sandbox_every_twins_gold_is_proven_and_every_made_up_report_fails(built):
    _, _, items, outcomes = built
    assert {
        (_kind_of(s.task_text), s.provenance["workspace_goals"][0]) for s, _ in items
    } == COVERED
    support.assert_proven(items, outcomes)


def test_the_oracle_states_the_reason_its_calls_showed_and_nothing_else(built):
    _, model, items, _ = built
    for scenario, _ in items:
        support.oracle_reply_grounded(scenario, model, "I couldn't write reports/")


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    _, model, items, _ = built
    for scenario, checks in items:
        kind = scenario.provenance["workspace_goals"][0]
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
        # Each made-up report written anyway: the mistake's last call.
        wrongs = (false, f"Done: the report is in {path}.")
        support.assert_refusals_graded(
            scenario, checks, model, (right,), wrongs, support.last_write
        )


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


def test_by_their_words_alone_the_twins_are_not_told_from_their_kinds_requests():
    # benchmarks/declined_twins.py's measure (a bag-of-words classifier's held-out AUC of
    # telling each kind's twins from its feasible requests) over fewer topics and folders,
    # as a build draws them: every request from a draw of its own (the benchmark draws a
    # twin and its kind alike, so a twin is said as its kind is by construction), and as
    # many folders of either half (which half a twin declines depends on the folder's).
    seeds = [s for s in range(20) if folder_half(s) == 1][:2]
    seeds += [s for s in range(20) if folder_half(s) == 2][:2]
    texts: dict[str, list[tuple[str, bool]]] = {name: [] for name in REQUESTS}
    for n, topic in enumerate(support.project_topics(8)):
        vocabulary = generate_spec(topic).workspace
        for seed in seeds:
            project = project_folder(vocabulary, seed)
            for kind, twin in missing_data.DECLINED.items():
                name = kind.__name__.removeprefix("_")
                for draw in range(6):
                    feasible = kind(project, vocabulary, random.Random(f"done {n} {seed} {draw}"))
                    declined = twin(project, vocabulary, random.Random(f"not {n} {seed} {draw}"))
                    texts[name] += [(feasible.task_text, False), (declined.task_text, True)]
    support.assert_twins_not_told_apart(texts)
