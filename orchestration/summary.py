"""The end-of-build summary: the funnel, top quarantine reasons, and where outputs are.

Counts come from the dbt marts, so the terminal, the report and the UI show one definition
of every metric.
"""

from __future__ import annotations

from pathlib import Path

import duckdb
from rich.console import Console
from rich.table import Table

from orchestration.build import BuildOutcome
from synthesis.export import warehouse


def _query(warehouse_path: Path, sql: str) -> list[tuple] | None:
    """Rows, or None when the table is missing (its stage did not publish)."""
    con = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        return con.execute(sql).fetchall()
    except duckdb.Error:
        return None
    finally:
        con.close()


def funnel(warehouse_path: Path) -> list[tuple] | None:
    return _query(
        warehouse_path, "SELECT stage, n_items, n_quarantined FROM mart_funnel ORDER BY stage_order"
    )


def top_quarantine_reasons(warehouse_path: Path, n: int = 5) -> list[tuple] | None:
    return _query(
        warehouse_path,
        "SELECT artifact_type, reason_kind, n_artifacts, "
        "example_reason FROM mart_quarantine_reasons "
        f"ORDER BY n_artifacts DESC LIMIT {int(n)}",
    )


def print_summary(console: Console, home: Path, outcome: BuildOutcome, seconds: float) -> None:
    warehouse_path = warehouse.warehouse_path(home)
    stages = funnel(warehouse_path) if warehouse_path.exists() else None
    if stages:
        table = Table(title="EnvFoundry build summary (mart_funnel)")
        table.add_column("stage")
        table.add_column("items", justify="right")
        table.add_column("quarantined", justify="right")
        for stage, items, quarantined in stages:
            table.add_row(stage, str(items), "" if quarantined is None else str(quarantined))
        shard_rows = _query(warehouse_path, "SELECT coalesce(sum(rows), 0) FROM shards")
        if shard_rows:
            table.add_row("shard rows", str(shard_rows[0][0]), "")
        console.print(table)
    else:
        console.print("[red]No funnel: the publish phase did not build mart_funnel.[/red]")
    reasons = top_quarantine_reasons(warehouse_path) if stages else None
    if reasons:
        console.print("[bold]Top quarantine reasons[/bold]")
        for artifact_type, reason_kind, n, example in reasons:
            console.print(f"  {n:>5}  {artifact_type:<12} {reason_kind}  (e.g. {example[:90]})")
    for label, error in outcome.failed.items():
        console.print(f"[red]FAILED[/red] {label}: {error}")
    console.print("[bold]Outputs[/bold]")
    for label, path in [
        ("warehouse", warehouse_path),
        ("shards manifest", home / "shards" / "manifest.json"),
        ("report", home / "reports" / "report.html"),
        ("artifacts", home / "artifacts"),
        ("build log (dbt, steps)", home / "logs" / "build.log"),
        ("dagster instance (make ui)", home / "dagster"),
    ]:
        console.print(f"  {label:<28} {path}{'' if path.exists() else '  (not written)'}")
    status = "[green]ok[/green]" if outcome.ok else "[red]with failures[/red]"
    console.print(
        f"Build finished {status} in {seconds:.1f}s ({len(outcome.run_ids)} Dagster runs)"
    )
