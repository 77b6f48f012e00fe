"""Report tests: the numbers from the marts appear, charts are to scale, the HTML is offline."""

from __future__ import annotations

import re
import xml.dom.minidom
from pathlib import Path

import pytest
from test_dbt_project import _dbt
from test_warehouse import populate

from quality import report
from quality.expectations import GateResult
from synthesis.export import warehouse as wh


def _svgs(text: str) -> list[str]:
    return re.findall(r"<svg.*?</svg>", text, re.S)


def test_bar_lengths_are_proportional_and_labels_escaped():
    chart = report.Chart("t", ["a", "<b>&", "zero"], [10, 5, 0])
    svg = report.svg_bar_chart(chart, width=500)
    xml.dom.minidom.parseString(svg)  # well-formed, so the escaping held
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', svg)]
    assert widths[0] == pytest.approx(2 * widths[1]) and widths[2] == 0
    assert "&lt;b&gt;&amp;" in svg and "<b>" not in svg


def test_long_labels_are_shortened_but_kept_in_tooltip():
    label = "scenario: " + "x" * 80
    svg = report.svg_bar_chart(report.Chart("t", [label], [1]))
    assert f"<title>{label}: 1</title>" in svg
    assert re.search(r'text-anchor="end">scenario: x+…</text>', svg)


def test_report_without_marts_says_what_is_missing(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    populate(path)
    paths = report.write_report(path, tmp_path / "out")
    md = paths["markdown"].read_text()
    assert "`mart_funnel` is not built yet" in md
    assert "`mart_env_quality` is not built yet" in md
    # Gates come from the warehouse's quality_gates table when none are passed in.
    assert "| tools | FAIL | 5 | 9 | 1 |" in md
    assert (
        "| tools | expect_column_values_to_be_in_set | kind | 1 unexpected; e.g. ['write'] |" in md
    )


def test_passed_gate_results_take_precedence(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    wh.ensure_tables(path)
    gates = [
        GateResult("checks", True, 6, [], rows=6),
        GateResult(
            "trajectories",
            False,
            17,
            [{"expectation": "expect_x", "column": "reward", "details": "2 unexpected | pipes"}],
            rows=9,
        ),
    ]
    paths = report.write_report(path, tmp_path / "out", gates)
    md = paths["markdown"].read_text()
    assert "1 of 2 suites passed." in md
    assert "| trajectories | expect_x | reward | 2 unexpected \\| pipes |" in md
    page = paths["html"].read_text()
    assert '<td class="fail">FAIL</td>' in page


def test_missing_warehouse_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="no warehouse"):
        report.write_report(tmp_path / "nope.duckdb", tmp_path / "out")
    assert not (tmp_path / "nope.duckdb").exists()


@pytest.fixture(scope="module")
def built_home(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    home = tmp / "home"
    populate(home / wh.WAREHOUSE_FILE)
    result = _dbt("build", home=home, tmp=tmp)
    assert result.returncode == 0, result.stdout[-4000:]
    return home


@pytest.mark.slow
def test_report_from_built_marts(built_home, tmp_path):
    paths = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path)
    assert set(paths) == {"markdown", "html"}
    assert paths["markdown"].name == "report.md" and paths["html"].name == "report.html"
    md = paths["markdown"].read_text()
    for line in [
        "| scenarios_generated | scenario | 4 | 1 | 400.0% |",
        "| scenarios_published | scenario | 3 | – | 100.0% |",
        "| trajectories_successful | trajectory | 4 | – | 57.1% |",
        "| e1 | booking | programmatic | accepted | 0.95 | 3 | 4 | 3 | 0.75 | 0.625 | 0.333 |",
        "| scenario | checks | noop_passes | 1 | noop_passes: do-nothing passes |",
        "| random | train | 2 | 0 | 0.25 | 2 | 0.002 |",
        "| scenarios | m1 | 2 | 0.5 | 100 | 20 | 0.01 |",
        "**3** scenarios published",
        "1 of 2 environments accepted.",
    ]:
        assert line in md, line
    # Chain-length histogram of published scenarios s1 (2), s2 (3), s4 (1).
    assert re.search(r"1 step +█+ 1\n2 steps +█+ 1\n3 steps +█+ 1", md)
    assert re.search(r"easy +█+ 1\nunsolved +█+ 2", md)


@pytest.mark.slow
def test_html_is_standalone_and_charts_match_the_funnel(built_home, tmp_path):
    page = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path)["html"].read_text()
    assert "<script" not in page and "<link" not in page
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    svgs = _svgs(page)
    assert len(svgs) == 5  # funnel, archetypes, chain lengths, difficulty bands, reasons
    for svg in svgs:
        xml.dom.minidom.parseString(svg)
    funnel = svgs[0]
    titles = re.findall(r"<title>([^<]+)</title>", funnel)
    assert titles[:3] == ["topics: 3", "env_specs: 3", "environments_generated: 2"]
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', funnel)]
    # trajectories (7) is the longest bar; scenarios_generated (4) is 4/7 of it.
    assert widths[8] == max(widths) and widths[4] == pytest.approx(widths[8] * 4 / 7, rel=1e-3)


@pytest.mark.slow
def test_report_is_deterministic(built_home, tmp_path):
    a = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path / "a")
    b = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path / "b")
    for key in a:
        assert a[key].read_bytes() == b[key].read_bytes()
