"""Warehouse tables: every artifact of the build as DuckDB rows, gated by Great Expectations.

Gates run before the write: a table that fails its suite is never written (a blocking asset
check that fails still leaves its asset written, so validation comes first).
"""

from collections.abc import Iterable
from contextlib import closing
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa

from assets._llm import spooled_calls
from assets._resources import BuildSettings
from assets._util import (
    artifact_sources,
    code_version,
    made_by_this_build,
    quarantine_row,
    stage_multi_asset,
)
from assets.table_metadata import table_metadata
from synthesis import codec, heap
from synthesis.environments.model import EnvModel
from synthesis.environments.shape import environment_tool_graph_shape
from synthesis.export import datasets, losses, warehouse, warehouse_parts
from synthesis.export.warehouse_parts import CHECK_TABLES, Part
from synthesis.llm.report import summary_lines
from synthesis.models import (
    Check,
    CheckSelftest,
    Environment,
    EnvSpec,
    InitialState,
    QuarantineRecord,
    Scenario,
    Topic,
)
from synthesis.tasks.screening import apply_screening

# The stages whose runs may call a model: each appends its ledger rows to its run's spool
# file (assets/_llm.py), and `llm_calls` is read from the build's spool, so they are the
# table's upstreams but not inputs of this asset (their artifacts carry no ledger rows).
CATALOGUE_LEDGER_STAGES: tuple[str, ...] = ("mined_topics", "llm_env_specs", "llm_env_code")
ENVIRONMENT_LEDGER_STAGES: tuple[str, ...] = (
    "initial_states",
    "env_judgement",
    "scenarios",
    "trajectories",
)
LEDGER_STAGES = CATALOGUE_LEDGER_STAGES + ENVIRONMENT_LEDGER_STAGES
# Each table and the stage artifacts it is built from (partitioned ones arrive keyed by env
# id). These are the lineage edges the UI draws, so they must be the real data flow.
TABLE_SOURCES: dict[str, tuple[str, ...]] = {
    "topics": ("topics",),
    "env_specs": ("env_specs",),
    # Tool kinds come from the model (probed for foreign code), status from the audit and
    # the judge (the `audit_judge` LLM stage; an environment it fails is quarantined, so
    # its quarantine row follows this table's status, not a lineage edge of its own).
    "environments": ("environments", "env_models", "env_audit", "env_judgement"),
    "tools": ("environments", "env_models"),
    "initial_states": ("initial_states",),
    # The checks stage publishes or quarantines each scenario; screening may quarantine it.
    "scenarios": ("checks", "task_screening"),
    "checks": ("checks",),
    "check_selftests": ("checks",),
    "trajectories": ("trajectories",),
    # The ledger comes from the stages that ask a model, through the spool, not their artifacts.
    "llm_calls": LEDGER_STAGES,
    "quarantine": (
        "env_specs",
        "env_sources",
        "environments",
        "env_audit",
        "checks",
        "trajectories",
        "task_screening",
    ),
}
STAGE_INPUTS = sorted(
    {
        name
        for table, sources in TABLE_SOURCES.items()
        if table not in warehouse.LEDGER_TABLES
        for name in sources
    }
)
# Inputs too large to hold parsed: their input manager hands over the files' paths, and
# only the environments whose rows the warehouse does not keep are read, one at a time.
LAZY_INPUTS: dict[str, str] = {"trajectories": "artifact_paths", "checks": "artifact_paths"}
# The tables whose rows the warehouse keeps per environment (synthesis/export/warehouse_parts.py).
PARTED_TABLES = frozenset({"trajectories", *CHECK_TABLES})
# Tables whose Great Expectations suite gates the write.
GATED_TABLES = [
    "environments",
    "tools",
    "scenarios",
    "checks",
    "check_selftests",
    "trajectories",
    "llm_calls",
    "quarantine",
]
# quality_gates holds the verdicts of the gates above: its upstreams are the gated tables.
TABLES = [*TABLE_SOURCES, "quality_gates"]
# What an environment's trajectory rows are made from besides its artifact: the code that
# reads, converts and validates them. A change to it makes every environment's rows again.
TRAJECTORY_ROWS_CODE = code_version(
    "synthesis.codec",
    "synthesis.models",
    "synthesis.export.artifacts",
    "synthesis.export.warehouse",
    "synthesis.export.warehouse_parts",
    "quality.expectations",
)
# The same for an environment's scenario, check and self-test rows.
CHECK_ROWS_CODE = code_version(
    "synthesis.codec",
    "synthesis.models",
    "synthesis.export.warehouse",
    "synthesis.export.warehouse_parts",
    "synthesis.tasks.screening",
    "quality.expectations",
)


def _key(table: str) -> dg.AssetKey:
    return dg.AssetKey(["warehouse", table])


def _deps(table: str) -> list[dg.AssetKey]:
    if table == "quality_gates":
        return [_key(t) for t in GATED_TABLES]
    return [dg.AssetKey(source) for source in TABLE_SOURCES[table]]


def collect_tables(
    topics: list[dict],
    env_specs: dict,
    environments: dict,
    initial_states: dict,
    env_audit: dict,
    checks: dict,
    trajectories: dict,
    env_sources: dict | None = None,
    env_models: dict | None = None,
    excluded: Iterable[str] = (),
    task_screening: dict | None = None,
    llm_calls: Iterable[dict] = (),
    env_judgement: dict | None = None,
    trajectory_quarantine: dict[str, list[dict]] | None = None,
    check_quarantine: dict[str, list[dict]] | None = None,
) -> dict[str, pa.Table]:
    """Every warehouse table from the stage artifacts (partitioned ones keyed by env id).

    `excluded`: environments whose run failed in this build, left out and said so.
    `task_screening`: the published scenarios it quarantines across environments.
    `llm_calls`: the ledger rows read from the spool (`spooled_calls`).
    `trajectories`: each environment's artifact, parsed or the path of its file.
    `env_judgement`: the judge's verdicts; one that failed quarantines its environment.
    `trajectory_quarantine`: env id → the quarantine rows of its trajectories, for those
    whose rows the warehouse keeps (not in `trajectories`: the table holds the others'
    only); each environment read here gets its entry.
    `checks`: each environment's artifact, parsed or the path of its file.
    `check_quarantine`: the same as `trajectory_quarantine`, for the checks stage's
    quarantine rows and the scenarios, checks and self-tests tables.
    """
    envs, quarantine = [], [QuarantineRecord.model_validate(q) for q in env_specs["quarantine"]]
    quarantine += [
        QuarantineRecord.model_validate(
            quarantine_row(
                "environment",
                env_id,
                "build",
                "excluded: its run failed in this build (no older build's artifacts are used)",
            )
        )
        for env_id in excluded
    ]
    quarantine += [
        QuarantineRecord.model_validate(q) for q in (env_sources or {}).get("quarantine", [])
    ]
    for env_id in sorted(environments):
        env = with_model_kinds(
            Environment.model_validate(environments[env_id]), (env_models or {}).get(env_id)
        )
        audit = env_audit.get(env_id)
        if audit is not None:
            env.audit_score = audit["score"]
            if env.status == "accepted" and not audit["passed"]:
                findings = "; ".join(audit["findings"][:3])
                env.status = "quarantined"
                env.reason = f"audit: failed (score {audit['score']}): {findings}"
        judged = (env_judgement or {}).get(env_id)
        if env.status == "accepted" and judged is not None and not judged["passed"]:
            env.status, env.reason = "quarantined", judged["reason"]
        if env.status == "quarantined":
            quarantine.append(
                QuarantineRecord.model_validate(
                    quarantine_row("environment", env.env_id, "environments", env.reason or "")
                )
            )
        envs.append(env)
    scenarios, check_records, selftests, env_of = [], [], [], {}
    checks_quarantine = check_quarantine if check_quarantine is not None else {}
    for env_id in sorted(checks):
        part = checks[env_id]
        if isinstance(part, Path):  # read only now: a full build's checks are 440 MB of JSON
            part = codec.read_json(part)
        scenarios += [Scenario.model_validate(s) for s in part["scenarios"]]
        made = [Check.model_validate(c) for c in part["checks"]]
        tests = [CheckSelftest.model_validate(t) for t in part["selftests"]]
        env_of.update((record.scenario_id, env_id) for record in (*made, *tests))
        check_records += made
        selftests += tests
        checks_quarantine[env_id] = part["quarantine"]
    quarantine += [
        QuarantineRecord.model_validate(q)
        for env_id in sorted(checks_quarantine)
        for q in checks_quarantine[env_id]
    ]
    screened = [
        QuarantineRecord.model_validate(q) for q in (task_screening or {}).get("quarantine", [])
    ]
    scenarios = apply_screening(scenarios, screened)
    quarantine += screened
    states = [
        InitialState.model_validate(s) for part in initial_states.values() for s in part["states"]
    ]
    traj_quarantine = trajectory_quarantine if trajectory_quarantine is not None else {}
    trajectory_table, read_quarantine = warehouse.trajectory_table(trajectories)
    traj_quarantine.update(read_quarantine)
    quarantine += [
        QuarantineRecord.model_validate(q)
        for env_id in sorted(traj_quarantine)
        for q in traj_quarantine[env_id]
    ]
    return {
        "topics": warehouse.topic_rows(Topic.model_validate(t) for t in topics),
        # Specs that failed validation never became EnvSpecs; their reasons are in quarantine.
        "env_specs": warehouse.env_spec_rows(EnvSpec.model_validate(s) for s in env_specs["specs"]),
        "environments": warehouse.environment_rows(
            envs, tool_graphs=_tool_graph_shapes(env_models or {})
        ),
        "tools": warehouse.tool_rows(envs),
        "initial_states": warehouse.initial_state_rows(states),
        "scenarios": warehouse.scenario_rows(scenarios),
        "checks": warehouse.check_rows(check_records, env_of),
        "check_selftests": warehouse.check_selftest_rows(selftests, env_of),
        "trajectories": trajectory_table,
        "llm_calls": warehouse.llm_call_rows(list(llm_calls)),
        "quarantine": warehouse.quarantine_rows(quarantine),
    }


def _scenario_outcomes(con: duckdb.DuckDBPyConnection, env_ids: list[str]) -> list[tuple]:
    """(env id, scenario id, status) of the scenario rows the warehouse keeps for `env_ids`."""
    if not env_ids:
        return []
    return con.execute(
        "SELECT env_id, scenario_id, status FROM scenarios WHERE list_contains(?, env_id)",
        [env_ids],
    ).fetchall()


def _outcomes_of(scenarios: pa.Table) -> list[tuple]:
    columns = scenarios.select(["env_id", "scenario_id", "status"]).to_pydict()
    return list(zip(columns["env_id"], columns["scenario_id"], columns["status"], strict=True))


def _with_thin_reasons(
    environments: pa.Table, outcomes: list[tuple], quarantine: list, *, asked: int
) -> pa.Table:
    """`environments` with the reason of each accepted one that publishes fewer than
    losses.THIN tasks (synthesis/export/losses.py); a quarantined one keeps its own."""
    rows = environments.select(
        ["env_id", "status", "reason", "n_query_tools", "n_mutate_tools"]
    ).to_pydict()
    accepted = [
        e for e, status in zip(rows["env_id"], rows["status"], strict=True) if status == "accepted"
    ]
    tools = dict(
        zip(
            rows["env_id"],
            zip(rows["n_query_tools"], rows["n_mutate_tools"], strict=True),
            strict=True,
        )
    )
    thin = losses.environment_reasons(accepted, outcomes, quarantine, asked=asked, tools=tools)
    if not thin:
        return environments
    reasons = [
        reason if reason is not None or status != "accepted" else thin.get(env_id)
        for env_id, status, reason in zip(
            rows["env_id"], rows["status"], rows["reason"], strict=True
        )
    ]
    index = environments.schema.get_field_index("reason")
    field = environments.schema.field(index)
    return environments.set_column(index, field, pa.array(reasons, field.type))


def _reuse_metadata(read: int, kept: int, rows: str) -> dict[str, dg.MetadataValue | int]:
    return {
        "environments_read": read,
        "environments_kept": dg.MetadataValue.md(
            f"{kept} environment(s) whose {rows} rows this warehouse kept from the last "
            "dataset: made from the same artifact by the same code, and validated by the same "
            "suite when they were written"
        ),
    }


def _tool_graph_shapes(env_models: dict) -> dict[str, str]:
    """Env id → the shape of its tool graph, for every environment with a model."""
    return {
        env_id: environment_tool_graph_shape(EnvModel.model_validate(model))
        for env_id, model in sorted(env_models.items())
    }


def with_model_kinds(env: Environment, model: dict | None) -> Environment:
    """The environment with each tool's kind as its model knows it (probed, for foreign code)."""
    if model is None:
        return env
    kinds = {t.name: t.kind for t in EnvModel.model_validate(model).tools}
    tools = [t.model_copy(update={"kind": kinds.get(t.name, t.kind)}) for t in env.tools]
    return env.model_copy(update={"tools": tools})


def llm_spend_metadata(llm_calls: pa.Table) -> dict[str, dg.MetadataValue]:
    """What the build's LLM stages spent and, for a stage that stopped, why: the lines the
    end-of-build summary prints. None offline (no ledger rows)."""
    lines = summary_lines(llm_calls.to_pylist())
    if not lines:
        return {}
    stopped = [line for line in lines if " stopped " in line]
    return {
        "llm_spend": dg.MetadataValue.md("\n".join(f"- {line}" for line in lines)),
        **({"llm_stopped": dg.MetadataValue.text("; ".join(stopped))} if stopped else {}),
    }


@stage_multi_asset(
    group_name="warehouse",
    specs=[
        dg.AssetSpec(
            _key(t),
            skippable=True,
            deps=_deps(t),
            description=f"DuckDB table `{t}` in $ENVFOUNDRY_HOME/warehouse.duckdb",
        )
        for t in TABLES
    ],
    check_specs=[
        dg.AssetCheckSpec(
            "great_expectations",
            asset=_key(t),
            blocking=True,
            description=f"Great Expectations suite for `{t}`",
        )
        for t in GATED_TABLES
    ],
    ins={name: dg.AssetIn(name, input_manager_key=LAZY_INPUTS.get(name)) for name in STAGE_INPUTS},
)
def warehouse_tables(
    context: dg.AssetExecutionContext,
    settings: BuildSettings,
    topics,
    env_specs,
    env_sources,
    environments,
    initial_states,
    env_models,
    env_audit,
    env_judgement,
    checks,
    trajectories,
    task_screening,
):
    from quality.gates import validate_tables

    kept, excluded = made_by_this_build(context, environments)
    per_env = [
        environments,
        initial_states,
        env_models,
        env_audit,
        env_judgement,
        checks,
        trajectories,
    ]
    environments, initial_states, env_models, env_audit, env_judgement, checks, trajectories = (
        {k: v for k, v in part.items() if k in kept} for part in per_env
    )
    staged = settings.staged(context.run_id) / datasets.PARTS["warehouse"]
    # The staged warehouse is the last dataset's copy: an environment's trajectory, scenario,
    # check and self-test rows made from the same artifacts by the same code are there
    # already (most of a full build's warehouse), and only the others are read, validated
    # and written.
    screened = (task_screening or {}).get("quarantine", [])
    sources = artifact_sources(context, "trajectories", TRAJECTORY_ROWS_CODE, kept)
    check_source = artifact_sources(context, "checks", CHECK_ROWS_CODE, kept)
    with closing(warehouse.open_warehouse(staged)) as con:
        reused = warehouse_parts.reusable(con, "trajectories", sources)
        kept_checks = warehouse_parts.kept_check_parts(con, check_source, screened)
        kept_outcomes = _scenario_outcomes(con, sorted(kept_checks["scenarios"]))
    reading = {env_id: p for env_id, p in trajectories.items() if env_id not in reused}
    traj_quarantine = {env_id: part.quarantine for env_id, part in reused.items()}
    reading_checks = {e: p for e, p in checks.items() if e not in kept_checks["checks"]}
    checks_quarantine = {e: part.quarantine for e, part in kept_checks["checks"].items()}
    # Every environment's artifacts are held meanwhile: left out of the collector's passes
    # while the tables are made from them (synthesis/heap.py).
    with heap.frozen():
        tables = collect_tables(
            topics,
            env_specs,
            environments,
            initial_states,
            env_audit,
            reading_checks,
            reading,
            env_sources=env_sources,
            env_models=env_models,
            excluded=excluded,
            task_screening=task_screening,
            llm_calls=spooled_calls(
                context, settings, ENVIRONMENT_LEDGER_STAGES, kept, CATALOGUE_LEDGER_STAGES
            ),
            env_judgement=env_judgement,
            trajectory_quarantine=traj_quarantine,
            check_quarantine=checks_quarantine,
        )
        # Every environment publishing fewer than losses.THIN tasks says why, whether its
        # scenario rows were read in this publish or kept from the last one.
        tables["environments"] = _with_thin_reasons(
            tables["environments"],
            [*_outcomes_of(tables["scenarios"]), *kept_outcomes],
            [q for part in checks_quarantine.values() for q in part] + list(screened),
            asked=settings.profile_obj.scenarios_per_env,
        )
        # Published scenarios must be proven: that gate needs the self-tests beside the scenarios.
        # (No database is open meanwhile: the gates fork.)
        proofs = {"check_selftests": tables["check_selftests"]}
        related = {"scenarios": proofs, "trajectories": proofs}
        gates = validate_tables({name: tables[name] for name in GATED_TABLES}, related=related)
        tables["quality_gates"] = warehouse.quality_gate_rows(gates.values())
        writable = {
            name: t for name, t in tables.items() if name not in gates or gates[name].success
        }
        made = {
            "trajectories": {e: Part(sources[e], traj_quarantine[e]) for e in reading},
            **warehouse_parts.made_check_parts(
                {e: check_source[e] for e in reading_checks},
                screened,
                tables["scenarios"],
                checks_quarantine,
            ),
        }
        kept_parts = {"trajectories": reused, **kept_checks}
        modes = warehouse.build_write_modes(n for n in writable if n not in PARTED_TABLES)
        with closing(warehouse.open_warehouse(staged)) as con:
            # Read by nobody until it is published: what it replaces goes first, so the file
            # does not grow by a whole warehouse a publish.
            warehouse.drop_tables(con, [name for name, mode in modes.items() if mode == "replace"])
            counts = warehouse.write_tables(con, {n: writable[n] for n in modes}, mode=modes)
            for name in sorted(PARTED_TABLES & set(writable)):
                counts[name] = warehouse_parts.write(
                    con, name, writable[name], kept_parts[name], made[name]
                )
    datasets.fault_point("warehouse")
    # What the parted tables' gates saw: the rows of the environments read in this publish.
    reuse = {
        "trajectories": _reuse_metadata(len(reading), len(reused), "trajectory"),
        **{
            table: _reuse_metadata(
                len(reading_checks), len(kept_checks[table]), "scenario, check and self-test"
            )
            for table in CHECK_TABLES
        },
    }
    for name in GATED_TABLES:
        gate = gates[name]
        yield dg.AssetCheckResult(
            asset_key=_key(name),
            check_name="great_expectations",
            passed=gate.success,
            metadata={**gate.to_metadata(), **reuse.get(name, {})},
        )
    # One in-memory DuckDB types the columns of every table (opening one costs ~25 ms).
    with duckdb.connect() as types_db:
        metadata = {name: table_metadata(tables[name], counts[name], types_db) for name in counts}
    for name in TABLES:
        if name in counts:
            yield dg.MaterializeResult(
                asset_key=_key(name),
                metadata={
                    **metadata[name],
                    "warehouse": dg.MetadataValue.path(str(staged)),
                    **({"excluded_environments": ", ".join(excluded)} if excluded else {}),
                    **(llm_spend_metadata(tables[name]) if name == "llm_calls" else {}),
                    **reuse.get(name, {}),
                },
            )
        else:
            context.log.error(f"table {name} not written: its Great Expectations gate failed")
