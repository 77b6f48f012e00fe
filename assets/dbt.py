"""dbt models on the DuckDB warehouse: staging views and metric marts, as Dagster assets."""

import importlib.metadata
import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliResource, dbt_assets
from packaging import version

from orchestration.resources import BuildSettings
from synthesis.config import REPO_ROOT
from synthesis.export import datasets
from synthesis.hashing import sha256_text

DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"
MANIFEST_PATH = DBT_PROJECT_DIR / "target" / "manifest.json"
_STAMP_PATH = DBT_PROJECT_DIR / "target" / ".envfoundry_source_hash"
DBT_CHILD = Path(__file__).resolve().parent.parent / "orchestration" / "dbt_child.sh"


def dbt_executable() -> str:
    """The dbt next to this interpreter: `make` does not activate the venv."""
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


# The warehouse, named relative to the directory dbt runs in (orchestration/dbt_child.sh
# changes into it). dbt re-parses the whole project when the profile's connection details
# differ from the ones the partial parse was made with (~1.5 s of CPU), and an absolute path
# would differ in every run: a relative one is the same for every run and for `dbt parse`.
WAREHOUSE_IN_DBT_DIR = datasets.PARTS["warehouse"]


def write_profiles(work: Path) -> Path:
    """A profiles.yml pointing dbt at the warehouse file in the directory it runs in."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "profiles.yml").write_text(_profile_text())
    return work


def _profile_text() -> str:
    return (
        "envfoundry:\n  target: local\n  outputs:\n    local:\n      type: duckdb\n"
        f"      path: {json.dumps(WAREHOUSE_IN_DBT_DIR)}\n      schema: main\n      threads: 2\n"
    )


def _project_hash() -> str:
    files = sorted(
        p
        for p in DBT_PROJECT_DIR.rglob("*")
        if p.is_file()
        and p.suffix in {".sql", ".yml", ".yaml"}
        and "target" not in p.parts
        and "logs" not in p.parts
    )
    project = "".join(f"{p.relative_to(DBT_PROJECT_DIR)}\n{p.read_text()}" for p in files)
    # The profile it is parsed with too: a partial parse made with another one is not reused.
    return sha256_text(project + _profile_text())


def ensure_manifest() -> Path:
    """Run `dbt parse` (offline) when the manifest is missing or older than the project files."""
    digest = _project_hash()
    if MANIFEST_PATH.exists() and _STAMP_PATH.exists() and _STAMP_PATH.read_text() == digest:
        return MANIFEST_PATH
    env = {**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
    # Parsed with the profile every publish run uses (see `write_profiles`), so the
    # partial_parse.msgpack written beside the manifest, which dagster-dbt copies into each
    # run's target, is valid there: dbt then skips parsing the project again.
    profiles = write_profiles(MANIFEST_PATH.parent / "parse-profile")
    proc = subprocess.run(
        [
            dbt_executable(),
            "parse",
            "--project-dir",
            str(DBT_PROJECT_DIR),
            "--profiles-dir",
            str(profiles),
            "--quiet",
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"dbt parse failed:\n{proc.stdout}\n{proc.stderr}")
    _STAMP_PATH.write_text(digest)
    return MANIFEST_PATH


class WarehouseTranslator(DagsterDbtTranslator):
    """dbt sources are the warehouse tables the pipeline writes; models are the marts group."""

    def get_asset_key(self, dbt_resource_props: Mapping[str, Any]) -> dg.AssetKey:
        if dbt_resource_props["resource_type"] == "source":
            name = dbt_resource_props["name"]
            # The shards table is written by training_shards, after the gated tables.
            return dg.AssetKey("training_shards" if name == "shards" else ["warehouse", name])
        return dg.AssetKey(["dbt", dbt_resource_props["name"]])

    def get_group_name(self, dbt_resource_props: Mapping[str, Any]) -> str | None:
        return "marts"

    def get_description(self, dbt_resource_props: Mapping[str, Any]) -> str:
        # The schema yml's `description:`, never the model's SQL (the default appends it).
        text = " ".join((dbt_resource_props.get("description") or "").split())
        return text or f"dbt {dbt_resource_props['resource_type']} `{dbt_resource_props['name']}`"

    def get_asset_check_spec(
        self,
        asset_spec: dg.AssetSpec,
        manifest: Mapping[str, Any],
        unique_id: str,
        project: Any,
    ) -> dg.AssetCheckSpec | None:
        spec = super().get_asset_check_spec(asset_spec, manifest, unique_id, project)
        if spec is None:
            return None
        # dagster-dbt leaves a test's description empty unless its meta has one: say what the
        # test asserts instead.
        test = manifest["nodes"].get(unique_id) or manifest.get("unit_tests", {}).get(unique_id, {})
        return dg.AssetCheckSpec(
            spec.name,
            asset=spec.asset_key,
            description=describe_test(test),
            additional_deps=spec.additional_deps,
            blocking=spec.blocking,
            metadata=spec.metadata,
            automation_condition=spec.automation_condition,
        )


def describe_test(test: Mapping[str, Any]) -> str:
    """One line saying what a dbt data test asserts, from its yml arguments."""
    own = " ".join((test.get("description") or "").split())
    meta = test.get("test_metadata") or {}
    kind, kwargs = meta.get("name"), meta.get("kwargs") or {}
    column = f"`{kwargs['column_name']}`" if kwargs.get("column_name") else "the row"
    if own:
        text = own
    elif kind == "unique":
        text = f"{column} is unique"
    elif kind == "not_null":
        text = f"{column} is never null"
    elif kind == "accepted_values":
        text = f"{column} is one of: " + ", ".join(map(str, kwargs.get("values", [])))
    elif kind == "relationships":
        target = re.search(r"ref\(\s*['\"]([^'\"]+)['\"]", str(kwargs.get("to", "")))
        table = target.group(1) if target else str(kwargs.get("to", "?"))
        text = f"every {column} exists in `{table}.{kwargs.get('field', '?')}`"
    elif kind == "unique_combination_of_columns":
        text = "(" + ", ".join(kwargs.get("columns", [])) + ") is unique"
    elif kind == "accepted_range":
        low, high = kwargs.get("min_value"), kwargs.get("max_value")
        bounds = [f">= {low}" if low is not None else "", f"<= {high}" if high is not None else ""]
        text = f"{column} is " + " and ".join(b for b in bounds if b)
    else:
        text = f"dbt test `{kind or test.get('name')}` on {column}"
    severity = (test.get("config") or {}).get("severity") or "error"
    return text + (" (severity warn: reported, never blocks)" if severity.lower() == "warn" else "")


@dbt_assets(manifest=ensure_manifest(), dagster_dbt_translator=WarehouseTranslator())
def dbt_models(context: dg.AssetExecutionContext, dbt: DbtCliResource, settings: BuildSettings):
    """`dbt build`: staging views, marts (funnel, env quality, difficulty, token cost, policy
    benchmark) and every schema test beside them, in the dataset this run builds."""
    staged = settings.staged(context.run_id)
    work = staged / "dbt"
    profiles = write_profiles(work)
    args = ["build", "--profiles-dir", str(profiles), "--log-path", str(work / "logs")]
    with _dbt_working_directory(staged):
        invocation = dbt.cli(args, context=context, target_path=work / "target")
    yield from invocation.stream()
    datasets.fault_point("dbt")


@contextmanager
def _dbt_working_directory(directory: Path) -> Iterator[None]:
    """Where dbt_child.sh starts dbt: read from the environment dagster-dbt copies when it
    starts dbt, so it is set only for that call (a run's steps share its process)."""
    before = os.environ.get(DBT_CWD_VARIABLE)
    os.environ[DBT_CWD_VARIABLE] = str(directory)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(DBT_CWD_VARIABLE, None)
        else:
            os.environ[DBT_CWD_VARIABLE] = before


DBT_CWD_VARIABLE = "ENVFOUNDRY_DBT_CWD"


class WarehouseDbt(DbtCliResource):
    """dagster-dbt's resource without two costs a publish run paid before every `dbt build`
    (~4.5 s together): `dbt --version` in a subprocess, to learn the version of the dbt next
    to this interpreter, which is the dbt-core package installed here; and a dbt adapter
    opened in this process, which dagster-dbt uses only to fetch column metadata and row
    counts, which these assets never ask for."""

    @cached_property
    def _cli_version(self) -> version.Version:
        return version.parse(importlib.metadata.version("dbt-core"))

    def _initialize_dbt_core_adapter(self, args: Sequence[str]) -> None:  # type: ignore[override]
        return None


def dbt_resource() -> DbtCliResource:
    # dbt runs through a wrapper that makes it die with the process that started it: a build
    # killed with SIGKILL must not leave dbt writing a warehouse behind it.
    os.environ.setdefault("ENVFOUNDRY_DBT", dbt_executable())
    return WarehouseDbt(
        project_dir=str(DBT_PROJECT_DIR),
        profiles_dir=str(DBT_PROJECT_DIR),
        dbt_executable=str(DBT_CHILD),
    )
