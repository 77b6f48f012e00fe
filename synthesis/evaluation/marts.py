"""The benchmark marts of a home's evaluations, built by dbt into `HOME/evals/evals.duckdb`.

The models are `dbt_project/models/eval` (tag `eval`): staging views over `eval_runs`,
`eval_episodes` and `eval_llm_calls`, `int_eval_episodes` (the episodes that count: the latest
of each model's attempt at a task), and the marts `MARTS` with their dbt tests. They are
enabled only in the profile's `evals` target, whose database is
`$ENVFOUNDRY_HOME/evals/evals.duckdb`, so the build's own parse and `dbt build` (target
`local`, the dataset's warehouse) never see them, and nothing here opens the warehouse.

`build_eval_marts` runs `dbt build --target evals --select tag:eval` in a subprocess (one
thread), with dbt's target folder (its partial parse) and logs under `HOME/evals/dbt/`: the
only files it writes besides the marts. dbt never writes the `eval_*` tables, so a failed
build loses no episode; it is reported with the failing nodes and the command that builds the
marts again (`envfoundry eval --leaderboard --home HOME`).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from synthesis.config import REPO_ROOT
from synthesis.evaluation.store import EVALS_DIR, evals_path, writer_lock
from synthesis.file_lock import Locked

DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"
TARGET = "evals"
SELECTOR = "tag:eval"
DBT_DIR = "dbt"  # under HOME/evals: dbt's target folder and logs
MARTS = (
    "mart_eval_benchmark",
    "mart_eval_reliability",
    "mart_eval_spend",
    "mart_eval_failures",
    "mart_eval_transfer",
    "mart_eval_leaderboard",
)
TIMEOUT_S = 600.0
# dbt's own lines worth repeating when a build fails (its summary of what failed and why).
_PROBLEM = re.compile(r"\b(FAIL|ERROR|Error|error)\b")
_DONE = re.compile(r"Done\. (PASS=\d+ WARN=\d+ ERROR=\d+ SKIP=\d+.*)$")
_STAMP = re.compile(r"^\d\d:\d\d:\d\d\s+")


@dataclass
class MartsOutcome:
    """What building the eval marts did: `ok` when dbt built every model and passed every
    test; otherwise `problems` says what failed, in dbt's words."""

    ok: bool
    db_path: Path
    seconds: float
    command: list[str]
    log_path: Path
    counts: str | None = None  # dbt's "PASS=.. WARN=.. ERROR=.. SKIP=.." summary
    problems: list[str] = field(default_factory=list)
    returncode: int | None = None


def dbt_executable() -> str:
    """The dbt beside this interpreter (`make` does not activate the venv), else on PATH."""
    beside = Path(sys.executable).with_name("dbt")
    if beside.exists():
        return str(beside)
    return shutil.which("dbt") or "dbt"


def dbt_command(home: Path, *, dbt: str | None = None) -> list[str]:
    """The `dbt build` of the eval models into `home`'s evaluations database."""
    work = Path(home) / EVALS_DIR / DBT_DIR
    return [
        dbt or dbt_executable(),
        "build",
        "--project-dir",
        str(DBT_PROJECT_DIR),
        "--profiles-dir",
        str(DBT_PROJECT_DIR),
        "--target",
        TARGET,
        "--select",
        SELECTOR,
        "--threads",
        "1",
        "--target-path",
        str(work / "target"),
        "--log-path",
        str(work / "logs"),
    ]


def build_eval_marts(
    home: Path, *, dbt: str | None = None, timeout_s: float = TIMEOUT_S
) -> MartsOutcome:
    """Build the eval marts of `home` (see the module's docstring); never raises for dbt's
    failure, which the outcome reports."""
    home = Path(home).resolve()
    db_path = evals_path(home)
    command = dbt_command(home, dbt=dbt)
    log_path = Path(command[command.index("--log-path") + 1]) / "dbt.log"
    started = time.monotonic()

    def failed(problem: str) -> MartsOutcome:
        return MartsOutcome(
            ok=False,
            db_path=db_path,
            seconds=time.monotonic() - started,
            command=command,
            log_path=log_path,
            problems=[problem],
        )

    if not db_path.is_file():
        return failed(f"no evaluations recorded: {db_path} does not exist")
    # dbt writes the marts into the evaluations' file: not while an eval writes its episodes
    # (that eval builds them when it ends), nor while another build of the marts does.
    lock = writer_lock(db_path.parent)
    try:
        lock.acquire()
    except Locked as exc:
        return failed(f"{exc}; it builds the marts when it ends")
    try:
        proc = _run_dbt(command, home, timeout_s)
    except FileNotFoundError:
        return failed(f"dbt not found ({command[0]}): install dbt-core and dbt-duckdb")
    except subprocess.TimeoutExpired:
        return failed(f"dbt did not finish in {timeout_s:.0f} s")
    finally:
        lock.release()
    lines = [_STAMP.sub("", line).rstrip() for line in proc.stdout.splitlines()]
    counts = next((m.group(1) for line in lines if (m := _DONE.search(line))), None)
    ok = proc.returncode == 0
    return MartsOutcome(
        ok=ok,
        db_path=db_path,
        seconds=time.monotonic() - started,
        command=command,
        log_path=log_path,
        counts=counts,
        problems=[] if ok else problems_of(lines, proc.stderr),
        returncode=proc.returncode,
    )


def _run_dbt(command: list[str], home: Path, timeout_s: float) -> subprocess.CompletedProcess:
    """`command` run as the marts' dbt build runs (FileNotFoundError, TimeoutExpired raised)."""
    env = {
        **os.environ,
        # The profile's `evals` target reads its database from here (absolute: dbt changes
        # into the project folder first).
        "ENVFOUNDRY_HOME": str(home),
        "DO_NOT_TRACK": "1",
        "DBT_SEND_ANONYMOUS_USAGE_STATS": "false",
    }
    for variable in ("DBT_TARGET_PATH", "DBT_LOG_PATH", "DBT_PROFILES_DIR", "DBT_PROJECT_DIR"):
        env.pop(variable, None)  # the command line says where, not the caller's shell
    return subprocess.run(
        command,
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout_s,
        check=False,
    )


def problems_of(lines: list[str], stderr: str = "", *, most: int = 12) -> list[str]:
    """What dbt said failed: the lines after its "Completed with N errors" summary (each
    failing node and its reason), else every line naming a failure or an error, else the
    last lines it printed."""
    start = next((i for i, line in enumerate(lines) if line.startswith("Completed with")), None)
    if start is not None:
        found = [line for line in lines[start:] if line.strip() and not line.startswith("Done.")]
    else:
        found = [line for line in lines if _PROBLEM.search(line) and "START" not in line]
    if not found:
        found = [line for line in (lines + stderr.splitlines()) if line.strip()][-most:]
    if len(found) > most:
        found = found[:most] + [f"... {len(found) - most} more line(s) in dbt's log"]
    return found


def format_marts(outcome: MartsOutcome, home: Path) -> list[str]:
    """The lines printed after building the marts."""
    if outcome.ok:
        return [
            f"Eval marts built in {outcome.seconds:.1f} s ({outcome.counts or 'dbt passed'}): "
            f"{', '.join(MARTS)} in {outcome.db_path}",
        ]
    lines = [
        f"Eval marts NOT built (dbt exit {outcome.returncode}): the episodes are recorded in "
        f"{outcome.db_path} all the same; dbt said:",
        *(f"  {line}" for line in outcome.problems),
        f"  dbt's log: {outcome.log_path}",
        f"  build them again with: envfoundry eval --leaderboard --home {home}",
    ]
    if outcome.returncode is None:
        lines[0] = (
            f"Eval marts NOT built: the episodes are recorded in {outcome.db_path} all the same:"
        )
    return lines
