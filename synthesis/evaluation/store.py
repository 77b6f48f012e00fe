"""`$ENVFOUNDRY_HOME/evals/evals.duckdb`: every evaluation episode, kept apart from the dataset.

The published dataset is never written by an evaluation; its results live in their own
DuckDB file beside it, in three tables whose columns are listed below (RUNS, EPISODES,
LLM_CALLS: name, type, meaning). The meanings are also the columns' DuckDB comments
(`SELECT table_name, column_name, comment FROM duckdb_columns() WHERE table_name LIKE
'eval_%'`), so marts built on them (a leaderboard, failures by archetype) can read them.

* `eval_runs`: one row per `envfoundry eval` invocation: the model, the endpoint (no
  credentials), the dataset (`dataset_id`, its folder under `datasets/`, and
  `manifest_sha256`, the sha256 of its `shards/manifest.json`), the episode settings, the
  selection, what it played and skipped, and how it ended (`status`: running, finished,
  stopped with a `stop_reason`, interrupted, failed, or killed: found running by the next
  eval, whose process died).
* `eval_episodes`: one row per episode (one attempt of one model at one task), written as
  it finishes. Its key, `episode_key`, hashes (model, manifest_sha256, settings_sha256,
  scenario_id, attempt): a resumed eval skips the keys recorded without an `error`, and
  plays an errored one again (its row then replaced). Each row repeats what the marts group
  by (archetype, kind, family, tier, split), so none needs the dataset's warehouse.
* `eval_llm_calls`: the client's ledger, one row per attempt at a request: the columns of
  the warehouse's `llm_calls`, with `run_id` for its `build_id`.

Times are UTC. No column holds an absolute path, so a home moved or copied keeps its
evaluations.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from synthesis.evaluation.dataset import EvalError
from synthesis.file_lock import FileLock, Locked

EVALS_DIR = "evals"
EVALS_FILE = "evals.duckdb"
# 2: eval_episodes.origin (synthesized or foreign), added to a version-1 file when opened.
SCHEMA_VERSION = 2
LOCK_FILE = ".evals.lock"

# (name, type, description) per column; the first is the key.
RUNS: tuple[tuple[str, str, str], ...] = (
    ("run_id", "VARCHAR", "the invocation's id"),
    ("model", "VARCHAR", "the model evaluated"),
    ("base_url", "VARCHAR", "the endpoint, without credentials or query string"),
    ("dataset_id", "VARCHAR", "the dataset's folder under datasets/"),
    ("manifest_sha256", "VARCHAR", "sha256 of the dataset's shards/manifest.json"),
    ("settings_sha256", "VARCHAR", "sha of settings_json"),
    ("settings_json", "VARCHAR", "what decides how an episode is played"),
    ("split", "VARCHAR", "test, train or all"),
    ("attempts", "INTEGER", "attempts per task"),
    ("task_limit", "INTEGER", "--limit (null: none)"),
    ("tasks_listed", "INTEGER", "ids listed by --tasks (null: no file)"),
    ("n_tasks", "INTEGER", "tasks selected"),
    ("n_episodes", "INTEGER", "episodes asked for: tasks x attempts"),
    ("n_played", "INTEGER", "episodes this invocation played"),
    ("n_skipped", "INTEGER", "episodes found already recorded"),
    ("n_errors", "INTEGER", "episodes that ended in an LLMError"),
    ("status", "VARCHAR", "running, finished, stopped, interrupted, failed or killed"),
    ("stop_reason", "VARCHAR", "why it stopped or failed"),
    ("started_at", "TIMESTAMPTZ", "UTC"),
    ("finished_at", "TIMESTAMPTZ", "UTC; null while running or when killed"),
    ("schema_version", "INTEGER", "of the eval_ tables"),
)
EPISODES: tuple[tuple[str, str, str], ...] = (
    (
        "episode_key",
        "VARCHAR",
        "sha of (model, manifest_sha256, settings_sha256, scenario_id, "
        "attempt): what a resumed eval skips",
    ),
    ("run_id", "VARCHAR", "the invocation that played it"),
    ("model", "VARCHAR", "the model evaluated"),
    ("dataset_id", "VARCHAR", "the dataset's folder under datasets/"),
    ("manifest_sha256", "VARCHAR", "sha256 of the dataset's shards/manifest.json"),
    ("settings_sha256", "VARCHAR", "as in eval_runs"),
    ("scenario_id", "VARCHAR", "the task"),
    ("env_id", "VARCHAR", "its environment"),
    ("archetype", "VARCHAR", "the environment's archetype"),
    (
        "origin",
        "VARCHAR",
        "synthesized (an environment the build generated) or foreign (a class brought "
        "with --envs, e.g. another benchmark's backend); null in rows of schema version 1",
    ),
    ("kind", "VARCHAR", "feasible or infeasible"),
    ("family", "VARCHAR", "the planner's task family"),
    (
        "answer_kind",
        "VARCHAR",
        "state (graded on the final state) or reply (a value or a refusal to state), "
        "if the dataset's marts record it",
    ),
    ("structural_tier", "VARCHAR", "the tier as planned"),
    (
        "final_tier",
        "VARCHAR",
        "the tier the dataset ships (after the baseline's attempts), if recorded",
    ),
    ("split", "VARCHAR", "train or test"),
    ("multi_turn", "BOOLEAN", "a simulated user holds details back"),
    (
        "attempt",
        "INTEGER",
        "0: greedy (temperature 0); 1..: sampled (temperature 0.7, seed = attempt), "
        "a multi-turn task's user then worded by the model",
    ),
    ("reward", "DOUBLE", "under the dataset's reward rule"),
    ("success", "BOOLEAN", "every check passed"),
    (
        "failure",
        "VARCHAR",
        "the failure class (synthesis/evaluation/taxonomy.py): none, llm_error, "
        "invalid_tool_or_arguments, out_of_turns, complied_infeasible, refused_feasible, "
        "no_action, wrong_record, collateral_damage, wrong_or_missing_answer, other",
    ),
    (
        "failed_checks_json",
        "VARCHAR",
        "[{check_id, type, role}] of the failed checks; null when the verdicts are unknown",
    ),
    ("turns", "INTEGER", "user messages, the opening included"),
    ("agent_turns", "INTEGER", "assistant messages"),
    ("tool_calls", "INTEGER", "calls run"),
    ("tool_errors", "INTEGER", "calls whose result was a failure"),
    ("hit_step_limit", "BOOLEAN", "the episode ran out of steps"),
    (
        "prompt_tokens",
        "BIGINT",
        "the agent's prompt tokens (a user the model words: in eval_llm_calls)",
    ),
    ("completion_tokens", "BIGINT", "the agent's completion tokens"),
    ("cost_usd", "DOUBLE", "the agent's cost at the configured prices"),
    ("user_sim", "VARCHAR", "off, offline, llm or mixed"),
    (
        "error",
        "VARCHAR",
        "the LLMError that ended the episode (reward 0); the next eval plays it again",
    ),
    ("traj_id", "VARCHAR", "the trajectory's id"),
    ("messages_json", "VARCHAR", "the transcript, OpenAI chat format"),
    ("started_at", "TIMESTAMPTZ", "UTC"),
    ("finished_at", "TIMESTAMPTZ", "UTC"),
    ("seconds", "DOUBLE", "wall-clock seconds"),
)
LLM_CALLS: tuple[tuple[str, str, str], ...] = (
    ("call_id", "VARCHAR", "one attempt at one request"),
    ("run_id", "VARCHAR", "the invocation"),
    ("stage", "VARCHAR", "agent, or user_sim for a user the model words"),
    ("artifact_id", "VARCHAR", "the scenario id"),
    ("model", "VARCHAR", "the model asked"),
    ("attempt", "INTEGER", "the retry index of the request"),
    ("status", "VARCHAR", "accepted, cached, rejected, retried, failed, skipped or hedged"),
    ("reason", "VARCHAR", "why it was not accepted"),
    ("tokens_in", "BIGINT", "prompt tokens"),
    ("tokens_out", "BIGINT", "completion tokens"),
    ("cost_usd", "DOUBLE", "at the configured prices"),
    ("latency_ms", "DOUBLE", "the request's latency"),
    ("cache_hit", "BOOLEAN", "answered from the cache"),
    ("request_sha256", "VARCHAR", "the request's hash"),
    ("created_at", "TIMESTAMPTZ", "UTC"),
)
TABLES: dict[str, tuple[tuple[str, str, str], ...]] = {
    "eval_runs": RUNS,
    "eval_episodes": EPISODES,
    "eval_llm_calls": LLM_CALLS,
}
TABLE_DESCRIPTIONS = {
    "eval_runs": "one row per envfoundry eval invocation",
    "eval_episodes": "one row per evaluation episode (a task's attempt by a model)",
    "eval_llm_calls": "the evaluation client's ledger: one row per attempt at a request",
}
REDACTED = "[redacted]"


def evals_path(home: Path) -> Path:
    return Path(home) / EVALS_DIR / EVALS_FILE


def writer_lock(evals_dir: Path) -> FileLock:
    """The lock every writer of a home's evaluations holds (the store while an eval plays,
    the marts' dbt build): one at a time, the others refused naming the holder."""
    evals_dir = Path(evals_dir)
    return FileLock(
        evals_dir / LOCK_FILE,
        busy=lambda holder: (
            f"the evaluations in {evals_dir} are being written by another "
            f"eval ({holder}); wait for it to finish or stop it"
        ),
    )


def read_evals(path: Path) -> Any:
    """The evaluations database at `path`, open read-only, or EvalError saying why not: DuckDB
    lets no other process open a file while one writes it (an eval playing, the marts'
    build)."""
    import duckdb

    try:
        return duckdb.connect(str(path), read_only=True)
    except duckdb.Error as exc:
        raise EvalError(
            f"cannot read {path} now (an eval or a build of the marts may be writing it: wait "
            f"for it to finish): {exc}"
        ) from None


def now() -> datetime:
    return datetime.now(UTC)


def _ddl(
    table: str, columns: Sequence[tuple[str, str, str]], existing: Sequence[str] = ()
) -> list[str]:
    """The statements that make `table` as this version has it: created, or (holding the
    columns `existing`, written by an earlier version) given the columns it lacks."""
    if existing:
        out = [
            f"ALTER TABLE {table} ADD COLUMN {name} {kind}"
            for name, kind, _ in columns
            if name not in existing
        ]
    else:
        body = ", ".join(
            f"{name} {kind}" + (" PRIMARY KEY" if i == 0 else "")
            for i, (name, kind, _) in enumerate(columns)
        )
        out = [f"CREATE TABLE {table} ({body})"]
    out.append(f"COMMENT ON TABLE {table} IS {_quote(TABLE_DESCRIPTIONS[table])}")
    out += [f"COMMENT ON COLUMN {table}.{name} IS {_quote(text)}" for name, _, text in columns]
    return out


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


class EvalStore:
    """The evaluations database, open for writing by this process and by no other while it
    is: the store holds `evals/.evals.lock` (synthesis/file_lock.py) from open to close, so a
    second eval of the same home (from the command line or a Dagster run) is refused at
    once, naming the eval that writes, instead of failing on DuckDB's own file lock.
    Thread-safe: the episodes of a run finish on many threads, each written at once."""

    def __init__(self, path: Path, *, secrets: Iterable[str | None] = ()) -> None:
        import duckdb

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._file_lock = writer_lock(self.path.parent)
        try:
            self._file_lock.acquire()
        except Locked as exc:
            raise EvalError(str(exc)) from None
        try:
            self.con = duckdb.connect(str(self.path))
        except duckdb.IOException as exc:
            self._file_lock.release()
            raise EvalError(
                f"cannot open {self.path} for writing (is it open in another program?): {exc}"
            ) from None
        self._lock = threading.Lock()
        self._secrets = [s for s in secrets if s]
        try:
            self._prepare()
        except BaseException:
            # A store that never opened holds no lock: the next eval of a long-lived process
            # (the Dagster run host) must not find it taken.
            self.close()
            raise

    def _prepare(self) -> None:
        """The tables as this version has them, and the runs whose process died marked."""
        with self._lock:
            for table, columns in TABLES.items():
                existing = [
                    name
                    for (name,) in self.con.execute(
                        "SELECT column_name FROM duckdb_columns() WHERE table_name = ?", [table]
                    ).fetchall()
                ]
                for statement in _ddl(table, columns, existing):
                    self.con.execute(statement)
            # Only one process writes the file at a time: a run still "running" is one
            # whose process died (killed, the machine restarted) before it could say so.
            self.con.execute("UPDATE eval_runs SET status = 'killed' WHERE status = 'running'")

    def close(self) -> None:
        with self._lock:
            self.con.close()
        self._file_lock.release()

    def __enter__(self) -> EvalStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # ------------------------------------------------------------------ writing

    def _scrub(self, value: Any) -> Any:
        if isinstance(value, str):
            for secret in self._secrets:
                value = value.replace(secret, REDACTED)
        return value

    def _upsert(self, table: str, row: Mapping[str, Any]) -> None:
        names = [name for name, _, _ in TABLES[table]]
        unknown = set(row) - set(names)
        if unknown:
            raise ValueError(f"{table} has no columns {sorted(unknown)}")
        values = [self._scrub(row.get(name)) for name in names]
        marks = ", ".join("?" for _ in names)
        self.con.execute(
            f"INSERT OR REPLACE INTO {table} ({', '.join(names)}) VALUES ({marks})", values
        )

    def start_run(self, row: Mapping[str, Any]) -> None:
        with self._lock:
            self._upsert("eval_runs", {**row, "schema_version": SCHEMA_VERSION})

    def update_run(self, run_id: str, **fields: Any) -> None:
        names = [name for name, _, _ in RUNS]
        unknown = set(fields) - set(names)
        if unknown:
            raise ValueError(f"eval_runs has no columns {sorted(unknown)}")
        sets = ", ".join(f"{name} = ?" for name in fields)
        with self._lock:
            self.con.execute(
                f"UPDATE eval_runs SET {sets} WHERE run_id = ?",
                [self._scrub(v) for v in fields.values()] + [run_id],
            )

    def write_episode(
        self, row: Mapping[str, Any], calls: Sequence[Mapping[str, Any]] = ()
    ) -> None:
        """One finished episode and the ledger rows that came with it, in one transaction:
        committed before this returns, so a killed eval keeps it."""
        with self._lock:
            self.con.execute("BEGIN TRANSACTION")
            try:
                self._upsert("eval_episodes", row)
                for call in calls:
                    self._upsert("eval_llm_calls", call)
                self.con.execute("COMMIT")
            except BaseException:
                self.con.execute("ROLLBACK")
                raise

    def write_calls(self, calls: Sequence[Mapping[str, Any]]) -> None:
        if not calls:
            return
        with self._lock:
            self.con.execute("BEGIN TRANSACTION")
            try:
                for call in calls:
                    self._upsert("eval_llm_calls", call)
                self.con.execute("COMMIT")
            except BaseException:
                self.con.execute("ROLLBACK")
                raise

    # ------------------------------------------------------------------ reading

    def recorded(self, keys: Iterable[str]) -> set[str]:
        """Which of `keys` are episodes already recorded without an error."""
        wanted = sorted(set(keys))
        if not wanted:
            return set()
        with self._lock:
            self.con.execute("CREATE OR REPLACE TEMP TABLE _wanted (episode_key VARCHAR)")
            self.con.executemany("INSERT INTO _wanted VALUES (?)", [[k] for k in wanted])
            found = self.con.execute(
                "SELECT e.episode_key FROM eval_episodes e JOIN _wanted w USING (episode_key) "
                "WHERE e.error IS NULL"
            ).fetchall()
            self.con.execute("DROP TABLE _wanted")
        return {k for (k,) in found}

    def episodes(self, keys: Iterable[str]) -> list[dict[str, Any]]:
        """The recorded episodes of `keys` (without their transcripts), by key."""
        wanted = sorted(set(keys))
        if not wanted:
            return []
        columns = [name for name, _, _ in EPISODES if name != "messages_json"]
        with self._lock:
            self.con.execute("CREATE OR REPLACE TEMP TABLE _wanted (episode_key VARCHAR)")
            self.con.executemany("INSERT INTO _wanted VALUES (?)", [[k] for k in wanted])
            cursor = self.con.execute(
                f"SELECT {', '.join('e.' + c for c in columns)} FROM eval_episodes e "
                "JOIN _wanted w USING (episode_key) ORDER BY e.env_id, e.scenario_id, e.attempt"
            )
            rows = [dict(zip(columns, r, strict=True)) for r in cursor.fetchall()]
            self.con.execute("DROP TABLE _wanted")
        return rows
