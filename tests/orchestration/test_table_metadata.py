"""What the UI shows of the tables: warehouse tables carry their column schema, row count and a
preview; dbt models their yml description (never their SQL), dbt tests what they assert."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from pathlib import Path

import dagster as dg
import duckdb
import pyarrow as pa
import pytest
import yaml

from assets.table_metadata import PREVIEW_CELL_CHARS, PREVIEW_ROWS, table_metadata
from assets.warehouse import TABLES
from orchestration import instance as envfoundry_instance

MODELS = Path(__file__).resolve().parents[2] / "dbt_project" / "models"


def test_table_metadata_has_duckdb_types_row_count_and_a_short_preview():
    schema = pa.schema(
        [
            pa.field("id", pa.string(), nullable=False),
            pa.field("n", pa.int64()),
            pa.field("rate", pa.float64()),
            pa.field("ok", pa.bool_()),
            pa.field("tags", pa.list_(pa.string())),
            pa.field("at", pa.timestamp("us", tz="UTC")),
            pa.field("code", pa.string()),
        ]
    )
    rows = [
        {
            "id": f"r{i}",
            "n": i if i else None,
            "rate": i / 10,
            "ok": i % 2 == 0,
            "tags": ["a", "b"],
            "at": dt.datetime(2025, 1, 1, tzinfo=dt.UTC),
            "code": "class Env:\n    pass\n" * 20,
        }
        for i in range(PREVIEW_ROWS + 3)
    ]
    meta = table_metadata(pa.Table.from_pylist(rows, schema=schema), len(rows))
    columns = meta["dagster/column_schema"].columns
    assert [(c.name, c.type) for c in columns] == [
        ("id", "VARCHAR"),
        ("n", "BIGINT"),
        ("rate", "DOUBLE"),
        ("ok", "BOOLEAN"),
        ("tags", "VARCHAR[]"),
        ("at", "TIMESTAMP WITH TIME ZONE"),
        ("code", "VARCHAR"),
    ]
    assert columns[0].constraints.nullable is False and columns[1].constraints.nullable is True
    assert meta["dagster/row_count"] == len(rows)
    preview = meta["preview"]
    assert isinstance(preview, dg.TableMetadataValue)
    assert len(preview.records) == PREVIEW_ROWS
    first = preview.records[0].data
    assert first["id"] == "r0" and first["n"] is None and first["ok"] is True
    assert first["tags"] == '["a", "b"]' and first["at"].startswith("2025-01-01T00:00:00")
    assert len(first["code"]) == PREVIEW_CELL_CHARS and first["code"].endswith("…")
    assert "\n" not in first["code"]


@pytest.fixture(scope="module")
def instance(tiny_home, tmp_path_factory):
    # A copy of the build's instance: reading must not touch the shared home.
    copy = tmp_path_factory.mktemp("instance") / "dagster"
    shutil.copytree(tiny_home[0] / "dagster", copy)
    envfoundry_instance.prepare(copy.parent)  # the copy's instance config names the copy
    return dg.DagsterInstance.from_config(str(copy))


@pytest.mark.slow
def test_every_warehouse_table_materialization_describes_its_table(tiny_home, instance):
    home = tiny_home[0]
    con = duckdb.connect(str(home / "warehouse.duckdb"), read_only=True)
    try:
        for table in TABLES:
            record = instance.fetch_materializations(
                dg.AssetKey(["warehouse", table]), limit=1
            ).records[0]
            meta = record.asset_materialization.metadata
            described = con.execute(f'describe "{table}"').fetchall()
            columns = meta["dagster/column_schema"].schema.columns
            assert [(c.name, c.type) for c in columns] == [(r[0], r[1]) for r in described], table
            (count,) = con.execute(f'select count(*) from "{table}"').fetchone()
            assert meta["dagster/row_count"].value == count, table
            assert len(meta["preview"].records) == min(count, PREVIEW_ROWS), table
            assert "rows" not in meta
    finally:
        con.close()


def _dbt_models_in_yml() -> dict[str, str]:
    out = {}
    for path in MODELS.glob("*/*.yml"):
        if path.parent.name == "eval":
            continue  # built into HOME/evals/evals.duckdb by `envfoundry eval`, no asset
        for model in yaml.safe_load(path.read_text()).get("models", []):
            out[model["name"]] = " ".join((model.get("description") or "").split())
    return out


def test_dbt_models_show_their_yml_description_and_never_sql(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(tmp_path))
    from orchestration.definitions import build_definitions

    graph = build_definitions().resolve_asset_graph()
    described = _dbt_models_in_yml()
    assert all(described.values()), [m for m, d in described.items() if not d]
    models = {k.path[1]: graph.get(k) for k in graph.get_all_asset_keys() if k.path[0] == "dbt"}
    assert set(models) == set(described)
    sql = re.compile(r"\bselect\b|\{\{|\bfrom\s+\{|```", re.IGNORECASE)
    for name, node in models.items():
        assert node.description == described[name], name
        assert not sql.search(node.description), name
    dbt_checks = [k for k in graph.asset_check_keys if k.asset_key.path[0] == "dbt"]
    assert dbt_checks
    for key in dbt_checks:
        description = graph.get_check_spec(key).description
        assert description and not sql.search(description), key
    not_null = next(k for k in dbt_checks if k.name == "not_null_stg_initial_states_state_id")
    assert graph.get_check_spec(not_null).description == "`state_id` is never null"
