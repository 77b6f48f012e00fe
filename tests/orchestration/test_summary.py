"""The end-of-build summary says what failed and why, and never fails itself."""

from __future__ import annotations

import io

from rich.console import Console

from assets._staleness import NEW
from orchestration.build import BuildOutcome
from orchestration.summary import interrupted, print_summary
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


def test_a_first_build_says_its_environments_are_new_not_made_again(tmp_path):
    first = BuildOutcome(
        remade=dict.fromkeys(["a", "b", "c"], NEW), publish="this home had no published dataset"
    )
    out = _summary(tmp_path, first)
    assert "Environments: 3 made, all new (this home had none of them)" in out
    # Why it published, not a line that reads as if nothing was.
    assert "Publish: ran, because this home had no published dataset" in out
    assert "made again" not in out and "reused" not in out.split("Publish")[0]
    later = BuildOutcome(
        remade={"a": NEW, "b": "its definition changed"}, reused=["c"], publish="changed"
    )
    out = _summary(tmp_path, later)
    assert "Environments: 2 made (1 new, 1 made again), 1 reused (nothing they are" in out
    assert "1  new: never made in this home: a" in out
    assert "1  its definition changed: b" in out
    # All made again: none reused, and no word that nothing changed.
    again = BuildOutcome(remade=dict.fromkeys(["a", "b"], "scenarios code changed"), publish="x")
    out = _summary(tmp_path, again)
    assert "Environments: 2 made, none reused" in out and "nothing they are" not in out
    assert "2  scenarios code changed: a, b" in out


def test_an_interrupted_build_says_in_one_line_what_it_kept_and_how_to_go_on(tmp_path):
    log = tmp_path / "build.log"
    outcome = BuildOutcome(remade=dict.fromkeys(["a", "b", "c"], NEW), reused=["d"], finished=["b"])
    line = interrupted(tmp_path, outcome, log)
    assert "\n" not in line
    assert line.startswith(
        "Interrupted: 1 of the 3 environments it had to make are made and kept (1 more were "
        "current); nothing was published: no dataset is published yet. The same command goes "
        "on from there"
    )
    assert str(log) in line
    before = interrupted(tmp_path, BuildOutcome(), log)
    assert before.startswith("Interrupted: before any environment was made; nothing was")
    outcome.publish = "environments changed: 3 new"
    assert "publishing was cut short" in interrupted(tmp_path, outcome, log)
