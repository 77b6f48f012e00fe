"""The end-of-build summary says what failed and why, and never fails itself."""

from __future__ import annotations

import io

from rich.console import Console

from orchestration.build import BuildOutcome
from orchestration.summary import print_summary
from quality.expectations import GateResult
from synthesis.export import datasets
from synthesis.export import warehouse as wh


def _summary(home, outcome) -> str:
    screen = io.StringIO()
    print_summary(Console(file=screen, width=200, soft_wrap=True), home, outcome, 1.0)
    return screen.getvalue()


def test_a_failed_gate_is_shown_with_its_expectation_and_an_example(tmp_path):
    home = tmp_path / "home"
    staged = datasets.staging_dir(home, "run-1")
    failing = GateResult(
        suite="tools",
        success=False,
        evaluated=9,
        failed=[
            {
                "expectation": "expect_column_values_to_be_in_set",
                "column": "kind",
                "details": "1 unexpected; e.g. ['write']",
            }
        ],
        rows=4,
    )
    passing = GateResult(suite="scenarios", success=True, evaluated=12, rows=10)
    wh.write_table(
        staged / datasets.PARTS["warehouse"],
        "quality_gates",
        wh.quality_gate_rows([failing, passing]),
    )
    outcome = BuildOutcome(
        failed={"publish": "training_shards: upstream gate failed"}, publish_run_id="run-1"
    )
    out = _summary(home, outcome)
    assert (
        "GATE tools: expect_column_values_to_be_in_set on kind: 1 unexpected; e.g. ['write']" in out
    )
    assert "scenarios" not in out.split("GATE", 1)[1]
    assert "Nothing was published: the current dataset is still none" in out
    assert "FAILED publish: training_shards: upstream gate failed" in out


def test_an_unreadable_warehouse_does_not_break_the_summary(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    (home / "warehouse.duckdb").write_bytes(b"not a database")
    out = _summary(home, BuildOutcome())
    assert "cannot be read" in out and "rebuilds it from the artifacts" in out
    assert "Build finished" in out
