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

import json
import random
import re
from collections import defaultdict

import pytest

from benchmarks.request_tells import GOAL_AUC, cv_auc
from quality.grounding import answer_problems, episode_messages
from quality.selftest import selftest_outcomes
from synthesis.config import DATA_DIR
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.hashing import derive_seed
from synthesis.models import Topic
from synthesis.rollouts.episodes import system_prompt
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.projects import log_triage, scenarios

KINDS = ("first_error", "component_counts", "distinct_errors")
VERSION = re.compile(r"v\d+\.\d+\.\d+")


def _project_topics(n: int) -> list[Topic]:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"][:n]


def _pairs(project, vocabulary, draws: int = 6):
    """(feasible task, its twin) of each kind for each draw: both drawn from one stream seed."""
    for kind, twin in log_triage.DECLINED.items():
        for draw in range(draws):
            feasible = kind(project, vocabulary, random.Random(draw))
            yield feasible, twin(project, vocabulary, random.Random(draw))


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
    env = build_environment(generate_spec(_project_topics(1)[0]))
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
            refused.append(scenarios._scenario(env, state, 5, len(refused), task))
    executed = execute_gold(env, refused, model=model)
    assert [s.status for s in executed] == ["published"] * len(executed), [
        s.reason for s in executed
    ]
    items = [(s, derive_checks(s, model=model)) for s in executed]
    return env, model, items, selftest_outcomes(env, items, model=model)


def test_in_the_sandbox_gold_is_proven_and_every_made_up_report_fails(built):
    _, _, items, outcomes = built
    assert {s.provenance["workspace_goals"][0] for s, _ in items} == {"unlisted_deploy"}
    for (scenario, checks), outcome in zip(items, outcomes, strict=True):
        st = outcome.selftest
        assert st.gold_pass and st.noop_fail and st.deterministic, st.reason
        assert st.shortcuts_fail and st.alternatives_pass, st.shortcut_rewards
        assert st.mutation_kill_rate == 1.0
        verdicts = {m.label: v for m, v in outcome.mutants if m.kind == "mistake"}
        labels = [m["label"] for m in scenario.provenance["mistakes"]]
        assert len(labels) >= 2 and all(verdicts[label] == "killed" for label in labels), verdicts
        assert scenario.final_state == scenario.start_state  # the gold run wrote nothing
        types = {c.spec["type"] for c in checks}
        assert {"reply_refuses", "no_other_file_changes"} <= types
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
        reply = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
        assert reply.startswith("I couldn't write reports/") and "Nothing was changed." in reply
        # The deploy it has no record of, and those it has, as the awk listing printed them.
        listed = scenario.provenance["reply"]["asked"][0]["value"].strip()
        assert f" {_asked(scenario)} deploy" in reply and reply.count(listed) == 1
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
        assert "could not look up" in oracle_answer(
            scenario, scenario.final_state, blind, model=model
        )


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
        oracle = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
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
        assert _graded(scenario, checks, oracle) == 1.0
        for right in rights:
            assert _graded(scenario, checks, right) == 1.0, right
        for wrong in (
            "",
            f"I can't: the logs from after the {version} deploy were rotated away.",
            "Sorry, I can't help with that request.",
            f"Done: it's in {path}.",
            f"I couldn't write {path}: I'm not able to do that.",
        ):
            assert _graded(scenario, checks, wrong) == 0.0, wrong
        for mistake in scenario.provenance["mistakes"]:
            invented = {path: mistake["chain"][-1]["args"]["text"]}
            assert _graded(scenario, checks, oracle, invented) == 0.0, mistake["label"]


def test_the_deploy_a_twin_asks_for_is_in_no_file_and_a_feasible_ones_is_listed():
    for topic in _project_topics(3):
        vocabulary = generate_spec(topic).workspace
        for seed in range(6):
            project = project_folder(vocabulary, seed)
            listed = _listed(project)
            deploys = project.files["logs/deploys.log"]
            for feasible, twin in _pairs(project, vocabulary):
                assert _asked(feasible) in listed and f" {_asked(feasible)} " in deploys
                if twin is None:
                    continue  # every version next to the drawn deploy is named somewhere
                asked = _asked(twin)
                assert asked not in listed
                # Not in deploys.log, not started in the logs, not in any note: with or
                # without its "v", in no file of the folder.
                assert not any(asked[1:] in text for text in project.files.values()), asked


def test_each_twin_is_its_kinds_request_with_only_the_version_changed():
    vocabulary = generate_spec(_project_topics(1)[0]).workspace
    nones = pairs = 0
    for seed in range(8):
        project = project_folder(vocabulary, seed)
        listed = _listed(project)
        for (feasible, twin), (_, again) in zip(
            _pairs(project, vocabulary), _pairs(project, vocabulary), strict=True
        ):
            pairs += 1
            if twin is None:
                nones += 1
                continue
            assert (twin.task_text, twin.gold_chain, twin.reply) == (
                again.task_text,
                again.gold_chain,
                again.reply,
            )
            assert twin.kind == "unlisted_deploy"
            # The same draw: the same words, framing and window, but for the version, which
            # comes after every deploy when the feasible one is the last, else before it.
            version, asked = _asked(feasible), _asked(twin)
            assert twin.task_text == feasible.task_text.replace(version, asked)
            assert _later(asked, listed) == (version == listed[-1])
            tools = [c["tool"] for c in twin.gold_chain]
            assert tools[:3] == ["tree", "cat", "cat"] and "write" not in tools, tools
            assert len(tools) >= 8, tools  # it looks everywhere a deploy could be recorded
            assert not twin.outputs and len(twin.mistakes) >= 2
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
            for feasible, twin in _pairs(project, vocabulary, draws=4):
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
        _project_topics(8), 4, lambda topic, n: derive_seed("initial_state", topic.topic_id, n)
    )
    assert set(texts) == set(KINDS)
    for kind, rows in texts.items():
        auc = cv_auc([t for t, _ in rows], [p for _, p in rows])
        assert auc <= GOAL_AUC, (kind, auc)
