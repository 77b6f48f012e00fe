"""How long a request may go unanswered: a multiple of the endpoint's observed latency.

A fixed timeout has to suit the slowest normal answer (ENVFOUNDRY_LLM_TIMEOUT_S, 60 s by
default), so a request the endpoint silently dropped costs that whole minute before it is
retried. Against a flaky endpoint (one request in 15 never answered, the rest at once) that
minute, not the answers, was most of a build. The answers themselves say how long a normal
one takes: a client keeps, per stage, the latencies of its last LATENCY_WINDOW answers and
gives each request MULTIPLE times their PERCENTILE, at least FLOOR_S and never more than the
configured timeout, which stays the ceiling and is the timeout until MIN_SAMPLES answers
were seen.

Per stage, because stages ask for answers of very different lengths (a written class of
8,192 tokens against a reworded sentence), so one stage's quick answers must not set
another's timeout. The same latencies give the same timeouts (no clock, no randomness
here); thread-safe, and cheap enough to ask before every request of the asyncio client
(a sorted window kept up to date on each answer, not sorted per request).
"""

from __future__ import annotations

import bisect
import math
import threading
from collections import deque
from dataclasses import dataclass, field

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
# the minutes; one that was still coming gets its retry with twice the time (TIMEOUT_GROWTH).
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
# attempt.
TIMEOUT_GROWTH = 2.0
# Timeouts are rounded up to this step: the same timeout for nearby percentiles (so the
# socket's timeout is not reset on every request, and ledger reasons read alike).
STEP_S = 0.1


@dataclass
class _Window:
    """One stage's last answers: in arrival order (to drop the oldest) and sorted."""

    arrived: deque[float] = field(default_factory=deque)
    ordered: list[float] = field(default_factory=list)


@dataclass
class AdaptiveTimeout:
    """Per-stage request timeouts from the latencies of recent answers.

    `ceiling_s` is the configured timeout: the timeout before `min_samples` answers of a
    stage were seen, and the most any request is given. The other fields default to the
    module's constants (tests shrink them)."""

    ceiling_s: float
    window: int = LATENCY_WINDOW
    min_samples: int = MIN_SAMPLES
    percentile: float = PERCENTILE
    multiple: float = MULTIPLE
    floor_s: float = FLOOR_S
    _stages: dict[str, _Window] = field(default_factory=dict, repr=False)
    _current: dict[str, float] = field(default_factory=dict, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def observe(self, stage: str, latency_s: float) -> None:
        """Record how long an answer of `stage` took (any answer: a rejected one took the
        endpoint as long to write); its next requests' timeout follows."""
        with self._lock:
            window = self._stages.setdefault(stage, _Window())
            window.arrived.append(latency_s)
            bisect.insort(window.ordered, latency_s)
            if len(window.arrived) > self.window:
                oldest = window.arrived.popleft()
                del window.ordered[bisect.bisect_left(window.ordered, oldest)]
            if len(window.ordered) >= self.min_samples:
                self._current[stage] = self._timeout(window.ordered)

    def timeout_s(self, stage: str) -> float:
        """The timeout for a request of `stage` sent now: the ceiling until the stage has
        seen enough answers, then the percentile's multiple, within [floor, ceiling]."""
        with self._lock:
            return self._current.get(stage, self.ceiling_s)

    def adapted(self, stage: str) -> bool:
        """Whether `stage` has seen enough answers for its timeout to follow them."""
        with self._lock:
            return stage in self._current

    def percentile_s(self, stage: str) -> float | None:
        """The stage's latency percentile now (None before any answer)."""
        with self._lock:
            window = self._stages.get(stage)
            return _rank(window.ordered, self.percentile) if window and window.ordered else None

    def _timeout(self, ordered: list[float]) -> float:
        wanted = max(self.floor_s, self.multiple * _rank(ordered, self.percentile))
        return min(self.ceiling_s, round(math.ceil(wanted / STEP_S - 1e-9) * STEP_S, 6))


def _rank(ordered: list[float], percentile: float) -> float:
    """The nearest-rank percentile of sorted values: the smallest value at least
    `percentile` of them do not exceed."""
    return ordered[max(0, math.ceil(percentile * len(ordered)) - 1)]
