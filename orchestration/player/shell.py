"""`envfoundry env shell`: play an environment by hand or from a script on stdin: list its
tools, call one with JSON arguments, see the result and what changed in the state.

Exit status (SHELL_EXIT_STATUS below): an invalid call's problem is printed and the session
goes on; 0 at quit or end of input, 2 on a usage error, 3 when the environment cannot load or
dump its state, 4 when a call hung or killed the worker (the session ends there).
"""

from __future__ import annotations

import sys
from typing import Any, TextIO

from orchestration.player.arguments import Arguments, signature, tool_parameters
from orchestration.player.options import (
    CALL_CRASHED,
    LOAD_ERROR,
    OK,
    Stop,
    env_parser,
    parse_options,
    print_error,
    report_stop,
)
from orchestration.player.sandbox import analysed_tools, open_sandbox
from orchestration.player.targets import Target, resolve_target
from sandboxes.session import Session
from sandboxes.statediff import diff_states
from synthesis import codec

SHELL_EXIT_STATUS = """exit status:
  0  the session ended (quit or end of input); invalid calls and tool errors are only shown
  2  usage error: bad options, unreadable or invalid state file, unknown id, no published
     dataset
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call hung past --timeout or killed the worker (the session ends there)"""


def env_shell_main(
    argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    prog = "envfoundry env shell"
    parser = env_parser(
        prog,
        "Play an environment by hand or from a script on stdin: list its tools, call one "
        "with JSON arguments, see the result and what changed in the state.",
        SHELL_EXIT_STATUS,
    )
    try:
        options = parse_options(parser, argv)
        target = resolve_target(options)
        session = open_sandbox(options, target)
    except Stop as stop:
        return report_stop(prog, stop)
    with session:
        if session.status != "ok":
            print_error(prog, session.reason)
            return LOAD_ERROR
        shell = _Shell(session, target, stdin or sys.stdin, stdout or sys.stdout)
        code = shell.run()
    if code != OK:
        print_error(prog, session.reason)
    return code


SHELL_HELP = """commands:
  tools                      list the tools with their arguments (NAME?: may be left out)
  call NAME {json args}      call a tool (also: NAME {json args}); shows result and state diff
  state                      print the whole current state
  task                       print the scenario's task (with --scenario)
  help                       this text
  quit                       leave (also: exit, end of input)"""


class _Shell:
    def __init__(self, session: Session, target: Target, stdin: TextIO, stdout: TextIO) -> None:
        self.session = session
        self.target = target
        self.stdin = stdin
        self.out = stdout
        self.tools = analysed_tools(session, target)
        self.arguments = Arguments(self.tools, session.tools, target.code)
        self.state: dict[str, Any] | None = None  # the last state read, to diff against
        self.code = OK

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def run(self) -> int:
        """Commands until quit or end of input; the exit status (3 or 4 when the worker died)."""
        if self.target.task is not None:
            self.say(f"Task: {self.target.task}")
        for note in self.target.notes:
            self.say(f"({note})")
        self.say(
            f"{self.session.info.get('class')} in the {self.session.backend} sandbox "
            f"({len(self.arguments.names)} tools). Type 'help' for commands."
        )
        interactive = self.stdin.isatty()
        while True:
            if interactive:
                self.out.write("env> ")
                self.out.flush()
            line = self.stdin.readline()
            if not line:
                return OK
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line in ("quit", "exit"):
                return OK
            self.command(line)
            if self.session.status != "ok":
                self.say(f"session {self.session.status}: {self.session.reason}")
                return self.code

    def command(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word == "help":
            self.say(SHELL_HELP)
        elif word == "tools":
            self.list_tools()
        elif word == "state":
            state = self.read_state()
            if state is not None:
                self.say(codec.dumps_pretty(state).decode().rstrip())
        elif word == "task":
            self.say(f"Task: {self.target.task}" if self.target.task else "no task (no --scenario)")
        else:
            if word == "call":
                word, _, rest = rest.strip().partition(" ")
            self.call(word, rest.strip())

    def list_tools(self) -> None:
        described = {tool["name"]: tool for tool in self.tools}
        for name in self.arguments.names:
            tool = described.get(name)
            if tool is None:
                self.say(f"{name}: arguments not known (no schema)")
                continue
            function = tool["schema"].get("function") or tool["schema"]
            self.say(f"{signature(tool)}  [{tool['kind']}]  {function.get('description', '')}")
            properties = tool_parameters(tool).get("properties") or {}
            for param, schema in properties.items():
                if schema.get("description"):
                    self.say(f"    {param}: {schema['description']}")

    def read_state(self) -> dict[str, Any] | None:
        """The current state; a state that cannot be dumped ends the session (status 3)."""
        state = self.session.final_state()
        if state is None and self.session.status != "ok" and self.code == OK:
            self.code = LOAD_ERROR
        self.state = state
        return state

    def call(self, tool: str, text: str) -> None:
        try:
            args = codec.loads(text) if text else {}
        except ValueError as exc:
            self.say(f"invalid call: arguments must be a JSON object: {exc}")
            return
        if not isinstance(args, dict):
            self.say("invalid call: arguments must be a JSON object")
            return
        problem = self.arguments.problem(tool, args)
        if problem is not None:
            self.say(f"invalid call: {problem}")
            return
        before = self.state if self.state is not None else self.read_state()
        if before is None:
            return
        result = self.session.call(tool, args)
        if result.ok:
            self.say("result: " + codec.dumps_str(result.result))
        else:
            self.say(f"error: {result.error}")
        if self.session.status != "ok":
            self.code = CALL_CRASHED  # the call hung or killed the worker
            return
        after = self.read_state()
        if after is not None:
            changes = diff_states(before, after)
            self.say("state: unchanged" if not changes else "state changes:")
            for change in changes:
                self.say("  " + change)
