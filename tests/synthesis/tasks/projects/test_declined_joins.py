"""The declined twins of the join kinds (synthesis/tasks/projects/joins.py DECLINED): each kind's
request, in its own words, for data the folder does not hold - the totals by category, the
targets or a month's JSON Lines of a period of the half year the ledgers do not cover, the
deduplicated contacts with a field no record has. In the sandbox every twin's gold run is
published and changes nothing, every made-up output fails, the oracle's answer is grounded;
through the shipped module a right refusal in the agent's own words earns 1, and a false
"done", a refusal with no reason or a false one, and the made-up output earn 0; what a twin
asks for is truly missing from the folder, and a feasible request of its kind never is; by
their words alone the twins are not told from their kinds' feasible requests."""

from __future__ import annotations

import json
import random
import re
from collections import defaultdict

import pytest

from synthesis.config import DATA_DIR
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import folder_half, project_folder
from synthesis.environments.projects.ledgers import MONTH_NAMES, YEAR
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.models import Topic
from synthesis.tasks.projects import joins
from tests.project_support import months_said
from tests.synthesis.tasks.projects import declined_support as support

# The twin of each feasible kind, by the kinds' names.
TWINS = {
    "category_totals": "missing_category_period",
    "group_targets": "missing_target_period",
    "dedup_contacts": "missing_contact_field",
    "month_jsonl": "missing_jsonl_month",
}
PERIODS = ("missing_category_period", "missing_target_period", "missing_jsonl_month")
# Sales (its group a place: its contacts are asked for a department, a team ...) and expenses
# (its group a department: its contacts are asked for a place).
TOPICS = ("regional_sales_reports", "team_expense_claims")


def _topic(topic_id: str) -> Topic:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return Topic.model_validate(next(t for t in catalogue["topics"] if t["topic_id"] == topic_id))


def _seeds_by_half(count: int = 2) -> dict[int, list[int]]:
    """Folder seeds whose ledgers cover each half of the year."""
    seeds: dict[int, list[int]] = {1: [], 2: []}
    for seed in range(40):
        if len(seeds[folder_half(seed)]) < count:
            seeds[folder_half(seed)].append(seed)
    return seeds


@pytest.fixture(scope="module")
def built():
    """Every twin's declined request in a folder of each half of the sales topic and in one of
    the expenses topic, made scenarios as plan_project_scenarios makes them, run in the
    sandbox and self-tested."""
    items, outcomes, envs = [], [], []
    for topic_id, halves in zip(TOPICS, ((1, 2), (2,)), strict=True):
        env = build_environment(generate_spec(_topic(topic_id)))
        model = from_spec(env.spec, env)
        refused = []
        for half in halves:
            state = next(
                s
                for s in (
                    build_initial_state(env, seed=3, index=i, records_per_entity=4)
                    for i in range(12)
                )
                if folder_half(s.seed) == half
            )
            project = project_folder(env.spec.workspace, state.seed)
            for twin in joins.DECLINED.values():
                # A draw of its own for each: the dedup twins of a topic ask for a CSV and
                # for JSON Lines, one group's people and everyone's.
                task = twin(project, env.spec.workspace, random.Random(len(refused) + half))
                assert task is not None
                refused.append((state, task))
        pairs, proven = support.run_and_selftest(env, model, refused)
        items += [(model, s, checks) for s, checks in pairs]
        outcomes += proven
        envs.append(env)
    return envs, items, outcomes


def test_in_the_sandbox_gold_is_proven_and_every_made_up_output_fails(built):
    _, items, outcomes = built
    assert {s.provenance["workspace_goals"][0] for _, s, _ in items} == set(TWINS.values())
    support.assert_proven([(s, checks) for _, s, checks in items], outcomes, min_mistakes=2)


def test_the_oracle_states_the_reason_its_calls_showed_and_nothing_else(built):
    _, items, _ = built
    for model, scenario, _ in items:
        support.oracle_reply_grounded(scenario, model, "I couldn't write reports/")


def _replies(scenario) -> tuple[str, str]:
    """A right refusal in an agent's own words, and one whose reason is false."""
    reason = scenario.provenance["reply"]["refusal"]["reasons"][0]
    because = scenario.provenance["reply"]["refusal"]["declined"]["because"]
    if scenario.provenance["workspace_goals"][0] in PERIODS:
        name = re.match(r"the (?:latest|earliest) (\w+) ledger in data/", because)[1]
        # The ledgers stop at June 2024, or start at July 2024: the folder's half.
        edge = reason["texts"][0]
        later = edge.startswith("June")
        ends = "stop" if later else "start"
        wrong = f"{MONTH_NAMES[2 if later else 9]} {YEAR}"
        return (
            f"I can't do that one: the {name} ledgers in data/ {ends} at {edge}.",
            f"I can't do that one: the {name} ledgers in data/ {ends} at {wrong}.",
        )
    field = reason["rule"].removeprefix("no_data:").replace("_", " ")
    fields = reason["texts"][0].replace(", merged into", "")
    return (
        f"Sorry, I couldn't make that list: no contact record has a {field}. Each only has"
        f" {fields}.",
        f"Sorry, I couldn't make that list: the {field} column is locked in the CRM.",
    )


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    _, items, _ = built
    for model, scenario, checks in items:
        path = scenario.provenance["reply"]["refusal"]["declined"]["what"].removeprefix("write ")
        right, false = _replies(scenario)
        wrongs = (false, f"Done: it's in {path}.")
        support.assert_refusals_graded(
            scenario, checks, model, (right,), wrongs, support.last_text_at(path)
        )


def test_what_a_twin_asks_for_is_not_in_the_folder_and_a_feasible_request_is():
    seeds = _seeds_by_half()
    for topic_id in TOPICS:
        vocabulary = generate_spec(_topic(topic_id)).workspace
        for seed in seeds[1] + seeds[2]:
            project = project_folder(vocabulary, seed)
            ledger = project.ledger
            # Every dated row of any file (the ledgers, last year's, the copies, the
            # corrections): the months of YEAR the folder has rows of.
            held = {
                int(m)
                for text in project.files.values()
                for m in re.findall(rf"^{YEAR}-(\d\d)-\d\d,", text, flags=re.M)
            }
            assert held == set(ledger.period)
            contacts = project.files[project.parts["reference_data"].contacts_path]
            keys = {k for line in contacts.splitlines() for k in json.loads(line)}
            for feasible, twin in support.drawn_pairs(joins.DECLINED, project, vocabulary):
                assert twin.kind == TWINS[feasible.kind]
                if twin.kind in PERIODS:
                    asked, done = months_said(twin.task_text), months_said(feasible.task_text)
                    assert asked and not asked & held, twin.task_text
                    assert done and done <= held, feasible.task_text
                    # No table is named for them (the service's logs of July may be).
                    tables = [p for p in project.files if p.startswith(("data/", "archive/"))]
                    assert not any(f"{YEAR}-{m:02d}" in p for m in asked for p in tables)
                else:
                    field = twin.reply["refusal"]["reasons"][0]["rule"].removeprefix("no_data:")
                    assert field in twin.task_text and field not in keys
                    assert ledger.group_field in keys and ledger.group_field in feasible.task_text
                    # No file names it as a word: no record, table header or note has it.
                    for text in project.files.values():
                        assert not re.search(rf"(?<!\w){field}(?!\w)", text, flags=re.I)


def test_each_twin_is_its_kinds_request_with_only_the_missing_thing_changed():
    seeds = _seeds_by_half(1)
    for topic_id in TOPICS:
        vocabulary = generate_spec(_topic(topic_id)).workspace
        first, second = (project_folder(vocabulary, seeds[h][0]) for h in (1, 2))
        for project, other in ((first, second), (second, first)):
            for draw in range(6):
                for kind, twin in joins.DECLINED.items():
                    task = twin(project, vocabulary, random.Random(draw))
                    support.assert_same_draw(task, twin(project, vocabulary, random.Random(draw)))
                    if task.kind in PERIODS:
                        # Word for word the feasible request of a folder of the other half.
                        feasible = kind(other, vocabulary, random.Random(draw))
                        assert task.task_text == feasible.task_text
                    else:
                        # The feasible request of this folder, one column's name changed.
                        feasible = kind(project, vocabulary, random.Random(draw))
                        field = task.reply["refusal"]["reasons"][0]["rule"].split(":")[1]
                        said = re.sub(rf"\b{field}\b", project.ledger.group_field, task.task_text)
                        assert said == feasible.task_text
                    # It looks everywhere the data could be.
                    support.assert_only_looks(task, ["tree", "cat"], min_calls=8, min_mistakes=2)
                    path = task.reply["refusal"]["declined"]["what"].removeprefix("write ")
                    assert path in task.task_text and path.startswith("reports/")
                    assert all(m.chain[:-1] == task.gold_chain for m in task.mistakes)
                    assert all(m.chain[-1]["args"]["path"] == path for m in task.mistakes)


def test_by_their_words_the_twins_are_not_told_from_their_kinds_requests():
    # benchmarks/declined_twins.py's measure, over its default sample of topics and folders.
    texts: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for topic in support.project_topics(16):
        vocabulary = generate_spec(topic).workspace
        for seed in range(4):
            project = project_folder(vocabulary, seed)
            for feasible, twin in support.drawn_pairs(joins.DECLINED, project, vocabulary):
                texts[feasible.kind] += [(feasible.task_text, False), (twin.task_text, True)]
    assert set(texts) == set(TWINS)
    support.assert_twins_not_told_apart(texts)
