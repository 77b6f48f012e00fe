"""How builds run and how the UI is served: the settings the UI takes from a build, the log a
build keeps, the command `make ui` runs, and processes that end with their build."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.request

import pytest

from assets._resources import BuildSettings
from assets._settings import SETTINGS_FILE
from orchestration import instance, ui
from orchestration.fastrun import lifeline
from synthesis import codec


def test_the_ui_takes_the_last_builds_settings_and_variables_win(tmp_path, monkeypatch):
    for name in ["PROFILE", "SEED", "CATALOGUE", "ENVS", "SANDBOX"]:
        monkeypatch.delenv(f"ENVFOUNDRY_{name}", raising=False)
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    assert (BuildSettings.from_env().profile, BuildSettings.from_env().seed) == ("default", 0)
    codec.write_json(
        tmp_path / SETTINGS_FILE,
        {
            "profile": "tiny",
            "seed": 7,
            "envs": ["/x/env.py"],
            "catalogue": "none",
            "sandbox_backend": "bwrap",
        },
    )
    settings = BuildSettings.from_env()
    assert (settings.profile, settings.seed, settings.envs) == ("tiny", 7, ["/x/env.py"])
    assert (settings.catalogue, settings.sandbox_backend) == ("none", "bwrap")
    monkeypatch.setenv("ENVFOUNDRY_SEED", "3")
    assert BuildSettings.from_env().seed == 3
    (tmp_path / SETTINGS_FILE).write_text("{not json")
    with pytest.raises(ValueError, match="not a settings file"):
        BuildSettings.from_env()


def test_make_ui_serves_the_homes_instance_on_the_port_asked(tmp_path):
    argv, env = ui.command(tmp_path, 3123, "127.0.0.1", daemon=True)
    assert argv[1] == "dev" and argv[argv.index("-p") + 1] == "3123"
    assert argv[argv.index("-w") + 1].endswith("workspace.yaml")
    assert env["DAGSTER_HOME"] == str(tmp_path / "dagster")
    assert env["ENVFOUNDRY_HOME"] == str(tmp_path)
    config = (tmp_path / "dagster" / "dagster.yaml").read_text()
    assert "enabled: false" in config and "dequeue_interval_seconds: 1" in config
    argv, _ = ui.command(tmp_path, 3124, "127.0.0.1", daemon=False)
    assert os.path.basename(argv[0]) == "dagster-webserver"


def test_a_users_instance_config_is_kept_and_the_old_default_upgraded(tmp_path):
    config = tmp_path / "dagster" / "dagster.yaml"
    config.parent.mkdir()
    config.write_text("telemetry:\n  enabled: false\n")  # what earlier builds wrote
    instance.prepare(tmp_path)
    assert f"max_concurrent_runs: {instance.parallel_runs()}" in config.read_text()
    config.write_text("run_launcher:\n  module: mine\n")
    instance.prepare(tmp_path)
    assert config.read_text() == "run_launcher:\n  module: mine\n"


def test_a_bad_port_is_a_usage_error(capsys):
    with pytest.raises(SystemExit) as stop:
        ui.ui_main(["--port", "70000"])
    assert stop.value.code == 2
    assert "not a port number" in capsys.readouterr().err


def test_a_process_working_for_a_build_ends_when_the_build_is_killed(tmp_path):
    """The build's stand-in starts a worker that holds on to it, then is killed with SIGKILL:
    the worker ends by itself (as the code server and the runs of a killed build do)."""
    pid_file = tmp_path / "worker.pid"
    worker = (
        "import time, pathlib\n"
        "from orchestration.fastrun import lifeline\n"
        "lifeline.hold_on()\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(__import__('os').getpid()))\n"
        "time.sleep(120)\n"
    )
    build = (
        "import subprocess, sys, time\n"
        "from orchestration.fastrun import lifeline\n"
        "lifeline.export_build_process()\n"
        f"subprocess.Popen([sys.executable, '-c', {worker!r}])\n"
        "time.sleep(120)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", build])
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    worker_pid = int(pid_file.read_text())
    assert _alive(worker_pid)
    os.kill(process.pid, signal.SIGKILL)
    process.wait()
    deadline = time.monotonic() + 10
    while _alive(worker_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(worker_pid), "the worker outlived its build"


def test_a_process_that_ended_is_not_running_even_before_it_is_reaped():
    """A build (or warm server) that ended stays a zombie until its parent reaps it: its pid
    and start time are still there, but what watches it must see it gone."""
    child = subprocess.Popen(["sleep", "60"])
    start = lifeline.start_time(child.pid)
    try:
        assert lifeline.running(child.pid, start)
        assert not lifeline.running(child.pid, str(int(start) + 1))  # another process
        os.kill(child.pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while _alive(child.pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert lifeline.start_time(child.pid) == start  # not reaped: still listed
        assert not lifeline.running(child.pid, start)
    finally:
        child.kill()
        child.wait()
    assert not lifeline.running(child.pid, start)


def test_without_a_build_nothing_is_watched(monkeypatch):
    monkeypatch.delenv(lifeline.BUILD_PROCESS, raising=False)
    lifeline.hold_on()
    assert "envfoundry-lifeline" not in {t.name for t in threading.enumerate()}


def _alive(pid: int) -> bool:
    try:
        stat = open(f"/proc/{pid}/stat").read()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"  # a zombie has ended


def _session_members(session: int) -> list[int]:
    members = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.getsid(int(entry)) == session:
                    members.append(int(entry))
            except ProcessLookupError:
                pass
    return members


@pytest.mark.slow
def test_the_ui_stops_on_sigterm_even_when_started_in_the_background(tmp_path):
    """A shell starts a background job (`make ui &`) with SIGINT ignored, and `dagster dev`
    handles SIGTERM as it handles SIGINT: it ignored SIGTERM too, and its 7 processes outlived
    `make`. Started that way, the UI and every process it started end on one SIGTERM."""
    port = ui.free_port()
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "orchestration.cli",
            "ui",
            "--home",
            str(tmp_path / "home"),
            "--port",
            str(port),
        ],
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
        start_new_session=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 180
        while True:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/server_info", timeout=5):
                    break
            except OSError:
                assert process.poll() is None, "the UI did not start"
                assert time.monotonic() < deadline, "the UI did not answer in 180 s"
                time.sleep(0.5)
        assert len(_session_members(process.pid)) >= 3  # dev, webserver, daemon, code servers
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=90)
        deadline = time.monotonic() + 30
        while _session_members(process.pid) and time.monotonic() < deadline:
            time.sleep(0.5)
        assert _session_members(process.pid) == []
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        process.wait()
