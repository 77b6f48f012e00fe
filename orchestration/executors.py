"""Where a run's steps execute: in the run's own process (the default), or each step in a
container of its own (`ENVFOUNDRY_EXECUTOR=docker`, on a deployment's instance: deploy/)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the CLI's preflight reads `executor_refusal` before it needs Dagster
    import dagster as dg

EXECUTOR_VARIABLE = "ENVFOUNDRY_EXECUTOR"
EXECUTORS = ("in_process", "docker")


def executor_from_env() -> dg.ExecutorDefinition:
    """One process per run, not per step, unless asked: a step's process would re-import the
    code location (seconds) for work that often takes less, and a step container costs 4-6 s
    more. The docker executor takes its image, network, mounts and variables from the
    instance's DockerRunLauncher, so step containers are configured as run containers are."""
    import dagster as dg

    choice = os.environ.get(EXECUTOR_VARIABLE) or "in_process"
    if choice == "in_process":
        return dg.in_process_executor
    if choice == "docker":
        from dagster_docker import docker_executor

        return docker_executor
    raise ValueError(f"{EXECUTOR_VARIABLE}={choice!r}: choose one of {', '.join(EXECUTORS)}")


def executor_refusal(dagster_home: Path) -> str | None:
    """Why the executor asked for cannot run on the instance at `dagster_home` (None: it can):
    the docker executor needs a DockerRunLauncher, which names the image and the mounts."""
    choice = os.environ.get(EXECUTOR_VARIABLE) or "in_process"
    if choice not in EXECUTORS:
        return f"{EXECUTOR_VARIABLE}={choice!r}: choose one of {', '.join(EXECUTORS)}"
    if choice == "in_process":
        return None
    import yaml

    config = dagster_home / "dagster.yaml"
    try:
        launcher = (yaml.safe_load(config.read_text()) or {}).get("run_launcher") or {}
    except (OSError, yaml.YAMLError):
        launcher = {}
    if launcher.get("class") != "DockerRunLauncher":
        return (
            f"{EXECUTOR_VARIABLE}=docker needs an instance whose run launcher is "
            f"DockerRunLauncher (it names the image and the mounts), and {config} has none: "
            "deploy one with `make deploy-local`"
        )
    return None
