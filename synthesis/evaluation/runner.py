"""Play a model on a home's published tasks and record every episode in `evals/evals.duckdb`.

An episode is the build's own LLM attempt (`synthesis.rollouts.attempts.llm_attempt`: the
`LLMPolicy` agent in `synthesis.rollouts.episodes.rollout`), with the same sandbox, tools,
system prompt, simulated user and proven checks as the dataset's LLM trajectories, graded by
the same reward rule. What an evaluation adds:

* **verdicts**: the rollout hands over its grade (`on_graded`: each check's verdict, where
  the trajectory keeps only the reward); the verdicts decide the failure class
  (`synthesis.evaluation.taxonomy`).
* **resuming**: an episode is keyed by (model, the dataset's manifest sha256, the episode
  settings, scenario, attempt); one already recorded under its key (without an error) is not
  played again, so a killed or stopped eval goes on where it was, and raising `--attempts`
  plays only the new attempts. Each episode is committed as it finishes.
* **limits**: the client enforces the LLM budget, deadline and breakers (LLMSettings from
  OPENAI_* and ENVFOUNDRY_* variables); a StageStopped ends the eval with what it finished
  recorded and the reason said. The budget and deadline are this invocation's.

The dataset is only read (its warehouse opened read-only); the home may have been moved or
copied: nothing here records an absolute path.
"""

from __future__ import annotations

import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from synthesis import codec
from synthesis.config import LLMSettings
from synthesis.evaluation.dataset import (
    DatasetRef,
    EvalError,
    LoadedEnvironment,
    TaskRef,
    current_dataset,
    load_environment,
    published_tasks,
    select_tasks,
    split_counts,
)
from synthesis.evaluation.store import EvalStore, evals_path, now
from synthesis.evaluation.summary import Summary, summarize
from synthesis.evaluation.taxonomy import EpisodeFacts, Verdict, classify
from synthesis.hashing import ID_HEX_MANY, content_hash, short_id
from synthesis.llm.client import REJECTED_PREFIX, LLMClient, LLMError, StageStopped
from synthesis.models import Check, Trajectory
from synthesis.rollouts.agents import AGENT_STAGE, SAMPLING_TEMPERATURE
from synthesis.rollouts.attempts import llm_attempt
from synthesis.rollouts.episodes import STEP_LIMIT_MESSAGE, STEP_LIMIT_NOT_RUN, final_reply
from synthesis.tasks.envfoundry_reward import REWARD_RULE_VERSION, Grade, observation, role_of

# Bump when how an episode is played or graded changes in a way the settings below do not
# show: episodes recorded under another protocol are then played again.
EVAL_PROTOCOL = 1


@dataclass(frozen=True)
class EvalOptions:
    """What to evaluate: the model (the endpoint's name for it), which published tasks, how
    many attempts at each, and where the environments' code runs."""

    model: str
    split: str = "test"
    attempts: int = 1
    limit: int | None = None
    task_ids: tuple[str, ...] | None = None
    backend: str = "auto"


@dataclass(frozen=True)
class Job:
    task: TaskRef
    attempt: int
    key: str


@dataclass
class EvalOutcome:
    """What an invocation did and found."""

    run_id: str
    status: str  # finished | stopped | interrupted | failed
    dataset: DatasetRef
    model: str
    selected: int  # episodes asked for
    played: int
    skipped: int
    errors: int
    stop_reason: str | None
    summary: Summary
    db_path: Path
    notes: list[str] = field(default_factory=list)


def episode_settings(llm: LLMSettings) -> dict[str, Any]:
    """What decides how an episode is played and graded (beyond the model and the dataset):
    episodes are reused only under equal settings. Selection (split, limit, tasks, number of
    attempts) and the endpoint's address are not part of it."""
    return {
        "protocol": EVAL_PROTOCOL,
        "reward_rule_version": REWARD_RULE_VERSION,
        "agent_max_tokens": llm.for_stage(AGENT_STAGE).max_tokens,
        "max_answer_chars": llm.max_answer_chars,
        "sampled_temperature": SAMPLING_TEMPERATURE,
    }


def episode_key(
    model: str, manifest: str, settings_sha256: str, scenario_id: str, attempt: int
) -> str:
    return short_id(
        "eval-episode", model, manifest, settings_sha256, scenario_id, attempt, length=ID_HEX_MANY
    )


def public_url(url: str | None) -> str | None:
    """The endpoint's address without credentials, query or fragment."""
    if not url:
        return None
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port is not None:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def run_eval(
    home: Path,
    llm: LLMSettings,
    options: EvalOptions,
    *,
    out: Callable[[str], None] = print,
) -> EvalOutcome:
    """Evaluate `options.model` on the home's current dataset (see the module's docstring).

    Raises EvalError for an evaluation that cannot run as asked; KeyboardInterrupt after
    recording the run as interrupted (its finished episodes kept)."""
    if not llm.enabled:
        raise EvalError("no endpoint: set OPENAI_BASE_URL (and OPENAI_API_KEY) to evaluate a model")
    if options.attempts < 1:
        raise EvalError("--attempts must be at least 1")
    llm = llm.model_copy(update={"model": options.model})
    home = Path(home)
    dataset = current_dataset(home)
    everything = published_tasks(dataset)
    tasks = select_tasks(
        everything, split=options.split, task_ids=options.task_ids, limit=options.limit
    )
    if not tasks:
        counts = ", ".join(f"{n} {s}" for s, n in split_counts(everything).items()) or "none"
        raise EvalError(
            f"no published task to evaluate in split {options.split!r} of dataset "
            f"{dataset.dataset_id} (its published tasks: {counts}); choose --split train|all"
        )
    settings = episode_settings(llm)
    settings_sha256 = content_hash(settings)
    manifest = dataset.manifest_sha256 or f"dataset:{dataset.dataset_id}"
    jobs = [
        Job(t, a, episode_key(options.model, manifest, settings_sha256, t.scenario_id, a))
        for t in tasks
        for a in range(options.attempts)
    ]
    run_id = uuid.uuid4().hex[:16]
    db_path = evals_path(home)
    with EvalStore(db_path, secrets=[llm.api_key]) as store:
        done = store.recorded(j.key for j in jobs)
        todo = [j for j in jobs if j.key not in done]
        store.start_run(
            {
                "run_id": run_id,
                "model": options.model,
                "base_url": public_url(llm.base_url),
                "dataset_id": dataset.dataset_id,
                "manifest_sha256": manifest,
                "settings_sha256": settings_sha256,
                "settings_json": codec.dumps_str(settings),
                "split": options.split,
                "attempts": options.attempts,
                "task_limit": options.limit,
                "tasks_listed": None if options.task_ids is None else len(options.task_ids),
                "n_tasks": len(tasks),
                "n_episodes": len(jobs),
                "n_played": 0,
                "n_skipped": len(jobs) - len(todo),
                "n_errors": 0,
                "status": "running",
                "started_at": now(),
            }
        )
        out(
            f"EnvFoundry eval: model {options.model} on dataset {dataset.dataset_id} "
            f"(manifest {manifest[:12]}), split {options.split}: {len(tasks)} task(s) x "
            f"{options.attempts} attempt(s) = {len(jobs)} episode(s), {len(done)} already "
            f"recorded, {len(todo)} to play"
        )
        player = _Player(store, llm, dataset, options, run_id, manifest, settings_sha256, out)
        status, reason = "finished", None
        try:
            player.play(todo)
            if player.stop_reason is not None:
                status, reason = "stopped", player.stop_reason
        except KeyboardInterrupt:
            status, reason = "interrupted", "interrupted (Ctrl-C)"
            raise
        except BaseException as exc:
            status, reason = "failed", f"{type(exc).__name__}: {exc}"
            raise
        finally:
            player.flush_calls()
            store.update_run(
                run_id,
                status=status,
                stop_reason=reason,
                n_played=player.played,
                n_errors=player.errors,
                finished_at=now(),
            )
        summary = summarize(store.episodes(j.key for j in jobs))
    return EvalOutcome(
        run_id=run_id,
        status=status,
        dataset=dataset,
        model=options.model,
        selected=len(jobs),
        played=player.played,
        skipped=len(jobs) - len(todo),
        errors=player.errors,
        stop_reason=reason,
        summary=summary,
        db_path=db_path,
        notes=player.notes,
    )


class _Player:
    """Plays the jobs of every environment at once, each episode on a thread of one sandbox
    pool as wide as the client lets requests be in flight (as `llm_attempts` does), and
    writes each as it finishes."""

    def __init__(
        self,
        store: EvalStore,
        llm: LLMSettings,
        dataset: DatasetRef,
        options: EvalOptions,
        run_id: str,
        manifest: str,
        settings_sha256: str,
        out: Callable[[str], None],
    ) -> None:
        self.store = store
        self.dataset = dataset
        self.options = options
        self.run_id = run_id
        self.manifest = manifest
        self.settings_sha256 = settings_sha256
        self.out = out
        self.client = LLMClient(llm, cache_dir=None, build_id=f"eval-{run_id}", run_id=run_id)
        self.stop = threading.Event()
        self.stop_reason: str | None = None
        self.played = 0
        self.played_in: dict[str, int] = {}  # by environment
        self.errors = 0
        self.notes: list[str] = []
        self._lock = threading.Lock()
        self._written_calls: set[str] = set()

    def play(self, jobs: Sequence[Job]) -> None:
        from sandboxes import WorkerPool  # the engine runs without them, as everywhere

        by_env: dict[str, list[Job]] = {}
        for job in jobs:
            by_env.setdefault(job.task.env_id, []).append(job)
        loaded: dict[str, LoadedEnvironment] = {}
        for env_id, env_jobs in by_env.items():
            loaded[env_id] = load_environment(
                self.dataset,
                env_id,
                {j.task.scenario_id for j in env_jobs},
                backend=self.options.backend,
            )
            for note in loaded[env_id].notes:
                self.notes.append(note)
                self.out(f"  note: {note}")
        # Every environment's episodes in one pool, the longest first (fewer threads idle at
        # the end while one runs alone): an episode's requests go one after another, so one
        # environment at a time kept 7 of 64 requests in flight and each waited for its
        # slowest episode (benchmarks/eval_throughput.py).
        ordered = sorted(
            jobs,
            key=lambda j: (
                j.task.multi_turn,
                len(loaded[j.task.env_id].scenarios[j.task.scenario_id].gold_chain),
            ),
            reverse=True,
        )
        width = min(self.client.settings.concurrency, len(ordered))
        if width < 1:
            return
        with WorkerPool(size=width, backend=self.options.backend) as pool:
            try:
                pool.map(lambda job: self._episode(job, loaded[job.task.env_id], pool), ordered)
            except BaseException:
                self.stop.set()  # the episodes not started yet return at once
                raise
        for env_id in by_env:
            self.out(f"  {env_id}: {self.played_in.get(env_id, 0)} episode(s) played")

    def _episode(self, job: Job, loaded: LoadedEnvironment, pool: Any) -> None:
        if self.stop.is_set():
            return
        scenario = loaded.scenarios[job.task.scenario_id]
        checks = loaded.checks[job.task.scenario_id]
        graded: list[Grade] = []
        started, clock = now(), time.monotonic()
        try:
            trajectory = llm_attempt(
                loaded.env,
                scenario,
                checks,
                self.client,
                job.attempt,
                model=loaded.model,
                pool=pool,
                backend=self.options.backend,
                on_graded=graded.append,
            )
        except StageStopped as exc:  # budget, deadline or breaker: stop, keep what is done
            with self._lock:
                if self.stop_reason is None:
                    self.stop_reason = exc.reason
            self.stop.set()
            return
        except LLMError as exc:  # this episode's endpoint failure; the next eval retries it
            row = self._row(job, started, clock) | _failed_episode(exc)
            self._write(row, error=True)
            return
        except BaseException:
            self.stop.set()
            raise
        row = self._row(job, started, clock) | episode_record(
            trajectory, checks, job.task.kind, graded[0] if graded else None
        )
        self._write(row)

    def _row(self, job: Job, started: datetime, clock: float) -> dict[str, Any]:
        t = job.task
        return {
            "episode_key": job.key,
            "run_id": self.run_id,
            "model": self.options.model,
            "dataset_id": self.dataset.dataset_id,
            "manifest_sha256": self.manifest,
            "settings_sha256": self.settings_sha256,
            "scenario_id": t.scenario_id,
            "env_id": t.env_id,
            "archetype": t.archetype,
            "origin": t.origin,
            "kind": t.kind,
            "family": t.family,
            "answer_kind": t.answer_kind,
            "structural_tier": t.structural_tier,
            "final_tier": t.final_tier,
            "split": t.split,
            "multi_turn": t.multi_turn,
            "attempt": job.attempt,
            "started_at": started,
            "finished_at": now(),
            "seconds": round(time.monotonic() - clock, 3),
        }

    def _write(self, row: dict[str, Any], *, error: bool = False) -> None:
        with self._lock:
            self.store.write_episode(row, self._new_calls())
            self.played += 1
            self.played_in[row["env_id"]] = self.played_in.get(row["env_id"], 0) + 1
            self.errors += int(error)

    def flush_calls(self) -> None:
        with self._lock:
            self.store.write_calls(self._new_calls())

    def _new_calls(self) -> list[dict[str, Any]]:
        """The client's ledger rows not written yet (of any episode), as eval_llm_calls rows."""
        rows = []
        for call in self.client.ledger.rows():
            if call["call_id"] in self._written_calls:
                continue
            self._written_calls.add(call["call_id"])
            row = {k: v for k, v in call.items() if k != "build_id"}
            row["run_id"] = self.run_id
            row["created_at"] = (
                datetime.fromisoformat(call["created_at"]) if call.get("created_at") else None
            )
            rows.append(row)
        return rows


# --------------------------------------------------------------------------- one episode


def observations(messages: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each call of a transcript with what it returned, as the reply checks read them
    (`envfoundry_reward.observation`), in order."""
    calls: dict[str, tuple[str, Any]] = {}
    out = []
    for message in messages:
        if message.get("role") == "assistant":
            for call in message.get("tool_calls") or ():
                function = call.get("function") or {}
                calls[call.get("id")] = (function.get("name"), _json(function.get("arguments")))
        elif message.get("role") == "tool":
            tool, args = calls.get(message.get("tool_call_id"), (None, {}))
            out.append(observation(tool, args, _json(message.get("content"))))
    return out


def _json(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    try:
        return json.loads(text) if text.strip() else {}
    except ValueError:
        return text


def tool_errors(observed: Sequence[dict[str, Any]]) -> list[str]:
    """The error of each call that failed (a call the step limit left unrun is none)."""
    out = []
    for seen in observed:
        result = seen.get("result")
        if isinstance(result, dict) and result.get("success") is False:
            error = str(result.get("error") or "")
            if error != STEP_LIMIT_NOT_RUN:
                out.append(error)
    return out


def rejection(reply: str) -> str | None:
    """Why the client rejected the model's last turn, when the reply says it did."""
    if not reply.startswith(REJECTED_PREFIX):
        return None
    return reply[len(REJECTED_PREFIX) :].strip().removesuffix("]").strip()


def verdicts(checks: Sequence[Check], graded: Grade | None) -> tuple[Verdict, ...] | None:
    """Each check's verdict on the episode, from the rollout's grade (None: none given)."""
    if graded is None or len(graded.verdicts) != len(checks):
        return None
    return tuple(
        Verdict(type=str(c.spec.get("type")), role=role_of(c.spec), passed=ok)
        for c, ok in zip(checks, graded.verdicts, strict=True)
    )


def episode_record(
    trajectory: Trajectory, checks: Sequence[Check], kind: str, graded: Grade | None
) -> dict[str, Any]:
    """The `eval_episodes` columns of a finished episode that come from its trajectory."""
    messages = trajectory.messages
    reply = final_reply(messages)
    observed = observations(messages)
    errors = tool_errors(observed)
    judged = verdicts(checks, graded)
    hit_limit = any(
        m.get("role") == "assistant" and m.get("content") == STEP_LIMIT_MESSAGE for m in messages
    )
    facts = EpisodeFacts(
        success=trajectory.success,
        kind=kind,
        verdicts=judged,
        tool_calls=trajectory.n_steps,
        tool_errors=tuple(errors),
        reply=reply,
        hit_step_limit=hit_limit,
        rejection=rejection(reply),
    )
    failed = None
    if judged is not None:
        failed = [
            {"check_id": c.check_id, "type": v.type, "role": v.role}
            for c, v in zip(checks, judged, strict=True)
            if not v.passed
        ]
    metadata = trajectory.metadata or {}
    return {
        "reward": trajectory.reward,
        "success": trajectory.success,
        "failure": classify(facts),
        "failed_checks_json": None if failed is None else codec.dumps_str(failed),
        "turns": int(metadata.get("turns") or sum(m.get("role") == "user" for m in messages)),
        "agent_turns": sum(1 for m in messages if m.get("role") == "assistant"),
        "tool_calls": trajectory.n_steps,
        "tool_errors": len(errors),
        "hit_step_limit": hit_limit,
        "prompt_tokens": trajectory.tokens_in,
        "completion_tokens": trajectory.tokens_out,
        "cost_usd": trajectory.cost_usd,
        "user_sim": metadata.get("user_sim"),
        "error": None,
        "traj_id": trajectory.traj_id,
        "messages_json": codec.dumps_str(messages),
    }


def _failed_episode(exc: LLMError) -> dict[str, Any]:
    """The columns of an episode an LLMError ended: no transcript, reward 0."""
    spent = getattr(exc, "attempts", None) or []
    return {
        "reward": 0.0,
        "success": False,
        "failure": classify(EpisodeFacts(success=False, error=str(exc))),
        "failed_checks_json": None,
        "turns": None,
        "agent_turns": None,
        "tool_calls": None,
        "tool_errors": None,
        "hit_step_limit": False,
        "prompt_tokens": sum(c.tokens_in for c in spent),
        "completion_tokens": sum(c.tokens_out for c in spent),
        "cost_usd": round(sum(c.cost_usd for c in spent), 8),
        "user_sim": None,
        "error": str(exc) or type(exc).__name__,
        "traj_id": None,
        "messages_json": None,
    }
