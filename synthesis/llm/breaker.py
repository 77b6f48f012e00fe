"""A circuit breaker per stage: after N failed requests in a row, the stage fails fast.

An endpoint that hangs or errors on every request would otherwise cost every call its full
timeout and retries; once open, the breaker stops the stage with a clear reason instead.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field

from synthesis.llm.errors import CircuitOpen


@dataclass
class CircuitBreaker:
    failures_to_open: int
    _failures: dict[str, int] = field(default_factory=dict)
    _last: dict[str, str] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def check(self, stage: str) -> None:
        """Raise CircuitOpen when the stage's breaker is open."""
        with self._lock:
            failures = self._failures.get(stage, 0)
            if failures >= self.failures_to_open:
                raise CircuitOpen(
                    f"circuit_open: stage {stage} stopped after {failures} consecutive failed "
                    f"requests (last: {self._last.get(stage, '?')})"
                )

    def failed(self, stage: str, reason: str) -> None:
        with self._lock:
            self._failures[stage] = self._failures.get(stage, 0) + 1
            self._last[stage] = reason

    def succeeded(self, stage: str) -> None:
        # Any answer (even one we reject) proves the endpoint works: the streak resets.
        with self._lock:
            self._failures[stage] = 0
