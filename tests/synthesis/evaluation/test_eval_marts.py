"""The benchmark marts, built by dbt from the hand-made home's evaluations (eval_fixtures.py,
where every figure below is worked out), and the leaderboard `envfoundry eval --leaderboard`
writes from them. One dbt build is shared by the module's tests; one more fails on purpose,
and one lists what the build's own dbt target selects. Slow tier: dbt starts in seconds."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from types import SimpleNamespace

import duckdb
import pytest

from synthesis.config import REPO_ROOT
from synthesis.evaluation.command import eval_main
from synthesis.evaluation.compare import COUNTED_EPISODES
from synthesis.evaluation.leaderboard import leaderboard_path
from synthesis.evaluation.marts import DBT_PROJECT_DIR, MARTS, build_eval_marts, dbt_executable
from synthesis.evaluation.metrics import mean_pass_at_k, mean_pass_hat_k
from synthesis.evaluation.store import evals_path
from synthesis.hashing import sha256_file
from tests.synthesis.evaluation.eval_fixtures import (
    ALPHA,
    BETA,
    EPISODES,
    GAMMA,
    OLD_MANIFEST,
    make_home,
)

pytestmark = pytest.mark.slow


def files(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): sha256_file(p)
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The hand-made home, its marts and leaderboard built by `envfoundry eval --leaderboard`."""
    home = make_home(tmp_path_factory.mktemp("marts"))
    dataset = files(home / "datasets")
    outside = sorted(p.name for p in home.iterdir())
    lines: list[str] = []
    code = eval_main(["--home", str(home), "--leaderboard"], out=lines.append)
    assert code == 0, "\n".join(lines)
    con = duckdb.connect(str(evals_path(home)), read_only=True)
    yield SimpleNamespace(home=home, lines=lines, dataset=dataset, outside=outside, con=con)
    con.close()


def rows(built, sql: str, params=()) -> list[tuple]:
    return built.con.execute(sql, list(params)).fetchall()


def manifest(built) -> str:
    (key,) = rows(built, "SELECT DISTINCT manifest_sha256 FROM eval_runs WHERE model = ?", [GAMMA])
    return key[0]


def test_the_marts_hold_every_model_by_archetype_kind_tier_and_split(built):
    found = rows(
        built,
        "SELECT model, archetype, kind, tier, split, n_tasks, n_episodes, n_successes, "
        "round(success_rate, 4), round(mean_reward, 4), n_errors FROM mart_eval_benchmark "
        "WHERE manifest_sha256 = ? ORDER BY ALL",
        [manifest(built)],
    )
    assert found == [
        (ALPHA, "booking", "feasible", "easy", "test", 1, 3, 3, 1.0, 1.0, 0),
        (ALPHA, "booking", "infeasible", "hard", "test", 1, 3, 1, 0.3333, 0.3333, 0),
        (ALPHA, "ledger", "feasible", "expert", "test", 1, 3, 2, 0.6667, 0.8333, 0),
        (ALPHA, "ledger", "feasible", "medium", "test", 1, 3, 0, 0.0, 0.0, 1),
        (BETA, "booking", "feasible", "easy", "test", 1, 2, 1, 0.5, 0.5, 0),
        (BETA, "booking", "infeasible", "hard", "test", 1, 1, 1, 1.0, 1.0, 0),
        (BETA, "ledger", "feasible", "expert", "test", 1, 1, 0, 0.0, 0.0, 0),
        (BETA, "ledger", "feasible", "medium", "test", 1, 1, 1, 1.0, 1.0, 0),
        (GAMMA, "foreign", "feasible", "easy", "test", 1, 1, 0, 0.0, 0.0, 0),
        (GAMMA, "ledger", "feasible", "easy", "test", 2, 2, 1, 0.5, 0.5, 0),
    ]
    # The older dataset's episode is its own row, never mixed in.
    assert rows(
        built,
        "SELECT model, n_episodes FROM mart_eval_benchmark WHERE manifest_sha256 = ?",
        [OLD_MANIFEST],
    ) == [(ALPHA, 1)]


def test_pass_k_in_the_marts_equals_the_hand_computed_values(built):
    found = rows(
        built,
        "SELECT model, k, n_tasks, pass_hat_k, pass_at_k FROM mart_eval_reliability "
        "WHERE manifest_sha256 = ? ORDER BY model, k",
        [manifest(built)],
    )
    expected = [
        (ALPHA, 1, 4, 0.5, 0.5),
        (ALPHA, 2, 4, 1 / 3, 2 / 3),
        (ALPHA, 3, 4, 0.25, 0.75),
        (BETA, 1, 4, 0.625, 0.625),
        (BETA, 2, 1, 0.0, 1.0),
        (GAMMA, 1, 3, 1 / 3, 1 / 3),
    ]
    assert [r[:3] for r in found] == [e[:3] for e in expected]
    for got, want in zip(found, expected, strict=True):
        assert got[3:] == pytest.approx(want[3:], abs=1e-12), got
    # The same as the summary's exact binomials (metrics.py) on the same outcomes.
    for model in (ALPHA, BETA):
        outcomes: dict[str, list[bool]] = {}
        for m, scenario, _, success, *_ in EPISODES:
            if m == model:
                outcomes.setdefault(scenario, []).append(success)
        for _, k, _, hat, at in (r for r in found if r[0] == model):
            assert hat == pytest.approx(mean_pass_hat_k(outcomes, k), abs=1e-12)
            assert at == pytest.approx(mean_pass_at_k(outcomes, k), abs=1e-12)


def test_the_failure_taxonomy_counts_and_shares(built):
    found = rows(
        built,
        "SELECT model, archetype, failure, n_episodes, share_of_episodes, share_of_failures "
        "FROM mart_eval_failures WHERE manifest_sha256 = ? ORDER BY model, archetype, failure",
        [manifest(built)],
    )
    expected = [
        (ALPHA, "booking", "complied_infeasible", 2, 2 / 6, 1.0),
        (ALPHA, "booking", "none", 4, 4 / 6, None),
        (ALPHA, "ledger", "llm_error", 1, 1 / 6, 1 / 4),
        (ALPHA, "ledger", "no_action", 1, 1 / 6, 1 / 4),
        (ALPHA, "ledger", "none", 2, 2 / 6, None),
        (ALPHA, "ledger", "wrong_or_missing_answer", 1, 1 / 6, 1 / 4),
        (ALPHA, "ledger", "wrong_record", 1, 1 / 6, 1 / 4),
        (BETA, "booking", "none", 2, 2 / 3, None),
        (BETA, "booking", "out_of_turns", 1, 1 / 3, 1.0),
        (BETA, "ledger", "none", 1, 1 / 2, None),
        (BETA, "ledger", "refused_feasible", 1, 1 / 2, 1.0),
        (GAMMA, "foreign", "invalid_tool_or_arguments", 1, 1.0, 1.0),
        (GAMMA, "ledger", "no_action", 1, 1 / 2, 1.0),
        (GAMMA, "ledger", "none", 1, 1 / 2, None),
    ]
    assert [r[:4] for r in found] == [e[:4] for e in expected]
    for got, want in zip(found, expected, strict=True):
        assert got[4] == pytest.approx(want[4]) and got[5] == pytest.approx(want[5]), got


def test_spend_per_model_from_the_episodes_and_the_ledger(built):
    found = rows(
        built,
        "SELECT model, n_episodes, prompt_tokens, completion_tokens, cost_usd, "
        "cost_per_success_usd, ledger_requests, ledger_cost_usd FROM mart_eval_spend "
        "WHERE manifest_sha256 = ? ORDER BY model",
        [manifest(built)],
    )
    # alpha: 12 episodes x (100, 10, $0.01); beta: the 5 that count x (200, 20, $0.05), the
    # superseded one left out; its ledger holds both runs' calls ($0.30 + $0.05).
    expected = [
        (ALPHA, 12, 1200, 120, 0.12, 0.02, 2, 0.13),
        (BETA, 5, 1000, 100, 0.25, 0.25 / 3, 2, 0.35),
        (GAMMA, 3, 0, 0, 0.0, 0.0, 0, 0.0),
    ]
    assert [r[:4] for r in found] == [e[:4] for e in expected]
    for got, want in zip(found, expected, strict=True):
        assert got[4:] == pytest.approx(want[4:]), got


def test_the_leaderboard_lists_every_model_and_the_references(built):
    found = rows(
        built,
        "SELECT rank, model, splits, n_tasks, n_episodes, n_successes, success_rate, "
        "mean_reward, max_k, pass_hat_max_k, pass_at_max_k, n_errors FROM "
        "mart_eval_leaderboard WHERE manifest_sha256 = ? ORDER BY rank",
        [manifest(built)],
    )
    expected = [
        (1, BETA, "test", 4, 5, 3, 0.6, 0.6, 2, 0.0, 1.0, 0),
        (2, ALPHA, "test", 4, 12, 6, 0.5, 6.5 / 12, 3, 0.25, 0.75, 1),
        (3, GAMMA, "test", 3, 3, 1, 1 / 3, 1 / 3, 1, 1 / 3, 1 / 3, 0),
    ]
    assert [r[:6] + r[8:9] + r[11:] for r in found] == [e[:6] + e[8:9] + e[11:] for e in expected]
    for got, want in zip(found, expected, strict=True):
        assert got[6:8] + got[9:11] == pytest.approx(want[6:8] + want[9:11]), got
    # The printed table: the three models in rank order, then the references.
    text = "\n".join(built.lines)
    assert "Eval marts built in" in text and "ERROR=0" in text
    assert str(leaderboard_path(built.home)) in text
    order = [next(i for i, line in enumerate(built.lines) if f"  {name}  " in line)
             for name in (BETA, ALPHA, GAMMA, "oracle", "guesser", "wrong_record", "noop",
                          "shortcut: dump", "shortcut: hedge")]  # fmt: skip
    assert order == sorted(order)
    assert "gamma played 3 of the 7 published tasks" in text
    # The page: every model and every reference, in a file that stands alone.
    page = leaderboard_path(built.home).read_text()
    for name in (ALPHA, BETA, GAMMA, "oracle", "guesser", "noop", "wrong_record"):
        assert f"<title>{name}: " in page  # a bar in the chart
    assert "shortcut: hedge" in page and "<svg" in page and OLD_MANIFEST not in page


def test_transfer_sets_the_foreign_environments_beside_the_synthesized_ones(built):
    found = rows(
        built,
        "SELECT model, origin, n_environments, n_tasks, n_episodes, n_successes, success_rate, "
        "mean_reward, success_rate_gap FROM mart_eval_transfer WHERE manifest_sha256 = ? "
        "ORDER BY model, origin DESC",
        [manifest(built)],
    )
    expected = [
        (ALPHA, "synthesized", 2, 4, 12, 6, 0.5, 6.5 / 12, None),
        (BETA, "synthesized", 2, 4, 5, 3, 0.6, 0.6, None),
        (GAMMA, "synthesized", 1, 2, 2, 1, 0.5, 0.5, None),
        (GAMMA, "foreign", 1, 1, 1, 0, 0.0, 0.0, -0.5),
    ]
    assert [r[:6] for r in found] == [e[:6] for e in expected]
    for got, want in zip(found, expected, strict=True):
        assert got[6:8] == pytest.approx(want[6:8]) and got[8] == pytest.approx(want[8]), got
    board = rows(
        built,
        "SELECT model, synthesized_success_rate, foreign_success_rate FROM "
        "mart_eval_leaderboard WHERE manifest_sha256 = ? ORDER BY model",
        [manifest(built)],
    )
    assert board == [(ALPHA, 0.5, None), (BETA, 0.6, None), (GAMMA, 0.5, 0.0)]
    # Printed and on the page: only the model that played a foreign environment.
    text = "\n".join(built.lines)
    line = next(line for line in built.lines if line.strip().startswith(GAMMA) and "points" in line)
    assert "50.0%" in line and "0.0%" in line and "-50.0 points" in line
    assert "transfer (success rate on the environments the build synthesized" in text
    assert not any(line.strip().startswith(ALPHA) and "points" in line for line in built.lines)
    page = leaderboard_path(built.home).read_text()
    assert "Transfer to foreign environments" in page and "-50.0 points" in page


def test_compare_counts_the_episodes_the_marts_count(built):
    key = manifest(built)
    mart = rows(
        built,
        "SELECT model, scenario_id, archetype, count(*), count(*) FILTER (WHERE success) "
        "FROM int_eval_episodes WHERE manifest_sha256 = ? GROUP BY ALL ORDER BY 1, 2",
        [key],
    )
    assert rows(built, COUNTED_EPISODES, [key]) == mart and len(mart) == 11


def test_only_the_evals_folder_is_written_and_the_dataset_is_byte_identical(built):
    assert files(built.home / "datasets") == built.dataset
    assert sorted(p.name for p in built.home.iterdir()) == built.outside
    written = sorted(p.name for p in (built.home / "evals").iterdir())
    # The lock file is the writers' flock (store.writer_lock): empty of data, held by none now.
    assert written == [".evals.lock", "dbt", "evals.duckdb", "leaderboard.html"]
    tables = {t for (t,) in rows(built, "SELECT table_name FROM information_schema.tables")}
    assert set(MARTS) | {"eval_runs", "eval_episodes", "eval_llm_calls"} <= tables


def test_a_failing_dbt_build_is_reported_and_loses_no_episode(tmp_path, capsys):
    home = make_home(tmp_path)
    with duckdb.connect(str(evals_path(home))) as con:
        # A reward no rule gives: the marts' test of the episodes fails.
        con.execute("UPDATE eval_episodes SET reward = 1.5 WHERE episode_key = 'k00'")
        before = con.execute("SELECT * FROM eval_episodes ORDER BY episode_key").fetchall()
    lines: list[str] = []
    assert eval_main(["--home", str(home), "--leaderboard"], out=lines.append) == 1
    text = "\n".join(lines)
    assert "Eval marts NOT built (dbt exit 1)" in text
    assert "int_eval_episodes_keys_set_and_rewards_in_0_1" in text
    assert f"envfoundry eval --leaderboard --home {home}" in text
    assert "the eval marts were not built" in capsys.readouterr().err
    assert not leaderboard_path(home).exists()
    with duckdb.connect(str(evals_path(home)), read_only=True) as con:
        assert con.execute("SELECT * FROM eval_episodes ORDER BY episode_key").fetchall() == before
    # Without dbt at all: said, and nothing written.
    missing = build_eval_marts(home, dbt=str(tmp_path / "no-dbt-here"))
    assert not missing.ok and "dbt not found" in missing.problems[0]


def test_the_builds_own_dbt_target_selects_no_eval_model(tmp_path):
    """What the build's `dbt build` (target local, no selection) would run: no eval node."""
    env = {**os.environ, "ENVFOUNDRY_HOME": str(tmp_path), "DO_NOT_TRACK": "1"}
    proc = subprocess.run(
        [dbt_executable(), "ls", "--project-dir", str(DBT_PROJECT_DIR),
         "--profiles-dir", str(DBT_PROJECT_DIR), "--target-path", str(tmp_path / "target"),
         "--log-path", str(tmp_path / "logs"), "--output", "name", "--quiet"],
        cwd=REPO_ROOT, env=env, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    names = proc.stdout.split()
    assert "mart_policy_benchmark" in names and len(names) > 50
    assert [n for n in names if "eval" in n] == []
