"""Foreign classes: state in by `_load_scenario` or the constructor, out by a dumper method,
final state with cycles cut."""

from __future__ import annotations

import importlib.util
import sys
import textwrap

import pytest
from sandbox_helpers import FAKES, fake

from sandboxes import EnvSource, SandboxError, open_session, run_episode

FOLDERS = fake("foreign_style.py", "FolderSystem")


def foreign(class_name: str, **kwargs) -> EnvSource:
    return fake("foreign_style.py", class_name, **kwargs)


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


def test_a_config_parameter_takes_the_whole_state(backend):
    state = {"tickets": {"T-7": "open"}, "agent": "ada"}
    with open_session(foreign("ConfigDesk"), state, backend=backend) as session:
        assert session.info["loader"] == "constructor"
        assert session.call("close", {"ticket_id": "T-7"}).result == {
            "success": True,
            "data": "ada",
        }
        assert session.final_state() == {"tickets": {"T-7": "closed"}, "agent": "ada"}
    # No state: the constructor's own defaults, called without arguments.
    episode = run_episode(foreign("ConfigDesk"), None, [], backend=backend)
    assert episode.final_state == {"tickets": {"T-1": "open"}, "agent": "nobody"}
    forced = run_episode(
        foreign("ConfigDesk", loader="attributes"), {"agent": "bo"}, [], backend=backend
    )
    assert forced.final_state == {"tickets": {"T-1": "open"}, "agent": "bo"}


def test_keys_naming_parameters_are_arguments_and_the_rest_attributes(backend):
    state = {"owner": "kim", "capacity": 1, "books": ["Dune"], "room": "attic"}
    episode = run_episode(foreign("Shelf"), state, [("add", {"title": "Emma"})], backend=backend)
    assert episode.status == "ok", episode.reason
    assert episode.results[0].result == {"success": False, "error": "shelf full"}
    assert episode.final_state == state
    # A required parameter with no state at all gets an empty dict.
    assert run_episode(foreign("Shelf"), None, [], backend=backend).final_state["owner"] == {}
    missing = run_episode(foreign("Shelf"), {"capacity": 2}, [], backend=backend)
    assert missing.status == "error"
    assert missing.reason == (
        "environment failed to load: TypeError: Shelf.__init__() missing 1 required "
        "positional argument: 'owner'"
    )


def test_a_kwargs_constructor_takes_every_key_when_asked_to(backend):
    state = {"theme": "dark", "volume": 3}
    with open_session(foreign("Settings", loader="constructor"), state, backend=backend) as session:
        assert session.info["loader"] == "constructor"
        assert session.call("get", {"key": "theme"}).result == {"success": True, "data": "dark"}
        assert session.final_state() == {"options": state}
    with open_session(foreign("Settings"), state, backend=backend) as session:
        assert session.info["loader"] == "attributes"  # nothing in its signature asks for state
        assert session.final_state() == {"options": {}, "theme": "dark", "volume": 3}


def test_a_dumper_method_gives_the_final_state(backend):
    with open_session(foreign("Ledger"), None, backend=backend) as session:
        # get_env_state needs an argument, so the next name is used.
        assert session.info["dumper"] == "get_state"
        # The undocumented `snapshot` reads the instance: a tool, by what it does.
        assert session.tools == ["add", "snapshot"]
        assert session.call("get_state", {}).error == "unknown tool: 'get_state'"
        session.call("add", {"name": "rent", "amount": "1.50"})
        session.call("add", {"name": "food", "amount": "2"})
        assert session.final_state() == {
            "entries": {"rent": 1.5, "food": 2.0},
            "names": ["food", "rent"],
            "on": "2026-03-02",
        }
    named = run_episode(foreign("Ledger", dumper="snapshot"), None, [], backend=backend)
    assert named.final_state == {"count": 0}
    snapshot = run_episode(foreign("Ledger", dumper="attributes"), None, [], backend=backend)
    assert snapshot.final_state == {}


def test_a_failing_dumper_is_named_in_the_error(backend):
    episode = run_episode(foreign("ListDumper"), None, [], backend=backend)
    assert episode.status == "error" and episode.final_state is None
    assert episode.reason == (
        "final state unavailable: state dump is not an object: dump_state() returned list"
    )
    episode = run_episode(foreign("ListDumper", dumper="export_state"), None, [], backend=backend)
    assert episode.reason == (
        "final state unavailable: state dumper export_state() raised RuntimeError: ledger locked"
    )
    episode = run_episode(foreign("ListDumper", dumper="nope"), None, [], backend=backend)
    assert episode.reason == (
        "environment failed to load: LookupError: "
        "the state dumper 'nope' is not a method of ListDumper"
    )


def test_a_missing_dependency_is_named_when_loading_fails(backend):
    code = "import pandas_nope\n\nclass Frame:\n    def rows(self) -> dict:\n        return {}\n"
    episode = run_episode(EnvSource(code=code), {}, [("rows", {})], backend=backend)
    assert episode.status == "error"
    assert episode.reason == (
        "environment failed to load: ModuleNotFoundError: No module named 'pandas_nope'"
    )
    assert episode.results[0].error.startswith("not run: session error: environment failed")


def test_dumper_and_loader_names_are_checked():
    with pytest.raises(SandboxError, match="dumper"):
        EnvSource(code="x", dumper="get state")
    with pytest.raises(SandboxError, match="loader"):
        EnvSource(code="x", loader="kwargs")
    assert EnvSource.parse("env.py", "Env", "constructor", "get_state").dumper == "get_state"


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


@pytest.mark.skipif(importlib.util.find_spec("pandas") is None, reason="pandas is not installed")
def test_a_source_tree_package_imports_its_dependencies_and_compiled_ones_load(
    backend, tmp_path, monkeypatch
):
    """A package on PYTHONPATH outside any site-packages (a `src/` tree, as tau2-bench's)
    finds its dependencies, this interpreter's site-packages being mounted beside it; and a
    compiled one that uses datetime's C API (pandas) loads in a seeded episode, where the
    datetime classes are replaced (sandboxes/inside/entropy.py), and the clock stays seeded."""
    package = tmp_path / "src" / "tabular_pkg"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "frames.py").write_text(
        textwrap.dedent("""
        import datetime

        import pandas


        class Frames:
            def stamp(self) -> dict:
                now = datetime.datetime.now()
                return {
                    "now": now.isoformat(),
                    "timestamp_is_datetime": isinstance(pandas.Timestamp(now), datetime.datetime),
                }
        """)
    )
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    source = EnvSource(module="tabular_pkg.frames:Frames")
    episodes = [
        run_episode(source, {}, [("stamp", {})], backend=backend, entropy_seed=5) for _ in range(2)
    ]
    for episode in episodes:
        assert episode.status == "ok", episode.reason
        assert episode.results[0].result["timestamp_is_datetime"] is True
    assert episodes[0].results[0].result == episodes[1].results[0].result  # a seeded clock
    assert episodes[0].results[0].result["now"].startswith("2026-")


SHOP_STATE = {
    "shop": "Corner Store",
    "orders": {"O1": {"order_id": "O1", "item": "lamp", "status": "pending"}},
}


def test_a_constructor_typed_with_a_pydantic_model_is_given_the_state_as_that_model(backend):
    """tau2's `RetailTools(db: RetailDB)`: the state is the database's data; tool results
    that are models and enums come back as data; the class reports {db: ...}, which loads
    back the same."""
    source = fake("foreign_models.py", "ShopTools", libraries=True)
    with open_session(source, SHOP_STATE, backend=backend) as session:
        assert session.info["loader"] == "constructor"
        order = session.call("get_order", {"order_id": "O1"})
        assert order.ok and order.result == {"order_id": "O1", "item": "lamp", "status": "pending"}
        assert session.call("ship_order", {"order_id": "O1"}).result == "shipped"
        state = session.final_state()
    assert state == {"db": {**SHOP_STATE, "orders": {"O1": {**order.result, "status": "shipped"}}}}
    again = run_episode(source, state, [("get_order", {"order_id": "O1"})], backend=backend)
    assert again.final_state == state and again.results[0].result["status"] == "shipped"
    # A state the model refuses is a load failure that names the model's complaint.
    with open_session(source, {"shop": "x"}, backend=backend) as refused:
        assert refused.status != "ok" and "ValidationError" in (refused.reason or "")


def test_a_constructor_typed_with_a_dataclass_gets_its_fields(backend):
    source = fake("foreign_models.py", "LedgerTools", libraries=True)
    episode = run_episode(source, {"owner": "ana"}, [("deposit", {"amount": 5})], backend=backend)
    assert episode.results[0].result == {"owner": "ana", "balance": 5}
    assert episode.final_state == {"ledger": {"owner": "ana", "balance": 5}}


def test_marked_tools_are_the_tools_on_the_ast_and_in_the_running_class(backend):
    from synthesis.environments.analysis import analyze_class

    source = fake("foreign_models.py", "MarkedShopTools", libraries=True)
    analysed = analyze_class(source.read_code(), "MarkedShopTools")
    assert [(t["name"], t["kind"]) for t in analysed] == [
        ("get_shop", "query"),
        ("rename_shop", "mutate"),  # as declared
    ]
    with open_session(source, SHOP_STATE, backend=backend) as session:
        assert sorted(session.tools) == ["get_shop", "rename_shop"]


def test_a_loader_that_returns_early_on_an_empty_scenario_gets_the_modules_default(backend):
    """EnvCraft's pattern: `_load_scenario({})` returns early, the world is in DEFAULT_STATE."""
    source = fake("foreign_default_state.py", "CarRental")
    episode = run_episode(source, None, [("rent_car", {"car_id": "C1"})], backend=backend)
    assert episode.results[0].result == {"success": True}
    assert episode.final_state["cars"]["C2"] == {"model": "Golf", "available": False}
    assert episode.final_state["rentals"] == {"C1": {"car_id": "C1"}}
    # A scenario given is loaded as it is, the default never mixed in.
    given = run_episode(source, {"cars": {"C9": {"model": "Mini", "available": True}}}, [])
    assert given.final_state == {
        "cars": {"C9": {"model": "Mini", "available": True}},
        "rentals": {},
    }
