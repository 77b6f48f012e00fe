"""`envfoundry env run`: replay tool calls against an environment in the sandbox, one JSON line
per call, then a final line with the final state, status, reason and exit code.

Exit status (EXIT_STATUS below, the --help epilog):
  0  every call returned; a domain error the tool returns ({"success": false, ...}) is a result
  2  usage error: bad options, an unreadable or invalid calls or state file, an unknown id,
     no published dataset, no real sandbox for foreign code, or a call refused by argument
     validation (that call is reported on its line and not run; the others still run)
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call raised, hung past --timeout, or the worker was killed
When several apply, the first of 3, 4, 2 in that order is the status. Each non-zero status
says why in one line on stderr, and in the final JSON line.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from orchestration.player.arguments import Arguments
from orchestration.player.options import (
    CALL_CRASHED,
    LOAD_ERROR,
    OK,
    USAGE_ERROR,
    Stop,
    env_parser,
    parse_options,
    print_error,
    print_notes,
    report_stop,
    usage,
)
from orchestration.player.sandbox import analysed_tools, open_sandbox
from orchestration.player.targets import Target, resolve_target
from sandboxes.session import CallResult, Session
from synthesis import codec

EXIT_STATUS = """exit status:
  0  every call returned (a domain error the tool returns, {"success": false}, is a result)
  2  usage error: bad options, unreadable or invalid calls/state file, unknown id, no
     published dataset, or a call refused by argument validation (reported on its line)
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call raised, hung past --timeout, or the worker was killed
  when several apply: 3, then 4, then 2"""


@dataclass
class _Tally:
    """What became of each call of a run, for the exit status and the final line's reason."""

    total: int = 0
    refused: list[str] = field(default_factory=list)  # invalid, not sent
    raised: list[str] = field(default_factory=list)  # the tool raised; the worker lives
    killed: list[str] = field(default_factory=list)  # hung, killed, or the worker exited
    not_run: int = 0  # after the worker died


def env_run_main(argv: list[str]) -> int:
    prog = "envfoundry env run"
    parser = env_parser(
        prog,
        "Replay tool calls against an environment in the sandbox; one JSON line per call, "
        "then a final line with the final state, status, reason and exit code.",
        EXIT_STATUS,
    )
    parser.add_argument(
        "--calls", type=Path, required=True, help='JSON lines: {"tool": NAME, "args": {...}}'
    )
    try:
        options = parse_options(parser, argv)
        calls = _read_calls(options.calls)
        target = resolve_target(options)
        print_notes(prog, target.notes)
        session = open_sandbox(options, target)
    except Stop as stop:
        return report_stop(prog, stop)
    with session:
        return _run(prog, session, target, calls, options.calls)


def _run(prog: str, session: Session, target: Target, calls: list, calls_path: Path) -> int:
    loaded = session.status == "ok"
    arguments = Arguments(analysed_tools(session, target), session.tools, target.code)
    tally = _Tally(total=len(calls))
    for number, tool, args in calls:
        where = f"{calls_path}:{number}"
        problem = arguments.problem(tool, args) if loaded else None
        if problem is not None:
            print_error(prog, f"{where}: {problem}")
            tally.refused.append(f"{where}: {problem}")
            _emit({"tool": tool, "ok": False, "result": None, "error": f"usage error: {problem}"})
            continue
        _emit(_call(session, tool, args, where, tally).to_json())
    alive = session.status == "ok"
    final = session.final_state()
    if not loaded or (alive and session.status != "ok"):
        code, status, reason = LOAD_ERROR, "error", session.reason
    else:
        code, status, reason = _outcome(session, tally)
    _emit({"final_state": final, "status": status, "reason": reason, "exit_code": code})
    if code in (LOAD_ERROR, CALL_CRASHED):
        print_error(prog, reason)
    return code


def _call(
    session: Session, tool: str, args: dict[str, Any], where: str, tally: _Tally
) -> CallResult:
    alive = session.status == "ok"
    result = session.call(tool, args)
    tally.not_run += not alive
    if not result.ok and alive:
        # A worker still answering after a failed call means the tool raised; a worker gone
        # means the call hung or killed it.
        failed = tally.raised if session.status == "ok" else tally.killed
        failed.append(f"{where} {tool}: {result.error}")
    return result


def _outcome(session: Session, tally: _Tally) -> tuple[int, str, str | None]:
    """(exit code, status, reason) of a run whose environment loaded and dumped its state."""
    crashed = tally.raised + tally.killed
    if crashed:
        reason = f"{len(crashed)} of {tally.total} calls did not return (first: {crashed[0]})"
        if tally.not_run:
            reason += f"; {tally.not_run} not run after the worker died"
        return CALL_CRASHED, "killed" if tally.killed else "call_error", reason
    if tally.refused:
        reason = f"{len(tally.refused)} of {tally.total} calls refused (first: {tally.refused[0]})"
        return USAGE_ERROR, "invalid_calls", reason
    return OK, "ok", None


def _read_calls(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise usage(f"cannot read calls {path}: {exc}") from None
    calls = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = codec.loads(line)
        except ValueError as exc:
            raise usage(f"{path}:{number}: not JSON: {exc}") from None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("tool"), str)
            or not isinstance(call.get("args", {}), dict)
        ):
            raise usage(f'{path}:{number}: expected {{"tool": NAME, "args": {{...}}}}')
        calls.append((number, call["tool"], call.get("args", {})))
    return calls


def _emit(record: dict[str, Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    out.write(codec.dumps_str(record) + "\n")
    out.flush()
