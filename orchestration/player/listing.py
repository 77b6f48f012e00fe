"""`envfoundry env list`: what a build published, to choose what to run, play or train on.

The environments of `--home`'s current dataset (archetype, kind, status, split, tools, and
how many scenarios each published), or with `--scenarios` or `--env ENV_ID` their scenarios
(kind, status, split, chain length, the request); either filtered by `--kind`, `--status` and
`--split`. A table at a terminal, one JSON object per line with `--json` (scripts; the
scenario lines carry the whole request). The ids it prints are what `env run`, `env shell`
and `env serve` take (`--env ENV_ID --scenario SCENARIO_ID`), and what an SFT row's and an
RL task's `scenario_id` names.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from orchestration.player.options import Stop, report_stop, usage
from orchestration.player.targets import Published
from synthesis import codec

PROG = "envfoundry env list"
FILTERS = {"kind": "kinds", "status": "statuses", "split": "splits"}  # column: plural
TASK_WIDTH = 72  # characters of a request a table shows (--json has all of it)

_ENVIRONMENTS = """
SELECT e.env_id, e.archetype, e.kind, e.status, e.split, e.n_tools AS tools,
       count(s.scenario_id) FILTER (WHERE s.status = 'published') AS scenarios,
       coalesce(e.reason, '') AS reason
FROM environments e LEFT JOIN scenarios s USING (env_id)
GROUP BY ALL ORDER BY e.env_id
"""
_SCENARIOS = """
SELECT scenario_id, env_id, kind, status, split, chain_length, task_text AS task,
       coalesce(reason, '') AS reason
FROM scenarios ORDER BY env_id, scenario_id
"""


def env_list_main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="List the environments a build published, or their scenarios, to find "
        "the ids `env run`, `env shell` and `env serve` take.",
    )
    parser.add_argument(
        "--home", type=Path, help="the build's home (default: $ENVFOUNDRY_HOME or ./var)"
    )
    parser.add_argument(
        "--env",
        dest="env_ids",
        action="append",
        default=[],
        metavar="ENV_ID",
        help="list this environment's scenarios (repeatable)",
    )
    parser.add_argument(
        "--scenarios", action="store_true", help="list scenarios (of every environment)"
    )
    parser.add_argument("--kind", help="only rows of this kind (scenarios: feasible, ...)")
    parser.add_argument("--status", help="only rows with this status (accepted, published, ...)")
    parser.add_argument("--split", help="only rows of this split (train, test)")
    parser.add_argument("--json", action="store_true", help="one JSON object per line")
    options = parser.parse_args(argv)
    from synthesis.config import envfoundry_home

    home = (options.home or envfoundry_home()).resolve()
    try:
        with Published(home) as published:
            what = "scenarios" if options.scenarios or options.env_ids else "environments"
            rows = _rows(published, what, options)
    except Stop as stop:
        return report_stop(PROG, stop)
    if options.json:
        for row in rows:
            sys.stdout.write(codec.dumps_str(row) + "\n")
        return 0
    # Piped, a table keeps its width: ids are what a reader copies, never cut.
    asked = [f"{c} {getattr(options, c)}" for c in FILTERS if getattr(options, c) is not None]
    title = f"{len(rows)} {what[:-1] if len(rows) == 1 else what}{''.join(', ' + a for a in asked)}"
    console = Console(width=None if sys.stdout.isatty() else 240)
    _print_table(console, home, f"{title}: the dataset published in {home}", what, rows)
    return 0


def _rows(published: Published, what: str, options: argparse.Namespace) -> list[dict[str, Any]]:
    for env_id in options.env_ids:
        published.environment(env_id)  # an unknown id is a usage error naming the known ones
    rows = published.rows(_SCENARIOS if what == "scenarios" else _ENVIRONMENTS)
    if options.env_ids:
        rows = [row for row in rows if row["env_id"] in options.env_ids]
    for column, plural in FILTERS.items():
        wanted = getattr(options, column)
        if wanted is None:
            continue
        present = sorted({str(row[column]) for row in rows})
        if wanted not in present:
            # A typo and an empty selection look alike: say which values there are.
            raise usage(
                f"no {what} with {column} {wanted!r} in {published.home}; "
                f"{plural} there: {', '.join(present) or 'none'}"
            )
        rows = [row for row in rows if row[column] == wanted]
    return rows


def _print_table(
    console: Console, home: Path, title: str, what: str, rows: list[dict[str, Any]]
) -> None:
    table = Table(title=title, title_justify="left")
    columns = [c for c in rows[0] if c != "reason"] if rows else []
    for column in columns:
        numeric = column in ("tools", "scenarios", "chain_length")
        identifier = column in ("env_id", "scenario_id")
        table.add_column(
            column,
            justify="right" if numeric else "left",
            no_wrap=True,
            # Ids are what a reader copies: other columns give way first.
            min_width=max(len(str(row[column])) for row in rows) if identifier else None,
            max_width=TASK_WIDTH if column == "task" else None,
            overflow="ellipsis",
        )
    quarantined = any(row["reason"] for row in rows)
    if quarantined:
        table.add_column("reason", max_width=48, overflow="ellipsis", no_wrap=True)
    for row in rows:
        cells = [str(row[c]) for c in columns] + ([row["reason"]] if quarantined else [])
        table.add_row(*cells)
    console.print(table, soft_wrap=True)
    example = next((r for r in rows if r["status"] in ("accepted", "published")), None)
    if example is None:
        return
    scenario = f" --scenario {example['scenario_id']}" if what == "scenarios" else ""
    console.print(
        f"play one: envfoundry env shell --home {home} --env {example['env_id']}{scenario}",
        highlight=False,
        soft_wrap=True,
    )
