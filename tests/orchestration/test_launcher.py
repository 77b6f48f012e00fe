"""The forking run launcher: runs start in children forked from one run host, a run whose
process is killed is marked failed with the reason, Terminate cancels, and a run host that
cannot start sends the run to the code server as before."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from orchestration import instance as envfoundry_instance
from orchestration import runs
from orchestration.fastrun import launcher, lifeline, runhost
from orchestration.fastrun.launcher import PROCESS_TAG, ForkingRunLauncher
from orchestration.runs import failure_of, wait_for

REPO = Path(__file__).resolve().parents[2]
_WAIT_S = 120


@pytest.fixture(scope="module")
def location(tmp_path_factory):
    """A home with EnvFoundry's instance config, and a code location of trivial jobs served
    by its code server: (instance, location, directory the runs write their records in)."""
    root = tmp_path_factory.mktemp("launcher")
    workspace = root / "workspace.yaml"
    workspace.write_text(
        "load_from:\n"
        "  - python_module:\n"
        "      module_name: tests.fakes.launcher_jobs\n"
        "      attribute: defs\n"
        f"      working_directory: {REPO}\n"
        "      location_name: launcher_test\n"
    )
    records = root / "records"
    records.mkdir()
    saved = os.environ.get("LAUNCHER_TEST_DIR")
    os.environ["LAUNCHER_TEST_DIR"] = str(records)
    dagster_home = envfoundry_instance.prepare(root / "home")
    with dg.DagsterInstance.from_config(str(dagster_home)) as inst:
        assert isinstance(inst.run_launcher, ForkingRunLauncher)
        with runs.code_location(inst, workspace) as code:
            yield inst, code, records
    launcher.stop_run_hosts()
    if saved is None:
        os.environ.pop("LAUNCHER_TEST_DIR", None)
    else:
        os.environ["LAUNCHER_TEST_DIR"] = saved


def _record(records: Path, run_id: str) -> dict:
    path = records / f"{run_id}.json"
    deadline = time.monotonic() + _WAIT_S
    while not path.exists():
        assert time.monotonic() < deadline, f"run {run_id} never started its op"
        time.sleep(0.05)
    return json.loads(path.read_text())


def _parent_of(pid: int) -> int:
    stat = Path(f"/proc/{pid}/stat").read_text()
    return int(stat.rpartition(")")[2].split()[1])


def test_the_run_host_starts_with_the_code_server_and_its_helper_imports_for_warm_jobs(location):
    """Opening the code location started its run host too (before any run). The host forked
    its warm helper, which imported the location's RUN_HOST_WARM_IMPORTS and ran its warm-up:
    a run of a warm job is forked by the helper and has both without doing them; the host
    itself never does them, so no other run waits behind them."""
    inst, code, records = location
    key = (sys.executable, str(REPO), "tests.fakes.launcher_jobs")
    deadline = time.monotonic() + _WAIT_S
    while not (records / "warm_import.pid").exists():
        assert time.monotonic() < deadline, "the warm helper never imported its imports"
        time.sleep(0.05)
    # The helper can write its pid before the starting thread has recorded the host: that
    # thread holds the lock until it has, so taking it waits for the record.
    with launcher._hosts_lock:
        host = launcher._hosts[key]
    assert isinstance(host, launcher.RunHostProcess)
    helper = int((records / "warm_import.pid").read_text())
    assert helper != host.process.pid and _parent_of(helper) == host.process.pid
    quick_id, warm_id = code.submit("quick", tags={}), code.submit("warm", tags={})
    assert all(run.success for run in wait_for(inst, [quick_id, warm_id], timeout_s=_WAIT_S))
    quick, warm = _record(records, quick_id), _record(records, warm_id)
    assert quick["ppid"] == host.process.pid and quick["warm_import_in"] is None
    assert warm["ppid"] == helper and warm["warm_import_in"] == helper  # inherited
    # A `module:function` entry is a warm-up the helper calls after importing the module.
    assert quick["warmed_in"] is None and warm["warmed_in"] == helper
    # The collector policy of runs: what the host loaded is frozen, collections are rare.
    for record in (quick, warm):
        assert record["gc_frozen"] > 10_000 and record["gc_threshold"] == 50_000


def test_a_warm_run_the_helper_refuses_or_cannot_take_is_the_hosts_to_start():
    """The host passes a warm job's run to its helper and the helper's answer back; when the
    helper refuses (an import started a thread in it) or is gone, the host decides itself.
    Here the host cannot fork either (it is `broken`), so its own answer shows it decided."""
    from orchestration.fastrun.runhost import RunHost, WarmHelper

    request = {"run_id": "r", "instance_ref": "", "env": {}, "cwd": "/", "job": "warm"}
    launcher_end, host_end = socket.socketpair()
    helper_end, helpers_host_end = socket.socketpair()
    with launcher_end, host_end, helper_end, helpers_host_end:
        host = RunHost(host_end, "tests.fakes.launcher_jobs", broken="the host's own reason")
        host.warm, host.warm_jobs = WarmHelper(helpers_host_end), frozenset({"warm"})
        helper_end.sendall(b'{"pid": 123, "start": "9"}\n')  # the helper forked it
        host.start_run(request)
        assert json.loads(launcher_end.recv(1 << 16)) == {"pid": 123, "start": "9"}
        assert json.loads(helper_end.recv(1 << 16))["run_id"] == "r"  # what it was passed
        helper_end.sendall(b'{"error": "the helper has threads"}\n')  # refused
        host.start_run(request)
        assert json.loads(launcher_end.recv(1 << 16)) == {"error": "the host's own reason"}
        assert host.warm is not None  # a refusing helper is kept: it answers the next one
        helper_end.close()  # gone
        host.start_run(request)
        assert json.loads(launcher_end.recv(1 << 16)) == {"error": "the host's own reason"}
        assert host.warm is None
        host.start_run({**request, "job": "quick"})  # never passed to a helper
        assert json.loads(launcher_end.recv(1 << 16)) == {"error": "the host's own reason"}


def test_an_import_that_starts_a_thread_stops_the_host_forking():
    """A fork copies only the forking thread: a host (or warm helper) with another thread
    answers every run with why, so the launcher (or the helper's host) starts those runs
    elsewhere."""
    from orchestration.fastrun.runhost import RunHost

    mine, theirs = socket.socketpair()
    with mine, theirs:
        host = RunHost(theirs, "tests.fakes.launcher_jobs")
        host.idle_imports = ["tests.fakes.thread_starting_import", "json"]
        host.import_when_idle(host.idle_imports.pop(0))
        assert "started-by-import" in host.broken and host.idle_imports == []
        host.start_run({"run_id": "r", "instance_ref": "", "env": {}, "cwd": "/"})
        answer = json.loads(mine.recv(1 << 16))
    assert "threads after importing tests.fakes.thread_starting_import" in answer["error"]
    assert host.children == {}


def test_a_forked_launcher_keeps_the_host_it_adopts_and_forgets_its_parents(monkeypatch):
    """A process forked from one that launched runs (a build the warm run host forked for a
    CLI) starts its runs on the warm host it adopts, not on one it would start itself (seconds
    of imports), and never on its parent's."""
    from orchestration.fastrun import launcher

    class Host:
        alive = True

    parents, adopted = Host(), Host()
    key = ("python", "/repo", "module")
    monkeypatch.setattr(launcher, "_hosts", {key: parents})
    monkeypatch.setattr(launcher, "_hosts_pid", os.getpid() + 1)  # as a forked copy sees it
    launcher.adopt_host(key, adopted)
    assert launcher.run_host(key) is adopted


def test_a_build_request_is_refused_without_its_descriptors_or_by_a_host_that_cannot_fork():
    """A CLI asks the warm run host for its build with four descriptors (its log twice, its
    terminal, its end of the result channel: orchestration/fastrun/warm_build.py); without
    them, from a host that cannot fork, or for an entry point there is none of, the answer
    says why, and the CLI builds itself."""
    from orchestration.fastrun.runhost import RunHost

    request = {"entry": "build", "request": {}, "env": {}, "cwd": "/"}
    mine, theirs = socket.socketpair()
    with mine, theirs:
        host = RunHost(theirs, "tests.fakes.launcher_jobs")
        host.start_run(request, stdio=[])
        assert json.loads(mine.recv(1 << 16)) == {
            "error": "an entry point comes with four descriptors"
        }
        host.start_run({**request, "entry": "shell"}, stdio=[0, 1, 2, 3])
        assert json.loads(mine.recv(1 << 16)) == {"error": "no entry point 'shell'"}
        host.broken = "the host's own reason"
        host.start_run(request, stdio=[0, 1, 2, 3])
        assert json.loads(mine.recv(1 << 16)) == {"error": "the host's own reason"}
        assert host.children == {}


def test_a_failing_warm_up_is_left_to_the_runs_and_the_host_still_forks(capfd):
    """A warm-up (`module:function`) that raises is reported and ends the warming; the host
    keeps forking runs, which build for themselves what the warm-up would have built."""
    from orchestration.fastrun.runhost import RunHost

    mine, theirs = socket.socketpair()
    with mine, theirs:
        host = RunHost(theirs, "tests.fakes.launcher_jobs")
        failing = "tests.fakes.launcher_warm_import:failing_warm_up"
        host.idle_imports = [failing, "json"]
        host.import_when_idle(host.idle_imports.pop(0))
        assert host.idle_imports == [] and host.broken == ""  # it still forks
    said = capfd.readouterr().err
    assert f"idle import of {failing} failed: this warm-up fails on purpose" in said


def test_runs_start_in_children_of_one_run_host_which_re_execute_the_code_location(
    location, monkeypatch
):
    inst, code, records = location
    # Each run sees the launcher's environment as it was at launch, lifeline included.
    monkeypatch.setenv(lifeline.BUILD_PROCESS, f"{os.getpid()}:")
    monkeypatch.setenv("LAUNCHER_TEST_MARKER", "first")
    first_id = code.submit("quick", tags={})
    (first,) = wait_for(inst, [first_id], timeout_s=_WAIT_S)
    monkeypatch.setenv("LAUNCHER_TEST_MARKER", "second")
    second_id = code.submit("quick", tags={})
    (second,) = wait_for(inst, [second_id], timeout_s=_WAIT_S)
    assert first.success and second.success, (first, second)

    a, b = _record(records, first_id), _record(records, second_id)
    host = a["ppid"]
    assert b["ppid"] == host != os.getpid()
    assert _parent_of(host) == os.getpid()  # the host is this (launching) process's child
    assert a["pid"] != b["pid"] != host
    # Forked, not spawned: the run's process is a copy of the run host, not a new interpreter.
    assert "orchestration.fastrun.runhost" in a["cmdline"]
    # The code location was executed again in the child: its settings and its lifeline.
    assert (a["executed_in"], b["executed_in"]) == (a["pid"], b["pid"])
    assert (a["marker"], b["marker"]) == ("first", "second")
    assert "envfoundry-lifeline" in a["threads"]
    tag = inst.get_run_by_id(first_id).tags[PROCESS_TAG]
    assert tag.startswith(f"{a['pid']}:")


def test_a_killed_runs_process_is_reported_failed_with_the_reason(location):
    inst, code, records = location
    run_id = code.submit("sleepy", tags={})
    pid = _record(records, run_id)["pid"]
    os.kill(pid, signal.SIGKILL)
    (run,) = wait_for(inst, [run_id], timeout_s=_WAIT_S)
    assert not run.success
    assert inst.get_run_by_id(run_id).status == dg.DagsterRunStatus.FAILURE
    error, _ = failure_of(inst, run_id)
    assert f"(pid {pid}) was killed by signal SIGKILL" in error, error


def test_terminate_cancels_the_run(location):
    inst, code, records = location
    run_id = code.submit("sleepy", tags={})
    pid = _record(records, run_id)["pid"]
    assert inst.run_launcher.terminate(run_id)
    (run,) = wait_for(inst, [run_id], timeout_s=_WAIT_S)
    assert not run.success
    assert inst.get_run_by_id(run_id).status == dg.DagsterRunStatus.CANCELED
    deadline = time.monotonic() + 10
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists(), "the canceled run's process is still there"


def test_without_a_run_host_the_code_server_starts_the_run(location, monkeypatch):
    inst, code, records = location
    launcher.stop_run_hosts()
    monkeypatch.setattr(runhost, "BOOT", "import sys; sys.exit(3)")
    try:
        run_id = code.submit("quick", tags={})
        (run,) = wait_for(inst, [run_id], timeout_s=_WAIT_S)
    finally:
        launcher.stop_run_hosts()  # forget the failure: the next test may have a host
    assert run.success, run
    record = _record(records, run_id)
    assert "orchestration.fastrun.runhost" not in record["cmdline"]
    assert PROCESS_TAG not in inst.get_run_by_id(run_id).tags
    said = [r.message for r in inst.all_logs(run_id) if "No run host" in r.message]
    assert said and "the run host ended (exit 3)" in said[0], said


def test_homes_with_an_earlier_generated_config_get_the_launcher_and_own_files_are_kept(
    tmp_path,
):
    config = tmp_path / "dagster" / "dagster.yaml"
    config.parent.mkdir()
    current = envfoundry_instance._CONFIG.format(
        runs=envfoundry_instance.parallel_runs(), base_dir=json.dumps(str(config.parent.resolve()))
    )
    earlier = envfoundry_instance._EARLIER_QUEUE.format(
        runs=envfoundry_instance.parallel_runs() + 3
    )
    config.write_text(earlier)
    envfoundry_instance.prepare(tmp_path)
    assert config.read_text() == current
    # A config of the version before the storage is upgraded too.
    config.write_text(earlier + envfoundry_instance._EARLIER_LAUNCHER)
    envfoundry_instance.prepare(tmp_path)
    assert config.read_text() == current
    # And one of the version before the fast-run code had its package, of another home.
    before = earlier + envfoundry_instance._EARLIER_LAUNCHER + envfoundry_instance._STORAGE
    config.write_text(before.format(base_dir='"/elsewhere/dagster"'))
    envfoundry_instance.prepare(tmp_path)
    assert config.read_text() == current
    # And one of the version before the evaluations' writer limit.
    config.write_text(
        (
            envfoundry_instance._QUEUE_BEFORE_EVALS
            + envfoundry_instance._LAUNCHER
            + envfoundry_instance._STORAGE
        ).format(runs=2, base_dir='"/elsewhere/dagster"')
    )
    envfoundry_instance.prepare(tmp_path)
    assert config.read_text() == current
    own = earlier + "# mine\n"
    config.write_text(own)
    envfoundry_instance.prepare(tmp_path)
    assert config.read_text() == own


def test_the_queue_starts_one_evaluation_at_a_time(tmp_path, monkeypatch):
    """Dagster itself reads the limit from the prepared config, and the eval job's runs carry
    the tag it limits: a second evaluation launched from the UI waits in the queue."""
    from orchestration.jobs import eval_job

    monkeypatch.setenv("DAGSTER_HOME", str(envfoundry_instance.prepare(tmp_path)))
    with dg.DagsterInstance.get() as dagster_instance:
        limits = dagster_instance.run_coordinator.get_run_queue_config().tag_concurrency_limits
    assert {"key": envfoundry_instance.EVALS_WRITER_TAG, "limit": 1} in limits
    assert envfoundry_instance.EVALS_WRITER_TAG in eval_job.tags


def test_the_run_host_ends_with_the_process_that_started_it(tmp_path):
    """A launcher killed with SIGKILL cannot stop its run host: the host sees its socket
    close and ends by itself."""
    pid_file = tmp_path / "host.pid"
    launching = (
        "import pathlib, sys, time\n"
        "from orchestration.fastrun.launcher import RunHostProcess\n"
        f"host = RunHostProcess(sys.executable, {str(REPO)!r}, 'tests.fakes.launcher_jobs')\n"
        f"pathlib.Path({str(pid_file)!r}).write_text(str(host.process.pid))\n"
        "time.sleep(120)\n"
    )
    process = subprocess.Popen([sys.executable, "-c", launching], cwd=REPO)
    try:
        deadline = time.monotonic() + _WAIT_S
        while not pid_file.exists():
            assert process.poll() is None and time.monotonic() < deadline, "no run host"
            time.sleep(0.05)
        host = int(pid_file.read_text())
        assert _parent_of(host) == process.pid
    finally:
        process.kill()
        process.wait()
    deadline = time.monotonic() + 10
    while Path(f"/proc/{host}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{host}").exists(), "the run host outlived its launcher"
