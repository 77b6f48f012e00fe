"""The leaderboard of a home's current dataset: every model evaluated on it, beside the
build's own policies, as a plain-text table and a page that stands alone
(`HOME/evals/leaderboard.html`: the tables and an inline SVG bar chart, no script, no file
beside it).

* **Models** come from the eval marts (`mart_eval_leaderboard`, `mart_eval_benchmark` in
  `HOME/evals/evals.duckdb`, built by marts.py), for the dataset the home's `current` link
  names (its manifest's sha256, as the episodes record it).
* **References** are read, read-only, from that dataset's warehouse, on the published tasks
  of the same split(s) the models played: each policy of the build's `trajectories` (the
  oracle replaying the gold calls, the baselines noop, refuse_always and wrong_record, the
  guesser's seeded attempts, an LLM agent where the build had an endpoint) and each shortcut
  the self-test played on the task (`check_selftests.shortcut_rewards_json`; success: reward
  1). A shortcut earns 0 on every published task by construction (docs/reward.md).

Nothing here writes anything but the page; the same marts draw the same bytes.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.evaluation.dataset import DatasetRef, EvalError, current_dataset
from synthesis.evaluation.store import EVALS_DIR, evals_path, read_evals

LEADERBOARD_FILE = "leaderboard.html"
# The build's control policies first, in this order; any other policy of the build (an LLM
# agent) after them, by name.
POLICY_ORDER = ("oracle", "guesser", "wrong_record", "refuse_always", "noop")
SHORTCUT_PREFIX = "shortcut: "
# Bar colours: the overall bar, then one per archetype (cycled).
OVERALL_COLOUR = "#333333"
PALETTE = (
    "#4c78a8",
    "#f58518",
    "#54a24b",
    "#e45756",
    "#72b7b2",
    "#eeca3b",
    "#b279a2",
    "#ff9da6",
    "#9d755d",
    "#bab0ac",
)


@dataclass
class Row:
    """One line of the leaderboard: a model (`source` "model"), a build policy ("policy")
    or a shortcut ("shortcut"); `by_archetype`: archetype → (successes, episodes)."""

    name: str
    source: str
    n_tasks: int
    n_episodes: int
    n_successes: int
    success_rate: float
    mean_reward: float
    by_archetype: dict[str, tuple[int, int]] = field(default_factory=dict)
    rank: int | None = None
    splits: str | None = None
    max_k: int | None = None
    pass_hat_k: float | None = None
    pass_at_k: float | None = None
    n_errors: int = 0
    cost_usd: float | None = None
    cost_per_success_usd: float | None = None
    # A model's success rate on the synthesized and on the foreign environments (None where
    # it played none): in-distribution against transfer (mart_eval_transfer).
    synthesized_rate: float | None = None
    foreign_rate: float | None = None


@dataclass
class Leaderboard:
    dataset_id: str
    manifest_sha256: str
    splits: tuple[str, ...]
    published_tasks: int  # published tasks of those splits
    models: list[Row]
    references: list[Row]
    archetypes: list[str]
    notes: list[str] = field(default_factory=list)

    @property
    def transfer(self) -> list[Row]:
        """The models that played foreign environments (classes brought with --envs)."""
        return [r for r in self.models if r.foreign_rate is not None]


def dataset_key(dataset: DatasetRef) -> str:
    """How episodes name a dataset (runner.py): its manifest's sha256, or its folder."""
    return dataset.manifest_sha256 or f"dataset:{dataset.dataset_id}"


def leaderboard_path(home: Path) -> Path:
    return Path(home) / EVALS_DIR / LEADERBOARD_FILE


def _rows(con: Any, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
    cursor = con.execute(sql, list(params))
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def read_leaderboard(home: Path) -> Leaderboard:
    """The leaderboard of the home's current dataset, from the eval marts and the dataset's
    warehouse (both opened read-only). EvalError when there is no dataset or no marts."""
    home = Path(home)
    dataset = current_dataset(home)
    key = dataset_key(dataset)
    path = evals_path(home)
    if not path.is_file():
        raise EvalError(f"no evaluation recorded in {home}: run `envfoundry eval --model NAME`")
    with read_evals(path) as con:
        found = {
            name
            for (name,) in con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_name IN "
                "('mart_eval_leaderboard', 'mart_eval_benchmark')"
            ).fetchall()
        }
        if len(found) < 2:
            raise EvalError(
                f"no eval marts in {path}: build them with `envfoundry eval --leaderboard "
                f"--home {home}`"
            )
        boards = _rows(
            con,
            "SELECT * FROM mart_eval_leaderboard WHERE manifest_sha256 = ? ORDER BY rank, model",
            [key],
        )
        slices = _rows(
            con,
            "SELECT model, archetype, split, sum(n_successes) AS s, sum(n_episodes) AS n "
            "FROM mart_eval_benchmark WHERE manifest_sha256 = ? GROUP BY ALL "
            "ORDER BY model, archetype, split",
            [key],
        )
    by_archetype: dict[str, dict[str, list[int]]] = {}
    splits_played: set[str] = set()
    for r in slices:
        counts = by_archetype.setdefault(r["model"], {}).setdefault(r["archetype"], [0, 0])
        counts[0] += int(r["s"])
        counts[1] += int(r["n"])
        splits_played.add(r["split"])
    models = [
        Row(
            name=b["model"],
            source="model",
            n_tasks=int(b["n_tasks"]),
            n_episodes=int(b["n_episodes"]),
            n_successes=int(b["n_successes"]),
            success_rate=float(b["success_rate"]),
            mean_reward=float(b["mean_reward"]),
            by_archetype={a: (s, n) for a, (s, n) in by_archetype.get(b["model"], {}).items()},
            rank=int(b["rank"]),
            splits=b["splits"],
            max_k=int(b["max_k"]),
            pass_hat_k=float(b["pass_hat_max_k"]),
            pass_at_k=float(b["pass_at_max_k"]),
            n_errors=int(b["n_errors"]),
            cost_usd=float(b["cost_usd"] or 0.0),
            cost_per_success_usd=None
            if b["cost_per_success_usd"] is None
            else float(b["cost_per_success_usd"]),
            synthesized_rate=_float(b.get("synthesized_success_rate")),
            foreign_rate=_float(b.get("foreign_success_rate")),
        )
        for b in boards
    ]
    splits = tuple(sorted(splits_played))
    references, published = read_references(dataset, splits or None)
    if not splits:
        splits = tuple(sorted({s for s in published}))
    archetypes = sorted({a for row in models + references for a in row.by_archetype})
    n_published = sum(published.values())
    notes = []
    split_sets = {row.splits for row in models}
    if len(split_sets) > 1:
        notes.append(
            "the models were evaluated on different splits ("
            + "; ".join(f"{row.name}: {row.splits}" for row in models)
            + "): compare rows of the same split"
        )
    for row in models:
        played = sum(published.get(s, 0) for s in (row.splits or "").split("+"))
        if row.n_tasks < played:
            notes.append(
                f"{row.name} played {row.n_tasks} of the {played} published tasks of its "
                "split(s) (--limit or --tasks): the references are over all of them"
            )
    return Leaderboard(
        dataset_id=dataset.dataset_id,
        manifest_sha256=key,
        splits=splits,
        published_tasks=n_published,
        models=models,
        references=references,
        archetypes=archetypes,
        notes=notes,
    )


def read_references(
    dataset: DatasetRef, splits: Iterable[str] | None
) -> tuple[list[Row], dict[str, int]]:
    """The build's policies and the self-test's shortcuts on the published tasks of `splits`
    (None: every split), from the dataset's warehouse opened read-only; and the number of
    published tasks per split."""
    import duckdb

    try:
        con = duckdb.connect(str(dataset.warehouse), read_only=True)
    except duckdb.Error as exc:
        raise EvalError(f"cannot open the published warehouse {dataset.warehouse}: {exc}") from None
    try:
        tasks = _rows(
            con,
            "SELECT s.scenario_id, s.split, e.archetype FROM scenarios s "
            "JOIN environments e ON e.env_id = s.env_id WHERE s.status = 'published'",
        )
        wanted = set(splits) if splits is not None else {t["split"] for t in tasks}
        archetype = {t["scenario_id"]: t["archetype"] for t in tasks if t["split"] in wanted}
        published: dict[str, int] = {}
        for t in tasks:
            if t["split"] in wanted:
                published[t["split"]] = published.get(t["split"], 0) + 1
        episodes = _rows(
            con,
            "SELECT t.policy, t.scenario_id, t.success, t.reward FROM trajectories t "
            "JOIN scenarios s ON s.scenario_id = t.scenario_id WHERE s.status = 'published' "
            "ORDER BY t.policy, t.scenario_id",
        )
        tables = {
            n for (n,) in con.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }
        selftests = (
            _rows(
                con,
                "SELECT c.scenario_id, c.shortcut_rewards_json FROM check_selftests c "
                "JOIN scenarios s ON s.scenario_id = c.scenario_id "
                "WHERE s.status = 'published' ORDER BY c.scenario_id",
            )
            if "check_selftests" in tables
            else []
        )
    finally:
        con.close()
    by_policy: dict[str, list[tuple[str, bool, float]]] = {}
    for e in episodes:
        if e["scenario_id"] in archetype:
            by_policy.setdefault(e["policy"], []).append(
                (e["scenario_id"], bool(e["success"]), float(e["reward"]))
            )
    by_shortcut: dict[str, list[tuple[str, bool, float]]] = {}
    for t in selftests:
        if t["scenario_id"] not in archetype or not t["shortcut_rewards_json"]:
            continue
        for name, reward in sorted(codec.loads(t["shortcut_rewards_json"]).items()):
            by_shortcut.setdefault(name, []).append(
                (t["scenario_id"], float(reward) >= 1.0, float(reward))
            )
    order = {name: i for i, name in enumerate(POLICY_ORDER)}
    rows = [
        _reference(name, "policy", played, archetype)
        for name, played in sorted(
            by_policy.items(), key=lambda item: (order.get(item[0], len(order)), item[0])
        )
    ]
    rows += [
        _reference(SHORTCUT_PREFIX + name, "shortcut", played, archetype)
        for name, played in sorted(by_shortcut.items())
    ]
    return rows, dict(sorted(published.items()))


def _reference(
    name: str, source: str, played: Sequence[tuple[str, bool, float]], archetype: Mapping
) -> Row:
    by_archetype: dict[str, list[int]] = {}
    for scenario_id, success, _ in played:
        counts = by_archetype.setdefault(archetype[scenario_id], [0, 0])
        counts[0] += int(success)
        counts[1] += 1
    n = len(played)
    successes = sum(1 for _, s, _ in played if s)
    return Row(
        name=name,
        source=source,
        n_tasks=len({scenario_id for scenario_id, _, _ in played}),
        n_episodes=n,
        n_successes=successes,
        success_rate=successes / n if n else 0.0,
        mean_reward=sum(r for _, _, r in played) / n if n else 0.0,
        by_archetype={a: (s, m) for a, (s, m) in sorted(by_archetype.items())},
    )


# --------------------------------------------------------------------------- text


def _float(value: Any) -> float | None:
    return None if value is None else float(value)


def _gap(row: Row) -> str:
    """The foreign success rate's difference to the synthesized one, in points."""
    if row.foreign_rate is None or row.synthesized_rate is None:
        return "–"
    return f"{100 * (row.foreign_rate - row.synthesized_rate):+.1f} points"


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def _money(value: float | None) -> str:
    return "–" if value is None else f"{value:.4f}"


def format_leaderboard(board: Leaderboard, path: Path | None = None) -> list[str]:
    """The leaderboard as lines of text for the console."""
    splits = "+".join(board.splits) or "none"
    head = (
        f"Leaderboard of dataset {board.dataset_id} (manifest {board.manifest_sha256[:12]}), "
        f"split {splits}: {board.published_tasks} published task(s)"
    )
    lines = [head + (f"; page: {path}" if path else "")]
    width = max([len("model"), *(len(r.name) for r in board.models + board.references)])
    lines.append(
        f"  {'rank':>4}  {'model':<{width}}  {'tasks':>5}  {'episodes':>8}  {'success':>7}  "
        f"{'reward':>6}  {'pass^k (k)':>10}  {'pass@k':>6}  {'cost USD':>9}  {'per success':>11}"
    )
    if not board.models:
        lines.append("  no model evaluated on this dataset yet")
    for r in board.models:
        pass_hat = f"{r.pass_hat_k:.3f} ({r.max_k})" if r.pass_hat_k is not None else "–"
        pass_at = f"{r.pass_at_k:.3f}" if r.pass_at_k is not None else "–"
        lines.append(
            f"  {r.rank:>4}  {r.name:<{width}}  {r.n_tasks:>5}  {r.n_episodes:>8}  "
            f"{_pct(r.success_rate):>7}  {r.mean_reward:>6.3f}  {pass_hat:>10}  {pass_at:>6}  "
            f"{_money(r.cost_usd):>9}  {_money(r.cost_per_success_usd):>11}"
        )
    if board.references:
        lines.append(
            "  references (the build's own policies and the self-test's shortcuts, same split):"
        )
        for r in board.references:
            lines.append(
                f"  {'':>4}  {r.name:<{width}}  {r.n_tasks:>5}  {r.n_episodes:>8}  "
                f"{_pct(r.success_rate):>7}  {r.mean_reward:>6.3f}"
            )
    if board.transfer:
        lines.append(
            "  transfer (success rate on the environments the build synthesized and on the "
            "foreign ones brought with --envs):"
        )
        lines.append(f"  {'':>4}  {'':<{width}}  {'synth.':>7}  {'foreign':>7}  gap")
        for r in board.transfer:
            lines.append(
                f"  {'':>4}  {r.name:<{width}}  {_pct(r.synthesized_rate):>7}  "
                f"{_pct(r.foreign_rate):>7}  {_gap(r)}"
            )
    lines += [f"  note: {note}" for note in board.notes]
    return lines


# --------------------------------------------------------------------------- the page


def svg_grouped_bars(
    groups: Sequence[tuple[str, float, Mapping[str, tuple[int, int]], bool]],
    archetypes: Sequence[str],
    *,
    title: str = "Success rate per model, overall and by archetype",
) -> str:
    """A vertical bar chart as inline SVG: per group (a model or a policy: its name, its
    overall success rate, archetype → (successes, episodes), whether it is a reference) a
    dark bar for the overall rate and one bar per archetype it played, 0-100%, with a legend
    and a tooltip per bar; the references after a dashed line, their names in grey."""
    bar, inner, gap = 10, 2, 26
    left, right, top, plot_h = 44, 16, 22, 220
    legend_rows = (len(archetypes) + 1 + 5) // 6  # six entries a row
    top += 16 * legend_rows
    per_group = (len(archetypes) + 1) * (bar + inner) + gap
    label_h = 44
    width = max(left + right + per_group * len(groups), 480)
    height = top + plot_h + label_h
    colour = {a: PALETTE[i % len(PALETTE)] for i, a in enumerate(archetypes)}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" aria-label="{html.escape(title)}" '
        'font-size="11" font-family="system-ui,sans-serif">'
    ]
    # Legend.
    entries = [("all tasks", OVERALL_COLOUR)] + [(a, colour[a]) for a in archetypes]
    for i, (name, fill) in enumerate(entries):
        x, y = left + (i % 6) * 150, 6 + (i // 6) * 16
        parts.append(
            f'<rect x="{x}" y="{y}" width="10" height="10" fill="{fill}"/>'
            f'<text x="{x + 14}" y="{y + 9}">{html.escape(name)}</text>'
        )
    # Axis and grid.
    for tick in (0, 25, 50, 75, 100):
        y = top + plot_h - plot_h * tick / 100
        parts.append(
            f'<line x1="{left}" y1="{y:.1f}" x2="{width - right}" y2="{y:.1f}" '
            f'stroke="#dddddd"/><text x="{left - 4}" y="{y + 4:.1f}" '
            f'text-anchor="end">{tick}%</text>'
        )

    def rect(x: float, rate: float, fill: str, tip: str) -> str:
        h = plot_h * max(0.0, min(1.0, rate))
        y = top + plot_h - h
        return (
            f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar}" height="{max(h, 0.5):.1f}" '
            f'fill="{fill}"><title>{html.escape(tip)}</title></rect>'
        )

    for g, (name, overall, by_archetype, reference) in enumerate(groups):
        x0 = left + gap / 2 + g * per_group
        if reference and (g == 0 or not groups[g - 1][3]):
            x = x0 - gap / 2
            parts.append(
                f'<line x1="{x:.1f}" y1="{top - 4}" x2="{x:.1f}" y2="{top + plot_h + 36}" '
                'stroke="#999999" stroke-dasharray="4 3"/>'
                f'<text x="{x + 4:.1f}" y="{top - 6}" fill="#777777">the build\'s policies '
                "(references)</text>"
            )
        parts.append(rect(x0, overall, OVERALL_COLOUR, f"{name}: {100 * overall:.1f}% overall"))
        for i, a in enumerate(archetypes):
            if a not in by_archetype:
                continue
            s, n = by_archetype[a]
            rate = s / n if n else 0.0
            x = x0 + (i + 1) * (bar + inner)
            parts.append(rect(x, rate, colour[a], f"{name} · {a}: {100 * rate:.1f}% ({s}/{n})"))
        centre = x0 + (per_group - gap) / 2
        max_chars = max(4, int(per_group / 6.2))
        shown = name if len(name) <= max_chars else name[: max_chars - 1] + "…"
        ink = ' fill="#777777"' if reference else ""
        parts.append(
            f'<text x="{centre:.1f}" y="{top + plot_h + 16}" text-anchor="middle"{ink}>'
            f"{html.escape(shown)}<title>{html.escape(name)}</title></text>"
            f'<text x="{centre:.1f}" y="{top + plot_h + 31}" text-anchor="middle" '
            f'fill="#555555">{100 * overall:.1f}%</text>'
        )
    parts.append("</svg>")
    return "".join(parts)


_STYLE = (
    "body{font-family:system-ui,sans-serif;margin:2em;max-width:1200px;color:#222}"
    "table{border-collapse:collapse;margin:0.5em 0 1.5em}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "th:first-child,td:first-child,td.name{text-align:left}"
    "tr.reference td{color:#555}figure{margin:0;overflow-x:auto}"
    "code{background:#f3f3f3;padding:0 3px}"
)


def _cells(values: Iterable[str], tag: str = "td") -> str:
    return "".join(f"<{tag}>{v}</{tag}>" for v in values)


def render_html(board: Leaderboard) -> str:
    """The leaderboard as one HTML page with its chart inline (deterministic bytes)."""
    e = html.escape
    splits = "+".join(board.splits) or "none"
    plotted = board.models + [r for r in board.references if r.source == "policy"]
    chart = svg_grouped_bars(
        [(r.name, r.success_rate, r.by_archetype, r.source != "model") for r in plotted],
        board.archetypes,
    )
    out = [
        "<!doctype html>",
        '<html lang="en"><head><meta charset="utf-8">',
        f"<title>EnvFoundry leaderboard: dataset {e(board.dataset_id)}</title>",
        f"<style>{_STYLE}</style></head><body>",
        "<h1>EnvFoundry leaderboard</h1>",
        f"<p>Dataset <code>{e(board.dataset_id)}</code> (manifest "
        f"<code>{e(board.manifest_sha256)}</code>), split <b>{e(splits)}</b>: "
        f"{board.published_tasks} published task(s). Models: every one evaluated on this "
        "dataset (<code>envfoundry eval</code>; the marts <code>mart_eval_leaderboard</code> "
        "and <code>mart_eval_benchmark</code> of <code>evals/evals.duckdb</code>, the latest "
        "episode of each attempt). References: the build's own policies and the self-test's "
        "shortcuts on the published tasks of the same split, read from the dataset's "
        "warehouse.</p>",
        f"<figure>{chart}<figcaption>Success rate per model and build policy (grey rows "
        "below), overall (dark bar) and per archetype. Shortcuts are in the table only: each "
        "earns 0 on a published task by construction.</figcaption></figure>",
        "<h2>Models</h2>",
        "<table><tr>"
        + _cells(
            [
                "rank",
                "model",
                "split",
                "tasks",
                "episodes",
                "success rate",
                "mean reward",
                "k",
                "pass^k",
                "pass@k",
                "LLM errors",
                "cost USD",
                "cost per success",
            ],
            "th",
        )
        + "</tr>",
    ]
    if not board.models:
        out.append('<tr><td colspan="13">no model evaluated on this dataset yet</td></tr>')
    for r in board.models:
        out.append(
            "<tr>"
            + _cells(
                [
                    str(r.rank),
                    f'<span class="name">{e(r.name)}</span>',
                    e(r.splits or ""),
                    str(r.n_tasks),
                    str(r.n_episodes),
                    _pct(r.success_rate),
                    f"{r.mean_reward:.3f}",
                    str(r.max_k),
                    "–" if r.pass_hat_k is None else f"{r.pass_hat_k:.3f}",
                    "–" if r.pass_at_k is None else f"{r.pass_at_k:.3f}",
                    str(r.n_errors),
                    _money(r.cost_usd),
                    _money(r.cost_per_success_usd),
                ]
            )
            + "</tr>"
        )
    out += [
        "</table>",
        "<h2>References</h2>",
        "<table><tr>"
        + _cells(["policy or shortcut", "kind", "tasks", "episodes", "success rate"], "th")
        + _cells(["mean reward"], "th")
        + "</tr>",
    ]
    for r in board.references:
        out.append(
            '<tr class="reference">'
            + _cells(
                [
                    e(r.name),
                    r.source,
                    str(r.n_tasks),
                    str(r.n_episodes),
                    _pct(r.success_rate),
                    f"{r.mean_reward:.3f}",
                ]
            )
            + "</tr>"
        )
    out += [
        "</table>",
        "<h2>Success rate by archetype</h2>",
        "<table><tr>" + _cells(["model or policy", *map(e, board.archetypes)], "th") + "</tr>",
    ]
    for r in plotted:
        cells = []
        for a in board.archetypes:
            if a in r.by_archetype:
                s, n = r.by_archetype[a]
                cells.append(f"{_pct(s / n if n else 0.0)} ({s}/{n})")
            else:
                cells.append("–")
        css = ' class="reference"' if r.source != "model" else ""
        out.append(f"<tr{css}>" + _cells([e(r.name), *cells]) + "</tr>")
    if board.transfer:
        out += [
            "</table>",
            "<h2>Transfer to foreign environments</h2>",
            "<p>Success rate on the environments the build synthesized against the foreign "
            "ones (classes brought with <code>--envs</code>, such as another benchmark's "
            "backends): <code>mart_eval_transfer</code>.</p>",
            "<table><tr>"
            + _cells(["model", "synthesized", "foreign", "foreign − synthesized"], "th")
            + "</tr>",
        ]
        for r in board.transfer:
            out.append(
                "<tr>"
                + _cells([e(r.name), _pct(r.synthesized_rate), _pct(r.foreign_rate), e(_gap(r))])
                + "</tr>"
            )
    out += [
        "</table>",
        "<h2>Reading it</h2>",
        "<p>Success: every check of the task passed; reward: the dataset's reward rule "
        "(docs/reward.md). Rates are over episodes (every attempt). pass^k: the chance that "
        "all k of k attempts drawn from a task's n succeed, C(c,k)/C(n,k), averaged over the "
        "tasks with at least k attempts (reliability); pass@k: the chance that at least one "
        "does, 1 − C(n−c,k)/C(n,k) (capability); k is the most attempts a task of the model "
        "has (<code>--attempts</code>), and with one attempt both equal the success rate. "
        "Per-k values: <code>mart_eval_reliability</code>; failures by class: "
        "<code>mart_eval_failures</code>; tokens and cost: <code>mart_eval_spend</code>.</p>",
    ]
    if board.notes:
        out.append("<ul>" + "".join(f"<li>{e(n)}</li>" for n in board.notes) + "</ul>")
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def write_leaderboard(home: Path) -> tuple[Leaderboard, Path]:
    """Read the leaderboard of `home` and write its page; (the leaderboard, the page)."""
    board = read_leaderboard(home)
    path = leaderboard_path(home)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(render_html(board), encoding="utf-8")
    tmp.replace(path)
    return board, path
