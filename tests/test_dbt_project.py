"""dbt project tests: sources match the warehouse, and a real build yields known mart numbers."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest
import yaml
from test_warehouse import populate, unproven_world

from quality.expectations import SUITES
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


# A dbt test, and the Great Expectations expectation that checks the same.
SAME_CHECK = {
    "not_null": "ExpectColumnValuesToNotBeNull",
    "unique": "ExpectColumnValuesToBeUnique",
    "accepted_values": "ExpectColumnValuesToBeInSet",
    "accepted_range": "ExpectColumnValuesToBeBetween",
    "unique_combination_of_columns": "ExpectCompoundColumnsToBeUnique",
}


def _staged_from(model: str) -> tuple[str, dict[str, str]]:
    """A staging model's source table, and which source column each of its columns is."""
    sql = (PROJECT / f"models/staging/{model}.sql").read_text()
    (table,) = re.findall(r"source\('warehouse', '(\w+)'\)", sql)
    casts = re.findall(r"cast\((\w+) as .+?\) as (\w+)\s*,?\s*$", sql, re.MULTILINE)
    return table, {alias: column for column, alias in casts}


def _checked_by_the_gate(table: str, kind: str, args: dict, columns: list[str]) -> bool:
    """The table's gate checks this (or more) on every row of these source columns."""
    suite = SUITES.get(table, [])
    unconditional = [(k, a) for k, a in suite if not {"row_condition", "mostly"} & set(a)]
    for expectation, a in unconditional:
        if expectation != SAME_CHECK.get(kind):
            continue
        if kind == "unique_combination_of_columns":
            # dbt groups nulls together, the gate skips them: the same only without nulls.
            not_null = {a["column"] for k, a in unconditional if k == SAME_CHECK["not_null"]}
            if set(a["column_list"]) == set(columns) <= not_null:
                return True
        elif a.get("column") == columns[0]:
            if kind == "accepted_values" and not set(a["value_set"]) <= set(args["values"]):
                continue
            if kind == "accepted_range" and not _within(a, args):
                continue
            return True
    return False


def _within(gate: dict, test: dict) -> bool:
    """The gate's range lies inside the test's."""
    low, high = test.get("min_value"), test.get("max_value")
    return (low is None or (gate.get("min_value") is not None and gate["min_value"] >= low)) and (
        high is None or (gate.get("max_value") is not None and gate["max_value"] <= high)
    )


def _checked_twice(staging: list[dict]) -> list[str]:
    """Staging tests that check what the source table's Great Expectations gate checked
    before the table was written: in a build they cannot fail, and each costs dbt a node."""
    twice = []
    for model in staging:
        table, source_column = _staged_from(model["name"])
        tests = [(None, t) for t in model.get("data_tests", [])]
        tests += [(c["name"], t) for c in model.get("columns", []) for t in c.get("data_tests", [])]
        for column, test in tests:
            kind, args = (test, {}) if isinstance(test, str) else next(iter(test.items()))
            args = (args or {}).get("arguments", {})
            names = args["columns"] if column is None else [column]
            if _checked_by_the_gate(table, kind, args, [source_column[n] for n in names]):
                twice.append(f"{model['name']}: {kind} {', '.join(names)}")
    return twice


def test_no_staging_test_repeats_a_gate_of_its_source():
    """Each check is made once: Great Expectations gates a table before it is written, so dbt
    tests what no gate sees (ungated tables, relationships, marts), not the gated columns
    again. Adding a repeated test fails here; so would a gate losing one dbt relies on."""
    staging = yaml.safe_load((PROJECT / "models/staging/_staging.yml").read_text())["models"]
    assert _checked_twice(staging) == []
    # The comparison finds a repeat when there is one: env_id is the environments' gated key.
    (environments,) = [m for m in staging if m["name"] == "stg_environments"]
    environments["columns"].append({"name": "env_id", "data_tests": ["not_null"]})
    assert _checked_twice(staging) == ["stg_environments: not_null env_id"]


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


_PARSER = """
import json, sys
from pathlib import Path
from assets.dbt import ensure_manifest
print("ready", flush=True)
sys.stdin.readline()
manifest = json.loads(ensure_manifest(Path(sys.argv[1])).read_text())
print(len(manifest["nodes"]), flush=True)
"""


@pytest.mark.slow
def test_processes_that_need_the_manifest_at_once_parse_once_and_read_it_whole(tmp_path):
    # pytest-xdist workers import the definitions together on a fresh clone: one read the
    # manifest while the other's dbt was writing it and got half a file.
    project = tmp_path / "dbt_project"
    shutil.copytree(PROJECT, project, ignore=shutil.ignore_patterns("target", "logs"))
    parsers = [
        subprocess.Popen(
            [sys.executable, "-c", _PARSER, str(project)],
            cwd=REPO_ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    try:
        for parser in parsers:  # both imported: now they ask at the same moment
            assert parser.stdout.readline() == "ready\n", parser.stderr.read()
        for parser in parsers:
            parser.stdin.write("go\n")
            parser.stdin.flush()
        results = [parser.communicate(timeout=300) for parser in parsers]
    finally:  # a parser left waiting would parse into tmp_path after the test
        for parser in parsers:
            parser.kill()
            parser.wait()
    assert [p.returncode for p in parsers] == [0, 0], [err for _, err in results]
    nodes = {int(out) for out, _ in results}
    assert len(nodes) == 1 and nodes.pop() > 100
    runs = (project / "logs" / "dbt.log").read_text().count("Running with dbt=")
    assert runs == 1
