"""How long a request may go unanswered: a multiple of the endpoint's observed latency.

A fixed timeout has to suit the slowest normal answer (ENVFOUNDRY_LLM_TIMEOUT_S, 60 s by
default), so a request the endpoint silently dropped costs that whole minute before it is
retried. Against a flaky endpoint (one request in 15 never answered, the rest at once) that
minute, not the answers, was most of a build. The answers themselves say how long a normal
one takes: the latencies of each stage's last LATENCY_WINDOW answers give each request
MULTIPLE times their PERCENTILE, at least FLOOR_S and never more than the configured
timeout, which stays the ceiling and is the timeout until MIN_SAMPLES answers were seen
(below: of the stage, or failing that of every stage).

Per stage, because stages ask for answers of very different lengths (a written class of
8,192 tokens against a reworded sentence), so one stage's quick answers must not set
another's timeout. The same latencies give the same timeouts (no clock, no randomness
here); thread-safe, and cheap enough to ask before every request of the asyncio client
(a sorted window kept up to date on each answer, not sorted per request).

A build's windows are the build's, not one client's: a build opens a client per Dagster
asset run, and most runs ask a stage fewer than MIN_SAMPLES questions, so per-client
windows left them at the ceiling, where a hung request cost a minute. With a `path` (the
client's is beside the build's budget account: `shared_path`), the windows live in a JSON
file every process of the build reads and appends to, as the budget account is kept
(synthesis.llm.budget.locked_json: an exclusive lock, rewritten in place): a client loads
them when it is made, so its first request is timed by what the build's earlier runs saw,
writes its own answers behind, and reads the others' again, at most SYNC_S apart. Until a
stage has MIN_SAMPLES answers of its own, the build's last LATENCY_WINDOW answers of every
stage stand in for them (`fallback_s`), each scaled by how much longer the request's answer
may be: any answer says the endpoint is up and how fast it answers. Without a path (tests,
`envfoundry eval`) a client keeps its own windows, with the same rules.
"""

from __future__ import annotations

import bisect
import math
import threading
import time
import weakref
from collections import deque
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.llm.budget import SYNC_S, locked_json, write_behind

# Answers per stage the percentile is taken over: a few minutes of a busy stage, so the
# timeout follows the endpoint's load now (a model server that got busier answers slower),
# not an hour ago.
LATENCY_WINDOW = 200
# Answers a stage must have seen before its timeout adapts: with fewer, the 95th percentile
# is the one or two slowest answers, too few to tell a slow endpoint from a lucky start.
MIN_SAMPLES = 20
# The share of answers the timeout is set above: the slow end of normal answers, not the
# slowest one seen (which may itself have been an anomaly).
PERCENTILE = 0.95
# Times that percentile a request may take: an answer four times slower than 95 % of its
# stage's recent answers is very unlikely to still come, and waiting it out is what cost
# the minutes; one that was still coming gets its retries with more time (TIMEOUT_GROWTH).
MULTIPLE = 4.0
# The least timeout, whatever the percentile: against a fast endpoint (answers in 0.2 s)
# four times the percentile is under a second, and a normal answer that is slow for once
# (a longer output, a queue at the server) should not time out and be sent twice. Not
# more: each hung request costs its request slot this long (benchmarks/flaky_endpoint.py:
# one request in 15 hung, 200 ms answers, 8 at once: the batch took 1.95x the healthy
# one's time with 2 s, 1.67x with 1.5 s, 1.43x with 1 s); an answer slower than it is
# retried with more time, not lost.
FLOOR_S = 1.5
# A retry after a request that timed out under the adaptive timeout gets this many times
# the time that request had (up to the ceiling; the last retry gets the ceiling): a hung
# request is retried at once, but an answer that was merely slow still arrives on a later
# attempt. The first retry gets the same time (FIRST_RETRY_GROWTH): a request cut at four
# times its stage's p95 was far more often lost than slow, and against a flaky endpoint the
# second hang in a row is what made an episode the eval's longest (benchmarks/
# eval_throughput.py, 40 episodes at once, one request in 15 hung: 2.1-3.7x the healthy
# time with the first retry given twice the time, 1.7-2.3x with the same).
TIMEOUT_GROWTH = 2.0
FIRST_RETRY_GROWTH = 1.0
# A request of an adapted stage not answered within HEDGE_MULTIPLE times the stage's p95 (at
# least HEDGE_FLOOR_S, and only when that is well under its timeout) is sent again beside
# the first, and whichever answers first is taken (a hedged request, as large services
# hedge their tail): a hung request then costs about that wait, not its whole timeout, and
# an answer that was merely slow still arrives from the first. Twice the p95: at most about
# one answer in twenty of a steady endpoint is duplicated; the floor keeps a fast
# endpoint's normal jitter from doing so.
HEDGE_MULTIPLE = 2.0
HEDGE_FLOOR_S = 0.5
# Latencies are kept to this precision (0.1 ms): the shared file stays small, and a latency
# read back from it is the one this process kept.
PRECISION = 4
# Timeouts are rounded up to this step: the same timeout for nearby percentiles (so the
# socket's timeout is not reset on every request, and ledger reasons read alike).
STEP_S = 0.1


def shared_path(account: Path) -> Path:
    """The file of a build's latency windows: beside its budget account, its own lock."""
    return account.with_suffix(".latencies.json")


@dataclass
class _Window:
    """One stage's last answers: in arrival order (to drop the oldest) and sorted."""

    arrived: deque[float] = field(default_factory=deque)
    ordered: list[float] = field(default_factory=list)

    def add(self, latency_s: float, size: int) -> None:
        self.arrived.append(latency_s)
        bisect.insort(self.ordered, latency_s)
        if len(self.arrived) > size:
            oldest = self.arrived.popleft()
            del self.ordered[bisect.bisect_left(self.ordered, oldest)]


# An answer as kept: its stage, latency, and the `max_tokens` its request allowed (None:
# not known, not pooled).
Sample = tuple[str, float, int | None]


@dataclass
class AdaptiveTimeout:
    """Per-stage request timeouts from the latencies of recent answers.

    `ceiling_s` is the configured timeout: the timeout before answers say otherwise, and
    the most any request is given. `path`: the build's shared windows (module docstring);
    None keeps them in this object. The other fields default to the module's constants
    (tests shrink them)."""

    ceiling_s: float
    window: int = LATENCY_WINDOW
    min_samples: int = MIN_SAMPLES
    percentile: float = PERCENTILE
    multiple: float = MULTIPLE
    floor_s: float = FLOOR_S
    path: Path | None = None
    _stages: dict[str, _Window] = field(default_factory=dict, repr=False)
    _current: dict[str, float] = field(default_factory=dict, repr=False)
    # Every stage's last answers, (latency, max_tokens), and the timeouts they give a stage
    # short of its own, by the `max_tokens` of its request.
    _pool: deque[tuple[float, int]] = field(default_factory=deque, repr=False)
    _fallback: dict[int, float] = field(default_factory=dict, repr=False)
    # Answers observed here and not yet in the file (one list, emptied in place: the
    # finalizer writes what is left at exit).
    _pending: list[Sample] = field(default_factory=list, repr=False)
    _synced_at: float = field(default=-math.inf, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)  # the fields
    _file_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        if self.path is not None:
            weakref.finalize(
                self, _write_pending, self.path, self.window, self._file_lock, self._pending
            )
            self._sync()  # what the build's earlier runs saw, before the first request

    def observe(self, stage: str, latency_s: float, max_tokens: int | None = None) -> None:
        """Record how long an answer of `stage` took (any answer: a rejected one took the
        endpoint as long to write) and, when known, the `max_tokens` its request allowed
        (what lets it stand in for other stages' answers: `fallback_s`); its next
        requests' timeout follows."""
        latency = round(latency_s, PRECISION)
        with self._lock:
            self._add(stage, latency, max_tokens)
            if self.path is None:
                return
            self._pending.append((stage, latency, max_tokens))
            due = self._due()
        if due:
            self._sync()

    def timeout_s(self, stage: str, max_tokens: int | None = None) -> float:
        """The timeout for a request of `stage` sent now: the percentile's multiple within
        [floor, ceiling] once the stage has seen enough answers; before that, given the
        request's `max_tokens`, the one every stage's answers give (`fallback_s`); else the
        ceiling."""
        if self.path is not None:
            with self._lock:
                due = self._due()
            if due:
                self._sync()
        with self._lock:
            current = self._current.get(stage)
            if current is not None:
                return current
            if max_tokens is None:
                return self.ceiling_s
            fallback = self._fallback_for(max_tokens)
            return self.ceiling_s if fallback is None else fallback

    def fallback_s(self, max_tokens: int) -> float | None:
        """The timeout every stage's recent answers give a request allowed `max_tokens`
        (None before enough answers): the percentile's multiple of their latencies, each
        scaled by how much longer this answer may be than its own could, within [floor,
        ceiling].

        Any answer says the endpoint is up and how fast it answers; a stage that may write
        8 times as much (a whole class against a sentence) is given 8 times as long: the
        answers of the stages asked most (topics, agent turns) time the first requests of a
        stage asked once per environment, not the configured timeout. (The scale is the
        requests' `max_tokens`, not the tokens the answers wrote: a short answer's latency
        is mostly the server's start, and scaled by its tokens it gave a stage writing
        classes 8,192 / 20 times it, most of the ceiling again. An answer slower than the
        scaled ones, of a stage filling more of its `max_tokens`, is cut and retried with
        more time: delayed, not lost; and the stage's own answers take over at
        MIN_SAMPLES.)"""
        with self._lock:
            return self._fallback_for(max_tokens)

    def flush(self) -> None:
        """Write the answers observed here to the shared file now, and read the build's
        back (without a path: nothing to do). Otherwise done at most SYNC_S apart as
        answers come and requests go, and at exit or when the timeouts are dropped."""
        if self.path is not None:
            self._sync()

    def hedge_after_s(self, stage: str, timeout_s: float) -> float | None:
        """When a request of `stage` given `timeout_s` is sent again beside itself: None
        before the stage adapted, or when the wait would not be well under the timeout."""
        p95 = self.percentile_s(stage) if self.adapted(stage) else None
        if p95 is None:
            return None
        wait = max(HEDGE_FLOOR_S, HEDGE_MULTIPLE * p95)
        return wait if wait < timeout_s / 2 else None

    def adapted(self, stage: str) -> bool:
        """Whether `stage` has seen enough answers for its timeout to follow them."""
        with self._lock:
            return stage in self._current

    def percentile_s(self, stage: str) -> float | None:
        """The stage's latency percentile now (None before any answer)."""
        with self._lock:
            window = self._stages.get(stage)
            return _rank(window.ordered, self.percentile) if window and window.ordered else None

    def _fallback_for(self, max_tokens: int) -> float | None:
        """`fallback_s`, kept until the pool changes (the caller holds `_lock`)."""
        if len(self._pool) < self.min_samples:
            return None
        fallback = self._fallback.get(max_tokens)
        if fallback is None:
            bounds = sorted(_scaled(lat, allowed, max_tokens) for lat, allowed in self._pool)
            fallback = self._fallback[max_tokens] = self._timeout(bounds)
        return fallback

    def _add(self, stage: str, latency: float, max_tokens: int | None) -> None:
        """One answer into the windows (the caller holds `_lock`)."""
        window = self._stages.setdefault(stage, _Window())
        window.add(latency, self.window)
        if len(window.ordered) >= self.min_samples:
            self._current[stage] = self._timeout(window.ordered)
        if max_tokens is not None:
            self._pool.append((latency, max_tokens))
            if len(self._pool) > self.window:
                self._pool.popleft()
            self._fallback.clear()

    def _due(self) -> bool:
        """Whether SYNC_S passed since the last round trip to the file; the caller (holding
        `_lock`) then makes the next one, the others go on with what is known meanwhile."""
        now = time.monotonic()
        if now - self._synced_at < SYNC_S:
            return False
        self._synced_at = now
        return True

    def _sync(self) -> None:
        """One round trip to the file: append the answers observed here, read the build's
        windows back (this process's answers observed meanwhile stay on top of them)."""
        assert self.path is not None
        with self._file_lock:
            with self._lock:
                pending = list(self._pending)
                self._pending.clear()
            try:
                with locked_json(self.path, _no_samples) as shared:
                    _merge(shared, pending, self.window)
                    stages = {stage: list(values) for stage, values in shared["stages"].items()}
                    pool = [(latency, allowed) for latency, allowed in shared["pool"]]
            except BaseException:  # nothing was written: the answers are still to write
                with self._lock:
                    self._pending[:0] = pending
                raise
            with self._lock:
                self._stages.clear()
                self._current.clear()
                self._pool.clear()
                self._fallback.clear()
                for stage, latencies in stages.items():
                    window = self._stages[stage] = _Window(deque(latencies), sorted(latencies))
                    if len(latencies) >= self.min_samples:
                        self._current[stage] = self._timeout(window.ordered)
                self._pool.extend(pool)
                for sample in self._pending:
                    self._add(*sample)
                self._synced_at = time.monotonic()

    def _timeout(self, ordered: list[float]) -> float:
        wanted = max(self.floor_s, self.multiple * _rank(ordered, self.percentile))
        return min(self.ceiling_s, round(math.ceil(wanted / STEP_S - 1e-9) * STEP_S, 6))


def _scaled(latency_s: float, allowed: int, max_tokens: int) -> float:
    """An answer's latency as an answer allowed `max_tokens` would take, when its request
    allowed `allowed` (never less than it took)."""
    return latency_s * max(1.0, max_tokens / max(allowed, 1))


def _rank(ordered: list[float], percentile: float) -> float:
    """The nearest-rank percentile of sorted values: the smallest value at least
    `percentile` of them do not exceed."""
    return ordered[max(0, math.ceil(percentile * len(ordered)) - 1)]


def _no_samples() -> dict[str, Any]:
    """The shared file's content before any answer: every stage's last latencies, and the
    pool of every stage's last (latency, max_tokens)."""
    return {"stages": {}, "pool": []}


def _merge(shared: dict[str, Any], samples: list[Sample], window: int) -> None:
    """Append answers, in the order they were observed, to the file's windows (the last
    `window` of each kept)."""
    stages, pool = shared.setdefault("stages", {}), shared.setdefault("pool", [])
    for stage, latency, allowed in samples:
        stages.setdefault(stage, []).append(latency)
        if allowed is not None:
            pool.append([latency, allowed])
    for values in (*stages.values(), pool):
        del values[: max(0, len(values) - window)]


def _write_pending(path: Path, window: int, lock: threading.Lock, pending: list[Sample]) -> None:
    """At exit (or when the timeouts are dropped): the answers not yet in the file."""
    with lock:
        if pending:
            samples = list(pending)
            pending.clear()
            write_behind(path, lambda shared: _merge(shared, samples, window), _no_samples)
