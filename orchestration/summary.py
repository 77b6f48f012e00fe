"""The end-of-build summary: counts per stage, quarantine reasons, and where outputs are."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console
from rich.table import Table

from orchestration.build import BuildOutcome

_STAGE_COUNTS = [
    ("topics", "SELECT count(*) FROM topics"),
    ("env specs", "SELECT count(*) FROM env_specs"),
    ("environments accepted", "SELECT count(*) FROM environments WHERE status = 'accepted'"),
    ("environments quarantined", "SELECT count(*) FROM environments WHERE status = 'quarantined'"),
    ("tools", "SELECT count(*) FROM tools"),
    ("initial states", "SELECT count(*) FROM initial_states"),
    ("scenarios published", "SELECT count(*) FROM scenarios WHERE status = 'published'"),
    ("scenarios quarantined", "SELECT count(*) FROM scenarios WHERE status = 'quarantined'"),
    ("checks", "SELECT count(*) FROM checks"),
    (
        "check self-tests proven",
        "SELECT count(*) FROM check_selftests WHERE gold_pass AND noop_fail AND deterministic",
    ),
    ("trajectories", "SELECT count(*) FROM trajectories"),
    ("oracle successes", "SELECT count(*) FROM trajectories WHERE policy = 'oracle' AND success"),
    ("shard rows", "SELECT coalesce(sum(rows), 0) FROM shards"),
]


def stage_counts(warehouse_path: Path) -> dict[str, int]:
    import duckdb

    con = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        counts = {}
        for label, sql in _STAGE_COUNTS:
            try:
                counts[label] = int(con.execute(sql).fetchone()[0])
            except duckdb.Error:
                counts[label] = -1  # table missing: its stage did not publish
        return counts
    finally:
        con.close()


def top_quarantine_reasons(warehouse_path: Path, n: int = 5) -> list[tuple[str, str, int]]:
    import duckdb

    con = duckdb.connect(str(warehouse_path), read_only=True)
    try:
        return con.execute(
            "SELECT artifact_type, reason_kind, count(*) AS n FROM quarantine "
            "GROUP BY 1, 2 ORDER BY n DESC, 1, 2 LIMIT ?",
            [n],
        ).fetchall()
    except duckdb.Error:
        return []
    finally:
        con.close()


def print_summary(console: Console, home: Path, outcome: BuildOutcome, seconds: float) -> None:
    warehouse_path = home / "warehouse.duckdb"
    table = Table(title="EnvFoundry build summary", show_lines=False)
    table.add_column("stage")
    table.add_column("count", justify="right")
    if warehouse_path.exists():
        for label, count in stage_counts(warehouse_path).items():
            table.add_row(label, "missing" if count < 0 else str(count))
    console.print(table)
    reasons = top_quarantine_reasons(warehouse_path) if warehouse_path.exists() else []
    if reasons:
        console.print("[bold]Top quarantine reasons[/bold]")
        for artifact_type, reason, n in reasons:
            console.print(f"  {n:>5}  {artifact_type:<12} {reason}")
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
