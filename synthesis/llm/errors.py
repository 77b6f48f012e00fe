"""Why an LLM call gave no usable answer, as exception types a stage can tell apart.

Every reason starts with a short kind and a colon ("length: ...", "budget_exhausted: ..."),
the head the warehouse groups quarantine reasons by (synthesis.export.warehouse.reason_kind).
"""

from __future__ import annotations

from typing import Any


class LLMError(RuntimeError):
    """The endpoint could not answer (after retries), or answered something unusable."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason
        # The ledger rows of the attempts that led here, so a caller still counts their cost.
        self.attempts: list[Any] = []


class LLMRejected(LLMError):
    """The endpoint answered, but the answer cannot be used (cut, empty, oversized, invalid).

    `message` is the rejected assistant message, so a repair prompt can show it back."""

    def __init__(self, reason: str, message: dict[str, Any] | None = None) -> None:
        super().__init__(reason)
        self.message = message


class StageStopped(LLMError):
    """No request was sent: the stage may not spend more (budget, deadline, open breaker).

    A stage catches this to stop cleanly and keep what it has."""


class BudgetExhausted(StageStopped):
    """Reserving this call's worst case would take the build or the stage over a cap."""


class DeadlineExceeded(StageStopped):
    """The LLM stages of this build have used up ENVFOUNDRY_LLM_DEADLINE_S."""


class CircuitOpen(StageStopped):
    """The stage's requests failed too many times in a row; further calls fail fast."""
