"""`envfoundry env run` and `envfoundry env shell`: run or play an environment in the sandbox.

The environment is a file or module (`--source`, with `--state FILE`), one a build
published (`--env ENV_ID`, from the warehouse of `--home`'s current dataset, with
`--scenario ID` or `--state-id ID`; default: its first initial state), or the one a task line
of a built RL shard names (`--task rl/SPLIT.jsonl:LINE`, its bundled code and initial state).
A built environment runs exactly as the build ran it: the same source, class, loader and
dumper, and for a scenario the same world (clock and randomness). Code we did not compile runs
only in a real sandbox (bwrap or docker) unless `--backend process` is asked for by name, as in
the build. `envfoundry env serve` (orchestration/env_mcp.py) serves the same targets to MCP
clients with what this module shares: options, targets, the sandbox and argument checks.

Calls are checked against the tool's JSON schema before they reach the sandbox, so a missing,
unexpected or mistyped argument is a usage error naming the tool and the parameter.

orchestration.cli passes the arguments after `env run` / `env shell`. Exit status of
`env run` (EXIT_STATUS below, the --help epilog):
  0  every call returned; a domain error the tool returns ({"success": false, ...}) is a result
  2  usage error: bad options, an unreadable or invalid calls or state file, an unknown id,
     no published dataset, no real sandbox for foreign code, or a call refused by argument
     validation (that call is reported on its line and not run; the others still run)
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call raised, hung past --timeout, or the worker was killed
When several apply, the first of 3, 4, 2 in that order is the status. Each non-zero status
says why in one line on stderr; `env run` also prints it in its final JSON line.

`env shell` (SHELL_EXIT_STATUS) prints an invalid call's problem and goes on; it exits 0 at
quit or end of input, 2 on a usage error, 3 when the environment cannot load or dump its
state, 4 when a call hung or killed the worker (the session ends there).
"""

from __future__ import annotations

import argparse
import ast
import sys
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any, TextIO

from sandboxes.backends import BACKEND_NAMES, get_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.session import CallResult, Session, open_session
from sandboxes.source import LOADERS, EnvSource
from sandboxes.statediff import diff_states
from sandboxes.workspace import workspace_tools_source
from synthesis import codec
from synthesis.environments.analysis import AnalysisError, analyze_class

OK = 0
USAGE_ERROR = 2
LOAD_ERROR = 3
CALL_CRASHED = 4

EXIT_STATUS = """exit status:
  0  every call returned (a domain error the tool returns, {"success": false}, is a result)
  2  usage error: bad options, unreadable or invalid calls/state file, unknown id, no
     published dataset, or a call refused by argument validation (reported on its line)
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call raised, hung past --timeout, or the worker was killed
  when several apply: 3, then 4, then 2"""

SHELL_EXIT_STATUS = """exit status:
  0  the session ended (quit or end of input); invalid calls and tool errors are only shown
  2  usage error: bad options, unreadable or invalid state file, unknown id, no published
     dataset
  3  the sandbox or the environment could not start, load, or dump its state
  4  a call hung past --timeout or killed the worker (the session ends there)"""

# Where the build's IO manager keeps each asset's value (orchestration/io_managers.py).
ARTIFACTS = "artifacts"
# How many valid ids an "unknown id" message lists.
FEW = 5


class Stop(Exception):
    """End the command with `code`, saying `message` (if any) in one line on stderr."""

    def __init__(self, code: int, message: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def _usage(message: str) -> Stop:
    return Stop(USAGE_ERROR, message)


# --------------------------------------------------------------------------- options


def env_parser(prog: str, description: str, epilog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=prog,
        description=description,
        epilog=epilog,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument(
        "--source", help="an environment file PATH.py or a module package.module[:Class]"
    )
    where.add_argument(
        "--env",
        dest="env_id",
        metavar="ENV_ID",
        help="an environment a build published (from the warehouse of --home)",
    )
    where.add_argument(
        "--task",
        metavar="FILE[:LINE]",
        help="a task line of a built RL shard (rl/SPLIT.jsonl, LINE from 1, default 1): its "
        "environment (the bundled code beside the shard), initial state, tools and task",
    )
    parser.add_argument(
        "--home",
        type=Path,
        help="with --env: the build's home (default: $ENVFOUNDRY_HOME or ./var)",
    )
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--state", type=Path, help="initial state: a file holding one JSON object")
    start.add_argument("--state-id", help="with --env: one of its initial states")
    start.add_argument(
        "--scenario",
        help="with --env: a scenario; starts from its initial state, in its world (clock, "
        "randomness), and the shell shows its task",
    )
    parser.add_argument(
        "--class",
        dest="class_name",
        help="with --source: the class to load (default: the single public class)",
    )
    parser.add_argument("--backend", default="auto", choices=("auto", *BACKEND_NAMES))
    parser.add_argument(
        "--timeout",
        type=float,
        default=Limits.call_timeout_s,
        help="seconds per tool call before the worker is killed",
    )
    parser.add_argument(
        "--loader",
        choices=LOADERS,
        help="with --source: how the state gets in (auto: _load_scenario if the class has it, "
        "else the constructor if it asks for the state, else one attribute per key)",
    )
    parser.add_argument(
        "--dumper",
        metavar="auto|attributes|METHOD",
        help="with --source: how the final state comes out (auto: get_env_state, get_state, "
        "dump_state or export_state if the class has one, else its public attributes)",
    )
    parser.add_argument(
        "--workspace", type=Path, help="a workspace directory for file/shell environments"
    )
    return parser


def parse_options(parser: argparse.ArgumentParser, argv: list[str]) -> argparse.Namespace:
    try:
        options = parser.parse_args(argv)
    except SystemExit as exc:  # argparse has printed the usage message already
        raise Stop(int(exc.code or 0)) from None
    if options.timeout <= 0:
        raise _usage("--timeout must be positive")
    if options.env_id is None:
        given = [
            f"--{n.replace('_', '-')}"
            for n in ("home", "state_id", "scenario")
            if getattr(options, n) is not None
        ]
        if given:
            raise _usage(f"{', '.join(given)}: only with --env (an environment a build published)")
    if options.env_id is not None or options.task is not None:
        # A built environment is loaded the way the build loaded it, never otherwise.
        given = [
            f"--{n}"
            for n, v in (
                ("class", options.class_name),
                ("loader", options.loader),
                ("dumper", options.dumper),
            )
            if v is not None
        ]
        if given:
            where = "--env" if options.task is None else "--task"
            origin = "the build" if options.task is None else "the task line"
            raise _usage(f"{', '.join(given)}: with {where} these come from {origin}")
    return options


# --------------------------------------------------------------------------- what to play


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
        raise _usage(str(exc)) from None
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
        raise _usage(f"cannot read {what} {path}: {exc.strerror}") from None
    except ValueError as exc:  # orjson's decode error
        raise _usage(f"{what} {path} is not JSON: {exc}") from None


def _read_state(path: Path) -> dict[str, Any]:
    state = _read_json(path, "state")
    looks_like = _not_a_state(state)
    if looks_like is not None:
        raise _usage(
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
    with _Published(home) as published:
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
    from synthesis.runtime import episode_seed

    target.state = codec.loads(row["initial_state_json"])
    provenance = codec.loads(row["provenance_json"])
    # The build's rule for a scenario's world, so generated ids and times come out as they did.
    target.entropy_seed = episode_seed(
        SimpleNamespace(scenario_id=row["scenario_id"], provenance=provenance)
    )
    target.task = row["task_text"]
    status = row["status"] if row["status"] == "published" else f"{row['status']}: {row['reason']}"
    target.notes.append(
        f"scenario {row['scenario_id']} ({status}), initial state {row['state_id']}"
    )


def _start_in_state(
    target: Target, published: _Published, env_id: str, state_id: str | None
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
    """The EnvSource the build used, by the build's own rule (synthesis.runtime)."""
    from synthesis.models import Environment, EnvOrigin
    from synthesis.runtime import sandbox_source

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
    env = Environment(
        env_id=row["env_id"],
        topic_id=row["topic_id"],
        archetype=row["archetype"],
        kind=row["kind"],
        source=row["source"],
        class_name=row["class_name"],
        code=row["code"],
        code_sha256=row["code_sha256"],
        tools=[],
        origin=origin,
    )
    return sandbox_source(env)


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


class _Published:
    """The home's published dataset: its warehouse, through the `current` link, read-only."""

    def __init__(self, home: Path) -> None:
        import duckdb

        from synthesis.export.datasets import current_dir
        from synthesis.export.warehouse import WAREHOUSE_FILE

        current = current_dir(home)
        if current is None:
            raise _usage(
                f"no published dataset in {home} (no 'current' link): "
                f"build one with `envfoundry build --home {home}`"
            )
        path = current / WAREHOUSE_FILE
        try:
            self.con = duckdb.connect(str(path), read_only=True)
        except duckdb.Error as exc:
            raise _usage(f"cannot open the published warehouse {path}: {exc}") from None
        self.home = home
        self._error = duckdb.Error

    def __enter__(self) -> _Published:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.con.close()

    def rows(self, sql: str, *params: Any) -> list[dict[str, Any]]:
        try:
            cursor = self.con.execute(sql, list(params))
            names = [d[0] for d in cursor.description]
            return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]
        except self._error as exc:
            raise _usage(f"cannot read the published warehouse of {self.home}: {exc}") from None

    def environment(self, env_id: str) -> dict[str, Any]:
        found = self.rows("SELECT * FROM environments WHERE env_id = ?", env_id)
        if not found:
            known = [r["env_id"] for r in self.rows("SELECT env_id FROM environments ORDER BY 1")]
            raise _usage(
                f"unknown environment {env_id!r} in {self.home}; environments: {_few(known)}"
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
        raise _usage(
            f"unknown scenario {scenario_id!r} for environment {env_id}{elsewhere}; "
            f"its scenarios: {_few(known)}"
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
            raise _usage(f"environment {env_id} has no initial states in {self.home}")
        raise _usage(
            f"unknown initial state {state_id!r} for environment {env_id}; "
            f"its states: {_few([s['state_id'] for s in states])}"
        )

    def _ids(self, column: str, table: str, env_id: str) -> list[str]:
        rows = self.rows(f"SELECT {column} FROM {table} WHERE env_id = ? ORDER BY 1", env_id)
        return [r[column] for r in rows]


def _few(ids: list[str]) -> str:
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
    from synthesis.hashing import sha256_text
    from synthesis.runtime import episode_seed

    path, number = _task_reference(reference)
    task = _task_line(path, number)
    where = f"{path}:{number}"
    environment = task["environment"]
    relative = environment.get("path")
    if not isinstance(relative, str) or relative.startswith("/") or ".." in relative.split("/"):
        raise _usage(f"{where}: bad environment code path {relative!r}")
    # A shard is rl/SPLIT.jsonl; the line names its code relative to the dataset folder.
    code_path = path.resolve().parent.parent / relative
    try:
        code = code_path.read_text()
    except (OSError, UnicodeDecodeError) as exc:
        raise _usage(f"{where}: cannot read its environment's code {code_path}: {exc}") from None
    expected = environment.get("sha256")
    if expected and sha256_text(code) != expected:
        raise _usage(f"{where}: {code_path} is not the code the task names (sha256 differs)")
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
        notes=[f"task {task['scenario_id']} of environment {task['env_id']} ({where})"],
    )


def _task_reference(reference: str) -> tuple[Path, int]:
    """(shard file, line number from 1) of `FILE[:LINE]`."""
    name, colon, line = reference.rpartition(":")
    if not colon or not line.isdigit():
        name, line = reference, "1"
    if int(line) < 1:
        raise _usage(f"--task {reference}: lines are numbered from 1")
    return Path(name), int(line)


def _task_line(path: Path, number: int) -> dict[str, Any]:
    try:
        with path.open("rb") as lines:
            found = next((line for n, line in enumerate(lines, 1) if n == number), None)
    except OSError as exc:
        raise _usage(f"cannot read --task {path}: {exc.strerror}") from None
    if found is None:
        raise _usage(f"--task {path} has no line {number}")
    try:
        task = codec.loads(found)
    except ValueError as exc:
        raise _usage(f"--task {path}:{number} is not JSON: {exc}") from None
    missing = [
        key
        for key in ("scenario_id", "env_id", "task_text", "tools", "environment", "initial_state")
        if key not in (task if isinstance(task, dict) else {})
    ]
    if missing or not isinstance(task.get("environment"), dict):
        raise _usage(
            f"--task {path}:{number} is not a task line of an RL shard (rl/SPLIT.jsonl): "
            f"it lacks {', '.join(missing) or 'an environment object'}"
        )
    return task


# --------------------------------------------------------------------------- the sandbox


def open_sandbox(options: argparse.Namespace, target: Target) -> Session:
    if not target.compiled:
        _refuse_weak_sandbox(options.backend)
    try:
        get_backend(options.backend)
    except SandboxError as exc:
        raise _usage(str(exc)) from None
    try:
        return open_session(
            target.source,
            target.state,
            backend=options.backend,
            limits=Limits(call_timeout_s=options.timeout),
            workspace=options.workspace,
            entropy_seed=target.entropy_seed,
        )
    except SandboxError as exc:
        raise Stop(LOAD_ERROR, str(exc)) from None


def _refuse_weak_sandbox(backend: str) -> None:
    """Fail closed, by the build's rule: code we did not compile runs under bwrap or docker,
    and on the plain process backend only when the user names it."""
    from synthesis.runtime import sandbox_refusal

    refusal = sandbox_refusal(backend)
    if refusal is not None:
        raise _usage(refusal.replace("--sandbox process", "--backend process"))


def analysed_tools(session: Session, target: Target) -> list[dict[str, Any]]:
    """The tools with their schemas: the build's, or the analysis of the class that loaded."""
    tools = target.tools
    if tools is None:
        try:
            tools = analyze_class(target.code, session.info.get("class"))
        except AnalysisError:
            tools = []  # the worker still knows the names; arguments go unchecked
    if session.has_workspace:
        defined = {tool["name"] for tool in tools}
        builtins = analyze_class(*workspace_tools_source())
        tools = tools + [tool for tool in builtins if tool["name"] not in defined]
    return tools


def tool_parameters(tool: dict[str, Any]) -> dict[str, Any]:
    schema = tool.get("schema") or {}
    function = schema.get("function") if isinstance(schema.get("function"), dict) else schema
    return function.get("parameters") or {}


def _describe_type(schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return "one of " + " | ".join(codec.dumps_str(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "array" and schema.get("items"):
        return f"array of {_describe_type(schema['items'])}"
    if isinstance(kind, list):
        return " or ".join(kind)
    return kind or "any"


def _signature(tool: dict[str, Any]) -> str:
    """`name(a: string, b?: integer)`: `?` marks an argument that may be left out."""
    params = tool_parameters(tool)
    required = list(params.get("required") or [])
    properties = params.get("properties") or {}
    # Required arguments in the order the method declares them (stored schemas sort their
    # properties by name), then the optional ones.
    names = [n for n in required if n in properties]
    names += [n for n in properties if n not in required]
    parts = [
        f"{name}{'' if name in required else '?'}: {_describe_type(properties[name])}"
        for name in names
    ]
    return f"{tool['name']}({', '.join(parts)})"


def _takes_any_keyword(code: str) -> set[str]:
    """Methods declared with **kwargs: their schema cannot list every argument they take."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {
        node.name
        for cls in tree.body
        if isinstance(cls, ast.ClassDef)
        for node in cls.body
        if isinstance(node, ast.FunctionDef) and node.args.kwarg is not None
    }


class Arguments:
    """Checks a call against its tool's JSON schema before it reaches the sandbox, so that a
    mistake in a call is a usage error naming the tool and the parameter, not a TypeError
    raised inside the environment (which would count as the environment crashing)."""

    def __init__(self, tools: list[dict[str, Any]], worker_tools: list[str], code: str) -> None:
        self.tools = {tool["name"]: tool for tool in tools}
        # The worker's list is the truth about what can be called; a tool it has that the
        # analysis cannot see (a base class from another module) is called unchecked.
        self.names = sorted(set(worker_tools) | set(self.tools))
        self.open = _takes_any_keyword(code)

    def problem(self, tool: str, args: dict[str, Any]) -> str | None:
        """Why the call is invalid, in one line, or None."""
        if tool not in self.names:
            return f"unknown tool {tool!r}; tools: {', '.join(self.names)}"
        known = self.tools.get(tool)
        if known is None:
            return None
        params = tool_parameters(known)
        properties = params.get("properties") or {}
        required = params.get("required") or []
        missing = [name for name in required if name not in args]
        if missing:
            names = ", ".join(repr(n) for n in missing)
            plural = "s" if len(missing) > 1 else ""
            return (
                f"{tool}: missing required argument{plural} {names}; it takes {_signature(known)}"
            )
        unexpected = [name for name in args if name not in properties]
        if unexpected and tool not in self.open:
            return f"{tool}: unexpected argument {unexpected[0]!r}; it takes {_signature(known)}"
        for name, value in args.items():
            wrong = _type_problem(properties.get(name), value, name in required)
            if wrong is not None:
                return f"{tool}: argument {name!r}: {wrong}"
        return None


def _type_problem(schema: dict[str, Any] | None, value: Any, required: bool) -> str | None:
    # An optional parameter's schema cannot say it admits None (analysis drops `| None`), and
    # the default is usually None, so an explicit null is let through.
    if not schema or (value is None and not required):
        return None
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import best_match

    error = best_match(Draft202012Validator(schema).iter_errors(value))
    if error is None:
        return None
    message = " ".join(error.message.split())
    return message if len(message) <= 200 else message[:200] + "..."


# --------------------------------------------------------------------------- env run


@dataclass
class _Tally:
    """What became of each call of a run, for the exit status and the final line's reason."""

    total: int = 0
    refused: list[str] = field(default_factory=list)  # invalid, not sent
    raised: list[str] = field(default_factory=list)  # the tool raised; the worker lives
    killed: list[str] = field(default_factory=list)  # hung, killed, or the worker exited
    not_run: int = 0  # after the worker died


def env_run_main(argv: list[str]) -> int:
    prog = "envfoundry env run"
    parser = env_parser(
        prog,
        "Replay tool calls against an environment in the sandbox; one JSON line per call, "
        "then a final line with the final state, status, reason and exit code.",
        EXIT_STATUS,
    )
    parser.add_argument(
        "--calls", type=Path, required=True, help='JSON lines: {"tool": NAME, "args": {...}}'
    )
    try:
        options = parse_options(parser, argv)
        calls = _read_calls(options.calls)
        target = resolve_target(options)
        print_notes(prog, target)
        session = open_sandbox(options, target)
    except Stop as stop:
        return report_stop(prog, stop)
    with session:
        return _run(prog, session, target, calls, options.calls)


def _run(prog: str, session: Session, target: Target, calls: list, calls_path: Path) -> int:
    loaded = session.status == "ok"
    arguments = Arguments(analysed_tools(session, target), session.tools, target.code)
    tally = _Tally(total=len(calls))
    for number, tool, args in calls:
        where = f"{calls_path}:{number}"
        problem = arguments.problem(tool, args) if loaded else None
        if problem is not None:
            print_error(prog, f"{where}: {problem}")
            tally.refused.append(f"{where}: {problem}")
            _emit({"tool": tool, "ok": False, "result": None, "error": f"usage error: {problem}"})
            continue
        _emit(_call(session, tool, args, where, tally).to_json())
    alive = session.status == "ok"
    final = session.final_state()
    if not loaded or (alive and session.status != "ok"):
        code, status, reason = LOAD_ERROR, "error", session.reason
    else:
        code, status, reason = _outcome(session, tally)
    _emit({"final_state": final, "status": status, "reason": reason, "exit_code": code})
    if code in (LOAD_ERROR, CALL_CRASHED):
        print_error(prog, reason)
    return code


def _call(
    session: Session, tool: str, args: dict[str, Any], where: str, tally: _Tally
) -> CallResult:
    alive = session.status == "ok"
    result = session.call(tool, args)
    tally.not_run += not alive
    if not result.ok and alive:
        # A worker still answering after a failed call means the tool raised; a worker gone
        # means the call hung or killed it.
        failed = tally.raised if session.status == "ok" else tally.killed
        failed.append(f"{where} {tool}: {result.error}")
    return result


def _outcome(session: Session, tally: _Tally) -> tuple[int, str, str | None]:
    """(exit code, status, reason) of a run whose environment loaded and dumped its state."""
    crashed = tally.raised + tally.killed
    if crashed:
        reason = f"{len(crashed)} of {tally.total} calls did not return (first: {crashed[0]})"
        if tally.not_run:
            reason += f"; {tally.not_run} not run after the worker died"
        return CALL_CRASHED, "killed" if tally.killed else "call_error", reason
    if tally.refused:
        reason = f"{len(tally.refused)} of {tally.total} calls refused (first: {tally.refused[0]})"
        return USAGE_ERROR, "invalid_calls", reason
    return OK, "ok", None


def _read_calls(path: Path) -> list[tuple[int, str, dict[str, Any]]]:
    try:
        lines = path.read_text().splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise _usage(f"cannot read calls {path}: {exc}") from None
    calls = []
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            call = codec.loads(line)
        except ValueError as exc:
            raise _usage(f"{path}:{number}: not JSON: {exc}") from None
        if (
            not isinstance(call, dict)
            or not isinstance(call.get("tool"), str)
            or not isinstance(call.get("args", {}), dict)
        ):
            raise _usage(f'{path}:{number}: expected {{"tool": NAME, "args": {{...}}}}')
        calls.append((number, call["tool"], call.get("args", {})))
    return calls


def report_stop(prog: str, stop: Stop) -> int:
    if stop.message:
        print_error(prog, stop.message)
    return stop.code


def print_error(prog: str, message: str | None) -> None:
    """One line on stderr, whatever the message holds (a worker's stderr can span lines)."""
    print(f"{prog}: error: {' '.join(str(message).split())}", file=sys.stderr)


def print_notes(prog: str, target: Target) -> None:
    for note in target.notes:
        print(f"{prog}: {note}", file=sys.stderr)


def _emit(record: dict[str, Any], out: TextIO | None = None) -> None:
    out = out or sys.stdout
    out.write(codec.dumps_str(record) + "\n")
    out.flush()


# --------------------------------------------------------------------------- env shell


def env_shell_main(
    argv: list[str], stdin: TextIO | None = None, stdout: TextIO | None = None
) -> int:
    prog = "envfoundry env shell"
    parser = env_parser(
        prog,
        "Play an environment by hand or from a script on stdin: list its tools, call one "
        "with JSON arguments, see the result and what changed in the state.",
        SHELL_EXIT_STATUS,
    )
    try:
        options = parse_options(parser, argv)
        target = resolve_target(options)
        session = open_sandbox(options, target)
    except Stop as stop:
        return report_stop(prog, stop)
    with session:
        if session.status != "ok":
            print_error(prog, session.reason)
            return LOAD_ERROR
        shell = _Shell(session, target, stdin or sys.stdin, stdout or sys.stdout)
        code = shell.run()
    if code != OK:
        print_error(prog, session.reason)
    return code


SHELL_HELP = """commands:
  tools                      list the tools with their arguments (NAME?: may be left out)
  call NAME {json args}      call a tool (also: NAME {json args}); shows result and state diff
  state                      print the whole current state
  task                       print the scenario's task (with --scenario)
  help                       this text
  quit                       leave (also: exit, end of input)"""


class _Shell:
    def __init__(self, session: Session, target: Target, stdin: TextIO, stdout: TextIO) -> None:
        self.session = session
        self.target = target
        self.stdin = stdin
        self.out = stdout
        self.tools = analysed_tools(session, target)
        self.arguments = Arguments(self.tools, session.tools, target.code)
        self.state: dict[str, Any] | None = None  # the last state read, to diff against
        self.code = OK

    def say(self, text: str) -> None:
        self.out.write(text + "\n")
        self.out.flush()

    def run(self) -> int:
        """Commands until quit or end of input; the exit status (3 or 4 when the worker died)."""
        if self.target.task is not None:
            self.say(f"Task: {self.target.task}")
        for note in self.target.notes:
            self.say(f"({note})")
        self.say(
            f"{self.session.info.get('class')} in the {self.session.backend} sandbox "
            f"({len(self.arguments.names)} tools). Type 'help' for commands."
        )
        interactive = self.stdin.isatty()
        while True:
            if interactive:
                self.out.write("env> ")
                self.out.flush()
            line = self.stdin.readline()
            if not line:
                return OK
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            if line in ("quit", "exit"):
                return OK
            self.command(line)
            if self.session.status != "ok":
                self.say(f"session {self.session.status}: {self.session.reason}")
                return self.code

    def command(self, line: str) -> None:
        word, _, rest = line.partition(" ")
        if word == "help":
            self.say(SHELL_HELP)
        elif word == "tools":
            self.list_tools()
        elif word == "state":
            state = self.read_state()
            if state is not None:
                self.say(codec.dumps_pretty(state).decode().rstrip())
        elif word == "task":
            self.say(f"Task: {self.target.task}" if self.target.task else "no task (no --scenario)")
        else:
            if word == "call":
                word, _, rest = rest.strip().partition(" ")
            self.call(word, rest.strip())

    def list_tools(self) -> None:
        described = {tool["name"]: tool for tool in self.tools}
        for name in self.arguments.names:
            tool = described.get(name)
            if tool is None:
                self.say(f"{name}: arguments not known (no schema)")
                continue
            function = tool["schema"].get("function") or tool["schema"]
            self.say(f"{_signature(tool)}  [{tool['kind']}]  {function.get('description', '')}")
            properties = tool_parameters(tool).get("properties") or {}
            for param, schema in properties.items():
                if schema.get("description"):
                    self.say(f"    {param}: {schema['description']}")

    def read_state(self) -> dict[str, Any] | None:
        """The current state; a state that cannot be dumped ends the session (status 3)."""
        state = self.session.final_state()
        if state is None and self.session.status != "ok" and self.code == OK:
            self.code = LOAD_ERROR
        self.state = state
        return state

    def call(self, tool: str, text: str) -> None:
        try:
            args = codec.loads(text) if text else {}
        except ValueError as exc:
            self.say(f"invalid call: arguments must be a JSON object: {exc}")
            return
        if not isinstance(args, dict):
            self.say("invalid call: arguments must be a JSON object")
            return
        problem = self.arguments.problem(tool, args)
        if problem is not None:
            self.say(f"invalid call: {problem}")
            return
        before = self.state if self.state is not None else self.read_state()
        if before is None:
            return
        result = self.session.call(tool, args)
        if result.ok:
            self.say("result: " + codec.dumps_str(result.result))
        else:
            self.say(f"error: {result.error}")
        if self.session.status != "ok":
            self.code = CALL_CRASHED  # the call hung or killed the worker
            return
        after = self.read_state()
        if after is not None:
            changes = diff_states(before, after)
            self.say("state: unchanged" if not changes else "state changes:")
            for change in changes:
                self.say("  " + change)


__all__ = ["env_run_main", "env_shell_main", "EXIT_STATUS", "SHELL_EXIT_STATUS"]
