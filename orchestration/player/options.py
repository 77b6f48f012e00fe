"""What the player's commands share: their options, exit statuses, and how one stops."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from sandboxes.backends import BACKEND_NAMES
from sandboxes.limits import Limits
from sandboxes.source import LOADERS

# Exit statuses (run.py and shell.py say which means what for each).
OK = 0
USAGE_ERROR = 2
LOAD_ERROR = 3
CALL_CRASHED = 4


class Stop(Exception):
    """End the command with `code`, saying `message` (if any) in one line on stderr."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def usage(message: str) -> Stop:
    return Stop(USAGE_ERROR, message)


def env_parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--source", help="an environment file PATH.py or a module package.module[:Class]"
    )
    where.add_argument(
        "--env",
        dest="env_id",
        metavar="ENV_ID",
        help="an environment a build published (from the warehouse of --home)",
    )
    where.add_argument(
        "--task",
        metavar="FILE[:LINE]",
        help="a task line of a built RL shard (rl/SPLIT.jsonl, LINE from 1, default 1): its "
        "environment (the bundled code beside the shard), initial state, tools and task",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="with --env: the build's home (default: $ENVFOUNDRY_HOME or ./var)",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--state", type=Path, help="initial state: a file holding one JSON object")
    start.add_argument("--state-id", help="with --env: one of its initial states")
    start.add_argument(
        "--scenario",
        help="with --env: a scenario; starts from its initial state, in its world (clock, "
        "randomness), and the shell shows its task",
    )
    parser.add_argument(
        "--class",
        dest="class_name",
        help="with --source: the class to load (default: the single public class)",
    )
    parser.add_argument("--backend", default="auto", choices=("auto", *BACKEND_NAMES))
    parser.add_argument(
        "--timeout",
        type=float,
        default=Limits.call_timeout_s,
        help="seconds per tool call before the worker is killed",
    )
    parser.add_argument(
        "--loader",
        choices=LOADERS,
        help="with --source: how the state gets in (auto: _load_scenario if the class has it, "
        "else the constructor if it asks for the state, else one attribute per key)",
    )
    parser.add_argument(
        "--dumper",
        metavar="auto|attributes|METHOD",
        help="with --source: how the final state comes out (auto: get_env_state, get_state, "
        "dump_state or export_state if the class has one, else its public attributes)",
    )
    parser.add_argument(
        "--workspace", type=Path, help="a workspace directory for file/shell environments"
    )
    return parser


def parse_options(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage message already
        raise Stop(int(exc.code or 0)) from None
    if options.timeout <= 0:
        raise usage("--timeout must be positive")
    if options.env_id is None:
        given = [
            f"--{n.replace('_', '-')}"
            for n in ("home", "state_id", "scenario")
            if getattr(options, n) is not None
        ]
        if given:
            raise usage(f"{', '.join(given)}: only with --env (an environment a build published)")
    if options.env_id is not None or options.task is not None:
        # A built environment is loaded the way the build loaded it, never otherwise.
        given = [
            f"--{n}"
            for n, v in (
                ("class", options.class_name),
                ("loader", options.loader),
                ("dumper", options.dumper),
            )
            if v is not None
        ]
        if given:
            where = "--env" if options.task is None else "--task"
            origin = "the build" if options.task is None else "the task line"
            raise usage(f"{', '.join(given)}: with {where} these come from {origin}")
    return options


def report_stop(prog: str, stop: Stop) -> int:
    if stop.message:
        print_error(prog, stop.message)
    return stop.code


def print_error(prog: str, message: str | None) -> None:
    """One line on stderr, whatever the message holds (a worker's stderr can span lines)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)


def print_notes(prog: str, notes: list[str]) -> None:
    """What was chosen for the user (a target's notes), a line each on stderr."""
    for note in notes:
        print(f"{prog}: {note}", file=sys.stderr)
