"""Hedged requests: one sent again beside itself when it is slow to answer, the first answer
taken.

A flaky endpoint drops a request now and then: the client hears nothing, and only a timeout
tells. The adaptive timeout (synthesis.llm.timeouts) makes that wait a few times the stage's
normal latency instead of a minute, but an episode is a chain of requests, and the one that
met two dropped requests in a row was what an evaluation waited for. So a request of a stage
whose latencies are known is sent again once it has gone unanswered for about twice their
95th percentile (`HEDGE_MULTIPLE`), well before its timeout, and the answer that comes first
is the request's: a dropped request then costs that wait, and an answer that was only slow
still comes from the first send. The pair ends when the first send's timeout does (the hedge
is given the rest of it), so a request that fails, fails as it did unhedged, with the first
send's failure.

Both sends run on threads of their own, never the caller's: the caller waits for the first
answer and goes on; the slower send runs out on its thread (until its own answer or timeout)
and its answer is dropped. An endpoint that bills by request may bill it: a hedge is sent only
for requests slower than nearly all of the stage's answers.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from typing import Any

from synthesis.llm.transport import RawAnswer, Transport


@dataclass(frozen=True)
class Hedge:
    """A hedge that was sent: after how long, and how it ended ("won": its answer was taken;
    "lost": the first send's was, and the hedge's dropped; "failed": neither answered)."""

    after_s: float
    outcome: str

    @property
    def reason(self) -> str:
        taken = {
            "won": "its answer was taken, the first send's dropped",
            "lost": "the first send's answer was taken, the hedge's dropped",
            "failed": "neither send answered",
        }[self.outcome]
        # The dropped send's tokens are not known; an endpoint that bills by request bills it.
        return f"sent again after {self.after_s:.2f} s unanswered: {taken}"


class HedgingSender:
    """Sends a request through `transport` hedged (see the module's docstring). Thread-safe;
    `sent` and `won` count the hedges sent and the answers they gave first."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport
        self.sent = 0
        self.won = 0
        self._lock = threading.Lock()

    def send(
        self,
        request: dict[str, Any],
        timeout_s: float,
        hedge_after_s: float,
        on_hedge: Callable[[Hedge], None] | None = None,
    ) -> RawAnswer:
        """The first answer of the request and, if it is not answered within
        `hedge_after_s`, of its hedge; else the first send's TransportFailure. When a hedge
        was sent, `on_hedge` hears how it went before this returns (the caller's ledger
        counts it: the endpoint was sent the request twice)."""
        first = self._start(request, timeout_s)
        done, _ = wait([first], timeout=hedge_after_s)
        if done:
            return first.result()
        hedge = self._start(request, max(timeout_s - hedge_after_s, 0.001))
        with self._lock:
            self.sent += 1
        pending = {first, hedge}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in (f for f in (first, hedge) if f in done):
                if future.exception() is None:
                    if future is hedge:
                        with self._lock:
                            self.won += 1
                    if on_hedge is not None:
                        on_hedge(Hedge(hedge_after_s, "won" if future is hedge else "lost"))
                    return future.result()
        if on_hedge is not None:
            on_hedge(Hedge(hedge_after_s, "failed"))
        return first.result()  # both failed: the first send's failure, as unhedged

    def _start(self, request: dict[str, Any], timeout_s: float) -> Future:
        future: Future = Future()

        def run() -> None:
            try:
                future.set_result(self.transport.send(request, timeout_s=timeout_s))
            except BaseException as exc:  # noqa: BLE001 - handed to the waiting caller
                future.set_exception(exc)

        threading.Thread(target=run, name="llm-hedge", daemon=True).start()
        return future
