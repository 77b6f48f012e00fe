"""The evaluations database and the summary, without a dataset or a model."""

from __future__ import annotations

import duckdb
import pytest

from synthesis.config import LLMSettings
from synthesis.evaluation.dataset import EvalError
from synthesis.evaluation.runner import episode_key, episode_settings, public_url
from synthesis.evaluation.store import EPISODES, RUNS, TABLES, EvalStore, evals_path, now
from synthesis.evaluation.summary import format_summary, summarize
from synthesis.hashing import content_hash


def _episode(key: str, **fields) -> dict:
    row = {
        "episode_key": key,
        "run_id": "r1",
        "model": "m",
        "manifest_sha256": "abc",
        "scenario_id": key,
        "env_id": "e",
        "archetype": "booking",
        "kind": "feasible",
        "attempt": 0,
        "reward": 1.0,
        "success": True,
        "failure": "none",
        "started_at": now(),
        "finished_at": now(),
    }
    return {**row, **fields}


def test_the_tables_are_made_with_every_column_described(tmp_path):
    path = evals_path(tmp_path)
    EvalStore(path).close()
    con = duckdb.connect(str(path), read_only=True)
    try:
        for table, columns in TABLES.items():
            found = con.execute(
                "SELECT column_name, comment FROM duckdb_columns() WHERE table_name = ? "
                "ORDER BY column_index",
                [table],
            ).fetchall()
            assert [name for name, _ in found] == [name for name, _, _ in columns]
            assert all(comment for _, comment in found), table
            (described,) = con.execute(
                "SELECT comment FROM duckdb_tables() WHERE table_name = ?", [table]
            ).fetchone()
            assert described
    finally:
        con.close()
    assert {c for c, _, _ in EPISODES} >= {
        "run_id", "model", "manifest_sha256", "scenario_id", "env_id", "archetype", "kind",
        "family", "final_tier", "split", "attempt", "reward", "success", "turns", "tool_calls",
        "prompt_tokens", "completion_tokens", "cost_usd", "failure", "error",
    }  # fmt: skip
    assert {c for c, _, _ in RUNS} >= {
        "run_id", "model", "base_url", "dataset_id", "manifest_sha256", "settings_json",
        "started_at", "finished_at",
    }  # fmt: skip


def test_an_episode_is_recorded_once_and_one_that_errored_is_played_again(tmp_path):
    with EvalStore(evals_path(tmp_path), secrets=["sk-secret"]) as store:
        store.write_episode(_episode("a"))
        store.write_episode(_episode("b", error="timeout: sk-secret leaked", success=False))
        assert store.recorded(["a", "b", "c"]) == {"a"}
        # Played again: the row is replaced, not doubled.
        store.write_episode(_episode("b", run_id="r2"))
        assert store.recorded(["a", "b"]) == {"a", "b"}
        rows = store.episodes(["a", "b"])
    assert [(r["episode_key"], r["run_id"]) for r in rows] == [("a", "r1"), ("b", "r2")]
    con = duckdb.connect(str(evals_path(tmp_path)), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM eval_episodes").fetchone() == (2,)
    finally:
        con.close()


def test_the_api_key_is_never_written(tmp_path):
    with EvalStore(evals_path(tmp_path), secrets=["sk-secret"]) as store:
        store.write_episode(_episode("a", error="failed: Bearer sk-secret", success=False))
        store.start_run(
            {"run_id": "r", "model": "m", "stop_reason": "x sk-secret", "status": "running"}
        )
    assert b"sk-secret" not in evals_path(tmp_path).read_bytes()
    con = duckdb.connect(str(evals_path(tmp_path)), read_only=True)
    try:
        assert con.execute("SELECT error FROM eval_episodes").fetchone() == (
            "failed: Bearer [redacted]",
        )
    finally:
        con.close()


def test_a_run_left_running_is_marked_killed_by_the_next_eval(tmp_path):
    with EvalStore(evals_path(tmp_path)) as store:
        store.start_run({"run_id": "dead", "model": "m", "status": "running", "started_at": now()})
        store.start_run({"run_id": "done", "model": "m", "status": "finished", "started_at": now()})
    EvalStore(evals_path(tmp_path)).close()
    con = duckdb.connect(str(evals_path(tmp_path)), read_only=True)
    try:
        found = dict(con.execute("SELECT run_id, status FROM eval_runs").fetchall())
    finally:
        con.close()
    assert found == {"dead": "killed", "done": "finished"}


def test_an_episode_key_names_model_dataset_settings_task_and_attempt():
    settings = content_hash(episode_settings(LLMSettings(base_url="http://x/v1")))
    key = episode_key("m", "manifest", settings, "s1", 0)
    assert len(key) == 16
    others = {
        episode_key("m2", "manifest", settings, "s1", 0),
        episode_key("m", "manifest2", settings, "s1", 0),
        episode_key("m", "manifest", "other", "s1", 0),
        episode_key("m", "manifest", settings, "s2", 0),
        episode_key("m", "manifest", settings, "s1", 1),
    }
    assert key not in others and len(others) == 5
    # The address of the endpoint and the budget are not settings of an episode.
    same = content_hash(
        episode_settings(LLMSettings(base_url="http://elsewhere/v1", budget_usd=3, concurrency=2))
    )
    assert same == settings
    assert content_hash(episode_settings(LLMSettings(max_tokens=64))) != settings


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("https://user:sk-pass@api.example.com/v1?api-key=sk-q#x", "https://api.example.com/v1"),
        ("http://127.0.0.1:8000/v1", "http://127.0.0.1:8000/v1"),
        (None, None),
    ],
)
def test_the_endpoint_is_recorded_without_credentials(url, shown):
    assert public_url(url) == shown


def test_the_summary_counts_per_archetype_kind_and_failure_with_pass_hat_k():
    rows = [
        {"scenario_id": "s1", "archetype": "booking", "kind": "feasible", "reward": 1.0,
         "success": True, "failure": "none", "prompt_tokens": 10, "completion_tokens": 2},
        {"scenario_id": "s1", "archetype": "booking", "kind": "feasible", "reward": 0.5,
         "success": False, "failure": "other", "prompt_tokens": 10, "completion_tokens": 2},
        {"scenario_id": "s2", "archetype": "ledger", "kind": "infeasible", "reward": 1.0,
         "success": True, "failure": "none"},
        {"scenario_id": "s2", "archetype": "ledger", "kind": "infeasible", "reward": 1.0,
         "success": True, "failure": "none"},
    ]  # fmt: skip
    summary = summarize(rows)
    assert (summary.overall.episodes, summary.overall.successes) == (4, 3)
    assert summary.overall.mean_reward == pytest.approx(0.875)
    assert summary.by_archetype["booking"].success_rate == 0.5
    assert summary.by_archetype["ledger"].mean_reward == 1.0
    assert summary.by_kind["infeasible"].episodes == 2
    assert summary.failures == {"none": 3, "other": 1}
    # pass^2: s1 = C(1,2)/C(2,2) = 0, s2 = 1 -> 1/2; pass@2: s1 = 1, s2 = 1.
    assert summary.pass_hat_k == {1: 0.75, 2: 0.5}
    assert summary.pass_at_k == {1: 0.75, 2: 1.0}
    assert summary.tokens == (20, 4) and summary.tasks == 2
    text = "\n".join(format_summary(summary))
    assert "booking" in text and "pass^k" in text and "k=2 0.500" in text
    assert "by origin" not in text  # one origin: nothing to set beside it


def test_the_summary_sets_foreign_environments_beside_the_synthesized_ones():
    rows = [
        {"scenario_id": "s1", "archetype": "booking", "origin": "synthesized",
         "kind": "feasible", "reward": 1.0, "success": True, "failure": "none"},
        {"scenario_id": "s2", "archetype": "foreign", "origin": "foreign",
         "kind": "feasible", "reward": 0.0, "success": False, "failure": "no_action"},
        # A row of schema version 1 (no origin): its archetype says it is foreign.
        {"scenario_id": "s3", "archetype": "foreign", "kind": "feasible", "reward": 1.0,
         "success": True, "failure": "none"},
    ]  # fmt: skip
    summary = summarize(rows)
    assert list(summary.by_origin) == ["synthesized", "foreign"]
    assert (summary.by_origin["foreign"].episodes, summary.by_origin["foreign"].successes) == (
        2,
        1,
    )
    text = "\n".join(format_summary(summary))
    assert "by origin (foreign: environments brought with --envs):" in text
    assert "synthesized     1 episodes" in text


def test_a_second_writer_is_refused_naming_the_first_and_the_marts_wait(tmp_path):
    from synthesis.evaluation.marts import build_eval_marts
    from synthesis.evaluation.store import read_evals

    path = evals_path(tmp_path)
    with EvalStore(path) as store:
        store.write_episode(_episode("k1"))
        with pytest.raises(EvalError, match=r"being written by another eval \(pid \d+"):
            EvalStore(path)
        marts = build_eval_marts(tmp_path, dbt="/nonexistent/dbt")
        assert not marts.ok and "being written by another eval" in marts.problems[0]
        assert "it builds the marts when it ends" in marts.problems[0]
        with pytest.raises(EvalError, match="cannot read .* now"):
            read_evals(path)
    # Closed: the next writer opens it and finds what the first wrote.
    with EvalStore(path) as store:
        assert store.recorded(["k1"]) == {"k1"}


def test_a_file_written_before_the_origin_column_is_upgraded_in_place(tmp_path):
    path = evals_path(tmp_path)
    path.parent.mkdir(parents=True)
    old = [c for c in EPISODES if c[0] != "origin"]
    con = duckdb.connect(str(path))
    con.execute(
        "CREATE TABLE eval_episodes ("
        + ", ".join(
            f"{n} {t}" + (" PRIMARY KEY" if i == 0 else "") for i, (n, t, _) in enumerate(old)
        )
        + ")"
    )
    con.execute(
        "INSERT INTO eval_episodes (episode_key, model, archetype, success) "
        "VALUES ('k0', 'm', 'foreign', true)"
    )
    con.close()
    with EvalStore(path) as store:
        store.write_episode(_episode("k1", origin="synthesized"))
        got = sorted((r["episode_key"], r["origin"]) for r in store.episodes(["k0", "k1"]))
    assert got == [("k0", None), ("k1", "synthesized")]
    con = duckdb.connect(str(path), read_only=True)
    try:
        (comment,) = con.execute(
            "SELECT comment FROM duckdb_columns() WHERE table_name = 'eval_episodes' "
            "AND column_name = 'origin'"
        ).fetchone()
    finally:
        con.close()
    assert comment.startswith("synthesized")


def test_a_store_that_fails_to_open_leaves_the_writer_lock_free(tmp_path, monkeypatch):
    path = evals_path(tmp_path)

    def broken(self):
        raise RuntimeError("the tables could not be made")

    monkeypatch.setattr(EvalStore, "_prepare", broken)
    with pytest.raises(RuntimeError, match="could not be made"):
        EvalStore(path)
    monkeypatch.undo()
    with EvalStore(path) as store:  # not refused as "being written by another eval"
        assert store.recorded(["k1"]) == set()
