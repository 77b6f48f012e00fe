"""A `verifiers` (0.4) taskset over EnvFoundry's RL shards, whose reward is the project's checks.

Shipped verbatim beside the shards (listed in their manifest), next to `envfoundry_reward.py`,
for a trainer with `verifiers==0.4.0` installed and no EnvFoundry:

    PYTHONPATH=var/shards vf-eval envfoundry-verifiers -m MODEL -r 4 \\
        --client.base-url URL --env.taskset.split train --no-push

or in Python (`prime-rl` and `vf-eval` load it the same way, by its id):

    import verifiers.v1 as vf
    env = vf.load_environment(vf.resolve_env_config(
        {"taskset": {"id": "envfoundry-verifiers", "split": "train"}}))

Each task line of `rl/<split>.jsonl` is one `EnvFoundryTask`: its prompt (system + user), and
a per-rollout tool server (`EnvFoundryTools`, an MCP server as verifiers runs every tool) that
loads the task's environment with `envfoundry_reward.load_env` in its initial state and routes
each call of the task's tools, under the task's own JSON schemas, to `envfoundry_reward.step`.
After every call the server reports the environment's state and the calls made so far to the
rollout; the reward is `envfoundry_reward`'s score of that state, those calls and the agent's
final reply (the project's reward rule), and `success` is recorded as a metric.

A line with a `user` record is multi-turn: its prompt's user message is the user's opening,
which holds back a detail the agent needs, and the env plays the user's side with the shipped
simulator (`envfoundry_user.py`, beside this module): after each turn the agent ends with
text, the task's `SimulatedUser` answers it, until it has nothing more to say. The whole
request (`task_text`) is never shown to the agent.

Trust is `load_env`'s: code EnvFoundry did not compile is refused (when the taskset loads,
naming what the code requires) unless the taskset is configured with `trust=True`; trusted
code runs in the tool server's process, unsandboxed. A workspace environment's `run` tool
(a shell command) runs each command under bubblewrap where bwrap is usable on the machine;
where it is not, such a task is refused when the taskset loads, saying why, unless
`trust=True`, and its commands then run unsandboxed as the tool server's user.

The taskset's default harness, `EnvFoundryChat`, is a plain chat loop run in-process: every
model call goes through verifiers' interception endpoint (so traces, token accounting and the
training client see every turn), tools through the rollout's MCP servers. Verifiers' own
`null` harness would do the same as a `uv`-provisioned script, which installs its packages at
run time; any MCP-capable harness can be chosen instead with `--env.agent.harness.id`.
"""

from __future__ import annotations

import json
import os
import sys
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import verifiers.v1 as vf
from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
from pydantic import ConfigDict

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:  # envfoundry_reward.py and envfoundry_user.py ship here
    sys.path.insert(0, str(HERE))

import envfoundry_reward as efr  # noqa: E402
import envfoundry_user as efu  # noqa: E402

__all__ = ["EnvFoundryChat", "EnvFoundryEnv", "EnvFoundryTaskset"]


class EnvFoundryData(vf.TaskData):
    """One RL task line, and where and how its environment may be loaded."""

    task: dict[str, Any]
    """The parsed line of `rl/<split>.jsonl`, as written."""
    root: str
    """The shards folder the line's environment code path is relative to."""
    trust: bool = False
    """Whether code EnvFoundry did not compile, and `run` commands where bwrap is not usable,
    may run unsandboxed (see `envfoundry_reward.load_env`)."""


class EnvFoundryState(vf.State):
    """What the tool server reports after each call: the environment's state before the
    agent acted and now (None until the first call: the environment is then untouched)."""

    initial_state: dict[str, Any] | None = None
    final_state: dict[str, Any] | None = None
    final_state_readable: bool = True
    tool_calls: int = 0
    shown: list[dict[str, Any]] = []
    """Every call so far and what it returned (`envfoundry_reward.observation`s): the reply
    is held to what they showed."""
    user: dict[str, Any] | None = None
    """A multi-turn task's simulated user after its last answer (`SimulatedUser.metadata()`:
    how many messages it said, the details it held back and how many of them it gave); None
    for a single-turn task."""


class EnvFoundryToolsConfig(vf.ToolsetConfig):
    pass


class _PassThroughArguments(ArgModelBase):
    """Hands a tool call's arguments to `step` as the model sent them."""

    model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

    def model_dump_one_level(self) -> dict[str, Any]:
        return dict(self.model_extra or {})


class EnvFoundryTools(vf.Toolset[EnvFoundryToolsConfig, EnvFoundryState]):
    """The task's tools, as an MCP server: one per rollout, holding that rollout's live
    environment. Tool names are the task's own (no server prefix), as in its schemas."""

    TOOL_PREFIX = None

    def __init__(self, config: EnvFoundryToolsConfig) -> None:
        super().__init__(config)
        self.task: dict[str, Any] = {}
        self.env: efr.Env | None = None

    async def setup_task(self, task: EnvFoundryData) -> None:
        self.task = task.task
        self.env = efr.load_env(task.task, trust=task.trust, root=task.root)

    def register(self, mcp: Any) -> None:
        for schema in self.task.get("tools") or ():
            function = schema.get("function") or schema
            name = function["name"]
            mcp.add_tool(
                self._with_state(self._tool(name)),
                name=name,
                description=function.get("description") or None,
            )
            # MCP derives a tool's input schema and argument model from a Python signature;
            # these tools are data. Advertise the task's own schema and pass the arguments
            # through as sent: `step` answers bad ones as the agent would see them. (The tool
            # manager is MCPServer's own, in the mcp==2.0.0 that verifiers 0.4.0 pins.)
            tool = mcp._tool_manager.get_tool(name)
            tool.parameters = function.get("parameters") or {"type": "object", "properties": {}}
            tool.fn_metadata = FuncMetadata(arg_model=_PassThroughArguments)

    def _tool(self, name: str):
        async def call(**arguments: Any) -> str:
            assert self.env is not None, "setup_task loads the environment first"
            result = efr.step(self.env, name, arguments)
            state = efr.state(self.env)
            self.state.initial_state = self.env.initial_state
            self.state.final_state = state
            self.state.final_state_readable = state is not None
            self.state.tool_calls = self.env.steps
            self.state.shown = list(self.env.shown)
            return json.dumps(result)

        call.__name__ = name
        return call


class EnvFoundryTaskConfig(vf.TaskConfig):
    tools: EnvFoundryToolsConfig = EnvFoundryToolsConfig()
    """Where the per-rollout tool server runs (a subprocess of the env worker by default)."""


class EnvFoundryTask(vf.Task[EnvFoundryData, EnvFoundryState, EnvFoundryTaskConfig]):
    """One RL task: scored by the project's reward rule on the environment the agent used."""

    @property
    def key(self) -> str:
        return str(self.data.task.get("scenario_id"))

    @classmethod
    def toolsets(cls, config: EnvFoundryTaskConfig) -> list[vf.Toolset]:
        return [EnvFoundryTools(config.tools)]

    def outcome(self, trace: vf.Trace) -> dict[str, Any]:
        """`envfoundry_reward.score` of the rollout: the state the tool server last reported
        (the initial one when the agent called no tool), the calls it made (what they showed)
        and the agent's final reply."""
        state: EnvFoundryState = trace.state
        task = self.data.task
        reply = trace.last_reply
        if state.tool_calls == 0:
            # Nothing was called, so the environment is as loaded: score a fresh one.
            env = efr.load_env(task, trust=self.data.trust, root=self.data.root)
            return efr.score(task, env, final_reply=reply)
        final = state.final_state if state.final_state_readable else None
        return efr.score_state(
            task, state.initial_state or {}, final, final_reply=reply, shown=state.shown
        )

    @vf.reward
    async def envfoundry_reward(self, trace: vf.Trace) -> float:
        return float(self.outcome(trace)["reward"])

    @vf.metric
    async def envfoundry_success(self, trace: vf.Trace) -> float:
        return float(self.outcome(trace)["success"])


class EnvFoundryTasksetConfig(vf.TasksetConfig):
    id: str = "envfoundry-verifiers"
    shards: Path = HERE
    """The shards folder (by default the one this module was shipped in)."""
    split: str = "train"
    """Which `rl/<split>.jsonl` to load."""
    trust: bool = False
    """Run environments EnvFoundry did not compile (foreign or LLM-written code) in the tool
    server's process, without a sandbox; and a workspace environment's `run` commands
    unsandboxed where bwrap is not usable (where it is, they run under it either way)."""
    task: EnvFoundryTaskConfig = EnvFoundryTaskConfig()


class EnvFoundryTaskset(vf.Taskset[EnvFoundryTask, EnvFoundryTasksetConfig]):
    """The tasks of one split of an EnvFoundry build's RL shards."""

    def __init__(self, config: EnvFoundryTasksetConfig) -> None:
        super().__init__(config)
        # verifiers starts each tool server as `python -m <this module>` in a subprocess;
        # it finds this module (shipped beside the shards, not installed) on PYTHONPATH.
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if str(HERE) not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([str(HERE), *paths])

    def load(self) -> list[EnvFoundryTask]:
        root = Path(self.config.shards).resolve()
        path = root / "rl" / f"{self.config.split}.jsonl"
        if not path.is_file():
            raise FileNotFoundError(f"no RL shard {path} (is {root} a shards folder?)")
        tasks = []
        with path.open(encoding="utf-8") as lines:
            for line in lines:
                if not line.strip():
                    continue
                task = json.loads(line)
                # Refused here, before any rollout starts, with load_env's reason.
                efr.check_trust(task, trust=self.config.trust)
                system, user = _prompt(task)
                data = EnvFoundryData(
                    id=task["scenario_id"],
                    name=task["scenario_id"],
                    prompt=user,
                    system_prompt=system,
                    task=task,
                    root=str(root),
                    trust=self.config.trust,
                )
                tasks.append(EnvFoundryTask(data, self.config.task))
        return tasks


def _prompt(task: dict[str, Any]) -> tuple[str | None, str]:
    system = [m["content"] for m in task["prompt"] if m["role"] == "system"]
    user = [m["content"] for m in task["prompt"] if m["role"] == "user"]
    return ("\n\n".join(system) or None), "\n\n".join(user)


class EnvFoundryChatConfig(vf.HarnessConfig):
    id: str = "envfoundry-verifiers"
    max_turns: int = 32
    """Model turns before the rollout ends without a final reply (on a multi-turn task, the
    turns of each stretch between the user's messages)."""


class EnvFoundryChat(vf.Harness[EnvFoundryChatConfig]):
    """A chat loop run in-process: the model (through the rollout's interception endpoint)
    answers with tool calls, which go to the rollout's MCP tool servers, until it replies
    with text or `max_turns` model turns have passed."""

    APPENDS_SYSTEM_PROMPT = True
    SUPPORTS_MCP = True
    # A multi-turn task's user answers between this loop's runs (EnvFoundryEnv.run): each
    # answer relaunches the loop on the conversation so far (verifiers' default resume).
    SUPPORTS_RESUME = True
    EXECUTES_CODE = False
    NEEDS_CONTAINER = False

    async def launch(
        self,
        ctx: vf.ModelContext,
        trace: vf.Trace,
        runtime: vf.Runtime,
        endpoint: str,
        secret: str,
        mcp_urls: dict[str, str],
        data: vf.TaskData,
        tool_interception_url: str | None = None,
    ) -> vf.ProgramResult:
        from openai import AsyncOpenAI
        from verifiers.v1.dialects.chat import message_to_wire
        from verifiers.v1.harnesses.utils.mcp import call_mcp, connect_mcp

        system, prompt = self.resolve_prompt(data)
        messages: list[dict[str, Any]] = [{"role": "system", "content": system}] if system else []
        if isinstance(prompt, str):
            messages.append({"role": "user", "content": prompt})
        elif prompt is not None:
            messages += [message_to_wire(m) for m in prompt]
        client = AsyncOpenAI(base_url=endpoint, api_key=secret)
        servers_config = {
            "mcpServers": {
                name: {"url": url, "timeout": self.config.tool_timeout}
                for name, url in mcp_urls.items()
            }
        }
        async with AsyncExitStack() as stack:
            stack.push_async_callback(client.close)
            tools, dispatch, servers = await connect_mcp(servers_config, stack)
            offered = {"tools": tools} if tools else {}
            for _ in range(self.config.max_turns):
                completion = await client.chat.completions.create(
                    model=ctx.model, messages=messages, **offered
                )
                message = completion.choices[0].message
                messages.append(message.model_dump(exclude_none=True))
                if not message.tool_calls:
                    break
                for call in message.tool_calls:
                    name = call.function.name
                    try:
                        arguments = json.loads(call.function.arguments or "{}")
                    except ValueError as exc:
                        content: Any = json.dumps(
                            {"success": False, "error": f"arguments are not valid JSON: {exc}"}
                        )
                    else:
                        if name not in dispatch:
                            content = json.dumps(
                                {"success": False, "error": f"unknown tool: {name[:200]}"}
                            )
                        elif not isinstance(arguments, dict):
                            content = json.dumps(
                                {"success": False, "error": "arguments must be a JSON object"}
                            )
                        else:
                            content = await call_mcp(servers, dispatch, name, arguments)
                    messages.append({"role": "tool", "tool_call_id": call.id, "content": content})
        return vf.ProgramResult(exit_code=0, stdout="", stderr="")


class EnvFoundryEnvConfig(vf.SingleAgentEnvConfig):
    agent: vf.AgentConfig = vf.AgentConfig(runtime=vf.SubprocessConfig())
    """The one seat. Its runtime defaults to a local subprocess (verifiers' default is a
    remote sandbox): the default harness runs in-process, the tool servers beside it."""


class EnvFoundryEnv(vf.Env[EnvFoundryEnvConfig]):
    """One agent plays each task (verifiers' single-agent episode, run locally by default);
    on a multi-turn task the env is the user, played by the task's `SimulatedUser`."""

    async def run(self, task: vf.Task, agents: vf.Agents) -> None:
        from verifiers.v1.dialects.chat import message_to_wire

        user = efu.for_task(task.data.task)
        if user is None:
            await agents.agent.run(task)
            return
        # One user per rollout: it remembers what it said. The prompt is its opening; each
        # segment runs until the agent ends its turn with text, which the user answers from
        # the conversation so far (OpenAI messages, as the simulator reads them). None: the
        # agent's final reply, or nothing left to say; a limit ends the segments as any run.
        messages = [dict(m) for m in task.data.task["prompt"]]
        async with agents.agent.interaction(task) as chat:
            segment = await chat.turn()
            while not segment.terminated:
                messages += [message_to_wire(m) for m in segment.messages]
                answer = user.answer(messages)
                chat.trace.state.user = user.metadata()
                if answer is None:
                    break
                messages.append({"role": "user", "content": answer})
                segment = await chat.turn(answer)


if __name__ == "__main__":  # how verifiers starts the per-rollout tool server
    EnvFoundryTools.run()
