"""Infeasible workspace tasks: a move, copy or rename the "never overwrites" rule refuses in
the tree the user sees, asked in the words a feasible one is, among other goals.

The share of such candidates is the tool environments'; each is refused where it was asked
(replayed through the planner's own verbs) and not already done; its reply contract makes a
`reply_refuses` goal that the gold run's answer earns and the shortcuts (doing nothing, a dump,
a false "done", a pasted prompt, a wrong reason) do not, through the shipped reward module;
the oracle's answer declines with a true reason and states only what the run showed; the
compiled class in the sandbox refuses it too and the self-test proves the checks.
"""

from __future__ import annotations

import copy
import json
import posixpath
import re

import pytest

from quality.grounding import answer_problems, episode_messages
from quality.selftest import selftest_outcomes
from synthesis import codec
from synthesis.config import DATA_DIR
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.workspace_code import workspace_constants
from synthesis.environments.workspace_tree import WORKSPACE_KEY
from synthesis.environments.workspace_verbs import MemoryTree
from synthesis.models import Topic
from synthesis.rollouts.episodes import system_prompt
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import derive_checks, evaluate_check
from synthesis.tasks.envfoundry_reward import decline_cue, grade_episode
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.shortcuts import ShortcutContext, dump_reply, pasted_policy_reply
from synthesis.tasks.workspace_plans import (
    CP_TEMPLATES,
    MV_TEMPLATES,
    RENAME_TEMPLATES,
    plan_workspace_scenarios,
)

# Topics whose trees hold same-named files in different folders (a name field drawn from a
# list) or that rename: their requests can collide with a file already in place.
TOPIC_IDS = ("course_materials", "music_collection", "hr_documents")
SEEDS, STATES, PER_STATE, MAX_CHAIN = (0, 1), 3, 12, 14
TEMPLATES = {"mv": MV_TEMPLATES, "cp": CP_TEMPLATES, "rename": RENAME_TEMPLATES}


def _topic(topic_id: str) -> Topic:
    topics = json.loads((DATA_DIR / "topics.json").read_text())["topics"]
    return Topic.model_validate(next(t for t in topics if t["topic_id"] == topic_id))


@pytest.fixture(scope="module")
def planned():
    """(env, initial state, scenario) of every candidate planned in the topics' trees."""
    out = []
    for topic_id in TOPIC_IDS:
        env = build_environment(generate_spec(_topic(topic_id)))
        for index in range(STATES):
            state = build_initial_state(env, seed=3, index=index, records_per_entity=4)
            for seed in SEEDS:
                for s in plan_workspace_scenarios(
                    env, state, seed=seed, count=PER_STATE, max_chain_length=MAX_CHAIN
                ):
                    out.append((env, state, s))
    return out


@pytest.fixture(scope="module")
def refused(planned):
    return [(env, state, s) for env, state, s in planned if s.kind == "infeasible"]


def _tree(env, state) -> MemoryTree:
    tree = state.state[WORKSPACE_KEY]
    return MemoryTree(tree["files"], tree["dirs"], workspace_constants(env.spec))


def _replay(env, state, scenario):
    """The gold chain through the planner's verbs: (results, final state, refused step)."""
    tree = _tree(env, state)
    results, at = [], None
    for i, (call, role) in enumerate(
        zip(scenario.gold_chain, scenario.provenance["roles"], strict=True)
    ):
        before = (dict(tree.files), set(tree.dirs))
        results.append(tree.call(call.tool, call.args))
        if role == "refused":
            at = i
            assert results[-1]["success"] is False, (call, results[-1])
            assert (tree.files, tree.dirs) == before  # the refusal changed nothing
        else:
            assert results[-1]["success"], (call, results[-1])
    final = copy.deepcopy(state.state)
    final[WORKSPACE_KEY]["files"] = dict(sorted(tree.files.items()))
    final[WORKSPACE_KEY]["dirs"] = sorted(tree.dirs)
    return results, final, at


def _with_checks(env, state, scenario):
    results, final, at = _replay(env, state, scenario)
    ran = scenario.model_copy(update={"final_state": final, "gold_results": results})
    return ran, derive_checks(ran, model=from_spec(env.spec, env)), results, at


def _pattern(template: str) -> re.Pattern[str]:
    """A goal template as a regex: its own words fixed, its slots anything."""
    parts = re.split(r"\{[a-z]\}", template)
    return re.compile("(.+)".join(re.escape(p) for p in parts))


def _refused_goal(scenario):
    return next(g for g in scenario._plan.goals if g.kind == "refuse")


def test_about_as_many_candidates_are_infeasible_as_in_tool_environments(planned, refused):
    share = len(refused) / len(planned)
    assert len(planned) >= 150
    assert 0.10 <= share <= 0.25, share
    # Every kind of refusable request occurs, at every place among the other goals.
    assert {s.gold_chain[s.provenance["roles"].index("refused")].tool for *_, s in refused} == {
        "mv",
        "cp",
        "rename",
    }
    places = {(len(s._plan.goals), s._plan.goals.index(_refused_goal(s))) for *_, s in refused}
    assert any(n > 1 and i == 0 for n, i in places)
    assert any(n > 1 and i == n - 1 for n, i in places)
    alone = sum(len(s._plan.goals) == 1 for *_, s in refused)
    assert 0 < alone < len(refused) / 2  # multi-goal as often as the feasible tasks


def test_each_refused_request_is_refused_in_the_initial_tree_and_not_already_done(refused):
    for env, state, s in refused:
        roles = s.provenance["roles"]
        assert roles.count("refused") == 1
        at = roles.index("refused")
        call = s.gold_chain[at]
        # Refused by the verb in the tree the user saw, with the rule's own error.
        first = _tree(env, state)
        there = first.call(call.tool, call.args)
        assert there["success"] is False and there["error"].startswith("already exists: ")
        # And refused where the chain makes it, changing nothing there either.
        results, _, replayed_at = _replay(env, state, s)
        assert replayed_at == at and results[at]["error"] == there["error"]
        # Not already as asked: the file is not in place, the name is not already its own.
        files = state.state[WORKSPACE_KEY]["files"]
        path = call.args["path"]
        in_the_way = there["error"].split(": ", 1)[1]
        assert path in files and in_the_way in files and in_the_way != path
        assert files[in_the_way] != files[path]
        if call.tool == "rename":
            assert call.args["new_name"] != posixpath.basename(path)
        else:
            assert posixpath.dirname(path) != call.args["folder"]
        # The lookup before it lists the folder whose file is in the way.
        assert s.gold_chain[at - 1].tool == "ls"
        assert posixpath.basename(in_the_way) in results[at - 1]["data"]


def test_refused_requests_are_said_with_the_feasible_goals_templates(planned, refused):
    feasible_said: dict[str, set[str]] = {}
    for _, _, s in planned:
        for goal in s._plan.goals:
            if goal.kind == "action" and goal.verb in TEMPLATES:
                for template in TEMPLATES[goal.verb]:
                    if _pattern(template).fullmatch(goal.description or ""):
                        feasible_said.setdefault(goal.verb, set()).add(template)
    for _, _, s in refused:
        goal = _refused_goal(s)
        used = [t for t in TEMPLATES[goal.verb] if _pattern(t).fullmatch(goal.description)]
        assert used, goal.description
        assert set(used) <= feasible_said[goal.verb]
        # Its slots hold what a feasible request's hold: the file's words, a folder, a name.
        assert goal.then.description == goal.description and goal.target in goal.description


def test_the_scenario_carries_the_refusal_contract_the_tool_paths_do(refused):
    for env, state, s in refused:
        assert s.difficulty["infeasible"] is True
        reply = s.provenance["reply"]
        refusal = reply["refusal"]
        at = s.provenance["roles"].index("refused")
        results, _, _ = _replay(env, state, s)
        (asked,) = reply["asked"]
        # The fact is read where the listing before the attempt shows it.
        assert asked["step"] == at - 1
        shown = results[asked["step"]]
        for key in asked["path"]:
            shown = shown[key]
        assert shown == asked["value"]
        (reason,) = refusal["reasons"]
        assert reason["facts"] == [asked["value"]]
        error, *lines = reason["texts"]
        assert error == results[at]["error"]
        assert lines == ["A move, copy or rename never overwrites an existing file or folder."]
        assert refusal["rules"] == [r for r in env.spec.rules if r not in lines]
        assert refusal["tools"] == [t.description for t in env.spec.tools if t.description]
        assert refusal["alone"] == ("mutation" not in s.provenance["roles"])
        assert s.expected_reply["refusal"]["reasons"] == refusal["reasons"]


def _grade(checks, initial, final, reply) -> float:
    return grade_episode([c.spec for c in checks], initial, final, reply).reward


def test_gold_earns_1_and_the_shortcuts_earn_0_through_the_shipped_module(refused):
    for env, state, s in refused:
        ran, checks, results, at = _with_checks(env, state, s)
        kinds = {c.spec["type"] for c in checks}
        assert {"reply_refuses", "no_other_file_changes"} <= kinds
        if "mutation" in s.provenance["roles"]:
            assert kinds & {"file_content", "file_absent"}  # the other goals' own checks
        initial, final = s.initial_state, ran.final_state
        gold = oracle_answer(ran, final, results, model=from_spec(env.spec, env))
        assert _grade(checks, initial, final, gold) == 1.0, (s.task_text, gold)
        model = from_spec(env.spec, env)
        context = ShortcutContext(system_prompt(model), s.task_text, [], initial)
        wrong_reason = "Sorry, I can't do that: " + env.spec.rules[-1]
        for reply in (
            "",  # doing nothing
            dump_reply(context),
            "Done, all moved.",
            pasted_policy_reply(context),
            wrong_reason,
        ):
            assert _grade(checks, initial, initial, reply) == 0.0, reply
        # A wrong reason after doing the rest still fails the refusal itself.
        refuses = next(c.spec for c in checks if c.spec["type"] == "reply_refuses")
        assert not evaluate_check(refuses, initial, final, wrong_reason)
        assert evaluate_check(refuses, initial, final, gold)


def test_the_oracle_declines_with_a_true_reason_and_states_only_what_it_saw(refused):
    for env, state, s in refused:
        ran, _, results, at = _with_checks(env, state, s)
        model = from_spec(env.spec, env)
        answer = oracle_answer(ran, ran.final_state, results, model=model)
        call = s.gold_chain[at]
        assert decline_cue(answer)
        verb = {"mv": "move", "cp": "copy", "rename": "give"}[call.tool]
        assert f"I couldn't {verb} {call.args['path']}" in answer
        # In the domain's words: never a tool's name ("rename" is one).
        names = {t.name for t in env.spec.tools}
        assert not any(re.search(rf"(?<![\w-]){re.escape(n)}(?![\w-])", answer) for n in names)
        fact = s.provenance["reply"]["asked"][0]["value"]
        assert fact in answer or results[at]["error"] in answer
        # What it did for the other goals, and no claim that nothing changed when it did.
        changed = ran.final_state != s.initial_state
        assert ("Nothing was changed." in answer) is not changed
        messages = episode_messages(
            system_prompt(model),
            s.task_text,
            [(c.tool, c.args) for c in s.gold_chain],
            results,
            answer,
        )
        assert answer_problems(messages, s.initial_state, ran.final_state) == []


def test_planning_infeasible_workspace_tasks_is_deterministic(refused):
    env, state, s = refused[0]
    seed = s.provenance["seed"]
    again = plan_workspace_scenarios(env, state, seed=seed, count=PER_STATE, max_chain_length=14)
    twice = plan_workspace_scenarios(env, state, seed=seed, count=PER_STATE, max_chain_length=14)
    assert codec.dumps(again) == codec.dumps(twice)
    assert s.scenario_id in {x.scenario_id for x in again}


def test_the_sandboxed_class_refuses_them_and_the_selftest_proves_their_checks(sandbox, refused):
    by_env: dict[str, list] = {}
    for env, _, s in refused:
        by_env.setdefault(env.env_id, []).append((env, s))
    for pairs in by_env.values():
        env = pairs[0][0]
        model = from_spec(env.spec, env)
        ran = execute_gold(env, [s for _, s in pairs[:4]], model=model)
        assert all(s.status == "published" for s in ran), [s.reason for s in ran]
        items = [(s, derive_checks(s, model=model)) for s in ran]
        for outcome in selftest_outcomes(env, items, model=model):
            test = outcome.selftest
            assert test.proven, test.reason
            assert all(r == 0.0 for r in test.shortcut_rewards.values()), test.shortcut_rewards
            assert test.n_mutants == 0 or test.mutation_kill_rate == 1.0
