"""The DuckDB warehouse: one explicit Arrow schema per table, record → row converters, writes."""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, Literal

import duckdb
import pyarrow as pa

from synthesis import codec, forked
from synthesis.config import envfoundry_home
from synthesis.export.artifacts import read_trajectories
from synthesis.models import (
    Check,
    CheckSelftest,
    Environment,
    EnvSpec,
    InitialState,
    QuarantineRecord,
    Scenario,
    Topic,
    Trajectory,
)

WAREHOUSE_FILE = "warehouse.duckdb"

WriteMode = Literal["replace", "append", "merge"]


def _f(name: str, type_: pa.DataType, nullable: bool = False) -> pa.Field:
    # Not-null is the default because the DDL below enforces it: a missing id must fail the
    # write, not surface later as a NULL join key in a mart.
    return pa.field(name, type_, nullable=nullable)


_STR = pa.string()
# JSON documents (a trajectory's messages and tool schemas, a scenario's chains and states)
# are most of the warehouse's bytes and much alike from row to row. DuckDB's default string
# compression (dictionary + FSST) spent ~28 s of one core writing a full build's tables and
# left 793 MB; zstd on these columns spent ~10 s and left 168 MB, and reads them as fast.
_COMPRESSION = b"envfoundry.compression"


def _doc(name: str, nullable: bool = False) -> pa.Field:
    """A column holding one JSON document per row, stored zstd-compressed."""
    return _f(name, _STR, nullable).with_metadata({_COMPRESSION: b"zstd"})


_INT = pa.int64()
_FLOAT = pa.float64()
_BOOL = pa.bool_()
_STR_LIST = pa.list_(pa.string())
_TIMESTAMP = pa.timestamp("us", tz="UTC")

TOPICS = pa.schema(
    [
        _f("topic_id", _STR),
        _f("title", _STR),
        _f("archetype", _STR),
        _f("description", _STR, nullable=True),
    ]
)

ENV_SPECS = pa.schema(
    [
        _f("env_id", _STR),
        _f("topic_id", _STR),
        _f("archetype", _STR),
        _f("kind", _STR),
        _f("schema_version", _INT),
        _f("n_entities", _INT),
        _f("n_tools", _INT),
        _doc("spec_json"),
        _f("status", _STR),
        _f("reason", _STR, nullable=True),
    ]
)

ENVIRONMENTS = pa.schema(
    [
        _f("env_id", _STR),
        _f("topic_id", _STR),
        _f("archetype", _STR),
        _f("kind", _STR),
        _f("source", _STR),
        _f("class_name", _STR),
        _f("status", _STR),
        _f("reason", _STR, nullable=True),
        _f("n_tools", _INT),
        _f("n_query_tools", _INT),
        _f("n_mutate_tools", _INT),
        _f("code_sha256", _STR),
        _f("audit_score", _FLOAT, nullable=True),
        _f("code", _STR),
        # The code's AST with names and constants abstracted, and the tool graph up to
        # isomorphism (synthesis.environments.shape); the split of its tasks, by shape.
        _f("program_shape", _STR, nullable=True),
        _f("tool_graph", _STR, nullable=True),
        _f("split", _STR, nullable=True),
        # Where code we did not compile came from and how the sandbox loads it (EnvOrigin as
        # canonical JSON); null for our own. The RL shards say from it how to load the class.
        _doc("origin_json", nullable=True),
    ]
)

TOOLS = pa.schema(
    [
        _f("env_id", _STR),
        _f("tool_name", _STR),
        _f("kind", _STR),
        _f("description", _STR),
        _f("n_params", _INT),
        _f("n_required_params", _INT),
        _f("reads", _STR_LIST),
        _f("writes", _STR_LIST),
        _doc("schema_json"),
    ]
)

INITIAL_STATES = pa.schema(
    [
        _f("state_id", _STR),
        _f("env_id", _STR),
        _f("seed", _INT),
        _doc("state_json"),
    ]
)

SCENARIOS = pa.schema(
    [
        _f("scenario_id", _STR),
        _f("env_id", _STR),
        _f("state_id", _STR),
        _f("status", _STR),
        _f("reason", _STR, nullable=True),
        _f("split", _STR),
        _f("kind", _STR),
        _f("chain_length", _INT),
        _f("n_distinct_tools", _INT),
        _f("task_text", _STR),
        _doc("initial_state_json"),
        _doc("gold_chain_json"),
        _doc("gold_results_json"),
        _doc("final_state_json", nullable=True),
        _doc("difficulty_json"),
        _doc("provenance_json"),
        # A multi-turn task's simulated user (Scenario.user); null for a single-turn one.
        _doc("user_json", nullable=True),
    ]
)

# Checks and self-tests carry their environment: the warehouse keeps each environment's
# rows from one publish to the next (synthesis/export/warehouse_parts.py).
CHECKS = pa.schema(
    [
        _f("check_id", _STR),
        _f("scenario_id", _STR),
        _f("env_id", _STR),
        _f("description", _STR),
        _doc("spec_json"),
    ]
)

CHECK_SELFTESTS = pa.schema(
    [
        _f("scenario_id", _STR),
        _f("env_id", _STR),
        _f("gold_pass", _BOOL),
        _f("noop_fail", _BOOL),
        _f("deterministic", _BOOL),
        _f("mutation_kill_rate", _FLOAT),
        _f("n_mutants", _INT),
        _f("proven", _BOOL),
        _f("reason", _STR, nullable=True),
        _f("shortcuts_fail", _BOOL),
        _doc("shortcut_rewards_json"),
        _f("alternatives_pass", _BOOL),
        _doc("alternative_rewards_json"),
    ]
)

TRAJECTORIES = pa.schema(
    [
        _f("traj_id", _STR),
        _f("scenario_id", _STR),
        _f("env_id", _STR),
        _f("policy", _STR),
        _f("split", _STR),
        _f("reward", _FLOAT),
        _f("success", _BOOL),
        _f("n_steps", _INT),
        _f("tokens_in", _INT),
        _f("tokens_out", _INT),
        _f("cost_usd", _FLOAT),
        _doc("messages_json"),
        _doc("tools_json"),
        _f("attempt_seed", _INT, nullable=True),
    ]
)

# The LLM ledger: one row per attempt, append-only across builds (a rebuild adds its own
# build's rows, keyed by call id, and keeps the earlier ones: the record of money spent).
LLM_CALLS = pa.schema(
    [
        _f("call_id", _STR),
        _f("build_id", _STR),
        _f("stage", _STR),
        _f("artifact_id", _STR, nullable=True),
        _f("model", _STR),
        _f("attempt", _INT),
        _f("status", _STR),
        _f("reason", _STR, nullable=True),
        _f("tokens_in", _INT),
        _f("tokens_out", _INT),
        _f("cost_usd", _FLOAT),
        _f("latency_ms", _FLOAT),
        _f("cache_hit", _BOOL),
        _f("request_sha256", _STR, nullable=True),
        _f("created_at", _TIMESTAMP, nullable=True),
    ]
)

QUARANTINE = pa.schema(
    [
        _f("artifact_type", _STR),
        _f("artifact_id", _STR),
        _f("stage", _STR),
        _f("reason", _STR),
        _f("reason_kind", _STR),
    ]
)

SHARDS = pa.schema(
    [
        _f("path", _STR),
        _f("sha256", _STR),
        _f("rows", _INT, nullable=True),
        _f("split", _STR),
        _f("format", _STR),
        # What the file holds (rl_tasks, trl_chat, environment_code, dataset_card...); code,
        # docs and plots are for every split ("all") and have no rows (null).
        _f("kind", _STR),
    ]
)

# Outcomes of the Great Expectations gates (quality/expectations.py), kept so the report can
# show them after the run that produced them.
QUALITY_GATES = pa.schema(
    [
        _f("suite", _STR),
        _f("success", _BOOL),
        _f("evaluated", _INT),
        _f("n_failed", _INT),
        _f("rows", _INT),
        _f("seconds", _FLOAT),
        _doc("failures_json"),
    ]
)

TABLE_SCHEMAS: dict[str, pa.Schema] = {
    "topics": TOPICS,
    "env_specs": ENV_SPECS,
    "environments": ENVIRONMENTS,
    "tools": TOOLS,
    "initial_states": INITIAL_STATES,
    "scenarios": SCENARIOS,
    "checks": CHECKS,
    "check_selftests": CHECK_SELFTESTS,
    "trajectories": TRAJECTORIES,
    "llm_calls": LLM_CALLS,
    "quarantine": QUARANTINE,
    "shards": SHARDS,
    "quality_gates": QUALITY_GATES,
}

# The natural key of each table: row functions sort by it (deterministic bytes), reads order
# by it, and `write_table(mode="merge")` upserts on it unless given a coarser key.
PRIMARY_KEYS: dict[str, tuple[str, ...]] = {
    "topics": ("topic_id",),
    "env_specs": ("env_id",),
    "environments": ("env_id",),
    "tools": ("env_id", "tool_name"),
    "initial_states": ("state_id",),
    "scenarios": ("scenario_id",),
    "checks": ("check_id",),
    "check_selftests": ("scenario_id",),
    "trajectories": ("traj_id",),
    "llm_calls": ("call_id",),
    "quarantine": ("artifact_type", "artifact_id", "stage"),
    "shards": ("path",),
    "quality_gates": ("suite",),
}

# Tables that keep earlier builds' rows: a build merges its rows in, never replaces the table.
LEDGER_TABLES = frozenset({"llm_calls"})


# --------------------------------------------------------------------------- rows


def _table(name: str, rows: list[dict[str, Any]]) -> pa.Table:
    key = PRIMARY_KEYS[name]
    rows.sort(key=lambda r: tuple(r[k] for k in key))
    return pa.Table.from_pylist(rows, schema=TABLE_SCHEMAS[name])


def topic_rows(topics: Iterable[Topic]) -> pa.Table:
    return _table(
        "topics",
        [
            {
                "topic_id": t.topic_id,
                "title": t.title,
                "archetype": t.archetype,
                "description": t.description,
            }
            for t in topics
        ],
    )


def env_spec_rows(specs: Iterable[EnvSpec], rejected: Mapping[str, str] | None = None) -> pa.Table:
    """Spec rows; `rejected` maps env_id → reason for specs that did not become environments."""
    rejected = rejected or {}
    return _table(
        "env_specs",
        [
            {
                "env_id": s.env_id,
                "topic_id": s.topic_id,
                "archetype": s.archetype,
                "kind": s.kind,
                "schema_version": s.schema_version,
                "n_entities": len(s.entities),
                "n_tools": len(s.tools),
                "spec_json": codec.dumps_str(s),
                "status": "quarantined" if s.env_id in rejected else "accepted",
                "reason": rejected.get(s.env_id),
            }
            for s in specs
        ],
    )


def environment_rows(
    envs: Iterable[Environment], tool_graphs: Mapping[str, str] | None = None
) -> pa.Table:
    """Environment rows; `tool_graphs`: env id → the shape of its tool graph, where known."""
    tool_graphs = tool_graphs or {}
    return _table(
        "environments",
        [
            {
                "env_id": e.env_id,
                "topic_id": e.topic_id,
                "archetype": e.archetype,
                "kind": e.kind,
                "source": e.source,
                "class_name": e.class_name,
                "status": e.status,
                "reason": e.reason,
                "n_tools": len(e.tools),
                "n_query_tools": sum(t.kind == "query" for t in e.tools),
                "n_mutate_tools": sum(t.kind == "mutate" for t in e.tools),
                "code_sha256": e.code_sha256,
                "audit_score": e.audit_score,
                "code": e.code,
                "program_shape": e.program_shape,
                "tool_graph": tool_graphs.get(e.env_id),
                "split": e.split,
                "origin_json": None if e.origin is None else codec.dumps_str(e.origin),
            }
            for e in envs
        ],
    )


def environment_of_row(row: Mapping[str, Any], **fields: Any) -> Environment:
    """An `environments` row read back as the Environment it was written from: the columns
    every reader needs (its code and where it came from), and `fields`, what else a reader
    has of it (tools, spec, origin, status)."""
    return Environment(
        env_id=row["env_id"],
        topic_id=row["topic_id"],
        archetype=row["archetype"],
        kind=row["kind"],
        source=row["source"],
        class_name=row["class_name"],
        code=row["code"],
        code_sha256=row["code_sha256"],
        **fields,
    )


def _function_def(schema: Mapping[str, Any]) -> Mapping[str, Any]:
    # Both OpenAI shapes occur: the tools-array form {"type": "function", "function": {...}}
    # and the bare function object.
    inner = schema.get("function")
    return inner if isinstance(inner, Mapping) else schema


def tool_rows(envs: Iterable[Environment]) -> pa.Table:
    rows = []
    for e in envs:
        for t in e.tools:
            fn = _function_def(t.schema_)
            params = fn.get("parameters") or {}
            rows.append(
                {
                    "env_id": e.env_id,
                    "tool_name": t.name,
                    "kind": t.kind,
                    "description": fn.get("description") or "",
                    "n_params": len(params.get("properties") or {}),
                    "n_required_params": len(params.get("required") or []),
                    "reads": sorted(t.reads),
                    "writes": sorted(t.writes),
                    "schema_json": codec.dumps_str(t.schema_),
                }
            )
    return _table("tools", rows)


def initial_state_rows(states: Iterable[InitialState]) -> pa.Table:
    return _table(
        "initial_states",
        [
            {
                "state_id": s.state_id,
                "env_id": s.env_id,
                "seed": s.seed,
                "state_json": codec.dumps_str(s.state),
            }
            for s in states
        ],
    )


def scenario_rows(scenarios: Iterable[Scenario]) -> pa.Table:
    return _table(
        "scenarios",
        [
            {
                "scenario_id": s.scenario_id,
                "env_id": s.env_id,
                "state_id": s.state_id,
                "status": s.status,
                "reason": s.reason,
                "split": s.split,
                "kind": s.kind,
                "chain_length": len(s.gold_chain),
                "n_distinct_tools": len({c.tool for c in s.gold_chain}),
                "task_text": s.task_text,
                "initial_state_json": codec.dumps_str(s.initial_state),
                "gold_chain_json": codec.dumps_str(s.gold_chain),
                "gold_results_json": codec.dumps_str(s.gold_results),
                "final_state_json": (
                    None if s.final_state is None else codec.dumps_str(s.final_state)
                ),
                "difficulty_json": codec.dumps_str(s.difficulty),
                "provenance_json": codec.dumps_str(s.provenance),
                "user_json": None if s.user is None else codec.dumps_str(s.user),
            }
            for s in scenarios
        ],
    )


def check_rows(checks: Iterable[Check], env_of: Mapping[str, str]) -> pa.Table:
    """`env_of`: scenario id → the id of the environment the scenario is set in."""
    return _table(
        "checks",
        [
            {
                "check_id": c.check_id,
                "scenario_id": c.scenario_id,
                "env_id": env_of[c.scenario_id],
                "description": c.description,
                "spec_json": codec.dumps_str(c.spec),
            }
            for c in checks
        ],
    )


def check_selftest_rows(selftests: Iterable[CheckSelftest], env_of: Mapping[str, str]) -> pa.Table:
    """`env_of`: scenario id → the id of the environment the scenario is set in."""
    return _table(
        "check_selftests",
        [
            {
                "scenario_id": s.scenario_id,
                "env_id": env_of[s.scenario_id],
                "gold_pass": s.gold_pass,
                "noop_fail": s.noop_fail,
                "deterministic": s.deterministic,
                "mutation_kill_rate": s.mutation_kill_rate,
                "n_mutants": s.n_mutants,
                "proven": s.proven,
                "reason": s.reason,
                "shortcuts_fail": s.shortcuts_fail,
                "shortcut_rewards_json": codec.dumps_str(s.shortcut_rewards),
                "alternatives_pass": s.alternatives_pass,
                "alternative_rewards_json": codec.dumps_str(s.alternative_rewards),
            }
            for s in selftests
        ],
    )


def trajectory_rows(trajectories: Iterable[Trajectory]) -> pa.Table:
    return _table("trajectories", [_trajectory_row(t) for t in trajectories])


def _trajectory_row(t: Trajectory, tools_json: str | None = None) -> dict[str, Any]:
    return {
        "traj_id": t.traj_id,
        "scenario_id": t.scenario_id,
        "env_id": t.env_id,
        "policy": t.policy,
        "split": t.split,
        "reward": t.reward,
        "success": t.success,
        "n_steps": t.n_steps,
        "tokens_in": t.tokens_in,
        "tokens_out": t.tokens_out,
        "cost_usd": t.cost_usd,
        "messages_json": codec.dumps_str(t.messages),
        "tools_json": codec.dumps_str(t.tools) if tools_json is None else tools_json,
        "attempt_seed": t.attempt_seed,
    }


def trajectory_part_rows(parts: Iterable[Mapping[str, Any]]) -> pa.Table:
    """`trajectory_rows` of the trajectories artifacts' records (each part's
    "trajectories"), validated as `Trajectory` models, read one part at a time.

    Trajectories of a part that share one tool list object (synthesis.export.artifacts)
    have it validated and encoded once: on a full build the lists are most of the bytes.
    """
    rows: list[dict[str, Any]] = []
    for part in parts:
        encoded: dict[int, tuple[list[Any], str]] = {}  # id → (the list kept alive, its JSON)
        for record in part["trajectories"]:
            tools = record.get("tools") if isinstance(record, Mapping) else None
            shared = encoded.get(id(tools)) if isinstance(tools, list) else None
            if shared is None:
                row = _trajectory_row(Trajectory.model_validate(record))
                if isinstance(tools, list):
                    encoded[id(tools)] = (tools, row["tools_json"])
            else:  # the same list object as one validated already: same verdict, same JSON
                t = Trajectory.model_validate({**record, "tools": []})
                row = _trajectory_row(t, tools_json=shared[1])
            rows.append(row)
    # Sorted as `_table` sorts, then built a column at a time (faster than from_pylist).
    rows.sort(key=lambda r: r["traj_id"])
    return pa.table(
        {name: [r[name] for r in rows] for name in TRAJECTORIES.names}, schema=TRAJECTORIES
    )


# What a parsed part weighs when the parts are shared out, per trajectory: about its bytes in
# the artifact on a full build (13 MB for 1,036 trajectories), so parsed parts and files weigh
# alike.
_BYTES_PER_TRAJECTORY = 12_000


def trajectory_table(
    parts: Mapping[str, Mapping[str, Any] | Path], processes: int = 2
) -> tuple[pa.Table, dict[str, list[dict[str, Any]]]]:
    """`trajectory_part_rows` of every environment's trajectories artifact (parsed, or the
    path of its file, read only when its turn comes: a full build's are gigabytes), and each
    environment's quarantine rows by env id.

    With `processes=2`, a forked child (synthesis/forked.py) reads and converts about half of
    them by size while this process does the others: on a full build this was a third of
    the warehouse step, on one core. The table is the one a single process makes (rows in
    traj_id order); a child that fails leaves its half to this process."""
    env_ids = list(parts)

    def convert(share: list[str]) -> tuple[pa.Table, dict[str, list[dict[str, Any]]]]:
        quarantine: dict[str, list[dict[str, Any]]] = {}
        return trajectory_part_rows(_read_parts(parts, share, quarantine)), quarantine

    ours, theirs = env_ids, []
    if processes > 1 and len(env_ids) > 1:
        ours, theirs = forked.halves({e: _part_weight(parts[e]) for e in env_ids})
    if not theirs:
        return convert(ours)
    (table, quarantine), (their_table, their_quarantine) = forked.shared(convert, ours, theirs)
    quarantine.update(their_quarantine)
    return pa.concat_tables([table, their_table]).sort_by("traj_id"), quarantine


def _part_weight(part: Mapping[str, Any] | Path) -> float:
    if isinstance(part, Path):
        return float(part.stat().st_size) if part.exists() else 0.0
    return float(len(part.get("trajectories", ())) * _BYTES_PER_TRAJECTORY)


def _read_parts(
    parts: Mapping[str, Mapping[str, Any] | Path],
    env_ids: Iterable[str],
    quarantine: dict[str, list[dict[str, Any]]],
) -> Iterator[Mapping[str, Any]]:
    """The parts of `env_ids`, each parsed only when its turn comes, its quarantine rows put
    in `quarantine[env_id]` on the way."""
    for env_id in env_ids:
        part = parts[env_id]
        if isinstance(part, Path):
            part = read_trajectories(part)
        quarantine[env_id] = part["quarantine"]
        yield part


def _get(record: Any, name: str, default: Any = None) -> Any:
    if isinstance(record, Mapping):
        return record.get(name, default)
    return getattr(record, name, default)


def llm_call_rows(calls: Iterable[Any]) -> pa.Table:
    """Rows from LLM ledger records: mappings or objects with the LLM_CALLS attribute names.

    Records from before the ledger had a build id, attempt or status (older artifacts) get
    an empty build id, attempt 0 and the status their cache flag implies."""
    rows = []
    for c in calls:
        row = {name: _get(c, name) for name in LLM_CALLS.names}
        for name in ("tokens_in", "tokens_out", "attempt"):
            row[name] = row[name] or 0
        for name in ("cost_usd", "latency_ms"):
            row[name] = float(row[name] or 0.0)
        row["cache_hit"] = bool(row["cache_hit"])
        row["build_id"] = row["build_id"] or ""
        row["status"] = row["status"] or ("cached" if row["cache_hit"] else "accepted")
        if isinstance(row["created_at"], str):
            row["created_at"] = datetime.fromisoformat(row["created_at"])
        rows.append(row)
    return _table("llm_calls", rows)


def reason_kind(reason: str) -> str:
    """The stable head of a reason ("gold_fails: check c3 …" → "gold_fails"), for grouping."""
    head, sep, _ = reason.partition(":")
    head = head.strip()
    if sep and head and len(head) <= 48:
        return head
    # A reason without a short head is free text; its first words group it well enough.
    return " ".join(reason.split()[:4])[:48]


def quarantine_rows(records: Iterable[QuarantineRecord]) -> pa.Table:
    return _table(
        "quarantine",
        [
            {
                "artifact_type": q.artifact_type,
                "artifact_id": q.artifact_id,
                "stage": q.stage,
                "reason": q.reason,
                "reason_kind": reason_kind(q.reason),
            }
            for q in records
        ],
    )


def shard_rows(manifest: Mapping[str, Any] | Iterable[Mapping[str, Any]]) -> pa.Table:
    """Rows from a shard manifest: the parsed manifest.json (with "files") or its file list."""
    files = manifest.get("files", []) if isinstance(manifest, Mapping) else manifest
    return _table("shards", [{name: f.get(name) for name in SHARDS.names} for f in files])


def quality_gate_rows(results: Iterable[Any]) -> pa.Table:
    """Rows from gate results (quality.expectations.GateResult or mappings with its fields)."""
    rows = []
    for r in results:
        failed = list(_get(r, "failed", []) or [])
        rows.append(
            {
                "suite": _get(r, "suite"),
                "success": bool(_get(r, "success")),
                "evaluated": int(_get(r, "evaluated", 0) or 0),
                "n_failed": len(failed),
                "rows": int(_get(r, "rows", 0) or 0),
                "seconds": float(_get(r, "seconds", 0.0) or 0.0),
                "failures_json": codec.dumps_str(failed),
            }
        )
    return _table("quality_gates", rows)


# --------------------------------------------------------------------------- storage


def warehouse_path(home: str | Path | None = None) -> Path:
    return (Path(home).resolve() if home is not None else envfoundry_home()) / WAREHOUSE_FILE


def open_warehouse(
    path: str | Path | None = None, read_only: bool = False, lock_timeout_s: float = 30.0
) -> duckdb.DuckDBPyConnection:
    """Connect to the warehouse (default `$ENVFOUNDRY_HOME/warehouse.duckdb`)."""
    path = Path(path) if path is not None else warehouse_path()
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + lock_timeout_s
    delay = 0.05
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only)
        except duckdb.IOException as exc:
            # DuckDB allows one writing process per file; concurrent Dagster steps queue here
            # instead of failing the run.
            if "lock" not in str(exc).lower() or time.monotonic() >= deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 1.0)


@contextmanager
def _connection(
    con_or_path: duckdb.DuckDBPyConnection | str | Path | None,
) -> Iterator[duckdb.DuckDBPyConnection]:
    if isinstance(con_or_path, duckdb.DuckDBPyConnection):
        yield con_or_path
        return
    # Read-write even for reads: DuckDB refuses a second in-process connection to the same
    # file with a different read_only setting.
    con = open_warehouse(con_or_path)
    try:
        yield con
    finally:
        con.close()


def _ident(name: str) -> str:
    if not name.replace("_", "").isalnum():
        raise ValueError(f"not a plain SQL identifier: {name!r}")
    return f'"{name}"'


def _sql_type(t: pa.DataType) -> str:
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return "VARCHAR"
    if pa.types.is_boolean(t):
        return "BOOLEAN"
    if pa.types.is_int64(t):
        return "BIGINT"
    if pa.types.is_int32(t):
        return "INTEGER"
    if pa.types.is_float64(t):
        return "DOUBLE"
    if pa.types.is_timestamp(t):
        return "TIMESTAMPTZ" if t.tz else "TIMESTAMP"
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return _sql_type(t.value_type) + "[]"
    raise TypeError(f"no warehouse column type for Arrow type {t}")


def create_table_sql(name: str, schema: pa.Schema, if_not_exists: bool = False) -> str:
    cols = ", ".join(
        f"{_ident(f.name)} {_sql_type(f.type)}{_compression(f)}{'' if f.nullable else ' NOT NULL'}"
        for f in schema
    )
    verb = "CREATE TABLE IF NOT EXISTS" if if_not_exists else "CREATE OR REPLACE TABLE"
    return f"{verb} {_ident(name)} ({cols})"


def _compression(field: pa.Field) -> str:
    method = (field.metadata or {}).get(_COMPRESSION)
    return f" USING COMPRESSION {method.decode()}" if method else ""


def conform(name: str, table: pa.Table) -> pa.Table:
    """`table` with exactly the columns, order and types of the warehouse table `name`."""
    schema = TABLE_SCHEMAS.get(name)
    if schema is None:
        return table
    missing = [n for n in schema.names if n not in table.column_names]
    extra = [n for n in table.column_names if n not in schema.names]
    if missing or extra:
        raise ValueError(f"table {name!r}: missing columns {missing}, unexpected columns {extra}")
    return table.select(schema.names).cast(schema)


def _write(
    con: duckdb.DuckDBPyConnection,
    name: str,
    table: pa.Table,
    mode: WriteMode,
    key: Sequence[str] | None,
) -> int:
    table = conform(name, table)
    schema = TABLE_SCHEMAS.get(name, table.schema)
    qname = _ident(name)
    if mode == "replace":
        con.execute(create_table_sql(name, schema))
    elif mode in ("append", "merge"):
        con.execute(create_table_sql(name, schema, if_not_exists=True))
        # A table kept from an older build may lack newer columns: add them (nullable, so
        # the rows it holds stay valid) instead of losing those rows.
        for f in schema:
            con.execute(
                f"ALTER TABLE {qname} ADD COLUMN IF NOT EXISTS {_ident(f.name)} "
                f"{_sql_type(f.type)}{_compression(f)}"
            )
    else:
        raise ValueError(f"unknown write mode {mode!r}")
    if table.num_rows == 0:
        return 0
    view = f"_incoming_{name}"
    con.register(view, table)
    try:
        if mode == "merge":
            cols = key or PRIMARY_KEYS.get(name)
            if not cols:
                raise ValueError(f"merge into {name!r} needs a key")
            match = " AND ".join(f"i.{_ident(c)} = t.{_ident(c)}" for c in cols)
            con.execute(
                f"DELETE FROM {qname} t WHERE EXISTS (SELECT 1 FROM {_ident(view)} i WHERE {match})"
            )
        con.execute(f"INSERT INTO {qname} BY NAME SELECT * FROM {_ident(view)}")
    finally:
        con.unregister(view)
    return table.num_rows


def write_table(
    con_or_path: duckdb.DuckDBPyConnection | str | Path | None,
    name: str,
    table: pa.Table,
    mode: WriteMode = "replace",
    key: Sequence[str] | None = None,
) -> int:
    """Write one table atomically and return its row count.

    replace: the table becomes exactly `table` (created with the schema even when empty).
    append:  rows are added.
    merge:   rows whose `key` (default: the primary key) matches an incoming row are deleted
             first; pass a coarse key such as ("env_id",) to replace one partition's rows.
    """
    return write_tables(con_or_path, {name: table}, mode=mode, key=key)[name]


def write_tables(
    con_or_path: duckdb.DuckDBPyConnection | str | Path | None,
    tables: Mapping[str, pa.Table],
    mode: WriteMode | Mapping[str, WriteMode] = "replace",
    key: Sequence[str] | None = None,
) -> dict[str, int]:
    """Write several tables in one transaction, so readers never see half a stage.

    `mode` is one mode for every table or one per table (see `build_write_modes`). With
    mode="merge", `key` applies to every merged table (e.g. ("env_id",) for one partition).
    """
    with _connection(con_or_path) as con:
        con.begin()
        try:
            # Every write also creates the tables no stage has written yet (empty), so dbt's
            # sources exist even when a gate held a table back.
            _create_missing(con, TABLE_SCHEMAS)
            counts = {
                name: _write(con, name, t, mode if isinstance(mode, str) else mode[name], key)
                for name, t in tables.items()
            }
        except BaseException:
            con.rollback()
            raise
        con.commit()
    return counts


def drop_tables(
    con_or_path: duckdb.DuckDBPyConnection | str | Path | None, names: Iterable[str]
) -> None:
    """Drop these tables and checkpoint, so what is written next reuses their space.

    A DuckDB file never shrinks, and a table replaced inside a transaction is written beside
    the old one until it commits: a publish that replaced every table of the warehouse it
    copied from the last dataset doubled the file (a full build's 0.76 GB became 1.5 GB).
    Only for a warehouse nobody reads meanwhile, such as a dataset being built: between this
    and the next write its tables are missing.
    """
    with _connection(con_or_path) as con:
        for name in names:
            con.execute(f"DROP TABLE IF EXISTS {_ident(name)}")
        con.execute("CHECKPOINT")


def build_write_modes(names: Iterable[str]) -> dict[str, WriteMode]:
    """How a build writes its tables: each replaced, except the ledgers, merged by key."""
    return {name: "merge" if name in LEDGER_TABLES else "replace" for name in names}


def ensure_tables(
    con_or_path: duckdb.DuckDBPyConnection | str | Path | None,
    names: Iterable[str] | None = None,
) -> None:
    """Create every missing warehouse table empty, so dbt sources exist before a stage runs."""
    with _connection(con_or_path) as con:
        _create_missing(con, names or TABLE_SCHEMAS)


def _create_missing(con: duckdb.DuckDBPyConnection, names: Iterable[str]) -> None:
    for name in names:
        con.execute(create_table_sql(name, TABLE_SCHEMAS[name], if_not_exists=True))


def read_table(con_or_path: duckdb.DuckDBPyConnection | str | Path | None, name: str) -> pa.Table:
    """A warehouse table in primary-key order, with its declared schema."""
    with _connection(con_or_path) as con:
        order = ", ".join(_ident(c) for c in PRIMARY_KEYS.get(name, ()))
        sql = f"SELECT * FROM {_ident(name)}" + (f" ORDER BY {order}" if order else "")
        table = con.sql(sql).to_arrow_table()
    return conform(name, table)


def table_names(con_or_path: duckdb.DuckDBPyConnection | str | Path | None) -> list[str]:
    with _connection(con_or_path) as con:
        return sorted(
            r[0]
            for r in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_schema = 'main'"
            ).fetchall()
        )
