# ruff: noqa: F811 - `make_client` is a fixture imported from llm_support, used as a parameter
"""Project topics written by the LLM stages: a corpus request about a folder of monthly CSVs
is mined as a `project` topic, the `project_topic` stage has the model write its folder's
vocabulary, and what it writes is taken only when every name is safe in files, programs and
checks and our own code makes the folder and plans its tasks. The written topic's tasks are
proven in the sandbox like the catalogue's (gold passes, every mistake fails); a broken answer
is repaired once with every problem listed, or the topic is dropped with its reason and the
next candidate takes its place; answers come from the cache on a second run. A rewording of a
project request (the `task_text` stage) must keep every path, column and period the checks
read."""

from __future__ import annotations

import json
import re
import threading

import pytest

from sandboxes import EnvSource
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import environment_code
from synthesis.environments.projects.code_project import STATE_KEY
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.llm import task_text
from synthesis.llm.project_topic import (
    SCHEMA,
    STAGE,
    example_vocabulary,
    vocabulary_fault,
    vocabulary_of,
)
from synthesis.llm.structured import schema_violation
from synthesis.llm.task_text import output_facts, required_facts, text_fault
from synthesis.llm.topic_mining import CorpusRequest, mine_topics, request_messages
from synthesis.models import Topic
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.plan import TaskPlan
from synthesis.tasks.projects.scenarios import KINDS, plan_project_tasks
from synthesis.tasks.text.voices import PERSONAS
from tests.fakes.llm_projects import answer_project_topic, good_vocabulary
from tests.fakes.llm_topics import answer_topic
from tests.fakes.openai_server import FakeOpenAIServer, final_answer
from tests.project_support import run_gold_and_mistakes
from tests.synthesis.llm.llm_support import make_client  # noqa: F401 - a fixture

PROJECT = CorpusRequest(
    "req-p", "Add up our Q1 sales by region from the monthly CSVs and send it to finance.", 1
)
BARBER = CorpusRequest("req-b", "Please cancel my haircut at the barber on Saturday.", 2)
TOPIC_ID = "mined_garden_centre_tills"
TOPIC = Topic(topic_id=TOPIC_ID, title="Garden centre tills", archetype="project")


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


def _respond(*project_answers: str):
    """The topic fake, and the project_topic stage answered with `project_answers` in turn
    (the last one again for every further request)."""
    queue = list(project_answers)
    lock = threading.Lock()

    def respond(request):
        schema = (request.get("response_format") or {}).get("json_schema") or {}
        if schema.get("name") != STAGE:
            return answer_topic(request)
        with lock:
            return final_answer(queue.pop(0) if len(queue) > 1 else queue[0])

    return respond


def _asked(server, stage: str) -> list[dict]:
    return [r for r in server.requests if r["response_format"]["json_schema"]["name"] == stage]


def _fault(**changes) -> str | None:
    value = {**good_vocabulary(), **changes}
    return vocabulary_fault(TOPIC, value)


# --------------------------------------------------------------------------- mining


def test_the_topic_stage_offers_project_with_its_hint():
    (_, user) = request_messages(PROJECT, supported_archetypes())
    assert (
        "- project: a team's folder of data files (ledgers, reports) worked on with files and "
        "a shell" in user["content"].splitlines()
    )


def test_a_request_about_monthly_csvs_becomes_a_project_topic_with_the_models_vocabulary(
    make_client, catalogue
):
    with FakeOpenAIServer(_respond(json.dumps(good_vocabulary()))) as server:
        mined = mine_topics(make_client(server), [PROJECT, BARBER], catalogue, 2)
        (asked,) = _asked(server, STAGE)
    assert asked["response_format"]["json_schema"]["schema"] == SCHEMA
    # The model is told the business and the request it was mined from.
    shown = json.loads(asked["messages"][1]["content"].removeprefix("Topic: "))
    assert shown == {
        "title": "Garden centre tills",
        "description": "The shop team's folder of monthly till ledgers and the reports made "
        "from them.",
        "request": PROJECT.request,
    }
    kept = {k.topic.topic_id: k for k in mined.kept}
    assert set(kept) == {TOPIC_ID, "mined_barber_shop"}
    project = kept[TOPIC_ID]
    assert project.vocabulary_from == STAGE
    assert project.topic.vocabulary == vocabulary_of("Garden centre tills", good_vocabulary())
    # Borrowed vocabularies stay for the other archetypes.
    assert kept["mined_barber_shop"].vocabulary_from != STAGE
    assert sorted((c.stage, c.status) for c in mined.attempts) == [
        (STAGE, "accepted"),
        ("topic", "accepted"),
        ("topic", "accepted"),
    ]
    spec = generate_spec(project.topic)
    assert spec.env_id == f"{TOPIC_ID}-project"
    assert spec.workspace["items"]["Garden furniture"] == [120, 1900]


def test_the_written_topics_tasks_are_proven_in_the_sandbox(make_client, catalogue):
    """What the build's self-test does: the gold program passes every check, every mistake
    fails one; and each task is real work (at least 6 calls, the run among them)."""
    with FakeOpenAIServer(_respond(json.dumps(good_vocabulary()))) as server:
        (kept,) = mine_topics(make_client(server), [PROJECT], catalogue, 1).kept
    spec = generate_spec(kept.topic)
    project = project_folder(spec.workspace, 3)
    tasks = plan_project_tasks(project, spec.workspace, 7, len(KINDS))
    initial = {"__workspace__": project.tree()}
    source = EnvSource(code=environment_code(spec))
    for task in tasks:
        assert len(task.gold_chain) >= 6 and task.mistakes, task.kind
    for task, _, label, result in run_gold_and_mistakes((source, initial, t) for t in tasks):
        assert result.status == "ok", (task.kind, label, result.reason)
        passed = all(_output_holds(o, initial, result.final_state) for o in task.outputs)
        assert passed == (label == "gold"), (task.kind, label)


def _output_holds(output: dict, initial: dict, final: dict | None) -> bool:
    # A code fix is judged by its state (the class reports the project's tests passing), a
    # report by its format.
    if output.get("judged_by") == "state":
        return (final or {}).get(STATE_KEY) == "passing"
    return evaluate_check(output, initial, final)


# --------------------------------------------------------------------------- the checks


def test_a_good_answer_passes_every_check():
    assert _fault() is None
    # The catalogue's own folders would pass as well: the checks are not stricter than them.
    for topic in load_catalogue():
        if topic.archetype == "project":
            v = topic.vocabulary
            items = [{"name": n, "low": lo, "high": hi} for n, (lo, hi) in v["items"].items()]
            value = {
                **{k: v[k] for k in SCHEMA["required"] if k in v},
                "items": items,
                "amount_field": v.get("amount_field", "amount"),
            }
            assert vocabulary_fault(topic, value) is None, topic.topic_id


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"group_field": "sales region"}, "group_field 'sales region': a lowercase identifier"),
        ({"ledger": "Tills-2024"}, "ledger 'Tills-2024': a lowercase identifier"),
        (
            {"statuses": ["paid", "Voided"]},
            "statuses ['voided']: both counted and void",
        ),
        ({"groups": ["Riverside"]}, "groups: 1 given; 2 to 8 expected"),
        ({"groups": [f"Branch {n}" for n in "ABCDEFGHI"]}, "groups: 9 given; 2 to 8 expected"),
        ({"groups": ["North, East", "South"]}, "groups 'North, East': start with a letter"),
        ({"groups": ["North/East", "South"]}, "groups 'North/East': start with a letter"),
        ({"groups": ["Riverside", "riverside"]}, "the same name twice"),
        ({"groups": ["Old Town", "Old-Town"]}, "two of them make one report file name"),
        ({"void_statuses": ["`void`"]}, "void_statuses '`void`': start with a letter"),
        ({"group_field": "total"}, "group_field 'total': a column the ledgers or reports have"),
        ({"status_field": "date"}, "status_field 'date': a column the ledgers or reports have"),
        ({"item_field": "branch"}, "fields ['branch'] name two columns"),
        ({"currency": "pounds"}, "currency 'pounds': a three-letter ISO code"),
        ({"features": ["head", "head"]}, "features: at most 6, each once"),
        ({"features": ["sudo"]}, "features ['sudo']: not among"),
        # The ledger's files would be taken for the folder's own (config/report.yaml, logs/).
        ({"ledger": "report"}, "ledger 'report': the name of another file or folder"),
        ({"ledger": "logs"}, "ledger 'logs': the name of another file or folder"),
    ],
)
def test_each_fault_is_named(changes, named):
    fault = _fault(**changes)
    assert fault is not None and fault.startswith("vocabulary: ")
    assert named in fault, fault


@pytest.mark.parametrize(("low", "high"), [(0, 50), (60, 50), (50, 50), (10, 1e9), (-5, 10)])
def test_item_amounts_must_be_a_sane_range(low, high):
    value = good_vocabulary()
    value["items"][0] = {"name": "Plants", "low": low, "high": high}
    fault = vocabulary_fault(TOPIC, value)
    assert fault is not None and "item 'Plants': amounts" in fault


def test_every_problem_is_listed_at_once_for_the_repair():
    value = good_vocabulary()
    value["statuses"] = ["paid", "returned"]
    value["items"][1]["name"] = "Tools, hand"
    value["items"][2]["low"] = 5000
    fault = vocabulary_fault(TOPIC, value)
    assert "both counted and void" in fault
    assert "items 'Tools, hand'" in fault
    assert "item 'Garden furniture': amounts [5000, 1900]" in fault


def test_a_copy_of_the_prompts_example_is_refused():
    example = example_vocabulary()
    items = [{"name": n, "low": lo, "high": hi} for n, (lo, hi) in example["items"].items()]
    value = {**good_vocabulary(), **{k: example[k] for k in ("ledger", "groups")}}
    value["items"] = items
    assert vocabulary_fault(TOPIC, value) is None  # alone it is a folder like any other
    fault = vocabulary_fault(TOPIC, value, [example])
    assert "a copy of the catalogue's 'Regional sales reports' folder" in fault


def test_the_schema_refuses_names_our_code_could_not_use():
    def violation(**changes):
        return schema_violation(SCHEMA, final_answer(json.dumps({**good_vocabulary(), **changes})))

    assert violation() is None
    assert "group_field" in violation(group_field="sales region")
    assert "features" in violation(features=["sudo"])
    assert "groups" in violation(groups=["Riverside"])
    assert violation(extra="x") is not None


# --------------------------------------------------------------------------- repairs, cache


def test_a_broken_answer_is_repaired_once_with_its_problem(make_client, catalogue):
    answers = ["{not json", json.dumps(good_vocabulary())]
    with FakeOpenAIServer(_respond(*answers)) as server:
        mined = mine_topics(make_client(server), [PROJECT], catalogue, 1)
        first, repair = _asked(server, STAGE)
    assert [k.topic.topic_id for k in mined.kept] == [TOPIC_ID]
    # The repair shows the model its answer and why it was refused.
    assert repair["messages"][:2] == first["messages"]
    assert repair["messages"][2] == {"role": "assistant", "content": "{not json"}
    assert "json: the answer is not JSON" in repair["messages"][3]["content"]
    assert [c.status for c in mined.attempts if c.stage == STAGE] == ["rejected", "accepted"]


def test_an_answer_still_broken_after_its_repair_drops_the_topic_and_the_run_goes_on(
    make_client, catalogue
):
    broken = good_vocabulary()
    broken["statuses"] = ["paid", "voided"]  # counted and void at once
    broken["items"][0]["name"] = "Plants/Seeds"
    with FakeOpenAIServer(_respond(json.dumps(broken))) as server:
        # One topic wanted: the project request is the more useful, so it is tried first,
        # and its place goes to the next candidate when its vocabulary is refused.
        mined = mine_topics(make_client(server), [PROJECT, BARBER], catalogue, 1)
        asked = _asked(server, STAGE)
    assert len(asked) == 2  # the answer and one repair, no more
    assert "both counted and void" in asked[1]["messages"][-1]["content"]
    assert "items 'Plants/Seeds'" in asked[1]["messages"][-1]["content"]
    assert [k.topic.topic_id for k in mined.kept] == ["mined_barber_shop"]
    (dropped,) = mined.dropped
    assert dropped.id == PROJECT.id
    assert dropped.reason.startswith(
        "project_topic: vocabulary: no valid answer after 2 attempts (last: vocabulary: "
    )
    assert "both counted and void" in dropped.reason


def test_a_second_run_takes_accepted_answers_from_the_cache_and_asks_rejected_ones_again(
    make_client, catalogue
):
    broken = good_vocabulary()
    broken["group_field"] = "total"
    with FakeOpenAIServer(_respond(json.dumps(good_vocabulary()))) as server:
        first = mine_topics(make_client(server), [PROJECT, BARBER], catalogue, 2)
        asked = len(server.requests)
        again = mine_topics(make_client(server), [PROJECT, BARBER], catalogue, 2)
        assert len(server.requests) == asked  # everything was accepted: nothing is asked
    assert json.dumps(again.artifact(), sort_keys=True) == json.dumps(
        first.artifact(), sort_keys=True
    )
    assert {c.status for c in again.attempts} == {"cached"}
    with FakeOpenAIServer(_respond(json.dumps(broken))) as server:
        refused = mine_topics(make_client(server), [PROJECT], catalogue, 1, seed=1)
        mine_topics(make_client(server), [PROJECT], catalogue, 1, seed=1)
        # The topic answer is cached; the refused vocabulary is asked again, with its repair.
        assert len(_asked(server, STAGE)) == 4
        assert len(_asked(server, "topic")) == 1
    assert refused.kept == [] and "a column the ledgers or reports have" in (
        refused.dropped[0].reason
    )


def test_the_fake_answers_only_its_own_stage():
    assert answer_project_topic({"response_format": {"json_schema": {"name": "topic"}}}) is None
    request = {"response_format": {"json_schema": {"name": STAGE}}}
    assert json.loads(answer_project_topic(request)["content"]) == good_vocabulary()


# --------------------------------------------------------------------------- task_text


@pytest.fixture(scope="module")
def report_task():
    topic = TOPIC.model_copy(update={"vocabulary": vocabulary_of(TOPIC.title, good_vocabulary())})
    spec = generate_spec(topic)
    tasks = plan_project_tasks(project_folder(spec.workspace, 3), spec.workspace, 7, len(KINDS))
    task = next(t for t in tasks if t.kind == "quarter_table")
    plan = TaskPlan(
        env_id=spec.env_id,
        state_id="s0",
        seed=0,
        index=0,
        title=spec.title,
        goals=[],
        gold_chain=[],
        roles=[],
        generator="test",
    )
    return task, plan


def test_a_rewording_of_a_project_request_keeps_every_path_column_and_period(report_task):
    task, plan = report_task
    offline = task.task_text
    (output,) = task.outputs
    facts = output_facts(task.outputs, offline)
    assert output["path"] in facts and set(output["columns"]) <= set(facts)
    assert "README" in facts and "2024" in facts
    assert (
        "Facts to keep exactly: " + "; ".join(required_facts(plan, offline, facts))
        in (task_text.request_messages(plan, offline, PERSONAS[0], facts)[1]["content"])
    )
    assert text_fault(plan, offline, "Hello there! " + offline, facts) is None
    without_path = offline.replace(output["path"], "the reports folder")
    assert text_fault(plan, offline, without_path, facts) == f"fact: missing {output['path']!r}"
    column = output["columns"][0]
    renamed = re.sub(column, "Area", offline, flags=re.IGNORECASE)
    assert text_fault(plan, offline, renamed, facts).startswith("fact: missing ")
    # Without the workspace facts (a tool task's plan has none of these) anything goes.
    assert text_fault(plan, offline, without_path) is None
