"""The declined twins of the log triage kinds (synthesis/tasks/projects/log_triage.py DECLINED):
each kind's request, in its own words, for a deploy the logs do not hold - a version of the
service that logs/deploys.log does not list and no file of the folder names (the release after
the last deploy, or one before the last). In the sandbox every twin's gold run is published and
changes nothing, every made-up report fails, the oracle's answer is grounded; through the
shipped module a right refusal in the agent's own words earns 1, and a false "done", a refusal
with no reason or a false one, and the made-up report earn 0; the version asked for is truly
in no file of the folder, and a feasible request's always in deploys.log; by their words alone
the twins are not told from their kinds' feasible requests."""

from __future__ import annotations

import random
import re
from collections import defaultdict

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.hashing import derive_seed
from synthesis.models import Topic
from synthesis.tasks.projects import log_triage
from tests.synthesis.tasks.projects import declined_support as support

KINDS = ("first_error", "component_counts", "distinct_errors")
VERSION = re.compile(r"v\d+\.\d+\.\d+")


def _later(version: str, listed: list[str]) -> bool:
    """Whether `version` comes after every deploy listed."""
    return log_triage._version_key(version) > log_triage._version_key(listed[-1])


def _asked(task) -> str:
    """The version a request names (a twin's reply says it has no such deploy)."""
    return VERSION.search(task.task_text)[0]


def _listed(project) -> list[str]:
    return [d.version for d in project.parts["service_logs"].deploys]


@pytest.fixture(scope="module")
def built():
    """Each twin in two folders of the sales topic, on both sides of the last deploy (the
    release after it, one before it), made scenarios as plan_project_scenarios makes them,
    run in the sandbox and self-tested."""
    env = build_environment(generate_spec(support.project_topics(1)[0]))
    model = from_spec(env.spec, env)
    refused = []
    for index in range(2):
        state = build_initial_state(env, seed=3, index=index, records_per_entity=4)
        project = project_folder(env.spec.workspace, state.seed)
        listed = _listed(project)
        for number, twin in enumerate(log_triage.DECLINED.values()):
            # A draw after the last deploy for one kind in each folder, before it for others.
            later = number == index
            task = next(
                t
                for t in (twin(project, env.spec.workspace, random.Random(d)) for d in range(40))
                if t is not None and _later(_asked(t), listed) == later
            )
            refused.append((state, task))
    items, outcomes = support.run_and_selftest(env, model, refused)
    return env, model, items, outcomes


def test_in_the_sandbox_gold_is_proven_and_every_made_up_report_fails(built):
    _, _, items, outcomes = built
    assert {s.provenance["workspace_goals"][0] for s, _ in items} == {"unlisted_deploy"}
    support.assert_proven(items, outcomes, min_mistakes=2)
    for scenario, _ in items:
        # What the looks showed: the version nowhere, the deploys listed as the reply says.
        version = _asked(scenario)
        grep = next(
            r
            for c, r in zip(scenario.gold_chain, scenario.gold_results, strict=True)
            if c.tool == "grep" and c.args["pattern"] == version
        )
        assert grep == {"success": True, "data": []}
        listed = scenario.provenance["reply"]["asked"][0]["value"]
        assert scenario.gold_results[-1]["data"]["output"] == listed


def test_the_oracle_states_the_reason_its_calls_showed_and_nothing_else(built):
    _, model, items, _ = built
    for scenario, _ in items:
        reply = support.oracle_reply_grounded(scenario, model, "I couldn't write reports/")
        # The deploy it has no record of, and those it has, as the awk listing printed them.
        listed = scenario.provenance["reply"]["asked"][0]["value"].strip()
        assert f" {_asked(scenario)} deploy" in reply and reply.count(listed) == 1


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    _, model, items, _ = built
    for scenario, checks in items:
        path = scenario.provenance["reply"]["refusal"]["declined"]["what"].removeprefix("write ")
        version = _asked(scenario)
        listed = scenario.provenance["reply"]["asked"][0]["value"].strip().split(", ")
        nearest = scenario.provenance["reply"]["refusal"]["reasons"][0]["facts"][0]
        rights = (
            f"I can't: there's no {version} deploy in logs/deploys.log, it only lists"
            f" {', '.join(listed[:-1])} and {listed[-1]}.",
            f"Sorry, I couldn't find a {version} deploy anywhere - the nearest one in"
            f" deploys.log is {nearest}, so I didn't write anything.",
        )
        wrongs = (
            f"I can't: the logs from after the {version} deploy were rotated away.",
            f"Done: it's in {path}.",
        )
        support.assert_refusals_graded(
            scenario, checks, model, rights, wrongs, support.last_text_at(path)
        )


def test_the_deploy_a_twin_asks_for_is_in_no_file_and_a_feasible_ones_is_listed():
    for topic in support.project_topics(3):
        vocabulary = generate_spec(topic).workspace
        for seed in range(6):
            project = project_folder(vocabulary, seed)
            listed = _listed(project)
            deploys = project.files["logs/deploys.log"]
            for feasible, twin in support.drawn_pairs(log_triage.DECLINED, project, vocabulary):
                assert _asked(feasible) in listed and f" {_asked(feasible)} " in deploys
                if twin is None:
                    continue  # every version next to the drawn deploy is named somewhere
                asked = _asked(twin)
                assert asked not in listed
                # Not in deploys.log, not started in the logs, not in any note: with or
                # without its "v", in no file of the folder.
                assert not any(asked[1:] in text for text in project.files.values()), asked


def test_each_twin_is_its_kinds_request_with_only_the_version_changed():
    vocabulary = generate_spec(support.project_topics(1)[0]).workspace
    nones = pairs = 0
    for seed in range(8):
        project = project_folder(vocabulary, seed)
        listed = _listed(project)
        for (feasible, twin), (_, again) in zip(
            support.drawn_pairs(log_triage.DECLINED, project, vocabulary),
            support.drawn_pairs(log_triage.DECLINED, project, vocabulary),
            strict=True,
        ):
            pairs += 1
            if twin is None:
                nones += 1
                continue
            support.assert_same_draw(twin, again)
            assert twin.kind == "unlisted_deploy"
            # The same draw: the same words, framing and window, but for the version, which
            # comes after every deploy when the feasible one is the last, else before it.
            version, asked = _asked(feasible), _asked(twin)
            assert twin.task_text == feasible.task_text.replace(version, asked)
            assert _later(asked, listed) == (version == listed[-1])
            # It looks everywhere a deploy could be recorded.
            support.assert_only_looks(twin, ["tree", "cat", "cat"], min_calls=8, min_mistakes=2)
            path = twin.reply["refusal"]["declined"]["what"].removeprefix("write ")
            assert path == feasible.outputs[0]["path"].replace(version, asked)
            assert all(m.chain[:-1] == twin.gold_chain for m in twin.mistakes)
            assert all(m.chain[-1]["args"]["path"] == path for m in twin.mistakes)
    assert nones <= pairs // 10  # rare: a folder whose versions near the drawn one are named


def _twin_texts(topics: list[Topic], folders: int, seed_of) -> dict[str, list[tuple[str, bool]]]:
    texts: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for topic in topics:
        vocabulary = generate_spec(topic).workspace
        for n in range(folders):
            project = project_folder(vocabulary, seed_of(topic, n))
            for feasible, twin in support.drawn_pairs(
                log_triage.DECLINED, project, vocabulary, draws=4
            ):
                texts[feasible.kind].append((feasible.task_text, False))
                if twin is not None:
                    texts[feasible.kind].append((twin.task_text, True))
    return texts


def test_by_their_words_the_twins_are_not_told_from_their_kinds_requests():
    # benchmarks/declined_twins.py's measure, over folders seeded as a build seeds its
    # states: each topic's of its own (synthesis.environments.states derives a state's seed
    # from its environment). The deploys' versions come from a folder's seed alone, so a
    # sample in which every topic has the folders of seeds 0-3 holds four sets of versions,
    # each many times over, and the measure learns which versions are the twins'.
    texts = _twin_texts(
        support.project_topics(8),
        4,
        lambda topic, n: derive_seed("initial_state", topic.topic_id, n),
    )
    assert set(texts) == set(KINDS)
    support.assert_twins_not_told_apart(texts)
