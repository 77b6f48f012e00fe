"""Training shards: fine-tuning JSONL, TRL parquet, self-contained RL tasks, a dataset card.

Every file is a pure function of its inputs and the seed (sorted rows, seeded shuffles,
fixed parquet writer options, no timestamps), and `manifest.json` lists each with its
sha256, its `kind` and, for tabular files, its split and row count (code, docs and plots
are for every split, `split: "all"`, and have no rows), so a build can be verified and
compared byte for byte.
"""

from __future__ import annotations

import io
import random
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import orjson
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from synthesis import codec
from synthesis.export import card, rl_tasks, trl
from synthesis.export.reward_audit import RewardAudit, reward_audit_from_warehouse
from synthesis.hashing import derive_seed, sha256_bytes, sha256_file
from synthesis.models import Check, Environment, Scenario, Trajectory
from synthesis.tasks.calibration import LLM_POLICY_PREFIX
from synthesis.tasks.difficulty import DIFFICULTY_POLICY, with_attempts

MANIFEST_NAME = "manifest.json"
MANIFEST_VERSION = 2
SFT_POLICY = "oracle"
SPLITS = ("train", "test")
ALL_SPLITS = "all"
# Subdirectories this module owns: stale files in them are removed before writing.
OWNED_DIRS = ("sft", "trajectories", "rl", rl_tasks.ENVIRONMENTS_DIR, card.PLOTS_DIR)
OWNED_FILES = (
    rl_tasks.REWARD_MODULE,
    rl_tasks.USER_MODULE,
    rl_tasks.VERIFIERS_MODULE,
    card.CARD_NAME,
)
OWNED_SUFFIXES = (".jsonl", ".parquet", ".py", ".svg", ".md")
# The columns holding what an episode said: most of a trajectory row's bytes.
EPISODE_COLUMNS = ("messages_json", "tools_json")
# Rows have a count only in tabular files.
TABULAR_FORMATS = ("jsonl", "parquet")

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


def is_training_policy(policy: str) -> bool:
    """Whether episodes of `policy` are worth training on: the oracle's and LLM agents', not
    the baselines' (noop, refuse_always, wrong_record) nor the guesser's, which exist to keep
    rewards honest and rate difficulty."""
    return policy == SFT_POLICY or policy.startswith(LLM_POLICY_PREFIX)


def write_shards(
    trajectories: Iterable[Trajectory],
    out_dir: Path,
    *,
    seed: int,
    scenarios: Iterable[Scenario] | None = None,
    checks: Iterable[Check] | None = None,
    environments: Iterable[Environment] | None = None,
    inputs_sha256: str | None = None,
    provenance: Mapping[str, str] | None = None,
    all_trajectories: bool = False,
) -> dict[str, Any]:
    """Write per-split shards and manifest.json under `out_dir`; returns the manifest.

    With `scenarios`, only trajectories of published scenarios are kept and RL tasks are
    written (with each scenario's checks and its environment, which `environments` must
    hold); without, every trajectory given is taken to belong to a published scenario. The
    manifest names the seed (and the hash of the build's inputs) every file was made from,
    and so does each file's entry. See `write_shard_files` for `all_trajectories`.
    """
    trajs = sorted(trajectories, key=lambda t: t.traj_id)
    tasks = None
    if scenarios is not None:
        tasks = [
            _task_record(s)
            for s in sorted(scenarios, key=lambda s: s.scenario_id)
            if s.status == "published"
        ]
    check_records = [
        {
            "check_id": c.check_id,
            "scenario_id": c.scenario_id,
            "description": c.description,
            "spec_json": codec.dumps_str(c.spec),
        }
        for c in checks or ()
    ]
    env_records = None
    if environments is not None:
        wanted = {t["env_id"] for t in tasks or ()}
        env_records = [
            rl_tasks.environment_record(e)
            for e in sorted(environments, key=lambda e: e.env_id)
            if e.env_id in wanted
        ]
    return write_shard_files(
        _trajectory_table(trajs),
        out_dir,
        seed=seed,
        tasks=tasks,
        checks=check_records,
        environments=env_records,
        inputs_sha256=inputs_sha256,
        provenance=provenance,
        all_trajectories=all_trajectories,
    )


def write_shards_from_warehouse(
    con_or_path: Any,
    out_dir: Path,
    *,
    seed: int,
    inputs_sha256: str | None = None,
    provenance: Mapping[str, str] | None = None,
    all_trajectories: bool = False,
) -> dict[str, Any]:
    """`write_shards` from the warehouse tables instead of the stage artifacts, same bytes.

    The warehouse already holds every trajectory with its messages and tools as canonical
    JSON, the scenarios with the screening applied and the environments' code: reading them
    back costs seconds, where parsing and re-validating the artifacts cost minutes on a full
    build.
    """
    from synthesis.export import warehouse

    with warehouse._connection(con_or_path) as con:
        # Unordered: `write_shard_files` orders them (sorting gigabytes of rows in the
        # database costs more than the rest of this stage).
        query, params = _trajectories_query(all_trajectories)
        trajs = con.sql(query, params=params).to_arrow_table()
        scenarios = con.sql(
            "SELECT scenario_id, env_id, split, task_text, initial_state_json, difficulty_json, "
            "user_json FROM scenarios WHERE status = 'published'"
        ).to_arrow_table()
        checks = warehouse.read_table(con, "checks")
        tasks = sorted(scenarios.to_pylist(), key=lambda s: s["scenario_id"])
        env_records = rl_tasks.environment_records_from_warehouse(con, (t["env_id"] for t in tasks))
        audit = reward_audit_from_warehouse(con)
    return write_shard_files(
        trajs.cast(PARQUET_SCHEMA),
        out_dir,
        seed=seed,
        tasks=tasks,
        checks=checks.select(["check_id", "scenario_id", "description", "spec_json"]).to_pylist(),
        environments=env_records,
        inputs_sha256=inputs_sha256,
        provenance=provenance,
        all_trajectories=all_trajectories,
        reward_audit=audit,
    )


# The episodes `write_shard_files` may read: of training policies (`is_training_policy`, in
# SQL: the ones it ships), and every episode of an environment without an oracle episode
# (`_env_prompts` takes its prompt from its first). The shards tests fail if either is missed.
_MAY_SHIP = (
    "(policy = $oracle OR starts_with(policy, $llm) OR env_id NOT IN "
    "(SELECT env_id FROM trajectories WHERE policy = $oracle))"
)
_SHIPPED_PARAMS = {"oracle": SFT_POLICY, "llm": LLM_POLICY_PREFIX}


def _trajectories_query(all_trajectories: bool) -> tuple[str, dict[str, str] | None]:
    """The query (and its parameters) of the trajectories as `write_shard_files` takes them.
    Unless every episode ships, the messages and tools of the episodes it never reads are
    left null: six in seven of a full build's episodes, and most of the bytes this stage
    would read and copy."""
    from synthesis.export import warehouse

    columns = []
    for name in PARQUET_SCHEMA.names:
        column = warehouse._ident(name)
        if name in EPISODE_COLUMNS and not all_trajectories:
            column = f"CASE WHEN {_MAY_SHIP} THEN {column} END AS {column}"
        columns.append(column)
    query = f"SELECT {', '.join(columns)} FROM trajectories"
    return query, None if all_trajectories else _SHIPPED_PARAMS


def write_shard_files(
    trajs: pa.Table,
    out_dir: Path,
    *,
    seed: int,
    tasks: list[dict[str, Any]] | None,
    checks: Iterable[Mapping[str, Any]],
    environments: list[Mapping[str, Any]] | None = None,
    inputs_sha256: str | None = None,
    provenance: Mapping[str, str] | None = None,
    all_trajectories: bool = False,
    reward_audit: RewardAudit | None = None,
) -> dict[str, Any]:
    """The shards from rows: `trajs` (PARQUET_SCHEMA, in any order), the published
    `tasks` (sorted by scenario id: scenario_id, env_id, split, task_text,
    initial_state_json, difficulty_json, user_json (null: single-turn); None: no RL tasks,
    every trajectory kept), their
    `checks` (check_id, scenario_id, description, spec_json) and their `environments`
    (`rl_tasks.environment_record`s; required with tasks). JSON columns are canonical JSON
    (synthesis.codec) and go into the files verbatim; unless `all_trajectories`, the
    episode columns of rows that never ship nor give a prompt may be null.

    The trajectories shard keeps the successful episodes of training policies (the oracle,
    LLM agents) unless `all_trajectories`: baselines and failed episodes teach nothing.
    """
    out_dir = Path(out_dir)
    # Everything but the files' contents is decided on the narrow columns; the episodes'
    # messages and tools (nearly all of a full build's bytes) are copied only for the rows
    # that ship, never the whole table (ordering it took seconds).
    narrow = trajs.select([c for c in trajs.column_names if c not in EPISODE_COLUMNS])
    # traj_id order (Arrow compares UTF-8 bytes, as Python compares code points).
    order = pc.sort_indices(narrow, sort_keys=[("traj_id", "ascending")])
    narrow = narrow.take(order)
    if tasks is not None:
        published = pa.array([t["scenario_id"] for t in tasks], pa.string())
        kept = _flat(pc.is_in(narrow["scenario_id"], value_set=published))
    else:
        kept = pa.array([True] * narrow.num_rows, pa.bool_())
    checks_by_scenario: dict[str, list[Mapping[str, Any]]] = {}
    for c in sorted(checks, key=lambda c: c["check_id"]):
        checks_by_scenario.setdefault(c["scenario_id"], []).append(c)
    attempts = _guesser_attempts(
        narrow.select(["scenario_id", "policy", "success", "attempt_seed"])
    )
    env_by_id = {e["env_id"]: e for e in environments or ()}
    if tasks and not environments:
        raise ValueError("RL tasks need their environments: pass the published environments")
    missing = sorted({t["env_id"] for t in tasks or ()} - set(env_by_id))
    if missing:
        raise ValueError(f"published tasks of environments not given: {missing}")
    published_narrow = narrow.filter(kept)
    published_rows = order.filter(kept)  # where each of them is in `trajs`
    prompts = _env_prompts(trajs, published_narrow, published_rows, sorted(env_by_id))

    _clear_owned(out_dir)
    files: list[dict[str, Any]] = []
    summaries: list[dict[str, Any]] = []
    for split in SPLITS:
        in_split = pc.equal(published_narrow["split"], split)
        if not all_trajectories:
            in_split = pc.and_(in_split, _training_mask(published_narrow))
        # The shipped episodes whole, in traj_id order, as one chunk. The fine-tuning rows
        # are among them: the oracle's successful episodes.
        shipped = _rows_in_order(trajs, published_rows.filter(_flat(in_split)))
        sft = _sft_rows(shipped)
        # Fine-tuning reads lines in order; a seeded shuffle mixes environments without
        # giving up byte-identity. The TRL rows follow the same order.
        shuffled = list(range(len(sft)))
        random.Random(derive_seed("shards", "sft", seed, split)).shuffle(shuffled)
        sft = [sft[i] for i in shuffled]
        if sft:
            lines = [
                codec.dumps(
                    {"scenario_id": s, "messages": orjson.Fragment(m), "tools": orjson.Fragment(t)}
                )
                for s, m, t in sft
            ]
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
            files.append(
                _write(
                    out_dir,
                    f"sft/{split}.parquet",
                    _parquet_bytes(trl.trl_table(sft)),
                    len(sft),
                    split,
                    "parquet",
                    "trl_chat",
                )
            )
        if shipped.num_rows:
            entry = _write(
                out_dir,
                f"trajectories/{split}.parquet",
                _parquet_bytes(shipped),
                shipped.num_rows,
                split,
                "parquet",
                "trajectories",
            )
            entry["policies"] = sorted(set(shipped["policy"].to_pylist()))
            files.append(entry)
        in_tasks = [t for t in tasks or () if t["split"] == split]
        if in_tasks:
            lines = []
            for t in in_tasks:
                env = env_by_id[t["env_id"]]
                difficulty = with_attempts(
                    codec.loads(t["difficulty_json"]), attempts.get(t["scenario_id"], [])
                )
                lines.append(
                    rl_tasks.rl_line(
                        t,
                        checks_by_scenario.get(t["scenario_id"], []),
                        difficulty,
                        env,
                        prompts[t["env_id"]],
                    )
                )
                summaries.append(
                    {
                        "split": split,
                        "env_id": t["env_id"],
                        "archetype": env["archetype"],
                        "final_tier": difficulty.get("final_tier") or difficulty.get("tier"),
                        "chain_length": difficulty.get("chain_length"),
                    }
                )
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
    if tasks:
        for env_id in sorted(env_by_id):
            files.append(
                _write(
                    out_dir,
                    rl_tasks.environment_path(env_id),
                    env_by_id[env_id]["code"].encode(),
                    None,
                    ALL_SPLITS,
                    "py",
                    "environment_code",
                )
            )
        files.append(
            _write(
                out_dir,
                rl_tasks.REWARD_MODULE,
                rl_tasks.REWARD_MODULE_SOURCE.read_bytes(),
                None,
                ALL_SPLITS,
                "py",
                "reward_module",
            )
        )
        files.append(
            _write(
                out_dir,
                rl_tasks.USER_MODULE,
                rl_tasks.USER_MODULE_SOURCE.read_bytes(),
                None,
                ALL_SPLITS,
                "py",
                "user_simulator",
            )
        )
        files.append(
            _write(
                out_dir,
                rl_tasks.VERIFIERS_MODULE,
                rl_tasks.VERIFIERS_MODULE_SOURCE.read_bytes(),
                None,
                ALL_SPLITS,
                "py",
                "verifiers_taskset",
            )
        )
    facts = card.CardFacts(
        seed=seed,
        inputs_sha256=inputs_sha256,
        provenance=dict(provenance or {}),
        tasks=summaries,
        policies=_policy_outcomes(published_narrow),
        trajectories_selection="every episode played on the published tasks"
        if all_trajectories
        else "the successful episodes of the oracle and LLM agents (baselines and failed "
        "episodes left out)",
        reward_audit=reward_audit,
    )
    for rel, data in card.plots(facts).items():
        files.append(_write(out_dir, rel, data, None, ALL_SPLITS, "svg", "plot"))
    files.sort(key=lambda f: f["path"])
    files.append(
        _write(
            out_dir,
            card.CARD_NAME,
            card.render_card(facts, files),
            None,
            ALL_SPLITS,
            "md",
            "dataset_card",
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


def _task_record(s: Scenario) -> dict[str, Any]:
    return {
        "scenario_id": s.scenario_id,
        "env_id": s.env_id,
        "split": s.split,
        "task_text": s.task_text,
        "initial_state_json": codec.dumps_str(s.initial_state),
        "difficulty_json": codec.dumps_str(s.difficulty),
        "user_json": None if s.user is None else codec.dumps_str(s.user),
    }


def _trajectory_table(trajs: list[Trajectory]) -> pa.Table:
    return pa.table(
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


def _guesser_attempts(trajs: pa.Table) -> dict[str, list[bool]]:
    """The guesser's attempts per task, in attempt order: the empirical half of its tier."""
    guesses = trajs.filter(pc.equal(trajs["policy"], DIFFICULTY_POLICY)).select(
        ["scenario_id", "success", "attempt_seed"]
    )
    attempts: dict[str, list[bool]] = {}
    # A stable sort over traj_id order, as the attempts have always been ordered.
    for row in sorted(guesses.to_pylist(), key=lambda r: r["attempt_seed"] or 0):
        attempts.setdefault(row["scenario_id"], []).append(row["success"])
    return attempts


def _sft_rows(in_split: pa.Table) -> list[tuple[str, str, str]]:
    """(scenario_id, messages_json, tools_json) of each successful oracle run, in traj_id
    order."""
    keep = pc.and_(pc.equal(in_split["policy"], SFT_POLICY), in_split["success"])
    sft = in_split.filter(keep).select(["scenario_id", "messages_json", "tools_json"])
    # The columns already hold the canonical JSON: they go into the files verbatim.
    return list(
        zip(
            sft["scenario_id"].to_pylist(),
            sft["messages_json"].to_pylist(),
            sft["tools_json"].to_pylist(),
            strict=True,
        )
    )


def _training_mask(table: pa.Table) -> pa.Array:
    policies = table["policy"].to_pylist()
    training = pa.array([is_training_policy(p) for p in policies], pa.bool_())
    return pc.and_(training, pc.fill_null(table["success"], False))


def _env_prompts(
    trajs: pa.Table, narrow: pa.Table, rows: pa.Array, env_ids: list[str]
) -> dict[str, tuple[str, str]]:
    """Each environment's (system message, tool schemas JSON), as its episodes showed them to
    the agent: from its first oracle episode (in traj_id order), else its first episode.
    `narrow`: the episodes in traj_id order without their messages; `rows`: where each is in
    `trajs`."""
    found = narrow.select(["env_id", "policy"]).to_pylist()
    first: dict[str, int] = {}
    for i, row in enumerate(found):
        env_id = row["env_id"]
        if env_id not in first or (
            row["policy"] == SFT_POLICY and found[first[env_id]]["policy"] != SFT_POLICY
        ):
            first[env_id] = i
    prompts = {}
    for env_id in env_ids:
        if env_id not in first:
            raise ValueError(f"environment {env_id} has no episode to take its prompt from")
        i = rows[first[env_id]].as_py()
        messages = codec.loads(trajs["messages_json"][i].as_py())
        system = next((m["content"] for m in messages if m.get("role") == "system"), "")
        prompts[env_id] = (system, trajs["tools_json"][i].as_py())
    return prompts


def _policy_outcomes(trajs: pa.Table) -> dict[str, tuple[int, int]]:
    """policy -> (episodes, successful episodes)."""
    out: dict[str, tuple[int, int]] = {}
    for policy, success in zip(
        trajs["policy"].to_pylist(), trajs["success"].to_pylist(), strict=True
    ):
        n, ok = out.get(policy, (0, 0))
        out[policy] = (n + 1, ok + bool(success))
    return out


def _clear_owned(out_dir: Path) -> None:
    for sub in OWNED_DIRS:
        d = out_dir / sub
        if d.is_dir():
            for p in sorted(d.iterdir()):
                if p.is_file() and p.suffix in OWNED_SUFFIXES:
                    p.unlink()
    for name in OWNED_FILES:
        (out_dir / name).unlink(missing_ok=True)


def _rows_in_order(table: pa.Table, rows: pa.Array) -> pa.Table:
    """`table.take(rows)` as one chunk, for `rows` ascending in traj_id. Filtered chunk by
    chunk, then ordered: a take from a table of many chunks joins them all first (gigabytes
    of a full build's episodes)."""
    wanted = np.zeros(table.num_rows, dtype=bool)
    wanted[rows.to_numpy(zero_copy_only=False)] = True
    picked = table.filter(pa.array(wanted)).combine_chunks()
    return picked.take(pc.sort_indices(picked, sort_keys=[("traj_id", "ascending")]))


def _flat(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def _jsonl(lines: list[bytes]) -> bytes:
    # One join: a copy of each line with its newline first doubled the bytes moved.
    return b"\n".join(lines) + b"\n" if lines else b""


def _write(
    out_dir: Path, rel: str, data: bytes, rows: int | None, split: str, fmt: str, kind: str
) -> dict[str, Any]:
    path = out_dir / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    # `format` is the file format (jsonl | parquet | py | md | svg); `kind` says what the
    # file holds; `rows` is null for files that are not tables (code, docs, plots).
    return {
        "path": rel,
        "sha256": sha256_bytes(data),
        "rows": rows,
        "split": split,
        "format": fmt,
        "kind": kind,
        "bytes": len(data),
    }


def _parquet_bytes(table: pa.Table) -> bytes:
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
        row_group_size=max(1, table.num_rows),
        version="2.6",
        data_page_version="1.0",
        write_page_index=False,
        store_schema=True,
    )
    return buf.getvalue()


def _count_rows(path: Path, fmt: str) -> int | None:
    """The rows of a tabular file; None for any other (code, docs, plots have no rows)."""
    if fmt == "parquet":
        return pq.ParquetFile(path).metadata.num_rows
    if fmt == "jsonl":
        return sum(1 for line in path.read_bytes().splitlines() if line.strip())
    return None


def verify_manifest(
    manifest_path: Path,
    *,
    strict: bool = True,
    seed: int | None = None,
    inputs_sha256: str | None = None,
) -> list[str]:
    """Mismatches between the manifest and the files beside it (empty when all agree).

    Every listed file is checked, code and docs included: its sha256, its rows (null for a
    file that is not a table, whose split must be "all"). `strict` also reports any file
    beside the manifest (at any depth) that it does not list, but Python's `__pycache__`
    (importing the shipped `envfoundry_reward.py` from the folder writes one); `seed`
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
        if rows is None and entry.get("split") != ALL_SPLITS:
            problems.append(
                f"{rel}: not a table, so its split is {ALL_SPLITS!r}, not {entry.get('split')!r}"
            )
        if not entry.get("kind"):
            problems.append(f"{rel}: no kind")
    if strict:
        for p in sorted(root.rglob("*")):
            rel = p.relative_to(root).as_posix()
            # Importing the shipped module from the folder leaves Python's bytecode cache.
            if "__pycache__" in p.relative_to(root).parts:
                continue
            if p.is_file() and rel != MANIFEST_NAME and rel not in listed:
                problems.append(f"{rel}: not listed in the manifest")
    return problems
