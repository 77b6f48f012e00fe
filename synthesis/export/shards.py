"""Training shards: fine-tuning JSONL, Hugging Face parquet and RL task manifests, byte-stable.

Every file is a pure function of its inputs and the seed (sorted rows, seeded shuffles,
fixed parquet writer options, no timestamps), and `manifest.json` lists each with its
sha256 so a build can be verified and compared byte for byte.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from synthesis import codec
from synthesis.hashing import derive_seed, sha256_bytes, sha256_file
from synthesis.models import Check, Scenario, Trajectory
from synthesis.tasks.difficulty import DIFFICULTY_POLICY, with_attempts

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 1
SFT_POLICY = "oracle"
SPLITS = ("train", "test")
# Subdirectories this module owns: stale files in them are removed before writing.
OWNED_DIRS = ("sft", "trajectories", "rl")

PARQUET_SCHEMA = pa.schema(
    [
        ("traj_id", pa.string()),
        ("scenario_id", pa.string()),
        ("env_id", pa.string()),
        ("split", pa.string()),
        ("policy", pa.string()),
        ("messages_json", pa.string()),
        ("tools_json", pa.string()),
        ("reward", pa.float64()),
        ("success", pa.bool_()),
        ("attempt_seed", pa.int64()),
    ]
)


def write_shards(
    trajectories: Iterable[Trajectory],
    out_dir: Path,
    *,
    seed: int,
    scenarios: Iterable[Scenario] | None = None,
    checks: Iterable[Check] | None = None,
    inputs_sha256: str | None = None,
) -> dict[str, Any]:
    """Write per-split shards and manifest.json under `out_dir`; returns the manifest.

    With `scenarios`, only trajectories of published scenarios are kept and an RL task
    manifest is written (with each scenario's checks); without, every trajectory given is
    taken to belong to a published scenario. The manifest names the seed (and the hash of
    the build's inputs) every file was made from, and so does each file's entry.
    """
    out_dir = Path(out_dir)
    trajs = sorted(trajectories, key=lambda t: t.traj_id)
    published: dict[str, Scenario] | None = None
    if scenarios is not None:
        published = {s.scenario_id: s for s in scenarios if s.status == "published"}
        trajs = [t for t in trajs if t.scenario_id in published]
    checks_by_scenario: dict[str, list[Check]] = {}
    for c in checks or ():
        checks_by_scenario.setdefault(c.scenario_id, []).append(c)
    # The guesser's attempts per task, in attempt order: the empirical half of its tier.
    attempts: dict[str, list[bool]] = {}
    for t in sorted(
        (t for t in trajs if t.policy == DIFFICULTY_POLICY), key=lambda t: t.attempt_seed or 0
    ):
        attempts.setdefault(t.scenario_id, []).append(t.success)

    _clear_owned(out_dir)
    files: list[dict[str, Any]] = []
    for split in SPLITS:
        in_split = [t for t in trajs if t.split == split]
        sft = [t for t in in_split if t.policy == SFT_POLICY and t.success]
        # Fine-tuning reads lines in order; a seeded shuffle mixes environments without
        # giving up byte-identity.
        random.Random(derive_seed("shards", "sft", seed, split)).shuffle(sft)
        if sft:
            lines = [codec.dumps({"messages": t.messages, "tools": t.tools}) for t in sft]
            files.append(
                _write(
                    out_dir,
                    f"sft/{split}.jsonl",
                    _jsonl(lines),
                    len(lines),
                    split,
                    "jsonl",
                    "openai_chat",
                )
            )
        if in_split:
            files.append(
                _write(
                    out_dir,
                    f"trajectories/{split}.parquet",
                    _parquet_bytes(in_split),
                    len(in_split),
                    split,
                    "parquet",
                    "trajectories",
                )
            )
        if published is not None:
            tasks = sorted(
                (s for s in published.values() if s.split == split), key=lambda s: s.scenario_id
            )
            if tasks:
                lines = [
                    codec.dumps(
                        _rl_task(
                            s,
                            checks_by_scenario.get(s.scenario_id, []),
                            attempts.get(s.scenario_id, []),
                        )
                    )
                    for s in tasks
                ]
                files.append(
                    _write(
                        out_dir,
                        f"rl/{split}.jsonl",
                        _jsonl(lines),
                        len(lines),
                        split,
                        "jsonl",
                        "rl_tasks",
                    )
                )
    made_from = {"seed": seed, **({"inputs_sha256": inputs_sha256} if inputs_sha256 else {})}
    manifest = {
        "manifest_version": MANIFEST_VERSION,
        **made_from,
        "files": [{**f, **made_from} for f in sorted(files, key=lambda f: f["path"])],
    }
    codec.write_json(out_dir / MANIFEST_NAME, manifest)
    return manifest


def _clear_owned(out_dir: Path) -> None:
    for sub in OWNED_DIRS:
        d = out_dir / sub
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.is_file() and p.suffix in (".jsonl", ".parquet"):
                    p.unlink()


def _jsonl(lines: list[bytes]) -> bytes:
    return b"".join(line + b"\n" for line in lines)


def _write(
    out_dir: Path, rel: str, data: bytes, rows: int, split: str, fmt: str, kind: str
) -> dict[str, Any]:
    path = out_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    # `format` is the file format (jsonl | parquet); `kind` says what the rows are.
    return {
        "path": rel,
        "sha256": sha256_bytes(data),
        "rows": rows,
        "split": split,
        "format": fmt,
        "kind": kind,
        "bytes": len(data),
    }


def _rl_task(scenario: Scenario, checks: list[Check], attempts: list[bool]) -> dict[str, Any]:
    return {
        "scenario_id": scenario.scenario_id,
        "env_id": scenario.env_id,
        "split": scenario.split,
        "task_text": scenario.task_text,
        "initial_state": scenario.initial_state,
        "checks": [
            {"check_id": c.check_id, "description": c.description, "spec": c.spec}
            for c in sorted(checks, key=lambda c: c.check_id)
        ],
        # The structural tier (`tier`) with the guesser's attempts and the `final_tier`.
        "difficulty": with_attempts(scenario.difficulty, attempts),
    }


def _parquet_bytes(trajs: list[Trajectory]) -> bytes:
    table = pa.table(
        {
            "traj_id": [t.traj_id for t in trajs],
            "scenario_id": [t.scenario_id for t in trajs],
            "env_id": [t.env_id for t in trajs],
            "split": [t.split for t in trajs],
            "policy": [t.policy for t in trajs],
            "messages_json": [codec.dumps_str(t.messages) for t in trajs],
            "tools_json": [codec.dumps_str(t.tools) for t in trajs],
            "reward": [float(t.reward) for t in trajs],
            "success": [bool(t.success) for t in trajs],
            "attempt_seed": [t.attempt_seed for t in trajs],
        },
        schema=PARQUET_SCHEMA,
    )
    buf = io.BytesIO()
    # Every option that could vary by default is pinned; pyarrow writes no timestamps, and
    # `created_by` only names the pinned pyarrow version.
    pq.write_table(
        table,
        buf,
        compression="zstd",
        compression_level=3,
        use_dictionary=False,
        write_statistics=False,
        row_group_size=max(1, len(trajs)),
        version="2.6",
        data_page_version="1.0",
        write_page_index=False,
        store_schema=True,
    )
    return buf.getvalue()


def _count_rows(path: Path, fmt: str) -> int:
    if fmt == "parquet":
        return pq.ParquetFile(path).metadata.num_rows
    return sum(1 for line in path.read_bytes().splitlines() if line.strip())


def verify_manifest(
    manifest_path: Path,
    *,
    strict: bool = True,
    seed: int | None = None,
    inputs_sha256: str | None = None,
) -> list[str]:
    """Mismatches between the manifest and the files beside it (empty when all agree).

    `strict` also reports files under the shard folders the manifest does not list; `seed`
    and `inputs_sha256`, when given, must be what the manifest and every file entry say the
    files were made from (a file of another build's seed is a mismatch).
    """
    manifest_path = Path(manifest_path)
    try:
        manifest = codec.read_json(manifest_path)
    except (OSError, ValueError) as exc:
        return [f"cannot read manifest {manifest_path}: {exc}"]
    root = manifest_path.parent
    problems = []
    listed = set()
    expected = {
        k: v for k, v in (("seed", seed), ("inputs_sha256", inputs_sha256)) if v is not None
    }
    for key, value in expected.items():
        if manifest.get(key) != value:
            problems.append(f"manifest {key} {manifest.get(key)!r} != this build's {value!r}")
    for entry in manifest.get("files", []):
        rel = entry.get("path", "")
        for key in ("seed", "inputs_sha256"):
            if key in manifest and entry.get(key) != manifest[key]:
                problems.append(f"{rel}: made from {key} {entry.get(key)!r}, not {manifest[key]!r}")
        listed.add(rel)
        path = root / rel
        if Path(rel).is_absolute() or ".." in Path(rel).parts:
            problems.append(f"{rel}: path escapes the manifest's folder")
            continue
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        digest = sha256_file(path)
        if digest != entry.get("sha256"):
            problems.append(f"{rel}: sha256 {digest} != manifest {entry.get('sha256')}")
        try:
            rows = _count_rows(path, entry.get("format", ""))
        except Exception as exc:  # noqa: BLE001 - an unreadable shard is a mismatch to report
            problems.append(f"{rel}: unreadable ({exc})")
            continue
        if rows != entry.get("rows"):
            problems.append(f"{rel}: {rows} rows != manifest {entry.get('rows')}")
    if strict:
        for sub in OWNED_DIRS:
            d = root / sub
            if d.is_dir():
                for p in sorted(d.rglob("*")):
                    rel = p.relative_to(root).as_posix()
                    if p.is_file() and rel not in listed:
                        problems.append(f"{rel}: not listed in the manifest")
    return problems
