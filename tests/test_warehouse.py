"""Warehouse tests: records become rows with the contract's columns, and read back unchanged."""

from __future__ import annotations

import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pytest

from synthesis import codec, hashing
from synthesis.export import warehouse as wh
from synthesis.export.artifacts import read_trajectories
from synthesis.models import (
    Check,
    CheckSelftest,
    EntitySpec,
    Environment,
    EnvSpec,
    FieldSpec,
    InitialState,
    QuarantineRecord,
    Scenario,
    ToolCall,
    ToolInfo,
    ToolSpec,
    Topic,
    Trajectory,
)

# --------------------------------------------------------------------------- a small world
# Shared with test_dbt_project.py and test_report.py, whose assertions are these numbers:
# 3 topics → 3 specs (1 rejected) → 2 environments (1 quarantined) → 4 scenarios
# (1 quarantined) → 6 checks → 3 proven → 3 published → 7 trajectories → 4 successful.


def _tool(name: str, kind: str, params: dict | None = None) -> ToolInfo:
    return ToolInfo(
        name=name,
        kind=kind,
        schema={
            "type": "function",
            "function": {
                "name": name,
                "description": f"{name} tool",
                "parameters": {
                    "type": "object",
                    "properties": params or {},
                    "required": sorted(params or {}),
                },
            },
        },
        reads=["bookings"],
        writes=["bookings"] if kind == "mutate" else [],
    )


def _spec(env_id: str, topic_id: str) -> EnvSpec:
    return EnvSpec(
        env_id=env_id,
        topic_id=topic_id,
        archetype="booking",
        class_name="Env",
        title=topic_id,
        description="d",
        entities=[
            EntitySpec(
                name="booking",
                collection="bookings",
                id_prefix="bk",
                label="booking",
                fields=[FieldSpec(name="guest", type="str")],
            )
        ],
        tools=[
            ToolSpec(
                name="list_bookings",
                kind="query",
                operation="list",
                entity="booking",
                description="list",
            )
        ],
    )


def _env(
    env_id: str,
    topic_id: str,
    tools: list[ToolInfo],
    status: str,
    score: float,
    reason: str | None = None,
) -> Environment:
    code = f"class Env_{env_id}:\n    pass\n"
    return Environment(
        env_id=env_id,
        topic_id=topic_id,
        archetype="booking",
        class_name=f"Env_{env_id}",
        code=code,
        code_sha256=hashing.sha256_text(code),
        tools=tools,
        status=status,
        audit_score=score,
        reason=reason,
    )


def _scenario(
    sid: str,
    n_steps: int,
    status: str = "published",
    kind: str = "feasible",
    split: str = "train",
    reason: str | None = None,
) -> Scenario:
    chain = [ToolCall(tool="list_bookings")] + [
        ToolCall(tool="cancel_booking", args={"booking_id": f"bk{i}"}) for i in range(n_steps - 1)
    ]
    return Scenario(
        scenario_id=sid,
        env_id="e1",
        state_id="e1-s0",
        kind=kind,
        task_text=f"task {sid}",
        initial_state={"bookings": {"bk0": {"guest": "Ann"}}},
        gold_chain=chain,
        gold_results=[{"success": True}] * n_steps,
        split=split,
        status=status,
        reason=reason,
        difficulty={"chain_length": n_steps},
    )


def _traj(tid: str, sid: str, policy: str, reward: float, success: bool) -> Trajectory:
    return Trajectory(
        traj_id=tid,
        scenario_id=sid,
        env_id="e1",
        policy=policy,
        reward=reward,
        success=success,
        n_steps=2,
        messages=[{"role": "user", "content": "hi"}],
        tokens_in=10,
        tokens_out=5,
        cost_usd=0.001,
    )


def small_world() -> dict[str, list]:
    """Records of every kind, small enough that every funnel and mart number is known."""
    e1_tools = [
        _tool("list_bookings", "query"),
        _tool("get_booking", "query", {"id": {}}),
        _tool("cancel_booking", "mutate", {"booking_id": {"type": "string"}}),
    ]
    return {
        "topics": [
            Topic(topic_id=t, title=t.title(), archetype="booking", description="")
            for t in ("t1", "t2", "t3")
        ],
        "env_specs": [_spec("e1", "t1"), _spec("e2", "t2"), _spec("e3", "t3")],
        "environments": [
            _env("e1", "t1", e1_tools, "accepted", 0.95),
            _env(
                "e2",
                "t2",
                [_tool("a", "query"), _tool("b", "mutate")],
                "quarantined",
                0.5,
                "audit_below_threshold: 0.50 < 0.85",
            ),
        ],
        "initial_states": [
            InitialState(state_id="e1-s0", env_id="e1", seed=7, state={"bookings": {}}),
            InitialState(state_id="e1-s1", env_id="e1", seed=2**62, state={"bookings": {}}),
        ],
        "scenarios": [
            _scenario("s2", 3),
            _scenario("s1", 2),
            _scenario("s3", 1, status="quarantined", reason="noop_passes: do-nothing passes"),
            _scenario("s4", 1, kind="infeasible", split="test"),
        ],
        "checks": [
            Check(
                check_id=f"{sid}-c{i}",
                scenario_id=sid,
                description="booking cancelled",
                spec={"op": "equals", "path": ["bookings", "bk0", "status"], "value": i},
            )
            for sid, n in (("s1", 2), ("s2", 2), ("s3", 1), ("s4", 1))
            for i in range(n)
        ],
        "check_selftests": [
            CheckSelftest(
                scenario_id="s1",
                gold_pass=True,
                noop_fail=True,
                deterministic=True,
                mutation_kill_rate=1.0,
                n_mutants=3,
            ),
            CheckSelftest(
                scenario_id="s2",
                gold_pass=True,
                noop_fail=True,
                deterministic=True,
                mutation_kill_rate=0.5,
                n_mutants=4,
            ),
            CheckSelftest(
                scenario_id="s3",
                gold_pass=True,
                noop_fail=False,
                deterministic=True,
                mutation_kill_rate=0.0,
                n_mutants=1,
                reason="noop_passes",
            ),
            CheckSelftest(
                scenario_id="s4",
                gold_pass=True,
                noop_fail=True,
                deterministic=True,
                mutation_kill_rate=1.0,
                n_mutants=1,
            ),
        ],
        "trajectories": [
            _traj("o1", "s1", "oracle", 1.0, True),
            _traj("o2", "s2", "oracle", 1.0, True),
            _traj("o4", "s4", "oracle", 1.0, True),
            _traj("r1", "s1", "random", 0.5, False),
            _traj("r2", "s2", "random", 0.0, False),
            _traj("r4", "s4", "random", 1.0, True),
            _traj("n1", "s1", "noop", 0.0, False),
        ],
        "llm_calls": [
            {
                "call_id": "c1",
                "stage": "scenarios",
                "artifact_id": "s1",
                "model": "m1",
                "tokens_in": 100,
                "tokens_out": 20,
                "cost_usd": 0.01,
                "latency_ms": 400.0,
                "cache_hit": False,
                "created_at": datetime(2025, 1, 1, tzinfo=UTC),
            },
            {
                "call_id": "c2",
                "stage": "scenarios",
                "artifact_id": "s1",
                "model": "m1",
                "tokens_in": 0,
                "tokens_out": 0,
                "cost_usd": 0.0,
                "latency_ms": 1.0,
                "cache_hit": True,
            },
            {
                "call_id": "c3",
                "stage": "trajectories",
                "artifact_id": "r1",
                "model": "m2",
                "tokens_in": 50,
                "tokens_out": 50,
                "cost_usd": 0.02,
                "latency_ms": 600.0,
                "cache_hit": False,
            },
        ],
        "quarantine": [
            QuarantineRecord(
                artifact_type="env_spec",
                artifact_id="e3",
                stage="env_specs",
                reason="spec_invalid: unknown field 'x'",
            ),
            QuarantineRecord(
                artifact_type="environment",
                artifact_id="e2",
                stage="env_audit",
                reason="audit_below_threshold: 0.50 < 0.85",
            ),
            QuarantineRecord(
                artifact_type="scenario",
                artifact_id="s3",
                stage="checks",
                reason="noop_passes: do-nothing passes",
            ),
        ],
        "quality_gates": [
            {
                "suite": "scenarios",
                "success": True,
                "evaluated": 16,
                "failed": [],
                "rows": 4,
                "seconds": 0.1,
            },
            {
                "suite": "tools",
                "success": False,
                "evaluated": 9,
                "rows": 5,
                "seconds": 0.05,
                "failed": [
                    {
                        "expectation": "expect_column_values_to_be_in_set",
                        "column": "kind",
                        "details": "1 unexpected; e.g. ['write']",
                    }
                ],
            },
        ],
        "shards": [
            {
                "path": "sft/train-00000.jsonl",
                "sha256": "a" * 64,
                "rows": 2,
                "split": "train",
                "format": "jsonl",
                "kind": "openai_chat",
            },
            {
                "path": "sft/test-00000.jsonl",
                "sha256": "b" * 64,
                "rows": 1,
                "split": "test",
                "format": "jsonl",
                "kind": "openai_chat",
            },
        ],
    }


def unproven_world(*, gold_pass: bool, noop_fail: bool) -> dict[str, list]:
    """`small_world` with its published scenario s1 not proven: its self-test's gold chain
    fails (`gold_pass=False`) or a no-op passes it (`noop_fail=False`)."""
    world = small_world()
    world["check_selftests"][0] = CheckSelftest(
        scenario_id="s1",
        gold_pass=gold_pass,
        noop_fail=noop_fail,
        deterministic=True,
        mutation_kill_rate=1.0,
    )
    return world


def env_of(world: dict[str, list]) -> dict[str, str]:
    """Scenario id → env id, for the world's checks and self-tests rows."""
    return {s.scenario_id: s.env_id for s in world["scenarios"]}


def world_tables(world: dict[str, list] | None = None) -> dict[str, pa.Table]:
    w = world or small_world()
    return {
        "topics": wh.topic_rows(w["topics"]),
        "env_specs": wh.env_spec_rows(w["env_specs"], rejected={"e3": "spec_invalid: x"}),
        "environments": wh.environment_rows(w["environments"]),
        "tools": wh.tool_rows(w["environments"]),
        "initial_states": wh.initial_state_rows(w["initial_states"]),
        "scenarios": wh.scenario_rows(w["scenarios"]),
        "checks": wh.check_rows(w["checks"], env_of(w)),
        "check_selftests": wh.check_selftest_rows(w["check_selftests"], env_of(w)),
        "trajectories": wh.trajectory_rows(w["trajectories"]),
        "llm_calls": wh.llm_call_rows(w["llm_calls"]),
        "quarantine": wh.quarantine_rows(w["quarantine"]),
        "shards": wh.shard_rows({"files": w["shards"]}),
        "quality_gates": wh.quality_gate_rows(w["quality_gates"]),
    }


def populate(path: Path, world: dict[str, list] | None = None) -> dict[str, pa.Table]:
    tables = world_tables(world)
    wh.write_tables(path, tables)
    return tables


# --------------------------------------------------------------------------- tests

# The contract's columns (docs/architecture.md, "Warehouse"): extras are allowed, these are not
# negotiable.
CONTRACT = {
    "environments": [
        "env_id",
        "topic_id",
        "archetype",
        "kind",
        "source",
        "status",
        "n_tools",
        "code_sha256",
        "audit_score",
    ],
    "tools": ["env_id", "tool_name", "kind", "schema_json"],
    "scenarios": [
        "scenario_id",
        "env_id",
        "status",
        "split",
        "kind",
        "chain_length",
        "task_text",
        "initial_state_json",
        "gold_chain_json",
    ],
    "checks": ["check_id", "scenario_id", "description", "spec_json"],
    "check_selftests": [
        "scenario_id",
        "gold_pass",
        "noop_fail",
        "deterministic",
        "mutation_kill_rate",
    ],
    "trajectories": [
        "traj_id",
        "scenario_id",
        "policy",
        "reward",
        "success",
        "n_steps",
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "messages_json",
    ],
    "llm_calls": [
        "call_id",
        "stage",
        "artifact_id",
        "model",
        "tokens_in",
        "tokens_out",
        "cost_usd",
        "latency_ms",
        "cache_hit",
    ],
    "quarantine": ["artifact_type", "artifact_id", "stage", "reason"],
    "initial_states": ["state_id", "env_id", "seed", "state_json"],
    "topics": ["topic_id", "title", "archetype"],
    "env_specs": [
        "env_id",
        "topic_id",
        "archetype",
        "schema_version",
        "spec_json",
        "status",
        "reason",
    ],
}


@pytest.mark.parametrize("name", sorted(CONTRACT))
def test_schema_has_contract_columns(name):
    missing = set(CONTRACT[name]) - set(wh.TABLE_SCHEMAS[name].names)
    assert not missing


def test_row_functions_produce_declared_schemas():
    for name, table in world_tables().items():
        assert table.schema.equals(wh.TABLE_SCHEMAS[name]), name


def test_scenario_rows_derive_and_encode_fields():
    rows = wh.scenario_rows(small_world()["scenarios"]).to_pylist()
    assert [r["scenario_id"] for r in rows] == ["s1", "s2", "s3", "s4"]
    s2 = rows[1]
    assert s2["chain_length"] == 3
    assert s2["n_distinct_tools"] == 2
    assert codec.loads(s2["gold_chain_json"]) == [
        {"tool": "list_bookings", "args": {}},
        {"tool": "cancel_booking", "args": {"booking_id": "bk0"}},
        {"tool": "cancel_booking", "args": {"booking_id": "bk1"}},
    ]
    # The codec's canonical bytes, so equal content means equal column values across runs.
    assert s2["initial_state_json"] == '{"bookings":{"bk0":{"guest":"Ann"}}}'
    assert s2["final_state_json"] is None
    assert rows[2]["status"] == "quarantined" and rows[2]["reason"].startswith("noop_passes")


def test_environment_and_tool_rows():
    envs = small_world()["environments"]
    env_rows = wh.environment_rows(envs).to_pylist()
    assert [
        (r["env_id"], r["n_tools"], r["n_query_tools"], r["n_mutate_tools"]) for r in env_rows
    ] == [("e1", 3, 2, 1), ("e2", 2, 1, 1)]
    tools = wh.tool_rows(envs).to_pylist()
    assert [(t["env_id"], t["tool_name"]) for t in tools] == [
        ("e1", "cancel_booking"),
        ("e1", "get_booking"),
        ("e1", "list_bookings"),
        ("e2", "a"),
        ("e2", "b"),
    ]
    cancel = tools[0]
    assert cancel["kind"] == "mutate" and cancel["writes"] == ["bookings"]
    assert cancel["n_params"] == 1 and cancel["n_required_params"] == 1
    assert cancel["description"] == "cancel_booking tool"
    assert codec.loads(cancel["schema_json"])["function"]["name"] == "cancel_booking"


def test_bare_function_schema_is_understood():
    bare = ToolInfo(
        name="f",
        kind="query",
        schema={
            "name": "f",
            "description": "bare",
            "parameters": {
                "type": "object",
                "properties": {"x": {"type": "string"}, "y": {"type": "integer"}},
                "required": ["x"],
            },
        },
    )
    env = _env("e9", "t9", [bare], "accepted", 1.0)
    (row,) = wh.tool_rows([env]).to_pylist()
    assert (row["description"], row["n_params"], row["n_required_params"]) == ("bare", 2, 1)


def test_env_spec_rows_mark_rejected():
    rows = wh.env_spec_rows(small_world()["env_specs"], rejected={"e3": "bad"}).to_pylist()
    assert [(r["env_id"], r["status"], r["reason"]) for r in rows] == [
        ("e1", "accepted", None),
        ("e2", "accepted", None),
        ("e3", "quarantined", "bad"),
    ]
    assert EnvSpec.model_validate_json(rows[0]["spec_json"]).env_id == "e1"


def test_quality_gate_rows():
    rows = wh.quality_gate_rows(small_world()["quality_gates"]).to_pylist()
    assert [(r["suite"], r["success"], r["n_failed"]) for r in rows] == [
        ("scenarios", True, 0),
        ("tools", False, 1),
    ]
    assert codec.loads(rows[1]["failures_json"])[0]["column"] == "kind"


def test_one_write_creates_every_table(tmp_path):
    path = tmp_path / "w.duckdb"
    wh.write_table(path, "topics", wh.topic_rows(small_world()["topics"]))
    assert wh.table_names(path) == sorted(wh.TABLE_SCHEMAS)
    assert wh.read_table(path, "scenarios").num_rows == 0


def test_quarantine_reason_kind():
    assert wh.reason_kind("noop_passes: do-nothing passes") == "noop_passes"
    assert wh.reason_kind("the gold chain raised an exception in step 3") == (
        "the gold chain raised"
    )
    assert wh.reason_kind("a very long free-text reason that mentions a colon later: x") == (
        "a very long free-text"
    )


def test_roundtrip_every_table(tmp_path):
    path = tmp_path / "warehouse.duckdb"
    tables = populate(path)
    assert wh.table_names(path) == sorted(wh.TABLE_SCHEMAS)
    for name, table in tables.items():
        back = wh.read_table(path, name)
        assert back.equals(table), name
    assert wh.read_table(path, "initial_states").column("seed").to_pylist() == [7, 2**62]


def test_empty_tables_keep_their_schema(tmp_path):
    path = tmp_path / "w.duckdb"
    assert wh.write_table(path, "llm_calls", wh.llm_call_rows([])) == 0
    back = wh.read_table(path, "llm_calls")
    assert back.num_rows == 0 and back.schema.equals(wh.LLM_CALLS)
    with wh.open_warehouse(path) as con:
        types = dict(
            con.execute(
                "SELECT column_name, data_type FROM information_schema.columns "
                "WHERE table_name = 'llm_calls'"
            ).fetchall()
        )
    assert types["cache_hit"] == "BOOLEAN" and types["tokens_in"] == "BIGINT"
    assert types["created_at"] == "TIMESTAMP WITH TIME ZONE"


def test_ensure_tables_creates_missing_only(tmp_path):
    path = tmp_path / "w.duckdb"
    populate(path)
    wh.ensure_tables(path)
    assert wh.read_table(path, "scenarios").num_rows == 4
    fresh = tmp_path / "fresh.duckdb"
    wh.ensure_tables(fresh)
    assert wh.table_names(fresh) == sorted(wh.TABLE_SCHEMAS)


def test_replace_append_merge(tmp_path):
    path = tmp_path / "w.duckdb"
    scenarios = small_world()["scenarios"]
    wh.write_table(path, "scenarios", wh.scenario_rows(scenarios[:2]))
    wh.write_table(path, "scenarios", wh.scenario_rows(scenarios[2:3]), mode="append")
    ids = wh.read_table(path, "scenarios").column("scenario_id").to_pylist()
    assert ids == ["s1", "s2", "s3"]
    wh.write_table(path, "scenarios", wh.scenario_rows(scenarios[3:]))
    assert wh.read_table(path, "scenarios").column("scenario_id").to_pylist() == ["s4"]

    # merge on the primary key is an upsert ...
    changed = scenarios[3].model_copy(update={"task_text": "new text"})
    wh.write_table(path, "scenarios", wh.scenario_rows([changed, scenarios[0]]), mode="merge")
    back = wh.read_table(path, "scenarios").to_pylist()
    assert [(r["scenario_id"], r["task_text"]) for r in back] == [
        ("s2", "task s2"),
        ("s4", "new text"),
    ]
    # ... and on a coarse key it replaces a whole partition, dropping rows no longer produced.
    wh.write_table(
        path, "scenarios", wh.scenario_rows([scenarios[1]]), mode="merge", key=("env_id",)
    )
    assert wh.read_table(path, "scenarios").column("scenario_id").to_pylist() == ["s1"]


def test_tables_dropped_before_they_are_written_again_leave_the_file_its_size(tmp_path):
    # Big enough for DuckDB to write blocks of its own: 20,000 rows of distinct text.
    texts = [f"{i:06d} " + "lorem ipsum dolor sit amet " * 8 for i in range(20_000)]
    rows = {
        "scenarios": wh.scenario_rows(small_world()["scenarios"]),
        "quarantine": wh.quarantine_rows(
            QuarantineRecord(
                artifact_type="scenario", artifact_id=f"q{i}", stage="checks", reason=text
            )
            for i, text in enumerate(texts)
        ),
    }
    first = tmp_path / "first.duckdb"
    wh.write_tables(first, rows)
    size = first.stat().st_size
    # As a publish does it: a copy of the last warehouse, every table written again.
    kept, dropped = tmp_path / "kept.duckdb", tmp_path / "dropped.duckdb"
    shutil.copy(first, kept)
    shutil.copy(first, dropped)
    wh.write_tables(kept, rows)
    wh.drop_tables(dropped, rows)
    wh.write_tables(dropped, rows)
    assert kept.stat().st_size > 1.5 * size  # replaced in one transaction: written beside
    assert dropped.stat().st_size < 1.2 * size
    assert wh.read_table(dropped, "quarantine").num_rows == len(texts)
    assert wh.read_table(dropped, "scenarios") == wh.read_table(first, "scenarios")


def test_failed_write_leaves_previous_data(tmp_path):
    path = tmp_path / "w.duckdb"
    populate(path)
    bad = wh.scenario_rows(small_world()["scenarios"]).set_column(
        0, "scenario_id", pa.array([None, "x", "y", "z"], pa.string())
    )
    with pytest.raises(Exception, match="non-nullable|NOT NULL"):
        wh.write_tables(path, {"checks": wh.check_rows([], {}), "scenarios": bad})
    # Both writes were one transaction: the checks table was not emptied either.
    assert wh.read_table(path, "checks").num_rows == 6
    assert wh.read_table(path, "scenarios").num_rows == 4


def test_conform_rejects_wrong_columns():
    world = small_world()
    table = wh.check_rows(world["checks"], env_of(world))
    with pytest.raises(ValueError, match="missing columns \\['spec_json'\\]"):
        wh.conform("checks", table.drop_columns(["spec_json"]))
    with pytest.raises(ValueError, match="unexpected columns \\['extra'\\]"):
        wh.conform("checks", table.append_column("extra", pa.array([1] * 6)))


def test_rows_are_deterministic():
    a = world_tables()
    w = small_world()
    w = {k: list(reversed(v)) for k, v in w.items()}
    b = world_tables(w)
    for name in a:
        assert a[name].equals(b[name]), name


def test_default_path_follows_envfoundry_home(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path / "home"))
    assert wh.warehouse_path() == tmp_path / "home" / "warehouse.duckdb"
    con = wh.open_warehouse()
    con.close()
    assert (tmp_path / "home" / "warehouse.duckdb").exists()


def test_trajectory_part_rows_equal_trajectory_rows(tmp_path):
    trajs = small_world()["trajectories"]
    tools = [{"type": "function", "function": {"name": "f", "parameters": {}}}]
    trajs = [t.model_copy(update={"tools": tools}) for t in trajs]
    # Two environments' artifacts, written as the IO manager writes them, out of order.
    paths = []
    for i, part in enumerate((trajs[1::2], trajs[::2])):
        value = {"quarantine": [], "trajectories": [t.model_dump(mode="json") for t in part]}
        paths.append(codec.write_json(tmp_path / f"{i}.json", value, pretty=False))
    parts = [read_trajectories(p) for p in paths]
    assert parts[0]["trajectories"][0]["tools"] is parts[0]["trajectories"][-1]["tools"]
    assert wh.trajectory_part_rows(parts).equals(wh.trajectory_rows(trajs))


def _trajectory_artifacts(tmp_path: Path, parsed: tuple[int, ...] = ()) -> dict[str, object]:
    """Five environments' trajectories artifacts (files, as the IO manager writes them, but
    those in `parsed`), each with a quarantine row of its own."""
    trajs = small_world()["trajectories"]
    parts: dict[str, object] = {}
    for i in range(5):
        env_id = f"env-{i}"
        value = {
            "quarantine": [{"artifact_id": f"t-{i}", "reason": f"reason {i}"}],
            "trajectories": [
                t.model_copy(update={"traj_id": f"{t.traj_id}-{i}", "env_id": env_id}).model_dump(
                    mode="json"
                )
                for t in trajs[: len(trajs) - i % 2]
            ],
        }
        path = codec.write_json(tmp_path / f"{env_id}.json", value, pretty=False)
        parts[env_id] = value if i in parsed else path
    return parts


def test_the_trajectory_table_shared_with_a_child_is_the_one_one_process_makes(
    tmp_path, monkeypatch
):
    parts = _trajectory_artifacts(tmp_path)
    readers = tmp_path / "readers"

    def read_here(path):
        with readers.open("a") as out:
            out.write(f"{os.getpid()}\n")
        return read_trajectories(path)

    monkeypatch.setattr(wh, "read_trajectories", read_here)
    shared, quarantine = wh.trajectory_table(parts)
    alone, alone_quarantine = wh.trajectory_table(parts, processes=1)
    every = [
        Trajectory.model_validate(t)
        for part in parts.values()
        for t in (read_trajectories(part) if isinstance(part, Path) else part)["trajectories"]
    ]
    assert shared.equals(alone) and shared.equals(wh.trajectory_rows(every))
    assert shared["traj_id"].to_pylist() == sorted(t.traj_id for t in every)
    assert quarantine == alone_quarantine
    assert sorted(quarantine) == sorted(parts)
    assert quarantine["env-3"] == [{"artifact_id": "t-3", "reason": "reason 3"}]
    # The five files were read by two processes (the shared run), then by this one alone.
    pids = readers.read_text().split()
    assert len(pids) == 10 and len(set(pids[:5])) == 2 and set(pids[5:]) == {str(os.getpid())}


@pytest.mark.parametrize("how", ["exits", "is killed"])
def test_a_child_that_fails_leaves_its_trajectories_to_this_process(tmp_path, monkeypatch, how):
    parts = _trajectory_artifacts(tmp_path, parsed=(2,))
    parent = os.getpid()

    def failing_in_the_child(path):
        if os.getpid() != parent:
            if how == "exits":
                os._exit(3)
            os.kill(os.getpid(), 9)
        return read_trajectories(path)

    monkeypatch.setattr(wh, "read_trajectories", failing_in_the_child)
    table, quarantine = wh.trajectory_table(parts)
    assert table.equals(wh.trajectory_table(parts, processes=1)[0])
    assert sorted(quarantine) == sorted(parts)


def test_an_invalid_trajectory_fails_the_shared_table_too(tmp_path):
    parts = _trajectory_artifacts(tmp_path)
    record = small_world()["trajectories"][0].model_dump(mode="json")
    for env_id in ("env-0", "env-4"):  # one on each side
        parts[env_id] = {"quarantine": [], "trajectories": [{**record, "n_steps": "many"}]}
        with pytest.raises(ValueError):
            wh.trajectory_table(parts)
        parts = _trajectory_artifacts(tmp_path)


def test_trajectory_part_rows_validate_every_record():
    record = small_world()["trajectories"][0].model_dump(mode="json")
    shared = record["tools"]
    bad = {**record, "traj_id": "t-bad", "tools": shared, "n_steps": "many"}
    with pytest.raises(ValueError):
        wh.trajectory_part_rows([{"trajectories": [record, bad]}])
    with pytest.raises(ValueError):
        wh.trajectory_part_rows([{"trajectories": [{**record, "extra": 1}]}])


def test_json_document_columns_are_declared_zstd_and_the_others_are_not(tmp_path):
    declared = {
        (table, f.name)
        for table, schema in wh.TABLE_SCHEMAS.items()
        for f in schema
        if "USING COMPRESSION zstd" in wh.create_table_sql(table, pa.schema([f]))
    }
    named_json = {
        (table, f.name)
        for table, schema in wh.TABLE_SCHEMAS.items()
        for f in schema
        if f.name.endswith("_json")
    }
    assert ("trajectories", "messages_json") in declared
    assert declared == named_json
    # DuckDB takes the declaration: the rows written are stored zstd-compressed.
    con = wh.open_warehouse(tmp_path / "w.duckdb")
    try:
        spec = wh.TABLE_SCHEMAS["env_specs"].field("spec_json")
        con.execute(wh.create_table_sql("docs", pa.schema([spec])))
        con.execute("""INSERT INTO docs VALUES ('{"a": 1}')""")
        con.execute("CHECKPOINT")
        stored = con.execute(
            "SELECT DISTINCT compression FROM pragma_storage_info('docs') "
            "WHERE segment_type = 'VARCHAR'"
        ).fetchall()
    finally:
        con.close()
    assert stored == [("ZSTD",)]
