"""Per-environment parts of a warehouse table: kept on an exact source match, else made."""

from __future__ import annotations

from contextlib import closing

import pyarrow as pa
import pytest

from synthesis.export import warehouse as wh
from synthesis.export import warehouse_parts as parts
from synthesis.export.warehouse_parts import Part
from synthesis.models import Check, CheckSelftest, Trajectory
from tests.fakes.screened_scenarios import scenario


def _rows(env_id: str, n: int, tag: str = "") -> pa.Table:
    return wh.trajectory_rows(
        Trajectory(
            traj_id=f"{env_id}-t{i}{tag}",
            scenario_id=f"{env_id}-s{i}",
            env_id=env_id,
            policy="oracle",
            reward=1.0,
            success=True,
            n_steps=1,
            messages=[{"role": "user", "content": f"task {i} of {env_id}{tag}"}],
        )
        for i in range(n)
    )


def _held(con) -> list[tuple[str, str]]:
    table = wh.read_table(con, "trajectories")
    return list(zip(table["env_id"].to_pylist(), table["traj_id"].to_pylist(), strict=True))


def _quarantined(env_id: str) -> list[dict]:
    return [
        {
            "artifact_type": "trajectory",
            "artifact_id": f"{env_id}-bad",
            "stage": "trajectories",
            "reason": "unscorable",
        }
    ]


@pytest.fixture
def con(tmp_path):
    with closing(wh.open_warehouse(tmp_path / "w.duckdb")) as connection:
        yield connection


def test_a_warehouse_without_the_bookkeeping_keeps_nothing(con):
    wh.write_tables(con, {"trajectories": _rows("e1", 2)})
    assert parts.recorded(con, "trajectories") == {}
    assert parts.reusable(con, "trajectories", {"e1": "v1"}) == {}


def test_kept_parts_stay_made_ones_are_replaced_and_the_others_go(con):
    first = {e: Part(f"{e}:v1", _quarantined(e) if e == "e1" else []) for e in ("e1", "e2", "e4")}
    rows = pa.concat_tables([_rows("e1", 2), _rows("e2", 2), _rows("e4", 1)])
    assert parts.write(con, "trajectories", rows, {}, first) == 5
    assert parts.recorded(con, "trajectories") == first

    # e1 unchanged, e2 changed, e3 new, e4 gone from the build.
    sources = {"e1": "e1:v1", "e2": "e2:v2", "e3": "e3:v1"}
    kept = parts.reusable(con, "trajectories", sources)
    assert kept == {"e1": first["e1"]}  # its quarantine rows with it
    made = {"e2": Part("e2:v2"), "e3": Part("e3:v1")}
    new = pa.concat_tables([_rows("e2", 3, "b"), _rows("e3", 1)])
    assert parts.write(con, "trajectories", new, kept, made) == 6
    assert _held(con) == [
        ("e1", "e1-t0"),
        ("e1", "e1-t1"),
        ("e2", "e2-t0b"),
        ("e2", "e2-t1b"),
        ("e2", "e2-t2b"),
        ("e3", "e3-t0"),
    ]
    assert parts.recorded(con, "trajectories") == {**kept, **made}


def test_the_table_is_the_one_a_whole_write_makes(con, tmp_path):
    parts.write(con, "trajectories", _rows("e1", 3), {}, {"e1": Part("a")})
    parts.write(con, "trajectories", _rows("e2", 2), {}, {"e2": Part("b")})  # e1 gone
    parts.write(con, "trajectories", _rows("e1", 3), {"e2": Part("b")}, {"e1": Part("a")})
    whole = tmp_path / "whole.duckdb"
    wh.write_tables(whole, {"trajectories": pa.concat_tables([_rows("e2", 2), _rows("e1", 3)])})
    assert wh.read_table(con, "trajectories") == wh.read_table(whole, "trajectories")


def test_a_key_held_twice_writes_nothing(con):
    parts.write(con, "trajectories", _rows("e1", 2), {}, {"e1": Part("a")})
    clash = _rows("e1", 1).set_column(2, "env_id", pa.array(["e2"]))  # e1-t0 again, for e2
    with pytest.raises(ValueError, match="held by more than one row"):
        parts.write(con, "trajectories", clash, {"e1": Part("a")}, {"e2": Part("b")})
    assert _held(con) == [("e1", "e1-t0"), ("e1", "e1-t1")]
    assert parts.recorded(con, "trajectories") == {"e1": Part("a")}


def test_an_environment_cannot_be_both_kept_and_made(con):
    with pytest.raises(ValueError, match="both kept and made"):
        parts.write(con, "trajectories", _rows("e1", 1), {"e1": Part("a")}, {"e1": Part("b")})


def _compressions(con, table: str, column: str) -> set[str]:
    """How DuckDB stored `column`'s segments (checkpointed first, so the rows are on disk)."""
    con.execute("CHECKPOINT")
    rows = con.execute(
        "SELECT DISTINCT compression FROM pragma_storage_info(?) "
        "WHERE column_name = ? AND segment_type = 'VARCHAR'",
        [table, column],
    ).fetchall()
    return {r[0] for r in rows}


def test_a_table_kept_from_an_older_version_is_made_anew_with_zstd_documents_when_nothing_is_kept(
    con,
):
    # As an older version declared it: JSON documents with DuckDB's default compression.
    plain = ", ".join(
        f"{wh._ident(f.name)} {wh._sql_type(f.type)}" for f in wh.TABLE_SCHEMAS["trajectories"]
    )
    con.execute(f"CREATE TABLE trajectories ({plain})")
    con.register("old", _rows("e0", 50))
    con.execute("INSERT INTO trajectories SELECT * FROM old")
    con.unregister("old")
    assert "ZSTD" not in _compressions(con, "trajectories", "messages_json")

    made = {"e1": Part("e1:v1")}
    assert parts.write(con, "trajectories", _rows("e1", 50), {}, made) == 50
    assert _compressions(con, "trajectories", "messages_json") == {"ZSTD"}
    assert _compressions(con, "trajectories", "tools_json") == {"ZSTD"}
    assert [e for e, _ in _held(con)] == ["e1"] * 50


def _screened(scenario_id: str, reason: str = "duplicate: near-identical text") -> dict:
    return {
        "artifact_type": "scenario",
        "artifact_id": scenario_id,
        "stage": "task_screening",
        "reason": reason,
    }


def _write_check_parts(con, check_source: dict[str, str], screened: list[dict]) -> None:
    """Each environment's scenario, check and self-test rows (two scenarios each) written as
    a publish writes them: every part made, with its sources."""
    envs = sorted(check_source)
    scenarios = [scenario(f"{e}-s{i}", env_id=e) for e in envs for i in range(2)]
    env_of = {s.scenario_id: s.env_id for s in scenarios}
    rows = {
        "scenarios": wh.scenario_rows(scenarios),
        "checks": wh.check_rows(
            [Check(check_id=f"{s}-c", scenario_id=s, description="paid", spec={}) for s in env_of],
            env_of,
        ),
        "check_selftests": wh.check_selftest_rows(
            [
                CheckSelftest(
                    scenario_id=s,
                    gold_pass=True,
                    noop_fail=True,
                    deterministic=True,
                    mutation_kill_rate=1.0,
                )
                for s in env_of
            ],
            env_of,
        ),
    }
    made = parts.made_check_parts(check_source, screened, rows["scenarios"], {e: [] for e in envs})
    for table in parts.CHECK_TABLES:
        parts.write(con, table, rows[table], {}, made[table])


def test_check_tables_are_kept_together_and_only_with_the_same_screening_verdicts(con):
    checks = {"e1": "code:v1", "e2": "code:v2"}
    screened = [_screened("e1-s0")]
    _write_check_parts(con, checks, screened)
    kept = parts.kept_check_parts(con, checks, screened)
    assert {t: sorted(p) for t, p in kept.items()} == {t: ["e1", "e2"] for t in parts.CHECK_TABLES}
    # A change elsewhere screens out one of e2's scenarios: e2's scenario rows must change
    # status, and its three tables are read again together; e1 stays kept.
    more = [*screened, _screened("e2-s1")]
    assert {t: sorted(p) for t, p in parts.kept_check_parts(con, checks, more).items()} == {
        t: ["e1"] for t in parts.CHECK_TABLES
    }
    # A verdict lifted (e1's scenario let back in), or given another reason, does the same.
    assert all(p.keys() == {"e2"} for p in parts.kept_check_parts(con, checks, []).values())
    moved = [_screened("e1-s0", reason="contaminated: shares a passage")]
    assert all(p.keys() == {"e2"} for p in parts.kept_check_parts(con, checks, moved).values())
    # Another checks artifact for e2: e2 is read again.
    other = {"e1": "code:v1", "e2": "code:v3"}
    assert all(p.keys() == {"e1"} for p in parts.kept_check_parts(con, other, screened).values())


def test_an_environment_missing_from_one_check_table_is_read_again_for_all_three(con):
    checks = {"e1": "code:v1", "e2": "code:v2"}
    _write_check_parts(con, checks, [])
    # The self-tests table was last written without e2 (its gate failed, say).
    held = parts.recorded(con, "check_selftests")
    parts.write(con, "check_selftests", wh.check_selftest_rows([], {}), {"e1": held["e1"]}, {})
    assert parts.recorded(con, "check_selftests").keys() == {"e1"}
    kept = parts.kept_check_parts(con, checks, [])
    assert all(p.keys() == {"e1"} for p in kept.values())
