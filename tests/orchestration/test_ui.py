"""The Dagster UI on a CLI build's home, asked over GraphQL what a user would look at: the
build's runs under their jobs, the lineage, the self-test checks."""

from __future__ import annotations

import dagster as dg
import pytest

from orchestration.ui import graphql, served
from tests.build_support import query

pytestmark = pytest.mark.slow

REPOSITORY = "__repository__@envfoundry"  # what the UI filters a job's Runs tab by

RUNS = """
query($filter: RunsFilter) {
  runsOrError(filter: $filter) {
    ... on Runs { results { runId status tags { key value }
                            repositoryOrigin { repositoryLocationName } } }
  }
}"""

EDGES = "{ assetNodes { assetKey { path } dependencyKeys { path } groupName } }"

CHECKS = """
query($key: AssetKeyInput!) {
  assetNodeOrError(assetKey: $key) {
    ... on AssetNode {
      assetChecksOrError {
        ... on AssetChecks {
          checks {
            name
            blocking
            partitionStatuses {
              ... on AssetCheckDefaultPartitionStatuses { succeededPartitions failedPartitions }
            }
          }
        }
      }
    }
  }
}"""


@pytest.fixture(scope="module")
def ui(tiny_home, tmp_path_factory):
    home, _ = tiny_home
    log = tmp_path_factory.mktemp("ui") / "webserver.log"
    with served(home, log=log) as url:
        yield home, url


def _env_ids(home) -> list[str]:
    return [e for (e,) in query(home, "select env_id from environments order by 1")]


def test_the_cli_builds_runs_are_listed_under_their_jobs(ui):
    home, url = ui
    expected = {"catalogue_job": 1, "environment_job": len(_env_ids(home)), "publish_job": 1}
    for job, count in expected.items():
        # Exactly the filter of the job's Runs tab: name and repository.
        runs = graphql(
            url,
            RUNS,
            {
                "filter": {
                    "pipelineName": job,
                    "tags": [{"key": ".dagster/repository", "value": REPOSITORY}],
                }
            },
        )["runsOrError"]["results"]
        assert len(runs) == count, job
        assert {r["status"] for r in runs} == {"SUCCESS"}
        # The Overview timeline places a run by its code location.
        assert {r["repositoryOrigin"]["repositoryLocationName"] for r in runs} == {"envfoundry"}
        assert all({"key": "envfoundry/entrypoint", "value": "cli"} in r["tags"] for r in runs)
    partitions = {
        tag["value"]
        for run in graphql(url, RUNS, {"filter": {"pipelineName": "environment_job"}})[
            "runsOrError"
        ]["results"]
        for tag in run["tags"]
        if tag["key"] == "dagster/partition"
    }
    assert partitions == set(_env_ids(home))


def test_the_asset_graph_the_ui_draws_is_the_data_flow(ui, monkeypatch):
    home, url = ui
    drawn = {
        "/".join(node["assetKey"]["path"]): {"/".join(d["path"]) for d in node["dependencyKeys"]}
        for node in graphql(url, EDGES)["assetNodes"]
    }
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(home))
    from orchestration.definitions import build_definitions

    graph = build_definitions().resolve_asset_graph()
    for key in graph.get_all_asset_keys():
        parents = {p.to_user_string() for p in graph.get(key).parent_keys}
        assert drawn[key.to_user_string()] == parents, key.to_user_string()
    assert drawn["warehouse/scenarios"] == {"checks", "task_screening"}
    assert drawn["warehouse/topics"] == {"topics"}
    assert {"dbt/mart_funnel", "warehouse/quality_gates"} <= drawn["quality_report"]


def test_the_self_test_checks_are_present_and_passed_for_every_environment(ui):
    home, url = ui
    node = graphql(url, CHECKS, {"key": dg.AssetKey("checks").to_graphql_input()})
    checks = node["assetNodeOrError"]["assetChecksOrError"]["checks"]
    assert len(checks) >= 4, [c["name"] for c in checks]
    for check in checks:
        statuses = check["partitionStatuses"]
        assert sorted(statuses["succeededPartitions"]) == _env_ids(home), check["name"]
        assert statuses["failedPartitions"] == [], check["name"]
