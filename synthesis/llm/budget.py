"""Budgets: token, cost and wall-clock caps for the LLM stages of one build.

Each call reserves its worst case (prompt tokens estimated at 4 characters each, plus the
answer's `max_tokens`, at the stage's prices) before it is sent and settles to what it
really cost after. Reservations count as spent until settled, so calls in flight together
can never take the total over a cap. With a `path`, the account is a JSON file under an
exclusive lock, shared by every process of the build (partitions may run in several); the
build's start time is kept there too, so the deadline bounds the build, not each stage.

The file is the build's, but a request need not touch it when no cap binds its stage (none
on the build, none on the stage): nothing then needs the other processes' spend before
sending. Such spend is kept in the process and written behind, at most SYNC_S after it was
made (and at exit); the run of unanswered requests (the build-wide breaker) is read at most
SYNC_S old, while this process's own unanswered requests are written at once. Under a cap,
every reservation and settlement is a locked round trip to the file, as the cap needs. (At
64 requests in flight, four round trips per request were most of the budget's cost: each
holds the account's lock across system calls, and with them the GIL's hand-offs.)
"""

from __future__ import annotations

import atexit
import fcntl
import json
import math
import os
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.llm.errors import BudgetExhausted

CHARS_PER_TOKEN = 4
# How stale this process's view of the shared account may be where no cap binds: its spend
# written behind, the build's run of unanswered requests read again.
SYNC_S = 0.1


def estimate_prompt_tokens(request: Any) -> int:
    """A prompt's tokens from its serialized size: 4 characters per token, rounded up."""
    text = request if isinstance(request, str) else json.dumps(request, ensure_ascii=False)
    return math.ceil(len(text) / CHARS_PER_TOKEN)


@dataclass(frozen=True)
class Caps:
    usd: float | None = None
    tokens: int | None = None


@dataclass(frozen=True)
class Reservation:
    stage: str
    tokens: int
    usd: float


@dataclass
class Budget:
    """Spend of one build against its caps (build-wide and per stage)."""

    build: Caps = field(default_factory=Caps)
    stages: dict[str, Caps] = field(default_factory=dict)
    path: Path | None = None
    _memory: dict[str, Any] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # the fields
    # One round trip to the file at a time; `_lock` is not held across it, so the requests
    # of the process that need no round trip never wait on one (nor on its GIL hand-offs).
    _file_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    _started_at: float | None = field(default=None, repr=False)
    # Spend not yet written to the file, {stage: [tokens, usd]} (the build's is their sum).
    _pending: dict[str, list[float]] = field(default_factory=dict, repr=False)
    _run: tuple[int, str] = field(default=(0, ""), repr=False)  # the file's, when last read
    _synced_at: float = field(default=-math.inf, repr=False)

    def __post_init__(self) -> None:
        if self.path is not None:
            # Spend still held when the process ends is written then.
            weakref.finalize(self, _write_pending, self.path, self._file_lock, self._pending)

    def reserve(self, stage: str, tokens: int, usd: float) -> Reservation:
        """Hold the call's worst case, or raise BudgetExhausted (nothing is held then)."""
        if self._unbound(stage):
            self._add(stage, tokens, usd)
            return Reservation(stage, tokens, usd)

        def hold(account: dict[str, Any]) -> None:
            for scope, caps in (("build", self.build), (f"stage {stage}", self._caps(stage))):
                spent = account["build"] if scope == "build" else _stage(account, stage)
                if caps.tokens is not None and spent["tokens"] + tokens > caps.tokens:
                    raise BudgetExhausted(
                        f"budget_exhausted: {scope} token cap {caps.tokens} reached "
                        f"({spent['tokens']} committed, this call may take {tokens})"
                    )
                if caps.usd is not None and spent["usd"] + usd > caps.usd + 1e-12:
                    raise BudgetExhausted(
                        f"budget_exhausted: {scope} cost cap ${caps.usd:g} reached "
                        f"(${spent['usd']:.6f} committed, this call may cost ${usd:.6f})"
                    )
            _charge(account, stage, tokens, usd)

        self._sync(hold)
        return Reservation(stage, tokens, usd)

    def settle(self, reservation: Reservation, tokens: int, usd: float) -> None:
        """Replace the reservation by what the call really cost (0 when nothing was sent)."""
        stage, delta_tokens = reservation.stage, tokens - reservation.tokens
        delta_usd = usd - reservation.usd
        if self._unbound(stage):
            self._add(stage, delta_tokens, delta_usd)
        else:
            self._sync(lambda account: _charge(account, stage, delta_tokens, delta_usd))

    def spent(self, stage: str | None = None) -> tuple[int, float]:
        """(tokens, usd) committed: settled spend plus reservations in flight."""

        def read(account: dict[str, Any]) -> tuple[int, float]:
            spent = account["build"] if stage is None else _stage(account, stage)
            return int(spent["tokens"]), float(spent["usd"])

        return self._sync(read)

    def unanswered(self, reason: str) -> None:
        """Count a request the endpoint never answered (timed out, connection refused): the
        run of them is the build's, shared by its processes like the spend."""

        def count(account: dict[str, Any]) -> None:
            endpoint = _endpoint(account)
            endpoint["unanswered"] += 1
            endpoint["last"] = reason

        self._sync(count)

    def answered(self) -> None:
        """The endpoint answered (anything, even an error status): the run is broken."""
        if self._run_now()[0]:
            self._sync(lambda account: _endpoint(account).update(unanswered=0))

    def unanswered_run(self) -> tuple[int, str]:
        """(requests left unanswered in a row across the build, the last one's reason), as
        the file had it at most SYNC_S ago."""
        return self._run_now()

    def elapsed_s(self) -> float:
        """Seconds since the build's first LLM call was budgeted."""
        if self._started_at is None:
            # Read once: the account's start never changes after it is written, and every
            # attempt checks the deadline, so a file rewrite per check would be pure cost.
            self._started_at = self._sync(lambda account: account["started_at"])
        return time.time() - self._started_at

    def _caps(self, stage: str) -> Caps:
        return self.stages.get(stage, Caps())

    def _unbound(self, stage: str) -> bool:
        """Whether the stage's spend may be written behind: a shared file, and no cap on
        the build or the stage."""
        stage_caps = self._caps(stage)
        return self.path is not None and not any(
            cap is not None
            for cap in (self.build.tokens, self.build.usd, stage_caps.tokens, stage_caps.usd)
        )

    def _add(self, stage: str, tokens: float, usd: float) -> None:
        """Spend kept in the process, written when SYNC_S has passed since the last write."""
        with self._lock:
            _hold(self._pending, stage, tokens, usd)
            due = self._due()
        if due:
            self._sync()

    def _run_now(self) -> tuple[int, str]:
        with self._lock:
            due, run = self._due(), self._run
        if due:
            self._sync()
            run = self._run
        return run

    def _due(self) -> bool:
        """Whether SYNC_S passed since the last round trip; the caller (holding `_lock`) then
        makes the next one, and the others go on with what is known until it is made."""
        now = time.monotonic()
        if now - self._synced_at < SYNC_S:
            return False
        self._synced_at = now
        return True

    def _sync(self, change: Any = None) -> Any:
        """One round trip to the account: add the spend held in the process, `change` it
        (its result is returned; nothing is written if it raises), read the unanswered run."""
        with self._file_lock:
            with self._lock:
                pending = dict(self._pending)
                self._pending.clear()
            try:
                with self._account() as account:
                    _write(account, pending)
                    result = change(account) if change is not None else None
                    endpoint = _endpoint(account)
                    run = (int(endpoint["unanswered"]), str(endpoint["last"]))
            except BaseException:  # nothing was written: the spend is still the process's
                with self._lock:
                    for stage, (tokens, usd) in pending.items():
                        _hold(self._pending, stage, tokens, usd)
                raise
            with self._lock:
                self._run, self._synced_at = run, time.monotonic()
            return result

    @contextmanager
    def _account(self) -> Iterator[dict[str, Any]]:
        """The account (the file's, or the process's without a path); the caller holds
        `_file_lock`."""
        if self.path is None:
            if not self._memory:
                self._memory.update(_empty())
            yield self._memory
            return
        with locked_json(self.path) as account:
            yield account


# The shared files this thread holds the lock of (see `write_behind`).
_holding = threading.local()
# Changes handed over by `write_behind` to the thread holding a file's lock, by file: that
# round trip makes them before it writes the file back (or the next one, or exit does).
_handed_over: dict[str, deque[Callable[[dict[str, Any]], None]]] = {}
_empty_of: dict[str, Callable[[], dict[str, Any]] | None] = {}


@contextmanager
def locked_json(
    path: Path, empty: Callable[[], dict[str, Any]] | None = None
) -> Iterator[dict[str, Any]]:
    """The JSON object in the file (`empty()`, the account's by default, when there is
    none yet), under the exclusive lock every reader takes too; written back when the block
    ends without an exception. The build's other shared state (the latency windows of
    synthesis.llm.timeouts) is kept the same way, in its own file under its own lock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    held = _holding.__dict__.setdefault("paths", set())
    with open(path.with_suffix(".lock"), "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        held.add(str(path))
        try:
            # Rewritten in place: one small write, padded with spaces so the file never
            # shrinks (no truncation a reader could see). A new file renamed over it made
            # the filesystem flush it each time (~0.3 ms vs ~0.01 ms).
            fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
            try:
                old = os.pread(fd, 1 << 20, 0)
                account = json.loads(old) if old.strip() else (empty or _empty)()
                yield account
                _take_over(str(path), account)
                data = json.dumps(account).encode().ljust(len(old))
                os.pwrite(fd, data, 0)
            finally:
                os.close(fd)
        finally:
            held.discard(str(path))
            fcntl.flock(lock, fcntl.LOCK_UN)


def write_behind(
    path: Path,
    change: Callable[[dict[str, Any]], None],
    empty: Callable[[], dict[str, Any]] | None = None,
) -> None:
    """`change` the file, for a finalizer: at once, or, when this thread holds the file's
    lock already, by that round trip before it writes the file back.

    The garbage collector runs a finalizer on whichever thread it interrupts, which may be
    inside `locked_json` of the same file for another object: taking the lock again (a new
    descriptor: flock locks are not re-entrant) waited for itself forever (seen: a Dagster
    run host running two runs of one build, each with its client)."""
    key = str(path)
    if key in getattr(_holding, "paths", ()):
        _empty_of.setdefault(key, empty)
        _handed_over.setdefault(key, deque()).append(change)
        return
    with locked_json(path, empty) as data:
        change(data)


def _take_over(key: str, data: dict[str, Any]) -> None:
    """Make the changes handed over for the file (deque operations: no lock to wait for)."""
    waiting = _handed_over.get(key)
    while waiting:
        try:
            change = waiting.popleft()
        except IndexError:
            break
        change(data)


@atexit.register
def _write_handed_over() -> None:
    """At exit: the changes no round trip took over (a hand-over during the last one's
    write)."""
    for key, waiting in list(_handed_over.items()):
        if waiting:
            with locked_json(Path(key), _empty_of.get(key)) as data:
                _take_over(key, data)


def _write_pending(path: Path, lock: threading.Lock, pending: dict[str, list[float]]) -> None:
    """At exit (or when the budget is dropped): the spend the process still holds, into the
    file."""
    with lock:
        if pending:
            held = {stage: list(spent) for stage, spent in pending.items()}
            pending.clear()
            write_behind(path, lambda account: _write(account, held))


def _hold(pending: dict[str, list[float]], stage: str, tokens: float, usd: float) -> None:
    held = pending.setdefault(stage, [0, 0.0])
    held[0] += tokens
    held[1] += usd


def _write(account: dict[str, Any], pending: dict[str, list[float]]) -> None:
    """Add the spend held in the process to the account."""
    for stage, (tokens, usd) in pending.items():
        _charge(account, stage, tokens, usd)


def _charge(account: dict[str, Any], stage: str, tokens: float, usd: float) -> None:
    for spent in (account["build"], _stage(account, stage)):
        spent["tokens"] += tokens
        spent["usd"] += usd


def _empty() -> dict[str, Any]:
    return {"started_at": time.time(), "build": {"tokens": 0, "usd": 0.0}, "stages": {}}


def _endpoint(account: dict[str, Any]) -> dict[str, Any]:
    return account.setdefault("endpoint", {"unanswered": 0, "last": ""})


def _stage(account: dict[str, Any], stage: str) -> dict[str, Any]:
    return account["stages"].setdefault(stage, {"tokens": 0, "usd": 0.0})
