"""The build a warm run host forks for a CLI (orchestration/fastrun/warm_build.py): the
handshake that makes exactly one of the two build. Whole served builds, their Ctrl-C and
SIGKILL, are in tests/test_build_incremental.py."""

from __future__ import annotations

import os
import socket
import threading

import pytest

from orchestration.fastrun import entrypoints, lifeline, warm_build
from orchestration.fastrun.wire import Inbox, send_line


def _serve(monkeypatch, cli_side) -> tuple[int, list[dict]]:
    """`serve` in this process (as the forked child), with the CLI's side of the channel run
    by `cli_side(its end)` in a thread; what it returned and what it would have built."""
    built: list[dict] = []

    def build_served(request: dict, terminal: int, host: int) -> int:
        built.append(request)
        return 3

    # The entry point, resolved by name where the host resolves it.
    monkeypatch.setattr(entrypoints, "entry_point", {"build": build_served}.__getitem__)
    monkeypatch.setattr(lifeline, "hold_on", lambda: None)  # no CLI to watch here
    cli_end, child_end = socket.socketpair()
    with cli_end, child_end:  # the child's end stays open after `serve`, until its exit
        other = threading.Thread(target=cli_side, args=(cli_end,))
        other.start()
        code = warm_build.serve("build", {"a": "request"}, terminal=-1, result=child_end.fileno())
        other.join(timeout=10)
        if code == 3:  # it built: the CLI waits for the end of the channel, its exit
            cli_end.setblocking(False)
            with pytest.raises(BlockingIOError):
                cli_end.recv(1)
    return code, built


def test_the_forked_build_builds_only_after_the_clis_go_and_says_how_it_went(monkeypatch):
    said: list[dict] = []

    def cli_side(end: socket.socket) -> None:
        answers = Inbox(end)
        said.append(answers.next_line())
        send_line(end, {"go": True})
        said.append(answers.next_line())

    code, built = _serve(monkeypatch, cli_side)
    assert code == 3 and built == [{"a": "request"}]
    hello, result = said
    assert hello["ready"] == os.getpid() and hello["start"]
    assert result == {"exit": 3}


def test_the_forked_build_builds_nothing_once_the_cli_gave_up_waiting(monkeypatch):
    """A CLI that waited too long builds itself and closes the channel: the child then ends
    without building, so the home is never built twice at once."""

    def cli_side(end: socket.socket) -> None:
        Inbox(end).next_line()
        end.shutdown(socket.SHUT_RDWR)

    code, built = _serve(monkeypatch, cli_side)
    assert code == 1 and built == []
