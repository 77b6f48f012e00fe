"""Small pieces every asset module uses: code versions, quarantine rows, markdown previews."""

import importlib
import inspect
from collections import Counter
from collections.abc import Iterable

import dagster as dg

from synthesis.export.warehouse import reason_kind
from synthesis.hashing import sha256_text


def code_version(*modules: str) -> str:
    """A code version from the engine modules a stage runs, so editing them makes it stale."""
    sources = [inspect.getsource(importlib.import_module(m)) for m in modules]
    return sha256_text("\n".join(sources))[:16]


def quarantine_row(artifact_type: str, artifact_id: str, stage: str, reason: str) -> dict:
    return {
        "artifact_type": artifact_type,
        "artifact_id": artifact_id,
        "stage": stage,
        "reason": reason,
    }


def top_reasons(reasons: Iterable[str], n: int = 5) -> dg.MetadataValue:
    # Grouped exactly as the warehouse groups them (quarantine.reason_kind).
    counts = Counter(reason_kind(r) for r in reasons)
    if not counts:
        return dg.MetadataValue.md("_none_")
    rows = "\n".join(f"| {count} | {reason} |" for reason, count in counts.most_common(n))
    return dg.MetadataValue.md(f"| count | reason |\n|---:|---|\n{rows}")


def md_table(rows: list[dict], columns: list[str], limit: int = 20) -> dg.MetadataValue:
    head = "| " + " | ".join(columns) + " |\n|" + "---|" * len(columns) + "\n"
    body = "\n".join(
        "| " + " | ".join(str(r.get(c, "")).replace("|", "/")[:80] for c in columns) + " |"
        for r in rows[:limit]
    )
    more = f"\n\n_{len(rows) - limit} more_" if len(rows) > limit else ""
    return dg.MetadataValue.md(head + body + more)
