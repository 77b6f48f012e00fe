"""The end-of-build summary: the funnel, top quarantine reasons, the environments that
publish fewer than three tasks with their reasons, the asset checks that failed, what was
published (or why nothing was), and where outputs are.

Counts come from the dbt marts, so the terminal, the report and the UI show one definition
of every metric. When the publish kept the current dataset (a gate, the publish floor), the
funnel shown is this build's unpublished one, said so.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import datetime
from pathlib import Path

import duckdb
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from assets._staleness import NEW
from orchestration.build import BuildOutcome
from orchestration.fastrun import warm
from synthesis.export import datasets, losses, warehouse
from synthesis.llm.report import summary_lines

_query = losses.query_rows  # rows, or None where the table is missing or unreadable


def failed_gates(warehouse_path: Path) -> list[tuple[str, list[dict]]]:
    """(suite, failures) of the gates that failed, each failure naming its expectation,
    column and example values."""
    rows = _query(
        warehouse_path, "SELECT suite, failures_json FROM quality_gates WHERE NOT success"
    )
    return [(suite, json.loads(failures)) for suite, failures in rows or []]


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


def llm_rows(warehouse_path: Path, build_id: str) -> list[dict]:
    """This build's ledger rows (`llm_calls` is append-only across builds); without a build
    id (a caller that has none), the rows of the build that called last."""
    columns = ("stage", "status", "reason", "tokens_in", "tokens_out", "cost_usd", "created_at")
    which = (
        "?"
        if build_id
        else "(SELECT build_id FROM llm_calls ORDER BY created_at DESC NULLS LAST LIMIT 1)"
    )
    con = None
    try:
        con = duckdb.connect(str(warehouse_path), read_only=True)
        rows = con.execute(
            f"SELECT {', '.join(columns)}, call_id FROM llm_calls WHERE build_id = {which}",
            [build_id] if build_id else [],
        ).fetchall()
    except duckdb.Error:
        return []
    finally:
        if con is not None:
            con.close()
    return [dict(zip((*columns, "call_id"), row, strict=True)) for row in rows]


def print_llm_spend(console: Console, warehouse_path: Path, build_id: str) -> None:
    """Per LLM stage what it called and spent, and which stage stopped and why; nothing
    offline (no ledger rows)."""
    for line in summary_lines(llm_rows(warehouse_path, build_id)):
        style = "yellow" if " stopped " in line else None
        console.print(line, style=style, highlight=False, soft_wrap=True)


def thin_environments(warehouse_path: Path) -> list[tuple] | None:
    """(env id, status, reason) of every environment with a reason: quarantined, or
    publishing fewer than losses.THIN tasks (the warehouse asset says why)."""
    return _query(
        warehouse_path,
        "SELECT env_id, status, reason FROM environments WHERE reason IS NOT NULL ORDER BY env_id",
    )


def unpublished_dataset(home: Path, outcome: BuildOutcome) -> Path | None:
    """This build's dataset when its publish ran and did not make it current."""
    if not outcome.publish_run_id or "publish" not in outcome.failed:
        return None
    staged = home / datasets.DATASETS / outcome.publish_run_id
    current = datasets.current_dir(home)
    if not staged.is_dir() or (current is not None and staged.resolve() == current):
        return None
    return staged


def print_summary(
    console: Console,
    home: Path,
    outcome: BuildOutcome,
    seconds: float,
    started_at: datetime | None = None,
) -> None:
    """`started_at`: the build's wall-clock start (the report carries no time, this does)."""
    warehouse_path = warehouse.warehouse_path(home)
    title = "EnvFoundry build summary (mart_funnel)"
    unpublished = unpublished_dataset(home, outcome)
    if unpublished is not None and funnel(unpublished / datasets.PARTS["warehouse"]):
        # What this build made, not the dataset it left current.
        warehouse_path = unpublished / datasets.PARTS["warehouse"]
        title = f"{title} of this build's UNPUBLISHED dataset {unpublished}"
    stages = funnel(warehouse_path) if warehouse_path.exists() else None
    if stages:
        table = Table(title=title)
        table.add_column("stage")
        table.add_column("items", justify="right")
        table.add_column("quarantined", justify="right")
        for stage, items, quarantined in stages:
            table.add_row(stage, str(items), "" if quarantined is None else str(quarantined))
        shard_rows = _query(warehouse_path, "SELECT coalesce(sum(rows), 0) FROM shards")
        if shard_rows:
            table.add_row("shard rows", str(shard_rows[0][0]), "")
        console.print(table)
    elif warehouse_path.exists() and not datasets.opens(warehouse_path):
        console.print(
            f"[red]No funnel: the published warehouse {warehouse_path} cannot be read (damaged, "
            "or locked by another process); `envfoundry build` rebuilds it from the "
            "artifacts.[/red]",
            highlight=False,
        )
    else:
        console.print("[red]No funnel: the publish phase did not build mart_funnel.[/red]")
    reasons = top_quarantine_reasons(warehouse_path) if stages else None
    if reasons:
        console.print("[bold]Top quarantine reasons[/bold]")
        for artifact_type, reason_kind, n, example in reasons:
            console.print(f"  {n:>5}  {artifact_type:<12} {reason_kind}  (e.g. {example[:90]})")
    thin = thin_environments(warehouse_path) if stages else None
    if thin:
        console.print(
            f"[bold]Environments publishing fewer than {losses.THIN} tasks, and why[/bold] "
            "(environments.reason)"
        )
        for env_id, status, reason in thin:
            line = escape(f"  {env_id} ({status}): {reason}")
            console.print(line, highlight=False, soft_wrap=True)
    if warehouse_path.exists():
        print_llm_spend(console, warehouse_path, outcome.build_id)
    if outcome.failed_checks:
        console.print(f"[bold]Failed asset checks[/bold] ({len(outcome.failed_checks)})")
        for check in outcome.failed_checks:
            style = "yellow" if check.severity == "WARN" else "red"
            console.print(
                f"  [{style}]CHECK[/{style}] {escape(check.line())}",
                highlight=False,
                soft_wrap=True,
            )
    for label, error in outcome.failed.items():
        if label == "publish" and outcome.below_floor:
            console.print(
                f"[red]NOT PUBLISHED[/red] {escape(outcome.below_floor)}",
                highlight=False,
                soft_wrap=True,
            )
            continue
        console.print(f"[red]FAILED[/red] {escape(f'{label}: {error}')}", highlight=False)
    staged = home / datasets.DATASETS / outcome.publish_run_id if outcome.publish_run_id else None
    if staged is not None and staged.is_dir():
        for suite, failures in failed_gates(staged / datasets.PARTS["warehouse"]):
            for failure in failures[:3]:
                console.print(
                    f"[red]GATE[/red] {suite}: {failure.get('expectation')} on "
                    f"{failure.get('column')}: {failure.get('details', '')[:160]}",
                    highlight=False,
                )
    current = datasets.current_dir(home)
    if outcome.publish_run_id and "publish" not in outcome.failed and current is not None:
        tasks = _published_tasks(current)
        if tasks == 0:
            console.print(
                "[yellow]Published an empty dataset (0 tasks): the publish floor was 0 "
                "(--allow-empty or --min-published 0).[/yellow]",
                highlight=False,
            )
        elif tasks is not None:
            console.print(f"[bold]Published[/bold]: {tasks} tasks ({current})", highlight=False)
    if "publish" in outcome.failed:
        console.print(
            "[yellow]Nothing was published: the current dataset is still "
            f"{'the previous build' + chr(39) + 's' if current else 'none'}"
            f"{f' ({current})' if current else ''}.[/yellow]",
            highlight=False,
        )
    console.print("[bold]Outputs[/bold]")
    for label, path in [
        ("dataset (current)", current or home / datasets.CURRENT),
        ("warehouse", warehouse.warehouse_path(home)),
        ("shards manifest", home / "shards" / "manifest.json"),
        ("report", home / "reports" / "report.html"),
        ("artifacts", home / "artifacts"),
        ("build log (steps, dbt)", outcome.log_path or home / "logs" / "latest.log"),
        ("dagster instance (make ui)", home / "dagster"),
        *([("unpublished (this build's)", unpublished)] if unpublished is not None else []),
    ]:
        console.print(f"  {label:<28} {path}{'' if path.exists() else '  (not written)'}")
    print_reuse(console, outcome)
    if outcome.warm:
        servers = warm.read(home / "dagster")
        held = (
            f"; meanwhile they hold {warm.memory_held(servers) / 2**30:.1f} GB of memory"
            if servers is not None and servers.alive()
            else ""
        )
        console.print(
            f"[bold]Code server and run host[/bold]: {outcome.warm}{held}", highlight=False
        )
    status = "[green]ok[/green]" if outcome.ok else "[red]with failures[/red]"
    if outcome.below_floor:
        status = "[red]with nothing published: under the publish floor (exit 3)[/red]"
    when = "" if started_at is None else f", started {started_at.isoformat(' ', 'seconds')}"
    runs = f"{len(outcome.run_ids)} Dagster runs"
    if outcome.backfill_id:
        runs += f", the environments' as backfill {outcome.backfill_id}"
    console.print(f"Build finished {status} in {seconds:.1f}s ({runs}){when}")
    console.print(
        f"  see them: envfoundry ui --home {home}  (Runs; Jobs → environment_job → Runs"
        f"{'; Overview → Backfills' if outcome.backfill_id else ''})",
        highlight=False,
    )


def _published_tasks(dataset: Path) -> int | None:
    try:
        return datasets.published_tasks(dataset)
    except (OSError, ValueError, KeyError, TypeError):
        return None


def interrupted(home: Path, outcome: BuildOutcome, log_path: Path) -> str:
    """The one line a Ctrl-C gets: what the interrupted build kept, and how to go on.

    Every environment run that finished recorded its stages on the instance, so the next
    build reuses them; the published dataset changes only when a publish run completes."""
    current = datasets.current_dir(home)
    dataset = f"the published dataset is {current}" if current else "no dataset is published yet"
    to_make = len(outcome.remade)
    if not to_make and not outcome.reused:
        made = "before any environment was made"
    else:
        made = f"{len(outcome.finished)} of the {to_make} environments it had to make are made"
        made += " and kept" if outcome.finished else ""
        if outcome.reused:
            made += f" ({len(outcome.reused)} more were current)"
    published = "publishing was cut short" if outcome.publish else "nothing was published"
    return (
        f"Interrupted: {made}; {published}: {dataset}. The same command goes on from "
        f"there, reusing what is kept (details: {log_path})."
    )


def print_reuse(console: Console, outcome: BuildOutcome) -> None:
    """What the build made and why, and what it reused (orchestration/reuse.py). A home's
    first build made everything for the first time, and says so: not "made again"."""
    made, reused = outcome.remade, outcome.reused
    if not made and not reused:
        return
    new = sorted(e for e, why in made.items() if why == NEW)
    if made and len(new) == len(made) and not reused:
        console.print(
            f"[bold]Environments[/bold]: {len(made)} made, all new (this home had none of them)"
        )
    else:
        kinds = f" ({len(new)} new, {len(made) - len(new)} made again)" if new else ""
        # Why a reused one was reused, only beside some: after "0 reused" it read as if
        # nothing had changed.
        kept = (
            f"{len(reused)} reused (nothing they are made from changed: definition, settings, code)"
            if reused
            else "none reused"
        )
        console.print(f"[bold]Environments[/bold]: {len(made)} made{kinds}, {kept}")
        for why, count in Counter(made.values()).most_common():
            examples = sorted(e for e, w in made.items() if w == why)[:3]
            more = f" and {count - len(examples)} more" if count > len(examples) else ""
            label = "new: never made in this home" if why == NEW else why
            console.print(f"  {count:>5}  {label}: {', '.join(examples)}{more}", highlight=False)
    console.print(
        # Why the publish ran: "no dataset is published yet" alone read as if none was.
        f"[bold]Publish[/bold]: ran, because {outcome.publish}"
        if outcome.publish
        else "[bold]Publish[/bold]: reused the current dataset (nothing it is made from changed)",
        highlight=False,
    )
