"""The executor a run's steps use, and the deployment's instance config as the CLI treats it."""

from __future__ import annotations

import io
import string
from pathlib import Path

import dagster as dg
import pytest
from rich.console import Console

from orchestration import cli, console, instance
from orchestration.executors import EXECUTOR_VARIABLE, executor_from_env, executor_refusal

DEPLOY_CONFIG = Path(__file__).resolve().parents[2] / "deploy" / "dagster.yaml"


def _deployment_home(tmp_path: Path) -> Path:
    """A home whose instance config is deploy/dagster.yaml, filled in as deploy/local.sh does."""
    home = tmp_path / "home"
    (home / "dagster").mkdir(parents=True)
    values = {
        "PG_USER": "envfoundry",
        "PG_DB": "envfoundry",
        "PG_PORT": "5999",
        "IMAGE": "envfoundry/code-location:0123456789abcdef",
        "DEPLOY_HOME": str(home),
        "EXECUTOR": "in_process",
        "DOCKER_SOCKET": "/var/run/docker.sock",
        "MAX_RUNS": "2",
        "UID_LEASES": "/run/envfoundry-sandbox-uids-0",
    }
    text = string.Template(DEPLOY_CONFIG.read_text()).substitute(values)
    (home / "dagster" / "dagster.yaml").write_text(text)
    return home


def test_in_process_by_default_and_docker_when_asked(monkeypatch):
    monkeypatch.delenv(EXECUTOR_VARIABLE, raising=False)
    assert executor_from_env() is dg.in_process_executor
    monkeypatch.setenv(EXECUTOR_VARIABLE, "docker")
    assert executor_from_env().name == "docker"
    monkeypatch.setenv(EXECUTOR_VARIABLE, "k8s")
    with pytest.raises(ValueError, match="choose one of in_process, docker"):
        executor_from_env()


def test_the_docker_executor_needs_a_docker_run_launcher(tmp_path, monkeypatch):
    monkeypatch.setenv(EXECUTOR_VARIABLE, "docker")
    plain = tmp_path / "plain"
    instance.prepare(plain)  # the instance a plain build makes: the forking launcher
    refusal = executor_refusal(plain / "dagster")
    assert refusal is not None and "DockerRunLauncher" in refusal
    assert executor_refusal(_deployment_home(tmp_path) / "dagster") is None
    monkeypatch.setenv(EXECUTOR_VARIABLE, "in_process")
    assert executor_refusal(plain / "dagster") is None


def test_a_build_asking_for_the_docker_executor_elsewhere_is_refused(tmp_path, monkeypatch):
    screen = io.StringIO()
    monkeypatch.setattr(console, "terminal", Console(file=screen, width=400))
    monkeypatch.setenv(EXECUTOR_VARIABLE, "docker")
    home = tmp_path / "home"
    assert cli.main(["build", "--profile", "tiny", "--home", str(home)]) == 2
    out = screen.getvalue()
    assert len(out.strip().splitlines()) == 1
    assert "ENVFOUNDRY_EXECUTOR=docker needs an instance whose run launcher is" in out
    assert not (home / "artifacts").exists()


def test_the_deployments_instance_config_is_kept_as_it_is(tmp_path):
    """envfoundry writes an instance config only where it wrote the last one: the
    deployment's Postgres + DockerRunLauncher config survives every build's `prepare`, and
    the newest run is asked of the instance API, not read from a SQLite file."""
    home = _deployment_home(tmp_path)
    config = home / "dagster" / "dagster.yaml"
    before = config.read_text()
    assert instance.prepare(home) == home / "dagster"
    assert config.read_text() == before
    with pytest.raises(instance.RunsUnknown):
        instance.latest_run_id(home / "dagster")
