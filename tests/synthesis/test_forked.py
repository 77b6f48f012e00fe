"""Work shared with a forked child: both halves' results, whoever made them."""

from __future__ import annotations

import os

import pytest

from synthesis import forked
from tests.fakes.forks import record_forks


def _made_by(share: list[int]) -> list[tuple[int, int]]:
    return [(n * n, os.getpid()) for n in share]


def test_the_child_does_the_second_share_and_this_process_the_first():
    mine, theirs = forked.shared(_made_by, [1, 2], [3, 4, 5])
    assert [v for v, _ in mine] == [1, 4] and [v for v, _ in theirs] == [9, 16, 25]
    assert {pid for _, pid in mine} == {os.getpid()}
    assert {pid for _, pid in theirs} != {os.getpid()}


def test_a_child_that_fails_or_cannot_start_leaves_its_share_to_this_process(monkeypatch):
    parent = os.getpid()

    def fails_in_the_child(share):
        if os.getpid() != parent:
            raise RuntimeError("the child broke")
        return _made_by(share)

    _, theirs = forked.shared(fails_in_the_child, [1], [2, 3])
    assert theirs == [(4, parent), (9, parent)]
    monkeypatch.setattr(forked, "fork", lambda work: None)
    assert forked.shared(_made_by, [1], [2]) == ([(1, parent)], [(4, parent)])


def test_our_share_raising_still_reaps_the_child(monkeypatch):
    parent, children = os.getpid(), record_forks(monkeypatch)

    def raises_here(share):
        if os.getpid() == parent:
            raise ValueError("our share broke")
        return share

    with pytest.raises(ValueError, match="our share broke"):
        forked.shared(raises_here, [1], [2])
    (pid,) = [child.pid for child in children]
    with pytest.raises(ChildProcessError):  # reaped already: no zombie left
        os.waitpid(pid, os.WNOHANG)
