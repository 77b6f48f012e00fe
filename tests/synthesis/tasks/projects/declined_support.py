"""Shared by the tests of the project kinds' declined twins (test_missing_data.py and
test_declined_*.py in this folder): the project topics, the twins run in the sandbox and
self-tested as a build does, and the proofs every twin owes whatever its kind - its gold and
mistakes proven, the oracle's refusal grounded in what its calls showed, right and wrong
refusals graded through the shipped module, and its words not telling it from its kind's
feasible requests. What a kind's twin asks, finds missing or breaks stays in its own file."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from benchmarks.request_tells import GOAL_AUC, cv_auc
from quality.grounding import answer_problems, episode_messages
from quality.selftest import selftest_outcomes
from synthesis.config import DATA_DIR
from synthesis.models import Topic
from synthesis.rollouts.episodes import system_prompt
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.projects import scenarios

# Replies that refuse with no reason at all, wrong for every twin: none, and a bare "can't".
NO_REASON = ("", "Sorry, I can't help with that request.")


def project_topics(n: int | None = None) -> list[Topic]:
    """The first `n` project topics of data/topics.json, in the catalogue's order (all of them
    with no `n`)."""
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topics = [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"]
    return topics[:n]


def drawn_pairs(declined: Mapping[Callable, Callable], project, vocabulary, draws: int = 6):
    """(feasible task, its twin) of each kind of `declined` (a module's DECLINED: each feasible
    kind's builder and its twin's) for each of `draws` draws, both drawn from one stream seed:
    the twin is the feasible request with only what makes it declined changed."""
    for kind, twin in declined.items():
        for draw in range(draws):
            feasible = kind(project, vocabulary, random.Random(draw))
            yield feasible, twin(project, vocabulary, random.Random(draw))


def assert_same_draw(first, second) -> None:
    """Two tasks of the same folder and draw are one task: the same words, gold and reply (a
    twin is a pure function of the folder and its draw)."""
    assert (first.task_text, first.gold_chain, first.reply) == (
        second.task_text,
        second.gold_chain,
        second.reply,
    )


def assert_only_looks(task, opening: list[str], min_calls: int, min_mistakes: int = 2) -> list:
    """A declined task's gold chain opens with the tools `opening`, makes `min_calls` calls or
    more and writes nothing; the task has no outputs and `min_mistakes` mistakes or more (the
    made-up results its gold's looks rule out). Returns the gold chain's tools."""
    tools = [c["tool"] for c in task.gold_chain]
    assert tools[: len(opening)] == opening and "write" not in tools, tools
    assert len(tools) >= min_calls, tools
    assert not task.outputs and len(task.mistakes) >= min_mistakes
    return tools


def run_and_selftest(env, model, planned: Iterable[tuple[Any, Any]]) -> tuple[list, list]:
    """The twins `planned` ((state, declined task) pairs) made scenarios as
    plan_project_scenarios makes them (seed 5, numbered in order), their gold run in the
    sandbox - every one published - their checks derived and the whole self-tested, as a
    build does: `(items, outcomes)`, `items` each scenario with its checks."""
    made = [
        scenarios._scenario(env, state, 5, index, task)
        for index, (state, task) in enumerate(planned)
    ]
    executed = execute_gold(env, made, model=model)
    assert [s.status for s in executed] == ["published"] * len(executed), [
        s.reason for s in executed
    ]
    items = [(s, derive_checks(s, model=model)) for s in executed]
    return items, selftest_outcomes(env, items, model=model)


def assert_proven(items, outcomes, min_mistakes: int = 1) -> None:
    """Each twin's self-test proves it: gold passes, doing nothing fails, the run is
    deterministic, every shortcut fails and every alternative passes, every mutant is killed -
    each of its `min_mistakes` or more mistakes (the made-up results) among them; its gold run
    changed nothing, and its checks ask for a refusal and for no file changed."""
    for (scenario, checks), outcome in zip(items, outcomes, strict=True):
        st = outcome.selftest
        assert st.gold_pass and st.noop_fail and st.deterministic, st.reason
        assert st.shortcuts_fail and st.alternatives_pass, st.shortcut_rewards
        assert st.mutation_kill_rate == 1.0
        verdicts = {m.label: v for m, v in outcome.mutants if m.kind == "mistake"}
        labels = [m["label"] for m in scenario.provenance["mistakes"]]
        assert len(labels) >= min_mistakes, verdicts
        assert all(verdicts[label] == "killed" for label in labels), verdicts
        assert scenario.final_state == scenario.start_state  # the gold run changed nothing
        types = {c.spec["type"] for c in checks}
        assert {"reply_refuses", "no_other_file_changes"} <= types


def oracle_reply_grounded(scenario, model, opening: str) -> str:
    """The oracle's reply to a twin's gold run: it opens with `opening`, says nothing was
    changed and states only what the run's calls showed (no answer problem); a run that did
    not look (no results) cannot give the reason and says it could not look it up. Returns the
    reply, for the kind's own assertions."""
    reply = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
    assert reply.startswith(opening), reply
    assert "Nothing was changed." in reply, reply
    messages = episode_messages(
        system_prompt(model),
        scenario.task_text,
        [(c.tool, dict(c.args)) for c in scenario.gold_chain],
        scenario.gold_results,
        reply,
    )
    assert answer_problems(messages, scenario.start_state, scenario.final_state) == []
    blind = [None] * len(scenario.gold_results)
    assert "could not look up" in oracle_answer(scenario, scenario.final_state, blind, model=model)
    return reply


def graded(scenario, checks, reply: str, written: dict | None = None) -> float:
    """The reward the shipped module (envfoundry_reward.grade) gives `reply` after the gold
    run's calls, their results shown as the agent saw them, with the files `written` (path:
    text) on top of the gold run's final state."""
    shown = [
        efr.observation(c.tool, dict(c.args), r)
        for c, r in zip(scenario.gold_chain, scenario.gold_results, strict=True)
    ]
    final = json.loads(json.dumps(scenario.final_state))
    final["__workspace__"]["files"].update(written or {})
    specs = [c.spec for c in checks]
    return efr.grade(specs, scenario.start_state, final, reply, shown=shown)[0]


def last_write(mistake: dict) -> dict:
    """What a mistake writes with its last call: {path: text}."""
    call = mistake["chain"][-1]["args"]
    return {call["path"]: call["text"]}


def last_text_at(path: str) -> Callable[[dict], dict]:
    """What a mistake makes up, as the text of its last call written at `path` (the file the
    request names): {path: text}."""
    return lambda mistake: {path: mistake["chain"][-1]["args"]["text"]}


def assert_refusals_graded(
    scenario,
    checks,
    model,
    rights: Iterable[str],
    wrongs: Iterable[str],
    made_up: Callable[[dict], dict],
) -> None:
    """Through the shipped module, the oracle's refusal and each of `rights` (right refusals in
    an agent's own words) earn 1; no reply, a refusal with no reason (NO_REASON), one whose
    reason says nothing ("I couldn't <what was asked>: I'm not able to do that.") and each of
    `wrongs` (a false reason, a false "done") earn 0; and the oracle's refusal earns 0 with the
    files each mistake makes up (`made_up(mistake)`: path: text) written anyway."""
    oracle = oracle_answer(scenario, scenario.final_state, scenario.gold_results, model=model)
    what = scenario.provenance["reply"]["refusal"]["declined"]["what"]
    assert graded(scenario, checks, oracle) == 1.0
    for right in rights:
        assert graded(scenario, checks, right) == 1.0, right
    for wrong in (*NO_REASON, *wrongs, f"I couldn't {what}: I'm not able to do that."):
        assert graded(scenario, checks, wrong) == 0.0, wrong
    for mistake in scenario.provenance["mistakes"]:
        assert graded(scenario, checks, oracle, made_up(mistake)) == 0.0, mistake["label"]


def assert_twins_not_told_apart(texts: Mapping[str, list[tuple[str, bool]]]) -> None:
    """benchmarks/declined_twins.py's measure: for each kind, a bag-of-words classifier's
    held-out AUC of telling its twins (True) from its feasible requests (False) by their words
    alone, `texts` each kind's (request, declined?) - no kind's over GOAL_AUC."""
    aucs = {
        kind: cv_auc([t for t, _ in rows], [p for _, p in rows]) for kind, rows in texts.items()
    }
    assert all(auc <= GOAL_AUC for auc in aucs.values()), aucs
