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


# Every per-environment asset: an environment is this build's only when all of them are.
PER_ENVIRONMENT_ASSETS = (
    "environments",
    "initial_states",
    "env_models",
    "env_audit",
    "env_judgement",
    "scenarios",
    "checks",
    "trajectories",
)


def made_by_this_build(
    context: dg.AssetExecutionContext, env_ids: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(kept, excluded): environments whose every per-environment asset this build made.

    An environment whose run failed in this build still has files from an older build (of
    another seed, maybe); publishing those would mix two datasets. Runs launched from the UI
    carry no build id: they publish what the artifacts hold, as the user asked.
    """
    env_ids = sorted(env_ids)
    build_id = context.run.tags.get(BUILD_TAG, "")
    if not build_id:
        return env_ids, []
    instance = context.instance
    runs: dict[str, str] = {}
    kept, excluded = [], []
    for env_id in env_ids:
        ok = True
        for asset in PER_ENVIRONMENT_ASSETS:
            records = instance.fetch_materializations(
                dg.AssetRecordsFilter(asset_key=dg.AssetKey(asset), asset_partitions=[env_id]),
                limit=1,
            ).records
            run_id = records[0].run_id if records else None
            if run_id is not None and run_id not in runs:
                run = instance.get_run_by_id(run_id)
                runs[run_id] = run.tags.get(BUILD_TAG, "") if run is not None else ""
            if run_id is None or runs[run_id] != build_id:
                ok = False
                break
        (kept if ok else excluded).append(env_id)
    return kept, excluded


BUILD_TAG = "envfoundry/build"
