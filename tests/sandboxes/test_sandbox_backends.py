"""Backend selection and how each backend builds its sandbox (docker without an engine too)."""

from __future__ import annotations

import json
import logging
import os
import shutil
import struct
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from sandbox_helpers import fake, processes_of

import sandboxes.backends.process as process_backend
from sandboxes import Limits, available_backends, default_backend, open_session
from sandboxes.backends import (
    STEP_CONTAINER_ENV,
    generated_code_refusal,
    get_backend,
    unavailable_reason,
)
from sandboxes.backends.base import LaunchSpec
from sandboxes.backends.bwrap import BwrapBackend
from sandboxes.backends.docker import BASE_IMAGE, DockerBackend
from sandboxes.backends.seccomp import filter_program
from sandboxes.layout import SANDBOX_ENV, Mount, runtime_mounts

COUNTER = fake("sandbox_envs.py", "Counter")


def spec(**overrides) -> LaunchSpec:
    mounts, path = runtime_mounts()
    values = dict(mounts=mounts, sys_path=path, limits=Limits(), workspace=None, uid=60123)
    values.update(overrides)
    return LaunchSpec(**values)


def test_default_is_bwrap_where_usable_and_process_always_exists():
    assert "process" in available_backends()
    expected = "bwrap" if unavailable_reason("bwrap") is None else "process"
    assert default_backend() == expected
    assert get_backend("auto").name == expected


def test_process_backend_warns_once_per_process(caplog, monkeypatch):
    monkeypatch.setattr(process_backend, "_warned", False)
    with caplog.at_level(logging.WARNING, logger="sandboxes.backends.process"):
        for _ in range(2):
            with open_session(COUNTER, {}, backend="process") as session:
                assert session.call("increment", {}).ok
    warnings = [r for r in caplog.records if "REDUCED ISOLATION" in r.getMessage()]
    assert len(warnings) == 1


def test_bwrap_as_root_switches_uid_with_setpriv_and_binds_read_only():
    backend = BwrapBackend()
    backend.as_root = True
    argv = backend.argv(spec(workspace="/tmp/ws"), seccomp_fd=9)
    joined = " ".join(argv)
    for flag in (
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--new-session",
        "--die-with-parent",
        "--clearenv",
        "--seccomp 9",
        "--cap-drop ALL",
        "--bind /tmp/ws /workspace",
    ):
        assert flag in joined
    assert "--unshare-user" not in argv
    setpriv = argv.index("--") + 1
    assert argv[setpriv].endswith("setpriv")
    assert "--reuid=60123" in argv and "--no-new-privs" in argv and "--bounding-set=-all" in argv
    # The small /tmp comes before any other mount, or it would hide them.
    assert argv.index("--tmpfs") < argv.index("--ro-bind", argv.index("--tmpfs"))
    writable = [argv[i + 1] for i, a in enumerate(argv) if a == "--bind"]
    assert writable == ["/tmp/ws"]
    assert "OPENAI_API_KEY" not in joined


def test_bwrap_unprivileged_uses_a_user_namespace_and_no_uid_switch():
    backend = BwrapBackend()
    backend.as_root = False
    argv = backend.argv(spec(uid=None), seccomp_fd=None)
    assert "--unshare-user" in argv and "--cap-drop" in argv
    assert not any(a.endswith("setpriv") for a in argv)


def test_docker_command_is_locked_down_without_needing_an_engine():
    argv = DockerBackend(image="python:3.11-slim").argv(
        spec(workspace="/tmp/ws", mounts=(Mount("/opt/lib", "/sbx/lib/x"),)), "box"
    )
    joined = " ".join(argv)
    for flag in (
        "--network none",
        "--cap-drop ALL",
        "--security-opt no-new-privileges",
        "--read-only",
        "--user 0:0",
        "--cap-add SETUID --cap-add SETGID --cap-add SETPCAP",
        "--pids-limit 64",
        "--memory 1024m",
        "--volume /opt/lib:/sbx/lib/x:ro",
        "--volume /tmp/ws:/workspace:rw",
        "--tmpfs /tmp:rw,nosuid,nodev,size=16m,mode=1777",
        "--ulimit core=0",
    ):
        assert flag in joined
    # The image's own environment is dropped: the worker sees exactly SANDBOX_ENV.
    command = argv[argv.index("python:3.11-slim") + 1 :]
    assert command[:2] == ["env", "-i"]
    assert command[2 : 2 + len(SANDBOX_ENV)] == [f"{k}={v}" for k, v in SANDBOX_ENV.items()]
    # The init keeps root with three capabilities; setpriv drops the worker to the leased uid.
    rest = command[2 + len(SANDBOX_ENV) :]
    assert rest[:7] == [
        "setpriv",
        "--reuid=60123",
        "--regid=60123",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "--no-new-privs",
    ]
    assert rest[7:12] == ["python3", "-P", "-s", "-S", "-B"]
    assert "--privileged" not in argv and not any("docker.sock" in a for a in argv)
    # The worker and orjson are baked into the image, not bound from the host.
    assert not any(a.endswith((":/sbx/inside:ro", ":/sbx/lib/orjson:ro")) for a in argv)


def test_without_an_engine_docker_is_unavailable_with_a_reason(monkeypatch, tmp_path):
    # An engine nobody answers: the docker CLI follows DOCKER_HOST to a socket that is not
    # there (a machine with no CLI at all gives a reason of the same kind).
    import sandboxes.backends

    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setattr(sandboxes.backends, "_instances", {})
    assert "docker" not in available_backends()
    assert unavailable_reason("docker").startswith("no Docker engine")


def test_seccomp_filter_is_well_formed_classic_bpf():
    for machine in ("x86_64", "aarch64"):
        program = filter_program(machine)
        assert len(program) % 8 == 0 and 0 < len(program) // 8 < 4096
        instructions = [
            struct.unpack("=HBBI", program[i : i + 8]) for i in range(0, len(program), 8)
        ]
        # Every jump stays inside the program and it ends by allowing the call.
        for index, (code, jt, jf, _) in enumerate(instructions):
            if code & 0x07 == 0x05:
                assert index + 1 + max(jt, jf) < len(instructions)
        assert instructions[-1] == (0x06, 0, 0, 0x7FFF0000)
    assert filter_program("sparc") is None


def test_worker_never_sees_the_parent_environment(backend, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-never-inside")
    code = "import os\nclass Env:\n  def env(self) -> dict:\n    return dict(os.environ)\n"
    from sandboxes import EnvSource

    with open_session(EnvSource(code=code), {}, backend=backend) as session:
        environment = session.call("env", {}).result
    assert "OPENAI_API_KEY" not in environment
    assert "sk-test-never-inside" not in str(environment)
    assert set(environment) <= {*SANDBOX_ENV, "PWD"}
    assert environment["PYTHONHASHSEED"] == "0"
    assert os.environ["OPENAI_API_KEY"] == "sk-test-never-inside"


def test_the_sandbox_dies_with_its_parent(backend, tmp_path):
    script = tmp_path / "parent.py"
    script.write_text(
        textwrap.dedent(f"""
        from sandboxes import EnvSource, open_session
        spin = EnvSource(code="class Spin:\\n  def spin(self) -> dict:\\n    while True: pass\\n")
        session = open_session(spin, {{}}, backend={backend!r})
        print(session.info["uid"], session._resources.process.popen.pid, flush=True)
        session.call("spin", {{}})  # busy for good: the worker will not see end of file
    """)
    )
    parent = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, text=True)
    uid, pid = map(int, parent.stdout.readline().split())
    # As root, bwrap's worker runs as a leased uid; otherwise follow the worker's own pid.
    alive = (lambda: processes_of(uid)) if uid != 0 else (lambda: os.path.exists(f"/proc/{pid}"))
    assert alive()
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive()


def test_worker_modules_get_a_bytecode_cache_and_stale_ones_are_rewritten(tmp_path, monkeypatch):
    import importlib.util

    from sandboxes import layout

    (tmp_path / "worker.py").write_text("x = 1\n")
    module = tmp_path / "helper.py"
    module.write_text("x = 1\n")
    monkeypatch.setattr(layout, "HOST_WORKER_DIR", tmp_path)
    layout.cache_worker_bytecode()
    cached = Path(importlib.util.cache_from_source(str(module)))
    assert [p.name for p in cached.parent.iterdir()] == [cached.name]  # never the script
    assert not layout._stale(module, cached)
    written = cached.read_bytes()
    module.write_text("x = 22\n")
    assert layout._stale(module, cached)
    layout.cache_worker_bytecode()
    assert not layout._stale(module, cached) and cached.read_bytes() != written


# --------------------------------------------------------------------------- deployments

NO_DOCKER = unavailable_reason("docker")


def test_a_step_container_runs_generated_code_only_in_docker_sandboxes(monkeypatch):
    from synthesis.environments.runtime import sandbox_refusal

    monkeypatch.setenv(STEP_CONTAINER_ENV, "1")
    assert default_backend() == "docker"
    for name in ("process", "bwrap"):
        assert "sibling docker sandbox containers" in generated_code_refusal(name)
        # Even asked for by name: the step's container holds the Docker socket.
        assert sandbox_refusal(name) == generated_code_refusal(name)
    assert generated_code_refusal("docker") is None and generated_code_refusal("auto") is None
    monkeypatch.setenv(STEP_CONTAINER_ENV, "0")
    assert generated_code_refusal("process") is None and sandbox_refusal("process") is None


@pytest.mark.parametrize(
    ("container", "socket", "dockerd", "expected"),
    [
        (True, "/var/run/docker.sock", False, True),  # a launched run's step container
        (True, "/var/run/docker.sock", True, False),  # a machine running its own engine
        (True, None, False, False),
        (False, "/var/run/docker.sock", False, False),
    ],
)
def test_a_step_container_is_inferred_without_the_marker(
    monkeypatch, container, socket, dockerd, expected
):
    import sandboxes.backends as backends

    monkeypatch.delenv(STEP_CONTAINER_ENV, raising=False)
    monkeypatch.setattr(backends, "in_container", lambda: container)
    monkeypatch.setattr(backends, "docker_socket", lambda: socket)
    monkeypatch.setattr(backends, "_dockerd_in_sight", lambda: dockerd)
    backends._inferred_step_container.cache_clear()
    try:
        assert backends.in_docker_deployment() is expected
    finally:
        backends._inferred_step_container.cache_clear()


def test_a_socket_file_no_engine_listens_on_is_no_docker_engine(monkeypatch, tmp_path):
    """A dockerd that stopped leaves its socket file: that is no engine to start sandboxes
    with, so it must not make a container machine pass for a deployment's step container."""
    import socket

    import sandboxes.backends as backends

    path = str(tmp_path / "docker.sock")
    left_behind = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left_behind.bind(path)  # the file exists; nothing listens
    monkeypatch.setenv("DOCKER_HOST", f"unix://{path}")
    try:
        assert backends.docker_socket() is None
        left_behind.listen(1)
        assert backends.docker_socket() == path
    finally:
        left_behind.close()
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path / 'missing.sock'}")
    assert backends.docker_socket() is None


def _inspect(container: str) -> dict:
    done = subprocess.run(
        ["docker", "inspect", container], capture_output=True, text=True, timeout=30, check=True
    )
    return json.loads(done.stdout)[0]


@pytest.mark.slow
@pytest.mark.skipif(NO_DOCKER is not None, reason=f"docker: {NO_DOCKER}")
def test_a_live_docker_sandbox_holds_no_socket_and_no_privilege():
    with open_session(COUNTER, {}, backend="docker") as session:
        info = _inspect(session._resources.process.container)
        assert session.call("increment", {"by": 2}).result == {"success": True, "data": 2}
        worker_uid = session.info["uid"]
    host = info["HostConfig"]
    assert host["Privileged"] is False
    mounted = [(m.get("Source", ""), m.get("Destination", "")) for m in info["Mounts"]]
    assert not [m for m in mounted if any("docker" in side for side in m)]
    assert host["Binds"] in (None, [])  # nothing of the host: the worker is in the image
    assert host["NetworkMode"] == "none" and host["ReadonlyRootfs"] is True
    added = sorted(cap.removeprefix("CAP_") for cap in host["CapAdd"])
    assert host["CapDrop"] == ["ALL"] and added == ["SETGID", "SETPCAP", "SETUID"]
    assert "no-new-privileges" in host["SecurityOpt"]
    assert host["PidsLimit"] == Limits().processes
    assert host["Memory"] == Limits().address_space_mb * 1024 * 1024
    assert host["Init"] is True and worker_uid >= 60000


@pytest.mark.slow
@pytest.mark.skipif(NO_DOCKER is not None, reason=f"docker: {NO_DOCKER}")
def test_a_step_process_in_a_container_starts_sibling_sandboxes(tmp_path):
    """A step process run the way a launched run's is (in a container, the Docker socket
    mounted) picks docker by itself, refuses the others, and its episode runs in a sibling."""
    import orjson

    repo = Path(__file__).resolve().parents[2]
    site = str(Path(orjson.__file__).resolve().parents[1])
    script = tmp_path / "step.py"
    script.write_text(
        textwrap.dedent(f"""
        import json
        from sandboxes import EnvSource, run_episode
        from sandboxes.backends import default_backend, generated_code_refusal
        counter = EnvSource(path={str(COUNTER.path)!r}, class_name="Counter")
        episode = run_episode(counter, {{}}, [("increment", {{"by": 3}})])
        print(json.dumps({{
            "default": default_backend(),
            "refusals": [generated_code_refusal(n) for n in ("process", "bwrap", "docker")],
            "episode": episode.to_json(),
        }}))
    """)
    )
    docker = shutil.which("docker")
    done = subprocess.run(
        [
            docker, "run", "--rm", "--network", "none",
            "--volume", "/var/run/docker.sock:/var/run/docker.sock",
            "--volume", f"{docker}:/usr/local/bin/docker:ro",
            "--volume", f"{repo}:{repo}:ro",
            "--volume", f"{site}:{site}:ro",
            "--volume", f"{tmp_path}:{tmp_path}:ro",
            "--env", f"PYTHONPATH={repo}:{site}",
            BASE_IMAGE, "python3", str(script),
        ],
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["default"] == "docker"
    assert seen["refusals"][0] and seen["refusals"][1] and seen["refusals"][2] is None
    assert seen["episode"]["status"] == "ok"
    assert seen["episode"]["results"][0]["result"] == {"success": True, "data": 3}
