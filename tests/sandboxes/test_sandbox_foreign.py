"""Foreign classes (BFCL style): state loaded by `_load_scenario`, final state with cycles cut."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
from sandbox_helpers import FAKES, fake

from sandboxes import EnvSource, open_session, run_episode

FOLDERS = fake("foreign_style.py", "FolderSystem")


def test_load_scenario_is_picked_automatically_and_cycles_are_cut(backend):
    scenario = {
        "owner": "sam",
        "root": {
            "name": "root",
            "children": {"a.txt": "alpha", "docs": {"name": "docs", "children": {}}},
        },
    }
    with open_session(FOLDERS, scenario, backend=backend) as session:
        assert session.info["loader"] == "load_scenario"
        assert session.call("ls", {}).result == {"current_directory_content": ["a.txt", "docs"]}
        assert session.call("mkdir", {"dir_name": "new"}).result == {}
        state = session.final_state()
    assert state["owner"] == "sam"
    root = state["root"]
    assert root["name"] == "root" and root["parent"] is None
    assert root["children"]["a.txt"] == "alpha"
    assert root["children"]["docs"] == {"name": "docs", "parent": "<cycle>", "children": {}}
    assert root["children"]["new"]["parent"] == "<cycle>"
    assert "_inode" not in root and "_cwd" not in state


def test_none_state_uses_the_class_defaults_via_load_scenario(backend):
    episode = run_episode(FOLDERS, None, [("ls", {})], backend=backend)
    assert episode.results[0].result == {"current_directory_content": ["notes.txt"]}
    assert episode.final_state["owner"] == "alex"


def test_attributes_loader_can_be_forced(backend):
    source = EnvSource(path=FOLDERS.path, class_name="FolderSystem", loader="attributes")
    episode = run_episode(source, {"owner": "kim"}, [], backend=backend)
    assert episode.final_state == {"owner": "kim", "root": None}


def test_module_source_mounts_only_the_package(backend, tmp_path, monkeypatch):
    package = tmp_path / "foreign_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "backends.py").write_text((FAKES / "foreign_style.py").read_text())
    (tmp_path / "secret.env").write_text("OPENAI_API_KEY=sk-from-a-dotenv-file")
    probe = textwrap.dedent("""
        import os

        class Probe:
            def look(self) -> dict:
                here = os.path.dirname(os.path.dirname(__file__))
                return {"success": True, "data": sorted(os.listdir(here))}
    """)
    (package / "probe.py").write_text(probe)
    monkeypatch.syspath_prepend(str(tmp_path))
    source = EnvSource(module="foreign_pkg.backends:FolderSystem")
    assert source.class_name == "FolderSystem"
    episode = run_episode(source, {}, [("ls", {})], backend=backend)
    assert episode.results[0].result == {"current_directory_content": ["notes.txt"]}
    look = run_episode(EnvSource(module="foreign_pkg.probe"), {}, [("look", {})], backend=backend)
    if backend != "process":
        assert look.results[0].result["data"] == ["foreign_pkg"]
    assert "foreign_pkg" not in sys.modules  # located by path, never imported by the parent


BFCL = "bfcl_eval.eval_checker.multi_turn_eval.func_source_code"
needs_bfcl = pytest.mark.skipif(
    importlib.util.find_spec("bfcl_eval") is None,
    reason="bfcl-eval is not installed (pip install --no-deps bfcl-eval)",
)


@needs_bfcl
def test_bfcl_gorilla_file_system(backend):
    scenario = {
        "root": {
            "alex": {
                "type": "directory",
                "contents": {
                    "notes.txt": {"type": "file", "content": "hello bfcl"},
                    "projects": {"type": "directory", "contents": {}},
                },
            }
        }
    }
    source = EnvSource(module=f"{BFCL}.gorilla_file_system:GorillaFileSystem")
    calls = [
        ("ls", {}),
        ("cd", {"folder": "projects"}),
        ("touch", {"file_name": "plan.md"}),
        ("echo", {"content": "step 1", "file_name": "plan.md"}),
        ("pwd", {}),
    ]
    episode = run_episode(source, scenario, calls, backend=backend)
    assert episode.status == "ok", episode.reason
    assert episode.results[0].result == {"current_directory_content": ["notes.txt", "projects"]}
    assert episode.results[4].result == {"current_working_directory": "/alex/projects"}
    alex = episode.final_state["root"]
    assert alex["name"] == "alex" and alex["parent"] is None
    plan = alex["contents"]["projects"]["contents"]["plan.md"]
    assert plan["content"] == "step 1"
    assert alex["contents"]["projects"]["parent"] == "<cycle>"


@needs_bfcl
def test_bfcl_vehicle_control_state(backend):
    source = EnvSource(module=f"{BFCL}.vehicle_control:VehicleControlAPI")
    episode = run_episode(
        source, {"fuelLevel": 5.0}, [("fillFuelTank", {"fuelAmount": 10.0})], backend=backend
    )
    assert episode.status == "ok", episode.reason
    assert episode.final_state["fuelLevel"] == 15.0
    assert "_random" not in episode.final_state
