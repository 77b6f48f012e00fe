"""The ledger spool: the one path from every LLM stage's ledger to the warehouse.

Each asset run appends its LLMCall rows (JSON lines, the project's codec) to its own file,
`<home>/ledger/<build id>/<asset>/<partition or _all>.jsonl`, so runs in parallel never
share a file and no artifact carries ledger rows (they hold wall-clock fields, which must
stay out of hashed artifacts). The `warehouse` asset reads a build's files and merges the
rows into the append-only `llm_calls` table by call id. Files are only ever appended to: a
second run of one asset and partition in one build adds its rows after the first's.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.config import ledger_spool_dir

ALL_PARTITIONS = "_all"  # the file name of an unpartitioned asset's run
SUFFIX = ".jsonl"
REDACTED = "[redacted]"


def _part(name: str, what: str) -> str:
    # Names become path parts: one that could climb out of the spool is our bug, not data.
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\0" in name:
        raise ValueError(f"ledger spool: {what} {name!r} cannot name a file")
    return name


def build_dir(home: Path, build_id: str) -> Path:
    """Every spool file of one build is under this folder."""
    return ledger_spool_dir(home) / _part(build_id, "build id")


def spool_file(home: Path, build_id: str, asset: str, partition: str | None) -> Path:
    """The file one asset run (an asset, a partition or none) appends its rows to."""
    name = _part(partition or ALL_PARTITIONS, "partition")
    return build_dir(home, build_id) / _part(asset, "asset") / f"{name}{SUFFIX}"


def append_rows(
    path: Path, rows: Iterable[dict[str, Any]], secrets: Iterable[str | None] = ()
) -> int:
    """Append `rows` to `path` as JSON lines and return how many were written.

    One `write` of whole lines on a file opened for appending, flushed to disk before
    returning, so a reader never sees half a row. A secret (the API key) that found its way
    into a row (an error message quoting a header, say) is replaced, never written."""
    keys = [s for s in secrets if s]
    lines = []
    for row in rows:
        line = codec.dumps(row)
        for key in keys:
            line = line.replace(key.encode(), REDACTED.encode())
        lines.append(line + b"\n")
    if not lines:
        return 0
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "ab") as out:
        out.write(b"".join(lines))
        out.flush()
        os.fsync(out.fileno())
    return len(lines)


def build_files(home: Path, build_id: str) -> list[Path]:
    """Every spool file of one build, in path order (none when it made no LLM call)."""
    folder = build_dir(home, build_id)
    return sorted(folder.glob(f"*/*{SUFFIX}")) if folder.is_dir() else []


def read_rows(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The rows of the given spool files, one per call id, in call-id order.

    A call id met twice is the same attempt read twice (call ids carry the run): kept once.
    A last line without its newline is a write cut short by a kill; it is left out."""
    rows: dict[str, dict[str, Any]] = {}
    for path in paths:
        if not path.is_file():
            continue
        data = path.read_bytes()
        complete = data[: data.rfind(b"\n") + 1]
        for line in complete.splitlines():
            if line.strip():
                row = codec.loads(line)
                rows.setdefault(row["call_id"], row)
    return [rows[k] for k in sorted(rows)]
