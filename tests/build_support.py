"""Helpers for tests that run whole builds: the CLI in a subprocess, and warehouse queries."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import duckdb

REPO = Path(__file__).resolve().parents[1]


def run_build(
    home: Path, *, profile: str = "tiny", seed: int = 7, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess:
    """`envfoundry build` as a user runs it, in its own process and its own instance."""
    environment = {**os.environ, "DO_NOT_TRACK": "1", **(env or {})}
    environment.pop("DAGSTER_HOME", None)  # the CLI puts the instance under --home
    return subprocess.run(
        [
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
        ],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=900,
    )


def query(home: Path, sql: str) -> list[tuple]:
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        return con.execute(sql).fetchall()
    finally:
        con.close()
