"""`envfoundry env run` / `env shell`: usage errors exit 2, an environment that does not load or
a run where every call fails exits 1, contained misbehaviour exits 0."""

from __future__ import annotations

import io
import json

import pytest

from orchestration.env_cli import env_run_main, env_shell_main
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


def test_run_prints_one_line_per_call_and_a_final_line(tmp_path, capsys):
    state = tmp_path / "state.json"
    state.write_text('{"count": 10}')
    calls = write_calls(
        tmp_path,
        {"tool": "increment", "args": {"by": 5}},
        {"tool": "fail"},
        {"tool": "get_count", "args": {}},
    )
    code, lines, _ = run(
        ["--source", ENVS, "--class", "Counter", "--state", str(state), "--calls", calls], capsys
    )
    assert code == 0
    assert lines == [
        {"tool": "increment", "ok": True, "result": {"success": True, "data": 15}, "error": None},
        {"tool": "fail", "ok": False, "result": None, "error": "ValueError: boom"},
        {"tool": "get_count", "ok": True, "result": {"success": True, "data": 15}, "error": None},
        {"final_state": {"count": 15, "log": [5]}, "status": "ok", "reason": None},
    ]


def test_contained_misbehaviour_exits_zero(tmp_path, capsys):
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
    assert code == 0
    assert [line.get("ok") for line in lines[:3]] == [True, False, False]
    assert lines[1]["error"] == "timeout after 0.5s (worker killed)"
    assert lines[3]["status"] == "killed" and lines[3]["final_state"] is None


def test_an_environment_that_fails_to_load_exits_one_and_says_why(tmp_path, capsys):
    calls = write_calls(tmp_path, {"tool": "tool"})
    code, lines, err = run(["--source", ENVS, "--class", "Broken", "--calls", calls], capsys)
    assert code == 1
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
    assert code == 1
    assert err == (
        "envfoundry env run: error: environment failed to load: "
        "ModuleNotFoundError: No module named 'pandas_nope'\n"
    )


def test_a_run_where_every_call_failed_exits_one(tmp_path, capsys):
    calls = write_calls(tmp_path, {"tool": "fail"}, {"tool": "nope"})
    code, lines, err = run(["--source", ENVS, "--class", "Counter", "--calls", calls], capsys)
    assert code == 1
    assert err == "envfoundry env run: error: every call failed (2 of 2)\n"
    assert [line.get("ok") for line in lines[:2]] == [False, False]
    assert lines[2]["status"] == "ok"
    empty = write_calls(tmp_path)
    assert run(["--source", ENVS, "--class", "Counter", "--calls", empty], capsys)[0] == 0


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
    state.write_text("[1, 2]")
    calls = write_calls(tmp_path, {"tool": "get_count"})
    assert (
        env_run_main(
            ["--source", ENVS, "--class", "Counter", "--calls", calls, "--state", str(state)]
        )
        == 2
    )
    assert "must be a JSON object" in capsys.readouterr().err


def test_unavailable_backend_is_a_usage_error(tmp_path, capsys):
    from sandboxes.backends import unavailable_reason

    if unavailable_reason("docker") is None:
        pytest.skip("docker is available here")
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
        'tools\nincrement {"by": 2}\ncall fail {"message": "x"}\n'
        "get_count\nincrement [1]\nnope {}\nstate\nquit\n"
    )
    out = io.StringIO()
    code = env_shell_main(["--source", ENVS, "--class", "Counter"], stdin=script, stdout=out)
    text = out.getvalue()
    assert code == 0
    assert "increment (mutate): Add to the counter." in text
    assert '"by":{"type":"integer"}' in text
    assert "get_count (query): Read the counter." in text
    assert 'result: {"success":true,"data":2}' in text
    assert "  ~ count: 0 -> 2\n  + log[0]: 2\n" in text
    assert "error: ValueError: x\nstate: unchanged" in text
    assert "arguments must be a JSON object" in text
    assert "unknown tool 'nope'" in text
    assert '"count": 2' in text


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
    assert "run_shell (" in text and "count_words (" in text
    assert '+ __workspace__.files.a.txt: "hi"' in text


def test_shell_reports_a_killed_session_and_exits_zero():
    out = io.StringIO()
    code = env_shell_main(
        ["--source", str(HOSTILE / "resources.py"), "--class", "CpuLoop", "--timeout", "0.5"],
        stdin=io.StringIO("spin {}\nquick {}\n"),
        stdout=out,
    )
    assert code == 0
    assert "error: timeout after 0.5s (worker killed)" in out.getvalue()
    assert "session killed" in out.getvalue()


def test_shell_on_an_environment_that_fails_to_load_exits_one(capsys):
    out = io.StringIO()
    code = env_shell_main(["--source", ENVS, "--class", "Broken"], stdin=io.StringIO(), stdout=out)
    assert code == 1
    assert out.getvalue() == ""
    assert capsys.readouterr().err == (
        "envfoundry env shell: error: environment failed to load: RuntimeError: cannot construct\n"
    )


def test_shell_usage_errors_exit_two(capsys):
    assert env_shell_main(["--source", "nowhere.py"]) == 2
    assert env_shell_main([]) == 2
