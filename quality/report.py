"""The data-quality and dataset report: Markdown plus one standalone HTML file with SVG charts.

Numbers come from the dbt marts (where every metric is defined once) and the gate results;
this module only lays them out. The HTML needs no network: no CDN, no scripts, charts drawn
here as inline SVG. Output is deterministic (no timestamps: a build's time is in the
quality_report asset's metadata and the CLI summary) so identical builds give identical
reports; the header says what the build was made from (`Provenance`).
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import duckdb

from synthesis import codec
from synthesis.config import REPO_ROOT, LLMSettings
from synthesis.environments.topics import CATALOGUE_PATH
from synthesis.export.charts import Chart, generator_version, svg_bar_chart
from synthesis.export.warehouse import open_warehouse

TABLE_ROW_LIMIT = 40
TOP_REASONS = 10


@dataclass
class Table:
    columns: list[str]
    rows: list[list[Any]]
    total_rows: int | None = None
    caption: str | None = None  # a note shown just above the table (** and ` only)


@dataclass
class Section:
    title: str
    notes: list[str] = field(default_factory=list)
    charts: list[Chart] = field(default_factory=list)
    tables: list[Table] = field(default_factory=list)


@dataclass(frozen=True)
class Provenance:
    """What a build was made from, for the report's header: every value is fixed by the
    build's inputs (never a time or a host), so the report stays byte-identical per seed."""

    profile: str
    seed: int
    generator: str
    catalogue: str  # relative to the checkout when inside it; "none" for `--catalogue none`
    catalogue_shipped: bool
    foreign_sources: tuple[str, ...]
    llm: str  # "offline", or "model @ endpoint"
    inputs_sha256: str

    def lines(self) -> list[tuple[str, str, str]]:
        """(label, value, note): the value as it is, the note in plain words."""
        if self.catalogue == "none":
            catalogue_note = "only the foreign sources"
        else:
            catalogue_note = "shipped" if self.catalogue_shipped else ""
        return [
            ("profile", self.profile, ""),
            ("seed", str(self.seed), ""),
            ("generator", self.generator, ""),
            ("catalogue", self.catalogue, catalogue_note),
            ("foreign sources (--envs)", ", ".join(self.foreign_sources) or "none", ""),
            (
                "LLM",
                self.llm,
                "no endpoint: programmatic phrasing and policies only"
                if self.llm == "offline"
                else "",
            ),
            ("inputs sha256", self.inputs_sha256, ""),
        ]


def _catalogue_label(path: Path | None) -> str:
    if path is None:
        return "none"
    try:
        # Relative to the checkout, so the same build reads the same wherever it is cloned.
        return Path(path).resolve().relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(path)


def _llm_label(llm: LLMSettings) -> str:
    if not llm.enabled:
        return "offline"
    # Credentials never reach the report: no user:password, query or fragment of the URL.
    parts = urlsplit(llm.base_url or "")
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return f"{llm.model} @ {urlunsplit((parts.scheme, netloc, parts.path, '', ''))}"


def build_provenance(
    *,
    profile: str,
    seed: int,
    inputs_sha256: str,
    catalogue: Path | None,
    envs: Sequence[str] = (),
    llm: LLMSettings | None = None,
) -> Provenance:
    """A build's provenance from its settings; `llm` defaults to the endpoint the environment
    names (what the trajectories stage used)."""
    shipped = catalogue is not None and Path(catalogue).resolve() == CATALOGUE_PATH.resolve()
    return Provenance(
        profile=profile,
        seed=seed,
        generator=generator_version(),
        catalogue=_catalogue_label(catalogue),
        catalogue_shipped=shipped,
        foreign_sources=tuple(sorted(envs)),
        llm=_llm_label(llm if llm is not None else LLMSettings.from_env()),
        inputs_sha256=inputs_sha256,
    )


# --------------------------------------------------------------------------- reading


def _query(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]] | None:
    """Rows as dicts, or None when a table is missing (dbt has not built that mart yet)."""
    try:
        cur = con.execute(sql)
    except duckdb.CatalogException:
        return None
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _gate_rows(con: duckdb.DuckDBPyConnection, gate_results: Sequence[Any] | None) -> list[dict]:
    if gate_results is not None:
        return [
            {
                "suite": g.suite,
                "success": g.success,
                "evaluated": g.evaluated,
                "rows": g.rows,
                "failed": list(g.failed),
            }
            for g in gate_results
        ]
    stored = (
        _query(
            con,
            "SELECT suite, success, evaluated, rows, failures_json "
            "FROM quality_gates ORDER BY suite",
        )
        or []
    )
    return [
        {
            **{k: r[k] for k in ("suite", "success", "evaluated", "rows")},
            "failed": codec.loads(r["failures_json"]),
        }
        for r in stored
    ]


# --------------------------------------------------------------------------- sections


def _fmt(value: Any) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:,.3f}".rstrip("0").rstrip(".") if value == value else "NaN"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _missing(name: str) -> str:
    return f"`{name}` is not built yet: run `dbt build` over this warehouse."


def _table(rows: list[dict], columns: list[str], limit: int = TABLE_ROW_LIMIT) -> Table:
    return Table(
        columns=columns,
        rows=[[r.get(c) for c in columns] for r in rows[:limit]],
        total_rows=len(rows),
    )


def _overview(funnel: list[dict] | None) -> Section:
    section = Section("Overview")
    if funnel is None:
        section.notes.append(_missing("mart_funnel"))
        return section
    by_stage = {r["stage"]: r["n_items"] for r in funnel}
    for label, stage in [
        ("environments accepted", "environments_accepted"),
        ("scenarios published", "scenarios_published"),
        ("checks", "checks"),
        ("trajectories", "trajectories"),
    ]:
        section.notes.append(f"**{_fmt(by_stage.get(stage, 0))}** {label}")
    return section


# How a fan-out's two stages read in a sentence: (items, one item of the base).
_FAN_OUT_WORDS = {
    "environments_accepted": ("accepted environments", "accepted environment"),
    "scenarios_generated": ("generated scenarios", "generated scenario"),
    "scenarios_published": ("published scenarios", "published scenario"),
    "checks": ("checks", "check"),
    "trajectories": ("trajectories", "trajectory"),
}


def _fan_out_label(stage: str, base: str) -> str:
    items = _FAN_OUT_WORDS.get(stage, (stage, ""))[0]
    per = _FAN_OUT_WORDS.get(base, ("", base))[1]
    return f"{items} per {per}"


def _funnel(funnel: list[dict] | None) -> Section:
    section = Section("Funnel")
    if funnel is None:
        section.notes.append(_missing("mart_funnel"))
        return section
    section.notes += [
        "Each stage counts one unit: topic, environment, scenario, check or trajectory. "
        "**conversion** = items ÷ **out of** (the same unit at the stage before), so it never "
        "exceeds 100%; **cumulative** divides by the unit's first base; **quarantined** counts "
        "the items lost on the way into the stage, each once.",
        "A conversion of – starts a unit. Environments start their own: foreign classes "
        "(`--envs`) become environments without a topic or a spec. env_specs is out of the "
        "topics naming an archetype: a topic naming a `source` gets no spec.",
    ]
    section.charts.append(
        Chart(
            "Items per stage (each in its own unit)",
            [r["stage"] for r in funnel],
            [r["n_items"] for r in funnel],
        )
    )
    # A unit with a single stage (checks) has no conversion: it shows as a fan-out only.
    units = [r["unit"] for r in funnel]
    section.tables.append(
        Table(
            ["stage", "unit", "items", "quarantined", "out of", "conversion", "cumulative"],
            [
                [
                    r["stage"],
                    r["unit"],
                    r["n_items"],
                    r["n_quarantined"],
                    r.get("n_base"),
                    _pct(r["conversion"]),
                    _pct(r.get("cumulative_conversion")),
                ]
                for r in funnel
                if units.count(r["unit"]) > 1
            ],
        )
    )
    # .get: a mart built before these columns existed still renders (without fan-outs).
    fan_outs = [r for r in funnel if r.get("fan_out_of") is not None]
    if fan_outs:
        section.tables.append(
            Table(
                ["fan-out", "ratio"],
                [[_fan_out_label(r["stage"], r["fan_out_of"]), r["fan_out"]] for r in fan_outs],
                caption="**Fan-out**: ratios between different units, not conversions; they "
                "may exceed 1.",
            )
        )
    return section


def _env_quality(envs: list[dict] | None) -> Section:
    section = Section("Environment quality")
    if envs is None:
        section.notes.append(_missing("mart_env_quality"))
        return section
    published: dict[str, float] = {}
    for e in envs:
        published[e["archetype"]] = published.get(e["archetype"], 0) + e["n_published"]
    if published:
        section.charts.append(
            Chart(
                "Published scenarios per archetype",
                sorted(published),
                [published[a] for a in sorted(published)],
            )
        )
    accepted = sum(e["status"] == "accepted" for e in envs)
    section.notes.append(f"{accepted} of {len(envs)} environments accepted.")
    section.tables.append(
        _table(
            envs,
            [
                "env_id",
                "archetype",
                "source",
                "status",
                "audit_score",
                "n_tools",
                "n_scenarios",
                "n_published",
                "publish_rate",
                "mean_mutation_kill_rate",
                "agent_success_rate",
            ],
        )
    )
    return section


def _difficulty(tasks: list[dict] | None) -> Section:
    section = Section("Task difficulty")
    if tasks is None:
        section.notes.append(_missing("mart_task_difficulty"))
        return section
    published = [t for t in tasks if t["status"] == "published"]
    section.notes.append(f"{len(published)} published of {len(tasks)} generated scenarios.")
    lengths: dict[int, int] = {}
    for t in published:
        lengths[t["chain_length"]] = lengths.get(t["chain_length"], 0) + 1
    if lengths:
        keys = sorted(lengths)
        section.charts.append(
            Chart(
                "Published scenarios by gold-chain length",
                [f"{k} step{'s' if k != 1 else ''}" for k in keys],
                [lengths[k] for k in keys],
            )
        )
    tiers = ["easy", "medium", "hard", "expert"]
    final = {k: sum(t.get("final_tier") == k for t in published) for k in tiers}
    structural = {k: sum(t.get("structural_tier") == k for t in published) for k in tiers}
    if any(final.values()):
        section.charts.append(
            Chart(
                "Published scenarios by final tier (structure, moved by the guesser's attempts)",
                tiers,
                [final[k] for k in tiers],
            )
        )
        rated = [t for t in published if t.get("baseline_attempts")]
        attempts = sum(t["baseline_attempts"] for t in rated)
        solves = sum(t["baseline_solves"] for t in rated)
        section.notes.append(
            f"The guesser made {attempts} seeded attempts on {len(rated)} published scenarios "
            f"and solved {solves} ({solves / attempts:.0%})."
            if attempts
            else "The guesser made no attempts: final tiers are the structural tiers."
        )
        section.tables.append(
            Table(
                ["tier", "structural", "final", "guesser solve rate"],
                [
                    [
                        k,
                        structural[k],
                        final[k],
                        _mean(
                            t["baseline_solve_rate"]
                            for t in published
                            if t.get("final_tier") == k and t.get("baseline_solve_rate") is not None
                        ),
                    ]
                    for k in tiers
                ],
                caption="**Tiers**: published scenarios per structural and final tier, and the "
                "guesser's mean solve rate on the scenarios of each final tier.",
            )
        )
    bands: dict[str, int] = {}
    for t in published:
        bands[t["difficulty_band"]] = bands.get(t["difficulty_band"], 0) + 1
    order = ["easy", "medium", "hard", "unsolved", "unrated"]
    if bands:
        section.charts.append(
            Chart(
                "Published scenarios by difficulty band (agents under test only: control "
                "policies excluded)",
                [b for b in order if b in bands],
                [bands[b] for b in order if b in bands],
            )
        )
    return section


def _mean(values: Any) -> float | None:
    values = list(values)
    return round(sum(values) / len(values), 3) if values else None


def _kill_rates(rows: list[dict] | None) -> Section:
    section = Section("Mutation kill rates: state and reply tasks")
    if rows is None:
        section.notes.append(_missing("mart_kill_rates"))
        return section
    overall = {r["task_answer_kind"]: r for r in rows if r["archetype"] == "all"}
    kinds = [k for k in ("state", "reply", "all") if k in overall]
    if not kinds:
        section.notes.append("No published scenarios.")
        return section
    rated = [k for k in kinds if overall[k]["mean_mutation_kill_rate"] is not None]
    if rated:
        section.charts.append(
            Chart(
                "Mean mutation kill rate of published scenarios by answer kind",
                rated,
                [round(overall[k]["mean_mutation_kill_rate"], 3) for k in rated],
                value_format="{:.3f}",
            )
        )
    section.notes.append(
        "A state task's checks read only the final state; a reply task's also read the final "
        "reply. "
        + "; ".join(
            f"{k}: {overall[k]['n_published']} published, mean kill rate "
            f"{_fmt(overall[k]['mean_mutation_kill_rate'])}"
            for k in kinds
        )
        + "."
    )
    section.tables.append(
        _table(
            [r for r in rows if r["archetype"] != "all"],
            [
                "archetype",
                "task_answer_kind",
                "n_published",
                "n_mutants",
                "mean_mutation_kill_rate",
                "min_mutation_kill_rate",
            ],
        )
    )
    return section


def _quarantine(reasons: list[dict] | None) -> Section:
    section = Section("Quarantine: top reasons")
    if reasons is None:
        section.notes.append(_missing("mart_quarantine_reasons"))
        return section
    if not reasons:
        section.notes.append("Nothing was quarantined.")
        return section
    top = reasons[:TOP_REASONS]
    section.charts.append(
        Chart(
            "Quarantined artifacts by reason",
            [f"{r['artifact_type']}: {r['reason_kind']}" for r in top],
            [r["n_artifacts"] for r in top],
        )
    )
    section.tables.append(
        Table(
            ["artifact_type", "stage", "reason_kind", "artifacts", "examples"],
            [
                [
                    r["artifact_type"],
                    r["stage"],
                    r["reason_kind"],
                    r["n_artifacts"],
                    ", ".join(artifact_id for artifact_id, _ in _examples(r)),
                ]
                for r in top
            ],
            total_rows=len(reasons),
        )
    )
    section.tables.append(
        Table(
            ["artifact_type", "reason_kind", "artifact_id", "reason"],
            [
                [r["artifact_type"], r["reason_kind"], artifact_id, reason]
                for r in top
                for artifact_id, reason in _examples(r)
            ],
            caption="**Examples**: the two smallest artifact ids of each reason kind, with "
            "their full reason.",
        )
    )
    return section


def _examples(reason_row: dict) -> list[tuple[str, str]]:
    """(artifact_id, full reason) of a mart_quarantine_reasons row's examples."""
    return [
        (reason_row[id_key], reason_row[reason_key])
        for id_key, reason_key in [
            ("example_artifact_id", "example_reason"),
            ("example_2_artifact_id", "example_2_reason"),
        ]
        if reason_row.get(id_key) is not None
    ]


def _policies(bench: list[dict] | None, cost: list[dict] | None) -> Section:
    section = Section("Policy benchmark and token cost")
    if bench is None:
        section.notes.append(_missing("mart_policy_benchmark"))
    elif bench:
        section.tables.append(
            _table(
                bench,
                [
                    "policy",
                    "split",
                    "n_trajectories",
                    "success_rate",
                    "mean_reward",
                    "mean_steps",
                    "cost_usd",
                ],
            )
        )
    else:
        section.notes.append("No trajectories on published scenarios.")
    if cost is None:
        section.notes.append(_missing("mart_token_cost"))
    elif cost:
        section.tables.append(
            _table(
                cost,
                [
                    "stage",
                    "model",
                    "n_calls",
                    "cache_hit_rate",
                    "tokens_in",
                    "tokens_out",
                    "cost_usd",
                ],
            )
        )
    else:
        section.notes.append("No LLM calls: an offline, deterministic build.")
    return section


def _gates(gates: list[dict]) -> Section:
    section = Section("Quality gates (Great Expectations)")
    if not gates:
        section.notes.append("No gate results were recorded for this build.")
        return section
    failing = [g for g in gates if not g["success"]]
    section.notes.append(f"{len(gates) - len(failing)} of {len(gates)} suites passed.")
    section.tables.append(
        Table(
            ["suite", "result", "rows", "expectations", "failed"],
            [
                [
                    g["suite"],
                    "pass" if g["success"] else "FAIL",
                    g["rows"],
                    g["evaluated"],
                    len(g["failed"]),
                ]
                for g in gates
            ],
        )
    )
    failures = [
        [g["suite"], f["expectation"], f["column"], f["details"]]
        for g in failing
        for f in g["failed"]
    ]
    if failures:
        section.tables.append(Table(["suite", "expectation", "column", "details"], failures))
    return section


def build_sections(
    con: duckdb.DuckDBPyConnection, gate_results: Sequence[Any] | None = None
) -> list[Section]:
    funnel = _query(con, "SELECT * FROM mart_funnel ORDER BY stage_order")
    return [
        _overview(funnel),
        _funnel(funnel),
        _env_quality(_query(con, "SELECT * FROM mart_env_quality ORDER BY env_id")),
        _difficulty(_query(con, "SELECT * FROM mart_task_difficulty ORDER BY scenario_id")),
        _kill_rates(_query(con, "SELECT * FROM mart_kill_rates")),
        _quarantine(
            _query(
                con,
                "SELECT * FROM mart_quarantine_reasons "
                "ORDER BY n_artifacts DESC, artifact_type, stage, reason_kind",
            )
        ),
        _policies(
            _query(con, "SELECT * FROM mart_policy_benchmark ORDER BY policy, split"),
            _query(con, "SELECT * FROM mart_token_cost ORDER BY stage, model"),
        ),
        _gates(_gate_rows(con, gate_results)),
    ]


# --------------------------------------------------------------------------- Markdown

TITLE = "EnvFoundry data-quality and dataset report"


def _md_cell(value: Any) -> str:
    return _fmt(value).replace("|", "\\|").replace("\n", " ")


def _md_table(table: Table) -> list[str]:
    lines = [table.caption, ""] if table.caption else []
    lines += [
        "| " + " | ".join(table.columns) + " |",
        "|" + "|".join("---" for _ in table.columns) + "|",
    ]
    lines += ["| " + " | ".join(_md_cell(v) for v in row) + " |" for row in table.rows]
    if table.total_rows is not None and table.total_rows > len(table.rows):
        lines += ["", f"_{table.total_rows - len(table.rows)} more rows in the warehouse._"]
    return lines


def _md_chart(chart: Chart, width: int = 30) -> list[str]:
    # Markdown cannot hold the SVG portably; a text bar keeps the shape visible in a terminal.
    top = max(chart.values, default=0) or 1
    lines = [f"**{chart.title}**", "", "```"]
    pad = max((len(label) for label in chart.labels), default=0)
    for label, value in zip(chart.labels, chart.values, strict=True):
        bar = "█" * round(width * value / top)
        lines.append(f"{label:<{pad}}  {bar} {chart.value_format.format(value)}")
    return lines + ["```"]


NO_PROVENANCE = "Provenance: not recorded (this report was written outside a build)."


def _md_code(value: str) -> str:
    # A value holding a backtick cannot sit in a code span; it is shown as it is.
    return f"`{value}`" if "`" not in value else value


def _md_provenance(provenance: Provenance | None) -> list[str]:
    if provenance is None:
        return [NO_PROVENANCE, ""]
    items = [
        f"- {label}: {_md_code(value)}{f' ({note})' if note else ''}"
        for label, value, note in provenance.lines()
    ]
    return ["**Provenance**", "", *items, ""]


def render_markdown(
    sections: Iterable[Section], source: str, provenance: Provenance | None = None
) -> str:
    lines = [f"# {TITLE}", "", f"Warehouse: `{source}`", "", *_md_provenance(provenance)]
    for section in sections:
        lines += [f"## {section.title}", ""]
        for note in section.notes:
            lines += [note, ""]
        for chart in section.charts:
            lines += [*_md_chart(chart), ""]
        for table in section.tables:
            lines += [*_md_table(table), ""]
    return "\n".join(lines).rstrip() + "\n"


# --------------------------------------------------------------------------- HTML

_CSS = """
body{font:14px/1.45 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;margin:2rem auto;
max-width:1000px;color:#1f2328;padding:0 1rem}
h1{font-size:1.6rem}h2{font-size:1.2rem;border-bottom:1px solid #d0d7de;padding-bottom:.3rem;
margin-top:2rem}table{border-collapse:collapse;margin:.8rem 0;font-size:13px}
th,td{border:1px solid #d0d7de;padding:3px 8px;text-align:left}th{background:#f6f8fa}
td.num{text-align:right;font-variant-numeric:tabular-nums}.fail{color:#cf222e;font-weight:600}
.pass{color:#1a7f37}.note{margin:.4rem 0}figure{margin:1rem 0}figcaption{font-weight:600;
margin-bottom:.3rem}code{background:#f6f8fa;padding:0 3px}.scroll{overflow-x:auto}
table.provenance caption{text-align:left;font-weight:600;padding-bottom:.3rem}
table.provenance td code{word-break:break-all}
"""


def _html_cell(value: Any) -> str:
    text = html.escape(_fmt(value))
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    if value == "FAIL":
        return f'<td class="fail">{text}</td>'
    if value == "pass":
        return f'<td class="pass">{text}</td>'
    return f'<td class="num">{text}</td>' if numeric else f"<td>{text}</td>"


def _html_table(table: Table) -> str:
    head = "".join(f"<th>{html.escape(c)}</th>" for c in table.columns)
    body = "".join("<tr>" + "".join(_html_cell(v) for v in row) + "</tr>" for row in table.rows)
    more = ""
    if table.total_rows is not None and table.total_rows > len(table.rows):
        more = (
            f'<p class="note"><em>{table.total_rows - len(table.rows)} more rows in the '
            "warehouse.</em></p>"
        )
    caption = _html_note(table.caption) if table.caption else ""
    # Wide tables (per-environment quality) scroll inside the page instead of overflowing it.
    return (
        f'{caption}<div class="scroll"><table><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
        f"</table></div>{more}"
    )


def _html_note(note: str) -> str:
    # Notes use two Markdown constructs only: **bold** and `code`.
    text = html.escape(note)
    while "**" in text:
        text = text.replace("**", "<strong>", 1).replace("**", "</strong>", 1)
    while "`" in text:
        text = text.replace("`", "<code>", 1).replace("`", "</code>", 1)
    return f'<p class="note">{text}</p>'


def _html_provenance(provenance: Provenance | None) -> str:
    if provenance is None:
        return f'<p class="note">{html.escape(NO_PROVENANCE)}</p>'
    rows = "".join(
        f"<tr><th>{html.escape(label)}</th><td><code>{html.escape(value)}</code>"
        f"{f' ({html.escape(note)})' if note else ''}</td></tr>"
        for label, value, note in provenance.lines()
    )
    return f'<table class="provenance"><caption>Provenance</caption>{rows}</table>'


def render_html(
    sections: Iterable[Section], source: str, provenance: Provenance | None = None
) -> str:
    body = [
        f"<h1>{html.escape(TITLE)}</h1>",
        f'<p class="note">Warehouse: <code>{html.escape(source)}</code></p>',
        _html_provenance(provenance),
    ]
    for section in sections:
        body.append(f"<h2>{html.escape(section.title)}</h2>")
        body += [_html_note(n) for n in section.notes]
        body += [
            f"<figure><figcaption>{html.escape(c.title)}</figcaption>{svg_bar_chart(c)}</figure>"
            for c in section.charts
        ]
        body += [_html_table(t) for t in section.tables]
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        f"<title>{html.escape(TITLE)}</title><style>{_CSS}</style></head><body>\n"
        + "\n".join(body)
        + "\n</body></html>\n"
    )


# --------------------------------------------------------------------------- entry point


def write_report(
    warehouse_path: str | Path,
    out_dir: str | Path,
    gate_results: Sequence[Any] | None = None,
    provenance: Provenance | None = None,
) -> dict[str, Path]:
    """Write report.md and report.html into out_dir; returns {"markdown": …, "html": …}.

    Without `gate_results`, the gates recorded in the warehouse's quality_gates table are shown.
    `provenance` (see `build_provenance`) heads the report; without it the header says that
    none was recorded.
    """
    warehouse_path = Path(warehouse_path)
    if not warehouse_path.exists():
        raise FileNotFoundError(f"no warehouse at {warehouse_path}: build the pipeline first")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with open_warehouse(warehouse_path, read_only=True) as con:
        sections = build_sections(con, gate_results)
    source = warehouse_path.name
    paths = {"markdown": out_dir / "report.md", "html": out_dir / "report.html"}
    paths["markdown"].write_text(render_markdown(sections, source, provenance), encoding="utf-8")
    paths["html"].write_text(render_html(sections, source, provenance), encoding="utf-8")
    return paths
