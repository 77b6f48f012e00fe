"""`envfoundry env run` and `envfoundry env shell`: run or play an environment in the sandbox.

orchestration.cli passes the arguments after `env run` / `env shell`. Exit status 2 is a usage
error (bad arguments or inputs, an unavailable backend); 1 is a sandbox that could not start,
an environment that failed to load, or a run in which every call failed (each says why in one
line on stderr); calls that fail while others succeed are contained misbehaviour and exit 0,
with their errors and the session's status printed.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path
from typing import Any, TextIO

import orjson

from sandboxes.backends import BACKEND_NAMES, get_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.session import Session, open_session
from sandboxes.source import LOADERS, EnvSource
from sandboxes.statediff import diff_states
from sandboxes.workspace import workspace_tools_source
from synthesis.environments.analysis import AnalysisError, analyze_class

USAGE_ERROR = 2
# The sandbox did not start, the environment did not load, or not one call succeeded.
FAILURE = 1


def _common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--source",
        required=True,
        help="an environment file PATH.py or a module package.module[:Class]",
    )
    parser.add_argument(
        "--class",
        dest="class_name",
        help="the class to load (default: the single public class of the source)",
    )
    parser.add_argument("--state", type=Path, help="initial state, a JSON object file")
    parser.add_argument("--backend", default="auto", choices=("auto", *BACKEND_NAMES))
    parser.add_argument(
        "--timeout",
        type=float,
        default=Limits.call_timeout_s,
        help="seconds per tool call before the worker is killed",
    )
    parser.add_argument(
        "--loader",
        default="auto",
        choices=LOADERS,
        help="how the state gets in (auto: _load_scenario if the class has it, else the "
        "constructor if it asks for the state, else one attribute per key)",
    )
    parser.add_argument(
        "--dumper",
        default="auto",
        metavar="auto|attributes|METHOD",
        help="how the final state comes out (auto: get_env_state, get_state, dump_state or "
        "export_state if the class has one, else its public attributes)",
    )
    parser.add_argument(
        "--workspace", type=Path, help="a workspace directory for file/shell environments"
    )


def env_run_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog="envfoundry env run",
        description="Replay tool calls against an environment in the sandbox; one JSON line "
        "per call, then a final line with the final state and status.",
    )
    _common_arguments(parser)
    parser.add_argument(
        "--calls", type=Path, required=True, help='JSON lines: {"tool": NAME, "args": {...}}'
    )
    try:
        options = _parse(parser, argv)
        calls = _read_calls(options.calls)
        session = _start(options)
    except _Exit as done:
        return done.code
    with session:
        loaded = session.status == "ok"
        succeeded = 0
        for tool, args in calls:
            result = session.call(tool, args)
            succeeded += result.ok
            _emit(result.to_json())
        final = session.final_state()
        _emit({"final_state": final, "status": session.status, "reason": session.reason})
    if not loaded:
        _fail(parser.prog, session.reason)
        return FAILURE
    if calls and not succeeded:
        why = f"every call failed ({len(calls)} of {len(calls)})"
        _fail(parser.prog, why if session.status == "ok" else f"{why}; {session.reason}")
        return FAILURE
    return 0


def env_shell_main(
    argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    parser = argparse.ArgumentParser(
        prog="envfoundry env shell",
        description="Play an environment by hand: list its tools, call one with JSON "
        "arguments, see the result and what changed in the state.",
    )
    _common_arguments(parser)
    try:
        options = _parse(parser, argv)
        source = _source(options)
        code = source.read_code()
        session = _start(options, source)
    except (_Exit, SandboxError) as exc:
        if isinstance(exc, SandboxError):
            print(f"error: {exc}", file=sys.stderr)
            return USAGE_ERROR
        return exc.code
    with session:
        if session.status != "ok":
            _fail(parser.prog, session.reason)
            return FAILURE
        try:
            shell = _Shell(session, code, stdin or sys.stdin, stdout or sys.stdout)
        except AnalysisError as exc:  # no schemas, no shell
            _fail(parser.prog, f"cannot analyse the environment: {exc}")
            return USAGE_ERROR
        return shell.run()


class _Exit(Exception):
    def __init__(self, code: int) -> None:
        super().__init__(code)
        self.code = code


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage message already
        raise _Exit(int(exc.code or 0)) from None
    if options.timeout <= 0:
        _usage(parser.prog, "--timeout must be positive")
    return options


def _usage(prog: str, message: str) -> None:
    _fail(prog, message)
    raise _Exit(USAGE_ERROR)


def _fail(prog: str, message: str | None) -> None:
    """One line on stderr, whatever the message holds (a worker's stderr can span lines)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)


def _source(options: argparse.Namespace) -> EnvSource:
    try:
        source = EnvSource.parse(options.source, options.class_name, options.loader, options.dumper)
        if source.path is not None and not Path(source.path).is_file():
            raise SandboxError(f"no such environment file: {source.path}")
        code = source.read_code()  # also proves a module source exists
        if source.class_name is None:
            _require_single_class(code)
        return source
    except SandboxError as exc:
        _usage("envfoundry env", str(exc))
        raise


def _require_single_class(code: str) -> None:
    """Without --class the source must define one public class; parsing is not running it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return  # the environment's own fault: reported by the sandbox as a failed load
    public = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]
    if len(public) != 1:
        raise SandboxError(
            f"the source defines {len(public)} public classes {public}; choose one with --class"
        )


def _read_json(path: Path, what: str) -> Any:
    try:
        return orjson.loads(path.read_bytes())
    except OSError as exc:
        _usage("envfoundry env", f"cannot read {what} {path}: {exc.strerror}")
    except orjson.JSONDecodeError as exc:
        _usage("envfoundry env", f"{what} {path} is not JSON: {exc}")


def _read_calls(path: Path) -> list[tuple[str, dict]]:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        _usage("envfoundry env run", f"cannot read calls {path}: {exc}")
    calls = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = orjson.loads(line)
        except orjson.JSONDecodeError as exc:
            _usage("envfoundry env run", f"{path}:{number}: not JSON: {exc}")
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("tool"), str)
            or not isinstance(call.get("args", {}), dict)
        ):
            _usage(
                "envfoundry env run", f'{path}:{number}: expected {{"tool": NAME, "args": {{...}}}}'
            )
        calls.append((call["tool"], call.get("args", {})))
    return calls


def _start(options: argparse.Namespace, source: EnvSource | None = None) -> Session:
    source = source or _source(options)
    state = None
    if options.state is not None:
        state = _read_json(options.state, "state")
        if not isinstance(state, dict):
            _usage("envfoundry env", f"state {options.state} must be a JSON object")
    try:
        get_backend(options.backend)
    except SandboxError as exc:
        _usage("envfoundry env", str(exc))
    try:
        return open_session(
            source,
            state,
            backend=options.backend,
            limits=Limits(call_timeout_s=options.timeout),
            workspace=options.workspace,
        )
    except SandboxError as exc:
        _fail("envfoundry env", str(exc))
        raise _Exit(FAILURE) from None


def _emit(record: dict[str, Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    out.write(orjson.dumps(record, option=orjson.OPT_NON_STR_KEYS).decode() + "\n")
    out.flush()


SHELL_HELP = """commands:
  tools                 list the tools with their argument schemas
  NAME {json args}      call a tool (also: call NAME {json args}); shows result and state diff
  state                 print the whole current state
  help                  this text
  quit                  leave (also end of input)"""


class _Shell:
    def __init__(self, session: Session, code: str, stdin: TextIO, stdout: TextIO) -> None:
        self.session = session
        self.stdin = stdin
        self.out = stdout
        self.schemas = self._schemas(code)

    def _schemas(self, code: str) -> list[dict[str, Any]]:
        # The one source of tool schemas: the analysis, which applies the worker's tool rule.
        tools = analyze_class(code, self.session.info.get("class"))
        if self.session.workspace_path is not None:
            defined = {tool["name"] for tool in tools}
            builtins = analyze_class(*workspace_tools_source())
            tools += [tool for tool in builtins if tool["name"] not in defined]
        return tools

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def run(self) -> int:
        info = self.session.info
        self.say(
            f"{info.get('class')} in the {self.session.backend} sandbox "
            f"({len(self.schemas)} tools). Type 'help' for commands."
        )
        interactive = self.stdin.isatty()
        while True:
            if interactive:
                self.out.write("env> ")
                self.out.flush()
            line = self.stdin.readline()
            if not line:
                return 0
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line in ("quit", "exit"):
                return 0
            self.command(line)
            if self.session.status != "ok":
                self.say(f"session {self.session.status}: {self.session.reason}")
                return 0

    def command(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word == "help":
            self.say(SHELL_HELP)
        elif word == "tools":
            for tool in self.schemas:
                function = tool["schema"]["function"]
                self.say(f"{tool['name']} ({tool['kind']}): {function.get('description', '')}")
                self.say("    " + orjson.dumps(function.get("parameters", {})).decode())
        elif word == "state":
            self.say(
                orjson.dumps(
                    self.session.final_state(), option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS
                ).decode()
            )
        else:
            if word == "call":
                word, _, rest = rest.strip().partition(" ")
            self.call(word, rest.strip())

    def call(self, tool: str, text: str) -> None:
        try:
            args = orjson.loads(text) if text else {}
        except orjson.JSONDecodeError as exc:
            self.say(f"arguments must be a JSON object: {exc}")
            return
        if not isinstance(args, dict):
            self.say("arguments must be a JSON object")
            return
        if tool not in {t["name"] for t in self.schemas}:
            self.say(f"unknown tool {tool!r}; 'tools' lists them")
            return
        before = self.session.final_state()
        result = self.session.call(tool, args)
        if result.ok:
            self.say(
                "result: " + orjson.dumps(result.result, option=orjson.OPT_NON_STR_KEYS).decode()
            )
        else:
            self.say(f"error: {result.error}")
        after = self.session.final_state()
        if before is not None and after is not None:
            changes = diff_states(before, after)
            self.say("state: unchanged" if not changes else "state changes:")
            for change in changes:
                self.say("  " + change)


__all__ = ["env_run_main", "env_shell_main"]
