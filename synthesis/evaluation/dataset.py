"""The published tasks of a home's current dataset, as the build's agent stage plays them.

A home's `current` link names its last published dataset, `datasets/<id>/` (relative, so a
copied or moved home still resolves it). Its `warehouse.duckdb` holds every published task
(`scenarios` with `status = 'published'`: exactly the lines of the RL shards, with their
`split`), its checks (`checks.spec_json`) and its environment (`environments`, `tools`,
`env_specs`); `shards/manifest.json` names every file of the dataset, and its sha256 is what
an evaluation says it was run on.

What the warehouse does not keep is taken where the build keeps it:

* the environment model (`EnvModel`, whose title, description and rules make the system
  prompt): exact from the spec for a class our compiler wrote; for other code, the
  `artifacts/env_models/<env>.json` the build wrote when its system prompt is the one the
  dataset's own episodes were shown (the oracle's trajectory), else the model from the code;
* the tools' order (the order of the `tools` the model is offered): the dataset's own
  episodes' order;
* a state the class reports otherwise than it was loaded from (`Scenario.initial_dump`,
  which the checks compare against; only code we did not compile has one): asked of the
  class in the sandbox, as the build and the shipped reward module do. Such code runs only
  where the build would run it (`sandbox_refusal`: bwrap or docker, or `process` by name).

Everything is read with the warehouse opened read-only, the dataset's files never written.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.environments.model import EnvModel, model_of
from synthesis.environments.runtime import compiled_by_us, sandbox_refusal
from synthesis.export.datasets import CURRENT, current_dir
from synthesis.export.warehouse import WAREHOUSE_FILE, environment_of_row
from synthesis.hashing import sha256_file, sha256_text
from synthesis.models import Check, Environment, EnvOrigin, EnvSpec, Scenario, ToolInfo
from synthesis.rollouts.episodes import openai_tools, system_prompt

MANIFEST = Path("shards") / "manifest.json"
SPLITS = ("test", "train", "all")
ORACLE = "oracle"
ARTIFACTS = "artifacts"


class EvalError(RuntimeError):
    """An evaluation that cannot run as asked (no dataset, unknown tasks, a locked database)."""


@dataclass(frozen=True)
class DatasetRef:
    """One published dataset: where it is, its id (its folder's name) and its manifest's
    sha256 (None for a dataset without shards)."""

    home: Path
    path: Path
    dataset_id: str
    manifest_sha256: str | None

    @property
    def warehouse(self) -> Path:
        return self.path / WAREHOUSE_FILE


@dataclass(frozen=True)
class TaskRef:
    """One published task as an evaluation lists it (what every episode row repeats)."""

    scenario_id: str
    env_id: str
    archetype: str
    origin: str  # synthesized (programmatic or llm) | foreign (a class brought with --envs)
    kind: str  # feasible | infeasible
    family: str | None  # chain, ask, conditional, infeasible ... (the planner's family)
    split: str
    multi_turn: bool
    structural_tier: str | None
    final_tier: str | None  # the tier the dataset ships (mart_task_difficulty), if recorded
    answer_kind: str | None  # state | reply, if recorded


@dataclass
class LoadedEnvironment:
    """What the episodes of one environment are played with."""

    env: Environment
    model: EnvModel
    scenarios: dict[str, Scenario]
    checks: dict[str, list[Check]]
    notes: list[str] = field(default_factory=list)


def current_dataset(home: Path) -> DatasetRef:
    """The dataset the home's `current` link names, or EvalError saying how to get one."""
    path = current_dir(home)
    if path is None:
        raise EvalError(
            f"no published dataset in {home} (no '{CURRENT}' link): build one with "
            f"`envfoundry build --home {home}`"
        )
    if not (path / WAREHOUSE_FILE).is_file():
        raise EvalError(f"the published dataset {path} holds no {WAREHOUSE_FILE}")
    manifest = path / MANIFEST
    digest = sha256_file(manifest) if manifest.is_file() else None
    return DatasetRef(home=home, path=path, dataset_id=path.name, manifest_sha256=digest)


class _Warehouse:
    """The dataset's warehouse, opened read-only for one read."""

    def __init__(self, ref: DatasetRef) -> None:
        import duckdb

        try:
            self.con = duckdb.connect(str(ref.warehouse), read_only=True)
        except duckdb.Error as exc:
            raise EvalError(f"cannot open the published warehouse {ref.warehouse}: {exc}") from None

    def __enter__(self) -> _Warehouse:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.con.close()

    def rows(self, sql: str, params: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.con.execute(sql, list(params))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def has(self, table: str) -> bool:
        found = self.con.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = ?", [table]
        ).fetchone()
        return bool(found and found[0])


def published_tasks(ref: DatasetRef) -> list[TaskRef]:
    """Every published task of the dataset, by environment then scenario id."""
    with _Warehouse(ref) as wh:
        tiers = wh.has("mart_task_difficulty")
        extra = (
            ", d.final_tier AS final_tier, d.task_answer_kind AS answer_kind"
            if tiers
            else ", NULL AS final_tier, NULL AS answer_kind"
        )
        join = "LEFT JOIN mart_task_difficulty d ON d.scenario_id = s.scenario_id" if tiers else ""
        rows = wh.rows(
            "SELECT s.scenario_id, s.env_id, e.archetype, e.source, s.kind, s.split, "
            "s.provenance_json, s.difficulty_json, s.user_json IS NOT NULL AS multi_turn"
            f"{extra} FROM scenarios s JOIN environments e ON e.env_id = s.env_id {join} "
            "WHERE s.status = 'published' ORDER BY s.env_id, s.scenario_id"
        )
    out = []
    for row in rows:
        provenance = codec.loads(row["provenance_json"]) if row["provenance_json"] else {}
        difficulty = codec.loads(row["difficulty_json"]) if row["difficulty_json"] else {}
        out.append(
            TaskRef(
                scenario_id=row["scenario_id"],
                env_id=row["env_id"],
                archetype=row["archetype"],
                origin=origin_of(row["source"]),
                kind=row["kind"],
                family=provenance.get("family"),
                split=row["split"],
                multi_turn=bool(row["multi_turn"]),
                structural_tier=difficulty.get("tier"),
                final_tier=row["final_tier"] or difficulty.get("final_tier"),
                answer_kind=row["answer_kind"],
            )
        )
    return out


def origin_of(source: str | None) -> str:
    """An environment's origin as the marts compare them: foreign (a class brought with
    --envs: another benchmark's backend, a user's own) or synthesized (the build made it)."""
    return "foreign" if source == "foreign" else "synthesized"


def read_task_ids(path: Path) -> list[str]:
    """The scenario ids of a tasks file: one a line; blank lines and `#` comments skipped."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise EvalError(f"cannot read the tasks file {path}: {exc.strerror}") from None
    ids = []
    for line in text.splitlines():
        line = line.split("#", 1)[0].strip()
        if line and line not in ids:
            ids.append(line)
    return ids


def select_tasks(
    tasks: Sequence[TaskRef],
    *,
    split: str = "test",
    task_ids: Iterable[str] | None = None,
    limit: int | None = None,
) -> list[TaskRef]:
    """The tasks an evaluation plays, by environment then scenario id: those of `split`
    ("all": both), only `task_ids` when given (each must be a published task), and with
    `limit` only that many, the first in a fixed order that spreads them over the
    environments (by a hash of the scenario id): the same sample every time, so a limited
    eval run again (or with a larger limit) reuses what it recorded."""
    if split not in SPLITS:
        raise EvalError(f"unknown split {split!r}: choose one of {', '.join(SPLITS)}")
    chosen = list(tasks)
    if task_ids is not None:
        wanted = list(task_ids)
        known = {t.scenario_id for t in tasks}
        unknown = [t for t in wanted if t not in known]
        if unknown:
            shown = ", ".join(unknown[:5]) + (
                f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
            )
            raise EvalError(f"not a published task of this dataset: {shown}")
        keep = set(wanted)
        chosen = [t for t in chosen if t.scenario_id in keep]
    if split != "all":
        chosen = [t for t in chosen if t.split == split]
    if limit is not None:
        sample = sorted(chosen, key=lambda t: sha256_text(t.scenario_id))[: max(0, limit)]
        kept = {t.scenario_id for t in sample}
        chosen = [t for t in chosen if t.scenario_id in kept]
    return chosen


def split_counts(tasks: Iterable[TaskRef]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for t in tasks:
        counts[t.split] = counts.get(t.split, 0) + 1
    return dict(sorted(counts.items()))


# --------------------------------------------------------------------------- environments


def load_environment(
    ref: DatasetRef, env_id: str, scenario_ids: Iterable[str], *, backend: str = "auto"
) -> LoadedEnvironment:
    """The environment `env_id` of the dataset and the published scenarios `scenario_ids` of
    it with their checks, ready for `synthesis.rollouts.attempts.llm_attempt`."""
    wanted = sorted(set(scenario_ids))
    with _Warehouse(ref) as wh:
        env_rows = wh.rows(
            "SELECT e.*, s.spec_json FROM environments e "
            "LEFT JOIN env_specs s ON s.env_id = e.env_id WHERE e.env_id = ?",
            [env_id],
        )
        if not env_rows:
            raise EvalError(f"environment {env_id} is not in the dataset's warehouse")
        tool_rows = wh.rows(
            "SELECT tool_name, kind, schema_json, reads, writes FROM tools WHERE env_id = ? "
            "ORDER BY tool_name",
            [env_id],
        )
        shown = wh.rows(
            "SELECT messages_json, tools_json FROM trajectories WHERE env_id = ? AND policy = ? "
            "ORDER BY traj_id LIMIT 1",
            [env_id, ORACLE],
        )
        marks = ", ".join("?" for _ in wanted) or "NULL"
        scenario_rows = wh.rows(
            f"SELECT * FROM scenarios WHERE env_id = ? AND scenario_id IN ({marks}) "
            "AND status = 'published' ORDER BY scenario_id",
            [env_id, *wanted],
        )
        check_rows = wh.rows(
            f"SELECT check_id, scenario_id, description, spec_json FROM checks "
            f"WHERE scenario_id IN ({marks}) ORDER BY check_id",
            wanted,
        )
    notes: list[str] = []
    recorded_system, recorded_tools = _recorded_prompt(shown)
    env = _environment(env_rows[0], tool_rows, recorded_tools)
    model = _model(ref.home, env, recorded_system, notes)
    if recorded_tools is not None and openai_tools(env) != recorded_tools:
        notes.append(f"{env_id}: the tool schemas differ from those the dataset's episodes had")
    missing = sorted(set(wanted) - {r["scenario_id"] for r in scenario_rows})
    if missing:
        raise EvalError(f"not published tasks of {env_id}: {', '.join(missing)}")
    scenarios = {r["scenario_id"]: _scenario(r) for r in scenario_rows}
    if not compiled_by_us(env):
        # Fail closed, by the build's rule: code we did not compile runs under bwrap or
        # docker, and on the plain process backend only when it is named.
        refusal = sandbox_refusal(backend)
        if refusal is not None:
            raise EvalError(f"{env_id}: {refusal}")
        _add_initial_dumps(env, scenarios.values(), backend, notes)
    checks: dict[str, list[Check]] = {sid: [] for sid in scenarios}
    for row in check_rows:
        checks[row["scenario_id"]].append(
            Check(
                check_id=row["check_id"],
                scenario_id=row["scenario_id"],
                description=row["description"],
                spec=codec.loads(row["spec_json"]),
            )
        )
    unchecked = sorted(sid for sid, found in checks.items() if not found)
    if unchecked:
        raise EvalError(f"published tasks without checks in the warehouse: {unchecked}")
    return LoadedEnvironment(env=env, model=model, scenarios=scenarios, checks=checks, notes=notes)


def _recorded_prompt(
    shown: list[dict[str, Any]],
) -> tuple[str | None, list[dict[str, Any]] | None]:
    """The system prompt and tool schemas the dataset's oracle episodes were given."""
    if not shown:
        return None, None
    messages = codec.loads(shown[0]["messages_json"]) if shown[0]["messages_json"] else []
    system = next((m.get("content") for m in messages if m.get("role") == "system"), None)
    tools = codec.loads(shown[0]["tools_json"]) if shown[0]["tools_json"] else None
    return system, tools


def _environment(
    row: dict[str, Any], tool_rows: list[dict[str, Any]], recorded: list[dict[str, Any]] | None
) -> Environment:
    tools = [
        ToolInfo(
            name=t["tool_name"],
            kind=t["kind"],
            schema=codec.loads(t["schema_json"]),
            reads=list(t["reads"] or ()),
            writes=list(t["writes"] or ()),
        )
        for t in tool_rows
    ]
    if recorded:  # the order the dataset's episodes offered them in
        order = {_tool_name(schema): i for i, schema in enumerate(recorded)}
        tools.sort(key=lambda t: (order.get(t.name, len(order)), t.name))
    return environment_of_row(
        row,
        tools=tools,
        spec=EnvSpec.model_validate_json(row["spec_json"]) if row.get("spec_json") else None,
        status=row["status"],
        audit_score=row.get("audit_score"),
        reason=row.get("reason"),
        origin=EnvOrigin.model_validate_json(row["origin_json"])
        if row.get("origin_json")
        else None,
        program_shape=row.get("program_shape"),
        split=row.get("split"),
    )


def _tool_name(schema: dict[str, Any]) -> str | None:
    return (schema.get("function") or schema).get("name")


def _model(home: Path, env: Environment, recorded: str | None, notes: list[str]) -> EnvModel:
    """The environment model whose system prompt the dataset's episodes were shown."""
    candidates: list[tuple[str, EnvModel]] = []
    stored = _stored_model(home, env)
    if stored is not None:
        candidates.append(("artifact", stored))
    candidates.append(("code", model_of(env)))
    if env.spec is not None:  # exact from the spec: the build's own model of our classes
        candidates.reverse()
    for _, model in candidates:
        if recorded is None or system_prompt(model) == recorded:
            return model
    notes.append(f"{env.env_id}: no environment model gives the system prompt of the dataset")
    return candidates[0][1]


def _stored_model(home: Path, env: Environment) -> EnvModel | None:
    """The build's `env_models` artifact of `env`, when it is of the same tools."""
    path = home / ARTIFACTS / "env_models" / f"{env.env_id}.json"
    try:
        model = EnvModel.model_validate(codec.read_json(path))
    except (OSError, ValueError):
        return None
    if model.env_id != env.env_id or {t.name for t in model.tools} != {t.name for t in env.tools}:
        return None
    return model


def _scenario(row: dict[str, Any]) -> Scenario:
    def doc(name: str) -> Any:
        value = row.get(name)
        return codec.loads(value) if value else None

    return Scenario(
        scenario_id=row["scenario_id"],
        env_id=row["env_id"],
        state_id=row["state_id"],
        kind=row["kind"],
        task_text=row["task_text"],
        initial_state=doc("initial_state_json"),
        gold_chain=doc("gold_chain_json") or [],
        gold_results=doc("gold_results_json") or [],
        final_state=doc("final_state_json"),
        split=row["split"],
        status=row["status"],
        reason=row.get("reason"),
        difficulty=doc("difficulty_json") or {},
        provenance=doc("provenance_json") or {},
        user=doc("user_json"),
    )


def _add_initial_dumps(
    env: Environment, scenarios: Iterable[Scenario], backend: str, notes: list[str]
) -> None:
    """Each scenario's `initial_dump`: what the class reports right after loading its state,
    when that differs from the state (code we did not compile may normalise it)."""
    from synthesis.environments.foreign_states import ForeignStateError, load_and_dump

    dumps: dict[str, Any] = {}
    for scenario in scenarios:
        key = codec.dumps_str(scenario.initial_state)
        if key not in dumps:
            try:
                dumps[key] = load_and_dump(env, scenario.initial_state, backend=backend)
            except ForeignStateError as exc:
                notes.append(f"{env.env_id}: its state could not be read after loading: {exc}")
                dumps[key] = None
        dump = dumps[key]
        if dump is not None and dump != scenario.initial_state:
            scenario.initial_dump = dump
