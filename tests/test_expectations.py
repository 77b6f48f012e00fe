"""Great Expectations gates: good warehouse rows pass, and each kind of real defect fails."""

from __future__ import annotations

import dataclasses

import pyarrow as pa
import pytest
from test_warehouse import env_of, unproven_world, world_tables

from quality import expectations as qe
from synthesis.export import warehouse as wh

GATED = [
    "environments",
    "tools",
    "scenarios",
    "checks",
    "check_selftests",
    "trajectories",
    "llm_calls",
    "quarantine",
    "shards",
]


@pytest.fixture(scope="module")
def tables() -> dict[str, pa.Table]:
    return world_tables()


def _replace(table: pa.Table, column: str, values: list) -> pa.Table:
    i = table.column_names.index(column)
    return table.set_column(i, column, pa.array(values, table.schema.field(column).type))


def _failed(result: qe.GateResult) -> set[tuple[str, str]]:
    return {(f["expectation"], f["column"]) for f in result.failed}


@pytest.mark.parametrize("name", GATED)
def test_good_tables_pass(tables, name):
    result = qe.validate(name, tables[name])
    assert result.success, result.failed
    assert result.evaluated == len(qe.SUITES[name]) and result.rows == tables[name].num_rows


def test_accepts_pandas_and_row_dicts(tables):
    assert qe.validate("checks", tables["checks"].to_pandas()).success
    assert qe.validate("checks", tables["checks"].to_pylist()).success


def test_empty_table_passes(tables):
    assert qe.validate("llm_calls", wh.llm_call_rows([])).success


def test_duplicate_id_fails(tables):
    scen = tables["scenarios"]
    bad = _replace(scen, "scenario_id", ["s1", "s1", "s3", "s4"])
    result = qe.validate("scenarios", bad)
    assert not result.success
    assert _failed(result) == {("expect_column_values_to_be_unique", "scenario_id")}
    (failure,) = result.failed
    assert "2 unexpected" in failure["details"] and "s1" in failure["details"]


def test_compound_duplicate_tool_fails(tables):
    tools = tables["tools"]
    bad = _replace(tools, "tool_name", ["get_booking"] * 2 + tools["tool_name"].to_pylist()[2:])
    assert _failed(qe.validate("tools", bad)) == {
        ("expect_compound_columns_to_be_unique", "env_id,tool_name")
    }


@pytest.mark.parametrize(
    "table, column, value, expectation",
    [
        ("environments", "kind", "robot", "expect_column_values_to_be_in_set"),
        ("environments", "status", "maybe", "expect_column_values_to_be_in_set"),
        ("scenarios", "split", "validation", "expect_column_values_to_be_in_set"),
        ("scenarios", "kind", "impossible", "expect_column_values_to_be_in_set"),
        ("tools", "kind", "write", "expect_column_values_to_be_in_set"),
        ("trajectories", "policy", "gpt4", "expect_column_values_to_match_regex"),
        ("shards", "format", "csv", "expect_column_values_to_be_in_set"),
    ],
)
def test_bad_enum_fails(tables, table, column, value, expectation):
    t = tables[table]
    values = t[column].to_pylist()
    values[-1] = value
    result = qe.validate(table, _replace(t, column, values))
    assert (expectation, column) in _failed(result)
    assert not result.success


@pytest.mark.parametrize(
    "table, column, value, expectation",
    [
        ("scenarios", "chain_length", 0, "expect_column_values_to_be_between"),
        ("trajectories", "reward", 1.5, "expect_column_values_to_be_between"),
        ("environments", "n_tools", 0, "expect_column_values_to_be_between"),
        ("environments", "code_sha256", "abc", "expect_column_values_to_match_regex"),
        ("shards", "sha256", "A" * 64, "expect_column_values_to_match_regex"),
        ("shards", "path", "../escape.jsonl", "expect_column_values_to_not_match_regex"),
        ("tools", "schema_json", "{not json", "expect_column_values_to_be_json_parseable"),
        (
            "tools",
            "schema_json",
            '{"description": "no name"}',
            "expect_column_values_to_match_json_schema",
        ),
        ("checks", "description", "", "expect_column_value_lengths_to_be_between"),
        ("check_selftests", "mutation_kill_rate", -0.1, "expect_column_values_to_be_between"),
    ],
)
def test_out_of_range_values_fail(tables, table, column, value, expectation):
    t = tables[table]
    values = t[column].to_pylist()
    values[0] = value
    assert (expectation, column) in _failed(qe.validate(table, _replace(t, column, values)))


def test_accepted_environment_below_audit_threshold_fails(tables):
    envs = tables["environments"]
    bad = _replace(envs, "audit_score", [0.5, 0.5])  # e1 is accepted, e2 quarantined
    result = qe.validate("environments", bad)
    (failure,) = result.failed
    assert failure["column"] == "audit_score" and "1 unexpected" in failure["details"]
    assert "where status == 'accepted'" in failure["details"]


def test_a_quarantined_environment_without_tools_does_not_fail_the_gate(tables):
    envs = tables["environments"]  # e1 is accepted, e2 quarantined
    assert qe.validate("environments", _replace(envs, "n_tools", [3, 0])).success
    (failure,) = qe.validate("environments", _replace(envs, "n_tools", [0, 3])).failed
    assert failure["column"] == "n_tools" and "where status == 'accepted'" in failure["details"]


def test_infeasible_task_may_have_an_empty_chain(tables):
    scen = tables["scenarios"]  # s4 is the infeasible one
    assert qe.validate("scenarios", _replace(scen, "chain_length", [2, 3, 1, 0])).success
    assert not qe.validate("scenarios", _replace(scen, "chain_length", [0, 3, 1, 1])).success


def test_oracle_must_succeed_and_noop_must_fail(tables):
    trajs = tables["trajectories"]
    policies = trajs["policy"].to_pylist()  # ordered by traj_id: n1 o1 o2 o4 r1 r2 r4
    assert policies[0] == "noop"
    noop = _replace(trajs, "policy", policies[:4] + ["noop"] * 3)
    result = qe.validate("trajectories", noop)  # r4 (success) becomes a passing noop run
    assert _failed(result) == {
        ("expect_column_values_to_be_in_set", "success"),
        ("expect_column_values_to_be_in_set", "reward"),
    }
    by_column = {f["column"]: f["details"] for f in result.failed}
    assert "1 unexpected" in by_column["success"]
    assert "where policy == 'noop'" in by_column["success"]
    # r1 (reward 0.5) and r4 (reward 1) as baselines earn a reward: both are caught.
    assert "2 unexpected" in by_column["reward"]
    for baseline in ("refuse_always", "wrong_record"):
        renamed = _replace(trajs, "policy", policies[:4] + [baseline] * 3)
        failed = qe.validate("trajectories", renamed).failed
        assert {f["column"] for f in failed} == {"success", "reward"}
        assert all(f"where policy == '{baseline}'" in f["details"] for f in failed)
    failing_oracle = _replace(trajs, "success", [False, True, False, True, False, False, True])
    (failure,) = qe.validate("trajectories", failing_oracle).failed
    assert "where policy == 'oracle'" in failure["details"]


def test_published_but_unproven_scenario_fails(tables):
    world = unproven_world(gold_pass=True, noop_fail=False)
    selftests = wh.check_selftest_rows(world["check_selftests"], env_of(world))
    result = qe.validate("scenarios", tables["scenarios"], related={"check_selftests": selftests})
    assert not result.success
    assert _failed(result) == {("expect_column_values_to_be_in_set", "noop_fail")}
    # s3 is quarantined and unproven too, but only published scenarios must be proven.
    assert "1 unexpected" in result.failed[0]["details"]


def test_published_scenario_without_selftest_fails(tables):
    selftests = tables["check_selftests"].filter(
        pa.compute.not_equal(tables["check_selftests"]["scenario_id"], "s2")
    )
    result = qe.validate("scenarios", tables["scenarios"], related={"check_selftests": selftests})
    assert ("expect_column_values_to_not_be_null", "gold_pass") in _failed(result)


def test_proven_published_scenarios_pass_with_selftests(tables):
    result = qe.validate(
        "scenarios", tables["scenarios"], related={"check_selftests": tables["check_selftests"]}
    )
    assert result.success
    assert result.evaluated == len(qe.SUITES["scenarios"]) + len(qe.PROVEN_SCENARIO_SPECS)


def test_missing_column_is_a_failure_not_a_crash(tables):
    result = qe.validate("checks", tables["checks"].drop_columns(["spec_json"]))
    assert not result.success
    assert any(f["column"] == "spec_json" for f in result.failed)


def test_unknown_table_is_an_error():
    with pytest.raises(KeyError, match="no suite"):
        qe.validate("nope", [])


def test_metadata_is_plain_and_json_serialisable(tables):
    from synthesis import codec

    bad = _replace(tables["scenarios"], "split", ["train", "train", "dev", "test"])
    meta = qe.validate("scenarios", bad).to_metadata()
    assert meta["success"] is False and meta["failed"] == 1 and meta["rows"] == 4
    assert meta["failures"][0]["column"] == "split"
    assert "dev" in meta["failures"][0]["details"]
    assert meta["summary"].startswith("scenarios: 1/")
    codec.dumps(meta)


def test_enums_follow_the_data_model():
    assert qe.ENV_KINDS == ["tool", "workspace"]
    assert qe.SCENARIO_STATUSES == ["published", "quarantined"]
    assert qe.SPLITS == ["train", "test"]


def test_one_context_per_process(tables):
    qe.validate("checks", tables["checks"])
    context = qe._STATE["context"]
    qe.validate("checks", tables["checks"])
    qe.validate("tools", tables["tools"])
    assert qe._STATE["context"] is context


def test_import_does_not_load_great_expectations():
    import subprocess
    import sys

    code = "import sys, quality.expectations; print('great_expectations' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_a_guesser_attempt_must_name_its_seed(tables):
    trajs = tables["trajectories"]
    n = trajs.num_rows
    guessed = _replace(trajs, "policy", ["guesser"] * n)  # attempt_seed is null in every row
    (failure,) = qe.validate("trajectories", guessed).failed
    assert failure["column"] == "attempt_seed" and "where policy == 'guesser'" in failure["details"]
    assert qe.validate("trajectories", _replace(guessed, "attempt_seed", list(range(n)))).success


def test_text_columns_reach_great_expectations_as_python_objects(tables):
    # Arrow-backed text would be copied whole by every row-condition filter GE makes.
    frame = qe._frame(tables["trajectories"])
    assert frame["messages_json"].dtype == object and frame["policy"].dtype == object
    assert frame["reward"].dtype == "float64" and frame["success"].dtype == bool
    assert frame["messages_json"].tolist() == tables["trajectories"]["messages_json"].to_pylist()
    # And a row condition over object text still finds its defect.
    bad = _replace(tables["trajectories"], "success", [False] * tables["trajectories"].num_rows)
    assert ("expect_column_values_to_be_in_set", "success") in _failed(
        qe.validate("trajectories", bad)
    )


def test_columns_no_expectation_names_never_reach_great_expectations(tables, monkeypatch):
    """GE copies and fingerprints the frame it is given: the gates hand it only the columns
    their expectations name, and the verdicts are those of the whole table."""
    table = tables["trajectories"]
    checked = qe._checked_columns("trajectories")
    unchecked = [c for c in table.column_names if c not in checked]
    assert unchecked, "every trajectories column is checked: nothing to leave out"
    seen = []
    frame = qe._frame
    monkeypatch.setattr(qe, "_frame", lambda data: seen.append(frame(data)) or seen[-1])
    whole = qe.validate("trajectories", table)
    assert not set(unchecked) & set(seen[0].columns)
    # A defect in a checked column is still found, with or without the other columns.
    bad = _replace(table, "success", [False] * table.num_rows)
    assert _failed(qe.validate("trajectories", bad)) == _failed(
        qe.validate("trajectories", bad.select(sorted(checked & set(bad.column_names))))
    )
    assert whole.success and whole.rows == table.num_rows


def test_no_batch_is_fingerprinted(tables, monkeypatch):
    """GE would hash every cell of each frame for a batch marker the gates never read."""
    from great_expectations.execution_engine import pandas_execution_engine

    def refuse(frame):
        raise AssertionError(f"fingerprinted a frame of {len(frame)} rows")

    monkeypatch.setattr(pandas_execution_engine, "hash_pandas_dataframe", refuse)
    assert qe.validate("trajectories", tables["trajectories"]).success
    bad = _replace(tables["scenarios"], "scenario_id", ["s1", "s1", "s3", "s4"])
    assert not qe.validate("scenarios", bad).success  # still a gate: a defect is found


def test_every_expectation_kind_is_known_to_look_at_its_columns_only():
    # A new table-wide expectation would need the whole frame: _checked_columns says so.
    for name in qe.SUITES:
        assert qe._checked_columns(name) is not None, name
    assert qe._checked_columns("scenarios") >= {"scenario_id", "gold_pass"}


def test_a_suite_runs_again_for_its_details_only_when_it_fails(tables, monkeypatch):
    """Verdicts come from a BOOLEAN_ONLY run, the same counts BASIC decides by; a failing
    suite runs again under BASIC, so every result is the one BASIC alone gives."""
    good = tables["trajectories"]
    bad = _replace(good, "success", [False] * good.num_rows)
    formats = []
    run = qe._run
    monkeypatch.setattr(
        qe, "_run", lambda *args: formats.append(args[-1]["result_format"]) or run(*args)
    )
    results = [qe.validate("trajectories", good), qe.validate("trajectories", bad)]
    assert formats == ["BOOLEAN_ONLY", "BOOLEAN_ONLY", "BASIC"]
    monkeypatch.setattr(qe, "_VERDICT_FORMAT", qe._RESULT_FORMAT)
    for table, result in zip((good, bad), results, strict=True):
        basic = qe.validate("trajectories", table)
        assert dataclasses.replace(basic, seconds=0) == dataclasses.replace(result, seconds=0)
    assert results[0].success and not results[1].success and results[1].failed
