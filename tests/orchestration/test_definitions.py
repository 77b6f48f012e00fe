"""The code location loads, and its asset graph is the one the design describes."""

from __future__ import annotations

import inspect
import json
import re
import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

from assets import warehouse
from quality import report as report_module

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def defs(tmp_path_factory, monkeypatch_module):
    home = tmp_path_factory.mktemp("home")
    monkeypatch_module.setenv("ENVFOUNDRY_HOME", str(home))
    from orchestration.definitions import build_definitions

    return build_definitions()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_groups_are_the_stage_families(defs):
    graph = defs.resolve_asset_graph()
    groups: dict[str, set[str]] = {}
    for key in graph.get_all_asset_keys():
        node = graph.get(key)
        if node.is_materializable:
            groups.setdefault(node.group_name, set()).add(key.to_user_string())
    assert set(groups) == {
        "catalogue",
        "environments",
        "tasks",
        "rollouts",
        "warehouse",
        "marts",
        "export",
        "evaluation",
    }
    # Not a stage of a build: a model scored on the published dataset, one partition each.
    assert groups["evaluation"] == {"evaluation"}
    assert groups["catalogue"] == {
        "mined_topics",
        "topics",
        "env_specs",
        "llm_env_specs",
        "llm_env_code",
        "env_sources",
    }
    assert groups["environments"] == {
        "environments",
        "initial_states",
        "env_models",
        "env_audit",
        "env_judgement",
    }
    assert groups["tasks"] == {"scenarios", "checks"}
    assert groups["export"] == {
        "task_screening",
        "training_shards",
        "quality_report",
        "published_dataset",
    }
    assert all(name.startswith("dbt/") for name in groups["marts"])


def _parents(graph, name: str) -> set[str]:
    key = dg.AssetKey.from_user_string(name)
    return {p.to_user_string() for p in graph.get(key).parent_keys}


def test_warehouse_tables_depend_on_the_stages_they_are_built_from(defs):
    graph = defs.resolve_asset_graph()
    assert _parents(graph, "warehouse/topics") == {"topics"}
    assert _parents(graph, "warehouse/initial_states") == {"initial_states"}
    # Screening across environments may quarantine a scenario the checks stage published.
    assert _parents(graph, "warehouse/scenarios") == {"checks", "task_screening"}
    assert "task_screening" in _parents(graph, "training_shards")
    assert _parents(graph, "warehouse/tools") == {"environments", "env_models"}
    assert _parents(graph, "warehouse/quality_gates") == {
        f"warehouse/{t}" for t in warehouse.GATED_TABLES
    }
    # The ledger is read from the spool every stage that asks a model appends to.
    assert _parents(graph, "warehouse/llm_calls") == set(warehouse.LEDGER_STAGES)
    asking = {
        key.to_user_string()
        for assets_def in defs.assets or []
        if isinstance(assets_def, dg.AssetsDefinition)
        and "llm_run(" in inspect.getsource(assets_def.op.compute_fn.decorated_fn)
        for key in assets_def.keys
    }
    assert asking == set(warehouse.LEDGER_STAGES)
    # A UI run (no build tag) finds unpartitioned stages' spool files apart from the others.
    partitioned = {
        key.to_user_string() for key in graph.get_all_asset_keys() if graph.get(key).is_partitioned
    }
    assert set(warehouse.ENVIRONMENT_LEDGER_STAGES) <= partitioned
    assert not set(warehouse.CATALOGUE_LEDGER_STAGES) & partitioned
    # No table hangs off every stage any more: the lineage is a flow, not a tangle. (The
    # ledger hangs off every LLM stage by design, one spool: its edges count once.)
    stage_edges = sum(
        1 if t == "llm_calls" else len(_parents(graph, f"warehouse/{t}"))
        for t in warehouse.TABLE_SOURCES
    )
    assert stage_edges <= 2 * len(warehouse.TABLE_SOURCES)


def test_the_report_depends_on_every_mart_it_reads(defs):
    graph = defs.resolve_asset_graph()
    source = inspect.getsource(report_module)
    read = {f"dbt/{name}" for name in re.findall(r"FROM (mart_\w+)", source)}
    assert read and read <= _parents(graph, "quality_report")
    assert "warehouse/quality_gates" in _parents(graph, "quality_report")


def test_per_environment_stages_are_dynamically_partitioned(defs):
    graph = defs.resolve_asset_graph()
    for name in [
        "environments",
        "initial_states",
        "env_audit",
        "scenarios",
        "checks",
        "trajectories",
    ]:
        partitions = graph.get(dg.AssetKey(name)).partitions_def
        assert isinstance(partitions, dg.DynamicPartitionsDefinition), name
        assert partitions.name == "environments"
    assert graph.get(dg.AssetKey("topics")).partitions_def is None


def test_lineage_runs_from_topics_to_marts(defs):
    graph = defs.resolve_asset_graph()
    upstream = graph.get(dg.AssetKey(["dbt", "mart_funnel"])).parent_keys
    assert upstream, "mart_funnel has no parents"
    ancestors = set()
    frontier = {dg.AssetKey(["dbt", "mart_funnel"])}
    while frontier:
        key = frontier.pop()
        for parent in graph.get(key).parent_keys:
            if parent not in ancestors:
                ancestors.add(parent)
                frontier.add(parent)
    assert dg.AssetKey("topics") in ancestors
    assert dg.AssetKey("trajectories") in ancestors


def test_warehouse_tables_have_blocking_great_expectations_checks(defs):
    graph = defs.resolve_asset_graph()
    checks = {k for k in graph.asset_check_keys}
    for table in ["environments", "scenarios", "checks", "check_selftests", "trajectories"]:
        key = dg.AssetCheckKey(dg.AssetKey(["warehouse", table]), "great_expectations")
        assert key in checks
        assert graph.get_check_spec(key).blocking


def test_every_dbt_test_is_an_asset_check(defs):
    # A singular test that reads several models is an asset check only when its meta names
    # the model it checks; otherwise dagster-dbt logs an observation and a warning per build.
    from assets.dbt import ensure_manifest

    manifest = json.loads(ensure_manifest().read_text())
    tests = {n["name"] for n in manifest["nodes"].values() if n["resource_type"] == "test"}
    dbt_checks = {
        k.name for k in defs.resolve_asset_graph().asset_check_keys if k.asset_key.path[0] == "dbt"
    }
    assert {"assert_published_scenarios_are_proven"} <= tests
    assert tests == dbt_checks


@pytest.mark.slow
def test_dagster_definitions_validate_passes(tmp_path):
    dagster = Path(sys.executable).with_name("dagster")
    proc = subprocess.run(
        [str(dagster), "definitions", "validate", "-w", "workspace.yaml"],
        cwd=REPO,
        env={
            "PATH": str(dagster.parent) + ":/usr/bin:/bin",
            "ENVFOUNDRY_HOME": str(tmp_path),
            "DAGSTER_HOME": str(tmp_path),
            "DO_NOT_TRACK": "1",
            "HOME": str(tmp_path),
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
