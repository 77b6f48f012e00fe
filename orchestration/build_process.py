"""The build process: what `envfoundry build` (and `envfoundry stop`) do once the command
line is read.

Nothing is built before every check passes (the home, the seed, the executor, and the inputs:
assets/_settings.py `input_problem`, whether a setting came from a flag or its ENVFOUNDRY_*
variable); then the build takes the home's lock, writes its log, and says so at once when
nothing changed since the last build (orchestration/last_build.py: no Dagster imported). Else
it builds here, or asks the home's warm run host to fork the build for it
(orchestration/fastrun/warm_build.py: `build_served` is that process's entry point). Either
way this process is the build process: it holds the lock and its pid is the lifeline of every
process the build starts (orchestration/fastrun/lifeline.py).
"""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import os
import shutil
import tempfile
import time
import traceback
import uuid
from datetime import datetime
from pathlib import Path
from typing import TextIO

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from orchestration import console, instance
from orchestration.fastrun import lifeline, warm
from orchestration.lock import BuildLock, HomeLocked
from synthesis import codec

# Exit codes (docs/builds.md, "Exit codes").
OK = 0
FAILED = 1  # a run failed: an environment (left out), or the publish (a gate, dbt)
REFUSED = 2  # refused before any work: the inputs, the home, the seed, the lock
BELOW_FLOOR = 3  # built, but fewer tasks than the publish floor: the current dataset kept
INTERRUPTED = 130  # a shell's code for a command a Ctrl-C (SIGINT) ended


def _configure_environment(home: Path, values: dict) -> None:
    """Everything a build reads comes from here, so the UI (make ui) sees the same instance:
    the resolved settings (assets/_settings.py `resolve`) as ENVFOUNDRY_* variables for this
    process and every process it starts, and as the home's build-settings.json for runs
    launched from the UI or the daemon."""
    from assets._settings import SETTINGS_FILE, VARIABLES

    home.mkdir(parents=True, exist_ok=True)
    for field, variable in VARIABLES.items():
        value = values[field]
        if field == "envs":
            os.environ[variable] = json.dumps(value)
        elif field == "holdout_archetypes":
            os.environ[variable] = ",".join(value)
        elif value is None:
            os.environ.pop(variable, None)  # min_published unset: the profile's floor
        else:
            os.environ[variable] = str(value)
    os.environ["DAGSTER_HOME"] = str(instance.prepare(home))
    os.environ.setdefault("DO_NOT_TRACK", "1")
    # The processes this build starts end with it (lifeline.py).
    lifeline.export_build_process()
    # `make ui` on this home launches runs with the same settings (BuildSettings.from_env).
    codec.write_json(home / SETTINGS_FILE, {k: v for k, v in values.items() if k != "home"})


def _absolute_source(spec: str) -> str:
    """`--envs` paths are taken relative to where the command runs; module names as they are
    (a `@STATEFILE` is a path either way)."""
    source, at, states = spec.rpartition("@")
    if at and source and states:
        return f"{_absolute_source(source)}@{Path(states).expanduser().resolve()}"
    path_part, sep, cls = spec.rpartition(":")
    if not sep or not cls.isidentifier():
        path_part, sep, cls = spec, "", ""
    if path_part.endswith(".py") or os.sep in path_part or Path(path_part).exists():
        return str(Path(path_part).resolve()) + (f":{cls}" if sep else "")
    return spec


def check_corpus(corpus: str | None) -> str | None:
    """Why `--corpus` cannot be read (None: it can, or none was given)."""
    from assets._settings import corpus_problem, resolve

    return corpus_problem(resolve({"corpus": corpus}, settings_file=False))


def preflight(
    envs: list[str],
    catalogue: str | None,
    sandbox: str,
    *,
    allow_empty: bool = False,
    holdout_archetypes: list[str] | None = None,
    corpus: str | None = None,
) -> str | None:
    """Why a build of these flags cannot start, in one line (None: it can): the inputs'
    check (assets/_settings.py `input_problem`) with the flags as their source. A flag not
    given (None) is read where a build reads it: its ENVFOUNDRY_* variable, else the default."""
    from assets._settings import input_problem, resolve

    flags = {
        "envs": envs,
        "catalogue": catalogue,
        "corpus": corpus,
        "sandbox_backend": sandbox,
        "holdout_archetypes": holdout_archetypes or [],
        "min_published": 0 if allow_empty else None,
    }
    try:
        resolved = resolve(flags, settings_file=False)
    except ValueError as exc:
        return str(exc)
    return input_problem(resolved)


def build(
    profile: str,
    seed: int,
    home: Path,
    *,
    envs: list[str] | None = None,
    catalogue: str | None = None,
    corpus: str | None = None,
    sandbox: str = "auto",
    allow_empty: bool = False,
    min_published: int | None = None,
    parallel: int | None = None,
    daemon: bool = False,
    holdout_archetypes: list[str] | None = None,
    full: bool = False,
    keep_warm: bool = True,
) -> int:
    """`keep_warm` False: no code server and run host stay up after this build (nor do an
    earlier build's), as ENVFOUNDRY_WARM_S=0 says for every build. `allow_empty`: the publish
    floor is 0 (as `min_published=0`); `min_published` None: ENVFOUNDRY_MIN_PUBLISHED, else
    the profile's floor."""
    from assets._settings import input_problem, resolve

    envs = [_absolute_source(e) for e in envs or []]
    if not keep_warm:
        os.environ[warm.IDLE_VARIABLE] = "0"
    holdout = sorted(set(holdout_archetypes or []))
    if corpus and corpus.lower() != "none":
        corpus = str(Path(corpus).resolve())  # the runs' working directory may differ
    from orchestration.executors import executor_refusal

    # The flags given win; a setting not given is its ENVFOUNDRY_* variable's, else the
    # default (never the home's build-settings.json: that records this build's, for the UI).
    flags = {
        "home": home,
        "profile": profile,
        "seed": seed,
        "sandbox_backend": sandbox,
        "catalogue": catalogue,
        "corpus": corpus,
        "envs": envs,
        "holdout_archetypes": holdout,
        "min_published": 0 if allow_empty else min_published,
    }
    problem = check_home(home) or check_seed(seed) or executor_refusal(home / "dagster")
    if problem is None:
        try:
            resolved = resolve(flags, settings_file=False)
        except ValueError as exc:
            return refuse(str(exc))
        problem = input_problem(resolved)
    if problem is not None:
        return refuse(problem)
    try:
        home.mkdir(parents=True, exist_ok=True)
        lock = BuildLock(home).acquire()
    except HomeLocked as exc:
        return refuse(str(exc))
    except OSError as exc:
        return refuse(describe_os_error(exc, home))
    # A logging handler that cannot write (a full disk) must not print its own traceback on
    # the console: the failure is reported once, below, in one line.
    raise_exceptions, logging.raiseExceptions = logging.raiseExceptions, False
    build_id = uuid.uuid4().hex[:12]
    started_at = datetime.now().astimezone()
    log_path = home / "logs" / f"{started_at:%Y%m%d-%H%M%S}-{build_id}.log"
    log_file = None
    try:
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_file = log_path.open("a", encoding="utf-8", buffering=1)
        _link_latest(log_path)
        values = resolved.values
        floor = values["min_published"]
        log_file.write(
            f"==== build {build_id} {started_at.isoformat(' ', 'seconds')} "
            f"profile={profile} seed={seed} envs={envs} catalogue={values['catalogue'] or None}"
            f"{f' holdout_archetypes={holdout}' if holdout else ''}"
            f"{f' min_published={floor}' if floor is not None else ''}\n"
        )
        settings = {"profile": profile, "seed": seed}
        _configure_environment(home, values)
        with console.output_into(log_file):
            runs = {"parallel": parallel, "daemon": daemon, "full": full}
            return _build(home, settings, build_id, log_file, log_path, started_at, runs)
    except KeyboardInterrupt:
        # Before the build's runs started, or its forked process could not say how it ended.
        with contextlib.suppress(OSError, ValueError, AttributeError):
            log_file.write(traceback.format_exc())
        console.terminal.print(
            f"Interrupted: what this build finished is kept in {home} and the next build "
            "reuses it; it published nothing (the same command goes on from there"
            f"{f'; details: {log_path}' if log_file is not None else ''}).",
            highlight=False,
            soft_wrap=True,
        )
        return INTERRUPTED
    except Exception as exc:  # noqa: BLE001 - one line here, the trace in the log
        with contextlib.suppress(OSError, ValueError):  # a full disk may refuse it too
            log_file.write(traceback.format_exc())
        details = f" (details: {log_path})" if log_file is not None else ""
        return refuse(describe_failure(exc, home) + details)
    finally:
        if log_file is not None:
            with contextlib.suppress(OSError):
                log_file.close()
        lock.release()
        logging.raiseExceptions = raise_exceptions


def _link_latest(log_path: Path) -> None:
    """`logs/latest.log`: the newest build's log, whatever its name."""
    link = log_path.parent / "latest.log"
    temporary = log_path.parent / f".latest.{os.getpid()}"
    temporary.unlink(missing_ok=True)
    temporary.symlink_to(log_path.name)
    os.replace(temporary, link)


def _build(home, settings, build_id, log_file, log_path, started_at, runs) -> int:
    # Only what tells whether anything changed is imported before that is known: Dagster's
    # import alone would be most of a nothing-changed build's time.
    from assets._settings import values_from_env
    from orchestration import last_build

    # CLOCK_MONOTONIC is the machine's: a build the warm run host forks times from here too.
    started = time.monotonic()
    console.terminal.print(
        f"[bold]EnvFoundry build[/bold] profile={settings['profile']} seed={settings['seed']} "
        f"home={home}"
    )
    values = values_from_env()
    last = None if runs["full"] else last_build.unchanged(home, values, _latest_run())
    if last is not None:
        console.terminal.print(
            f"Nothing changed since build {last.build_id} (settings, catalogue, sources, code): "
            f"its {last.environments} environments and its dataset "
            f"({home / 'current'}) are current. `--full` makes them again. "
            f"Finished in {time.monotonic() - started:.1f}s.",
            highlight=False,
        )
        return 0
    idle_s = warm.idle_seconds()
    request = {
        "home": str(home),
        "values": values,
        "build_id": build_id,
        "log_path": str(log_path),
        "started_at": started_at.isoformat(),
        "started": started,
        "runs": runs,
        "idle_s": idle_s,
        # A process the warm run host forks has no terminal but this one (Rich measures a
        # terminal on stdin, stdout or stderr, and a build's are its log).
        "width": console.terminal.width if console.terminal.is_terminal else None,
    }
    if idle_s:
        from orchestration.fastrun import warm_build

        keep = warm.KeepWarm(build_id, idle_s, values, last_build.loaded_code(values))
        servers = warm.adoptable(Path(os.environ["DAGSTER_HOME"]), keep)
        if servers is not None:
            console.terminal.file.flush()  # the header, before the build's own output
            code = warm_build.ask(servers, request, console.terminal.file.fileno())
            if code is not None:
                return code
    return build_here(request, log_file)


def build_here(request: dict, log_file: TextIO, served_by: int | None = None) -> int:
    """The build, once it is known that something changed: its runs, summary and record.
    `served_by`: the warm run host that forked this process for a CLI (`build_served`)."""
    from orchestration import last_build
    from orchestration.build import BuildOutcome, run_build
    from orchestration.summary import interrupted, print_summary

    home, values, runs = Path(request["home"]), request["values"], dict(request["runs"])
    build_id, idle_s = request["build_id"], request["idle_s"]
    if idle_s:
        runs["keep_warm"] = warm.KeepWarm(build_id, idle_s, values, last_build.loaded_code(values))
    else:  # none are wanted: not even an earlier build's
        warm.stop(Path(os.environ["DAGSTER_HOME"]))
    outcome = BuildOutcome(build_id=build_id)
    try:
        with Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console.terminal,
            transient=False,
        ) as progress:
            run_build(progress, build_id=build_id, log_file=log_file, outcome=outcome, **runs)
    except KeyboardInterrupt:
        # Ctrl-C: a user stopping a build, not a failure to trace on the console. What the
        # build finished is recorded on the instance as it finished, so it is all kept.
        with contextlib.suppress(OSError, ValueError):
            log_file.write(traceback.format_exc())
        last_build.forget(home)
        console.terminal.print(
            interrupted(home, outcome, Path(request["log_path"])), highlight=False, soft_wrap=True
        )
        return INTERRUPTED
    if not idle_s:
        outcome.warm = "none kept (--no-warm or ENVFOUNDRY_WARM_S=0): the next build starts its own"
    if served_by is not None:
        outcome.warm += f"; this build forked by the run host (pid {served_by})"
    outcome.log_path = Path(request["log_path"])
    started_at = datetime.fromisoformat(request["started_at"])
    print_summary(
        console.terminal, home, outcome, time.monotonic() - request["started"], started_at
    )
    if outcome.ok and not runs["daemon"]:
        made = len(outcome.remade) + len(outcome.reused)
        last_build.remember(home, values, build_id, _latest_run(), made)
    else:
        last_build.forget(home)
    if outcome.below_floor:
        return BELOW_FLOOR
    return OK if outcome.ok else FAILED


def build_served(request: dict, terminal: int, host: int) -> int:
    """`build_here` in a process the warm run host forked for a CLI build (the "build" entry
    point, orchestration/fastrun/entrypoints.py): its console is the CLI's terminal, its
    stdout and stderr the build's log, and a failure is said as the CLI says it (one line;
    the trace in the log)."""
    log_path = Path(request["log_path"])
    with (
        console.terminal_at(terminal, request["width"]),
        log_path.open("a", encoding="utf-8", buffering=1) as log_file,
    ):
        try:
            return build_here(request, log_file, served_by=host)
        except Exception as exc:  # noqa: BLE001 - one line here, the trace in the log
            with contextlib.suppress(OSError, ValueError):
                log_file.write(traceback.format_exc())
            problem = describe_failure(exc, Path(request["home"]))
            return refuse(f"{problem} (details: {log_path})")


def _latest_run() -> str | None:
    """The newest run on the build's instance (DAGSTER_HOME), if any."""
    with contextlib.suppress(instance.RunsUnknown):
        return instance.latest_run_id(Path(os.environ["DAGSTER_HOME"]))
    import dagster as dg

    with dg.DagsterInstance.get() as dagster_instance:
        runs = dagster_instance.get_runs(limit=1)
    return runs[0].run_id if runs else None


def stop_warm(home: Path) -> int:
    """`envfoundry stop`: end the home's warm code server and run host, if any."""
    if warm.read(home / "dagster") is None:
        console.terminal.print(f"No warm code server or run host for {home}.", highlight=False)
        return 0
    try:
        lock = BuildLock(home).acquire()  # a build using them would lose its code server
    except (HomeLocked, OSError) as exc:
        return refuse(str(exc))
    try:
        stopped = warm.stop(home / "dagster")
    finally:
        lock.release()
    if stopped is None:
        console.terminal.print(f"No warm code server or run host for {home}.", highlight=False)
    else:
        console.terminal.print(
            f"Stopped the code server (pid {stopped.code_pid}) and run host (pid "
            f"{stopped.host_pid}) build {stopped.build_id} left warm for {home}.",
            highlight=False,
        )
    return 0


def refuse(problem: str) -> int:
    console.terminal.print(
        f"[bold red]envfoundry build: {problem}[/bold red]", highlight=False, soft_wrap=True
    )
    return REFUSED


def check_home(home: Path) -> str | None:
    """Why builds cannot go into `home` (a file, not writable), or None."""
    if home.exists() and not home.is_dir():
        return f"--home {home} is a file, not a folder; choose a folder"
    probe = home if home.exists() else next((p for p in home.parents if p.exists()), None)
    if probe is None:
        return None
    try:
        # Trying is the only sure test: permission bits say nothing to root, and a read-only
        # mount shows only when written to.
        with tempfile.TemporaryFile(dir=probe):
            pass
    except OSError as exc:
        return f"--home {home}: " + describe_os_error(exc, probe)
    return None


def check_seed(seed: int) -> str | None:
    if not 0 <= seed < 2**63:
        return f"--seed {seed} is out of range: use a whole number from 0 to 2**63 - 1"
    return None


def describe_os_error(exc: OSError, home: Path) -> str:
    """One line for the ways a disk refuses us."""
    where = exc.filename or home
    if exc.errno == errno.ENOSPC:
        return f"no space left on the device holding {where}: free some space and build again"
    if exc.errno == errno.EROFS:
        return f"{where} is on a read-only file system: choose another --home"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"permission denied on {where}: choose a --home you can write"
    return f"{exc.strerror or exc} ({where})"


def describe_failure(exc: BaseException, home: Path) -> str:
    """One line for a failure outside any Dagster step, found by its innermost cause."""
    while exc.__cause__ is not None or exc.__context__ is not None:
        exc = exc.__cause__ or exc.__context__
    if isinstance(exc, OSError):
        return describe_os_error(exc, home)
    text = str(exc).strip().splitlines()
    message = text[-1] if text else ""
    # SQLite (the Dagster instance) and DuckDB say "disk I/O error" when the disk is full.
    if "disk" in message.lower() and _nearly_full(home):
        return describe_os_error(OSError(errno.ENOSPC, "No space left on device"), home)
    return f"{type(exc).__name__}: {message}"


def _nearly_full(home: Path) -> bool:
    try:
        return shutil.disk_usage(home).free < 1 << 20
    except OSError:
        return False
