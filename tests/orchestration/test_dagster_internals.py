"""Every private Dagster name the project uses is imported in one module,
orchestration/fastrun/dagster_internals.py, and the installed Dagster still has each of them.

After a Dagster upgrade, the first test names every private name the upgrade moved or removed:
find where each went, and change that module (the only one to change).
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import dagster as dg

from synthesis.code_versions import import_statements

REPO = Path(__file__).resolve().parents[2]
INTERNALS = REPO / "orchestration" / "fastrun" / "dagster_internals.py"
# Everything of ours that is Python, besides the virtualenv.
OURS = ("assets", "benchmarks", "deploy", "docs", "orchestration", "quality", "sandboxes")
OURS += ("synthesis", "tests")


def private_names(source: str) -> list[tuple[str, str | None]]:
    """(module, name) for each private Dagster name `source` imports; name None when the
    statement imports the module itself."""
    found: list[tuple[str, str | None]] = []
    for statement in import_statements(source):
        if isinstance(statement, ast.Import):
            found += [(a.name, None) for a in statement.names if _private(a.name)]
        elif statement.level == 0 and _private(statement.module or ""):
            found += [(statement.module, a.name) for a in statement.names]
    return found


def _private(module: str) -> bool:
    return module.startswith("dagster._")


def missing(names: list[tuple[str, str | None]]) -> list[str]:
    """The names the installed Dagster does not have, each as `module.name` (or the module)."""
    gone = []
    for module, name in names:
        try:
            loaded = importlib.import_module(module)
        except ImportError:
            gone.append(module if name is None else f"{module}.{name} (no module {module})")
            continue
        if name is None or hasattr(loaded, name):
            continue
        try:
            importlib.import_module(f"{module}.{name}")  # a submodule, imported by name
        except ImportError:
            gone.append(f"{module}.{name}")
    return gone


def test_the_installed_dagster_has_every_private_name_we_use():
    names = private_names(INTERNALS.read_text())
    assert len(names) > 30  # read as imports (a parse that finds none would prove nothing)
    gone = missing(names)
    assert not gone, (
        f"Dagster {dg.__version__} no longer has these private names (an upgrade moved or "
        f"removed them): {', '.join(gone)}. Find where each went and change "
        f"{INTERNALS.relative_to(REPO)}, the one module that imports them."
    )
    internals = importlib.import_module("orchestration.fastrun.dagster_internals")
    internals.import_state_storage()


def test_a_moved_or_removed_name_is_named():
    source = (
        "from dagster._core.launcher import RunLauncher, NoSuchLauncher\n"
        "from dagster._core.storage.event_log.sqlite import sqlite_event_log\n"
        "from dagster._no_such_module import Anything\n"
        "import dagster._no_such_package.inside\n"
    )
    assert missing(private_names(source)) == [
        "dagster._core.launcher.NoSuchLauncher",
        "dagster._no_such_module.Anything (no module dagster._no_such_module)",
        "dagster._no_such_package.inside",
    ]


def test_no_other_module_of_ours_imports_dagsters_private_modules():
    importers = sorted(
        str(path.relative_to(REPO))
        for folder in OURS
        for path in (REPO / folder).rglob("*.py")
        if private_names(path.read_text(encoding="utf-8"))
    )
    assert importers == [str(INTERNALS.relative_to(REPO))]


def test_the_version_tags_assets_name_are_dagsters():
    """assets/_staleness.py names the tags data and code versions are recorded under (assets
    may not import orchestration); they are Dagster's."""
    from assets import _staleness
    from orchestration.fastrun import dagster_internals as internals

    assert _staleness.DATA_VERSION_TAG == internals.DATA_VERSION_TAG
    assert _staleness.CODE_VERSION_TAG == internals.CODE_VERSION_TAG
    for key in (dg.AssetKey("topic_catalogue"), dg.AssetKey(["dbt", "mart_funnel"])):
        assert _staleness.input_data_version_tag(key) == internals.get_input_data_version_tag(key)


def test_the_private_methods_our_storage_overrides_are_still_dagsters():
    """orchestration/storage.py overrides these to keep its engines; renamed, the override
    would no longer be called and every event would pay for an engine again."""
    from orchestration.fastrun.dagster_internals import SqliteEventLogStorage

    for method in ("_initdb", "_connect", "has_table", "conn_string_for_shard"):
        assert callable(getattr(SqliteEventLogStorage, method, None)), method
