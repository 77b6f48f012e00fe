"""Sandbox backends by name, and which of them this host can run."""

from __future__ import annotations

import functools
import os
import socket
import threading

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess
from sandboxes.errors import SandboxError

BACKEND_NAMES = ("bwrap", "process", "docker")
_instances: dict[str, Backend] = {}
_lock = threading.Lock()


def get_backend(name: str = "auto") -> Backend:
    """The backend called `name` ("auto": bwrap when usable, else process); raises if unusable."""
    if name == "auto":
        name = default_backend()
    if name not in BACKEND_NAMES:
        raise SandboxError(f"unknown sandbox backend {name!r}; choose one of {BACKEND_NAMES}")
    backend = _instance(name)
    reason = backend.unavailable_reason()
    if reason is not None:
        raise SandboxError(f"sandbox backend {name!r} is not available here: {reason}")
    return backend


def default_backend() -> str:
    """bwrap when usable, else process; in a container that reaches a Docker engine (a step
    process of a deployment), always docker: see `generated_code_refusal`."""
    if in_docker_deployment():
        return "docker"
    return "bwrap" if _instance("bwrap").unavailable_reason() is None else "process"


def in_container() -> bool:
    """Whether this process runs in a container (docker's marker file, or a container cgroup)."""
    if os.path.exists("/.dockerenv") or os.path.exists("/run/.containerenv"):
        return True
    try:
        with open("/proc/1/cgroup") as cgroup:
            text = cgroup.read()
    except OSError:
        return False
    return any(word in text for word in ("docker", "containerd", "kubepods", "libpod"))


def docker_socket() -> str | None:
    """The Docker engine this process can reach through a socket, if any (DOCKER_HOST first).

    A socket file nobody listens on (left behind by an engine that stopped) reaches nothing:
    taking it for an engine would send every sandbox to a backend that cannot start one."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return host  # a TCP engine: reachable the same way, and as powerful
    path = host.removeprefix("unix://") or "/var/run/docker.sock"
    return path if _listening(path) else None


def _listening(path: str) -> bool:
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    probe.settimeout(2.0)
    try:
        probe.connect(path)
    except OSError:  # missing, refused (no listener), not a socket, not ours to open
        return False
    finally:
        probe.close()
    return True


# Set to 1 by the images of launched runs (deploy/), 0 to opt out; unset, it is inferred.
STEP_CONTAINER_ENV = "ENVFOUNDRY_STEP_CONTAINER"


def in_docker_deployment() -> bool:
    """Whether this is a step process in a container that can start containers beside it: a
    launched run's. Said by STEP_CONTAINER_ENV, else inferred: a container, a Docker socket,
    and no dockerd of its own in sight (a machine that runs its own engine, a CI container
    say, starts sandboxes of its own and may use bwrap)."""
    said = os.environ.get(STEP_CONTAINER_ENV)
    if said in ("0", "1"):
        return said == "1"
    return _inferred_step_container()


@functools.cache
def _inferred_step_container() -> bool:
    return in_container() and docker_socket() is not None and not _dockerd_in_sight()


def _dockerd_in_sight() -> bool:
    for entry in os.scandir("/proc"):
        if entry.name.isdigit():
            try:
                with open(f"{entry.path}/comm") as comm:
                    if comm.read().strip() == "dockerd":
                        return True
            except OSError:
                continue
    return False


def generated_code_refusal(name: str) -> str | None:
    """Why code we did not compile may not run on backend `name` here, by the deployment rule.

    A step process in a container holding the Docker socket (root on the docker host, in
    effect) runs such code only in sibling docker sandboxes it starts through that socket,
    which get no socket and no privileges: never in its own container, so never under
    bwrap there (nested namespaces inside it) nor the process backend, even when named.
    """
    if name == "auto":
        name = default_backend()
    if name == "docker" or not in_docker_deployment():
        return None
    return (
        f"refused to run code we did not compile on the {name!r} backend inside a container "
        "that reaches the Docker engine: here it runs only in sibling docker sandbox "
        "containers (use the docker backend)"
    )


def available_backends() -> list[str]:
    return [name for name in BACKEND_NAMES if _instance(name).unavailable_reason() is None]


def unavailable_reason(name: str) -> str | None:
    return _instance(name).unavailable_reason()


def _instance(name: str) -> Backend:
    with _lock:
        if name not in _instances:
            if name == "bwrap":
                from sandboxes.backends.bwrap import BwrapBackend as cls
            elif name == "process":
                from sandboxes.backends.process import ProcessBackend as cls
            else:
                from sandboxes.backends.docker import DockerBackend as cls
            _instances[name] = cls()
        return _instances[name]


__all__ = [
    "Backend",
    "LaunchSpec",
    "WorkerProcess",
    "get_backend",
    "default_backend",
    "generated_code_refusal",
    "in_docker_deployment",
    "available_backends",
    "unavailable_reason",
    "BACKEND_NAMES",
]
