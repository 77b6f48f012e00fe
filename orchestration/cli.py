"""The `envfoundry` command: build the asset graph through Dagster, and play environments."""

from __future__ import annotations

import argparse
import gc
import os
import sys
from pathlib import Path

from orchestration.build_process import build, stop_warm
from orchestration.fastrun import warm
from synthesis.config import PROFILES
from synthesis.environments.splits import parse_holdout


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # The commands with parsers of their own, imported only when asked for.
    if argv[:1] == ["ui"]:
        from orchestration.ui import ui_main

        return ui_main(argv[1:])
    if argv[:2] == ["env", "run"]:
        from orchestration.player.run import env_run_main

        return env_run_main(argv[2:])
    if argv[:2] == ["env", "shell"]:
        from orchestration.player.shell import env_shell_main

        return env_shell_main(argv[2:])
    if argv[:2] == ["env", "list"]:
        from orchestration.player.listing import env_list_main

        return env_list_main(argv[2:])
    if argv[:2] == ["env", "serve"]:
        from orchestration.player.mcp_server import env_serve_main

        return env_serve_main(argv[2:])
    if argv[:1] == ["eval"]:
        # The engine's command, then the model added as a partition in the home's instance.
        from orchestration.evaluation import eval_main

        return eval_main(argv[1:])

    parser = argparse.ArgumentParser(prog="envfoundry", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser(
        "build",
        help="materialize the whole asset graph offline: runs of the code location's jobs, "
        "launched through the Dagster instance under --home (see them with make ui)",
    )
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
        "--corpus",
        default=None,
        metavar="FILE|none",
        help="a JSONL of user requests the `topic` LLM stage mines topics from (read only with "
        "an endpoint; default: the shipped data/task_corpus.jsonl)",
    )
    b.add_argument(
        "--allow-empty",
        action="store_true",
        help="build even from an empty catalogue, and publish whatever the build made, even "
        "no task at all (the publish floor set to 0, as --min-published 0)",
    )
    b.add_argument(
        "--min-published",
        type=_whole_number,
        default=None,
        metavar="N",
        help="the publish floor: a build that would publish fewer than N tasks keeps the "
        "current dataset and exits 3, naming the stage that lost them (default: "
        "$ENVFOUNDRY_MIN_PUBLISHED, else the profile's: 1 task for tiny and small, a tenth of "
        "the candidates asked for by default and full)",
    )
    b.add_argument(
        "--sandbox",
        choices=["auto", "bwrap", "process", "docker"],
        default=os.environ.get("ENVFOUNDRY_SANDBOX", "auto"),
        help="where environment code runs (default auto: bwrap when usable). Code we did not "
        "compile never runs on 'process' unless you pass it explicitly",
    )
    b.add_argument(
        "--parallel",
        type=int,
        default=None,
        metavar="N",
        help="environment runs at once (default: one per core, from 2 to 8)",
    )
    b.add_argument(
        "--daemon",
        action="store_true",
        help="run the environments as a backfill the Dagster daemon starts from the "
        "instance's queue (shown under Backfills in the UI) instead of launching them directly",
    )
    b.add_argument(
        "--full",
        action="store_true",
        help="make every stage of every environment and publish again, even what is current "
        "(by default a build reuses what nothing it is made from changed: definition, "
        "settings, code)",
    )
    b.add_argument(
        "--holdout-archetypes",
        default="",
        metavar="A,B",
        help="archetypes whose environments are all test (comma-separated, e.g. "
        "ledger,inventory): the test split then measures generalization to unseen archetypes",
    )
    b.add_argument(
        "--no-warm",
        dest="keep_warm",
        action="store_false",
        help="keep no code server and run host up for the next build (by default they stay "
        f"${{{warm.IDLE_VARIABLE}}} seconds, {warm.DEFAULT_IDLE_S} unless set, holding about "
        "1 GB of memory: the build's summary says how much; a next build of the same home "
        "then starts about 8 s sooner)",
    )
    sub.add_parser("ui", help="serve the Dagster UI on a home's instance (--home, --port)")
    sub.add_parser(
        "eval",
        help="evaluate a model (OPENAI_BASE_URL) on a home's published tasks (--home, --model, "
        "--split, --attempts, --limit, --tasks); results in HOME/evals/evals.duckdb",
    )
    stop = sub.add_parser(
        "stop",
        help="end the code server and run host a build left warm for the next one "
        f"(they end by themselves after ${{{warm.IDLE_VARIABLE}}} seconds idle, default "
        f"{warm.DEFAULT_IDLE_S})",
    )
    stop.add_argument(
        "--home", type=Path, default=None, help="output folder (default: $ENVFOUNDRY_HOME or ./var)"
    )
    env = sub.add_parser(
        "env",
        help="list what a build published; run, play or serve (to MCP clients) one "
        "environment in the sandbox",
    )
    env.add_argument("action", choices=["list", "run", "shell", "serve"])
    args = parser.parse_args(argv)
    if args.command == "build":
        home = (args.home or Path(os.environ.get("ENVFOUNDRY_HOME", "var"))).resolve()
        return build(
            args.profile,
            args.seed,
            home,
            envs=args.envs,
            catalogue=args.catalogue,
            corpus=args.corpus,
            sandbox=args.sandbox,
            allow_empty=args.allow_empty,
            min_published=args.min_published,
            parallel=args.parallel,
            daemon=args.daemon,
            holdout_archetypes=parse_holdout(args.holdout_archetypes),
            full=args.full,
            keep_warm=args.keep_warm,
        )
    if args.command == "stop":
        return stop_warm((args.home or Path(os.environ.get("ENVFOUNDRY_HOME", "var"))).resolve())
    parser.error("unknown command")
    return 2


def _whole_number(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"{value} is negative (0 publishes even nothing)")
    return value


def run() -> int:
    """The `envfoundry` program (and `python -m orchestration.cli`): `main`, with the heap
    frozen before Python's own exit. That exit runs the at-exit handlers and flushes the
    streams, then collects garbage over everything a build imported (Dagster, gRPC,
    SQLAlchemy, dbt) as it tears the modules down: 1.05 s after the summary of a one-topic
    rebuild on the 2-core machine, 0.18 s frozen. Tests call `main` in their own process,
    which goes on collecting. A Ctrl-C the command did not handle itself (a build says what
    it kept) ends it with one line, not a traceback; a reader that closed the pipe, quietly."""
    try:
        code = main()
    except KeyboardInterrupt:
        sys.stderr.write("envfoundry: interrupted\n")
        code = 130
    except BrokenPipeError:
        # Its reader left (`envfoundry env list --json | head`): not an error of ours. The
        # exit's flush would hit the closed pipe again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = 141  # a shell's code for a command SIGPIPE ended
    gc.freeze()
    return code


if __name__ == "__main__":
    raise SystemExit(run())
