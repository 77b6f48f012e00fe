"""`make deploy-local` as the README documents it: a Postgres-backed instance whose runs
DockerRunLauncher starts in containers of the code-location image, read back from Postgres
(the instance API) and from the webserver (GraphQL)."""

from __future__ import annotations

import glob
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.build_support import REPO, query

pytestmark = pytest.mark.slow

BASE_IMAGE = "local/python:3.11"


def _missing() -> str | None:
    """Why this machine cannot hold a deployment (None: it can). CI provisions all of it."""
    if shutil.which("make") is None:
        return "no make"
    if shutil.which("docker") is None:
        return "no Docker engine reachable: the docker CLI is not installed"
    engine = subprocess.run(["docker", "version"], capture_output=True, text=True, timeout=30)
    if engine.returncode != 0:
        return f"no Docker engine reachable: {engine.stderr.strip()[:200]}"
    base = subprocess.run(["docker", "image", "inspect", BASE_IMAGE], capture_output=True)
    if base.returncode != 0:
        return f"the base image {BASE_IMAGE} is missing (deploy/provision-docker.sh builds it)"
    if not glob.glob("/usr/lib/postgresql/*/bin/initdb"):
        return "PostgreSQL is not installed (apt-get install postgresql)"
    return None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@dataclass
class Deployment:
    home: Path
    port: int
    settings: list[str]
    up: subprocess.CompletedProcess
    # The containers the engine started meanwhile, one JSON object of attributes a line (the
    # engine keeps only its last 256 events, fewer than a build makes, so they are streamed).
    started_containers: list[dict]


def _make(target: str, settings: list[str]) -> subprocess.CompletedProcess:
    # The test's own interpreter's venv, which `make test` has installed (-o: never again).
    venv = sys.prefix
    environment = {**os.environ, "DO_NOT_TRACK": "1"}
    environment.pop("DAGSTER_HOME", None)
    return subprocess.run(
        ["make", "-o", f"{venv}/.installed-stamp", target, f"VENV={venv}", *settings],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=1800,
    )


@pytest.fixture(scope="module")
def deployment(tmp_path_factory):
    reason = _missing()
    if reason is not None:
        pytest.skip(reason)
    home = tmp_path_factory.mktemp("deploy") / "home"
    port = _free_port()
    # The seed of the suite's own tiny build (conftest.tiny_home), to compare the datasets.
    settings = [f"DEPLOY_HOME={home}", f"DEPLOY_PORT={port}", "DEPLOY_SEED=7"]
    events = subprocess.Popen(
        [
            "docker",
            "events",
            "--filter",
            "type=container",
            "--filter",
            "event=start",
            "--format",
            "{{json .Actor.Attributes}}",
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        up = _make("deploy-local", settings)
        events.terminate()
        started = [json.loads(line) for line in events.communicate(timeout=60)[0].splitlines()]
        yield Deployment(home, port, settings, up, started)
    finally:
        if events.poll() is None:
            events.kill()
        down = _make("deploy-down", settings)
        assert down.returncode == 0, down.stdout + down.stderr
        # A cluster kept outside the home (its parents were private to root) goes with it.
        shutil.rmtree(os.path.realpath(home / "postgres"), ignore_errors=True)


@pytest.fixture(scope="module")
def instance(deployment):
    import dagster as dg

    up = deployment.up
    assert up.returncode == 0, (
        f"make deploy-local failed:\n{up.stdout[-3000:]}\n{up.stderr[-3000:]}"
    )
    with dg.DagsterInstance.from_config(str(deployment.home / "dagster")) as opened:
        yield opened


def _container_starts(deployment: Deployment) -> Counter:
    """Containers the engine started while the deployment was built, by kind."""
    kinds = Counter()
    for attributes in deployment.started_containers:
        if attributes.get("envfoundry.deployment") == str(deployment.home):
            kinds["run"] += 1
        elif attributes.get("envfoundry.sandbox") == "1":
            kinds["sandbox"] += 1
    return kinds


def test_the_tiny_build_succeeds_and_publishes(deployment, instance):
    assert "Build finished ok" in deployment.up.stdout
    (published,) = query(
        deployment.home, "SELECT count(*) FROM scenarios WHERE status = 'published'"
    )[0]
    assert published > 0


def test_the_dataset_is_the_one_a_build_on_one_machine_makes(deployment, instance, tiny_home):
    """Runs in containers, sandboxes in sibling containers, the same bytes: every file of the
    shards' manifest equals the suite's own tiny build's (same profile and seed)."""

    def files(home: Path) -> dict[str, str]:
        manifest = json.loads((home / "shards" / "manifest.json").read_text())
        return {entry["path"]: entry["sha256"] for entry in manifest["files"]}

    local, _ = tiny_home
    assert files(deployment.home) == files(local)


def test_the_instance_is_postgres_with_the_docker_run_launcher(instance):
    from dagster_docker import DockerRunLauncher
    from dagster_postgres import PostgresEventLogStorage, PostgresRunStorage

    assert isinstance(instance.run_storage, PostgresRunStorage)
    assert isinstance(instance.event_log_storage, PostgresEventLogStorage)
    assert isinstance(instance.run_launcher, DockerRunLauncher)
    assert instance.run_launcher.image.startswith("envfoundry/code-location:")


def test_every_run_succeeded_in_a_container_of_the_image(instance):
    runs = instance.get_runs()
    assert Counter(run.job_name for run in runs) == {
        "catalogue_job": 1,
        "environment_job": 4,
        "publish_job": 1,
    }
    for run in runs:
        assert run.status.value == "SUCCESS", run.run_id
        # DockerRunLauncher tags the run with the container it started and its image.
        assert run.tags.get("docker/container_id"), run.run_id
        assert run.tags.get("dagster/image") == instance.run_launcher.image


def test_materializations_are_read_back_from_postgres(instance):
    import dagster as dg

    from assets._partitions import environment_partitions

    runs = {run.run_id: run for run in instance.get_runs()}
    environments = set(instance.get_dynamic_partitions(environment_partitions.name))
    assert len(environments) == 4
    for stage in ("environments", "checks", "trajectories"):
        assert instance.get_materialized_partitions(dg.AssetKey(stage)) == environments, stage
    shards = instance.get_latest_materialization_event(dg.AssetKey("training_shards"))
    assert shards is not None and runs[shards.run_id].job_name == "publish_job"


def test_the_webserver_serves_the_same_runs(deployment, instance):
    body = json.dumps(
        {"query": "{ runsOrError { ... on Runs { results { runId status jobName } } } }"}
    ).encode()
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.port}/graphql",
        data=body,
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        results = json.load(response)["data"]["runsOrError"]["results"]
    assert {r["runId"] for r in results} == {run.run_id for run in instance.get_runs()}
    assert {r["status"] for r in results} == {"SUCCESS"}


def test_environment_code_ran_in_sibling_sandbox_containers(deployment, instance):
    """The runs' step processes started each sandbox as a container of its own on the same
    engine (ENVFOUNDRY_SANDBOX=docker in every run container), never in their own process."""
    starts = _container_starts(deployment)
    assert starts["run"] == 6
    assert starts["sandbox"] > 0


def test_the_docker_executor_runs_each_step_in_a_container(deployment, instance):
    """DEPLOY_EXECUTOR=docker: the same deployment again (nothing to build: the webserver and
    daemon start again on the changed instance config), then a run of one catalogue asset
    launched from the UI's API: the daemon dequeues it, the launcher starts its run container,
    and that starts a step container (one step: each costs seconds)."""
    import dagster as dg
    from dagster import DagsterEventType

    again = _make("deploy-local", [*deployment.settings, "DEPLOY_EXECUTOR=docker"])
    assert again.returncode == 0, again.stdout[-3000:] + again.stderr[-3000:]
    assert "Nothing changed" in again.stdout
    mutation = """
    mutation($params: ExecutionParams!) {
      launchRun(executionParams: $params) {
        __typename
        ... on LaunchRunSuccess { run { runId } }
        ... on PythonError { message }
      }
    }"""
    params = {
        "selector": {
            "repositoryLocationName": "envfoundry",
            "repositoryName": "__repository__",
            "jobName": "catalogue_job",
            "assetSelection": [{"path": ["mined_topics"]}],
        },
        "runConfigData": {},
    }
    request = urllib.request.Request(
        f"http://127.0.0.1:{deployment.port}/graphql",
        data=json.dumps({"query": mutation, "variables": {"params": params}}).encode(),
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=120) as response:
        launched = json.load(response)["data"]["launchRun"]
    assert launched["__typename"] == "LaunchRunSuccess", launched
    run_id = launched["run"]["runId"]
    deadline = time.monotonic() + 900
    while True:
        run = instance.get_run_by_id(run_id)
        if run is not None and run.is_finished:
            break
        assert time.monotonic() < deadline, f"run {run_id} still {run and run.status}"
        time.sleep(1)
    assert run.status == dg.DagsterRunStatus.SUCCESS
    done = {r.step_key for r in instance.all_logs(run_id, of_type=DagsterEventType.STEP_SUCCESS)}
    in_containers = {
        r.step_key
        for r in instance.all_logs(run_id, of_type=DagsterEventType.STEP_WORKER_STARTING)
        if "Docker container" in (r.message or "")
    }
    assert done == {"mined_topics"}
    assert in_containers == done
