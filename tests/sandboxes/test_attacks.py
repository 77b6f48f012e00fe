"""Hostile environments against the sandbox: each attack is contained, the host is unchanged,
and the run goes on (a fresh sandbox works right after).

Attacks on secrets, the filesystem, the network and other processes need real isolation and
run on the isolating backends (bwrap; docker where an engine exists). Attacks that rlimits and
the protocol checks alone must stop also run on the process backend. The environments live in
tests/fakes/hostile_envs/.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from sandbox_helpers import FAST, fake, hostile, open_fds, processes_of

from sandboxes import CallResult, Limits, open_session
from sandboxes.uids import UID_BASE, UID_COUNT

API_KEY = "sk-envfoundry-attack-suite-canary"


@dataclass
class Outcome:
    results: list[CallResult]
    status: str
    reason: str | None
    final: dict[str, Any] | None
    uid: int | None
    backend: str

    def result(self, index: int = 0) -> Any:
        return self.results[index].result


def attack(
    backend: str,
    source,
    calls,
    *,
    state=None,
    limits: Limits = FAST,
    workspace: Path | None = None,
    between=None,
    final: bool = True,
) -> Outcome:
    """Run the calls one by one, then check nothing of the sandbox outlives it."""
    fds = open_fds()
    with open_session(
        source, state, backend=backend, limits=limits, workspace=workspace
    ) as session:
        results = []
        for tool, args in calls:
            results.append(session.call(tool, args))
            if between is not None:
                between(session)
        final_state = session.final_state() if final else None
        uid = session.info.get("uid")
    outcome = Outcome(results, session.status, session.reason, final_state, uid, backend)
    if backend == "bwrap" and uid not in (None, 0):
        assert processes_of(uid) == [], "a sandbox process outlived its session"
    assert open_fds() == fds, "the parent leaked file descriptors"
    assert_run_goes_on(backend)
    return outcome


def assert_run_goes_on(backend: str) -> None:
    with open_session(fake("sandbox_envs.py", "Counter"), {}, backend=backend) as session:
        assert session.call("increment", {"by": 1}).result == {"success": True, "data": 1}


def everything_said(outcome: Outcome) -> str:
    return repr([r.to_json() for r in outcome.results]) + repr(outcome.final)


# --------------------------------------------------------------------------- secrets


def test_reading_etc_shadow(isolating_backend):
    before = os.stat("/etc/shadow")
    host_shadow = Path("/etc/shadow").read_text()
    outcome = attack(isolating_backend, hostile("filesystem", "ReadShadow"), [("read", {})])
    assert not outcome.results[0].ok
    assert outcome.results[0].error.startswith(("FileNotFoundError", "PermissionError"))
    assert host_shadow.split(":")[0] + ":" not in everything_said(outcome) or not host_shadow
    assert os.stat("/etc/shadow").st_mtime == before.st_mtime


def test_reading_the_root_home(isolating_backend):
    outcome = attack(isolating_backend, hostile("filesystem", "ReadRootHome"), [("read", {})])
    seen = outcome.result()["data"] if outcome.results[0].ok else {"listing": [], "files": {}}
    assert set(seen["listing"]) <= {".pyenv"}
    assert not [path for path, read in seen["files"].items() if read["ok"]]


def test_reading_pid_1_environ(isolating_backend):
    outcome = attack(
        isolating_backend, hostile("filesystem", "ReadProcEnviron"), [("read", {"pid": 1})]
    )
    assert not outcome.results[0].ok
    assert outcome.results[0].error.startswith("PermissionError")


def test_parent_environment_and_api_key_are_invisible(isolating_backend, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", API_KEY)
    outcome = attack(
        isolating_backend, hostile("filesystem", "HarvestEnvironment"), [("harvest", {})]
    )
    assert outcome.results[0].ok
    assert "OPENAI_API_KEY" not in outcome.result()["data"]["environ"]
    assert API_KEY not in everything_said(outcome)
    # Only the sandbox's own processes are visible: its init and the worker.
    pids = {key.split("/")[0] for key in outcome.result()["data"]["proc"]} - {"self"}
    assert len(pids) <= 3


# --------------------------------------------------------------------------- filesystem


def test_writing_outside_the_workspace(isolating_backend):
    marker = f"envfoundry-attack-{uuid.uuid4().hex[:8]}"
    outcome = attack(
        isolating_backend, hostile("filesystem", "WriteOutside"), [("write", {"marker": marker})]
    )
    assert outcome.result()["data"]["written"] == []
    for directory in ("/usr", "/etc", "/root", "/", "/tmp", "/dev"):
        assert not Path(directory, marker).exists()


def test_writing_to_a_host_path_given_as_an_argument(isolating_backend, tmp_path):
    target = tmp_path / "host-file.txt"
    target.write_text("original")
    outcome = attack(
        isolating_backend,
        hostile("filesystem", "WriteOutside"),
        [
            ("write_path", {"path": str(target)}),
            ("write_path", {"path": str(tmp_path / "new.txt")}),
        ],
    )
    assert not any(r.ok for r in outcome.results)
    assert target.read_text() == "original"
    assert not (tmp_path / "new.txt").exists()


def test_tmp_is_private(isolating_backend):
    marker = f"envfoundry-attack-{uuid.uuid4().hex[:8]}"
    outcome = attack(
        isolating_backend, hostile("filesystem", "TmpWriter"), [("write", {"marker": marker})]
    )
    assert outcome.result()["data"] == [marker]  # an empty tmpfs, not the host's /tmp
    assert not Path("/tmp", marker).exists()


def test_filling_tmp_stops_at_its_size(isolating_backend):
    usage = shutil.disk_usage("/tmp")
    outcome = attack(
        isolating_backend,
        hostile("filesystem", "FillTmp"),
        [("fill", {})],
        limits=Limits(call_timeout_s=5.0, tmp_size_mb=4),
    )
    filled = outcome.result()
    assert filled["success"] is False and "No space left on device" in filled["error"]
    assert filled["data"] <= 4 << 20
    assert not Path("/tmp/fill").exists()
    assert abs(shutil.disk_usage("/tmp").free - usage.free) < 64 << 20


def test_file_size_limit(backend):
    outcome = attack(
        backend,
        hostile("filesystem", "BigFile"),
        [("write", {"megabytes": 32})],
        state={"__workspace__": {}},
        limits=Limits(file_size_mb=4),
    )
    assert outcome.results[0].error.startswith("OSError: [Errno 27] File too large")
    assert outcome.final["__workspace__"]["skipped"] == {"big.bin": "too large (4194304 bytes)"}


@pytest.mark.parametrize("target", ["HOST_FILE", "/usr/evil", "/etc/passwd"])
def test_symlinks_in_the_workspace_lead_nowhere(isolating_backend, tmp_path, target):
    secret = tmp_path / "host-secret.txt"
    secret.write_text("HOST SECRET")
    os.chown(secret, 12345, 12345)
    workspace = tmp_path / "ws"
    target = str(secret) if target == "HOST_FILE" else target
    outcome = attack(
        isolating_backend,
        hostile("filesystem", "SymlinkPlanter"),
        [("plant", {"target": target})],
        workspace=workspace,
    )
    attempts = outcome.result()["data"]
    assert not attempts["write_through"]["ok"]
    assert "HOST SECRET" not in everything_said(outcome)
    host_passwd = Path("/etc/passwd").read_text()
    assert host_passwd[:40] not in everything_said(outcome)
    assert outcome.final["__workspace__"]["symlinks"] == {"link": target}
    # Handing the workspace back must not follow the link either.
    assert secret.read_text() == "HOST SECRET"
    assert (secret.stat().st_uid, secret.stat().st_gid) == (12345, 12345)
    assert not Path("/usr/evil").exists()


def test_directory_symlink_to_the_host(isolating_backend, tmp_path):
    host_dir = tmp_path / "host-dir"
    host_dir.mkdir()
    (host_dir / "data.txt").write_text("HOST DATA")
    os.chown(host_dir / "data.txt", 12345, 12345)
    outcome = attack(
        isolating_backend,
        hostile("filesystem", "SymlinkPlanter"),
        [("plant_dir", {"target": str(host_dir)})],
        workspace=tmp_path / "ws",
    )
    assert not outcome.result()["data"]["ok"]
    assert "HOST DATA" not in everything_said(outcome)
    assert (host_dir / "data.txt").stat().st_uid == 12345


def test_devices_and_kernel_memory(isolating_backend):
    outcome = attack(isolating_backend, hostile("filesystem", "DeviceAccess"), [("probe", {})])
    data = outcome.result()["data"]
    assert not [path for path, read in data["outcomes"].items() if read["ok"]]
    assert not {"mem", "kmem", "port", "sda", "vda"} & set(data["dev"])


# --------------------------------------------------------------------------- network


@pytest.mark.parametrize("host, port", [("1.1.1.1", 80), ("8.8.8.8", 53)])
def test_tcp_egress(isolating_backend, host, port):
    outcome = attack(
        isolating_backend,
        hostile("network", "TcpConnect"),
        [("connect", {"host": host, "port": port})],
    )
    assert not outcome.results[0].ok
    assert outcome.results[0].error.startswith("OSError: [Errno 101] Network is unreachable")


def test_udp_and_dns_egress(isolating_backend):
    outcome = attack(
        isolating_backend,
        hostile("network", "UdpSend"),
        [("send", {"host": "8.8.8.8", "port": 53})],
    )
    assert not outcome.results[0].ok
    outcome = attack(
        isolating_backend, hostile("network", "DnsLookup"), [("resolve", {"name": "example.com"})]
    )
    assert outcome.results[0].error.startswith("gaierror")
    outcome = attack(
        isolating_backend,
        hostile("network", "HttpFetch"),
        [("fetch", {"url": "http://example.com/"})],
    )
    assert outcome.results[0].error.startswith("URLError")


def test_servers_on_the_host_loopback_are_unreachable(isolating_backend):
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    try:
        calls = [("connect", {"host": "127.0.0.1", "port": tcp.getsockname()[1]})]
        outcome = attack(isolating_backend, hostile("network", "TcpConnect"), calls)
        assert outcome.results[0].error.startswith("ConnectionRefusedError")
        attack(
            isolating_backend,
            hostile("network", "UdpSend"),
            [("send", {"host": "127.0.0.1", "port": udp.getsockname()[1]})],
        )
        # Anything that got through would be waiting in the queues by now.
        tcp.settimeout(0.05)
        udp.settimeout(0.05)
        with pytest.raises(TimeoutError):
            tcp.accept()
        with pytest.raises(TimeoutError):
            udp.recvfrom(100)
    finally:
        tcp.close()
        udp.close()


def test_abstract_unix_sockets_of_the_host_are_unreachable(isolating_backend):
    name = f"envfoundry-attack-{uuid.uuid4().hex[:8]}"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind("\0" + name)
    server.listen()
    try:
        outcome = attack(
            isolating_backend, hostile("network", "AbstractSocket"), [("connect", {"name": name})]
        )
        assert outcome.results[0].error.startswith("ConnectionRefusedError")
        server.settimeout(0.05)
        with pytest.raises(TimeoutError):
            server.accept()
    finally:
        server.close()


# --------------------------------------------------------------------------- processes


def test_signalling_the_parent(isolating_backend):
    bystander = subprocess.Popen(["sleep", "30"])
    try:
        calls = [
            ("kill", {"pid": os.getpid()}),
            ("kill", {"pid": bystander.pid}),
            ("kill_parent", {}),
            ("kill", {"pid": 1}),
            ("ping", {}),
        ]
        outcome = attack(isolating_backend, hostile("processes", "Signaller"), calls)
        assert [r.ok for r in outcome.results] == [False, False, False, False, True]
        assert outcome.status == "ok"
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()


def test_killing_every_process_only_kills_the_sandbox(isolating_backend):
    host_process = subprocess.Popen(["sleep", "30"])
    try:
        with open_session(
            fake("sandbox_envs.py", "Counter"), {}, backend=isolating_backend
        ) as neighbour:
            # kill(-1) reaches every process the caller may signal, except itself.
            outcome = attack(
                isolating_backend,
                hostile("processes", "Signaller"),
                [("kill_everyone", {}), ("ping", {})],
            )
            assert outcome.results[1].result == {"success": True, "data": "alive"}
            assert neighbour.call("increment", {}).ok
        assert host_process.poll() is None
    finally:
        host_process.kill()
        host_process.wait()


@pytest.mark.slow
def test_fork_bomb(isolating_backend):
    limits = Limits(call_timeout_s=10.0, processes=16)
    outcome = attack(
        isolating_backend, hostile("processes", "ForkBomb"), [("bomb", {})], limits=limits
    )
    assert outcome.results[0].error.startswith("BlockingIOError")
    assert outcome.status == "ok"


@pytest.mark.slow
def test_shell_fork_bomb(isolating_backend):
    limits = Limits(call_timeout_s=8.0, processes=16)
    seen = []

    def count(session):
        seen.append(len(processes_of(session.info["uid"])))

    outcome = attack(
        isolating_backend,
        hostile("processes", "ForkBomb"),
        [("shell_bomb", {})],
        limits=limits,
        between=count,
    )
    assert outcome.status == "ok"
    if isolating_backend == "bwrap" and os.geteuid() == 0:
        assert seen[0] <= 16


def test_a_daemon_does_not_outlive_its_sandbox(isolating_backend):
    survivors = []

    def look(session):
        survivors.extend(processes_of(session.info["uid"]))

    outcome = attack(
        isolating_backend, hostile("processes", "Escaper"), [("daemonize", {})], between=look
    )
    assert outcome.results[0].ok
    if isolating_backend == "bwrap" and os.geteuid() == 0:
        assert len(survivors) >= 2  # the worker and its daemon, gone after close (checked)


def test_ptrace(isolating_backend):
    outcome = attack(
        isolating_backend,
        hostile("processes", "Ptracer"),
        [("attach", {"pid": 1}), ("attach", {"pid": os.getpid()}), ("read_memory", {"pid": 1})],
    )
    assert outcome.results[0].result["data"] in (1, 3)  # EPERM or ESRCH, never 0
    assert outcome.results[1].result["data"] in (1, 3)
    assert not outcome.results[2].ok


def test_nested_namespaces(isolating_backend):
    outcome = attack(
        isolating_backend,
        hostile("processes", "NestedNamespaces"),
        [("unshare", {}), ("tools", {})],
        limits=Limits(call_timeout_s=10.0),
    )
    assert set(outcome.result(0)["data"].values()) == {1}  # EPERM for every flavour
    for tool in outcome.result(1)["data"].values():
        assert tool["rc"] != 0 and "root:" not in tool["out"]


def test_privileges_are_dropped(isolating_backend):
    outcome = attack(
        isolating_backend,
        hostile("processes", "Privileges"),
        [
            ("status", {}),
            ("mount_tmpfs", {}),
            ("set_hostname", {}),
            ("setuid_root", {}),
            ("keyring", {}),
        ],
    )
    status = outcome.result(0)["data"]
    uid = int(status["Uid"].split()[0])
    assert uid != 0
    if isolating_backend == "bwrap" and os.geteuid() == 0:
        assert UID_BASE <= uid < UID_BASE + UID_COUNT
        assert status["Groups"] == ""
    for caps in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[caps], 16) == 0, caps
    assert status["NoNewPrivs"] == "1"
    assert status["Seccomp"] == "2"
    assert outcome.result(1)["data"] == 1 and outcome.result(2)["data"] == 1
    assert outcome.results[3].error.startswith("PermissionError")
    assert outcome.result(4)["data"] == 1


# --------------------------------------------------------------------------- resources


def test_memory_bombs(backend):
    outcome = attack(
        backend,
        hostile("resources", "MemoryBomb"),
        [("allocate", {"gigabytes": 8}), ("grow", {}), ("ping", {})],
        limits=Limits(call_timeout_s=10.0, address_space_mb=512),
    )
    assert outcome.results[0].error == "MemoryError"
    assert outcome.results[1].error == "MemoryError"
    assert outcome.results[2].ok and outcome.status == "ok"


@pytest.mark.parametrize("tool", ["spin", "spin_stubbornly"])
def test_cpu_loops_are_killed_at_the_timeout(backend, tool):
    start = time.monotonic()
    outcome = attack(
        backend,
        hostile("resources", "CpuLoop"),
        [("quick", {}), (tool, {}), ("quick", {})],
        limits=FAST,
    )
    assert time.monotonic() - start < 5
    assert [r.ok for r in outcome.results] == [True, False, False]
    assert outcome.results[1].error == "timeout after 1s (worker killed)"
    assert outcome.status == "killed" and outcome.final is None


def test_cpu_time_limit_backs_up_the_wall_clock(backend):
    limits = Limits(call_timeout_s=30.0, cpu_s=1)
    outcome = attack(backend, hostile("resources", "CpuLoop"), [("spin", {})], limits=limits)
    assert outcome.status == "killed"
    assert outcome.reason.startswith(("worker killed by SIGXCPU", "worker killed by SIGKILL"))


def test_descriptor_exhaustion(backend):
    outcome = attack(
        backend,
        hostile("resources", "FdExhaustion"),
        [("exhaust", {}), ("ping", {})],
        limits=Limits(open_files=32),
    )
    exhausted = outcome.result(0)
    assert exhausted["success"] is False and "Too many open files" in exhausted["error"]
    assert exhausted["data"] < 32
    assert outcome.results[1].ok


def test_giant_outputs(backend):
    outcome = attack(
        backend,
        hostile("resources", "GiantOutput"),
        [
            ("result", {"megabytes": 40}),
            ("flood_streams", {"megabytes": 8}),
            ("deep_result", {"depth": 100_000}),
            ("huge_int", {}),
        ],
        limits=Limits(call_timeout_s=10.0),
    )
    assert outcome.results[0].error.startswith("result too large")
    assert outcome.results[1].result == {"success": True, "data": "flooded"}
    assert outcome.results[2].error.startswith("result is not JSON-serialisable")
    assert outcome.results[3].error.startswith("result is not JSON-serialisable")
    assert outcome.status == "ok"


def test_environment_that_never_loads(backend):
    limits = Limits(call_timeout_s=1.0, start_timeout_s=1.0)
    outcome = attack(backend, hostile("import_time", "NeverLoads"), [("tool", {})], limits=limits)
    assert outcome.status == "killed"
    assert outcome.reason == "timeout after 1s (worker killed) during loading the environment"
    assert outcome.results[0].error.startswith("not run")


def test_signals_and_exits_from_inside(backend):
    outcome = attack(backend, hostile("processes", "SelfDestruct"), [("segfault", {})])
    assert outcome.status == "killed"
    assert outcome.results[0].error == "worker killed by SIGSEGV"
    outcome = attack(backend, hostile("processes", "SelfDestruct"), [("exit", {"code": 3})])
    assert outcome.status == "error"
    assert outcome.reason == "worker exited with status 3 during call 'exit'"


# --------------------------------------------------------------------------- the protocol


@pytest.mark.parametrize(
    "kind",
    [
        "deep_nesting",
        "huge_number",
        "invalid_utf8",
        "nan",
        "not_an_object",
        "other_id",
        "malformed_reply",
    ],
)
def test_crafted_replies_kill_the_worker(backend, kind):
    outcome = attack(
        backend, hostile("protocol", "Forger"), [("write", {"kind": kind}), ("ping", {})]
    )
    assert outcome.status == "killed"
    assert outcome.reason.startswith("protocol violation")
    assert not outcome.results[0].ok
    assert outcome.results[1].error.startswith("not run")


def test_a_forged_reply_with_the_right_id_is_caught_by_the_next_read(backend):
    outcome = attack(
        backend, hostile("protocol", "Forger"), [("write", {"kind": "same_id"}), ("ping", {})]
    )
    # At best the forgery stands in for the tool's own answer; the real one that follows
    # breaks the framing and the worker is killed.
    assert outcome.results[0].result in ("forged", None)
    assert outcome.status == "killed"
    assert outcome.reason.startswith("protocol violation")
    assert not outcome.results[1].ok


def test_a_forged_batch_chunk(backend):
    with open_session(hostile("protocol", "Forger"), {}, backend=backend, limits=FAST) as session:
        results = session.call_batch(
            [("write", {"kind": "batch_chunk"}), ("ping", {}), ("ping", {})]
        )
        assert session.status == "killed"
        assert session.reason.startswith("protocol violation")
    assert not results[-1].ok
    assert_run_goes_on(backend)


def test_an_endless_line_is_cut_off(backend):
    outcome = attack(backend, hostile("protocol", "Forger"), [("write", {"kind": "endless_line"})])
    assert outcome.status == "killed"
    assert outcome.results[0].error.startswith("oversized output")


def test_garbage_written_between_requests(backend):
    outcome = attack(
        backend,
        hostile("protocol", "LateGarbage"),
        [("start", {})],
        between=lambda session: time.sleep(0.4),
        final=True,
    )
    assert outcome.results[0].ok
    assert outcome.status == "killed" and outcome.reason.startswith("protocol violation")


def test_vandalising_the_pipes(backend):
    outcome = attack(
        backend, hostile("protocol", "PipeVandal"), [("close_pipes", {}), ("close_pipes", {})]
    )
    assert outcome.status in ("error", "killed")
    outcome = attack(
        backend, hostile("protocol", "PipeVandal"), [("steal_input", {}), ("steal_input", {})]
    )
    assert outcome.status == "killed"
    assert outcome.reason.startswith("timeout")
