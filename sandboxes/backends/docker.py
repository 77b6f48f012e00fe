"""The docker backend: the worker in a locked-down container, spoken to through `docker run -i`.

For hosts with a Docker engine and no bubblewrap. The image needs only a Python 3 and `env`;
orjson is bound from the host and the worker falls back to the stdlib json codec if the
image's Python cannot load it. A pids cgroup replaces RLIMIT_NPROC, since a container uid is
shared with the whole host.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import uuid

from sandboxes.backends.base import Backend, LaunchSpec, WorkerProcess, spawn
from sandboxes.layout import SANDBOX_ENV, WORKSPACE
from sandboxes.limits import MB

DEFAULT_IMAGE = "python:3.11-slim"


class DockerBackend(Backend):
    name = "docker"
    needs_uid = True

    def __init__(self, image: str | None = None) -> None:
        self.image = image or os.environ.get("ENVFOUNDRY_SANDBOX_IMAGE", DEFAULT_IMAGE)
        self._probed = False
        self._reason: str | None = None

    def unavailable_reason(self) -> str | None:
        if not self._probed:
            self._reason = self._probe()
            self._probed = True
        return self._reason

    def _probe(self) -> str | None:
        docker = shutil.which("docker")
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
        return None

    def nproc_limit(self, spec: LaunchSpec) -> int | None:
        return None

    def argv(self, spec: LaunchSpec, name: str) -> list[str]:
        limits = spec.limits
        uid = spec.uid if spec.uid is not None else 65534
        argv = [
            shutil.which("docker") or "docker",
            "run",
            "--rm",
            "-i",
            "--name",
            name,
            "--network",
            "none",
            "--cap-drop",
            "ALL",
            "--security-opt",
            "no-new-privileges",
            "--ipc",
            "none",
            "--read-only",
            "--user",
            f"{uid}:{uid}",
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
        ]
        for mount in spec.mounts:
            argv += ["--volume", f"{mount.host}:{mount.inside}:ro"]
        if spec.workspace is not None:
            argv += ["--volume", f"{spec.workspace}:{WORKSPACE}:rw", "--workdir", WORKSPACE]
        else:
            argv += ["--workdir", "/tmp"]
        # `env -i`: the image's own ENV (a PYTHONPATH, say) must not reach the worker either.
        environment = [f"{key}={value}" for key, value in SANDBOX_ENV.items()]
        return argv + [
            self.image,
            "env",
            "-i",
            *environment,
            *self.worker_argv("python3", spec.sys_path),
        ]

    def launch(self, spec: LaunchSpec) -> WorkerProcess:
        name = f"envfoundry-sandbox-{uuid.uuid4().hex[:12]}"
        docker = shutil.which("docker") or "docker"

        def kill(popen: subprocess.Popen) -> None:
            # Killing the CLI client would leave the container running: kill the container.
            subprocess.run([docker, "kill", name], capture_output=True, timeout=30)
            popen.kill()

        return spawn(self.argv(spec, name), env=dict(os.environ), new_session=True, kill=kill)
