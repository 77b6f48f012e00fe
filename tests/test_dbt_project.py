"""dbt project tests: sources match the warehouse, and a real build yields known mart numbers."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from test_warehouse import populate, unproven_world

from synthesis.config import REPO_ROOT
from synthesis.export import warehouse as wh

PROJECT = REPO_ROOT / "dbt_project"
DBT = Path(sys.executable).parent / "dbt"
# Left out of staging on purpose: no mart reads the generated source code.
NOT_STAGED = {("environments", "code")}


def test_sources_cover_every_warehouse_table():
    sources = yaml.safe_load((PROJECT / "models/staging/_sources.yml").read_text())["sources"]
    (warehouse,) = sources
    assert sorted(t["name"] for t in warehouse["tables"]) == sorted(wh.TABLE_SCHEMAS)


@pytest.mark.parametrize("name", sorted(wh.TABLE_SCHEMAS))
def test_staging_model_casts_every_column(name):
    sql = (PROJECT / f"models/staging/stg_{name}.sql").read_text()
    assert f"source('warehouse', '{name}')" in sql
    cast_cols = re.findall(r"cast\((\w+) as ", sql)
    expected = [c for c in wh.TABLE_SCHEMAS[name].names if (name, c) not in NOT_STAGED]
    assert cast_cols == expected


def test_anonymous_usage_stats_are_off():
    project = yaml.safe_load((PROJECT / "dbt_project.yml").read_text())
    assert project["flags"]["send_anonymous_usage_stats"] is False
    assert project["profile"] == "envfoundry"


def _dbt(*args: str, home: Path, tmp: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "ENVFOUNDRY_HOME": str(home.resolve()), "DO_NOT_TRACK": "1"}
    return subprocess.run(
        [
            str(DBT),
            *args,
            "--project-dir",
            str(PROJECT),
            "--profiles-dir",
            str(PROJECT),
            "--target-path",
            str(tmp / "target"),
            "--log-path",
            str(tmp / "logs"),
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=REPO_ROOT,
    )


def _rows(home: Path, sql: str) -> list[tuple]:
    with duckdb.connect(str(home / wh.WAREHOUSE_FILE), read_only=True) as con:
        return con.execute(sql).fetchall()


@pytest.mark.slow
def test_dbt_parse_offline(tmp_path):
    result = _dbt("parse", home=tmp_path, tmp=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow
def test_dbt_build_marts(tmp_path):
    home = tmp_path / "home"
    populate(home / wh.WAREHOUSE_FILE)
    result = _dbt("build", home=home, tmp=tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    assert "WARN=0 ERROR=0 SKIP=0" in result.stdout

    funnel = _rows(
        home,
        "SELECT stage_order, stage, unit, n_items, n_quarantined, n_base, conversion, "
        "cumulative_conversion, fan_out_of, fan_out FROM mart_funnel ORDER BY stage_order",
    )
    # Rates divide one unit by the same unit at the stage before; fan-outs are apart.
    assert [r[:6] + r[8:9] for r in funnel] == [
        (1, "topics", "topic", 3, None, None, None),
        (2, "env_specs", "topic", 3, 1, 3, None),
        (3, "environments_generated", "environment", 2, 0, None, None),
        (4, "environments_accepted", "environment", 1, 1, 2, None),
        (5, "scenarios_generated", "scenario", 4, 0, None, "environments_accepted"),
        (6, "scenarios_proven", "scenario", 3, 1, 4, None),
        (7, "scenarios_published", "scenario", 3, 0, 3, None),
        (8, "checks", "check", 6, None, None, "scenarios_generated"),
        (9, "trajectories", "trajectory", 7, 0, None, "scenarios_published"),
        (10, "trajectories_successful", "trajectory", 4, None, 7, None),
    ]
    assert [r[6] for r in funnel] == pytest.approx(
        [None, 1.0, None, 0.5, None, 0.75, 1.0, None, None, 4 / 7]
    )
    assert [r[7] for r in funnel] == pytest.approx(
        [None, 1.0, None, 0.5, None, 0.75, 0.75, None, None, 4 / 7]
    )
    assert [r[9] for r in funnel] == pytest.approx(
        [None, None, None, None, 4.0, None, None, 1.5, 7 / 3, None]
    )

    env_quality = _rows(
        home,
        "SELECT env_id, status, n_initial_states, n_scenarios, n_published, "
        "n_proven, publish_rate, n_checks, mean_chain_length, "
        "oracle_success_rate, noop_success_rate, agent_success_rate, "
        "agent_mean_reward, n_trajectories "
        "FROM mart_env_quality ORDER BY env_id",
    )
    # The noop run is a control: it is not an agent, so agent rates are the random runs only.
    assert env_quality[0] == (
        "e1",
        "accepted",
        2,
        4,
        3,
        3,
        0.75,
        6,
        2.0,
        1.0,
        0.0,
        pytest.approx(1 / 3),
        0.5,
        7,
    )
    assert env_quality[1] == (
        "e2",
        "quarantined",
        0,
        0,
        0,
        0,
        None,
        0,
        None,
        None,
        None,
        None,
        None,
        0,
    )

    difficulty = _rows(
        home,
        "SELECT scenario_id, chain_length, n_checks, proven, "
        "n_agent_trajectories, agent_success_rate, oracle_solved, "
        "noop_solved, difficulty_band "
        "FROM mart_task_difficulty ORDER BY scenario_id",
    )
    assert difficulty == [
        ("s1", 2, 2, True, 1, 0.0, True, False, "unsolved"),
        ("s2", 3, 2, True, 1, 0.0, True, None, "unsolved"),
        ("s3", 1, 1, False, 0, None, None, None, "unrated"),
        ("s4", 1, 1, True, 1, 1.0, True, None, "easy"),
    ]

    benchmark = _rows(
        home,
        "SELECT policy, split, n_trajectories, success_rate, mean_reward, "
        "tokens_in FROM mart_policy_benchmark ORDER BY policy, split",
    )
    assert benchmark == [
        ("noop", "train", 1, 0.0, 0.0, 10),
        ("oracle", "test", 1, 1.0, 1.0, 10),
        ("oracle", "train", 2, 1.0, 1.0, 20),
        ("random", "test", 1, 1.0, 1.0, 10),
        ("random", "train", 2, 0.0, 0.25, 20),
    ]

    cost = _rows(
        home,
        "SELECT stage, model, n_calls, n_cache_hits, n_artifacts, tokens_in, "
        "tokens_out, cost_usd, mean_latency_ms FROM mart_token_cost",
    )
    assert cost == [
        ("scenarios", "m1", 2, 1, 1, 100, 20, 0.01, 400.0),
        ("trajectories", "m2", 1, 0, 1, 50, 50, 0.02, 600.0),
    ]

    reasons = _rows(
        home,
        "SELECT artifact_type, reason_kind, n_artifacts "
        "FROM mart_quarantine_reasons ORDER BY artifact_type",
    )
    assert reasons == [
        ("env_spec", "spec_invalid", 1),
        ("environment", "audit_below_threshold", 1),
        ("scenario", "noop_passes", 1),
    ]


@pytest.mark.slow
def test_dbt_build_fails_on_published_unproven_scenario(tmp_path):
    world = unproven_world(gold_pass=False, noop_fail=True)
    home = tmp_path / "home"
    populate(home / wh.WAREHOUSE_FILE, world)
    result = _dbt("build", home=home, tmp=tmp_path)
    assert result.returncode != 0
    assert re.search(r"FAIL 1 assert_published_scenarios_are_proven", result.stdout)


@pytest.mark.slow
def test_dbt_build_on_empty_warehouse(tmp_path):
    # A fresh home where no stage has run yet: every source exists (empty) and marts build.
    home = tmp_path / "home"
    wh.ensure_tables(home / wh.WAREHOUSE_FILE)
    result = _dbt("build", home=home, tmp=tmp_path)
    assert result.returncode == 0, result.stdout[-4000:]
    assert _rows(home, "SELECT count(*), sum(n_items) FROM mart_funnel") == [(10, 0)]
