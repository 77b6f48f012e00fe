"""When to try a request again, and how long to wait: exponential backoff with seeded jitter.

Retried: rate limits (429), server errors (5xx), timeouts and dropped connections — the
failures that go away. Not retried: the rest of 4xx (a bad key or request stays bad).
The jitter spreads concurrent retries apart; its seed makes a test's delays replayable.
"""

from __future__ import annotations

import random
import threading
from dataclasses import dataclass, field

RETRYABLE_STATUS = frozenset({408, 409, 429})


def retryable_status(status: int) -> bool:
    return status in RETRYABLE_STATUS or status >= 500


@dataclass
class Backoff:
    """Delay before retry n (0-based): half of base·2ⁿ plus a uniform jitter of the other half,
    capped at `max_s`."""

    base_s: float
    max_s: float
    seed: int = 0
    _rng: random.Random = field(init=False, repr=False)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __post_init__(self) -> None:
        self._rng = random.Random(self.seed)

    def delay(self, retry: int) -> float:
        ceiling = min(self.max_s, self.base_s * (2**retry))
        with self._lock:  # one seeded stream shared by concurrent calls
            jitter = self._rng.uniform(0.0, ceiling / 2)
        return ceiling / 2 + jitter
