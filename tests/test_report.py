"""Report tests: the numbers from the marts appear, charts are to scale, the HTML is offline."""

from __future__ import annotations

import io
import re
import xml.dom.minidom
from datetime import datetime, timedelta, timezone
from pathlib import Path

import dagster as dg
import duckdb
import pytest
from rich.console import Console
from test_dbt_project import _dbt
from test_warehouse import populate, small_world

from orchestration.build import BuildOutcome
from orchestration.summary import print_summary
from quality import report
from quality.expectations import GateResult
from synthesis.config import LLMSettings
from synthesis.export import warehouse as wh
from synthesis.models import QuarantineRecord, Topic

PROVENANCE = report.build_provenance(
    profile="tiny",
    seed=7,
    inputs_sha256="0123abcd" * 8,
    catalogue=report.CATALOGUE_PATH,
    envs=["/srv/envs/b.py", "/srv/envs/a.py:ShopEnv"],
    llm=LLMSettings(),
)


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


def test_provenance_names_the_inputs_and_hides_credentials():
    lines = {label: (value, note) for label, value, note in PROVENANCE.lines()}
    assert lines["profile"] == ("tiny", "") and lines["seed"] == ("7", "")
    assert re.fullmatch(r"envfoundry \d+\.\d+\.\d+.*", lines["generator"][0])
    # The shipped catalogue is named relative to the checkout: the same wherever it is cloned.
    assert lines["catalogue"] == ("data/topics.json", "shipped")
    assert lines["foreign sources (--envs)"][0] == "/srv/envs/a.py:ShopEnv, /srv/envs/b.py"
    assert lines["LLM"][0] == "offline"
    assert lines["inputs sha256"][0] == "0123abcd" * 8

    none = report.build_provenance(
        profile="small", seed=0, inputs_sha256="x", catalogue=None, llm=LLMSettings()
    )
    assert none.lines()[3] == ("catalogue", "none", "only the foreign sources")
    llm = LLMSettings(
        base_url="https://user:s3cret@llm.example:8443/v1?api_key=s3cret#frag",
        api_key="sk-s3cret",
        model="my-model",
    )
    online = report.build_provenance(
        profile="small", seed=0, inputs_sha256="x", catalogue=None, llm=llm
    )
    assert online.llm == "my-model @ https://llm.example:8443/v1"
    assert "s3cret" not in repr(online)


@pytest.fixture(scope="module")
def built_home(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report")
    home = tmp / "home"
    populate(home / wh.WAREHOUSE_FILE)
    result = _dbt("build", home=home, tmp=tmp)
    assert result.returncode == 0, result.stdout[-4000:]
    return home


def _funnel_table(md: str) -> list[list[str]]:
    section = md.split("## Funnel", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip("|").split(" | ") for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row] for row in rows]


@pytest.mark.slow
def test_no_conversion_exceeds_100_percent_when_checks_outnumber_scenarios(built_home, tmp_path):
    with duckdb.connect(str(built_home / wh.WAREHOUSE_FILE), read_only=True) as con:
        ((checks, scenarios),) = con.execute(
            "SELECT (SELECT count(*) FROM checks), (SELECT count(*) FROM scenarios)"
        ).fetchall()
        assert checks > scenarios  # the case that used to show 150% for checks
        rates = con.execute("SELECT conversion, cumulative_conversion FROM mart_funnel").fetchall()
        # Every rate divides one unit by the same unit, so none is above 1.
        assert all(0 <= r <= 1 for row in rates for r in row if r is not None)
        # The same unit at both ends of every conversion.
        mixed = con.execute(
            "SELECT f.stage FROM mart_funnel AS f WHERE f.conversion IS NOT NULL AND NOT EXISTS "
            "(SELECT 1 FROM mart_funnel AS p WHERE p.unit = f.unit "
            "AND p.stage_order < f.stage_order)"
        ).fetchall()
        assert mixed == []
    paths = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path, provenance=PROVENANCE)
    md = paths["markdown"].read_text()
    percents = [float(p) for p in re.findall(r"([\d.]+)%", md.split("## Funnel", 1)[1])]
    assert percents and max(percents) <= 100
    html_funnel = paths["html"].read_text().split("<h2>Funnel</h2>", 1)[1].split("<h2>", 1)[0]
    assert max(float(p) for p in re.findall(r"([\d.]+)%</td>", html_funnel)) <= 100
    # Fan-outs are shown apart, as ratios, never as a percentage.
    assert "| checks per generated scenario | 1.5 |" in md
    assert "| generated scenarios per accepted environment | 4 |" in md
    assert "| trajectories per published scenario | 2.333 |" in md
    assert "checks" not in [row[0] for row in _funnel_table(md) if len(row) == 7]


@pytest.mark.slow
def test_report_from_built_marts(built_home, tmp_path):
    paths = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path)
    assert set(paths) == {"markdown", "html"}
    assert paths["markdown"].name == "report.md" and paths["html"].name == "report.html"
    md = paths["markdown"].read_text()
    assert _funnel_table(md)[:10] == [
        ["stage", "unit", "items", "quarantined", "out of", "conversion", "cumulative"],
        ["topics", "topic", "3", "–", "–", "–", "–"],
        ["env_specs", "topic", "3", "1", "3", "100.0%", "100.0%"],
        ["environments_generated", "environment", "2", "0", "–", "–", "–"],
        ["environments_accepted", "environment", "1", "1", "2", "50.0%", "50.0%"],
        ["scenarios_generated", "scenario", "4", "0", "–", "–", "–"],
        ["scenarios_proven", "scenario", "3", "1", "4", "75.0%", "75.0%"],
        ["scenarios_published", "scenario", "3", "0", "3", "100.0%", "75.0%"],
        ["trajectories", "trajectory", "7", "0", "–", "–", "–"],
        ["trajectories_successful", "trajectory", "4", "–", "7", "57.1%", "57.1%"],
    ]
    for line in [
        "| e1 | booking | programmatic | accepted | 0.95 | 3 | 4 | 3 | 0.75 | 0.625 | 0.333 |",
        "| scenario | checks | noop_passes | 1 | s3 |",
        "| scenario | noop_passes | s3 | noop_passes: do-nothing passes |",
        "| random | train | 2 | 0 | 0.25 | 2 | 0.002 |",
        "| scenarios | m1 | 2 | 0.5 | 100 | 20 | 0.01 |",
        "**3** scenarios published",
        "1 of 2 environments accepted.",
    ]:
        assert line in md, line
    # Chain-length histogram of published scenarios s1 (2), s2 (3), s4 (1).
    assert re.search(r"1 step +█+ 1\n2 steps +█+ 1\n3 steps +█+ 1", md)
    assert re.search(r"easy +█+ 1\nunsolved +█+ 2", md)
    # Kill rates of the published s1 (1.0), s2 (0.5), s4 (1.0); no check reads a reply.
    assert "state: 3 published, mean kill rate 0.833; all: 3 published" in md


@pytest.mark.slow
def test_html_is_standalone_and_charts_match_the_funnel(built_home, tmp_path):
    page = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path)["html"].read_text()
    assert "<script" not in page and "<link" not in page
    assert set(re.findall(r"https?://[^\s\"'<>]+", page)) == {"http://www.w3.org/2000/svg"}
    svgs = _svgs(page)
    # funnel, archetypes, chain lengths, difficulty bands, kill rates by answer kind, reasons
    # (no tier chart: this world's scenarios carry no difficulty record)
    assert len(svgs) == 6
    for svg in svgs:
        xml.dom.minidom.parseString(svg)
    funnel = svgs[0]
    titles = re.findall(r"<title>([^<]+)</title>", funnel)
    assert titles[:3] == ["topics: 3", "env_specs: 3", "environments_generated: 2"]
    widths = [float(w) for w in re.findall(r'<rect [^>]*width="([\d.]+)"', funnel)]
    # trajectories (7) is the longest bar; scenarios_generated (4) is 4/7 of it.
    assert widths[8] == max(widths) and widths[4] == pytest.approx(widths[8] * 4 / 7, rel=1e-3)


@pytest.mark.slow
def test_report_is_deterministic_and_names_its_provenance(built_home, tmp_path):
    a = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path / "a", provenance=PROVENANCE)
    b = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path / "b", provenance=PROVENANCE)
    for key in a:
        assert a[key].read_bytes() == b[key].read_bytes()
    md = a["markdown"].read_text()
    head = md.split("## Overview", 1)[0]
    for line in [
        "- profile: `tiny`",
        "- seed: `7`",
        f"- generator: `{report.generator_version()}`",
        "- catalogue: `data/topics.json` (shipped)",
        "- foreign sources (--envs): `/srv/envs/a.py:ShopEnv, /srv/envs/b.py`",
        "- LLM: `offline` (no endpoint: programmatic phrasing and policies only)",
        f"- inputs sha256: `{'0123abcd' * 8}`",
    ]:
        assert line in head, line
    page = a["html"].read_text()
    assert "<tr><th>seed</th><td><code>7</code></td></tr>" in page
    assert f"<tr><th>inputs sha256</th><td><code>{'0123abcd' * 8}</code></td></tr>" in page
    # No build time: it is in the asset's metadata and the CLI summary instead.
    for text in (md, page):
        assert not re.search(r"\b20\d\d-\d\d-\d\d|\d\d:\d\d:\d\d", text)
    without = report.write_report(built_home / wh.WAREHOUSE_FILE, tmp_path / "c")
    assert report.NO_PROVENANCE in without["markdown"].read_text()


def _richer_world() -> dict[str, list]:
    """The small world plus a catalogue topic naming a source (no spec by design), a source
    that did not resolve, and more scenarios rejected for the same reason."""
    world = small_world()
    world["topics"].append(Topic(topic_id="t4", title="T4", archetype="", source="shop.py"))
    world["quarantine"] += [
        QuarantineRecord(
            artifact_type="scenario",
            artifact_id=sid,
            stage="checks",
            reason=f"noop_passes: the do-nothing agent passes every check of {sid}",
        )
        for sid in ("s5", "s10")
    ] + [
        QuarantineRecord(
            artifact_type="environment",
            artifact_id="shop.py",
            stage="env_sources",
            reason="SourceError: shop.py: no class holding a state",
        )
    ]
    return world


@pytest.fixture(scope="module")
def richer_home(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("report-richer")
    home = tmp / "home"
    populate(home / wh.WAREHOUSE_FILE, _richer_world())
    result = _dbt("build", home=home, tmp=tmp)
    assert result.returncode == 0, result.stdout[-4000:]
    return home


@pytest.mark.slow
def test_quarantine_shows_each_reason_with_its_smallest_examples(richer_home, tmp_path):
    paths = report.write_report(richer_home / wh.WAREHOUSE_FILE, tmp_path)
    md = paths["markdown"].read_text()
    section = md.split("## Quarantine: top reasons", 1)[1].split("\n## ", 1)[0]
    # Ids in order, the two smallest: s10 < s3 < s5.
    assert "| scenario | checks | noop_passes | 3 | s10, s3 |" in section
    assert "| environment | env_sources | SourceError | 1 | shop.py |" in section
    for line in [
        "| scenario | noop_passes | s10 | noop_passes: the do-nothing agent passes every check "
        "of s10 |",
        "| scenario | noop_passes | s3 | noop_passes: do-nothing passes |",
        "| environment | SourceError | shop.py | SourceError: shop.py: no class holding a state |",
        "| env_spec | spec_invalid | e3 | spec_invalid: unknown field 'x' |",
    ]:
        assert line in section, line
    assert "s5" not in section.split("**Examples**", 1)[1]
    page = paths["html"].read_text()
    assert "<td>noop_passes: the do-nothing agent passes every check of s10</td>" in page
    assert "<td>s10, s3</td>" in page


@pytest.mark.slow
def test_funnel_counts_losses_once_and_leaves_source_topics_out_of_the_spec_rate(richer_home):
    with duckdb.connect(str(richer_home / wh.WAREHOUSE_FILE), read_only=True) as con:
        rows = con.execute(
            "SELECT stage, n_items, n_quarantined, n_base, conversion FROM mart_funnel "
            "WHERE stage IN ('topics', 'env_specs', 'environments_generated', "
            "'scenarios_generated') ORDER BY stage_order"
        ).fetchall()
    assert rows == [
        ("topics", 4, None, None, None),
        # t4 names a source: no spec is due, so the rate is over the 3 topics naming one.
        ("env_specs", 3, 1, 3, 1.0),
        # The source that did not resolve never became an environment: lost on the way in.
        ("environments_generated", 2, 1, None, None),
        # s5 and s10 were quarantined before they had a row.
        ("scenarios_generated", 4, 2, None, None),
    ]


@pytest.mark.slow
def test_a_conversion_above_one_fails_the_dbt_build(tmp_path):
    # A spec for a topic that names no archetype: the pipeline never makes one, so the rate
    # over the topics naming one would be 3/2; the range test stops the build.
    world = small_world()
    world["topics"][1] = Topic(topic_id="t2", title="T2", archetype="", source="x.py")
    home = tmp_path / "home"
    populate(home / wh.WAREHOUSE_FILE, world)
    result = _dbt("build", home=home, tmp=tmp_path)
    assert result.returncode != 0
    assert re.search(r"FAIL 1 accepted_range_mart_funnel_conversion", result.stdout)


def test_the_build_time_is_in_the_cli_summary(tmp_path):
    screen = io.StringIO()
    started = datetime(2025, 3, 4, 5, 6, 7, tzinfo=timezone(timedelta(hours=1)))
    print_summary(
        Console(file=screen, width=200, soft_wrap=True),
        tmp_path / "home",
        BuildOutcome(),
        12.34,
        started,
    )
    assert "in 12.3s (0 Dagster runs), started 2025-03-04 05:06:07+01:00" in screen.getvalue()


@pytest.mark.slow
def test_a_build_heads_its_report_with_provenance_and_keeps_its_time_in_metadata(tiny_home):
    home, stdout = tiny_home
    md = (home / "reports" / "report.md").read_text()
    assert "- profile: `tiny`" in md and "- seed: `7`" in md
    assert "- catalogue: `data/topics.json` (shipped)" in md
    assert re.search(r"- inputs sha256: `[0-9a-f]{64}`", md)
    assert max(float(p) for p in re.findall(r"([\d.]+)%", md.split("## Funnel", 1)[1])) <= 100
    assert re.search(r"Build finished .*, started \d{4}-\d\d-\d\d \d\d:\d\d:\d\d", stdout)
    with dg.DagsterInstance.from_config(str(home / "dagster")) as instance:
        event = instance.get_latest_materialization_event(dg.AssetKey("quality_report"))
    metadata = event.asset_materialization.metadata
    assert isinstance(metadata["built_at"], dg.TimestampMetadataValue)
    assert metadata["seed"].value == 7 and metadata["profile"].value == "tiny"
    assert metadata["inputs_sha256"].value in md
