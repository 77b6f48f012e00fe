"""Per-environment parts of a warehouse table, kept from one publish to the next.

A publish builds its warehouse in a copy of the last published one. For a table whose rows
each belong to one environment (the trajectories: most of a full build's warehouse, and of
its publish time), the rows of an environment made from the same source as last time are
already there: they are kept, and only the other environments' rows are read from their
artifacts, validated and written. A small bookkeeping table records, per table and
environment, the source the rows were made from (the artifact's data version and the code
that turned it into rows) and what reading it quarantined, which the kept rows still need.

Rows are kept only on an exact match of the source: a changed artifact, new code, an
environment this build left out or no longer has, or a warehouse without the bookkeeping
(the first build, one that did not open) all mean the rows are made again.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from synthesis import codec
from synthesis.export.warehouse import PRIMARY_KEYS, _ident, _write

PARTS_TABLE = "_envfoundry_parts"
_PARTS_SQL = (
    f"CREATE TABLE IF NOT EXISTS {_ident(PARTS_TABLE)} (table_name VARCHAR NOT NULL, "
    "env_id VARCHAR NOT NULL, source VARCHAR NOT NULL, quarantine_json VARCHAR NOT NULL)"
)


@dataclass(frozen=True)
class Part:
    """One environment's rows of a table: what they are made from, what making them
    quarantined (rows for the quarantine table)."""

    source: str
    quarantine: list[dict] = field(default_factory=list)


def recorded(con: duckdb.DuckDBPyConnection, table: str) -> dict[str, Part]:
    """env id → the part of `table` the warehouse holds (nothing without the bookkeeping)."""
    if not _exists(con, PARTS_TABLE) or not _exists(con, table):
        return {}
    rows = con.execute(
        f"SELECT env_id, source, quarantine_json FROM {_ident(PARTS_TABLE)} "
        "WHERE table_name = ? ORDER BY env_id",
        [table],
    ).fetchall()
    return {env_id: Part(source, codec.loads(q)) for env_id, source, q in rows}


def reusable(
    con: duckdb.DuckDBPyConnection, table: str, sources: Mapping[str, str]
) -> dict[str, Part]:
    """The parts of `table` already in the warehouse and made from `sources[env_id]`."""
    return {
        env_id: part
        for env_id, part in recorded(con, table).items()
        if sources.get(env_id) == part.source
    }


def write(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: pa.Table,
    kept: Mapping[str, Part],
    made: Mapping[str, Part],
) -> int:
    """Make `table` the kept environments' rows it holds plus `rows` (the made ones'), and
    record every part's source, in one transaction. The table's row count.

    Raises ValueError, writing nothing, when a made environment is also kept or a key is
    then held twice (the table's primary key must stay unique across all its parts).
    """
    if set(kept) & set(made):
        raise ValueError(
            f"{table}: environments both kept and made: {sorted(set(kept) & set(made))}"
        )
    con.begin()
    try:
        con.execute(_PARTS_SQL)
        qname = _ident(table)
        # An append creates the table, or adds the columns a kept one lacks, as any write.
        _write(con, table, rows.slice(0, 0), "append", None)
        if kept:
            marks = ", ".join("?" for _ in kept)
            con.execute(f"DELETE FROM {qname} WHERE env_id NOT IN ({marks})", sorted(kept))
        else:
            # Nothing kept: the table is made anew, so it also takes its columns' current
            # declaration (their compression); one from an older version would keep its own.
            _write(con, table, rows.slice(0, 0), "replace", None)
        _write(con, table, rows, "append", None)
        key = ", ".join(_ident(c) for c in PRIMARY_KEYS[table])
        twice = con.execute(
            f"SELECT {key} FROM {qname} GROUP BY ALL HAVING count(*) > 1 LIMIT 1"
        ).fetchone()
        if twice is not None:
            raise ValueError(f"{table}: key {twice} held by more than one row")
        con.execute(f"DELETE FROM {_ident(PARTS_TABLE)} WHERE table_name = ?", [table])
        parts = sorted({**kept, **made}.items())
        if parts:
            con.executemany(
                f"INSERT INTO {_ident(PARTS_TABLE)} VALUES (?, ?, ?, ?)",
                [[table, env_id, p.source, codec.dumps_str(p.quarantine)] for env_id, p in parts],
            )
        (count,) = con.execute(f"SELECT count(*) FROM {qname}").fetchone()
    except BaseException:
        con.rollback()
        raise
    con.commit()
    return count


def _exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute(
        "SELECT 1 FROM duckdb_tables() WHERE table_name = ? AND schema_name = 'main'", [name]
    ).fetchone()
    return found is not None
