"""Plots and the generator's name, as the report and the dataset card both draw them.

A chart is drawn as inline SVG by plain string formatting: no timestamps, no renderer
metadata, so the same build draws the same bytes.
"""

from __future__ import annotations

import html
import importlib.metadata
from dataclasses import dataclass


@dataclass
class Chart:
    title: str
    labels: list[str]
    values: list[float]
    value_format: str = "{:,.0f}"


def svg_bar_chart(chart: Chart, width: int = 720, bar_height: int = 18, gap: int = 6) -> str:
    """A horizontal bar chart as inline SVG: one labelled bar per value, scaled to the max."""
    label_width = min(280, 8 + 7 * max((len(label) for label in chart.labels), default=0))
    value_width = 80
    plot = width - label_width - value_width
    top = max(chart.values, default=0) or 1
    height = len(chart.values) * (bar_height + gap) + gap
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        f'viewBox="0 0 {width} {height}" role="img" '
        f'aria-label="{html.escape(chart.title)}" font-size="12" '
        'font-family="system-ui,sans-serif">'
    ]
    max_chars = (label_width - 8) // 7
    for i, (label, value) in enumerate(zip(chart.labels, chart.values, strict=True)):
        # Longer labels would run off the left edge; the full text stays in the tooltip.
        shown = label if len(label) <= max_chars else label[: max_chars - 1] + "…"
        y = gap + i * (bar_height + gap)
        length = 0 if value <= 0 else max(1.0, plot * value / top)
        mid = y + bar_height / 2 + 4
        parts.append(
            f'<text x="{label_width - 6}" y="{mid:.1f}" text-anchor="end">'
            f"{html.escape(shown)}</text>"
            f'<rect x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" '
            f'fill="#4c78a8"><title>{html.escape(label)}: '
            f"{html.escape(chart.value_format.format(value))}</title></rect>"
            f'<text x="{label_width + length + 4:.1f}" y="{mid:.1f}">'
            f"{html.escape(chart.value_format.format(value))}</text>"
        )
    parts.append("</svg>")
    return "".join(parts)


def generator_version() -> str:
    try:
        return f"envfoundry {importlib.metadata.version('envfoundry')}"
    except importlib.metadata.PackageNotFoundError:  # run from a checkout never installed
        return "envfoundry (version unknown: package not installed)"
