"""dbt run in a child forked from the publish run (assets/_dbt_in_process.py): what
dagster-dbt reads from it is what it read from the dbt CLI (JSON event lines, exit codes
0/1/2, SIGINT stops it), its log file is kept, the warehouse is free for the run's next steps
when it returns, and the child never outlives the process that forked it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from test_warehouse import populate, unproven_world  # noqa: E402

from assets._dbt_in_process import (  # noqa: E402
    DbtFork,
    DbtLog,
    _die_with,
    invocation_args,
    log_file,
)
from assets.dbt import DBT_PROJECT_DIR, parsed_manifest, write_profiles  # noqa: E402
from orchestration.fastrun import lifeline  # noqa: E402
from synthesis.export import warehouse as wh  # noqa: E402


def _env(tmp: Path, warehouse: Path) -> dict[str, str]:
    return {
        "DBT_PROJECT_DIR": str(DBT_PROJECT_DIR),
        "DBT_PROFILES_DIR": str(write_profiles(tmp / "profile", warehouse=warehouse)),
        "DBT_TARGET_PATH": str(tmp / "target"),
    }


def _dbt(tmp: Path, warehouse: Path, *argv: str) -> tuple[DbtFork, list[dict], list[str]]:
    env = _env(tmp, warehouse)
    process = DbtFork(["dbt", *argv, "--log-path", str(tmp / "logs")], env, parsed_manifest())
    events, other = [], []
    with process.stdout:
        for line in process.stdout:
            try:
                events.append(json.loads(line))
            except ValueError:
                other.append(line.decode())
    assert process.wait(timeout=300) == process.returncode
    return process, events, other


def test_the_cli_options_come_from_what_dagster_dbt_puts_in_the_environment():
    argv = ["dbt", "build", "--target-path", "/mine"]
    env = {"DBT_TARGET_PATH": "/theirs", "DBT_PROJECT_DIR": "/project", "DBT_LOG_PATH": ""}
    args = invocation_args(argv, env)
    assert args[:3] == ["build", "--target-path", "/mine"]  # said in argv: kept
    assert args[3:5] == ["--project-dir", "/project"]
    assert "--log-path" not in args and "/theirs" not in args
    # Its loggers are off: the event callback writes dbt.log (DbtLog), where --log-path says.
    assert args[-4:] == ["--log-level", "none", "--log-level-file", "none"]
    assert log_file(args) is None
    assert log_file(invocation_args(argv, {"DBT_LOG_PATH": "/logs"})) == Path("/logs/dbt.log")


@pytest.mark.slow
def test_a_failing_data_test_exits_1_says_which_and_frees_the_warehouse(tmp_path):
    world = unproven_world(gold_pass=False, noop_fail=True)
    warehouse = tmp_path / wh.WAREHOUSE_FILE
    populate(warehouse, world)
    process, events, _ = _dbt(tmp_path, warehouse, "build")
    assert process.returncode == 1
    # The result events dagster-dbt turns into asset check results (info level, as the CLI).
    failed = [
        e["data"]["node_info"]["unique_id"]
        for e in events
        if e["info"]["name"] == "LogTestResult" and e["data"]["status"] == "fail"
    ]
    assert failed == ["test.envfoundry.assert_published_scenarios_are_proven"]
    assert all(e["info"]["level"] != "debug" for e in events)
    # dbt.log as dbt's file logger wrote it: every event as a JSON line, debug level included.
    text = (tmp_path / "logs" / "dbt.log").read_text()
    logged = [json.loads(line) for line in text.splitlines()]
    assert {"debug", "info", "error"} <= {e["info"]["level"] for e in logged}
    assert {"SQLQuery", "LogTestResult", "MainReportArgs"} <= {e["info"]["name"] for e in logged}
    assert "Completed with 1 error" in text
    # The run's next steps open the warehouse read-only: dbt must not hold it any more.
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from scenarios").fetchone()[0] > 0


def test_the_log_scrubs_secrets_as_dbt_does(tmp_path, monkeypatch):
    """The values of DBT_ENV_SECRET_* variables never reach dbt.log nor dagster-dbt."""
    from dbt_common.events.base_types import msg_from_base_event
    from dbt_common.events.types import Note

    monkeypatch.setenv("DBT_ENV_SECRET_TOKEN", "s3cr3t-value")
    log = DbtLog(tmp_path / "logs" / "dbt.log")
    line = log.line(msg_from_base_event(Note(msg="connecting with s3cr3t-value")))
    log.close()
    assert json.loads(line)["info"]["msg"] == "connecting with *****"
    assert (tmp_path / "logs" / "dbt.log").read_text() == line + "\n"


def test_dbt_failing_itself_exits_2_and_says_why(tmp_path):
    """No profile: dbt raises before any node, as its CLI would exit 2."""
    (tmp_path / "no-profile").mkdir()
    env = {
        "DBT_PROJECT_DIR": str(DBT_PROJECT_DIR),
        "DBT_PROFILES_DIR": str(tmp_path / "no-profile"),
    }
    process = DbtFork(
        ["dbt", "build", "--target-path", str(tmp_path / "t")], env, parsed_manifest()
    )
    lines = list(process.stdout)
    assert process.wait(timeout=120) == 2
    said = b"\n".join(lines).decode()
    assert "dbt failed:" in said and "Could not find profile named 'envfoundry'" in said


@pytest.mark.slow
def test_sigint_stops_dbt_and_frees_the_warehouse(tmp_path):
    """As dagster-dbt does when its run is interrupted: stop reading, send SIGINT, wait. dbt
    cancels before its last node (its exit code: dbt failed), says so in dbt.log, and holds
    the warehouse no more."""
    world = unproven_world(gold_pass=True, noop_fail=False)
    warehouse = tmp_path / wh.WAREHOUSE_FILE
    populate(warehouse, world)
    env = _env(tmp_path, warehouse)
    argv = ["dbt", "build", "--log-path", str(tmp_path / "logs")]
    process = DbtFork(argv, env, parsed_manifest())
    with process.stdout:
        for line in process.stdout:
            if json.loads(line)["info"]["name"] == "LogStartLine":  # a node has started
                break
    process.send_signal(signal.SIGINT)
    assert process.wait(timeout=60) == 2
    logged = [json.loads(line) for line in (tmp_path / "logs" / "dbt.log").read_text().splitlines()]
    names = [e["info"]["name"] for e in logged]
    assert "LogCancelLine" in names and "MainEncounteredError" in names
    finished = sum(name in ("LogModelResult", "LogTestResult") for name in names)
    assert finished < len(parsed_manifest().nodes)
    with duckdb.connect(str(warehouse), read_only=True) as con:
        assert con.execute("select count(*) from scenarios").fetchone()[0] > 0


def test_the_child_dies_with_the_process_that_forked_it():
    """A run killed with SIGKILL cannot tell its dbt child: the child goes with it."""
    read, write = os.pipe()
    middle = os.fork()
    if middle == 0:  # the run: forks the "dbt" child, says its pid, waits to be killed
        try:
            os.close(read)
            me = os.getpid()
            child = os.fork()
            if child == 0:
                _die_with(me)
                time.sleep(60)
                os._exit(0)
            os.write(write, f"{child} {lifeline.start_time(child)}\n".encode())
            time.sleep(60)
        finally:
            os._exit(0)
    os.close(write)
    with os.fdopen(read) as said:
        child, start = said.readline().split()
    os.kill(middle, signal.SIGKILL)
    os.waitpid(middle, 0)
    deadline = time.monotonic() + 10
    while lifeline.running(int(child), start):
        assert time.monotonic() < deadline, "the child outlived the process that forked it"
        time.sleep(0.05)


# Run in a fresh interpreter: a worker that ran dbt before has dbt's caches already.
_WARM_THEN_FORK = """
import os, re, sys, tempfile, threading
from pathlib import Path
sys.path.insert(0, sys.argv[1])
from dbt.adapters.duckdb.connections import DuckDBConnectionManager
from dbt_common.clients.jinja import template_cache
from dbt_common.dataclass_schema import dbtClassMixin
from assets.dbt import DBT_PROJECT_DIR, parsed_manifest, warm_up, write_profiles
from assets._dbt_in_process import invocation_args, invoke
from synthesis.export.warehouse import ensure_tables

BLOCK = re.compile(r"\\s*\\{%-?\\s*(macro|materialization|test)\\s+(\\w+)")
warm = sys.argv[2] == "warm"
threads = threading.active_count()
if warm:
    warm_up()
assert threading.active_count() == threads, threading.enumerate()
assert DuckDBConnectionManager._ENV is None
built = dbtClassMixin.json_schema.cache_info().misses
compiled = set(template_cache.file_cache)
pid = os.fork()
if pid == 0:
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        ensure_tables(work / "warehouse.duckdb")
        env = {
            "DBT_PROJECT_DIR": str(DBT_PROJECT_DIR),
            "DBT_PROFILES_DIR": str(write_profiles(work, warehouse=work / "warehouse.duckdb")),
            "DBT_TARGET_PATH": str(work / "target"),
            "DBT_LOG_PATH": str(work / "logs"),
        }
        code = invoke(invocation_args(["dbt", "build", "--quiet"], env), parsed_manifest(), len)
    # The cache is keyed by each macro's source: "{% materialization table, ... %}" names
    # dbt's materialization_table_..., "{% test unique(...) %}" its test_unique.
    blocks = [BLOCK.match(m) for m in set(template_cache.file_cache) - compiled]
    macros = [b[2] if b[1] == "macro" else f"{b[1]}_{b[2]}" for b in blocks if b]
    shared = [m for m in macros if re.match(r"(materialization_|(default__)?test_)", m)]
    print(code, dbtClassMixin.json_schema.cache_info().misses - built, *sorted(shared), flush=True)
    os._exit(0)
os.waitpid(pid, 0)
"""


@pytest.mark.parametrize("warm", [True, False], ids=["warmed", "not warmed"])
def test_the_warm_up_leaves_the_process_fit_to_fork_and_its_children_warm(warm):
    """`assets.dbt.warm_up` runs in the run host's warm helper, which forks every publish run
    afterwards: it leaves no thread and no open database behind, and a forked child's
    `dbt build` of the whole project builds none of the JSON schemas dbt checks the project
    and profile against and compiles no materialization or data test macro (dbt builds both
    once per process). Without the warm-up it builds and compiles them."""
    done = subprocess.run(
        [sys.executable, "-c", _WARM_THEN_FORK, str(REPO), "warm" if warm else "cold"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    code, schemas_built, *macros = done.stdout.split()
    assert int(code) == 0
    if warm:
        assert (int(schemas_built), macros) == (0, [])
    else:
        assert int(schemas_built) > 0
        assert {"materialization_table", "materialization_view", "test_not_null"} <= set(macros)


def test_an_event_fired_after_the_invocation_does_not_fail(tmp_path):
    """dbt keeps an invocation's callbacks until its next invocation: an event fired in
    between reaches ours after the log is closed, and must not raise in whoever fired it."""
    from dbt.events.types import MainReportVersion
    from dbt_common.events.functions import fire_event

    from assets._dbt_in_process import invoke

    env = _env(tmp_path, tmp_path / "w.duckdb")
    args = invocation_args(["dbt", "ls", "--quiet", "--log-path", str(tmp_path / "logs")], env)
    assert invoke(args, parsed_manifest(), len) == 0
    logged = (tmp_path / "logs" / "dbt.log").read_text()
    fire_event(MainReportVersion(version="after", log_version=3))
    assert (tmp_path / "logs" / "dbt.log").read_text() == logged
