"""Helpers for tests that run whole builds: the CLI in a subprocess, and warehouse queries.

A build is for the `slow` tier only (tests/conftest.py): each helper here that starts one
fails at once in a test not marked slow, so no build slips into `make test-fast`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import duckdb
import pytest

REPO = Path(__file__).resolve().parents[1]
# tests/conftest.py sets this to the node id of the running test while it runs a test not
# marked slow (an environment variable: this module is imported both as `build_support` and
# as `tests.build_support`, so a module global would not be one value).
UNMARKED_TEST = "ENVFOUNDRY_TEST_NOT_SLOW"


def require_slow(what: str) -> None:
    """Fail the running test if it is not marked slow: it `what` (runs a build, reads one)."""
    nodeid = os.environ.get(UNMARKED_TEST)
    if nodeid:
        pytest.fail(
            f"{nodeid} {what}, which only the slow tier may do (`make test-fast` runs the "
            "tests not marked slow): mark its module `pytestmark = pytest.mark.slow` (or the "
            "test `@pytest.mark.slow`); tests/conftest.py says how the tiers work",
            pytrace=False,
        )


def build_command(home: Path, *, profile: str, seed: int, extra: list[str] = ()) -> list[str]:
    return [
        sys.executable,
        "-m",
        "orchestration.cli",
        "build",
        "--profile",
        profile,
        "--seed",
        str(seed),
        "--home",
        str(home),
        *extra,
    ]


def _environment(env: dict[str, str] | None) -> dict[str, str]:
    environment = {**os.environ, "DO_NOT_TRACK": "1", **(env or {})}
    environment.pop("DAGSTER_HOME", None)  # the CLI puts the instance under --home
    environment.pop(UNMARKED_TEST, None)
    return environment


def copy_home(home: Path, copy: Path) -> Path:
    """A copy of a built home for a test that changes it (the shared builds are only read):
    its instance config names the copy (orchestration.instance.prepare), so the copy's
    builds and runs never touch the original's instance."""
    from orchestration import instance

    shutil.copytree(home, copy, symlinks=True)
    instance.prepare(copy)
    return copy


def small_catalogue(path: Path, topic_ids: tuple[str, ...]) -> Path:
    """The shipped catalogue cut to `topic_ids`, written to `path` (for builds that must be
    quick: fewer environments, same profile)."""
    from synthesis.environments.topics import CATALOGUE_PATH

    shipped = json.loads(CATALOGUE_PATH.read_text())
    kept = [t for t in shipped["topics"] if t["topic_id"] in topic_ids]
    assert len(kept) == len(topic_ids), f"not in the shipped catalogue: {topic_ids}"
    path.write_text(json.dumps({**shipped, "topics": kept}))
    return path


def run_build(
    home: Path,
    *,
    profile: str = "tiny",
    seed: int = 7,
    env: dict[str, str] | None = None,
    extra: list[str] = (),
) -> subprocess.CompletedProcess:
    """`envfoundry build` as a user runs it, in its own process and its own instance."""
    require_slow("runs `envfoundry build`")
    return subprocess.run(
        build_command(home, profile=profile, seed=seed, extra=list(extra)),
        cwd=REPO,
        env=_environment(env),
        capture_output=True,
        text=True,
        timeout=900,
    )


def stop_warm(home: Path) -> str:
    """`envfoundry stop`: end the code server and run host a build left warm; what it said."""
    stopped = subprocess.run(
        [sys.executable, "-m", "orchestration.cli", "stop", "--home", str(home)],
        cwd=REPO,
        env=_environment(None),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopped.returncode == 0, stopped.stdout + stopped.stderr
    return stopped.stdout


def start_build(
    home: Path, *, profile: str, seed: int, extra: list[str] = (), log: Path
) -> subprocess.Popen:
    """A build started in the background (two builds share the two cores of a CI machine);
    its console output goes to `log`. It takes signals as one started at a terminal does
    (the tests interrupt it as a user would)."""
    require_slow("runs `envfoundry build`")
    out = log.open("w")
    return subprocess.Popen(
        build_command(home, profile=profile, seed=seed, extra=list(extra)),
        cwd=REPO,
        env=_environment(None),
        stdout=out,
        stderr=subprocess.STDOUT,
        text=True,
        preexec_fn=default_signals,
    )


def default_signals() -> None:
    """A child's signal state as a shell gives it to a command at its terminal, for
    `subprocess.Popen(preexec_fn=...)`: a child otherwise inherits this worker's, and a
    suite started in the background by a script ignores SIGINT (bash does that to the
    commands it puts in the background without job control), as may an earlier test."""
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    for number in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(number, signal.SIG_DFL)


def query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()


def publish_only(
    home: Path, *, profile: str = "tiny", seed: int = 7, env: dict[str, str] | None = None
) -> subprocess.Popen:
    """The publish job alone, in its own process, over the artifacts a build left in `home`
    (what the UI's "materialize" of the publish assets does); started, not waited for."""
    require_slow("runs the publish job of a build")
    code = (
        "import dagster as dg\n"
        "from orchestration.definitions import defs\n"
        "job = defs.resolve_job_def('publish_job')\n"
        "result = job.execute_in_process(instance=dg.DagsterInstance.get(), "
        "raise_on_error=False, tags={'envfoundry/entrypoint': 'cli'})\n"
        "raise SystemExit(0 if result.success else 1)\n"
    )
    environment = _environment(
        {
            "ENVFOUNDRY_HOME": str(home),
            "DAGSTER_HOME": str(home / "dagster"),
            "ENVFOUNDRY_PROFILE": profile,
            "ENVFOUNDRY_SEED": str(seed),
            **(env or {}),
        }
    )
    environment["DAGSTER_HOME"] = str(home / "dagster")
    return subprocess.Popen(
        [sys.executable, "-c", code],
        cwd=REPO,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
