"""What a session plays (`Target`): an environment file or module, an environment a build
published, or the environment of a task line of a built RL shard."""

from __future__ import annotations

import argparse
import ast
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from orchestration.player.options import usage
from sandboxes.errors import SandboxError
from sandboxes.source import EnvSource
from synthesis import codec
from synthesis.environments.analysis import AnalysisError, analyze_class

# Where the build's IO manager keeps each asset's value (orchestration/io_managers.py).
ARTIFACTS = "artifacts"


# How many valid ids an "unknown id" message lists.
FEW = 5


@dataclass
class Target:
    """What a session plays: the code, where it starts, and what we know of its tools."""

    source: EnvSource
    code: str
    state: dict[str, Any] | None = None
    # name, kind and OpenAI schema per tool; None: analyse the code once the worker says
    # which class it loaded.
    tools: list[dict[str, Any]] | None = None
    compiled: bool = False  # our compiler wrote it: any backend may run it
    entropy_seed: int = 0
    task: str | None = None  # with --scenario or --task: what the agent is asked
    # A multi-turn task's simulated user (its `user` record, synthesis/tasks/dialogue.py):
    # the agent is told only the record's opening and asks the user the rest. None: the
    # task is single-turn (or there is no task).
    user: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)  # what was chosen, for the user


def resolve_target(options: argparse.Namespace) -> Target:
    if options.env_id is not None:
        target = _built_target(options)
    elif options.task is not None:
        target = _task_target(options.task)
    else:
        target = _file_target(options)
    if options.state is not None:
        target.state = _read_state(options.state)
        if options.source is None:  # instead of the build's state: say so
            target.notes.append(f"initial state from {options.state}")
    return target


def _file_target(options: argparse.Namespace) -> Target:
    try:
        source = EnvSource.parse(
            options.source, options.class_name, options.loader or "auto", options.dumper or "auto"
        )
        if source.path is not None and not Path(source.path).is_file():
            raise SandboxError(f"no such environment file: {source.path}")
        code = source.read_code()  # also proves a module source exists
        if source.class_name is None:
            _require_single_class(code)
    except SandboxError as exc:
        raise usage(str(exc)) from None
    return Target(source, code)


def _require_single_class(code: str) -> None:
    """Without --class the source must define one public class; parsing is not running it."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return  # the environment's own fault: reported by the sandbox as a failed load
    public = [
        node.name
        for node in tree.body
        if isinstance(node, ast.ClassDef) and not node.name.startswith("_")
    ]
    if len(public) != 1:
        raise SandboxError(
            f"the source defines {len(public)} public classes {public}; choose one with --class"
        )


def _read_json(path: Path, what: str) -> Any:
    try:
        return codec.read_json(path)
    except OSError as exc:
        raise usage(f"cannot read {what} {path}: {exc.strerror}") from None
    except ValueError as exc:  # orjson's decode error
        raise usage(f"{what} {path} is not JSON: {exc}") from None


def _read_state(path: Path) -> dict[str, Any]:
    state = _read_json(path, "state")
    looks_like = _not_a_state(state)
    if looks_like is not None:
        raise usage(
            f"--state {path} is {looks_like}, not one state: pass a file holding one state "
            "object, or pick a built one with --home DIR --env ENV_ID --state-id ID "
            "(or --scenario ID)"
        )
    return state


def _not_a_state(value: Any) -> str | None:
    """What `value` is when it cannot be one state, else None.

    The files a build writes near its states hold several of them (a states file is a list,
    an initial_states artifact is {"states": [...]}) or one wrapped in its record; loaded as
    a state, each gives an environment with nothing in it, silently.
    """
    if isinstance(value, list):
        return f"a JSON list of {_count(value, 'item')} (a states file: a list of states)"
    if not isinstance(value, dict):
        return f"a JSON {type(value).__name__}, not an object"
    states = value.get("states")
    if isinstance(states, list) and (set(value) <= {"states", "error"} or _records(states)):
        return f'an initial_states artifact ({{"states": [...]}} with {_count(states, "state")})'
    if {"state_id", "env_id", "state"} <= set(value):
        return 'an initial state record (the state is its "state" value)'
    if {"scenario_id", "initial_state"} <= set(value):
        return "a scenario record"
    return None


def _count(items: list[Any], noun: str) -> str:
    return f"{len(items)} {noun}{'' if len(items) == 1 else 's'}"


def _records(items: list[Any]) -> bool:
    return bool(items) and all(isinstance(i, dict) and "state" in i for i in items)


# --------------------------------------------------------------------------- built environments


def _built_target(options: argparse.Namespace) -> Target:
    from synthesis.config import envfoundry_home

    home = (options.home or envfoundry_home()).resolve()
    with Published(home) as published:
        row = published.environment(options.env_id)
        notes: list[str] = []
        target = Target(
            source=_built_source(home, row, notes),
            code=row["code"],
            tools=published.tools(options.env_id),
            compiled=row["source"] == "programmatic",
            notes=notes,
        )
        if row["status"] != "accepted":
            target.notes.append(f"environment {options.env_id} is {row['status']}: {row['reason']}")
        if options.scenario is not None:
            _start_in_scenario(target, published.scenario(options.env_id, options.scenario))
        elif options.state is None:
            _start_in_state(target, published, options.env_id, options.state_id)
    return target


def _start_in_scenario(target: Target, row: dict[str, Any]) -> None:
    from synthesis.environments.runtime import episode_seed

    target.state = codec.loads(row["initial_state_json"])
    provenance = codec.loads(row["provenance_json"])
    # The build's rule for a scenario's world, so generated ids and times come out as they did.
    target.entropy_seed = episode_seed(
        SimpleNamespace(scenario_id=row["scenario_id"], provenance=provenance)
    )
    target.task = row["task_text"]
    user_json = row.get("user_json")  # a warehouse from before multi-turn tasks has none
    target.user = codec.loads(user_json) if user_json else None
    status = row["status"] if row["status"] == "published" else f"{row['status']}: {row['reason']}"
    target.notes.append(
        f"scenario {row['scenario_id']} ({status}), initial state {row['state_id']}"
    )


def _start_in_state(
    target: Target, published: Published, env_id: str, state_id: str | None
) -> None:
    chosen, count = published.state(env_id, state_id)
    target.state = codec.loads(chosen["state_json"])
    if state_id is None:
        target.notes.append(
            f"initial state {chosen['state_id']} (the first of {count}; choose with --state-id "
            "or --scenario)"
        )
    else:
        target.notes.append(f"initial state {chosen['state_id']}")


def _built_source(home: Path, row: dict[str, Any], notes: list[str]) -> EnvSource:
    """The EnvSource the build used, by the build's own rule (synthesis.environments.runtime)."""
    from synthesis.environments.runtime import sandbox_source
    from synthesis.export.warehouse import environment_of_row
    from synthesis.models import EnvOrigin

    origin = None
    if row["source"] != "programmatic":
        origin = _recorded_origin(home, row)
        if origin is None:
            # The warehouse keeps the code, not how it was loaded; file sources (the usual
            # case) load with the default loader and dumper, which is what this does.
            notes.append(
                f"no {ARTIFACTS}/environments/{row['env_id']}.json matching the published "
                "code: loading its source text with the default loader and dumper"
            )
            origin = EnvOrigin(kind="code")
    return sandbox_source(environment_of_row(row, tools=[], origin=origin))


def _recorded_origin(home: Path, row: dict[str, Any]) -> Any:
    """How the build loaded a foreign class (module or text, loader, dumper), from the
    `environments` artifact, when that artifact is of the published code.

    Artifacts live beside the datasets, so a later build that was not published may have
    rewritten them; the code hash tells whether this one describes the published class.
    """
    from synthesis.models import EnvOrigin

    path = home / ARTIFACTS / "environments" / f"{row['env_id']}.json"
    try:
        recorded = codec.read_json(path)
    except (OSError, ValueError):
        return None
    if not isinstance(recorded, dict) or recorded.get("code_sha256") != row["code_sha256"]:
        return None
    try:
        return EnvOrigin.model_validate(recorded.get("origin"))
    except ValueError:
        return None


class Published:
    """The home's published dataset: its warehouse, through the `current` link, read-only."""

    def __init__(self, home: Path) -> None:
        import duckdb

        from synthesis.export.datasets import current_dir
        from synthesis.export.warehouse import WAREHOUSE_FILE

        current = current_dir(home)
        if current is None:
            raise usage(
                f"no published dataset in {home} (no 'current' link): "
                f"build one with `envfoundry build --home {home}`"
            )
        path = current / WAREHOUSE_FILE
        try:
            self.con = duckdb.connect(str(path), read_only=True)
        except duckdb.Error as exc:
            raise usage(f"cannot open the published warehouse {path}: {exc}") from None
        self.home = home
        self._error = duckdb.Error

    def __enter__(self) -> Published:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.con.close()

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        try:
            cursor = self.con.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except self._error as exc:
            raise usage(f"cannot read the published warehouse of {self.home}: {exc}") from None

    def environment(self, env_id: str) -> dict[str, Any]:
        found = self.rows("SELECT * FROM environments WHERE env_id = ?", env_id)
        if not found:
            known = [r["env_id"] for r in self.rows("SELECT env_id FROM environments ORDER BY 1")]
            raise usage(
                f"unknown environment {env_id!r} in {self.home}; environments: {few(known)}"
            )
        return found[0]

    def tools(self, env_id: str) -> list[dict[str, Any]]:
        return [
            {"name": r["tool_name"], "kind": r["kind"], "schema": codec.loads(r["schema_json"])}
            for r in self.rows(
                "SELECT tool_name, kind, schema_json FROM tools WHERE env_id = ? ORDER BY 1",
                env_id,
            )
        ]

    def scenario(self, env_id: str, scenario_id: str) -> dict[str, Any]:
        found = self.rows("SELECT * FROM scenarios WHERE scenario_id = ?", scenario_id)
        if found and found[0]["env_id"] == env_id:
            return found[0]
        known = self._ids("scenario_id", "scenarios", env_id)
        elsewhere = f" (it is a scenario of {found[0]['env_id']})" if found else ""
        raise usage(
            f"unknown scenario {scenario_id!r} for environment {env_id}{elsewhere}; "
            f"its scenarios: {few(known)}"
        )

    def state(self, env_id: str, state_id: str | None) -> tuple[dict[str, Any], int]:
        """The initial state `state_id` (None: the first) and how many the environment has."""
        states = self.rows(
            "SELECT state_id, state_json FROM initial_states WHERE env_id = ? ORDER BY 1", env_id
        )
        chosen = [s for s in states if state_id is None or s["state_id"] == state_id]
        if chosen:
            return chosen[0], len(states)
        if state_id is None:
            raise usage(f"environment {env_id} has no initial states in {self.home}")
        raise usage(
            f"unknown initial state {state_id!r} for environment {env_id}; "
            f"its states: {few([s['state_id'] for s in states])}"
        )

    def _ids(self, column: str, table: str, env_id: str) -> list[str]:
        rows = self.rows(f"SELECT {column} FROM {table} WHERE env_id = ? ORDER BY 1", env_id)
        return [r[column] for r in rows]


def few(ids: list[str]) -> str:
    if not ids:
        return "none"
    shown = ", ".join(ids[:FEW])
    return shown if len(ids) <= FEW else f"{shown} and {len(ids) - FEW} more"


# --------------------------------------------------------------------------- RL shard tasks


def _task_target(reference: str) -> Target:
    """The environment of one task line (synthesis/export/rl_tasks.py), as a trainer gets it.

    The line's `compiled_by_us` is a claim in a file, not the project's proof (recompiling
    the spec, which the line does not carry), so its code always counts as foreign: fail
    closed. The world (clock, randomness) is the scenario's by the build's rule for its id;
    a task planned by exploring the sandbox kept its plan's own seed, which the line omits.
    """
    from synthesis.environments.runtime import episode_seed
    from synthesis.hashing import sha256_text

    path, number = _task_reference(reference)
    task = _task_line(path, number)
    where = f"{path}:{number}"
    environment = task["environment"]
    relative = environment.get("path")
    if not isinstance(relative, str) or relative.startswith("/") or ".." in relative.split("/"):
        raise usage(f"{where}: bad environment code path {relative!r}")
    # A shard is rl/SPLIT.jsonl; the line names its code relative to the dataset folder.
    code_path = path.resolve().parent.parent / relative
    try:
        code = code_path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise usage(f"{where}: cannot read its environment's code {code_path}: {exc}") from None
    expected = environment.get("sha256")
    if expected and sha256_text(code) != expected:
        raise usage(f"{where}: {code_path} is not the code the task names (sha256 differs)")
    try:
        kinds = {t["name"]: t["kind"] for t in analyze_class(code, environment.get("class_name"))}
    except AnalysisError:
        kinds = {}
    tools = [
        {"name": name, "kind": kinds.get(name, "tool"), "schema": schema}
        for schema in task["tools"]
        if (name := (schema.get("function") or schema).get("name"))
    ]
    source = EnvSource(
        code=code,
        class_name=environment.get("class_name"),
        loader=environment.get("loader") or "auto",
        dumper=environment.get("dumper") or "auto",
    )
    return Target(
        source,
        code,
        state=task["initial_state"],
        tools=tools,
        entropy_seed=episode_seed(task["scenario_id"]),
        task=task["task_text"],
        user=task.get("user") or None,
        notes=[f"task {task['scenario_id']} of environment {task['env_id']} ({where})"],
    )


def _task_reference(reference: str) -> tuple[Path, int]:
    """(shard file, line number from 1) of `FILE[:LINE]`."""
    name, colon, line = reference.rpartition(":")
    if not colon or not line.isdigit():
        name, line = reference, "1"
    if int(line) < 1:
        raise usage(f"--task {reference}: lines are numbered from 1")
    return Path(name), int(line)


def _task_line(path: Path, number: int) -> dict[str, Any]:
    try:
        with path.open("rb") as lines:
            found = next((line for n, line in enumerate(lines, 1) if n == number), None)
    except OSError as exc:
        raise usage(f"cannot read --task {path}: {exc.strerror}") from None
    if found is None:
        raise usage(f"--task {path} has no line {number}")
    try:
        task = codec.loads(found)
    except ValueError as exc:
        raise usage(f"--task {path}:{number} is not JSON: {exc}") from None
    missing = [
        key
        for key in ("scenario_id", "env_id", "task_text", "tools", "environment", "initial_state")
        if key not in (task if isinstance(task, dict) else {})
    ]
    if missing or not isinstance(task.get("environment"), dict):
        raise usage(
            f"--task {path}:{number} is not a task line of an RL shard (rl/SPLIT.jsonl): "
            f"it lacks {', '.join(missing) or 'an environment object'}"
        )
    return task
