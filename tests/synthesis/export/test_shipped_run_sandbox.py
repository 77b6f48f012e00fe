"""The shipped reward module's `run` under bubblewrap: a project task's RL line loads without
trust where bwrap is usable, its commands work in the workspace as they do in EnvFoundry's
sandbox, and a hostile command (the attacks of tests/synthesis/environments/test_project_run.py)
reaches nothing of the host; where bwrap is not usable, only trust=True loads it."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from synthesis.tasks import envfoundry_reward as efr
from tests.shard_support import first_topic, planned_task, task_shards
from tests.synthesis.test_workspace import TOPICS as WORKSPACE_TOPICS

NO_BWRAP = efr.bwrap_unusable_reason()
needs_bwrap = pytest.mark.skipif(NO_BWRAP is not None, reason=f"bwrap: {NO_BWRAP}")


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """A project task's RL line, the shards folder its environment code is in, its scenario."""
    out = tmp_path_factory.mktemp("shards")
    env, scenario, checks = planned_task(first_topic("project"))
    rl = task_shards(out, env, scenario, checks, "You work in a project folder.")
    task = json.loads(rl.read_text().splitlines()[0])
    assert "run" in {t["function"]["name"] for t in task["tools"]}
    return task, str(out), scenario


def _run(env: efr.Env, command: str, timeout_s: int = 3) -> dict:
    result = efr.step(env, "run", {"command": command, "timeout_s": timeout_s})
    assert result["success"], result
    return result["data"]


def _sandboxed(task, root) -> efr.Env:
    """A loaded environment whose commands are checked to run in a pid namespace of their
    own before any hostile one is tried: a fork bomb or `kill -9 -1` outside it would hit
    every process of this machine."""
    env = efr.load_env(task, root=root)
    assert env.commands == "bwrap"
    init = efr.step(env, "run", {"command": "cat /proc/1/comm", "timeout_s": 3})
    if init.get("data", {}).get("output") != "bwrap\n":
        pytest.fail(f"commands are not in a sandbox's pid namespace: {init}")
    return env


@needs_bwrap
def test_a_project_task_loads_without_trust_and_replays_as_in_the_sandbox(project):
    """Every call of the gold chain, its programs included, returns under bwrap what it
    returned in EnvFoundry's sandbox: the gold earns 1, doing nothing 0."""
    task, root, scenario = project
    env = efr.load_env(task, root=root)
    assert env.commands == "bwrap"
    assert efr.score(task, env) == {"reward": 0.0, "success": False}
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(env, call.tool, call.args) == expected
    assert efr.state(env) == scenario.final_state
    assert efr.score(task, env) == {"reward": 1.0, "success": True}
    for mistake in scenario.provenance["mistakes"][:2]:
        wrong = efr.load_env(task, root=root)
        for call in mistake["chain"]:
            efr.step(wrong, call["tool"], call["args"])
        assert efr.score(task, wrong)["reward"] == 0.0, mistake["label"]


@needs_bwrap
def test_commands_work_in_the_workspace_with_the_fixed_environment(project):
    task, root, _ = project
    env = efr.load_env(task, root=root)
    done = _run(env, "echo $LC_ALL $TZ $PATH; date +%Z; pwd; echo $HOME; ls data | head -1")
    lines = done["output"].splitlines()
    assert done["exit_code"] == 0
    # The folder is where EnvFoundry's sandbox has it, so paths a command prints (a
    # traceback's) are those the training data shows.
    assert lines[:4] == ["C UTC /usr/local/bin:/usr/bin:/bin", "UTC", "/workspace", "/workspace"]
    assert lines[4].endswith(".csv")
    wrote = _run(env, "python3 -c 'print(6*7)' > reports/out.txt && awk 'END{print NR}' README.md")
    assert wrote["exit_code"] == 0 and int(wrote["output"]) > 0
    assert efr.step(env, "cat", {"path": "reports/out.txt"}) == {"success": True, "data": "42\n"}
    # The file tools write, the next command reads and changes (as root, the tools' files
    # are root's until the command's uid is given the folder).
    assert efr.step(env, "write", {"path": "notes.txt", "text": "a\n"})["success"]
    assert _run(env, "echo b >> notes.txt; cat notes.txt")["output"] == "a\nb\n"
    assert _run(env, "exit 3")["exit_code"] == 3
    assert efr.state(env)["__workspace__"]["files"]["notes.txt"] == "a\nb\n"


@needs_bwrap
def test_hostile_commands_reach_nothing_of_the_host(project, tmp_path):
    task, root, _ = project
    env = _sandboxed(task, root)
    canary = tmp_path / "canary.txt"
    canary.write_text("host secret")
    # The host's files: a marker outside the workspace, home folders, the project itself.
    read = _run(env, f"cat {canary} /etc/shadow /etc/hostname 2>&1; ls / /root /home /work 2>&1")
    assert "host secret" not in read["output"] and "root:" not in read["output"]
    assert "No such file" in read["output"]
    sandbox_root = {
        *("bin", "dev", "etc", "lib", "lib32", "lib64", "libx32", "proc", "sbin", "tmp", "usr"),
        "workspace",
    }
    assert set(_run(env, "ls /")["output"].split()) <= sandbox_root
    wrote = _run(env, f"echo pwned > {canary}; echo pwned > /usr/pwned; echo done")
    assert canary.read_text() == "host secret" and not Path("/usr/pwned").exists()
    assert "done" in wrote["output"]
    # Up the tree is the sandbox's own root, which holds the workspace and the system.
    above = _run(env, "ls -a ..; cat ../etc/hostname 2>&1")
    assert "workspace" in above["output"].split()
    assert set(above["output"].split()) - {".", "..", "cat:", "../etc/hostname:"} <= {
        *sandbox_root,
        *("No", "such", "file", "or", "directory"),
    }
    assert "host secret" not in above["output"]


@needs_bwrap
def test_symlinks_and_fifos_a_command_makes_do_not_lead_the_file_tools_out(project, tmp_path):
    """The file tools run in this process, outside the sandbox: a link a command planted
    to a host path (a marker file, a folder) is refused, never followed; a fifo is not read."""
    task, root, _ = project
    env = _sandboxed(task, root)
    secret = tmp_path / "secret"
    secret.mkdir()
    (secret / "key.txt").write_text("host secret")
    _run(env, f"ln -s {secret}/key.txt key.txt; ln -s {secret} stash; mkfifo pipe")
    for call, args in [
        ("cat", {"path": "key.txt"}),
        ("cat", {"path": "stash/key.txt"}),
        ("cat", {"path": "pipe"}),
        ("write", {"path": "stash/key.txt", "text": "pwned"}),
        ("write", {"path": "stash/new.txt", "text": "pwned"}),
        ("cat", {"path": "../../" + str(secret / "key.txt")}),
    ]:
        result = efr.step(env, call, args)
        assert not result["success"] and "host secret" not in json.dumps(result), (call, args)
    started = time.monotonic()
    grep = efr.step(env, "grep", {"pattern": "secret"})
    assert "host secret" not in json.dumps(grep) and time.monotonic() - started < 5
    assert (secret / "key.txt").read_text() == "host secret"
    assert sorted(os.listdir(secret)) == ["key.txt"]


@needs_bwrap
def test_no_network_not_even_a_socket_this_host_listens_on(project):
    task, root, _ = project
    env = _sandboxed(task, root)
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        for address in (("1.1.1.1", 53), ("127.0.0.1", port)):
            program = f"import socket; socket.create_connection({address!r}, timeout=2)"
            net = _run(env, f'python3 -c "{program}"', timeout_s=5)
            assert net["exit_code"] not in (0, None), (address, net)
        server.settimeout(0.2)
        with pytest.raises(TimeoutError):
            server.accept()


@needs_bwrap
def test_fork_bombs_floods_and_disk_fills_stop_at_their_bounds(project):
    task, root, _ = project
    env = _sandboxed(task, root)
    started = time.monotonic()
    _run(env, "shipped_bomb() { shipped_bomb | shipped_bomb & }; shipped_bomb; sleep 30", 3)
    assert time.monotonic() - started < 8
    # The host is fine: it starts processes, and the bomb's go with their pid namespace.
    assert subprocess.run(["true"], check=False).returncode == 0
    assert _gone("shipped_bomb", within_s=2.0)
    assert _run(env, "echo still here")["output"] == "still here\n"
    assert _run(env, "sleep 60", timeout_s=1)["stopped"].startswith("stopped after")
    # What a command leaves running in the background ends with the call.
    _run(env, "(sleep 2; echo late > late.txt) &")
    time.sleep(2.5)
    assert "late.txt" not in efr.state(env)["__workspace__"]["files"]
    # A file stops at 16 MB, /tmp at 16 MB, the output at 64 KB.
    big = _run(env, "head -c 40000000 /dev/zero > big; wc -c < big", timeout_s=10)
    assert int(big["output"].split()[-1]) == efr.RUN_FILE_SIZE_BYTES
    assert efr.state(env)["__workspace__"]["skipped"]["big"].startswith("too large")
    fill = "for i in 1 2 3; do head -c 10000000 /dev/zero > /tmp/f$i; done; cat /tmp/f? | wc -c"
    assert int(_run(env, fill)["output"].split()[-1]) <= efr.RUN_TMP_BYTES
    assert len(_run(env, "yes", timeout_s=3)["output"]) <= 65536
    # Memory: an allocation over the address-space bound fails inside the command.
    grab = _run(env, "python3 -c 'x = bytearray(2 * 1024**3)'")
    assert grab["exit_code"] != 0 and "MemoryError" in grab["output"]


@needs_bwrap
def test_the_process_bound_is_each_command_s_own(project):
    """Rollouts run side by side (as root, under one uid): each command's 64 processes are
    counted in its own user namespace, so three commands of 40 processes all start them."""
    task, root, _ = project
    envs = [_sandboxed(task, root) for _ in range(3)]
    count = "for i in $(seq 40); do sleep 3 & done; sleep 1; ls /proc | grep -c '^[0-9]'"
    with ThreadPoolExecutor(3) as pool:
        counted = list(pool.map(lambda env: _run(env, count, timeout_s=10), envs))
    assert all(c["exit_code"] == 0 and int(c["output"]) >= 41 for c in counted), counted


def _gone(marker: str, within_s: float) -> bool:
    """Whether no process of the host has `marker` in its command line, within `within_s`
    (killed processes of a pid namespace are reaped just after its init)."""
    deadline = time.monotonic() + within_s
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).stdout:
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@needs_bwrap
def test_signals_reach_only_the_command_s_own_processes(project):
    task, root, _ = project
    env = _sandboxed(task, root)
    hit = _run(env, f"kill -9 {os.getpid()} {os.getppid()}; echo $?; kill -9 -1; echo after")
    assert os.getpid() > 1 and hit["output"].splitlines()[0] != "0"
    assert _run(env, "ps -e -o pid= | wc -l")["output"].strip() in {"3", "4", "5"}
    assert _run(env, "echo alive")["output"] == "alive\n"


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="only root's commands change uid")
def test_as_root_a_private_temporary_folder_is_passed_over_for_the_workspace(project, monkeypatch):
    """A verifiers tool server's TMPDIR is its own 0700 workdir, which the commands' uid
    cannot reach: the workspace is made in /tmp instead, and the probe passes there too."""
    task, root, _ = project
    private = Path(tempfile.mkdtemp(prefix="shipped-run-private-"))
    try:
        monkeypatch.setattr(tempfile, "tempdir", str(private))
        assert efr.bwrap_unusable_reason.__wrapped__() is None
        env = _sandboxed(task, root)
        assert not env.workspace.startswith(str(private))
        assert _run(env, "echo ok > made.txt; cat made.txt")["output"] == "ok\n"
    finally:
        shutil.rmtree(private, ignore_errors=True)


def test_without_a_usable_bwrap_only_trust_loads_a_task_with_run(project, monkeypatch):
    task, root, scenario = project
    monkeypatch.setattr(efr, "bwrap_unusable_reason", lambda: "bubblewrap (bwrap) is gone")
    with pytest.raises(efr.UntrustedEnvironment) as refused:
        efr.load_env(task, root=root)
    said = str(refused.value)
    assert "bubblewrap (bwrap) is gone" in said and "trust=True" in said and "`run`" in said
    with pytest.raises(efr.UntrustedEnvironment):
        efr.check_trust(task)
    env = efr.load_env(task, trust=True, root=root)
    assert env.commands == "unsandboxed"
    assert not getattr(env.instance, "_command_prefix", ())
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(env, call.tool, call.args) == expected
    assert efr.score(task, env) == {"reward": 1.0, "success": True}


def test_a_workspace_without_run_loads_without_trust_and_keeps_to_its_folder(tmp_path):
    """Its tools are EnvFoundry's compiled file verbs, confined to the folder, starting no
    process: no sandbox is needed, whatever bwrap is here."""
    env, scenario, checks = planned_task(WORKSPACE_TOPICS[0], max_chain_length=6)
    rl = task_shards(tmp_path, env, scenario, checks, "You operate a file tree.")
    task = json.loads(rl.read_text().splitlines()[0])
    assert "run" not in {t["function"]["name"] for t in task["tools"]}
    played = efr.load_env(task, root=str(tmp_path))
    assert played.commands is None
    assert not efr.step(played, "cat", {"path": "../../etc/hostname"})["success"]
    for call, expected in zip(scenario.gold_chain, scenario.gold_results, strict=True):
        assert efr.step(played, call.tool, call.args) == expected
    assert efr.score(task, played) == {"reward": 1.0, "success": True}


def test_foreign_workspace_code_is_still_refused_without_trust(project):
    task, _, _ = project
    foreign = {**task, "environment": {**task["environment"], "compiled_by_us": False}}
    with pytest.raises(efr.UntrustedEnvironment, match="not compiled by EnvFoundry"):
        efr.check_trust(foreign)


# The verifiers taskset over a project task's shards, in a virtualenv with verifiers and no
# EnvFoundry: the taskset loads it without trust, and each rollout's tool server (a process
# of its own) runs the gold chain's commands under bwrap. Prints one JSON report.
VERIFIERS_SCRIPT = r"""
import asyncio, json, sys
shards, base_url, task_id = sys.argv[1:]
sys.path.insert(0, shards)
import verifiers.v1 as vf
import envfoundry_reward as efr

report = {"bwrap": efr.bwrap_unusable_reason()}
config = vf.resolve_env_config({"taskset": {"id": "envfoundry-verifiers", "shards": shards}})
env = vf.load_environment(config)
(task,) = [t for t in env.taskset if t.data.id == task_id]


async def play():
    async with env.serving():
        client = vf.EvalClientConfig(base_url=base_url, api_key_var="FAKE_MODEL_API_KEY")
        return await asyncio.gather(*(
            env.run_slot(env.slots(task)[0], vf.ModelContext(model=m, client=client))
            for m in ("gold-model", "idle-model")
        ))


for model, episode in zip(("gold", "idle"), asyncio.run(play())):
    (trace,) = episode.traces
    report[model] = {
        "reward": trace.reward,
        "errors": [str(e) for e in [*episode.errors, *trace.errors]],
        "shown": [call["tool"] for call in trace.state.shown],
    }
print(json.dumps(report))
"""


@pytest.mark.slow
@needs_bwrap
def test_the_verifiers_taskset_plays_a_project_task_with_its_commands_under_bwrap(tmp_path):
    from tests.clean_venv import VERIFIERS, run_clean
    from tests.fakes.openai_server import FakeOpenAIServer, final_answer, tool_call

    env, scenario, checks = planned_task(first_topic("project"))
    shards = tmp_path / "shards"
    task_shards(shards, env, scenario, checks, "You work in a project folder.")
    gold = [tool_call(c.tool, c.args, f"call_{i}") for i, c in enumerate(scenario.gold_chain)]

    def respond(body: dict) -> dict:
        if body["model"] == "idle-model":
            return final_answer("I looked around and changed nothing.")
        played = sum(m["role"] == "assistant" for m in body["messages"])
        return gold[played] if played < len(gold) else final_answer("The report is written.")

    with FakeOpenAIServer(respond) as server:
        proc = run_clean(
            VERIFIERS_SCRIPT,
            str(shards),
            server.base_url,
            scenario.scenario_id,
            cwd=tmp_path,
            requirements=VERIFIERS,
            env={"FAKE_MODEL_API_KEY": "not-a-secret"},
        )
    assert proc.returncode == 0, proc.stderr[-4000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["bwrap"] is None
    assert report["gold"]["errors"] == [] and report["gold"]["reward"] == 1.0, report["gold"]
    assert "run" in report["gold"]["shown"]
    assert report["idle"]["reward"] == 0.0


# The gold chain and a process flood, replayed by an unprivileged user (the module's other
# path: no uid switch, bwrap makes the user namespace itself). Prints one JSON report.
UNPRIVILEGED_SCRIPT = r"""
import json, os, sys
shards, chain = sys.argv[1], json.load(open(sys.argv[2]))
sys.path.insert(0, shards)
import envfoundry_reward as efr

task = json.loads(open(f"{shards}/rl/{sys.argv[3]}.jsonl").readline())
env = efr.load_env(task, root=shards)
for call in chain:
    efr.step(env, call["tool"], call["args"])
flood = "for i in $(seq 100); do sleep 2 & done 2>&1 | grep -c 'Cannot fork'; id -u"
report = {
    "uid": os.getuid(),
    "commands": env.commands,
    "gold": efr.score(task, env),
    "flood": efr.step(env, "run", {"command": flood})["data"]["output"].split(),
}
print(json.dumps(report))
"""


@needs_bwrap
@pytest.mark.skipif(os.geteuid() != 0, reason="already unprivileged: the other tests cover it")
def test_an_unprivileged_user_plays_the_task_under_bwrap_with_the_same_bounds(project):
    setpriv = shutil.which("setpriv")
    if setpriv is None or not os.access("/usr/bin/python3", os.X_OK):
        pytest.skip("needs setpriv and /usr/bin/python3 to play as another user")
    task, root, scenario = project
    # A folder every user can read: pytest's own is root's alone.
    folder = Path(tempfile.mkdtemp(prefix="shipped-run-unprivileged-"))
    try:
        shards = folder / "shards"
        shutil.copytree(root, shards)
        chain = [c.model_dump(mode="json") for c in scenario.gold_chain]
        (folder / "chain.json").write_text(json.dumps(chain))
        (folder / "play.py").write_text(UNPRIVILEGED_SCRIPT)
        for path in [folder, *folder.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        user = ["--reuid", "65534", "--regid", "65534", "--clear-groups"]
        proc = subprocess.run(
            [setpriv, *user, "/usr/bin/python3", "-I", str(folder / "play.py"), str(shards)]
            + [str(folder / "chain.json"), scenario.split],
            capture_output=True,
            text=True,
            timeout=300,
            cwd=folder,
            env={"PATH": "/usr/bin:/bin", "HOME": str(folder)},
        )
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["uid"] == 65534 and report["commands"] == "bwrap"
    assert report["gold"] == {"reward": 1.0, "success": True}
    refused, uid = report["flood"]
    assert int(refused) > 0 and uid == "65534"
