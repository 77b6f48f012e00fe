"""Circuit breakers per stage: a stage whose requests keep failing stops, with its reason.

Two rules, either of which opens a stage's breaker for the rest of the client's run:

- N failed requests in a row (ENVFOUNDRY_LLM_BREAKER_FAILURES): an endpoint that hangs or
  errors on every request would otherwise cost every call its timeout and retries.
- A failure rate over RATE_TO_OPEN among the stage's last RATE_WINDOW requests (once at
  least RATE_MIN_REQUESTS were seen): a flaky endpoint that fails one request in two,
  never five in a row, never trips the first rule, yet costs every other request a
  timeout or a retry for the whole build.

A failed request is one the endpoint did not answer usefully: timed out, dropped, an error
status, a body that is not a chat completion. An answer the stage rejects is not one (the
endpoint works; the stage's own checks and repairs deal with it); nor, for the rate, is a
rate limit (429): that is the endpoint saying it is full, which backoff answers. Once open,
the breaker stops the stage with CircuitOpen, whose reason names the rule (the build
summary quotes it, synthesis/llm/report.py).
"""

from __future__ import annotations

import threading
from collections import deque
from dataclasses import dataclass, field

from synthesis.llm.errors import CircuitOpen

# The stage's last requests its failure rate is taken over: enough that a few unlucky
# failures in a row do not make a rate, few enough that a stage that went bad stops after
# tens of requests, not hundreds.
RATE_WINDOW = 30
# Requests a stage must have sent before its rate may stop it: 3 failures of the first 4
# are a bad start, not a rate (the consecutive rule catches an endpoint that is down).
RATE_MIN_REQUESTS = 10
# The failure share above which a stage stops: past one request in two, most of a stage's
# time and budget goes to requests that fail and their retries, not to answers.
RATE_TO_OPEN = 0.5
# Failures the rate leaves out: a rate limit says the endpoint has more requests than it
# takes, not that it is flaky; the client backs off (at the default concurrency of 64, most
# requests of a stage may meet one while it finds the endpoint's pace).
RATE_IGNORES = ("http_429:",)


@dataclass
class CircuitBreaker:
    failures_to_open: int
    rate_window: int = RATE_WINDOW
    rate_min_requests: int = RATE_MIN_REQUESTS
    rate_to_open: float = RATE_TO_OPEN
    _failures: dict[str, int] = field(default_factory=dict)
    _last: dict[str, str] = field(default_factory=dict)
    # Per stage, whether each of its last `rate_window` requests failed.
    _recent: dict[str, deque[bool]] = field(default_factory=dict, repr=False)
    # Stages stopped by their failure rate, with the reason: open for good (requests still
    # in flight when it opened must not close it again by answering).
    _rate_open: dict[str, str] = field(default_factory=dict, repr=False)
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
            if stage in self._rate_open:
                raise CircuitOpen(self._rate_open[stage])

    def failed(self, stage: str, reason: str, *, streak: bool = True) -> None:
        """Count a failed request of `stage`: toward its failure rate, and (`streak`) its run of
        consecutive failures. A request cut short by the adaptive timeout is no streak: at 64
        requests in flight the hung ones time out together, a run of five while most requests
        are answered (benchmarks/eval_throughput.py stopped at 96 of 144 episodes); an endpoint
        that hangs on everything still fails the rate."""
        with self._lock:
            if streak:
                self._failures[stage] = self._failures.get(stage, 0) + 1
            self._last[stage] = reason
            if reason.startswith(RATE_IGNORES):
                return
            recent = self._remember(stage, True)
            failed = sum(recent)
            if (
                stage not in self._rate_open
                and len(recent) >= self.rate_min_requests
                and failed > self.rate_to_open * len(recent)
            ):
                self._rate_open[stage] = (
                    f"circuit_open: stage {stage} stopped at a failure rate of "
                    f"{failed / len(recent):.0%}: {failed} of its last {len(recent)} requests "
                    f"failed, over the {self.rate_to_open:.0%} limit (last: {reason})"
                )

    def succeeded(self, stage: str) -> None:
        # Any answer (even one we reject) proves the endpoint works: the streak resets.
        with self._lock:
            self._failures[stage] = 0
            self._remember(stage, False)

    def _remember(self, stage: str, failed: bool) -> deque[bool]:
        recent = self._recent.get(stage)
        if recent is None:
            recent = self._recent[stage] = deque(maxlen=self.rate_window)
        recent.append(failed)
        return recent
