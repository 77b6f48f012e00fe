"""The `envfoundry` command: build the asset graph through Dagster, and play environments."""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from synthesis.config import PROFILES

# Bound to the real stdout now: builds redirect sys.stdout into the build log.
console = Console(file=sys.stdout)


def _configure_environment(home: Path, profile: str, seed: int) -> None:
    """Everything a build reads comes from here, so the UI (make ui) sees the same instance."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["ENVFOUNDRY_HOME"] = str(home)
    os.environ["ENVFOUNDRY_PROFILE"] = profile
    os.environ["ENVFOUNDRY_SEED"] = str(seed)
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    instance_config = dagster_home / "dagster.yaml"
    if not instance_config.exists():
        # Offline by default: no telemetry leaves the machine.
        instance_config.write_text("telemetry:\n  enabled: false\n")
    os.environ.setdefault("DO_NOT_TRACK", "1")


def build(profile: str, seed: int, home: Path) -> int:
    from orchestration.build import run_build

    _configure_environment(home, profile, seed)
    started = time.perf_counter()
    console.print(f"[bold]EnvFoundry build[/bold] profile={profile} seed={seed} home={home}")
    with Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        transient=False,
    ) as progress:
        outcome = run_build(progress)
    from orchestration.summary import print_summary

    print_summary(console, home, outcome, time.perf_counter() - started)
    return 0 if outcome.ok else 1


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:2] == ["env", "run"]:
        from orchestration.env_cli import env_run_main

        return env_run_main(argv[2:])
    if argv[:2] == ["env", "shell"]:
        from orchestration.env_cli import env_shell_main

        return env_shell_main(argv[2:])

    parser = argparse.ArgumentParser(prog="envfoundry", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="materialize the whole asset graph offline, in-process")
    b.add_argument("--profile", choices=sorted(PROFILES), default="default")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument(
        "--home", type=Path, default=None, help="output folder (default: $ENVFOUNDRY_HOME or ./var)"
    )
    env = sub.add_parser("env", help="run or play one environment in the sandbox")
    env.add_argument("action", choices=["run", "shell"])
    args = parser.parse_args(argv)
    if args.command == "build":
        home = (args.home or Path(os.environ.get("ENVFOUNDRY_HOME", "var"))).resolve()
        return build(args.profile, args.seed, home)
    parser.error("unknown command")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
