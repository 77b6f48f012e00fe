"""The leaderboard's references, its page and the eval models' dbt configuration, without
running dbt (tests/synthesis/evaluation/test_eval_marts.py builds the marts)."""

from __future__ import annotations

import html
import re

import pytest
import yaml

from synthesis.evaluation.dataset import EvalError, current_dataset
from synthesis.evaluation.leaderboard import (
    Leaderboard,
    Row,
    format_leaderboard,
    read_leaderboard,
    read_references,
    render_html,
    svg_grouped_bars,
)
from synthesis.evaluation.marts import (
    DBT_PROJECT_DIR,
    MARTS,
    SELECTOR,
    TARGET,
    dbt_command,
    problems_of,
)
from synthesis.evaluation.taxonomy import FAILURE_CLASSES
from synthesis.hashing import sha256_file
from tests.synthesis.evaluation.eval_fixtures import make_home

EVAL_MODELS = DBT_PROJECT_DIR / "models" / "eval"


@pytest.fixture(scope="module")
def home(tmp_path_factory):
    return make_home(tmp_path_factory.mktemp("leaderboard"))


def test_the_references_are_the_builds_policies_and_shortcuts_on_the_same_split(home):
    dataset = current_dataset(home)
    before = sha256_file(dataset.warehouse)
    rows, published = read_references(dataset, ["test"])
    # s7 is a train task and s8 quarantined: the test split's published tasks are s1-s6, s9.
    assert published == {"test": 7}
    got = [
        (r.name, r.source, r.n_tasks, r.n_episodes, r.n_successes, round(r.mean_reward, 4))
        for r in rows
    ]
    assert got == [
        ("oracle", "policy", 7, 7, 7, 1.0),
        ("guesser", "policy", 2, 3, 2, round(2.5 / 3, 4)),
        ("wrong_record", "policy", 1, 1, 0, 0.0),
        ("noop", "policy", 7, 7, 0, 0.0),
        ("shortcut: dump", "shortcut", 7, 7, 0, 0.0),
        ("shortcut: hedge", "shortcut", 7, 7, 0, round(0.5 / 7, 4)),
    ]
    assert rows[0].by_archetype == {"booking": (2, 2), "foreign": (1, 1), "ledger": (4, 4)}
    assert rows[1].by_archetype == {"booking": (2, 2), "ledger": (0, 1)}
    every, published = read_references(dataset, None)
    assert published == {"test": 7, "train": 1}
    assert every[0].n_episodes == 8  # the oracle on s7 too
    assert sha256_file(dataset.warehouse) == before  # read-only


def test_a_leaderboard_needs_the_marts(home):
    with pytest.raises(EvalError, match="envfoundry eval --leaderboard"):
        read_leaderboard(home)


def board() -> Leaderboard:
    model = Row(
        name="m<1>",
        source="model",
        n_tasks=2,
        n_episodes=4,
        n_successes=3,
        success_rate=0.75,
        mean_reward=0.8,
        by_archetype={"booking": (1, 2), "ledger": (2, 2)},
        rank=1,
        splits="test",
        max_k=2,
        pass_hat_k=0.5,
        pass_at_k=1.0,
        cost_usd=0.02,
        cost_per_success_usd=0.02 / 3,
    )
    oracle = Row("oracle", "policy", 2, 2, 2, 1.0, 1.0, {"booking": (1, 1), "ledger": (1, 1)})
    dump = Row("shortcut: dump", "shortcut", 2, 2, 0, 0.0, 0.0, {"booking": (0, 1)})
    return Leaderboard("d1", "abc123", ("test",), 2, [model], [oracle, dump], ["booking", "ledger"])


def test_the_page_stands_alone_with_its_chart_and_escapes_names():
    page = render_html(board())
    assert page == render_html(board())  # the same leaderboard draws the same bytes
    assert page.startswith("<!doctype html>") and page.count("<svg") == 1
    assert not re.search(r"""(src|href)=["'](?!#)""", page)  # no file, no address
    assert "m&lt;1&gt;" in page and "m<1>" not in page
    assert "shortcut: dump" in page and "pass^k" in page
    svg = re.search(r"<svg.*?</svg>", page, re.S).group(0)
    # Groups: the model and the oracle (shortcuts are in the tables only); per group an
    # overall bar and one per archetype it played.
    bars = re.findall(r"<rect [^>]*><title>([^<]*)</title>", svg)
    assert [html.unescape(b) for b in bars] == [
        "m<1>: 75.0% overall",
        "m<1> · booking: 50.0% (1/2)",
        "m<1> · ledger: 100.0% (2/2)",
        "oracle: 100.0% overall",
        "oracle · booking: 100.0% (1/1)",
        "oracle · ledger: 100.0% (1/1)",
    ]
    assert "the build's policies (references)" in html.unescape(svg)


def test_bar_heights_follow_the_rates():
    svg = svg_grouped_bars([("a", 0.5, {"x": (1, 4)}, False)], ["x"])
    bars = re.findall(r'<rect [^>]*height="([\d.]+)" fill="[^"]*"><title>', svg)
    heights = [float(h) for h in bars]  # the bars (the legend's squares have no tooltip)
    assert heights == [110.0, 55.0]  # 220 px is 100%


def test_the_text_table_lists_models_then_references():
    lines = format_leaderboard(board())
    assert lines[0].startswith("Leaderboard of dataset d1 (manifest abc123), split test")
    row = next(line for line in lines if "m<1>" in line)
    assert "75.0%" in row and "0.500 (2)" in row and "1.000" in row
    assert lines.index(row) < next(i for i, line in enumerate(lines) if "oracle" in line)


def test_the_failure_classes_the_marts_accept_are_the_taxonomys():
    spec = yaml.safe_load((EVAL_MODELS / "_eval_models.yml").read_text())
    (failures,) = [m for m in spec["models"] if m["name"] == "mart_eval_failures"]
    (column,) = [c for c in failures["columns"] if c["name"] == "failure"]
    (accepted,) = [t["accepted_values"] for t in column["data_tests"] if "accepted_values" in t]
    assert sorted(accepted["arguments"]["values"]) == sorted(FAILURE_CLASSES)


def test_the_eval_models_exist_only_in_the_evals_target():
    project = yaml.safe_load((DBT_PROJECT_DIR / "dbt_project.yml").read_text())
    enabled = "{{ target.name == '" + TARGET + "' }}"
    assert project["models"]["envfoundry"]["eval"]["+enabled"] == enabled
    assert project["sources"]["envfoundry"]["eval"]["+enabled"] == enabled
    assert project["data_tests"]["envfoundry"]["eval"]["+enabled"] == enabled
    assert project["models"]["envfoundry"]["eval"]["+tags"] == ["eval"]
    profiles = yaml.safe_load((DBT_PROJECT_DIR / "profiles.yml").read_text())
    outputs = profiles["envfoundry"]["outputs"]
    assert profiles["envfoundry"]["target"] == "local"  # the build's default is unchanged
    assert outputs[TARGET]["path"].endswith("/evals/evals.duckdb")
    assert outputs[TARGET]["threads"] == 1
    names = {p.stem for p in EVAL_MODELS.rglob("*.sql")}
    assert set(MARTS) <= names


def test_the_dbt_command_builds_only_the_eval_models_into_the_home(tmp_path):
    command = dbt_command(tmp_path, dbt="dbt")
    assert command[:2] == ["dbt", "build"]

    def option(name):
        return command[command.index(name) + 1]

    assert (option("--target"), option("--select"), option("--threads")) == (TARGET, SELECTOR, "1")
    assert option("--target-path") == str(tmp_path / "evals" / "dbt" / "target")
    assert option("--log-path") == str(tmp_path / "evals" / "dbt" / "logs")


def test_dbts_failures_are_quoted_from_its_summary():
    out = [
        "Running with dbt=1.11",
        "1 of 3 START sql table model main.mart_eval_spend ..... [RUN]",
        "1 of 3 ERROR creating sql table model main.mart_eval_spend ..... [ERROR in 0.01s]",
        "Finished running 1 table model",
        "Completed with 1 error, 0 partial successes, and 0 warnings:",
        "",
        "Runtime Error in model mart_eval_spend (models/eval/marts/mart_eval_spend.sql)",
        "  Binder Error: column x not found",
        "Done. PASS=2 WARN=0 ERROR=1 SKIP=0 NO-OP=0 TOTAL=3",
    ]
    assert problems_of(out) == [
        "Completed with 1 error, 0 partial successes, and 0 warnings:",
        "Runtime Error in model mart_eval_spend (models/eval/marts/mart_eval_spend.sql)",
        "  Binder Error: column x not found",
    ]
    assert problems_of(["a", "b"], "Traceback\nboom") == ["a", "b", "Traceback", "boom"]
