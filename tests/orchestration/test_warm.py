"""Warm code server and run host (orchestration/fastrun/warm.py): what makes a build start new ones,
how they end by themselves, and `envfoundry stop`. Whole builds that adopt them are in
tests/test_build_incremental.py."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import asdict
from pathlib import Path

import pytest

from orchestration import last_build
from orchestration.fastrun import lifeline, warm
from orchestration.fastrun.lifeline import start_time
from orchestration.fastrun.runhost import host_command
from tests.build_support import default_signals, run_build, small_catalogue, stop_warm

REPO = Path(__file__).resolve().parents[2]
MODULE_KEY = (sys.executable, str(REPO), "orchestration.definitions")
VALUES = {"profile": "tiny", "seed": 7, "home": "/h", "catalogue": "", "corpus": "", "envs": []}


def test_idle_seconds_default_off_and_refusals(monkeypatch):
    monkeypatch.delenv(warm.IDLE_VARIABLE, raising=False)
    assert warm.idle_seconds() == warm.DEFAULT_IDLE_S
    assert warm.idle_seconds({warm.IDLE_VARIABLE: "0"}) == 0
    assert warm.idle_seconds({warm.IDLE_VARIABLE: " 90 "}) == 90
    for bad in ("-1", "ten", "1.5"):
        with pytest.raises(ValueError, match=warm.IDLE_VARIABLE):
            warm.idle_seconds({warm.IDLE_VARIABLE: bad})


def test_the_key_changes_with_what_the_code_location_loads_and_nothing_else(monkeypatch):
    monkeypatch.delenv("ENVFOUNDRY_EXECUTOR", raising=False)
    key = warm.warm_key(VALUES, "code", MODULE_KEY)
    assert warm.warm_key(dict(VALUES), "code", MODULE_KEY) == key
    assert warm.warm_key({**VALUES, "seed": 8}, "code", MODULE_KEY) != key
    assert warm.warm_key(VALUES, "other code", MODULE_KEY) != key
    assert warm.warm_key(VALUES, "code", (*MODULE_KEY[:2], "other.module")) != key
    monkeypatch.setenv("ENVFOUNDRY_EXECUTOR", "multiprocess")
    assert warm.warm_key(VALUES, "code", MODULE_KEY) != key
    monkeypatch.delenv("ENVFOUNDRY_EXECUTOR")
    # Which build is running, and how long they stay warm, are not what they loaded.
    monkeypatch.setenv(lifeline.BUILD_PROCESS, "1:2")
    monkeypatch.setenv(warm.IDLE_VARIABLE, "5")
    assert warm.warm_key(VALUES, "code", MODULE_KEY) == key


def test_the_catalogue_a_build_reads_is_not_code(tmp_path):
    """Editing the shipped catalogue or corpus (data/) changes what the runs read, not the
    code location: the warm processes stay. Any other project file is code."""
    from synthesis.environments.topics import CATALOGUE_PATH
    from synthesis.llm.topic_mining import CORPUS_PATH

    shipped = last_build.loaded_code({**VALUES, "catalogue": "", "corpus": ""})
    elsewhere = last_build.loaded_code(
        {**VALUES, "catalogue": str(tmp_path / "t.json"), "corpus": "none"}
    )
    assert shipped == last_build.project_hash(skip=frozenset({CATALOGUE_PATH, CORPUS_PATH}))
    assert elsewhere == last_build.project_hash() != shipped


def _listening_host(tmp_path: Path, idle_s: float) -> tuple[subprocess.Popen, Path]:
    path = tmp_path / "run-host.sock"
    host = subprocess.Popen(
        host_command(sys.executable, "--listen", str(path), "--idle", str(idle_s),
                     "tests.fakes.launcher_jobs", str(REPO)),
        env={**os.environ, "LAUNCHER_TEST_DIR": str(tmp_path)},
    )  # fmt: skip
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline and host.poll() is None, "the host never listened"
        time.sleep(0.05)
    return host, path


def _greeting(path: Path) -> tuple[socket.socket, dict]:
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.connect(str(path))
    conn.settimeout(120)
    data = b""
    while b"\n" not in data:
        data += conn.recv(1 << 16)
    return conn, json.loads(data)


def test_a_warm_run_host_greets_launchers_and_ends_when_idle_or_its_socket_is_gone(tmp_path):
    host, path = _listening_host(tmp_path, idle_s=1.0)
    try:
        first, hello = _greeting(path)
        assert hello == {"ready": host.pid}
        second, hello = _greeting(path)  # launchers of several builds, one after the other
        assert hello == {"ready": host.pid}
        second.close()
        time.sleep(2.5)  # longer than its idle time, with a launcher still connected
        assert host.poll() is None, "the host ended while a launcher was connected"
        first.close()
        assert host.wait(timeout=10) == 0
        assert not path.exists(), "the idle host left its socket file behind"
    finally:
        host.kill()
        host.wait()

    # Stopped by removing its socket file (`envfoundry stop`, or a build replacing it).
    host, path = _listening_host(tmp_path, idle_s=600)
    try:
        conn, _ = _greeting(path)
        conn.close()
        path.unlink()
        assert host.wait(timeout=10) == 0
    finally:
        host.kill()
        host.wait()


def _signal_state(pid: int) -> str:
    """What a failure should show: whether the process ran, and what it blocked or ignored."""
    lines = Path(f"/proc/{pid}/status").read_text().splitlines()
    return "; ".join(x for x in lines if x.startswith(("State", "SigBlk", "SigIgn", "SigPnd")))


def test_stop_ends_the_recorded_processes_and_forgets_them(tmp_path):
    home = tmp_path / "home"
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True)
    assert "No warm code server or run host" in stop_warm(home)

    sockets = tmp_path / "sockets"
    sockets.mkdir()
    # Stand-ins for the servers, with the signal state a process gets from a shell: they
    # would otherwise inherit this worker's, which earlier tests may have changed.
    sleepers = [subprocess.Popen(["sleep", "120"], preexec_fn=default_signals) for _ in range(2)]
    record = warm.WarmServers(
        key="k",
        build_id="b0",
        dagster_home=str(dagster_home.resolve()),
        directory=str(sockets),
        code_pid=sleepers[0].pid,
        code_start=start_time(sleepers[0].pid),
        host_pid=sleepers[1].pid,
        host_start=start_time(sleepers[1].pid),
        location="envfoundry",
        log=str(dagster_home / "warm-servers.log"),
    )
    (dagster_home / warm.RECORD).write_text(json.dumps(asdict(record)))
    assert warm.read(dagster_home) == record and record.alive()
    try:
        before = [_signal_state(s.pid) for s in sleepers]
        said = stop_warm(home)
        assert [s.wait(timeout=10) for s in sleepers] == [-15, -15], before
    finally:
        for sleeper in sleepers:
            sleeper.kill()
            sleeper.wait()
    assert f"pid {sleepers[0].pid}" in said and "build b0" in said
    assert warm.read(dagster_home) is None and not sockets.exists()
    assert not record.alive()


def test_a_copied_homes_record_stops_nothing_of_the_home_it_was_copied_from(tmp_path):
    """A home copied with its record (cp -r, a test's copytree) names the other home's
    processes: stopping or replacing them from the copy only forgets the record."""
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        original = warm.WarmServers(
            key="k",
            build_id="b0",
            dagster_home=str(tmp_path / "original" / "dagster"),
            directory=str(tmp_path / "sockets"),
            code_pid=sleeper.pid,
            code_start=start_time(sleeper.pid),
            host_pid=sleeper.pid,
            host_start=start_time(sleeper.pid),
            location="envfoundry",
            log="",
        )
        copy = tmp_path / "copy" / "dagster"
        copy.mkdir(parents=True)
        (copy / warm.RECORD).write_text(json.dumps(asdict(original)))
        assert warm.stop(copy) is None
        assert sleeper.poll() is None and warm.read(copy) is None
    finally:
        sleeper.kill()
        sleeper.wait()


def test_a_cli_finds_the_warm_processes_it_would_adopt(tmp_path, monkeypatch):
    """`warm.adoptable`: the home's record, if its processes run and were started with the key
    this build would start them with (the code location's module recorded, this interpreter
    and working directory); else None, and the build runs in the CLI."""
    dagster_home = tmp_path / "dagster"
    dagster_home.mkdir()
    monkeypatch.setenv("DAGSTER_HOME", str(dagster_home))
    keep = warm.KeepWarm("b1", 60, VALUES, last_build.loaded_code(VALUES))
    key = warm.warm_key(VALUES, keep.code, MODULE_KEY)
    sleeper = subprocess.Popen(["sleep", "120"])
    try:
        running = {"pid": sleeper.pid, "start": start_time(sleeper.pid)}
        record = warm.WarmServers(
            key=key,
            build_id="b0",
            dagster_home=str(dagster_home.resolve()),
            directory=str(tmp_path / "sockets"),
            code_pid=running["pid"],
            code_start=running["start"],
            host_pid=running["pid"],
            host_start=running["start"],
            location="envfoundry",
            log="",
            module=MODULE_KEY[2],
        )

        def adoptable(**changes) -> warm.WarmServers | None:
            (dagster_home / warm.RECORD).write_text(json.dumps(asdict(record) | changes))
            return warm.adoptable(dagster_home, keep)

        monkeypatch.chdir(REPO)
        assert adoptable() == record
        assert adoptable(key="other") is None  # other code, settings or variables
        assert adoptable(module="") is None  # recorded before modules were
        assert adoptable(module="other.module") is None
        assert adoptable(dagster_home=str(tmp_path / "elsewhere")) is None  # a copied home
        assert adoptable(host_start="1") is None  # not the process it started
        monkeypatch.chdir(tmp_path)  # another working directory loads other code
        assert adoptable() is None
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.slow
def test_a_build_longer_than_the_idle_time_keeps_them_and_they_end_once_idle(tmp_path):
    """With 3 idle seconds, a build of a dozen seconds still has its code server (heartbeats)
    and run host (connected) to the end; both end by themselves once it is over."""
    catalogue = small_catalogue(tmp_path / "topics.json", ("barber_shop",))
    home = tmp_path / "home"
    result = run_build(home, extra=["--catalogue", str(catalogue)], env={warm.IDLE_VARIABLE: "3"})
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Code server and run host: started; kept warm 3 s" in result.stdout
    servers = warm.read(home / "dagster")
    assert servers is not None
    deadline = time.monotonic() + 60
    while servers.alive() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not servers.alive(), "the warm processes outlived their idle time"
    assert not Path(servers.host_socket).exists()
    # --no-warm (a setting as ENVFOUNDRY_WARM_S=0 is): none are left for the next build.
    result = run_build(home, extra=["--catalogue", str(catalogue), "--full", "--no-warm"])
    assert result.returncode == 0, result.stdout[-3000:]
    assert "Code server and run host: none kept (--no-warm" in result.stdout
    assert warm.read(home / "dagster") is None
