"""The self-test's work runs (quality/work_runs.py): a project task judged by its outcome has its
mutants run with only the calls that work, and gets the verdicts whole runs give; a look that
turns out to write is caught by the gold chain's own work run, and the task is run whole."""

from __future__ import annotations

import pytest

from quality import selftest
from quality.selftest import selftest_outcomes
from quality.work_runs import Reads, call_key, keeps_reads, work_chain
from sandboxes.backends import unavailable_reason
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.models import ToolCall
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.shard_support import first_topic

bwrap = pytest.mark.skipif(
    unavailable_reason("bwrap") is not None, reason=f"bwrap: {unavailable_reason('bwrap')}"
)


def _call(tool, **args):
    return ToolCall(tool=tool, args=args)


READS = Reads(frozenset({"run", "write"}), frozenset({call_key(_call("run", command="wc -l a"))}))
TREE, README = _call("tree", folder="."), _call("cat", path="README.md")
LOOK, WORK = _call("run", command="wc -l a"), _call("run", command="python3 - <<'PROGRAM'\n")
REPORT = _call("cat", path="r.md")


def test_the_work_chain_keeps_only_what_may_change_the_state():
    assert work_chain([TREE, README, LOOK, WORK, REPORT], READS) == (WORK,)
    assert work_chain([TREE, _call("run", command="wc -l b")], READS)  # not a look of gold


def test_a_path_keeps_its_reads_only_between_the_same_two_pieces_of_work():
    gold = [TREE, README, LOOK, WORK, REPORT]
    # The first two reads swapped: each still comes before the work.
    assert keeps_reads([README, TREE, LOOK, WORK, REPORT], (1, 0, 2, 3, 4), gold, READS)
    # A read skipped: the rest keep their places.
    assert keeps_reads([README, LOOK, WORK, REPORT], (1, 2, 3, 4), gold, READS)
    # The report read before the program writes it: it would show something else.
    assert not keeps_reads([TREE, README, LOOK, REPORT, WORK], (0, 1, 2, 4, 3), gold, READS)
    # Other work: it must be run.
    other = _call("run", command="python3 - <<'PROGRAM'\nother")
    assert not keeps_reads([TREE, README, LOOK, other, REPORT], (0, 1, 2, 3, 4), gold, READS)
    assert not keeps_reads([TREE], None, gold, READS)


@pytest.fixture(scope="module")
def project_tasks():
    env = build_environment(generate_spec(first_topic("project")))
    model = from_spec(env.spec, env)
    state = build_initial_state(env, seed=1, index=0, records_per_entity=4)
    planned = plan_scenarios(env, state, seed=2, count=10, model=model)
    scenarios = execute_gold(env, planned)
    items = [(s, derive_checks(s, model=model)) for s in scenarios if s.status != "quarantined"]
    assert len(items) >= 6
    return env, model, items


def _outcomes(env, model, items, monkeypatch, *, whole: bool):
    sent = []
    run_chains = selftest.run_chains

    def counted(env, episodes, **kwargs):
        sent.append(sum(len(e[1]) for e in episodes))  # calls made in the sandbox
        return run_chains(env, episodes, **kwargs)

    with monkeypatch.context() as patch:
        patch.setattr(selftest, "run_chains", counted)
        if whole:
            patch.setattr(selftest, "reads_of", lambda *a: None)
        outcomes = selftest_outcomes(env, items, model=model)
    verdicts = [(o.selftest.model_dump(), [(m.label, v) for m, v in o.mutants]) for o in outcomes]
    return verdicts, sum(sent)


@bwrap
def test_work_runs_give_the_verdicts_of_whole_runs_for_fewer_runs(project_tasks, monkeypatch):
    env, model, items = project_tasks
    reduced = [s for s, c in items if selftest.reads_of(s, True, model) is not None]
    assert len(reduced) >= 3  # the topic's outcome-judged tasks
    whole, whole_runs = _outcomes(env, model, items, monkeypatch, whole=True)
    work, work_runs = _outcomes(env, model, items, monkeypatch, whole=False)
    print("calls made", work_runs, "against", whole_runs)
    assert work == whole
    # Not vacuous: tasks proven, mutants killed and some equivalent among them.
    assert sum(st["reason"] is None for st, _ in work) >= 3
    told = {v for _, judged in work for _, v in judged}
    assert {"killed", "equivalent"} <= told
    assert work_runs < whole_runs * 0.6, (work_runs, whole_runs)


@bwrap
def test_a_look_that_writes_is_caught_and_its_task_is_run_whole(project_tasks, monkeypatch):
    env, model, items = project_tasks
    scenario, checks = next(
        (s, c) for s, c in items if selftest.reads_of(s, True, model) is not None
    )
    # A "look" that leaves a file behind, recorded as a look, before the work.
    chain = list(scenario.gold_chain)
    chain.insert(1, ToolCall(tool="run", args={"command": "echo x > notes.txt"}))
    looks = [0 if i == 0 else i + 1 for i in scenario.provenance["looks"]]
    tampered = execute_gold(
        env,
        [
            scenario.model_copy(
                update={
                    "gold_chain": chain,
                    "final_state": None,
                    "gold_results": [],
                    "provenance": {**scenario.provenance, "looks": sorted({1, *looks})},
                }
            )
        ],
    )[0]
    assert tampered.status != "quarantined"
    item = [(tampered, derive_checks(tampered, model=model))]
    whole, whole_runs = _outcomes(env, model, item, monkeypatch, whole=True)
    work, work_runs = _outcomes(env, model, item, monkeypatch, whole=False)
    assert work == whole
    # The gold chain's work run missed the file: every mutant was run whole after it.
    assert work_runs > whole_runs
    assert work[0][1]  # and judged
