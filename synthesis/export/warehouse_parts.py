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

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import duckdb
import pyarrow as pa

from synthesis import codec
from synthesis.export.warehouse import PRIMARY_KEYS, _ident, _write
from synthesis.hashing import sha256_text

PARTS_TABLE = "_envfoundry_parts"
# The tables made from the checks artifacts; the scenarios also take the screening's verdicts.
CHECK_TABLES = ("scenarios", "checks", "check_selftests")
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


def _screened_by_env(screened: Iterable[dict], owners: Mapping[str, str]) -> dict[str, list[dict]]:
    """env id → the screening's quarantine rows of its scenarios (`owners`: scenario id → env
    id, for the scenarios whose environment is known; the others' rows are left out)."""
    by_env: dict[str, list[dict]] = {}
    for row in screened:
        env_id = owners.get(row["artifact_id"]) if row["artifact_type"] == "scenario" else None
        if env_id is not None:
            by_env.setdefault(env_id, []).append(row)
    return by_env


def _scenario_source(check_source: str, screened: Iterable[dict]) -> str:
    """What an environment's scenario rows are made from: its checks (`check_source`) and the
    screening's verdicts on its scenarios. Screening compares tasks across environments, so
    an edit elsewhere can screen a scenario out, or let one back in: its rows are made again."""
    verdicts = sorted((row["artifact_id"], row["stage"], row["reason"]) for row in screened)
    return f"{check_source}:{sha256_text(codec.dumps_str(verdicts))}"


def _check_sources(
    check_source: Mapping[str, str], screened: Iterable[dict], owners: Mapping[str, str]
) -> dict[str, dict[str, str]]:
    """table → env id → the source of its rows in each of `CHECK_TABLES`."""
    by_env = _screened_by_env(screened, owners)
    return {
        "scenarios": {
            e: _scenario_source(src, by_env.get(e, ())) for e, src in check_source.items()
        },
        "checks": dict(check_source),
        "check_selftests": dict(check_source),
    }


def kept_check_parts(
    con: duckdb.DuckDBPyConnection, check_source: Mapping[str, str], screened: list[dict]
) -> dict[str, dict[str, Part]]:
    """table → env id → its rows of that table the warehouse keeps, for the environments whose
    rows of every one of `CHECK_TABLES` were made from their current sources (the three are
    read together: the scenarios gate checks each scenario against its self-test). The rows
    kept are those of the same checks artifact, so the warehouse's own scenarios say which
    environment each screened scenario is of."""
    ids = [row["artifact_id"] for row in screened if row["artifact_type"] == "scenario"]
    owners: dict[str, str] = {}
    if ids and _exists(con, "scenarios"):
        found = con.execute(
            "SELECT scenario_id, env_id FROM scenarios WHERE list_contains(?, scenario_id)", [ids]
        ).fetchall()
        owners = dict(found)
    sources = _check_sources(check_source, screened, owners)
    found_parts = {t: reusable(con, t, sources[t]) for t in CHECK_TABLES}
    whole = set.intersection(*(set(parts) for parts in found_parts.values()))
    return {t: {e: p for e, p in parts.items() if e in whole} for t, parts in found_parts.items()}


def made_check_parts(
    check_source: Mapping[str, str],
    screened: Iterable[dict],
    scenarios: pa.Table,
    quarantine: Mapping[str, list[dict]],
) -> dict[str, dict[str, Part]]:
    """table → env id → the part of each of `CHECK_TABLES` made in this publish for the
    environments of `check_source`, with the sources `kept_check_parts` compares next time.
    `scenarios`: the scenario rows made (they say whose the screened scenarios are);
    `quarantine`: env id → the checks stage's quarantine rows, kept with the checks part."""
    made = scenarios.select(["scenario_id", "env_id"]).to_pydict()
    owners = dict(zip(made["scenario_id"], made["env_id"], strict=True))
    sources = _check_sources(check_source, screened, owners)
    return {
        table: {
            e: Part(sources[table][e], list(quarantine[e]) if table == "checks" else [])
            for e in check_source
        }
        for table in CHECK_TABLES
    }


def _exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    found = con.execute(
        "SELECT 1 FROM duckdb_tables() WHERE table_name = ? AND schema_name = 'main'", [name]
    ).fetchone()
    return found is not None
