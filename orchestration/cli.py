"""The `envfoundry` command: build the asset graph through Dagster, and play environments."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from synthesis.config import PROFILES

# Bound to the real stdout now: builds redirect sys.stdout into the build log.
console = Console(file=sys.stdout)


def _configure_environment(
    home: Path,
    profile: str,
    seed: int,
    *,
    envs: list[str] | None = None,
    catalogue: str | None = None,
    sandbox: str | None = None,
) -> None:
    """Everything a build reads comes from here, so the UI (make ui) sees the same instance."""
    home.mkdir(parents=True, exist_ok=True)
    os.environ["ENVFOUNDRY_HOME"] = str(home)
    os.environ["ENVFOUNDRY_PROFILE"] = profile
    os.environ["ENVFOUNDRY_SEED"] = str(seed)
    os.environ["ENVFOUNDRY_ENVS"] = json.dumps(envs or [])
    if catalogue is not None:
        os.environ["ENVFOUNDRY_CATALOGUE"] = catalogue
    if sandbox is not None:
        os.environ["ENVFOUNDRY_SANDBOX"] = sandbox
    dagster_home = home / "dagster"
    dagster_home.mkdir(parents=True, exist_ok=True)
    os.environ["DAGSTER_HOME"] = str(dagster_home)
    instance_config = dagster_home / "dagster.yaml"
    if not instance_config.exists():
        # Offline by default: no telemetry leaves the machine.
        instance_config.write_text("telemetry:\n  enabled: false\n")
    os.environ.setdefault("DO_NOT_TRACK", "1")


def _absolute_source(spec: str) -> str:
    """`--envs` paths are taken relative to where the command runs; module names as they are."""
    path_part, sep, cls = spec.rpartition(":")
    if not sep or not cls.isidentifier():
        path_part, sep, cls = spec, "", ""
    if path_part.endswith(".py") or os.sep in path_part or Path(path_part).exists():
        return str(Path(path_part).resolve()) + (f":{cls}" if sep else "")
    return spec


def preflight(envs: list[str], catalogue: str | None, sandbox: str) -> str | None:
    """Why this build cannot start, in one line (None: it can). Nothing is built before this."""
    from synthesis.environments.archetypes import known_archetypes
    from synthesis.environments.foreign import SourceError, resolve_sources
    from synthesis.environments.topics import CATALOGUE_PATH, CatalogueError, load_catalogue
    from synthesis.runtime import sandbox_refusal

    foreign = list(envs)
    if catalogue is not None and catalogue.lower() == "none" and not envs:
        return "nothing to build: --catalogue none needs at least one --envs source"
    if catalogue is None or catalogue.lower() != "none":
        path = Path(catalogue) if catalogue else CATALOGUE_PATH
        try:
            topics = load_catalogue(path, known=known_archetypes())
        except CatalogueError as exc:
            return str(exc)
        foreign += [t.source for t in topics if t.source]
        for topic in topics:
            if topic.source:
                try:
                    resolve_sources(topic.source, base=path.parent)
                except SourceError as exc:
                    return f"catalogue {path}: topic {topic.topic_id!r}: {exc}"
    for spec in envs:
        try:
            resolve_sources(spec)
        except SourceError as exc:
            return f"--envs: {exc}"
    if foreign:
        refusal = sandbox_refusal(sandbox)
        if refusal is not None:
            return refusal
    return None


def build(
    profile: str,
    seed: int,
    home: Path,
    *,
    envs: list[str] | None = None,
    catalogue: str | None = None,
    sandbox: str = "auto",
) -> int:
    from orchestration.build import run_build

    envs = [_absolute_source(e) for e in envs or []]
    problem = preflight(envs, catalogue, sandbox)
    if problem is not None:
        console.print(
            f"[bold red]envfoundry build: {problem}[/bold red]", highlight=False, soft_wrap=True
        )
        return 2
    _configure_environment(home, profile, seed, envs=envs, catalogue=catalogue, sandbox=sandbox)
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
    b.add_argument(
        "--envs",
        action="append",
        default=[],
        metavar="PATH",
        help="an existing environment class to build: file.py, file.py:Class, a directory of "
        ".py files, or package.module:Class (repeatable)",
    )
    b.add_argument(
        "--catalogue",
        default=None,
        metavar="FILE|none",
        help="topic catalogue (default: the shipped data/topics.json); 'none' builds only --envs",
    )
    b.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "process", "docker"],
        default=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
        help="where environment code runs (default auto: bwrap when usable). Code we did not "
        "compile never runs on 'process' unless you pass it explicitly",
    )
    env = sub.add_parser("env", help="run or play one environment in the sandbox")
    env.add_argument("action", choices=["run", "shell"])
    args = parser.parse_args(argv)
    if args.command == "build":
        home = (args.home or Path(os.environ.get("ENVFOUNDRY_HOME", "var"))).resolve()
        return build(
            args.profile,
            args.seed,
            home,
            envs=args.envs,
            catalogue=args.catalogue,
            sandbox=args.sandbox,
        )
    parser.error("unknown command")
    return 2


if __name__ == "__main__":
    raise SystemExit(main())
