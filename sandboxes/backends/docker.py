"""The docker backend: the worker in a locked-down container, spoken to through `docker run -i`.

The container has no network, a read-only root, no /sys, no_new_privs, a pids cgroup (in
place of RLIMIT_NPROC: a container's uid is shared with the whole host), memory and CPU caps;
/tmp is a small tmpfs and an episode's own workspace another one. As under bwrap as root, the
sandbox's init (docker-init) is root holding only the three capabilities `setpriv` needs, and
`setpriv` starts the worker as the leased unprivileged uid with every capability dropped: the
environment's code can then neither signal, trace nor read its init, and the worker is an
ordinary process (not a pid-namespace init) that the kernel's signals kill.

The worker's code and orjson are baked into the sandbox image rather than bound from the host,
so the same image serves a step process that itself runs in a container and starts its
sandboxes as siblings through the Docker socket: nothing of an episode then depends on a path
being the same on the docker host. Only a module source's package and a caller's own
workspace are bound, and those paths must exist on the docker host. The image is tagged by
the hash of what goes into it (`sandbox_image`) and built from the local base image the first
time it is missing (deploy/provision-docker.sh builds both ahead of time).
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import uuid
from functools import cache
from pathlib import Path

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess, setpriv_argv, spawn
from sandboxes.errors import SandboxError
from sandboxes.layout import (
    HOST_WORKER_DIR,
    LIB_DIR,
    SANDBOX_ENV,
    WORKER_DIR,
    WORKSPACE,
    runtime_mounts,
)
from sandboxes.limits import MB

BASE_IMAGE = "local/python:3.11"
IMAGE_REPOSITORY = "envfoundry/sandbox"
# Marks every sandbox container, so stale ones (a parent killed outright) can be found.
LABEL = "envfoundry.sandbox"
# The uid an image started without --user runs as; launches always name a leased uid.
IMAGE_UID = 65532
# What the container's root keeps, for setpriv to switch to the worker's uid and clear its
# bounding set (the worker then holds none).
_SETPRIV_CAPS = ("SETUID", "SETGID", "SETPCAP")
# How long a closed session's worker gets to exit at the end of its input before it is killed.
_STOP_TIMEOUT_S = 5.0
# Runs beside the parent to stop containers it leaves behind (see `_Guard`), not
# imported: part of the code version of every stage that runs a sandbox.
DOCKER_GUARD = Path(__file__).with_name("docker_guard.py")
VERSIONED_FILES = ("docker_guard.py",)
_DOCKERFILE = f"""\
FROM {{base}}
RUN useradd --system --uid {IMAGE_UID} --user-group --no-create-home \\
        --home-dir /nonexistent --shell /usr/sbin/nologin sandbox
COPY inside {WORKER_DIR}
COPY lib {LIB_DIR}
RUN python3 -m compileall -q {WORKER_DIR} && chmod -R a+rX /sbx
LABEL {LABEL}.image="1"
USER {IMAGE_UID}:{IMAGE_UID}
"""


def docker_cli() -> str | None:
    return shutil.which("docker")


class _Guard:
    """This process's guard (sandboxes/backends/docker_guard.py), started once the backend is
    found usable: it kills the containers still running when this process dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._fd: int | None = None
        self._process: subprocess.Popen | None = None
        os.register_at_fork(after_in_child=self._forget)

    def _forget(self) -> None:
        # A forked child must not keep the parent's guard waiting: it starts its own.
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
        self._fd = None
        self._process = None
        self._lock = threading.Lock()

    def start(self) -> None:
        with self._lock:
            self._start()

    def tell(self, line: str) -> None:
        with self._lock:
            self._start()
            os.write(self._fd, f"{line}\n".encode())

    def _start(self) -> None:
        if self._fd is None:
            read_fd, self._fd = os.pipe()
            try:
                self._process = subprocess.Popen(
                    [
                        sys.executable,
                        "-S",
                        str(DOCKER_GUARD),
                        docker_cli() or "docker",
                    ],
                    stdin=read_fd,
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL,
                    close_fds=True,
                    # Not in our process group: a signal to the group must not take it.
                    start_new_session=True,
                )
            finally:
                os.close(read_fd)


_guard = _Guard()


@cache
def _image_inputs() -> tuple[tuple[str, Path], ...]:
    """(path in the build context, host file) of everything copied into the image."""
    files = [
        (f"inside/{path.relative_to(HOST_WORKER_DIR)}", path)
        for path in sorted(HOST_WORKER_DIR.rglob("*"))
        if path.is_file() and "__pycache__" not in path.parts
    ]
    spec = importlib.util.find_spec("orjson")
    if spec is not None and spec.submodule_search_locations:
        root = Path(os.path.realpath(spec.submodule_search_locations[0]))
        files += [
            (f"lib/orjson/{path.relative_to(root)}", path)
            for path in sorted(root.rglob("*"))
            if path.is_file() and "__pycache__" not in path.parts
        ]
    return tuple(files)


def sandbox_image(base: str | None = None) -> str:
    """The sandbox image's tag: the hash of its Dockerfile, the id of its base image and every
    file copied into it. The base's id is in it because the base is rebuilt under the same name
    when what it must hold changes (deploy/provision-docker.sh): an image built FROM the old
    one would otherwise keep its tag and lack the new commands.

    Hashed here with hashlib: sandboxes/ imports nothing of ours above it (synthesis.hashing).
    """
    base = base or os.environ.get("ENVFOUNDRY_SANDBOX_BASE_IMAGE", BASE_IMAGE)
    digest = hashlib.sha256(_DOCKERFILE.format(base=base).encode())
    digest.update(b"\0base\0" + (image_id(base) or "").encode())
    for name, path in _image_inputs():
        digest.update(b"\0" + name.encode() + b"\0")
        digest.update(path.read_bytes())
    return f"{IMAGE_REPOSITORY}:{digest.hexdigest()[:16]}"


def image_id(image: str) -> str | None:
    """The engine's id of a local image, or None when it (or the engine) is missing."""
    docker = docker_cli()
    if docker is None:
        return None
    try:
        done = subprocess.run(
            [docker, "image", "inspect", "--format", "{{.Id}}", image],
            capture_output=True,
            text=True,
            timeout=30,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return (done.stdout.strip() or None) if done.returncode == 0 else None


def image_exists(image: str) -> bool:
    return image_id(image) is not None


def build_sandbox_image(base: str | None = None) -> str:
    """Build the sandbox image from the local base image unless it exists; returns its tag.

    The build context is streamed to the engine, so this works from inside a container that
    reaches the engine through its socket. Nothing is downloaded.
    """
    base = base or os.environ.get("ENVFOUNDRY_SANDBOX_BASE_IMAGE", BASE_IMAGE)
    tag = sandbox_image(base)
    if image_exists(tag):
        return tag
    docker = docker_cli()
    if docker is None:
        raise SandboxError("cannot build the sandbox image: the docker CLI is not installed")
    if not image_exists(base):
        raise SandboxError(
            f"cannot build the sandbox image: its base image {base} is missing "
            "(deploy/provision-docker.sh builds it, as root)"
        )
    with tempfile.TemporaryDirectory(prefix="envfoundry-sandbox-image-") as context:
        root = Path(context)
        (root / "Dockerfile").write_text(_DOCKERFILE.format(base=base))
        (root / "lib").mkdir()
        for name, path in _image_inputs():
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, target)
        # The classic builder needs no buildx plugin and works with old engines alike.
        done = subprocess.run(
            [docker, "build", "--quiet", "--tag", tag, str(root)],
            capture_output=True,
            text=True,
            timeout=600,
            env={**os.environ, "DOCKER_BUILDKIT": "0"},
        )
    if done.returncode != 0:
        raise SandboxError(f"building the sandbox image {tag} failed: {done.stderr.strip()[-500:]}")
    return tag


class DockerBackend(Backend):
    name = "docker"
    needs_uid = True
    # An episode's own workspace is a tmpfs of its container, not a host directory.
    private_workspace = True

    def __init__(self, image: str | None = None) -> None:
        self._image = image or os.environ.get("ENVFOUNDRY_SANDBOX_IMAGE")
        self._probed = False
        self._reason: str | None = None
        self._lock = threading.Lock()

    @property
    def image(self) -> str:
        return self._image or sandbox_image()

    def unavailable_reason(self) -> str | None:
        with self._lock:
            if not self._probed:
                self._reason = self._probe()
                self._probed = True
            return self._reason

    def _probe(self) -> str | None:
        docker = docker_cli()
        if docker is None:
            return "no Docker engine: the docker CLI is not installed"
        try:
            done = subprocess.run(
                [docker, "version", "--format", "{{.Server.Version}}"],
                capture_output=True,
                text=True,
                timeout=15,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"no Docker engine reachable: {exc}"
        if done.returncode != 0:
            return f"no Docker engine reachable: {done.stderr.strip()[:300]}"
        try:
            if self._image is None:
                self._image = build_sandbox_image()
            elif not image_exists(self._image):
                return f"the sandbox image {self._image} (ENVFOUNDRY_SANDBOX_IMAGE) is missing"
        except (SandboxError, OSError, subprocess.TimeoutExpired) as exc:
            return f"no sandbox image: {exc}"
        # Now rather than at the first launch: the guard's pipe is a descriptor this process
        # then holds for good, not one a first session seems to leak.
        _guard.start()
        return None

    def nproc_limit(self, spec: LaunchSpec) -> int | None:
        return None

    def workspace_inside(self, spec: LaunchSpec) -> str | None:
        return WORKSPACE if spec.workspace is not None or spec.private_workspace else None

    def argv(self, spec: LaunchSpec, name: str) -> list[str]:
        limits = spec.limits
        uid = spec.uid if spec.uid is not None else IMAGE_UID
        argv = [
            docker_cli() or "docker",
            "run",
            "--rm",
            "-i",
            "--name",
            name,
            "--label",
            f"{LABEL}=1",
            "--init",
            "--hostname",
            "sandbox",
            "--network",
            "none",
            "--cap-drop",
            "ALL",
            *(arg for cap in _SETPRIV_CAPS for arg in ("--cap-add", cap)),
            "--security-opt",
            "no-new-privileges",
            "--ipc",
            "none",
            "--read-only",
            "--user",
            "0:0",
            "--pids-limit",
            str(limits.processes),
            "--memory",
            f"{limits.address_space_mb}m",
            "--memory-swap",
            f"{limits.address_space_mb}m",
            "--cpus",
            "1",
            "--ulimit",
            f"nofile={limits.open_files}:{limits.open_files}",
            "--ulimit",
            "core=0",
            "--ulimit",
            f"fsize={limits.file_size_mb * MB}",
            "--tmpfs",
            f"/tmp:rw,nosuid,nodev,size={limits.tmp_size_mb}m,mode=1777",
            # Docker's /sys shows kernel details (notes, addresses) bwrap never binds.
            "--tmpfs",
            "/sys:ro,nosuid,nodev,noexec,size=4k",
        ]
        baked = set(runtime_mounts()[0])
        for mount in spec.mounts:
            # The worker and orjson are in the image (see the module docstring).
            if mount in baked:
                continue
            argv += ["--volume", f"{mount.host}:{mount.inside}:ro"]
        if spec.workspace is not None:
            argv += ["--volume", f"{spec.workspace}:{WORKSPACE}:rw"]
        elif spec.private_workspace:
            # Bounded by the memory cgroup too: tmpfs pages are charged to the container.
            argv += [
                "--tmpfs",
                f"{WORKSPACE}:rw,nosuid,nodev,size={limits.address_space_mb}m,"
                f"uid={uid},gid={uid},mode=0700",
            ]
        # The worker moves into the workspace itself; it starts in /tmp as under bwrap.
        argv += ["--workdir", "/tmp"]
        # `env -i`: the image's own ENV (a PYTHONPATH, say) must not reach the worker either.
        environment = [f"{key}={value}" for key, value in SANDBOX_ENV.items()]
        return argv + [
            self.image,
            "env",
            "-i",
            *environment,
            *setpriv_argv("setpriv", uid),  # the image's own, inside the container
            *self.worker_argv("python3", spec.sys_path),
        ]

    def launch(self, spec: LaunchSpec) -> WorkerProcess:
        if spec.control_fd is not None:
            raise SandboxError("the docker backend cannot host a zygote")
        name = f"envfoundry-sandbox-{uuid.uuid4().hex[:12]}"
        docker = docker_cli() or "docker"

        def kill(popen: subprocess.Popen) -> None:
            # Killing the CLI client would leave the container running: kill the client, then
            # the container (for SIGKILL the engine answers once it has stopped). The client
            # goes first: it may be stuck writing what the container said to a pipe nobody
            # reads any more, and the engine would wait for that output before it stops.
            popen.kill()
            try:
                subprocess.run([docker, "kill", name], capture_output=True, timeout=30)
            except (OSError, subprocess.TimeoutExpired):
                # An engine that does not answer: with its client gone the container's input
                # is closed, so it ends when its tool call does (or at its CPU limit).
                pass

        def stop(popen: subprocess.Popen) -> bool:
            # A worker at rest exits at the end of its input, and its container with it:
            # cheaper than a `docker kill` per episode.
            try:
                popen.stdin.close()
                popen.wait(_STOP_TIMEOUT_S)
            except (OSError, subprocess.TimeoutExpired):
                return False
            return True

        # The CLI needs the caller's DOCKER_HOST & co.; the container gets only SANDBOX_ENV.
        _guard.tell(f"+{name}")
        process = spawn(
            self.argv(spec, name),
            env=dict(os.environ),
            new_session=True,
            kill=kill,
            stop=stop,
            cleanup=(lambda: _guard.tell(f"-{name}"),),
        )
        process.container = name
        return process
