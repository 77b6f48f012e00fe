"""One episode against one sandboxed worker: load the environment, call tools, read final state.

Environment misbehaviour never raises here. An exception in a tool is an error record; a
timeout, an oversized or malformed reply, or a dead worker kills the worker and moves the
session to status "killed" (or "error" when the environment failed on its own: it did not
load, exited, or its state could not be produced); later calls are then "not run" records.
`SandboxError` is raised only for misuse and for a worker that could not be started at all.
"""

from __future__ import annotations

import ctypes
import signal
import time
import weakref
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from sandboxes.backends import Backend, WorkerProcess, get_backend
from sandboxes.errors import SandboxError
from sandboxes.launch import prepare_launch
from sandboxes.limits import Limits
from sandboxes.protocol import (
    Channel,
    ChannelError,
    OutputLimitExceeded,
    OversizedMessage,
    ProtocolViolation,
    WorkerExited,
    WorkerTimeout,
    encode,
    fragment,
)
from sandboxes.source import EnvSource, resolve
from sandboxes.uids import UidLease
from sandboxes.warm import WarmWorker
from sandboxes.workspace import PROCESS_TOOLS, WORKSPACE_KEY, HostWorkspace
from sandboxes.zygote import ForkedWorker, Zygote, ZygoteDied


@dataclass(slots=True)
class CallResult:
    """One tool call. ok=False for an exception, timeout, kill, oversize or unknown tool."""

    tool: str
    ok: bool
    result: Any = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "ok": self.ok, "result": self.result, "error": self.error}


@dataclass(frozen=True)
class EpisodeResult:
    results: list[CallResult]
    final_state: dict[str, Any] | None
    status: str
    reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "results": [r.to_json() for r in self.results],
            "final_state": self.final_state,
            "status": self.status,
            "reason": self.reason,
        }


Call = tuple[str, dict[str, Any]] | dict[str, Any]
# Per call, the most an error reply can take (envelope plus the worker's 2000-character error
# text, JSON-escaped): error replies are not charged to the results budget.
_ERROR_ALLOWANCE_BYTES = 16 * 1024


class _Resources:
    """What a session must give back; closable by a finalizer that cannot see the session."""

    def __init__(self) -> None:
        self.process: WorkerProcess | ForkedWorker | WarmWorker | None = None
        self.workspace: HostWorkspace | None = None
        self.lease: UidLease | None = None

    def close(self) -> None:
        if self.process is not None:
            self.process.close()
        if self.workspace is not None:
            self.workspace.release()
        if self.lease is not None:
            self.lease.release()


class Session:
    """A live sandboxed environment. Use `open_session`; close it (or use `with`).

    One thread at a time: a session is one conversation on one pair of pipes.

    `entropy_seed` makes the episode deterministic: the environment's clock (time, datetime)
    and randomness (random, os.urandom, uuid, secrets) come from this seed (see
    sandboxes/inside/entropy.py). None leaves them real.

    `zygote` (WorkerPool hands them out): the worker is forked by that zygote of this source
    and limits instead of started in a sandbox of its own (sandboxes/zygote.py); it gets the
    same init and speaks the same protocol, so nothing else here differs.

    `warm` (WorkerPool hands them out for sources marked `reuse_interpreter`): the worker is a
    warm one of this source and limits, which has played earlier episodes and resets itself
    in its interpreter (and empties its workspace) at this session's init (sandboxes/warm.py);
    closing the session gives it back when the episode ended cleanly and started no process.
    """

    def __init__(
        self,
        source: EnvSource,
        state: dict[str, Any] | None = None,
        *,
        backend: str = "auto",
        limits: Limits | None = None,
        workspace: Path | None = None,
        entropy_seed: int | None = 0,
        zygote: Zygote | None = None,
        warm: WarmWorker | None = None,
    ) -> None:
        if not isinstance(source, EnvSource):
            raise SandboxError(f"source must be an EnvSource, got {type(source).__name__}")
        if state is not None and not isinstance(state, dict):
            raise SandboxError(f"state must be a dict or None, got {type(state).__name__}")
        if entropy_seed is not None and (
            not isinstance(entropy_seed, int) or isinstance(entropy_seed, bool)
        ):
            raise SandboxError(f"entropy_seed must be an int or None, got {entropy_seed!r}")
        self.source = source
        self.entropy_seed = entropy_seed
        self.limits = limits or Limits()
        self.status = "ok"
        self.reason: str | None = None
        self.info: dict[str, Any] = {}
        self._backend: Backend = get_backend(backend)
        self.backend = self._backend.name
        self._ids = 0
        self._workspace_inside: str | None = None
        self._warm: WarmWorker | None = None
        self._channel: Channel | None = None
        self._resources = _Resources()
        self._finalizer = weakref.finalize(self, self._resources.close)
        try:
            self._start(state, workspace, zygote, warm)
        except BaseException:
            self.close()
            raise

    # ------------------------------------------------------------------ lifecycle

    def _start(
        self,
        state: dict[str, Any] | None,
        workspace: Path | None,
        zygote: Zygote | None,
        warm: WarmWorker | None,
    ) -> None:
        resolved = resolve(self.source)
        try:
            request = {"op": "init", "id": self._new_id(), "state": fragment(state)}
        except TypeError as exc:
            raise SandboxError(f"state is not JSON-serialisable: {exc}") from exc
        resources = self._resources
        wants_workspace = workspace is not None or (state is not None and WORKSPACE_KEY in state)
        nproc = None
        if warm is not None:
            if (
                workspace is not None
                or warm.key != (self.source, wants_workspace)
                or warm.limits != self.limits
            ):
                raise SandboxError(
                    "a warm worker serves episodes of its own source and limits, with a "
                    "workspace exactly when it has one, never a host workspace of the caller's"
                )
            launched = time.perf_counter()
            resources.process = process = warm
            workspace_inside, nproc = warm.workspace_inside, warm.nproc
            self._warm = warm
        elif zygote is not None:
            if (
                workspace is not None
                or zygote.key != (self.source, wants_workspace)
                or zygote.limits != self.limits
            ):
                raise SandboxError(
                    "a zygote serves episodes of its own source and limits, with a workspace "
                    "exactly when it has one, never a host workspace of the caller's"
                )
            launched = time.perf_counter()
            resources.process = process = zygote.fork()
            workspace_inside, nproc = zygote.workspace_inside, zygote.nproc
        else:
            launch = prepare_launch(
                self._backend,
                resolved,
                self.limits,
                wants_workspace=wants_workspace,
                host_workspace=workspace,
            )
            resources.lease, resources.workspace, spec = launch.lease, launch.workspace, launch.spec
            workspace_inside = self._backend.workspace_inside(spec)
            nproc = self._backend.nproc_limit(spec)
            launched = time.perf_counter()
            resources.process = process = self._backend.launch(spec)
        self._channel = Channel(
            process.write_fd,
            process.read_fd,
            max_message_bytes=self.limits.max_message_bytes,
            max_total_output_bytes=self.limits.max_total_output_bytes,
        )
        # A warm worker said it was ready when it started.
        ready = warm.ready if warm is not None else None
        deadline = time.monotonic() + self.limits.start_timeout_s
        try:
            ready = ready or self._channel.receive(deadline)
            if ready.get("ready") is not True:
                raise ProtocolViolation(f"unexpected first message {str(ready)[:200]}")
        except ChannelError as exc:
            process.kill()
            process.exit_status()
            if zygote is not None:
                # Not the environment's doing (no code of it ran yet): the pool starts another.
                raise ZygoteDied(f"the forked worker did not start ({exc.message})") from None
            raise SandboxError(
                f"the {self.backend} sandbox worker did not start ({exc.message}): "
                f"{process.stderr_text() or 'no error output'}"
            ) from None
        ready_at = time.perf_counter()
        self._workspace_inside = workspace_inside
        self.info = {
            "pid": ready.get("pid"),
            "uid": ready.get("uid"),
            "codec": ready.get("codec"),
            "spawn_to_ready_s": ready_at - launched,
        }
        request.update(
            parent_cpu=_current_cpu(),
            limits=self.limits.for_worker(nproc=nproc),
            workspace=workspace_inside,
            source=resolved.payload,
            class_name=self.source.class_name,
            loader=self.source.loader,
            dumper=self.source.dumper,
            entropy_seed=self.entropy_seed,
        )
        if self.source.tools is not None:
            request["tools"] = list(self.source.tools)
        if warm is not None:
            request["reuse"] = True
        replies, failure = self._exchange(
            encode(request), request["id"], 1, timeout=self.limits.start_timeout_s
        )
        if failure is not None:
            self._fail(failure, "loading the environment", self.limits.start_timeout_s)
            return
        ok, value = replies[0]
        if not ok:
            self._set_status("error", f"environment failed to load: {value}")
            self._resources.process.kill()
        elif not isinstance(value, dict):
            self._fail(
                ProtocolViolation("init reply is not an object"),
                "loading the environment",
                self.limits.start_timeout_s,
            )
        else:
            self.info.update(value)
            self.info["load_s"] = time.perf_counter() - ready_at
            if warm is not None:
                warm.loaded(value)

    def close(self) -> None:
        """Kill the worker and give back the workspace and uid. Safe to call twice."""
        self._finalizer()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def tools(self) -> list[str]:
        return list(self.info.get("tools", []))

    @property
    def has_workspace(self) -> bool:
        """Whether the episode has a workspace (the built-in file tools), wherever it lives."""
        return self._workspace_inside is not None

    @property
    def workspace_path(self) -> Path | None:
        """The host directory of the workspace; None also for one that lives only inside the
        sandbox (the docker backend's own workspaces)."""
        return self._resources.workspace.path if self._resources.workspace else None

    # ------------------------------------------------------------------ calls

    def call(self, tool: str, args: dict[str, Any] | None = None) -> CallResult:
        tool, args, problem = _normalise((tool, {} if args is None else args))
        if problem is not None:
            return CallResult(tool, False, None, problem)
        if not self._alive():
            return self._not_run(tool)
        rid = self._new_id()
        try:
            data = encode({"op": "call", "id": rid, "tool": tool, "args": args})
        except TypeError as exc:
            return CallResult(tool, False, None, f"invalid arguments: {exc}")
        return self._run(data, rid, [tool], batch=False)[0]

    def call_batch(self, calls: Iterable[Call], *, each: bool = False) -> list[CallResult]:
        """All calls in one message; each still has its own timeout. Stops at a kill.

        The worker sends results in chunks. With `each`, it sends every result before it
        runs the next call, so a call that kills it loses no earlier result: the results are
        then exactly those of the same calls made one at a time (`call`)."""
        calls = list(calls)
        results: list[CallResult | None] = []
        sendable: list[tuple[int, str, dict[str, Any]]] = []
        for item in calls:
            tool, args, problem = _normalise(item)
            if problem is None:
                sendable.append((len(results), tool, args))
                results.append(None)
            else:
                results.append(CallResult(tool, False, None, problem))
        if sendable and self._alive():
            rid = self._new_id()
            data, sendable = _encode_batch(rid, sendable, results, each)
        if sendable and self._alive():
            outcomes = self._run(data, rid, [tool for _, tool, _ in sendable], batch=True)
            for (slot, _, _), outcome in zip(sendable, outcomes, strict=True):
                results[slot] = outcome
        return [
            r if r is not None else self._not_run(_normalise(calls[i])[0])
            for i, r in enumerate(results)
        ]

    def _run(self, data: bytes, rid: int, tools: list[str], *, batch: bool) -> list[CallResult]:
        if self._warm is not None and not PROCESS_TOOLS.isdisjoint(tools):
            self._warm.last_episode()
        replies, failure = self._exchange(
            data, rid, len(tools), timeout=self.limits.call_timeout_s, calls=True, batch=batch
        )
        results = [
            CallResult(tool, True, value, None) if ok else CallResult(tool, False, None, value)
            for tool, (ok, value) in zip(tools, replies, strict=False)
        ]
        if failure is not None:
            interrupted = tools[len(replies)] if len(replies) < len(tools) else tools[-1]
            error = self._fail(failure, f"call {interrupted!r}", self.limits.call_timeout_s)
            if len(replies) < len(tools):
                results.append(CallResult(interrupted, False, None, error))
        return results + [self._not_run(tool) for tool in tools[len(results) :]]

    def final_state(self) -> dict[str, Any] | None:
        """The state as JSON, from the source's dumper (plus "__workspace__" for workspace
        episodes); `info["dumper"]` says which ran.

        None when there is no live worker to ask (the session was killed or failed).
        """
        if not self._alive():
            return None
        rid = self._new_id()
        replies, failure = self._exchange(
            encode({"op": "state", "id": rid}), rid, 1, timeout=self.limits.call_timeout_s
        )
        if failure is not None:
            self._fail(failure, "reading the final state", self.limits.call_timeout_s)
            return None
        ok, state = replies[0]
        if not ok:
            self._set_status("error", f"final state unavailable: {state}")
            self._resources.process.kill()
            return None
        if not isinstance(state, dict):
            self._fail(
                ProtocolViolation("final state is not an object"),
                "reading the final state",
                self.limits.call_timeout_s,
            )
            return None
        return state

    # ------------------------------------------------------------------ internals

    def _alive(self) -> bool:
        return self.status == "ok" and self._finalizer.alive

    def _new_id(self) -> int:
        self._ids += 1
        return self._ids

    def _exchange(
        self,
        data: bytes,
        rid: int,
        count: int,
        *,
        timeout: float,
        calls: bool = False,
        batch: bool = False,
    ) -> tuple[list[list[Any]], ChannelError | None]:
        """Send one request and collect `count` [ok, result|error] pairs, each within `timeout`."""
        replies: list[list[Any]] = []
        channel = self._channel
        if calls:
            # Error replies are bounded per call, not by the results budget (see Channel).
            channel.output_limit += _ERROR_ALLOWANCE_BYTES * count
        try:
            channel.send(data, time.monotonic() + timeout)
            while len(replies) < count:
                message = channel.receive(time.monotonic() + timeout, count_output=calls)
                if batch:
                    replies += _chunk_results(message, rid, len(replies), count)
                else:
                    replies.append(_single_result(message, rid))
            channel.expect_drained()
        except ChannelError as exc:
            return replies, exc
        return replies, None

    def _fail(self, failure: ChannelError, during: str, timeout: float) -> str:
        """Kill the worker for `failure`; returns the error text for the call it interrupted."""
        process = self._resources.process
        process.kill()
        status = failure.status
        if isinstance(failure, WorkerTimeout):
            error = f"timeout after {timeout:g}s (worker killed)"
        elif isinstance(failure, OversizedMessage):
            error = f"oversized output: {failure.message} (worker killed)"
        elif isinstance(failure, OutputLimitExceeded):
            error = f"output limit: {failure.message} (worker killed)"
        elif isinstance(failure, WorkerExited):
            error, status = _describe_exit(process.exit_status(), self.backend)
        else:
            error = f"protocol violation: {failure.message} (worker killed)"
        self._set_status(status, f"{error} during {during}")
        return error

    def _set_status(self, status: str, reason: str) -> None:
        if self.status == "ok":
            self.status, self.reason = status, reason

    def _not_run(self, tool: str) -> CallResult:
        return CallResult(tool, False, None, f"not run: session {self.status}: {self.reason}")


def _normalise(item: Any) -> tuple[str, Any, str | None]:
    if type(item) is tuple and len(item) == 2 and type(item[0]) is str and type(item[1]) is dict:
        return item[0], item[1], None
    if isinstance(item, dict):
        tool, args = item.get("tool"), item.get("args", {})
    elif isinstance(item, (tuple, list)) and len(item) == 2:
        tool, args = item
    else:
        return "?", None, "invalid call: expected (tool, args) or {'tool': ..., 'args': ...}"
    if not isinstance(tool, str):
        return str(tool), None, "invalid call: the tool name must be a string"
    if args is None:
        args = {}
    if not isinstance(args, dict):
        return tool, None, "TypeError: arguments must be a JSON object"
    return tool, args, None


def _encode_batch(rid: int, sendable: list, results: list, each: bool) -> tuple[bytes, list]:
    """The batch message; calls whose arguments are not JSON become error records instead."""
    request: dict[str, Any] = {"op": "batch", "id": rid}
    if each:
        request["each"] = True
    try:
        return encode({**request, "calls": [[tool, args] for _, tool, args in sendable]}), sendable
    except TypeError:
        pass
    kept = []
    for slot, tool, args in sendable:
        try:
            encode(args)
        except TypeError as exc:
            results[slot] = CallResult(tool, False, None, f"invalid arguments: {exc}")
        else:
            kept.append((slot, tool, args))
    if not kept:
        return b"", kept
    return encode({**request, "calls": [[t, a] for _, t, a in kept]}), kept


def _single_result(message: dict[str, Any], rid: int) -> list[Any]:
    if message.get("id") != rid:
        raise ProtocolViolation(f"reply for request {message.get('id')!r}, expected {rid}")
    reply = message.get("reply")
    if not _is_result(reply):
        raise ProtocolViolation("reply without an [ok, result|error] pair")
    return reply


def _is_result(item: Any) -> bool:
    return (
        type(item) is list
        and len(item) == 2
        and (item[0] is True or item[0] is False and type(item[1]) is str)
    )


def _chunk_results(message: dict[str, Any], rid: int, received: int, count: int) -> list[list]:
    results = message.get("results")
    if message.get("id") != rid or message.get("from") != received:
        raise ProtocolViolation(
            f"batch chunk for {message.get('id')!r} from "
            f"{message.get('from')!r}, expected {rid} from {received}"
        )
    if not isinstance(results, list) or not 0 < len(results) <= count - received:
        raise ProtocolViolation("batch chunk without a plausible list of results")
    if not all(_is_result(item) for item in results):
        raise ProtocolViolation("malformed result in a batch chunk")
    return results


def _sched_getcpu() -> Callable[[], int] | None:
    """glibc's sched_getcpu, or None where the C library has none."""
    try:
        function = ctypes.CDLL(None, use_errno=True).sched_getcpu
    except (OSError, AttributeError):
        return None
    function.restype, function.argtypes = ctypes.c_int, ()
    return function


_SCHED_GETCPU = _sched_getcpu()


def _current_cpu() -> int | None:
    """The CPU this thread runs on now (the worker moves off it, see worker._leave_cpu).

    Asked of the C library first: it answers from the kernel's per-CPU data in ~0.2 us, where
    reading /proc/thread-self/stat takes ~30 us, and ~300 us while the rollouts' threads
    contend for it (every session start asks, thousands per environment).
    """
    if _SCHED_GETCPU is not None:
        cpu = _SCHED_GETCPU()
        if cpu >= 0:
            return cpu
    try:
        with open("/proc/thread-self/stat") as stat:
            return int(stat.read().rsplit(")", 1)[1].split()[36])
    except (OSError, ValueError, IndexError):
        return None


def _describe_exit(code: int | None, backend: str) -> tuple[str, str]:
    """(error text, status): a signal means the kernel or someone killed it; an exit is its own."""
    if code is None:
        return "worker closed its output but did not exit", "error"
    number = -code if code < 0 else code - 128 if code > 128 and backend != "process" else None
    if number is not None:
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"worker killed by {name}", "killed"
    return f"worker exited with status {code}", "error"


def open_session(
    source: EnvSource,
    state: dict[str, Any] | None = None,
    *,
    backend: str = "auto",
    limits: Limits | None = None,
    workspace: Path | None = None,
    entropy_seed: int | None = 0,
) -> Session:
    """Start a sandboxed worker with the environment loaded (None state: class defaults)."""
    return Session(
        source,
        state,
        backend=backend,
        limits=limits,
        workspace=workspace,
        entropy_seed=entropy_seed,
    )


def run_episode(
    source: EnvSource,
    state: dict[str, Any] | None,
    calls: Iterable[Call],
    *,
    backend: str = "auto",
    limits: Limits | None = None,
    workspace: Path | None = None,
    entropy_seed: int | None = 0,
    zygote: Zygote | None = None,
    warm: WarmWorker | None = None,
) -> EpisodeResult:
    """Replay `calls` in one batch and collect the final state: a whole episode, one function.

    With `zygote` (of this source and limits) the worker is forked by it, not started; with
    `warm`, that warm worker of this source plays it.
    """
    with Session(
        source,
        state,
        backend=backend,
        limits=limits,
        workspace=workspace,
        entropy_seed=entropy_seed,
        zygote=zygote,
        warm=warm,
    ) as session:
        calls = list(calls)
        results = session.call_batch(calls) if calls else []
        final = session.final_state()
        return EpisodeResult(results, final, session.status, session.reason)
