"""The code location loads, and its asset graph is the one the design describes."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import dagster as dg
import pytest

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


def test_asset_groups_cover_every_stage(defs):
    graph = defs.resolve_asset_graph()
    groups = {
        graph.get(key).group_name
        for key in graph.get_all_asset_keys()
        if graph.get(key).is_materializable
    }
    assert groups >= {
        "topics",
        "env_specs",
        "environments",
        "env_audit",
        "scenarios",
        "checks",
        "trajectories",
        "training_shards",
        "warehouse",
        "dbt_models",
        "reports",
    }


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
