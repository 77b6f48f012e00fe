"""The ledger in the warehouse: append-only across builds, every attempt a valid row."""

from __future__ import annotations

import duckdb

from quality import expectations as qe
from synthesis.export import warehouse as wh
from synthesis.llm.ledger import Ledger


def _ledger(build_id: str) -> Ledger:
    ledger = Ledger(build_id)
    ledger.record(
        stage="agent",
        artifact_id="s1",
        model="@cf/meta/llama-3.1-8b-instruct",
        request_sha256="r1",
        attempt=0,
        status="retried",
        reason="http_429: slow down",
    )
    ledger.record(
        stage="agent",
        artifact_id="s1",
        model="@cf/meta/llama-3.1-8b-instruct",
        request_sha256="r1",
        attempt=1,
        status="accepted",
        tokens_in=10,
        tokens_out=2,
    )
    return ledger


def test_a_rebuild_adds_its_rows_and_keeps_earlier_ones(tmp_path):
    path = tmp_path / "w.duckdb"
    # A table written before the ledger had build ids: migrated, its rows kept.
    with duckdb.connect(str(path)) as con:
        con.execute(
            "CREATE TABLE llm_calls (call_id VARCHAR NOT NULL, stage VARCHAR, "
            "model VARCHAR, tokens_in BIGINT, cache_hit BOOLEAN)"
        )
        con.execute("INSERT INTO llm_calls VALUES ('old', 'trajectories', 'm', 5, false)")
    for build in ("b1", "b2", "b2"):  # b2 written twice: merged by call id, not doubled
        rows = wh.llm_call_rows(_ledger(build).rows())
        assert qe.validate("llm_calls", rows).success
        modes = wh.build_write_modes(["llm_calls"])
        wh.write_tables(path, {"llm_calls": rows}, mode=modes)
    with duckdb.connect(str(path)) as con:
        counts = con.execute(
            "SELECT coalesce(build_id, '?'), count(*), count(created_at) FROM llm_calls "
            "GROUP BY 1 ORDER BY 1"
        ).fetchall()
    assert counts == [("?", 1, 0), ("b1", 2, 2), ("b2", 2, 2)]


def test_a_failed_attempt_without_a_reason_fails_the_gate():
    rows = _ledger("b1").rows()
    assert qe.validate("llm_calls", wh.llm_call_rows(rows)).success
    next(r for r in rows if r["status"] == "retried")["reason"] = None
    assert not qe.validate("llm_calls", wh.llm_call_rows(rows)).success
