"""What the UI shows of a warehouse table: its columns with DuckDB types, row count, a preview."""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import dagster as dg
import duckdb
import pyarrow as pa

PREVIEW_ROWS = 5
PREVIEW_CELL_CHARS = 60


def column_schema(table: pa.Table, con: duckdb.DuckDBPyConnection | None = None) -> dg.TableSchema:
    """The table's columns as DuckDB types them (what `DESCRIBE` in the warehouse shows).

    `con`: a DuckDB to type them in, for a caller with several tables (opening an in-memory
    one costs ~25 ms); by default one is opened for this table alone.
    """
    if con is None:
        with duckdb.connect() as own:
            return column_schema(table, own)
    types = [str(t) for t in con.from_arrow(table.slice(0, 0)).types]
    return dg.TableSchema(
        columns=[
            dg.TableColumn(
                name=f.name,
                type=duck_type,
                constraints=dg.TableColumnConstraints(nullable=f.nullable),
            )
            for f, duck_type in zip(table.schema, types, strict=True)
        ]
    )


def _cell(value: Any) -> str | int | float | bool | None:
    if value is None or isinstance(value, bool | int | float):
        return value
    if isinstance(value, dt.datetime | dt.date):
        text = value.isoformat()
    elif isinstance(value, str):
        text = value
    else:
        text = json.dumps(value, default=str, ensure_ascii=False)
    text = " ".join(text.split())
    return text if len(text) <= PREVIEW_CELL_CHARS else text[: PREVIEW_CELL_CHARS - 1] + "…"


def preview(table: pa.Table, schema: dg.TableSchema, rows: int = PREVIEW_ROWS) -> dg.MetadataValue:
    """The first rows, long cells (JSON, code, task texts) cut short."""
    records = [
        dg.TableRecord({name: _cell(value) for name, value in row.items()})
        for row in table.slice(0, rows).to_pylist()
    ]
    return dg.MetadataValue.table(records=records, schema=schema)


def table_metadata(
    table: pa.Table, rows_written: int, con: duckdb.DuckDBPyConnection | None = None
) -> dict[str, Any]:
    """`dagster/column_schema`, `dagster/row_count` and a preview of one warehouse table
    (`con`: see `column_schema`)."""
    schema = column_schema(table, con)
    # The keys the UI reads for the Columns panel and the row count (TableMetadataSet's).
    return {
        "dagster/column_schema": schema,
        "dagster/row_count": rows_written,
        "preview": preview(table, schema),
    }
