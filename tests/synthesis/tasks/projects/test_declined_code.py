"""The declined twin of the code fix (synthesis/tasks/projects/code_fixes.py DECLINED): the
request, in its own words, to fix the package's module that has no bug (its tests pass; the
failing test is the other module's) while leaving the other module - the one with the bug -
alone. In the sandbox every twin's gold run is published and changes nothing, every made-up
change fails (the named module rewritten, the fix made where the request rules it out, the
failing test deleted), the oracle's answer is grounded; through the shipped module a right
refusal in the agent's own words earns 1, and a false "done", a refusal with no reason or a
false one, and the made-up change earn 0; the project's own tests show that the named module's
tests pass and the failing one is the other's, and a feasible request names the module whose
test fails; by their words alone the twins are not told from the feasible requests."""

from __future__ import annotations

import random
import subprocess
import sys
from collections import defaultdict

import pytest

from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.projects.code_project import MODULE_HEADS, ROOT, TEST_COMMAND
from synthesis.environments.projects.folder import project_folder
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.hashing import derive_seed
from synthesis.tasks.projects import code_fixes
from tests.synthesis.tasks.projects import declined_support as support


def _pair(project, vocabulary, draw: int):
    """The feasible request and its twin, both drawn from one stream seed."""
    ((kind, twin),) = code_fixes.DECLINED.items()
    return kind(project, vocabulary, random.Random(draw)), twin(
        project, vocabulary, random.Random(draw)
    )


def _named(reply: dict) -> str:
    """The module a declined request asks to be fixed (its reply says it did not change)."""
    return reply["refusal"]["declined"]["what"].removeprefix("change ")


@pytest.fixture(scope="module")
def built():
    """The twin in a folder whose bug is in each module, made scenarios as
    plan_project_scenarios makes them, run in the sandbox and self-tested."""
    env = build_environment(generate_spec(support.project_topics(1)[0]))
    model = from_spec(env.spec, env)
    refused, modules = [], set()
    for index in range(20):
        state = build_initial_state(env, seed=3, index=index, records_per_entity=4)
        project = project_folder(env.spec.workspace, state.seed)
        module = project.parts["code_project"].bug.module
        if module in modules:
            continue
        modules.add(module)
        _, task = _pair(project, env.spec.workspace, index)
        refused.append((state, task))
        if modules == set(MODULE_HEADS):
            break
    items, outcomes = support.run_and_selftest(env, model, refused)
    return env, model, items, outcomes


def test_in_the_sandbox_gold_is_proven_and_every_made_up_change_fails(built):
    _, _, items, outcomes = built
    assert len(items) == len(MODULE_HEADS)
    support.assert_proven(items, outcomes, min_mistakes=4)
    for scenario, _ in items:
        assert scenario.provenance["workspace_goals"] == ["wrong_module"]
        # What the runs showed: the whole suite fails on the other module's test, the named
        # module's tests alone pass, and the failing test's name as the reply gives it.
        runs = {
            c.args["command"]: r["data"]
            for c, r in zip(scenario.gold_chain, scenario.gold_results, strict=True)
            if c.tool == "run"
        }
        whole, alone, failing = runs.values()
        test = scenario.provenance["reply"]["asked"][0]["value"].strip()
        assert f": {test} (" in whole["output"] and whole["exit_code"] == 0
        assert alone["output"].rstrip().endswith("OK")
        assert failing["output"] == test + "\n"


def test_the_oracle_states_the_reason_its_calls_showed_and_nothing_else(built):
    _, model, items, _ = built
    for scenario, _ in items:
        named = _named(scenario.provenance["reply"])
        support.oracle_reply_grounded(scenario, model, f"I couldn't change {named}:")


def test_right_refusals_in_the_agents_words_earn_and_wrong_ones_do_not(built):
    _, model, items, _ = built
    for scenario, checks in items:
        named = _named(scenario.provenance["reply"])
        test = scenario.provenance["reply"]["asked"][0]["value"].strip()
        rights = (
            f"I haven't changed anything: all of {named}'s tests pass. The one that fails is"
            f" {test}, and that's in the module you asked me to leave alone.",
            f"Sorry, I couldn't fix it there - nothing in {named} is broken. The failing test"
            f" is {test}; want me to fix that one instead?",
        )
        wrongs = (
            f"I can't change {named}: it's read-only in this folder.",
            f"Done: {named} is fixed and the tests pass.",
        )
        support.assert_refusals_graded(scenario, checks, model, rights, wrongs, _written)


def _written(mistake: dict) -> dict:
    """What a made-up change writes: every file its calls write, path: text."""
    return {c["args"]["path"]: c["args"]["text"] for c in mistake["chain"] if c["tool"] == "write"}


def _suite(project, tmp_path, *pattern: str) -> subprocess.CompletedProcess:
    """The team's test command (one module's tests with `pattern`) over the folder's code."""
    for path, text in project.files.items():
        if path.startswith(f"{ROOT}/"):
            (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
            (tmp_path / path).write_text(text)
    command = [sys.executable, *TEST_COMMAND.split()[1:], *pattern]
    return subprocess.run(
        command, cwd=tmp_path / ROOT, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_named_modules_tests_pass_and_the_failing_test_is_the_other_modules(tmp_path):
    vocabulary = generate_spec(support.project_topics(1)[0]).workspace
    bugs = set()
    for seed in range(6):
        project = project_folder(vocabulary, seed)
        code = project.parts["code_project"]
        bugs.add(code.broken)
        feasible, twin = _pair(project, vocabulary, seed)
        named = _named(twin.reply)
        module = next(m for m in MODULE_HEADS if code.module_path(m) == named)
        assert module != code.bug.module
        folder = tmp_path / str(seed)
        whole, alone = _suite(project, folder), _suite(project, folder, "-p", f"test_{module}.py")
        assert whole.returncode != 0 and alone.returncode == 0, alone.stderr
        failing = [
            line.split()[1]
            for line in whole.stderr.splitlines()
            if line.startswith(("FAIL: ", "ERROR: "))
        ]
        assert failing == [twin.reply["refusal"]["reasons"][0]["facts"][0]]
        assert failing == [f"test_{code.broken}"]
        # The feasible request names the module whose test fails, and leaves the other.
        fixed = code.module_path(code.bug.module)
        assert feasible.task_text.index(fixed) < feasible.task_text.index(named)
        assert twin.task_text.index(named) < twin.task_text.index(fixed)
    assert len(bugs) >= 4


def test_the_twin_is_the_request_with_the_two_modules_swapped():
    vocabulary = generate_spec(support.project_topics(1)[0]).workspace
    for seed in range(6):
        project = project_folder(vocabulary, seed)
        code = project.parts["code_project"]
        paths = [code.module_path(m) for m in MODULE_HEADS]
        for draw in range(6):
            feasible, twin = _pair(project, vocabulary, draw)
            support.assert_same_draw(twin, _pair(project, vocabulary, draw)[1])
            assert twin.kind == "wrong_module"
            swapped = feasible.task_text.replace(paths[0], "\0").replace(paths[1], paths[0])
            assert twin.task_text == swapped.replace("\0", paths[1])
            tools = support.assert_only_looks(
                twin, ["tree", "cat", "run"], min_calls=8, min_mistakes=4
            )
            assert all(m.chain[: len(tools)] == twin.gold_chain for m in twin.mistakes)


def test_by_their_words_the_twins_are_not_told_from_the_feasible_requests():
    # benchmarks/declined_twins.py's measure, over folders seeded as a build seeds its states.
    texts: dict[str, list[tuple[str, bool]]] = defaultdict(list)
    for topic in support.project_topics(8):
        vocabulary = generate_spec(topic).workspace
        for n in range(4):
            project = project_folder(vocabulary, derive_seed("initial_state", topic.topic_id, n))
            for draw in range(4):
                feasible, twin = _pair(project, vocabulary, draw)
                texts[feasible.kind] += [(feasible.task_text, False), (twin.task_text, True)]
    assert len(texts) == 1, list(texts)
    support.assert_twins_not_told_apart(texts)
