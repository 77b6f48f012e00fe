"""Code versions that cannot go stale: each stage's version covers what it runs.

The stages' versions are computed on a copy of the checkout, which the tests edit: the
checkout itself is never touched (other workers read it meanwhile).
"""

from __future__ import annotations

import ast
import shutil
from pathlib import Path

import pytest

from synthesis.code_versions import (
    ENGINE_PACKAGES,
    code_closure,
    code_version,
    function_entries,
    import_statements,
)
from synthesis.config import REPO_ROOT

COPIED = (*ENGINE_PACKAGES, "assets")
# Engine files that no stage runs, each with why.
NOT_RUN_BY_A_STAGE = {
    # `make docs` runs it (and the agent's page entry) to write docs/llm-stages.md.
    "synthesis/llm/stages.py",
    "synthesis/rollouts/agent_stage.py",
    # Run by asset checks, which run again whenever their asset is made and make nothing.
    "quality/proofs.py",
    # `envfoundry eval`'s command line and its --compare, outside any build (the
    # `evaluation` asset runs the rest of synthesis/evaluation/).
    "synthesis/evaluation/command.py",
    "synthesis/evaluation/compare.py",
}


def _engine_files(root: Path = REPO_ROOT) -> set[str]:
    return {
        p.relative_to(root).as_posix()
        for package in ENGINE_PACKAGES
        for p in (root / package).rglob("*")
        if p.is_file() and "__pycache__" not in p.parts
    }


def _stages() -> dict[str, tuple[str, str]]:
    """op → (module, function) of every stage the code location versions by its code."""
    return {op: (module, function) for op, (module, function, _) in _stage_defs().items()}


def _stage_defs() -> dict[str, tuple[str, str, str]]:
    """op → (module, function, the code version Dagster holds) for each of our stages."""
    from orchestration.definitions import defs

    found = {}
    for assets_def in defs.resolve_asset_graph().assets_defs:
        versions = {spec.code_version for spec in assets_def.specs}
        function = getattr(assets_def.op.compute_fn, "decorated_fn", None)
        if function is None or function.__module__ == "assets.dbt":
            continue  # dbt's models: dagster-dbt versions each by its SQL
        if not assets_def.specs or assets_def.is_observable:
            continue  # asset checks and observed sources: nothing is made, nothing goes stale
        assert None not in versions, f"{assets_def.op.name} has no code version: use stage_asset"
        function = getattr(function, "__wrapped__", function)
        (version,) = versions
        found[assets_def.op.name] = (function.__module__, function.__name__, version)
    return found


@pytest.fixture(scope="module")
def stages() -> dict[str, tuple[str, str]]:
    return _stages()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    for package in COPIED:
        shutil.copytree(
            REPO_ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("__pycache__")
        )
    return tmp_path


def _versions(stages: dict[str, tuple[str, str]], root: Path) -> dict[str, str]:
    return {
        stage: code_version(*function_entries(module, name, ("assets",), root=root), root=root)
        for stage, (module, name) in stages.items()
    }


def _closures(stages: dict[str, tuple[str, str]], root: Path) -> dict[str, set[str]]:
    return {
        stage: set(code_closure(function_entries(m, f, ("assets",), root=root), root=root).files)
        for stage, (m, f) in stages.items()
    }


def _edit(root: Path, relative: str) -> None:
    with open(root / relative, "a", encoding="utf-8") as f:
        f.write("\n# an edit that changes no behaviour still changes the code\n")


def test_the_code_location_versions_every_stage_by_what_it_runs():
    held = _stage_defs()
    assert {"env_specs", "environments", "scenarios", "checks", "trajectories"} <= set(held)
    computed = _versions({op: (m, f) for op, (m, f, _) in held.items()}, REPO_ROOT)
    assert computed == {op: version for op, (_, _, version) in held.items()}


def test_editing_a_task_family_makes_scenarios_stale(stages, checkout):
    """The bug this module exists for: the task families were in no stage's list."""
    before = _versions(stages, checkout)
    for family in ("chains", "questions", "conditionals", "infeasible", "refusals"):
        _edit(checkout, f"synthesis/tasks/families/{family}.py")
        after = _versions(stages, checkout)
        assert after["scenarios"] != before["scenarios"], family
        # Environments are not made by the planner: they stay fresh.
        for fresh in ("environments", "env_specs", "initial_states"):
            assert after[fresh] == before[fresh], (family, fresh)
        before = after


def test_each_stage_goes_stale_when_a_module_deep_in_its_closure_changes(stages, checkout):
    """For each stage, the module of its closure farthest (by imports) from what it calls is
    edited: that stage goes stale, and exactly the stages whose closure holds it."""
    closures = _closures(stages, checkout)
    before = _versions(stages, checkout)
    for stage, (module, function) in sorted(stages.items()):
        deepest = _deepest_module(function_entries(module, function, ("assets",), checkout))
        _edit(checkout, deepest)
        after = _versions(stages, checkout)
        changed = {s for s in stages if after[s] != before[s]}
        assert stage in changed, (stage, deepest)
        assert changed == {s for s, files in closures.items() if deepest in files}, deepest
        assert changed != set(stages), f"{deepest} is in every stage: not a telling edit"
        before = after


def _deepest_module(entries: tuple[str, ...]) -> str:
    """The file of the closure of `entries` reached last in a breadth-first walk of imports."""
    from synthesis.code_versions import _Checkout

    code = _Checkout(REPO_ROOT)
    depth = {name: 0 for name in entries}
    frontier = list(entries)
    while frontier:
        following = []
        for name in frontier:
            for imported in code.imports_of(name):
                if imported not in depth:
                    depth[imported] = depth[name] + 1
                    following.append(imported)
        frontier = following
    name = max(sorted(depth), key=depth.get)
    return code.relative(code.module_file(name))


def test_a_file_run_in_the_sandbox_is_part_of_every_stage_that_runs_one(stages, checkout):
    before = _versions(stages, checkout)
    _edit(checkout, "sandboxes/inside/worker.py")
    after = _versions(stages, checkout)
    for stage in ("environments", "scenarios", "checks", "trajectories"):
        assert after[stage] != before[stage], stage
    _edit(checkout, "synthesis/tasks/envfoundry_reward.py")
    assert _versions(stages, checkout)["training_shards"] != after["training_shards"]


def test_every_engine_file_is_run_by_some_stage_or_says_why_not(stages):
    """A file a stage runs without importing it (a worker script, a shipped module) is
    covered only when a module names it in VERSIONED_FILES: one that is neither imported
    nor named is a version waiting to go stale."""
    covered = set().union(*_closures(stages, REPO_ROOT).values())
    missing = sorted(_engine_files() - covered - NOT_RUN_BY_A_STAGE)
    assert not missing, f"no stage's code version covers {missing}"


def test_the_line_reader_finds_every_import_the_parser_finds():
    """`import_statements` reads lines for speed; the parser is the reference."""
    for relative in sorted(_engine_files()):
        if not relative.endswith(".py"):
            continue
        source = (REPO_ROOT / relative).read_text(encoding="utf-8")
        read = {ast.dump(n) for n in import_statements(source)}
        parsed = {ast.dump(n) for n in _parsed_imports(ast.parse(source))}
        assert parsed <= read, (relative, parsed - read)
        # Extra finds are docstring prose that reads like an import: never an engine module.
        for extra in read - parsed:
            assert not any(p in extra for p in ENGINE_PACKAGES), (relative, extra)


def _parsed_imports(tree: ast.AST) -> list[ast.stmt]:
    found, stack = [], [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(_without_positions(node))
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            stack.extend(node.orelse)
            continue
        stack.extend(ast.iter_child_nodes(node))
    return found


def _without_positions(node: ast.stmt) -> ast.stmt:
    return ast.parse(ast.unparse(node)).body[0]


def test_closures_follow_lazy_imports_parents_and_declared_files_not_type_checking(tmp_path):
    files = {
        "synthesis/__init__.py": "",
        "synthesis/stage.py": (
            "from typing import TYPE_CHECKING\n"
            "if TYPE_CHECKING:\n"
            "    from synthesis import typing_only\n"
            "def run():\n"
            "    from synthesis.family import registry  # lazy\n"
            "    from . import (  # a comment inside\n"
            "        relative,\n"
            "    )\n"
        ),
        "synthesis/typing_only.py": "",
        "synthesis/relative.py": "",
        "synthesis/family/__init__.py": "from synthesis.family import member\n",
        "synthesis/family/registry.py": "",
        "synthesis/family/member.py": 'VERSIONED_FILES = ("worker",)\n',
        "synthesis/family/worker/run.sh": "echo hi\n",
        "synthesis/unrelated.py": "",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    closure = code_closure(["synthesis.stage"], root=tmp_path)
    assert closure.modules == (
        "synthesis",
        "synthesis.family",
        "synthesis.family.member",
        "synthesis.family.registry",
        "synthesis.relative",
        "synthesis.stage",
    )
    assert "synthesis/family/worker/run.sh" in closure.files
    version = closure.version()
    (tmp_path / "synthesis/typing_only.py").write_text("x = 1\n")
    (tmp_path / "synthesis/unrelated.py").write_text("x = 1\n")
    assert code_closure(["synthesis.stage"], root=tmp_path).version() == version
    (tmp_path / "synthesis/family/worker/run.sh").write_text("echo bye\n")
    assert code_closure(["synthesis.stage"], root=tmp_path).version() != version


def test_function_entries_read_what_the_body_runs_not_its_parameters(tmp_path):
    (tmp_path / "assets").mkdir()
    (tmp_path / "synthesis").mkdir()
    for name in ("__init__", "planner", "miner", "helper_engine"):
        (tmp_path / "synthesis" / f"{name}.py").write_text("")
    (tmp_path / "assets" / "__init__.py").write_text("")
    (tmp_path / "assets" / "_util.py").write_text(
        "from synthesis import helper_engine\ndef helper():\n    return helper_engine\n"
    )
    (tmp_path / "assets" / "stage.py").write_text(
        "import dagster as dg\n"
        "from assets._util import helper\n"
        "from synthesis import planner\n"
        "from synthesis.miner import mine\n"
        "@dg.asset(partitions_def=mine)\n"  # a decorator configures, it does not run
        "def mined(): return mine()\n"
        "def stage(mined):\n"  # `mined` is an input here, not the function above
        "    helper()\n"
        "    return planner.plan(mined)\n"
    )
    entries = function_entries("assets.stage", "stage", ("assets",), root=tmp_path)
    assert entries == ("synthesis.helper_engine", "synthesis.planner")


def test_a_stage_must_name_engine_modules():
    with pytest.raises(ValueError, match="engine"):
        code_version("assets._resources")
