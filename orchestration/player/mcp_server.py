"""`envfoundry env serve --mcp`: one environment's tools for any MCP client, over stdio.

The environment is chosen as for `env run` / `env shell` (targets.py: a file,
a built environment with one of its scenarios or states, or a task line of an RL shard) and
runs in the same sandbox by the same rules. Each connection plays a fresh copy: the sandbox
session opens from the initial state when the connection starts and closes with it, so a
client that reconnects starts over (over stdio a connection is one run of the command).

What a client sees:
  tools      each environment tool, with its JSON schema as inputSchema and its docstring
             as description (readOnlyHint when the tool only reads the state). A call is
             checked against the schema first; a refused call, an exception in the tool or
             a dead worker is a result with isError and a one-line text saying why. A value
             the tool returns, {"success": false, ...} included, is a result: JSON text (and
             structuredContent when it is an object), as the agent sees it in the build.
             With a multi-turn task, also `ask_user` (message): the agent's text turn to
             the user who asked (a question, what it will do, its final reply), answered
             by the task's simulated user (synthesis/tasks/envfoundry_user.py: offline,
             deterministic, one per connection) with what it says next, or with "the
             conversation is over" once it has nothing more to say.
  resources  envfoundry://state, the current state (JSON); envfoundry://calls, every call
             of the connection and what it returned (JSON: the `shown` that
             envfoundry_reward.score_state holds a reply to); envfoundry://task, the task
             (with --scenario or --task)
  prompts    "task": the task as the user's message (with --scenario or --task)

A multi-turn task (one whose `user` record is set: a scenario's user_json, a task line's
`user`) is told as the user first says it, its opening, which holds back a detail the agent
must ask for, or asks for one thing first and the next once the agent has told them it is
done: the task resource, the prompt and the server's instructions carry the opening, and the
whole request is nowhere a client can read it.

stdout carries only the protocol; notes and errors go to stderr.
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
from mcp import types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from orchestration.player.arguments import Arguments, tool_parameters
from orchestration.player.options import (
    LOAD_ERROR,
    OK,
    USAGE_ERROR,
    Stop,
    env_parser,
    parse_options,
    print_error,
    print_notes,
    report_stop,
)
from orchestration.player.sandbox import analysed_tools, open_sandbox
from orchestration.player.targets import Target, resolve_target
from sandboxes.session import Session
from synthesis import codec
from synthesis.tasks.envfoundry_reward import observation
from synthesis.tasks.envfoundry_user import SimulatedUser

PROG = "envfoundry env serve"
STATE_URI = "envfoundry://state"
CALLS_URI = "envfoundry://calls"
TASK_URI = "envfoundry://task"
TASK_PROMPT = "task"
USER_TOOL = "ask_user"
USER_DONE = "The conversation is over: the user has nothing more to say."

SERVE_EXIT_STATUS = """exit status:
  0  the client closed the connection (a refused call, a tool error or a dead worker is
     reported to the client as a result with isError, not by the exit status)
  2  usage error: bad options, unreadable or invalid state or task file, unknown id, no
     published dataset, no real sandbox for foreign code
  3  the sandbox or the environment could not start or load (said on stderr)"""


def env_serve_main(argv: list[str]) -> int:
    parser = env_parser(
        PROG,
        "Serve an environment's tools to an MCP client (Claude Desktop, an agent framework, a "
        "trainer's rollout worker) over stdin/stdout; the tools run in the sandbox, and each "
        "connection starts from the initial state.",
        SERVE_EXIT_STATUS,
    )
    parser.add_argument(
        "--mcp",
        action="store_true",
        help="speak the Model Context Protocol on stdin/stdout (the one protocol served)",
    )
    try:
        options = parse_options(parser, argv)
        if not options.mcp:
            raise Stop(USAGE_ERROR, "say which protocol to serve: --mcp (the only one)")
        target = resolve_target(options)
        if target.user is not None:
            try:  # a record this simulator cannot play: said now, not when a client connects
                SimulatedUser(target.user)
            except ValueError as exc:
                raise Stop(USAGE_ERROR, f"the task's simulated user: {exc}") from None
        print_notes(PROG, target.notes)
    except Stop as stop:
        return report_stop(PROG, stop)
    stopped: Stop | None = None
    try:
        anyio.run(_serve, options, target)
    except* Stop as group:  # raised as the connection starts; anyio may wrap it in a group
        stopped = group.exceptions[0]
    except* KeyboardInterrupt:
        pass
    return OK if stopped is None else report_stop(PROG, stopped)


async def _serve(options: argparse.Namespace, target: Target) -> None:
    server = mcp_server(options, target)
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


class _Play:
    """One connection's environment: its sandbox session and what we know of its tools."""

    def __init__(self, session: Session, target: Target) -> None:
        self.session = session
        self.target = target
        self.tools = analysed_tools(session, target)
        self.arguments = Arguments(self.tools, session.tools, target.code)
        # A session is one conversation on one pair of pipes; the client may send requests
        # concurrently, so they take turns.
        self.turn = anyio.Lock()
        self.shown: list[dict[str, Any]] = []
        """Each call of the connection and what the client was answered (a reply is graded
        on what these showed: envfoundry_reward.score_state's `shown`)."""
        # A multi-turn task's user, fresh for each connection as the environment is, and the
        # conversation it reads (OpenAI messages): what it said, what the agent told it, and
        # the calls in between (a call since it last spoke is work, not stalling).
        self.user = SimulatedUser(target.user) if target.user is not None else None
        self.user_tool = _user_tool(target)
        self.conversation: list[dict[str, Any]] = []
        if self.user is not None:
            self.conversation.append({"role": "user", "content": self.user.opening})

    def answer(self, name: str, args: dict[str, Any], payload: Any) -> None:
        """Record what call `name(args)` showed the client."""
        self.shown.append(observation(name, dict(args), payload))
        if self.user is not None:
            self.conversation.append({"role": "tool", "name": name})

    def ask(self, message: str) -> str:
        """What the user says to the agent's `message`, or USER_DONE when it is over."""
        assert self.user is not None
        self.conversation.append({"role": "assistant", "content": message})
        reply = self.user.answer(self.conversation)
        if reply is None:
            return USER_DONE
        self.conversation.append({"role": "user", "content": reply})
        return reply

    async def blocking(self, function: Any, *args: Any) -> Any:
        """`function(*args)` on the session, in a thread, one at a time."""
        async with self.turn:
            return await anyio.to_thread.run_sync(function, *args)

    def gone(self) -> str | None:
        """Why the environment can no longer be played, or None."""
        if self.session.status == "ok":
            return None
        return (
            f"the environment's session is {self.session.status}: {self.session.reason}; "
            "reconnect to start over from the initial state"
        )


def mcp_server(options: argparse.Namespace, target: Target) -> Server:
    """The MCP server of `target`: each run (connection) opens a sandbox session of its own."""

    @asynccontextmanager
    async def connection(_server: Server) -> AsyncIterator[_Play]:
        session = await anyio.to_thread.run_sync(open_sandbox, options, target)
        try:
            if session.status != "ok":
                raise Stop(LOAD_ERROR, session.reason)
            yield _Play(session, target)
        finally:
            session.close()

    async def list_tools(ctx: Any, _params: Any) -> types.ListToolsResult:
        play: _Play = ctx.lifespan_context
        described = {tool["name"]: tool for tool in play.tools}
        tools = [_mcp_tool(name, described.get(name)) for name in play.arguments.names]
        if play.user is not None:
            tools.append(_user_mcp_tool(play.user_tool))
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx: Any, params: types.CallToolRequestParams) -> types.CallToolResult:
        play: _Play = ctx.lifespan_context
        args = params.arguments or {}
        if play.user is not None and params.name == play.user_tool:
            message = args.get("message")
            if set(args) != {"message"} or not isinstance(message, str) or not message.strip():
                return _failed(f"invalid call: {play.user_tool} takes one string, 'message'")
            # Not an environment call: it changes no state and is not in envfoundry://calls.
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=play.ask(message))]
            )
        problem = play.arguments.problem(params.name, args)
        if problem is not None:
            return play_failed(play, params.name, args, f"invalid call: {problem}")
        gone = play.gone()
        if gone is not None:
            return play_failed(play, params.name, args, f"not run: {gone}")
        result = await play.blocking(play.session.call, params.name, args)
        if result.ok:
            play.answer(params.name, args, result.result)
            return types.CallToolResult(
                content=[types.TextContent(type="text", text=codec.dumps_str(result.result))],
                structured_content=result.result if isinstance(result.result, dict) else None,
            )
        gone = play.gone()
        if gone is not None:  # the call hung or killed the worker: the operator should know
            print_error(PROG, gone)
            return play_failed(play, params.name, args, f"{result.error} ({gone})")
        return play_failed(play, params.name, args, str(result.error))

    async def list_resources(ctx: Any, _params: Any) -> types.ListResourcesResult:
        play: _Play = ctx.lifespan_context
        resources = [
            types.Resource(
                name="state",
                uri=STATE_URI,
                description="The environment's current state, as the checks read it",
                mime_type="application/json",
            ),
            types.Resource(
                name="calls",
                uri=CALLS_URI,
                description=(
                    "Every call of this connection and what it returned, as the reply "
                    "checks read them (envfoundry_reward.score_state's shown)"
                ),
                mime_type="application/json",
            ),
        ]
        if play.target.task is not None:
            resources.append(
                types.Resource(
                    name="task",
                    uri=TASK_URI,
                    description=_task_description(play.target, "What the agent is asked to do"),
                    mime_type="text/plain",
                )
            )
        return types.ListResourcesResult(resources=resources)

    async def read_resource(
        ctx: Any, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        play: _Play = ctx.lifespan_context
        uri = str(params.uri)
        if uri == TASK_URI and play.target.task is not None:
            text, mime = _told(play.target), "text/plain"
        elif uri == CALLS_URI:
            text, mime = codec.dumps_pretty(play.shown).decode(), "application/json"
        elif uri == STATE_URI:
            gone = play.gone()
            state = None if gone is not None else await play.blocking(play.session.final_state)
            if state is None:
                raise MCPError(types.INTERNAL_ERROR, play.gone() or "the state is unavailable")
            text, mime = codec.dumps_pretty(state).decode(), "application/json"
        else:
            raise MCPError(types.INVALID_PARAMS, f"unknown resource {uri!r}")
        return types.ReadResourceResult(
            contents=[types.TextResourceContents(uri=uri, mime_type=mime, text=text)]
        )

    async def list_prompts(ctx: Any, _params: Any) -> types.ListPromptsResult:
        play: _Play = ctx.lifespan_context
        if play.target.task is None:
            return types.ListPromptsResult(prompts=[])
        description = _task_description(play.target, "The task, as the user asks it")
        prompt = types.Prompt(name=TASK_PROMPT, description=description)
        return types.ListPromptsResult(prompts=[prompt])

    async def get_prompt(ctx: Any, params: types.GetPromptRequestParams) -> types.GetPromptResult:
        play: _Play = ctx.lifespan_context
        if params.name != TASK_PROMPT or play.target.task is None:
            raise MCPError(types.INVALID_PARAMS, f"unknown prompt {params.name!r}")
        message = types.PromptMessage(
            role="user", content=types.TextContent(type="text", text=_told(play.target))
        )
        return types.GetPromptResult(description="The task", messages=[message])

    return Server(
        "envfoundry",
        version=_version(),
        instructions=_instructions(target),
        lifespan=connection,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
        on_list_resources=list_resources,
        on_read_resource=read_resource,
        on_list_prompts=list_prompts,
        on_get_prompt=get_prompt,
    )


def _mcp_tool(name: str, tool: dict[str, Any] | None) -> types.Tool:
    if tool is None:  # the worker has it, the analysis cannot see it: called unchecked
        return types.Tool(name=name, input_schema={"type": "object"})
    function = tool["schema"].get("function") or tool["schema"]
    schema = {"type": "object", "properties": {}, **tool_parameters(tool)}
    return types.Tool(
        name=name,
        description=function.get("description") or None,
        input_schema=schema,
        # Only a hint for the client: the analysis saw no write to the state.
        annotations=types.ToolAnnotations(read_only_hint=tool.get("kind") == "query"),
    )


def _user_tool(target: Target) -> str:
    """The user's tool name: `ask_user`, unless the environment has a tool of that name."""
    names = {tool["name"] for tool in target.tools or ()}
    return USER_TOOL if USER_TOOL not in names else f"envfoundry_{USER_TOOL}"


def _user_mcp_tool(name: str) -> types.Tool:
    return types.Tool(
        name=name,
        description=(
            "Say something to the user who asked for this task and get their answer: ask for "
            "a detail the request left out, or tell them what you have done (they may have "
            "more to ask for then). The result is what they say next, or "
            f'"{USER_DONE}"'
        ),
        input_schema={
            "type": "object",
            "properties": {"message": {"type": "string", "description": "What you tell them"}},
            "required": ["message"],
        },
        # Only a hint for the client: the environment's state is untouched.
        annotations=types.ToolAnnotations(read_only_hint=True),
    )


def _told(target: Target) -> str | None:
    """The task as the agent is told it: a multi-turn task's opening (the user holds the
    rest back until asked), else the whole request."""
    if target.user is not None:
        return SimulatedUser(target.user).opening
    return target.task


def _task_description(target: Target, single_turn: str) -> str:
    if target.user is None:
        return single_turn
    return (
        "What the user first asks; they hold back details, which you ask them for with the "
        f"tool {_user_tool(target)}"
    )


def _failed(message: str) -> types.CallToolResult:
    text = " ".join(message.split())  # one line, whatever a worker's error held
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


def play_failed(play: _Play, name: str, args: dict[str, Any], message: str) -> types.CallToolResult:
    """A failed call's result, recorded as the error the client was shown."""
    result = _failed(message)
    play.answer(name, args, {"success": False, "error": result.content[0].text})
    return result


def _instructions(target: Target) -> str:
    what = target.source.class_name or "an EnvFoundry environment"
    text = (
        f"The tools act on {what}, a simulated environment running in a sandbox. Each "
        f"connection starts from the initial state; the current state is the resource "
        f"{STATE_URI}."
    )
    if target.task is not None:
        text += f" The task (also the prompt '{TASK_PROMPT}'): {_told(target)}"
    if target.user is not None:
        text += (
            f" The user who asked is there: the tool {_user_tool(target)} asks them for what "
            "the task leaves out."
        )
    return text


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("envfoundry")
    except PackageNotFoundError:
        return ""


__all__ = ["env_serve_main", "mcp_server", "SERVE_EXIT_STATUS"]
