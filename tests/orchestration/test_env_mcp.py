"""`envfoundry env serve --mcp`, played by the MCP SDK's own client over stdio: it lists the
environment's tools, calls them in the sandbox, sees the state change, gets refused calls and
tool errors as isError results, and a new connection starts from the initial state.

Each test starts the command as a subprocess, as an MCP host (Claude Desktop, an agent
framework) does."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio
import pytest
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

from orchestration.player.mcp_server import USER_DONE, env_serve_main
from synthesis import codec
from synthesis.tasks import envfoundry_reward as efr
from tests.build_support import REPO, query
from tests.fakes.shard_envs import shard_environment, write_rl_task
from tests.sandboxes.sandbox_helpers import FAKES, HOSTILE
from tests.shard_support import first_topic, planned_task, task_shards

ENVS = str(FAKES / "sandbox_envs.py")
SERVE = [sys.executable, "-m", "orchestration.cli", "env", "serve", "--mcp"]


def play(argv: list[str], moves) -> object:
    """Connect an MCP client to `envfoundry env serve --mcp ARGV` and run `moves(client)`."""

    async def connect():
        server = StdioServerParameters(
            command=SERVE[0], args=[*SERVE[1:], *argv], env={"PYTHONPATH": str(REPO)}, cwd=REPO
        )
        async with stdio_client(server) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            return await moves(client)

    return anyio.run(connect)


def text(result) -> str:
    (content,) = result.content
    return content.text


async def state(client) -> dict:
    (contents,) = (await client.read_resource("envfoundry://state")).contents
    return json.loads(contents.text)


@pytest.fixture
def counter_at_ten(tmp_path) -> list[str]:
    path = tmp_path / "state.json"
    path.write_text('{"count": 10}')
    return ["--source", ENVS, "--class", "Counter", "--state", str(path)]


def test_a_client_lists_the_tools_calls_one_and_sees_the_state_change(counter_at_ten):
    async def moves(client):
        tools = {tool.name: tool for tool in (await client.list_tools()).tools}
        before = await state(client)
        changed = await client.call_tool("increment", {"by": 5})
        read = await client.call_tool("get_count", {})
        return tools, before, changed, read, await state(client)

    tools, before, changed, read, after = play(counter_at_ten, moves)
    assert sorted(tools) == ["fail", "get_count", "increment"]
    increment = tools["increment"]
    assert increment.description == "Add to the counter."
    assert increment.input_schema == {
        "type": "object",
        "properties": {"by": {"type": "integer"}},
        "required": [],
    }
    assert increment.annotations.read_only_hint is False
    assert tools["get_count"].annotations.read_only_hint is True
    assert not changed.is_error
    assert json.loads(text(changed)) == {"success": True, "data": 15}
    assert changed.structured_content == {"success": True, "data": 15}
    assert json.loads(text(read)) == {"success": True, "data": 15}
    assert (before, after) == ({"count": 10, "log": []}, {"count": 15, "log": [5]})


def test_refused_calls_and_tool_errors_are_is_error_results_and_the_session_goes_on(
    counter_at_ten,
):
    async def moves(client):
        calls = [
            ("nope", {}),
            ("increment", {"by": "two"}),
            ("increment", {"step": 1}),
            ("fail", {"message": "out of ink"}),
            ("increment", {"by": 1}),
        ]
        return [await client.call_tool(name, args) for name, args in calls], await state(client)

    (unknown, mistyped, unexpected, raised, fine), after = play(counter_at_ten, moves)
    assert unknown.is_error and mistyped.is_error and unexpected.is_error and raised.is_error
    assert text(unknown) == "invalid call: unknown tool 'nope'; tools: fail, get_count, increment"
    assert (
        text(mistyped) == "invalid call: increment: argument 'by': 'two' is not of type 'integer'"
    )
    assert text(unexpected).startswith("invalid call: increment: unexpected argument 'step'")
    assert text(raised) == "ValueError: out of ink"
    # Refused calls never reached the environment; the session plays on after each.
    assert not fine.is_error and json.loads(text(fine))["data"] == 11
    assert after == {"count": 11, "log": [1]}


def test_the_calls_resource_lists_what_each_call_showed_as_the_reward_module_reads_it(
    counter_at_ten,
):
    """envfoundry://calls: each call of the connection and what the client was answered,
    refused calls included, in the form `envfoundry_reward.score_state(shown=...)` reads."""

    async def moves(client):
        await client.call_tool("increment", {"by": 5})
        await client.call_tool("nope", {})
        await client.call_tool("fail", {"message": "out of ink"})
        (contents,) = (await client.read_resource("envfoundry://calls")).contents
        return json.loads(contents.text)

    calls = play(counter_at_ten, moves)
    assert calls == [
        {"tool": "increment", "arguments": {"by": 5}, "result": {"success": True, "data": 15}},
        {
            "tool": "nope",
            "arguments": {},
            "result": {
                "success": False,
                "error": "invalid call: unknown tool 'nope'; tools: fail, get_count, increment",
            },
        },
        {
            "tool": "fail",
            "arguments": {"message": "out of ink"},
            "result": {"success": False, "error": "ValueError: out of ink"},
        },
    ]
    seen = efr.Seen(calls)
    assert seen.states(15) and not seen.states(16)
    assert seen.answered_with("out of ink") is False  # the call's own words: an echo
    assert play(counter_at_ten, moves_none) == []


async def moves_none(client):
    (contents,) = (await client.read_resource("envfoundry://calls")).contents
    return json.loads(contents.text)


def test_each_connection_starts_from_the_initial_state(counter_at_ten):
    async def add_three(client):
        await client.call_tool("increment", {"by": 3})
        return await state(client)

    assert play(counter_at_ten, add_three) == {"count": 13, "log": [3]}
    assert play(counter_at_ten, state) == {"count": 10, "log": []}


def test_a_task_line_of_an_rl_shard_is_served_with_its_task(tmp_path):
    shard = write_rl_task(
        tmp_path / "dataset",
        shard_environment("things-1"),
        {"things": {"a": {"id": "a"}}},
        task_text="Add the thing b.",
    )

    async def moves(client):
        tools = [tool.name for tool in (await client.list_tools()).tools]
        prompts = [prompt.name for prompt in (await client.list_prompts()).prompts]
        prompt = await client.get_prompt("task")
        (task,) = (await client.read_resource("envfoundry://task")).contents
        added = await client.call_tool("add_thing", {"thing_id": "b"})
        return tools, prompts, prompt, task.text, added, await state(client)

    tools, prompts, prompt, task, added, after = play(["--task", f"{shard}:1"], moves)
    assert (tools, prompts, task) == (["add_thing"], ["task"], "Add the thing b.")
    (message,) = prompt.messages
    assert (message.role, message.content.text) == ("user", "Add the thing b.")
    assert json.loads(text(added)) == {"success": True, "data": {"id": "b"}}
    assert after == {"things": {"a": {"id": "a"}, "b": {"id": "b"}}}


# A multi-turn task's simulated user (synthesis/tasks/dialogue.py's record): its opening leaves
# out the new thing's id, which it gives when asked.
THINGS_USER = {
    "version": 1,
    "opening": "Could you add a new thing for me?",
    "details": [
        {
            "about": ["id", "identifier", "name"],
            "question": "What id should the new thing have?",
            "say": "Its id is b.",
            "facts": ["b"],
        }
    ],
    "known": [],
    "replies": {"unknown": "Sorry, I don't know that.", "go_ahead": "Please do."},
}


def multi_turn_task(dataset) -> str:
    """A task line as a build ships a multi-turn one: its prompt is the user's opening,
    `task_text` the whole request, `user` the record."""
    shard = write_rl_task(
        dataset,
        shard_environment("things-1"),
        {"things": {"a": {"id": "a"}}},
        task_text="Add the thing b.",
    )
    line = json.loads(shard.read_text())
    line["prompt"][-1]["content"] = THINGS_USER["opening"]
    line["user"] = THINGS_USER
    shard.write_text(json.dumps(line) + "\n")
    return f"{shard}:1"


def test_a_multi_turn_task_is_told_as_its_opening_and_the_agent_asks_the_user(tmp_path):
    """Over MCP the agent is told the user's opening (prompt, task resource, instructions),
    never the whole request; `ask_user` gets the held detail, the agent acts on it, and its
    final reply ends the conversation. The user is no environment call."""

    async def moves(client):
        listed = (await client.list_tools()).tools
        (message,) = (await client.get_prompt("task")).messages
        (task,) = (await client.read_resource("envfoundry://task")).contents
        seen = [
            client.instructions,
            message.content.text,
            task.text,
            *(t.description for t in listed),
            *(p.description for p in (await client.list_prompts()).prompts),
            *(r.description for r in (await client.list_resources()).resources),
        ]
        ask = {t.name: t for t in listed}["ask_user"]
        said = []
        for turn in (
            "Which colour should it be?",
            "What id should the new thing have?",
            ("add_thing", {"thing_id": "b"}),
            'I added the thing b. Its id is "b".',
            "Is there anything else?",
        ):
            if isinstance(turn, str):
                turn = ("ask_user", {"message": turn})
            said.append(await client.call_tool(*turn))
        refused = await client.call_tool("ask_user", {"text": "hi"})
        (calls,) = (await client.read_resource("envfoundry://calls")).contents
        return seen, ask, said, refused, json.loads(calls.text), await state(client)

    seen, ask, said, refused, calls, after = play(["--task", multi_turn_task(tmp_path)], moves)
    told, prompt, task = seen[:3]
    assert prompt == task == THINGS_USER["opening"] and THINGS_USER["opening"] in told
    assert "ask_user" in told
    assert not [s for s in seen if s and "Add the thing b." in s]  # the whole request
    assert ask.input_schema["required"] == ["message"] and ask.annotations.read_only_hint
    unknown, detail, added, final, after_final = said
    assert not any(r.is_error for r in said)
    assert text(unknown) == "Sorry, I don't know that."
    assert text(detail) == "Its id is b."
    assert json.loads(text(added)) == {"success": True, "data": {"id": "b"}}
    assert text(final) == text(after_final) == USER_DONE
    assert refused.is_error and "ask_user takes one string, 'message'" in text(refused)
    assert calls == [
        {"tool": "add_thing", "arguments": {"thing_id": "b"}, "result": json.loads(text(added))}
    ]
    assert after == {"things": {"a": {"id": "a"}, "b": {"id": "b"}}}


def test_each_connection_has_a_fresh_user(tmp_path):
    task = multi_turn_task(tmp_path)

    async def ask_twice(client):
        question = {"message": "What id should the new thing have?"}
        first = text(await client.call_tool("ask_user", question))
        final = text(await client.call_tool("ask_user", {"message": "Done: b is added."}))
        return first, final

    assert play(["--task", task], ask_twice) == ("Its id is b.", USER_DONE)
    assert play(["--task", task], ask_twice) == ("Its id is b.", USER_DONE)


def test_a_user_record_the_simulator_cannot_play_is_a_usage_error(tmp_path, capsys):
    reference = multi_turn_task(tmp_path)
    shard = tmp_path / "rl" / "train.jsonl"
    line = json.loads(shard.read_text())
    line["user"] = {**THINGS_USER, "version": 99}
    shard.write_text(json.dumps(line) + "\n")
    assert env_serve_main(["--mcp", "--task", reference]) == 2
    assert "the task's simulated user: user record version 99" in capsys.readouterr().err


@pytest.mark.slow
def test_a_published_scenario_is_served_in_its_world(tiny_home):
    """--home --env --scenario: the build's tools and task, and the gold chain's calls answer
    over MCP exactly as they did in the build (same initial state, clock and randomness)."""
    home, _ = tiny_home
    sid, env_id, task, chain, gold, final = query(
        home,
        "SELECT scenario_id, env_id, task_text, gold_chain_json, gold_results_json, "
        "final_state_json FROM scenarios WHERE status = 'published' AND kind = 'feasible' "
        "AND final_state_json <> initial_state_json AND user_json IS NULL "
        "ORDER BY scenario_id LIMIT 1",
    )[0]
    built = query(home, f"SELECT tool_name FROM tools WHERE env_id = '{env_id}' ORDER BY 1")
    chain = json.loads(chain)

    async def moves(client):
        tools = sorted(tool.name for tool in (await client.list_tools()).tools)
        (message,) = (await client.get_prompt("task")).messages
        results = [json.loads(text(await client.call_tool(c["tool"], c["args"]))) for c in chain]
        return tools, message.content.text, results, await state(client)

    argv = ["--home", str(home), "--env", env_id, "--scenario", sid]
    tools, prompt, results, after = play(argv, moves)
    assert (tools, prompt) == ([name for (name,) in built], task)
    assert results == json.loads(gold)
    assert after == json.loads(final)


@pytest.mark.slow
def test_a_published_multi_turn_scenario_replays_the_oracle_conversation(tiny_home):
    """--scenario of a multi-turn task: the build's oracle episode, replayed over MCP (its
    text turns to `ask_user`, its calls to the tools), gets the user's answers byte for byte
    and the calls' results, and earns the reward the build recorded."""
    home, _ = tiny_home
    sid, env_id, task, user_json, final = query(
        home,
        "SELECT scenario_id, env_id, task_text, user_json, final_state_json FROM scenarios "
        "WHERE status = 'published' AND user_json IS NOT NULL ORDER BY scenario_id LIMIT 1",
    )[0]
    ((messages_json, reward),) = query(
        home,
        "SELECT messages_json, reward FROM trajectories WHERE policy = 'oracle' "
        f"AND scenario_id = '{sid}' ORDER BY traj_id LIMIT 1",
    )
    recorded = codec.loads(messages_json)
    lines = (home / "shards/rl/train.jsonl").read_text().splitlines()
    (line,) = [t for t in map(json.loads, lines) if t["scenario_id"] == sid]

    async def moves(client):
        (message,) = (await client.get_prompt("task")).messages
        heard, results, reply = [], [], ""
        for turn in recorded[2:]:
            if turn["role"] != "assistant":
                continue
            for call in turn.get("tool_calls") or []:
                args = json.loads(call["function"]["arguments"])
                results.append(
                    json.loads(text(await client.call_tool(call["function"]["name"], args)))
                )
            if turn.get("content"):
                reply = turn["content"]
                heard.append(text(await client.call_tool("ask_user", {"message": reply})))
        (calls,) = (await client.read_resource("envfoundry://calls")).contents
        return (
            message.content.text,
            heard,
            results,
            reply,
            json.loads(calls.text),
            await state(client),
        )

    argv = ["--home", str(home), "--env", env_id, "--scenario", sid]
    prompt, heard, results, reply, calls, after = play(argv, moves)
    opening = json.loads(user_json)["opening"]
    assert prompt == opening == recorded[1]["content"] and task not in prompt
    # What the oracle was told after each of its text turns; the last one ended it.
    answers = [m["content"] for i, m in enumerate(recorded) if m["role"] == "user" and i > 1]
    assert heard == [*answers, USER_DONE]
    assert results == [json.loads(m["content"]) for m in recorded if m["role"] == "tool"]
    assert after == json.loads(final)
    score = efr.score_state(line, line["initial_state"], after, reply, shown=calls)
    assert reward == 1.0 and score == {"reward": 1.0, "success": True}


def test_a_call_that_kills_the_worker_is_an_error_and_later_calls_are_not_run():
    argv = ["--source", str(HOSTILE / "resources.py"), "--class", "CpuLoop", "--timeout", "0.5"]

    async def moves(client):
        hung = await client.call_tool("spin", {})
        after = await client.call_tool("spin", {})
        with pytest.raises(MCPError) as unavailable:
            await state(client)
        return hung, after, unavailable.value.message

    hung, after, unavailable = play(argv, moves)
    assert hung.is_error and text(hung).startswith("timeout after 0.5s (worker killed)")
    assert "reconnect to start over from the initial state" in text(hung)
    assert after.is_error and text(after).startswith("not run: the environment's session is")
    assert unavailable.startswith("the environment's session is killed")


def test_an_environment_that_fails_to_load_exits_three_and_says_why():
    proc = subprocess.run(
        [*SERVE, "--source", ENVS, "--class", "Broken"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert (proc.returncode, proc.stdout) == (3, "")
    assert proc.stderr == (
        "envfoundry env serve: error: environment failed to load: RuntimeError: cannot construct\n"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--source", ENVS, "--class", "Counter"], "say which protocol to serve: --mcp"),
        (["--mcp", "--task", "nowhere.jsonl:2"], "cannot read --task nowhere.jsonl"),
        (["--mcp", "--task", "x.jsonl", "--class", "A"], "--class: with --task these come from"),
    ],
)
def test_usage_errors_exit_two_before_serving(argv, message, capsys):
    assert env_serve_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and message in err


def test_a_task_file_must_hold_that_task_line(tmp_path, capsys):
    shard = write_rl_task(tmp_path, shard_environment("things-1"), {"things": {}})
    assert env_serve_main(["--mcp", "--task", f"{shard}:2"]) == 2
    assert f"--task {shard} has no line 2" in capsys.readouterr().err
    (tmp_path / "environments" / "things-1.py").write_text("class Things: pass\n")
    assert env_serve_main(["--mcp", "--task", str(shard)]) == 2
    assert "is not the code the task names (sha256 differs)" in capsys.readouterr().err
    shard.write_text('{"scenario_id": "S-1"}\n')
    assert env_serve_main(["--mcp", "--task", str(shard)]) == 2
    assert "is not a task line of an RL shard" in capsys.readouterr().err


def test_the_command_is_wired_into_envfoundry_env(capsys):
    from orchestration.cli import main

    assert main(["env", "serve", "--source", ENVS, "--class", "Counter"]) == 2
    assert capsys.readouterr().err.startswith("envfoundry env serve: error: say which protocol")


def test_a_project_task_is_served_and_a_clients_run_changes_the_workspace(tmp_path):
    """A project task line (a data folder, the shell verb `run`): an MCP client lists `run`
    beside the file verbs, runs a command that writes a report, and the workspace has it."""
    env, scenario, checks = planned_task(first_topic("project"))
    shard = task_shards(tmp_path, env, scenario, checks, "You work in a project folder.")

    async def moves(client):
        tools = [tool.name for tool in (await client.list_tools()).tools]
        ran = await client.call_tool(
            "run", {"command": "wc -l < README.md > reports/lines.txt; echo done"}
        )
        return tools, ran, await state(client)

    tools, ran, after = play(["--task", f"{shard}:1"], moves)
    assert {"run", "cat", "tree", "write"} <= set(tools)
    assert json.loads(text(ran))["data"] == {"exit_code": 0, "output": "done\n"}
    files = after["__workspace__"]["files"]
    lines = len(files["README.md"].splitlines())
    assert files["reports/lines.txt"].strip() == str(lines)
