"""Workspace environments: a file tree operated by command-line verbs, end to end.

Every workspace topic of the shipped catalogue builds and loads its seeded tree in the
sandbox; the planner's in-memory verbs agree with the sandboxed class; planned tasks run,
and their checks, which read the final workspace, are proven (gold passes, doing nothing
fails, mutants are killed).
"""

from __future__ import annotations

import json
import random

import pytest

from quality.audit import audit_environment
from quality.selftest import selftest_outcomes
from synthesis.codec import dumps
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes import PLANNED_ARCHETYPES
from synthesis.environments.archetypes.workspace import CORE_VERBS
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.workspace_code import workspace_constants
from synthesis.environments.workspace_tree import WORKSPACE_KEY, seeded_tree
from synthesis.environments.workspace_verbs import MemoryTree
from synthesis.models import ToolCall, Topic
from synthesis.tasks.assembly import mentions_an_id
from synthesis.tasks.checks import derive_checks, evaluate_checks
from synthesis.tasks.gold import execute_gold, run_chains
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES

TOPICS = [
    Topic.model_validate(t)
    for t in json.loads((DATA_DIR / "topics.json").read_text())["topics"]
    if t.get("archetype") == "workspace"
]


@pytest.fixture(scope="module")
def built():
    """Every workspace topic's environment and one initial workspace (loaded in the sandbox)."""
    out = {}
    for topic in TOPICS:
        env = build_environment(generate_spec(topic))
        state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
        out[topic.topic_id] = (env, state)
    return out


def test_the_catalogue_has_at_least_twelve_distinct_workspace_environments(built):
    assert "workspace" not in PLANNED_ARCHETYPES
    assert len(TOPICS) >= 12
    shapes = set()
    for env, _ in built.values():
        assert env.status == "accepted", env.reason
        assert env.kind == "workspace"
        names = {t.name for t in env.tools}
        assert set(CORE_VERBS) <= names
        assert 8 <= len(names) <= 30
        for tool in env.tools:
            # Kinds are the spec's; the AST cannot see file writes (the audit proves them).
            assert (tool.kind == "mutate") == (tool.writes == ["__workspace__"])
            assert tool.schema_["function"]["name"] == tool.name
        shapes.add(frozenset(names))
    # Optional verbs differ per topic, so the classes differ in program shape.
    assert len(shapes) >= 10


def test_a_workspace_topic_whose_vocabulary_cannot_seed_a_tree_is_refused_with_reasons():
    raw = TOPICS[0].model_dump()
    raw["vocabulary"] = {
        **raw["vocabulary"],
        "name_field": "Nope",
        "fields": {"Client": "zodiac"},
        "features": ["tags"],
        "tags": [],
        "extra_files": {"../escape.txt": "x"},
    }
    with pytest.raises(SpecError) as refused:
        generate_spec(Topic.model_validate(raw))
    message = str(refused.value)
    assert "name field 'Nope'" in message
    assert "unknown workspace value generator 'zodiac'" in message
    assert "path '../escape.txt' is not a plain relative path" in message
    raw["vocabulary"]["features"] = ["teleport"]
    with pytest.raises(SpecError, match="unknown workspace feature 'teleport'"):
        generate_spec(Topic.model_validate(raw))


def test_each_initial_workspace_is_a_seeded_tree_that_reads_back_from_the_sandbox(built):
    for _env, state in built.values():
        tree = state.state[WORKSPACE_KEY]
        assert state.dump is None  # the sandbox reported exactly the seeded tree
        assert len(tree["files"]) >= 12
        assert all(isinstance(text, str) and text for text in tree["files"].values())
        # Values repeat across documents on purpose (decoys), so naming a file takes care.
        lines = [
            line
            for text in tree["files"].values()
            for line in set(text.split("\n\n")[0].split("\n"))
            if ": " in line
        ]
        assert len(set(lines)) < len(lines)
    env, _ = built["invoices_folder"]
    again = seeded_tree(env.spec, 11, 12)
    assert dumps(again) == dumps(seeded_tree(env.spec, 11, 12))
    assert again != seeded_tree(env.spec, 12, 12)


def test_a_query_never_writes_and_invalid_calls_are_refused(built):
    env, state = built["press_kit"]
    report = audit_environment(env, [state.state], seed=0, model=from_spec(env.spec, env))
    assert report.passed, report.findings()
    assert report.score == 1.0


def _random_calls(env, tree: dict, rng: random.Random) -> list[tuple[str, dict]]:
    """Calls with mostly plausible arguments (paths that exist, the workspace's tags) and
    some wrong ones (missing files, unknown tags, bad types)."""
    consts = workspace_constants(env.spec)
    texts = sorted(tree["files"].values())
    pools = {
        "path": sorted(tree["files"]),
        "folder": sorted(tree["dirs"]) + ["."],
        "new_name": ["renamed.txt", "final.md"],
        "tag": list(consts["TAGS"]) or ["urgent"],
        "status": list(consts["STATUSES"]) or ["done"],
        "line": ["Checked by the auditor."],
        "old": [t.split("\n")[1] for t in texts if "\n" in t][:5] or ["x"],
        "new": ["Reviewed: yes"],
        "pattern": ["2025", "a", "Status"],
        "name": [".txt", "-1", "e"],
        "lines": [1, 3],
    }
    wrong = ["missing/nothing.txt", "../outside", "", 7, None]
    calls = []
    for _ in range(60):
        tool = rng.choice(env.tools)
        args = {}
        for name in tool.schema_["function"]["parameters"]["properties"]:
            if rng.random() < 0.15:
                args[name] = rng.choice(wrong)
            else:
                args[name] = rng.choice(pools[name])
        calls.append((tool.name, args))
    return calls


@pytest.mark.parametrize("topic_id", ["invoices_folder", "legal_case_files", "project_repo"])
def test_the_planners_in_memory_verbs_agree_with_the_sandboxed_class(built, topic_id):
    """One implementation, two backends: random calls (many of them wrong) give the same
    results and the same final tree in memory and on the sandbox's disk."""
    env, state = built[topic_id]
    tree = state.state[WORKSPACE_KEY]
    calls = _random_calls(env, tree, random.Random(topic_id))
    memory = MemoryTree(tree["files"], tree["dirs"], workspace_constants(env.spec))
    expected = [memory.call(verb, args) for verb, args in calls]
    (episode,) = run_chains(env, [(state.state, [ToolCall(tool=v, args=a) for v, a in calls])])
    assert episode.status == "ok", episode.reason
    got = [r.result if r.ok else {"success": False, "error": r.error} for r in episode.results]
    for (verb, args), want, have in zip(calls, expected, got, strict=True):
        if want.get("success"):
            assert have == want, (verb, args)
        else:
            assert have.get("success") is False, (verb, args, have)
    final = episode.final_state[WORKSPACE_KEY]
    assert final["files"] == memory.files
    assert set(final["dirs"]) == memory.dirs
    assert sum(1 for w in expected if w.get("success")) >= 20  # the calls did something
    assert sum(1 for w in expected if not w.get("success")) >= 5  # and some were refused


@pytest.mark.parametrize("topic_id", [t.topic_id for t in TOPICS])
def test_planned_tasks_run_and_their_workspace_checks_are_proven(built, topic_id):
    env, state = built[topic_id]
    model = from_spec(env.spec, env)
    # The first feasible candidate (refused requests: tests/synthesis/tasks/
    # test_workspace_infeasible.py).
    candidates = plan_scenarios(env, state, seed=5, count=3, max_chain_length=6, model=model)
    planned = [s for s in candidates if s.kind == "feasible"][:1]
    assert len(planned) == 1
    executed = execute_gold(env, planned, model=model)
    assert all(s.status == "published" for s in executed), [s.reason for s in executed]
    items = []
    for scenario in executed:
        # The files acted on are named by content or name, never by their path.
        files = scenario.start_state[WORKSPACE_KEY]["files"]
        paths = [c.args["path"] for c in scenario.gold_chain if c.args.get("path") in files]
        assert not mentions_an_id(scenario.task_text, paths)
        assert scenario.gold_chain[0].tool in ("grep", "find", "mkdir", "touch", "ls")
        # Like every task, it carries a structural tier (its steps count towards it).
        assert scenario.difficulty["tier"] in ("easy", "medium", "hard", "expert")
        assert scenario.difficulty["steps"] == len(scenario.gold_chain)
        checks = derive_checks(scenario, model=model)
        kinds = {c.spec["type"] for c in checks}
        # Every check reads the workspace (and the reply is held to be concise); a guard
        # holds the rest of the tree.
        assert kinds <= {*WORKSPACE_CHECK_TYPES, "reply_concise"}
        assert "no_other_file_changes" in kinds
        assert all(evaluate_checks(checks, scenario.start_state, scenario.final_state))
        assert not all(evaluate_checks(checks, scenario.start_state, scenario.start_state))
        items.append((scenario, checks))
    for outcome in selftest_outcomes(env, items, model=model):
        assert outcome.selftest.proven, outcome.selftest.reason
        assert outcome.selftest.n_mutants >= 1
        assert outcome.selftest.mutation_kill_rate == 1.0


def test_workspace_checks_read_the_final_tree_and_guard_the_rest_of_it():
    start = {
        WORKSPACE_KEY: {
            "files": {"a/x.txt": "X\n", "a/y.txt": "Y\n", "b/z.txt": "Z\n"},
            "dirs": ["a", "b"],
            "symlinks": {},
            "skipped": {},
        }
    }

    def tree(files, dirs):
        return {WORKSPACE_KEY: {"files": files, "dirs": dirs, "symlinks": {}, "skipped": {}}}

    gold = tree({"a/y.txt": "Y\n", "b/z.txt": "Z\nmore\n", "c/x.txt": "X\n"}, ["a", "b", "c"])
    from synthesis.models import Scenario

    scenario = Scenario(
        scenario_id="s1",
        env_id="e",
        state_id="st",
        task_text="t",
        initial_state=start,
        gold_chain=[ToolCall(tool="mv", args={})],
        final_state=gold,
    )
    # The workspace's checks (the reply's own concise guard left aside).
    checks = [c for c in derive_checks(scenario) if c.spec["type"] != "reply_concise"]
    assert [c.spec["type"] for c in checks] == [
        "file_absent",
        "file_content",
        "file_content",
        "folder_present",
        "no_other_file_changes",
    ]
    assert all(evaluate_checks(checks, start, gold))
    assert evaluate_checks(checks, start, start) == [False, False, False, False, True]
    # The right files, but one left behind elsewhere: only the guard notices.
    extra = tree({**gold[WORKSPACE_KEY]["files"], "a/stray.txt": "?"}, ["a", "b", "c"])
    assert evaluate_checks(checks, start, extra) == [True, True, True, True, False]
    # A wrong text in the moved file, a missing folder, no workspace at all.
    wrong = tree({**gold[WORKSPACE_KEY]["files"], "c/x.txt": "x\n"}, ["a", "b", "c"])
    assert evaluate_checks(checks, start, wrong)[1:3] == [True, False]
    assert evaluate_checks(checks, start, {"other": 1}) == [False] * 5


def test_the_activity_log_records_changes_and_only_the_tools_write_it(built):
    env, state = built["invoices_folder"]
    tree = state.state[WORKSPACE_KEY]
    path = next(p for p in sorted(tree["files"]) if p.startswith("2025/inbox/"))
    calls = [
        ToolCall(tool="mv", args={"path": path, "folder": "disputed"}),
        ToolCall(tool="cat", args={"path": ".activity.log"}),
        ToolCall(tool="append", args={"path": ".activity.log", "line": "nothing happened"}),
    ]
    (episode,) = run_chains(env, [(state.state, calls)])
    moved, log, forged = (r.result for r in episode.results)
    target = "disputed/" + path.rsplit("/", 1)[1]
    assert moved == {"success": True, "message": f"mv {path} {target}"}
    assert log == {"success": True, "data": f"mv {path} {target}\n"}
    assert forged["success"] is False and "activity log" in forged["error"]
    assert episode.final_state[WORKSPACE_KEY]["files"][".activity.log"] == log["data"]
