"""dbt models on the DuckDB warehouse: staging views and metric marts, as Dagster assets."""

import fcntl
import functools
import importlib.metadata
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import dagster as dg
from dagster_dbt import DagsterDbtTranslator, DbtCliInvocation, DbtCliResource, dbt_assets
from dagster_dbt.asset_utils import (
    extract_runtime_selection_from_args,
    get_updated_cli_invocation_params_for_context,
)
from dagster_dbt.dagster_dbt_translator import validate_opt_translator
from dagster_dbt.dbt_manifest import validate_manifest
from packaging import version

from assets._dbt_in_process import DbtFork, invocation_args, invoke
from assets._resources import BuildSettings
from synthesis.config import REPO_ROOT
from synthesis.export import datasets
from synthesis.export.warehouse import ensure_tables
from synthesis.hashing import sha256_text

DBT_PROJECT_DIR = REPO_ROOT / "dbt_project"
_STAMP_NAME = ".envfoundry_source_hash"


def dbt_executable() -> str:
    """The dbt next to this interpreter: `make` does not activate the venv."""
    candidate = Path(sys.executable).with_name("dbt")
    return str(candidate) if candidate.exists() else "dbt"


# The warehouse `dbt parse` is given: a name, not a file (parsing opens no database). The
# publish runs hand dbt the parsed manifest (`parsed_manifest`), so their profile, which names
# the run's own warehouse, is never compared with this one.
PARSE_WAREHOUSE = datasets.PARTS["warehouse"]


def write_profiles(work: Path, warehouse: Path | None = None) -> Path:
    """A profiles.yml pointing dbt at `warehouse` (by default the parse's placeholder)."""
    work.mkdir(parents=True, exist_ok=True)
    (work / "profiles.yml").write_text(_profile_text(warehouse))
    return work


def _profile_text(warehouse: Path | None = None) -> str:
    # One dbt thread: dbt's cost per node is Python (Jinja, events) under one GIL, and DuckDB
    # spreads each query over the cores itself; a second thread only contends. The default
    # profile's one-topic rebuild: dbt step 4.8-5.2 s with one, 5.6-6.3 s with two (2 cores).
    path = str(warehouse) if warehouse is not None else PARSE_WAREHOUSE
    return (
        "envfoundry:\n  target: local\n  outputs:\n    local:\n      type: duckdb\n"
        f"      path: {json.dumps(path)}\n      schema: main\n      threads: 1\n"
    )


def _project_hash(project_dir: Path) -> str:
    files = sorted(
        p
        for p in project_dir.rglob("*")
        if p.is_file()
        and p.suffix in {".sql", ".yml", ".yaml"}
        and "target" not in p.parts
        and "logs" not in p.parts
    )
    project = "".join(f"{p.relative_to(project_dir)}\n{p.read_text()}" for p in files)
    # The profile it is parsed with too: a partial parse made with another one is not reused.
    return sha256_text(project + _profile_text())


def ensure_manifest(project_dir: Path = DBT_PROJECT_DIR) -> Path:
    """Run `dbt parse` (offline) when the manifest is missing or older than the project files."""
    target = project_dir / "target"
    manifest, stamp = target / "manifest.json", target / _STAMP_NAME
    digest = _project_hash(project_dir)

    def current() -> bool:
        return manifest.exists() and stamp.exists() and stamp.read_text() == digest

    if current():
        return manifest
    target.mkdir(parents=True, exist_ok=True)
    # Several processes import the definitions at once (pytest-xdist workers, a run host and
    # the CLI). dbt writes manifest.json in place, so one that read it while another parsed
    # got half a file: one parses under the lock, the others wait and then read its whole
    # manifest. The stamp is written last, so a parse cut off is redone.
    with open(target / ".envfoundry_parse.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if current():
            return manifest
        env = {**os.environ, "DO_NOT_TRACK": "1", "DBT_SEND_ANONYMOUS_USAGE_STATS": "false"}
        # dbt writes the whole parsed manifest to partial_parse.msgpack beside it too: the
        # publish runs load that (`parsed_manifest`) instead of parsing again.
        profiles = write_profiles(target / "parse-profile")
        proc = subprocess.run(
            [
                dbt_executable(),
                "parse",
                "--project-dir",
                str(project_dir),
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
        stamp.write_text(digest)
    return manifest


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
    profiles = write_profiles(work, warehouse=staged / datasets.PARTS["warehouse"])
    args = ["build", "--profiles-dir", str(profiles), "--log-path", str(work / "logs")]
    invocation = dbt.cli(args, context=context, target_path=work / "target")
    yield from invocation.stream()
    datasets.fault_point("dbt")


class WarehouseDbt(DbtCliResource):
    """dagster-dbt's resource, with dbt run in the publish run's process on the project's
    parsed manifest (assets/_dbt_in_process.py says why) instead of a dbt subprocess
    that imports dbt and loads the project again (5–6 s a publish). Everything dagster-dbt
    does with dbt's events is unchanged; so is what a run asks of dbt (its selection, for a
    run of some marts only)."""

    @cached_property
    def _cli_version(self) -> version.Version:
        return version.parse(importlib.metadata.version("dbt-core"))

    def cli(  # type: ignore[override]
        self,
        args: Sequence[str],
        *,
        raise_on_error: bool = True,
        manifest: Any = None,
        dagster_dbt_translator: DagsterDbtTranslator | None = None,
        context: dg.AssetExecutionContext | None = None,
        target_path: Path | None = None,
    ) -> DbtCliInvocation:
        # What DbtCliResource.cli works out before it starts its subprocess (dagster-dbt
        # 0.29, pinned in requirements.lock): the run's selection, the target path, the
        # variables it passes dbt.
        translator = validate_opt_translator(dagster_dbt_translator) or DagsterDbtTranslator()
        manifest = validate_manifest(manifest) if manifest else {}
        cleaned, selects, excludes = extract_runtime_selection_from_args(args)
        params = get_updated_cli_invocation_params_for_context(
            context=context,
            manifest=manifest,
            dagster_dbt_translator=translator,
            runtime_selects=selects,
            runtime_excludes=excludes,
        )
        target_path = target_path or self._get_unique_target_path(context=context)
        project_dir = Path(
            params.dbt_project.project_dir if params.dbt_project else self.project_dir
        )
        if not target_path.is_absolute():
            target_path = project_dir / target_path
        env = {
            "DBT_TARGET_PATH": str(target_path),
            "DBT_LOG_PATH": str(target_path),
            "DBT_PROFILES_DIR": self.profiles_dir or "",
            "DBT_PROJECT_DIR": str(project_dir),
            "DBT_INDIRECT_SELECTION": params.indirect_selection or "",
        }
        profile = ["--profile", self.profile] if self.profile else []
        profile += ["--target", self.target] if self.target else []
        argv = ["dbt", *self.global_config_flags, *cleaned, *profile, *params.selection_args]
        return DbtCliInvocation(
            process=DbtFork(argv, env, parsed_manifest()),  # type: ignore[arg-type]
            manifest=params.manifest,
            dagster_dbt_translator=params.dagster_dbt_translator,
            project_dir=project_dir,
            target_path=target_path,
            raise_on_error=raise_on_error,
            context=context,
            adapter=None,  # only for column metadata and row counts, which we never ask for
            cli_version=self._cli_version,
            project=params.dbt_project,
        )


@functools.cache
def parsed_manifest() -> Any:
    """The project as `ensure_manifest` parsed it (its partial-parse file holds the whole
    manifest), so dbt does not parse it again; parsed here if that file cannot be read."""
    from dbt.contracts.graph.manifest import Manifest

    saved = ensure_manifest().parent / "partial_parse.msgpack"
    try:
        return Manifest.from_msgpack(saved.read_bytes())
    except Exception:  # missing, or written by another dbt: parse, as dbt itself would
        from dbt.cli.main import dbtRunner

        with tempfile.TemporaryDirectory(prefix="envfoundry-dbt-parse-") as tmp:
            work = Path(tmp)  # only the manifest in memory is kept
            result = dbtRunner().invoke(
                ["parse", "--project-dir", str(DBT_PROJECT_DIR), "--profiles-dir",
                 str(write_profiles(work)), "--target-path", str(work / "target"),
                 "--log-path", str(work / "logs"), "--quiet"]
            )  # fmt: skip
        if not result.success:
            raise RuntimeError(f"dbt parse failed: {result.exception}") from result.exception
        return result.result


def warm_up() -> None:
    """Ready dbt in a process that forks publish runs (the run host's warm helper, through
    `RUN_HOST_WARM_IMPORTS`): the parsed manifest loaded, and a `dbt build` of a few models
    (`warm_up_selection`) on an empty warehouse. That builds, once, what dbt otherwise builds
    in every publish: the JSON schemas it checks its project and profile against, the
    adapter, the manifest's lookups, the compiled macros of every materialization and data
    test, and the classes of their results and events. The forked runs inherit all of it.

    On the 2-core machine, a forked publish's `dbt build` used 7.1-7.9 s of CPU with no
    warm-up, 5.2-5.8 s after a `dbt ls`, and 0.8 s less again after this build (the mean of
    eight builds each), which costs the helper about 2 s once. It runs in the calling thread
    (`--threads 1`) and closes its database, so the process can still fork safely."""
    manifest = parsed_manifest()
    with tempfile.TemporaryDirectory(prefix="envfoundry-dbt-warm-") as tmp:
        work = Path(tmp)
        warehouse = work / "warehouse.duckdb"
        ensure_tables(warehouse)  # every source, empty
        env = {
            "DBT_PROJECT_DIR": str(DBT_PROJECT_DIR),
            "DBT_PROFILES_DIR": str(write_profiles(work, warehouse=warehouse)),
            "DBT_TARGET_PATH": str(work / "target"),
            "DBT_LOG_PATH": str(work / "logs"),
        }
        argv = ["dbt", "build", "--threads", "1", "--quiet", *warm_up_selection(manifest)]
        said: list[bytes] = []
        if invoke(invocation_args(argv, env), manifest, said.append) != 0:
            raise RuntimeError(
                "dbt warm-up build failed: " + b"\n".join(said[-5:]).decode(errors="replace")
            )


def warm_up_selection(manifest: Any) -> list[str]:
    """dbt selection arguments for a few models whose build (each with the models upstream
    of it, and the tests on those alone) has every materialization and every kind of data
    test the project's model builds have: what `warm_up` must build to compile them all.
    Chosen greedily: the model whose build adds the most kinds, the smaller build on a tie."""
    models = {u: n for u, n in manifest.nodes.items() if n.resource_type == "model"}
    tests = [n for n in manifest.nodes.values() if n.resource_type == "test"]

    def upstream(unique_id: str) -> set[str]:
        found, todo = {unique_id}, [unique_id]
        while todo:
            for parent in models[todo.pop()].depends_on.nodes:
                if parent in models and parent not in found:
                    found.add(parent)
                    todo.append(parent)
        return found

    def kind(test: Any) -> str:
        generic = getattr(test, "test_metadata", None)  # singular tests have none
        return f"test:{generic.name}" if generic else "test:singular"

    covers = {}
    for unique_id in sorted(models):
        built = upstream(unique_id)
        covers[unique_id] = (
            {f"materialized:{models[m].config.materialized}" for m in built}
            | {kind(t) for t in tests if set(t.depends_on.nodes) <= built},
            len(built),
        )
    wanted = set().union(*(kinds for kinds, _ in covers.values()))
    chosen: list[str] = []
    while wanted:  # every kind wanted is in some model's build: each pick takes one or more
        best = max(covers, key=lambda u: (len(covers[u][0] & wanted), -covers[u][1], u))
        wanted -= covers[best][0]
        chosen.append(best)
    selection = [f"+{models[u].name}" for u in sorted(chosen)]
    # Only the tests whose every model is built: the others would read missing relations.
    return ["--select", *selection, "--indirect-selection", "cautious"]


def dbt_resource() -> DbtCliResource:
    return WarehouseDbt(
        project_dir=str(DBT_PROJECT_DIR),
        profiles_dir=str(DBT_PROJECT_DIR),
        dbt_executable=dbt_executable(),
    )
