"""The `run` verb of project environments against the sandbox: commands an agent (or a hostile
policy) runs are contained as environment code is (tests/sandboxes/test_attacks.py), and the
session, or the next one, goes on."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sandboxes import EnvSource, Limits, open_session
from sandboxes.backends import unavailable_reason
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.folder import project_folder
from synthesis.models import Topic


def _backend(name: str):
    why = unavailable_reason(name)
    marks = [pytest.mark.skip(reason=f"{name}: {why}")] if why else []
    if name == "docker":
        marks.append(pytest.mark.slow)  # containers: kept out of the fast tier
    return pytest.param(name, marks=marks, id=name)


BACKENDS = [_backend(name) for name in ("bwrap", "docker")]
LIMITS = Limits(call_timeout_s=8.0)


@pytest.fixture(scope="module")
def project():
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    topic = next(t for t in catalogue["topics"] if t["archetype"] == "project")
    spec = build_project_spec(Topic.model_validate(topic))
    state = {"__workspace__": project_folder(spec.workspace, 1).tree()}
    return EnvSource(code=environment_code(spec)), state


def _run(session, command: str, timeout_s: int = 3) -> dict:
    result = session.call("run", {"command": command, "timeout_s": timeout_s})
    assert result.ok, result.error
    assert result.result["success"], result.result
    return result.result["data"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_commands_work_in_the_workspace_with_a_fixed_environment(backend, project):
    source, state = project
    with open_session(source, state, backend=backend, limits=LIMITS) as session:
        done = _run(
            session, "echo $LC_ALL $TZ; date +%Z; ls data/*.csv | head -1; wc -l <README.md"
        )
        lines = done["output"].splitlines()
        assert done["exit_code"] == 0 and lines[:2] == ["C UTC", "UTC"]
        assert lines[2].endswith(".csv")
        wrote = _run(session, "python3 -c 'print(6*7)' && echo x > reports/out.txt")
        assert wrote["output"] == "42\n"
        assert _run(session, "exit 3")["exit_code"] == 3
        # The tool set gold programs and agents may count on, the same on every backend.
        tools = _run(
            session,
            "for t in awk sed grep find sort cut python3 sqlite3; do"
            " command -v $t >/dev/null || echo missing $t; done;"
            " echo a,b | awk -F, '{print $2}' | sed s/b/c/;"
            " echo 'select 6*7;' | sqlite3",
        )
        assert tools["output"] == "c\n42\n", tools
        final = session.final_state()
    assert final["__workspace__"]["files"]["reports/out.txt"] == "x\n"


@pytest.mark.parametrize("backend", BACKENDS)
def test_hostile_commands_are_contained(backend, project, tmp_path):
    source, state = project
    canary = tmp_path / "canary.txt"
    canary.write_text("host secret")
    with open_session(source, state, backend=backend, limits=LIMITS) as session:
        # The host's files: neither its secrets nor a path it owns.
        read = _run(session, f"cat /etc/shadow {canary} /root/.bashrc 2>&1; echo end")
        assert "host secret" not in read["output"] and "root:" not in read["output"]
        wrote = _run(session, f"echo pwned > {canary}; echo pwned > /usr/pwned; echo done")
        assert canary.read_text() == "host secret" and not Path("/usr/pwned").exists()
        assert "done" in wrote["output"]
        # No network, not even the host's loopback.
        net = _run(
            session,
            "python3 -c \"import socket; socket.create_connection(('1.1.1.1', 53), timeout=2)\"",
        )
        assert net["exit_code"] != 0
        # A fork bomb and a command that never ends stop at their timeout.
        _run(session, "bomb() { bomb | bomb & }; bomb", timeout_s=2)
        assert _run(session, "echo still here")["output"] == "still here\n"
        assert _run(session, "sleep 60", timeout_s=1)["stopped"].startswith("stopped after")
        # What a command leaves running in the background ends with the call.
        _run(session, "(sleep 2; echo late > late.txt) &")
        _run(session, "sleep 3; ls")
        # A disk fill stops at the file size limit; the output of a flood at 64 KB.
        _run(session, "head -c 2000000000 /dev/zero > big; ls -l big | wc -l", timeout_s=10)
        flood = _run(session, "yes", timeout_s=5)
        assert len(flood["output"]) <= 65536
        assert session.status == "ok"
        assert "late.txt" not in session.final_state()["__workspace__"]["files"]
        # Signals to every process it can reach end the sandbox, never the host.
        session.call("run", {"command": "kill -9 -1", "timeout_s": 2})
    assert os.getppid() > 1 and canary.read_text() == "host secret"
    with open_session(source, state, backend=backend, limits=LIMITS) as again:
        assert _run(again, "echo alive")["output"] == "alive\n"
