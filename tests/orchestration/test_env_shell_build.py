"""Playing what a build published: `envfoundry env run|shell --home H --env ID [--scenario S]`.

Reads the session's tiny build (tiny_home) and never writes to it; the foreign environment
test works on a home of its own holding a copy of the published warehouse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from orchestration.player.run import env_run_main
from sandboxes.statediff import diff_states
from synthesis import codec
from synthesis.environments.foreign import ForeignSource, foreign_environment
from synthesis.export import warehouse
from synthesis.models import InitialState
from tests.build_support import REPO, query

pytestmark = pytest.mark.slow  # every test reads the shared tiny build

LEDGER = REPO / "tests" / "fakes" / "foreign_style.py"


def write_calls(path: Path, calls: list[dict]) -> str:
    path.write_text("".join(json.dumps(c) + "\n" for c in calls))
    return str(path)


def run(argv: list[str], capsys) -> tuple[int, list[dict], str]:
    code = env_run_main(argv)
    out, err = capsys.readouterr()
    return code, [json.loads(line) for line in out.splitlines()], err


def tool_kinds(home: Path, env_id: str) -> dict[str, str]:
    return dict(query(home, f"SELECT tool_name, kind FROM tools WHERE env_id = '{env_id}'"))


def fewest_mutations_scenario(home: Path) -> dict:
    """A published scenario that changes the state with as few mutating calls as any (one,
    when the build has such a task: then that call's diff is the whole task's diff)."""
    rows = query(
        home,
        "SELECT scenario_id, env_id, state_id, task_text, initial_state_json, gold_chain_json,"
        " gold_results_json, final_state_json FROM scenarios WHERE status = 'published'"
        " AND kind = 'feasible' ORDER BY scenario_id",
    )
    best: tuple[int, dict] | None = None
    for sid, env_id, state_id, task, initial, chain, results, final in rows:
        chain = codec.loads(chain)
        kinds = tool_kinds(home, env_id)
        # Mutating calls that succeed (a question with changes qualifies; a refused request
        # changes nothing).
        changed = codec.loads(final) != codec.loads(initial)
        n = sum(kinds[call["tool"]] == "mutate" for call in chain)
        if changed and n and (best is None or n < best[0]):
            best = (
                n,
                {
                    "scenario_id": sid,
                    "env_id": env_id,
                    "state_id": state_id,
                    "task_text": task,
                    "initial_state": codec.loads(initial),
                    "gold_chain": chain,
                    "gold_results": codec.loads(results),
                    "final_state": codec.loads(final),
                    "mutations": n,
                },
            )
    assert best is not None, "the tiny build has no published scenario that changes the state"
    return best[1]


def test_shell_plays_a_published_scenario_over_stdin(tiny_home):
    home, _ = tiny_home
    scenario = fewest_mutations_scenario(home)
    env_id = scenario["env_id"]
    kinds = tool_kinds(home, env_id)
    mutation = next(c for c in scenario["gold_chain"] if kinds[c["tool"]] == "mutate")
    required = query(
        home,
        f"SELECT schema_json FROM tools WHERE env_id = '{env_id}' AND tool_name = "
        f"'{mutation['tool']}'",
    )[0][0]
    missing = codec.loads(required)["function"]["parameters"]["required"][0]
    script = "".join(
        ["tools\n"]
        + [f"call {c['tool']} {json.dumps(c['args'])}\n" for c in scenario["gold_chain"]]
        + [f"call {mutation['tool']} {{}}\n", "state\n", "quit\n"]
    )
    command = [sys.executable, "-m", "orchestration.cli", "env", "shell", "--home", str(home)]
    command += ["--env", env_id, "--scenario", scenario["scenario_id"]]
    done = subprocess.run(
        command,
        input=script,
        capture_output=True,
        text=True,
        cwd=REPO,
        env={**os.environ, "DO_NOT_TRACK": "1"},
        timeout=120,
    )
    out = done.stdout
    assert (done.returncode, done.stderr) == (0, ""), out[-2000:]
    lines = out.splitlines()
    assert lines[0] == f"Task: {scenario['task_text']}"
    assert f"initial state {scenario['state_id']}" in lines[1]
    # Every tool is listed with its parameters and its kind.
    listed = [line for line in lines if "  [" in line and "(" in line]
    assert sorted(line.split("(")[0] for line in listed) == sorted(kinds)
    assert f"{mutation['tool']}({missing}: " in out
    # The mutating calls show what the task changes, as the build's gold run saw it: one
    # call's block is the whole diff; several calls' blocks name every path of it (a record
    # made by one call and changed by the next shows as made, then changed).
    expected = diff_states(scenario["initial_state"], scenario["final_state"])
    assert expected
    assert out.count("state changes:") == scenario["mutations"]
    if scenario["mutations"] == 1:
        assert "state changes:\n" + "".join(f"  {change}\n" for change in expected) in out
    else:

        def path(change: str) -> str:
            return change.strip().split(": ", 1)[0].split(" ", 1)[-1]

        shown = {path(line) for line in lines if line.startswith("  ")}
        for change in expected:
            record = path(str(change)).rsplit(".", 1)[0]
            assert path(str(change)) in shown or record in shown, change
    assert out.count("result: ") == len(scenario["gold_chain"])
    # A call without its required argument is refused by name, and the session goes on.
    refused = [line for line in lines if line.startswith("invalid call: ")]
    assert len(refused) == 1
    assert refused[0].startswith(f"invalid call: {mutation['tool']}: missing required argument")
    assert f"'{missing}'" in refused[0].split(";")[0]
    assert "TypeError" not in out
    assert codec.dumps_pretty(scenario["final_state"]).decode() in out


def test_run_replays_a_scenario_in_its_world(tiny_home, tmp_path, capsys):
    home, _ = tiny_home
    scenario = fewest_mutations_scenario(home)
    calls = write_calls(tmp_path / "gold.jsonl", scenario["gold_chain"])
    argv = ["--home", str(home), "--env", scenario["env_id"], "--scenario"]
    code, lines, err = run([*argv, scenario["scenario_id"], "--calls", calls], capsys)
    assert code == 0
    assert err == (
        f"envfoundry env run: scenario {scenario['scenario_id']} (published), "
        f"initial state {scenario['state_id']}\n"
    )
    assert [line["result"] for line in lines[:-1]] == scenario["gold_results"]
    assert lines[-1] == {
        "final_state": scenario["final_state"],
        "status": "ok",
        "reason": None,
        "exit_code": 0,
    }


def test_run_starts_in_the_first_initial_state_and_says_which(tiny_home, tmp_path, capsys):
    home, _ = tiny_home
    env_id, state_id, state, count = query(
        home,
        "SELECT env_id, min(state_id), arg_min(state_json, state_id), count(*)"
        " FROM initial_states GROUP BY env_id ORDER BY env_id LIMIT 1",
    )[0]
    calls = write_calls(tmp_path / "none.jsonl", [])
    code, lines, err = run(["--home", str(home), "--env", env_id, "--calls", calls], capsys)
    assert code == 0
    assert err == (
        f"envfoundry env run: initial state {state_id} (the first of {count}; "
        "choose with --state-id or --scenario)\n"
    )
    assert lines[-1]["final_state"] == codec.loads(state)
    argv = ["--home", str(home), "--env", env_id, "--state-id", state_id, "--calls", calls]
    code, lines, err = run(argv, capsys)
    assert (code, err) == (0, f"envfoundry env run: initial state {state_id}\n")


def test_a_missing_argument_is_a_usage_error_naming_it(tiny_home, tmp_path, capsys):
    home, _ = tiny_home
    scenario = fewest_mutations_scenario(home)
    kinds = tool_kinds(home, scenario["env_id"])
    mutation = next(c for c in scenario["gold_chain"] if kinds[c["tool"]] == "mutate")
    argument = sorted(mutation["args"])[0]
    args = {k: v for k, v in mutation["args"].items() if k != argument}
    calls = write_calls(tmp_path / "calls.jsonl", [{"tool": mutation["tool"], "args": args}])
    argv = ["--home", str(home), "--env", scenario["env_id"], "--calls", calls]
    code, lines, err = run(argv, capsys)
    assert code == 2
    assert f"{calls}:1: {mutation['tool']}: missing required argument '{argument}'" in err
    assert lines[0]["ok"] is False and "TypeError" not in lines[0]["error"]
    assert lines[-1]["status"] == "invalid_calls" and lines[-1]["exit_code"] == 2


def test_a_state_artifact_passed_as_state_is_refused(tiny_home, tmp_path, capsys):
    home, _ = tiny_home
    env_id = query(home, "SELECT min(env_id) FROM environments")[0][0]
    artifact = home / "artifacts" / "initial_states" / f"{env_id}.json"
    assert isinstance(codec.read_json(artifact)["states"], list)
    calls = write_calls(tmp_path / "calls.jsonl", [])
    for argv in (["--source", str(LEDGER), "--class", "Ledger"], ["--home", str(home)]):
        extra = ["--env", env_id] if "--home" in argv else []
        code = env_run_main([*argv, *extra, "--state", str(artifact), "--calls", calls])
        out, err = capsys.readouterr()
        assert (code, out) == (2, "")
        assert err.startswith(f"envfoundry env run: error: --state {artifact} is an initial_states")
        assert "--state-id" in err


def test_unknown_ids_and_homes_without_a_dataset_are_usage_errors(tiny_home, tmp_path, capsys):
    home, _ = tiny_home
    envs = [row[0] for row in query(home, "SELECT env_id FROM environments ORDER BY 1")]
    other, theirs = query(
        home,
        f"SELECT env_id, scenario_id FROM scenarios WHERE env_id != '{envs[0]}' ORDER BY 2 LIMIT 1",
    )[0]
    calls = write_calls(tmp_path / "calls.jsonl", [])
    cases = [
        ([str(home), "nope"], f"unknown environment 'nope' in {home}; environments: {envs[0]}, "),
        (
            [str(home), envs[0], "--scenario", "nope"],
            f"unknown scenario 'nope' for environment {envs[0]}; its scenarios: ",
        ),
        ([str(home), envs[0], "--scenario", theirs], f"(it is a scenario of {other})"),
        (
            [str(home), envs[0], "--state-id", "nope"],
            f"unknown initial state 'nope' for environment {envs[0]}; its states: {envs[0]}-s0",
        ),
        ([str(tmp_path), envs[0]], f"no published dataset in {tmp_path}"),
    ]
    for (where, env_id, *more), message in cases:
        code = env_run_main(["--home", where, "--env", env_id, *more, "--calls", calls])
        out, err = capsys.readouterr()
        assert (code, out) == (2, ""), err
        assert message in err
        assert len(err.splitlines()) == 1


@pytest.fixture
def foreign_home(tiny_home, tmp_path) -> tuple[Path, str]:
    """A home whose published warehouse also holds a foreign class, recorded by the build's
    own functions with a non-default dumper; the tiny home is copied, never changed."""
    home = tmp_path / "home"
    dataset = home / "datasets" / "run"
    dataset.mkdir(parents=True)
    shutil.copy2(tiny_home[0] / "current" / warehouse.WAREHOUSE_FILE, dataset)
    (home / "current").symlink_to(Path("datasets") / "run")
    source = ForeignSource(
        env_id="ledger",
        class_name="Ledger",
        code=LEDGER.read_text(),
        path=str(LEDGER),
        dumper="snapshot",
    )
    env = foreign_environment(source)
    state = InitialState(state_id="ledger-s0", env_id="ledger", seed=0, state=None)
    warehouse.write_tables(
        dataset / warehouse.WAREHOUSE_FILE,
        {
            "environments": warehouse.environment_rows([env]),
            "tools": warehouse.tool_rows([env]),
            "initial_states": warehouse.initial_state_rows([state]),
        },
        mode="merge",
    )
    codec.write_json(home / "artifacts" / "environments" / "ledger.json", env, pretty=False)
    return home, "ledger"


def test_a_foreign_environment_runs_as_the_build_recorded_it(
    foreign_home, tmp_path, capsys, monkeypatch
):
    home, env_id = foreign_home
    calls = write_calls(
        tmp_path / "c.jsonl", [{"tool": "add", "args": {"name": "a", "amount": "2"}}]
    )
    argv = ["--home", str(home), "--env", env_id, "--calls", calls]
    code, lines, err = run(argv, capsys)
    assert code == 0
    assert lines[-1]["final_state"] == {"count": 1}  # the recorded dumper, snapshot()
    # An artifact of other code (a later build that was not published) is not trusted.
    artifact = home / "artifacts" / "environments" / "ledger.json"
    recorded = codec.read_json(artifact)
    codec.write_json(artifact, {**recorded, "code_sha256": "0" * 64})
    code, lines, err = run(argv, capsys)
    assert code == 0
    assert "no artifacts/environments/ledger.json matching the published code" in err
    assert lines[-1]["final_state"]["entries"] == {"a": 2}  # the default dumper, get_state()
    # Fail closed: without a real sandbox, code we did not compile does not run.
    import sandboxes.backends

    monkeypatch.setattr(sandboxes.backends, "default_backend", lambda: "process")
    code, lines, err = run(argv, capsys)
    assert (code, lines) == (2, [])
    assert "refused to run code we did not compile without a real sandbox" in err
