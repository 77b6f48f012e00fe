"""`envfoundry eval` on a built home against the loopback endpoint, with scripted agents
(tests/fakes/eval_agents.py): a capable one replaying the dataset's oracle and a weak one
answering at once, both recorded in HOME/evals/evals.duckdb with their tasks' archetypes and
kinds. A killed eval and one stopped by its budget go on without playing again what they
recorded; the published dataset is byte-identical afterwards; a copied home evaluates.

The home is the suite's shared tiny build (`tiny_home`), copied, so this module is slow-tier;
ENVFOUNDRY_EVAL_TEST_HOME names a built home to use instead (to run the module alone
without a build of its own). Each test works on its own copy.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from synthesis.config import LLMSettings
from synthesis.evaluation.command import eval_main, report
from synthesis.evaluation.dataset import current_dataset, published_tasks, split_counts
from synthesis.evaluation.runner import EvalOptions, run_eval
from synthesis.evaluation.store import evals_path
from synthesis.hashing import sha256_file
from synthesis.rollouts.episodes import default_max_steps
from tests.build_support import REPO
from tests.fakes.eval_agents import (
    CAPABLE,
    LOOKALIKE,
    LOOPING,
    REFUSING,
    UNKNOWN_TOOL,
    WEAK,
    first_messages,
    openings,
    responder,
)
from tests.fakes.openai_server import FakeOpenAIServer, Fault, final_answer, http_error

pytestmark = pytest.mark.slow

HOME_VARIABLE = "ENVFOUNDRY_EVAL_TEST_HOME"
KEY = "sk-eval-test-key-4711"


@pytest.fixture(scope="module")
def built_home(request) -> Path:
    """A built home, only read: the shared tiny build, or the one ENVFOUNDRY_EVAL_TEST_HOME
    names."""
    named = os.environ.get(HOME_VARIABLE)
    if named:
        return Path(named)
    return request.getfixturevalue("tiny_home")[0]


def copy_home(home: Path, copy: Path, *, evals: bool = False) -> Path:
    """A copy of a home as a user makes one (its links kept as links); without the home's
    evaluations unless `evals`, so each test starts from none."""

    def skipped(folder: str, names: list[str]) -> list[str]:
        return ["evals"] if not evals and Path(folder) == Path(home) and "evals" in names else []

    shutil.copytree(home, copy, symlinks=True, ignore=skipped)
    return copy


def dataset_files(home: Path) -> dict[str, str]:
    """sha256 of every file of the home's published dataset, by path inside it."""
    root = current_dataset(home).path
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def settings(server: FakeOpenAIServer, **overrides) -> LLMSettings:
    fields = {
        "base_url": server.base_url,
        "api_key": KEY,
        "timeout_s": 10.0,
        "retries": 1,
        "backoff_s": 0.01,
        "backoff_max_s": 0.05,
    }
    return LLMSettings(**{**fields, **overrides})


def query(home: Path, sql: str, params=()) -> list[tuple]:
    con = duckdb.connect(str(evals_path(home)), read_only=True)
    try:
        return con.execute(sql, list(params)).fetchall()
    finally:
        con.close()


def quiet(line: str) -> None:
    pass


@pytest.fixture(scope="module")
def evaluated(built_home, tmp_path_factory):
    """The capable and the weak agent evaluated on every published task of a copy of the home."""
    home = copy_home(built_home, tmp_path_factory.mktemp("eval") / "home")
    before = dataset_files(home)
    entries = sorted(p.name for p in home.iterdir())
    tasks = published_tasks(current_dataset(home))
    assert tasks, "the built home published no task"
    with FakeOpenAIServer(responder(home / "warehouse.duckdb")) as server:
        llm = settings(server)
        outcomes = {
            model: run_eval(home, llm, EvalOptions(model=model, split="all"), out=quiet)
            for model in (CAPABLE, WEAK)
        }
        yield SimpleNamespace(
            home=home,
            server=server,
            llm=llm,
            tasks=tasks,
            outcomes=outcomes,
            before=before,
            entries=entries,
        )


def test_each_model_is_recorded_with_its_tasks_archetypes_and_kinds(evaluated):
    home, tasks = evaluated.home, evaluated.tasks
    for model, outcome in evaluated.outcomes.items():
        assert outcome.status == "finished" and outcome.played == len(tasks) and not outcome.errors
        rows = query(
            home,
            "SELECT scenario_id, archetype, kind, family, split, error, failed_checks_json "
            "FROM eval_episodes WHERE model = ? ORDER BY scenario_id",
            [model],
        )
        assert [r[0] for r in rows] == sorted(t.scenario_id for t in tasks)
        assert {r[1] for r in rows} == {t.archetype for t in tasks}
        assert {r[2] for r in rows} == {t.kind for t in tasks}
        assert {r[4] for r in rows} == {t.split for t in tasks}
        assert all(r[3] for r in rows) and all(r[5] is None for r in rows)
        assert all(r[6] is not None for r in rows)  # every verdict known
    dataset = current_dataset(home)
    runs = query(
        home, "SELECT model, status, dataset_id, manifest_sha256, base_url, n_played FROM eval_runs"
    )
    assert sorted(runs) == sorted(
        (
            m,
            "finished",
            dataset.dataset_id,
            dataset.manifest_sha256,
            evaluated.server.base_url,
            len(tasks),
        )
        for m in (CAPABLE, WEAK)
    )
    assert dataset.manifest_sha256 == sha256_file(dataset.path / "shards" / "manifest.json")
    assert KEY.encode() not in evals_path(home).read_bytes()
    # The ledger of the client: every request of the agents, none of the dataset's.
    (calls,) = query(home, "SELECT count(*) FROM eval_llm_calls WHERE stage = 'agent'")[0]
    assert calls == len(evaluated.server.requests)


def test_the_capable_agent_succeeds_where_the_weak_one_does_nothing(evaluated):
    capable = evaluated.outcomes[CAPABLE].summary
    weak = evaluated.outcomes[WEAK].summary
    n = len(evaluated.tasks)
    assert capable.overall.success_rate > weak.overall.success_rate
    assert (capable.overall.successes, capable.failures) == (n, {"none": n})
    assert (weak.overall.successes, weak.failures) == (0, {"no_action": n})
    assert set(capable.by_archetype) == {t.archetype for t in evaluated.tasks}
    tokens = query(
        evaluated.home,
        "SELECT model, min(tool_calls), min(prompt_tokens), max(tool_calls) FROM eval_episodes "
        "GROUP BY model ORDER BY model",
    )
    assert tokens[0][0] == CAPABLE and tokens[0][1] > 0 and tokens[0][2] > 0
    assert tokens[1][0] == WEAK and tokens[1][3] == 0


def test_an_eval_run_again_plays_nothing_it_has_recorded(evaluated):
    asked = len(evaluated.server.requests)
    again = run_eval(
        evaluated.home, evaluated.llm, EvalOptions(model=CAPABLE, split="all"), out=quiet
    )
    assert (again.status, again.played, again.skipped) == ("finished", 0, len(evaluated.tasks))
    assert len(evaluated.server.requests) == asked
    assert again.summary.overall.successes == len(evaluated.tasks)
    # More attempts: only the new ones are played (attempt 1 of the first two tasks).
    more = run_eval(
        evaluated.home,
        evaluated.llm,
        EvalOptions(model=CAPABLE, split="all", attempts=2, limit=2),
        out=quiet,
    )
    assert (more.played, more.skipped) == (2, 2)
    assert set(more.summary.pass_hat_k) == {1, 2}


def test_scripted_failures_get_their_classes(evaluated):
    feasible = [t.scenario_id for t in evaluated.tasks if t.kind == "feasible"][:2]
    expected = {
        REFUSING: "refused_feasible",
        LOOPING: "out_of_turns",
        UNKNOWN_TOOL: "invalid_tool_or_arguments",
    }
    for model, failure in expected.items():
        outcome = run_eval(
            evaluated.home,
            evaluated.llm,
            EvalOptions(model=model, split="all", task_ids=tuple(feasible)),
            out=quiet,
        )
        assert outcome.summary.failures == {failure: len(feasible)}, model
    rows = query(
        evaluated.home,
        "SELECT scenario_id, tool_calls, hit_step_limit FROM eval_episodes WHERE model = ?",
        [LOOPING],
    )
    dataset = current_dataset(evaluated.home)
    from synthesis.evaluation.dataset import load_environment

    for scenario_id, tool_calls, hit in rows:
        env_id = next(t.env_id for t in evaluated.tasks if t.scenario_id == scenario_id)
        scenario = load_environment(dataset, env_id, [scenario_id]).scenarios[scenario_id]
        assert hit and tool_calls == default_max_steps(scenario)
    # The dataset's wrong-record baseline, replayed: the oracle's calls on look-alike records.
    lookalike = run_eval(
        evaluated.home, evaluated.llm, EvalOptions(model=LOOKALIKE, split="all"), out=quiet
    )
    assert lookalike.summary.overall.successes == 0
    assert lookalike.summary.failures.get("wrong_record", 0) >= 1


def test_the_command_prints_the_summary_and_where_the_results_are(evaluated, monkeypatch, capsys):
    monkeypatch.setenv("OPENAI_BASE_URL", evaluated.server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    home = evaluated.home
    tasks_file = home.parent / "tasks.txt"
    chosen = [t.scenario_id for t in evaluated.tasks[:2]]
    tasks_file.write_text("# two tasks\n" + "\n".join(chosen) + "\n\n")
    lines: list[str] = []
    code = eval_main(
        [
            "--home",
            str(home),
            "--model",
            "quiet-agent",
            "--split",
            "all",
            "--tasks",
            str(tasks_file),
        ],
        out=lines.append,
    )
    text = "\n".join(lines)
    assert code == 0, text
    assert "Episodes: 2 asked for, 2 played now, 0 already recorded (skipped)" in text
    assert "by archetype:" in text and "failures: no_action 2" in text
    assert str(evals_path(home)) in text
    tasks_file.write_text("nosuchtask\n")
    assert eval_main(["--home", str(home), "--model", "m", "--tasks", str(tasks_file)]) == 1
    assert "not a published task of this dataset: nosuchtask" in capsys.readouterr().err
    if not split_counts(evaluated.tasks).get("test"):  # the default split, empty here
        assert eval_main(["--home", str(home), "--model", "m"]) == 1
        assert "choose --split train|all" in capsys.readouterr().err
    monkeypatch.delenv("OPENAI_BASE_URL")
    assert eval_main(["--home", str(home), "--model", "m", "--split", "all"]) == 1
    assert "set OPENAI_BASE_URL" in capsys.readouterr().err


def test_a_killed_eval_goes_on_without_playing_again_what_it_recorded(built_home, tmp_path):
    home = copy_home(built_home, tmp_path / "home")
    before = dataset_files(home)
    scenario_of = openings(home / "warehouse.duckdb")
    n = len(published_tasks(current_dataset(home)))
    kill_after = min(3, n - 1)
    base = responder(home / "warehouse.duckdb")
    state = {"proc": None, "openers": 0}

    def respond(request):
        if first_messages([request], WEAK):
            state["openers"] += 1
            if state["openers"] == kill_after + 1 and state["proc"] is not None:
                os.kill(state["proc"].pid, signal.SIGKILL)  # as `kill -9` would
        return base(request)

    with FakeOpenAIServer(respond) as server:
        environment = {
            **os.environ,
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": KEY,
            # One episode at a time: the first `kill_after` are written when the next starts.
            "ENVFOUNDRY_LLM_CONCURRENCY": "1",
        }
        command = [sys.executable, "-m", "orchestration.cli", "eval", "--home", str(home)]
        state["proc"] = subprocess.Popen(
            [*command, "--model", WEAK, "--split", "all"],
            cwd=REPO,
            env=environment,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
        )
        output, _ = state["proc"].communicate(timeout=300)
        assert state["proc"].returncode == -signal.SIGKILL, output
        recorded = {s for (s,) in query(home, "SELECT scenario_id FROM eval_episodes")}
        assert len(recorded) == kill_after
        assert query(home, "SELECT status FROM eval_runs") == [("running",)]
        asked = len(server.requests)
        again = run_eval(home, settings(server), EvalOptions(model=WEAK, split="all"), out=quiet)
        played_now = [scenario_of[m] for m in first_messages(server.requests[asked:], WEAK)]
    assert (again.status, again.played, again.skipped) == ("finished", n - kill_after, kill_after)
    assert sorted(played_now) == sorted(set(scenario_of.values()) - recorded)
    assert query(home, "SELECT count(*) FROM eval_episodes") == [(n,)]
    assert sorted(query(home, "SELECT status FROM eval_runs")) == [("finished",), ("killed",)]
    assert dataset_files(home) == before


def test_a_budget_stop_records_what_finished_says_why_and_goes_on(built_home, tmp_path):
    home = copy_home(built_home, tmp_path / "home")
    n = len(published_tasks(current_dataset(home)))
    # Each answer costs 100,000 completion tokens, and each request reserves as much: a cap
    # of 250,000 takes two episodes (one at a time), never a third.
    answer = Fault(message=final_answer("Done."), completion_tokens=100_000)
    with FakeOpenAIServer(lambda request: answer) as server:
        capped = settings(server, concurrency=1, max_tokens=100_000, budget_tokens=250_000)
        stopped = run_eval(home, capped, EvalOptions(model=WEAK, split="all"), out=quiet)
        assert stopped.status == "stopped" and stopped.played == 2
        assert stopped.stop_reason.startswith("budget_exhausted: build token cap 250000")
        assert report(stopped)[0].startswith("Stopped: budget_exhausted")
        assert query(home, "SELECT status, n_played, stop_reason FROM eval_runs") == [
            ("stopped", 2, stopped.stop_reason)
        ]
        asked = len(server.requests)
        goes_on = run_eval(
            home,
            settings(server, max_tokens=100_000),
            EvalOptions(model=WEAK, split="all"),
            out=quiet,
        )
        assert len(server.requests) - asked == n - 2
    assert (goes_on.status, goes_on.played, goes_on.skipped) == ("finished", n - 2, 2)
    assert goes_on.summary.overall.episodes == n


def test_episodes_an_endpoint_failure_ended_are_recorded_and_played_again(built_home, tmp_path):
    home = copy_home(built_home, tmp_path / "home")
    n = len(published_tasks(current_dataset(home)))
    with FakeOpenAIServer(lambda request: http_error(500)) as server:
        failing = settings(server, retries=0)
        stopped = run_eval(home, failing, EvalOptions(model=WEAK, split="all"), out=quiet)
    # Each episode's request fails; after `breaker_failures` in a row the breaker stops it.
    assert stopped.status == "stopped" and stopped.stop_reason.startswith("circuit_open")
    assert stopped.errors == stopped.played >= 1
    rows = query(home, "SELECT failure, error, reward FROM eval_episodes")
    assert rows and all(f == "llm_error" and "http_500" in e and r == 0.0 for f, e, r in rows)
    with FakeOpenAIServer(responder(home / "warehouse.duckdb")) as server:
        again = run_eval(home, settings(server), EvalOptions(model=WEAK, split="all"), out=quiet)
    assert (again.status, again.played, again.skipped, again.errors) == ("finished", n, 0, 0)
    assert query(home, "SELECT count(*), count(error) FROM eval_episodes") == [(n, 0)]


def test_a_copied_home_is_evaluated_where_it_now_is(built_home, tmp_path):
    first = copy_home(built_home, tmp_path / "first")
    with FakeOpenAIServer(responder(first / "warehouse.duckdb")) as server:
        llm = settings(server)
        run_eval(first, llm, EvalOptions(model=CAPABLE, split="all", limit=2), out=quiet)
        moved = copy_home(first, tmp_path / "elsewhere" / "moved", evals=True)
        shutil.rmtree(first)
        before = dataset_files(moved)
        outcome = run_eval(moved, llm, EvalOptions(model=CAPABLE, split="all", limit=3), out=quiet)
    assert (outcome.status, outcome.played, outcome.skipped) == ("finished", 1, 2)
    assert outcome.summary.overall.successes == 3
    assert outcome.db_path == evals_path(moved)
    assert str(first).encode() not in evals_path(moved).read_bytes()
    assert dataset_files(moved) == before


def test_the_published_dataset_is_unchanged(evaluated):
    """Last of the module's tests on its home, after every eval above has run on it."""
    assert dataset_files(evaluated.home) == evaluated.before
    added = sorted(set(p.name for p in evaluated.home.iterdir()) - set(evaluated.entries))
    assert added == ["evals"]
