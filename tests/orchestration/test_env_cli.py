"""`envfoundry env run` / `env shell` on environment files: exit 0 when every call returned
(domain errors included), 2 for usage errors (argument validation included), 3 when the
environment cannot load or dump its state, 4 when a call raised, hung or killed the worker.

Built environments (`--home --env`) are tested in test_env_shell_build.py."""

from __future__ import annotations

import io
import json

import pytest

from orchestration.player.run import env_run_main
from orchestration.player.shell import env_shell_main
from tests.sandboxes.sandbox_helpers import FAKES, HOSTILE

ENVS = str(FAKES / "sandbox_envs.py")
FOREIGN = str(FAKES / "foreign_style.py")


def write_calls(tmp_path, *calls) -> str:
    path = tmp_path / "calls.jsonl"
    path.write_text("\n".join(json.dumps(c) for c in calls) + "\n")
    return str(path)


def run(argv, capsys) -> tuple[int, list[dict], str]:
    code = env_run_main(argv)
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


# Exit codes need an environment with a domain error, a crash and a dump that fails.
EXIT_CODES_ENV = """
class Shop:
    def __init__(self):
        self.stock = {"pen": 2}

    def take(self, item: str, quantity: int) -> dict:
        \"\"\"Take items out of stock.\"\"\"
        if self.stock.get(item, 0) < quantity:
            return {"success": False, "error": f"only {self.stock.get(item, 0)} {item} left"}
        self.stock[item] -= quantity
        return {"success": True, "data": self.stock[item]}

    def audit(self) -> dict:
        \"\"\"Check the books (and crash).\"\"\"
        raise KeyError("ledger")


class NoDump:
    def __init__(self):
        self.n = 0

    def bump(self) -> dict:
        \"\"\"Add one.\"\"\"
        self.n += 1
        return {"success": True, "data": self.n}

    def get_env_state(self) -> dict:
        raise RuntimeError("state locked")
"""


@pytest.fixture
def exit_env(tmp_path) -> str:
    path = tmp_path / "exit_codes.py"
    path.write_text(EXIT_CODES_ENV)
    return str(path)


def test_run_prints_one_line_per_call_and_a_final_line(tmp_path, capsys):
    state = tmp_path / "state.json"
    state.write_text('{"count": 10}')
    calls = write_calls(
        tmp_path, {"tool": "increment", "args": {"by": 5}}, {"tool": "get_count", "args": {}}
    )
    code, lines, err = run(
        ["--source", ENVS, "--class", "Counter", "--state", str(state), "--calls", calls], capsys
    )
    assert (code, err) == (0, "")
    assert lines == [
        {"tool": "increment", "ok": True, "result": {"success": True, "data": 15}, "error": None},
        {"tool": "get_count", "ok": True, "result": {"success": True, "data": 15}, "error": None},
        {"final_state": {"count": 15, "log": [5]}, "status": "ok", "reason": None, "exit_code": 0},
    ]


def test_exit_zero_when_every_call_returned_domain_errors_included(exit_env, tmp_path, capsys):
    calls = write_calls(
        tmp_path,
        {"tool": "take", "args": {"item": "pen", "quantity": 5}},
        {"tool": "take", "args": {"item": "pen", "quantity": 1}},
    )
    code, lines, err = run(["--source", exit_env, "--class", "Shop", "--calls", calls], capsys)
    assert (code, err) == (0, "")
    assert lines[0]["ok"] and lines[0]["result"] == {"success": False, "error": "only 2 pen left"}
    assert lines[-1] == {
        "final_state": {"stock": {"pen": 1}},
        "status": "ok",
        "reason": None,
        "exit_code": 0,
    }


def test_a_call_that_raises_exits_four_and_the_status_is_not_ok(exit_env, tmp_path, capsys):
    calls = write_calls(
        tmp_path,
        {"tool": "take", "args": {"item": "pen", "quantity": 1}},
        {"tool": "audit"},
        {"tool": "take", "args": {"item": "pen"}},  # refused too, but a crash outranks it
        {"tool": "take", "args": {"item": "pen", "quantity": 1}},
    )
    code, lines, err = run(["--source", exit_env, "--class", "Shop", "--calls", calls], capsys)
    assert code == 4
    assert lines[1] == {"tool": "audit", "ok": False, "result": None, "error": "KeyError: 'ledger'"}
    assert lines[2]["error"].startswith("usage error: take: missing required argument 'quantity'")
    final = lines[-1]
    assert final["status"] == "call_error" and final["exit_code"] == 4
    assert final["final_state"] == {"stock": {"pen": 0}}  # the worker lived on
    assert (
        final["reason"]
        == f"1 of 4 calls did not return (first: {calls}:2 audit: KeyError: 'ledger')"
    )
    assert err.splitlines()[-1] == f"envfoundry env run: error: {final['reason']}"


def test_a_dump_that_fails_exits_three(exit_env, tmp_path, capsys):
    calls = write_calls(tmp_path, {"tool": "bump"})
    code, lines, err = run(["--source", exit_env, "--class", "NoDump", "--calls", calls], capsys)
    assert code == 3
    assert lines[0]["ok"] is True
    reason = (
        "final state unavailable: state dumper get_env_state() raised RuntimeError: state locked"
    )
    assert lines[1] == {"final_state": None, "status": "error", "reason": reason, "exit_code": 3}
    assert err == f"envfoundry env run: error: {reason}\n"


def test_invalid_arguments_are_usage_errors_naming_tool_and_parameter(exit_env, tmp_path, capsys):
    calls = write_calls(
        tmp_path,
        {"tool": "take", "args": {"item": "pen"}},
        {"tool": "take", "args": {"item": "pen", "quantity": "two"}},
        {"tool": "take", "args": {"item": "pen", "quantity": 1, "colour": "red"}},
        {"tool": "restock", "args": {}},
        {"tool": "take", "args": {"item": "pen", "quantity": 1}},
    )
    code, lines, err = run(["--source", exit_env, "--class", "Shop", "--calls", calls], capsys)
    assert code == 2
    assert "TypeError" not in err + str(lines)
    signature = "it takes take(item: string, quantity: integer)"
    assert err.splitlines() == [
        f"envfoundry env run: error: {calls}:1: take: missing required argument 'quantity'; "
        + signature,
        f"envfoundry env run: error: {calls}:2: take: argument 'quantity': 'two' is not of type "
        "'integer'",
        f"envfoundry env run: error: {calls}:3: take: unexpected argument 'colour'; " + signature,
        f"envfoundry env run: error: {calls}:4: unknown tool 'restock'; tools: audit, take",
    ]
    assert [line.get("ok") for line in lines[:5]] == [False, False, False, False, True]
    assert lines[0]["error"].startswith("usage error: take: missing required argument")
    # Refused calls never reached the environment; the valid one did.
    assert lines[-1]["final_state"] == {"stock": {"pen": 1}}
    assert lines[-1]["status"] == "invalid_calls" and lines[-1]["exit_code"] == 2


def test_a_hung_call_exits_four_and_later_calls_are_not_run(tmp_path, capsys):
    calls = write_calls(tmp_path, {"tool": "quick"}, {"tool": "spin"}, {"tool": "quick"})
    code, lines, _ = run(
        [
            "--source",
            str(HOSTILE / "resources.py"),
            "--class",
            "CpuLoop",
            "--calls",
            calls,
            "--timeout",
            "0.5",
        ],
        capsys,
    )
    assert code == 4
    assert [line.get("ok") for line in lines[:3]] == [True, False, False]
    assert lines[1]["error"] == "timeout after 0.5s (worker killed)"
    assert lines[2]["error"].startswith("not run: session killed")
    assert lines[3]["status"] == "killed" and lines[3]["final_state"] is None
    assert lines[3]["reason"].endswith("; 1 not run after the worker died")


def test_an_environment_that_fails_to_load_exits_three_and_says_why(tmp_path, capsys):
    calls = write_calls(tmp_path, {"tool": "tool"})
    code, lines, err = run(["--source", ENVS, "--class", "Broken", "--calls", calls], capsys)
    assert code == 3
    assert err == (
        "envfoundry env run: error: environment failed to load: RuntimeError: cannot construct\n"
    )
    assert lines[0]["error"].startswith("not run: session error: environment failed to load")
    assert lines[1]["status"] == "error" and lines[1]["final_state"] is None
    missing = tmp_path / "frames.py"
    missing.write_text(
        "import pandas_nope\n\nclass Frames:\n    def rows(self) -> dict:\n        ...\n"
    )
    code, _, err = run(["--source", str(missing), "--calls", calls], capsys)
    assert code == 3
    assert err == (
        "envfoundry env run: error: environment failed to load: "
        "ModuleNotFoundError: No module named 'pandas_nope'\n"
    )


def test_a_run_with_no_calls_exits_zero(tmp_path, capsys):
    empty = write_calls(tmp_path)
    code, lines, _ = run(["--source", ENVS, "--class", "Counter", "--calls", empty], capsys)
    assert code == 0
    assert lines == [
        {"final_state": {"count": 0, "log": []}, "status": "ok", "reason": None, "exit_code": 0}
    ]


def test_loader_and_dumper_options(tmp_path, capsys):
    state = tmp_path / "state.json"
    state.write_text('{"agent": "ada"}')
    calls = write_calls(tmp_path, {"tool": "close", "args": {"ticket_id": "T-1"}})
    argv = ["--source", FOREIGN, "--class", "ConfigDesk", "--state", str(state), "--calls", calls]
    _, lines, _ = run(argv, capsys)
    assert lines[0]["result"] == {"success": True, "data": "ada"}
    _, lines, _ = run([*argv, "--loader", "attributes"], capsys)
    assert lines[0]["result"] == {"success": True, "data": "ada"}
    _, lines, _ = run([*argv, "--loader", "constructor", "--dumper", "attributes"], capsys)
    assert lines[-1]["final_state"] == {"tickets": {"T-1": "closed"}, "agent": "ada"}
    calls = write_calls(tmp_path, {"tool": "add", "args": {"name": "rent", "amount": "2.5"}})
    ledger = ["--source", FOREIGN, "--class", "Ledger", "--calls", calls]
    assert run(ledger, capsys)[1][-1]["final_state"]["entries"] == {"rent": 2.5}
    assert run([*ledger, "--dumper", "snapshot"], capsys)[1][-1]["final_state"] == {"count": 1}
    assert env_run_main([*ledger, "--dumper", "not a method"]) == 2
    assert "dumper must be one of" in capsys.readouterr().err


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "required"),
        (["--source", ENVS, "--class", "Counter"], "--calls"),
        (["--source", "nowhere.py", "--calls", "CALLS"], "no such environment file"),
        (["--source", ENVS, "--calls", "CALLS"], "choose one with --class"),
        (["--source", ENVS, "--class", "Counter", "--calls", "missing.jsonl"], "cannot read calls"),
        (
            ["--source", ENVS, "--class", "Counter", "--calls", "CALLS", "--state", "missing.json"],
            "cannot read state",
        ),
        (
            ["--source", ENVS, "--class", "Counter", "--calls", "CALLS", "--backend", "vm"],
            "invalid choice",
        ),
        (
            ["--source", ENVS, "--class", "Counter", "--calls", "CALLS", "--timeout", "0"],
            "--timeout must be positive",
        ),
        (["--source", "no_such_package.module:Env", "--calls", "CALLS"], "no module named"),
        (["--source", ENVS, "--env", "shop", "--calls", "CALLS"], "not allowed with argument"),
        (
            ["--source", ENVS, "--class", "Counter", "--calls", "CALLS", "--state-id", "s0"],
            "--state-id: only with --env",
        ),
        (["--env", "shop", "--class", "Counter", "--calls", "CALLS"], "--class: with --env"),
    ],
)
def test_usage_errors_exit_two_with_a_message(tmp_path, capsys, argv, message):
    calls = write_calls(tmp_path, {"tool": "get_count"})
    argv = [
        calls if a == "CALLS" else str(tmp_path / a) if a.startswith("missing") else a for a in argv
    ]
    assert env_run_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert message in err


def test_bad_calls_and_state_files_are_usage_errors(tmp_path, capsys):
    bad_calls = tmp_path / "bad.jsonl"
    bad_calls.write_text('{"tool": "get_count"}\nnot json\n')
    assert env_run_main(["--source", ENVS, "--class", "Counter", "--calls", str(bad_calls)]) == 2
    assert "bad.jsonl:2: not JSON" in capsys.readouterr().err
    bad_calls.write_text('{"args": {}}\n')
    assert env_run_main(["--source", ENVS, "--class", "Counter", "--calls", str(bad_calls)]) == 2
    state = tmp_path / "state.json"
    state.write_text('"count"')
    calls = write_calls(tmp_path, {"tool": "get_count"})
    argv = ["--source", ENVS, "--class", "Counter", "--calls", calls, "--state", str(state)]
    assert env_run_main(argv) == 2
    assert "is a JSON str, not an object" in capsys.readouterr().err


@pytest.mark.parametrize(
    "content, looks_like",
    [
        ('[{"count": 1}, {"count": 2}]', "a JSON list of 2 items (a states file"),
        (
            '{"error": null, "states": [{"env_id": "e", "seed": 1, "state": {"count": 3}}]}',
            'an initial_states artifact ({"states": [...]} with 1 state)',
        ),
        (
            '{"state_id": "e-s0", "env_id": "e", "seed": 1, "state": {"count": 3}}',
            "an initial state record",
        ),
    ],
)
def test_a_state_file_that_holds_states_is_refused(tmp_path, capsys, content, looks_like):
    state = tmp_path / "states.json"
    state.write_text(content)
    calls = write_calls(tmp_path, {"tool": "get_count"})
    argv = ["--source", ENVS, "--class", "Counter", "--calls", calls, "--state", str(state)]
    assert env_run_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"envfoundry env run: error: --state {state} is {looks_like}")
    assert "--state-id" in err and len(err.splitlines()) == 1


def test_a_state_with_a_states_attribute_is_still_a_state(tmp_path, capsys):
    # An environment may keep a list called "states" (a workflow's steps): that is a state.
    state = tmp_path / "state.json"
    state.write_text('{"count": 4, "states": ["draft", "sent"]}')
    calls = write_calls(tmp_path, {"tool": "get_count"})
    argv = ["--source", ENVS, "--class", "Counter", "--calls", calls, "--state", str(state)]
    code, lines, _ = run(argv, capsys)
    assert code == 0 and lines[0]["result"] == {"success": True, "data": 4}


def test_code_we_did_not_compile_needs_a_real_sandbox(tmp_path, capsys, monkeypatch):
    import sandboxes.backends

    # As on a machine without bubblewrap: "auto" would fall back to the process backend.
    monkeypatch.setattr(sandboxes.backends, "default_backend", lambda: "process")
    calls = write_calls(tmp_path, {"tool": "get_count"})
    argv = ["--source", ENVS, "--class", "Counter", "--calls", calls]
    assert env_run_main(argv) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert "refused to run code we did not compile without a real sandbox" in err
    # Named by the user, reduced isolation is accepted (as `build --sandbox process` is).
    assert run([*argv, "--backend", "process"], capsys)[0] == 0


def test_unavailable_backend_is_a_usage_error(tmp_path, capsys, monkeypatch):
    import sandboxes.backends

    # No engine answers at DOCKER_HOST: the docker backend is unavailable, whatever this
    # machine has.
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    monkeypatch.setattr(sandboxes.backends, "_instances", {})
    calls = write_calls(tmp_path, {"tool": "get_count"})
    assert (
        env_run_main(
            ["--source", ENVS, "--class", "Counter", "--calls", calls, "--backend", "docker"]
        )
        == 2
    )
    assert "not available" in capsys.readouterr().err


def test_shell_lists_tools_calls_and_shows_the_state_diff():
    script = io.StringIO(
        'tools\nincrement {"by": 2}\ncall fail {"message": "x"}\nget_count\nincrement [1]\n'
        'nope {}\nincrement {"by": "two"}\nincrement {"step": 1}\nstate\nhelp\nquit\n'
        "get_count\n"
    )
    out = io.StringIO()
    code = env_shell_main(["--source", ENVS, "--class", "Counter"], stdin=script, stdout=out)
    text = out.getvalue()
    assert code == 0
    assert "increment(by?: integer)  [mutate]  Add to the counter.\n" in text
    assert "get_count()  [query]  Read the counter.\n" in text
    assert (
        'result: {"data":2,"success":true}\nstate changes:\n  ~ count: 0 -> 2\n  + log[0]: 2\n'
        in text
    )
    assert "error: ValueError: x\nstate: unchanged" in text
    assert "invalid call: arguments must be a JSON object" in text
    assert "invalid call: unknown tool 'nope'; tools: fail, get_count, increment" in text
    assert "invalid call: increment: argument 'by': 'two' is not of type 'integer'" in text
    assert "invalid call: increment: unexpected argument 'step'" in text
    assert '"count": 2' in text and "call NAME {json args}" in text
    # Invalid calls never reached the environment, and nothing runs after quit.
    assert text.count("result:") == 2


def test_shell_on_a_workspace_environment_lists_the_builtin_tools(tmp_path):
    out = io.StringIO()
    script = io.StringIO('tools\nwrite_file {"path": "a.txt", "content": "hi"}\n')
    code = env_shell_main(
        ["--source", ENVS, "--class", "Notes", "--workspace", str(tmp_path)],
        stdin=script,
        stdout=out,
    )
    text = out.getvalue()
    assert code == 0
    assert "run_shell(command: string" in text and "count_words(" in text
    assert '+ __workspace__.files.a.txt: "hi"' in text


def test_shell_reports_a_killed_session_and_exits_four(capsys):
    out = io.StringIO()
    code = env_shell_main(
        ["--source", str(HOSTILE / "resources.py"), "--class", "CpuLoop", "--timeout", "0.5"],
        stdin=io.StringIO("spin {}\nquick {}\n"),
        stdout=out,
    )
    assert code == 4
    assert "error: timeout after 0.5s (worker killed)" in out.getvalue()
    assert "session killed" in out.getvalue()
    assert "result:" not in out.getvalue()  # quick was never run
    assert capsys.readouterr().err.startswith("envfoundry env shell: error: timeout after 0.5s")


def test_shell_on_an_environment_that_fails_to_load_exits_three(capsys):
    out = io.StringIO()
    code = env_shell_main(["--source", ENVS, "--class", "Broken"], stdin=io.StringIO(), stdout=out)
    assert code == 3
    assert out.getvalue() == ""
    assert capsys.readouterr().err == (
        "envfoundry env shell: error: environment failed to load: RuntimeError: cannot construct\n"
    )


def test_shell_usage_errors_exit_two(capsys):
    assert env_shell_main(["--source", "nowhere.py"]) == 2
    assert env_shell_main([]) == 2


def test_run_plays_a_task_line_of_an_rl_shard(tmp_path, capsys, monkeypatch):
    from tests.fakes.shard_envs import shard_environment, write_rl_task

    shard = write_rl_task(tmp_path, shard_environment("things-1"), {"things": {"a": {"id": "a"}}})
    calls = write_calls(tmp_path, {"tool": "add_thing", "args": {"thing_id": "b"}})
    code, lines, err = run(["--task", f"{shard}:1", "--calls", calls], capsys)
    assert code == 0
    assert err == f"envfoundry env run: task S-1 of environment things-1 ({shard}:1)\n"
    assert lines[-1]["final_state"] == {"things": {"a": {"id": "a"}, "b": {"id": "b"}}}
    assert run(["--task", str(shard), "--calls", calls, "--state-id", "x"], capsys)[0] == 2
    # The line's code counts as foreign whatever it claims: without a real sandbox, no run.
    line = json.loads(shard.read_text())
    line["environment"]["compiled_by_us"] = True
    shard.write_text(json.dumps(line) + "\n")
    import sandboxes.backends

    monkeypatch.setattr(sandboxes.backends, "default_backend", lambda: "process")
    code, _, err = run(["--task", str(shard), "--calls", calls], capsys)
    assert code == 2 and "refused to run code we did not compile" in err
