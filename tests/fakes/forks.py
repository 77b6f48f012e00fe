"""`synthesis.forked.fork` recording the children it starts, for tests that check them."""

from __future__ import annotations

import pytest

from synthesis import forked


def record_forks(monkeypatch: pytest.MonkeyPatch) -> list[forked.Child]:
    """The list every child forked from now on (in this test) is appended to."""
    children: list[forked.Child] = []
    real_fork = forked.fork

    def recorded(work):
        child = real_fork(work)
        if child is not None:
            children.append(child)
        return child

    monkeypatch.setattr(forked, "fork", recorded)
    return children
