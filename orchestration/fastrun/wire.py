"""The lines launchers, run hosts and CLIs send each other: one JSON object per line over a
Unix socket, with file descriptors passed along (SCM_RIGHTS) where a message says so.

What each side says, and when, is in runhost.py (launcher and host) and warm_build.py (a CLI
and the build the host forks for it); this is how it travels.
"""

from __future__ import annotations

import json
import os
import socket
from collections.abc import Iterator

_RECV_BYTES = 1 << 16
# At most this many descriptors come with one message (a CLI's build request has four).
_MAX_FDS = 4


def send_line(sock: socket.socket, message: dict, fds: list[int] | tuple[int, ...] = ()) -> None:
    """One line, with `fds` passed along when there are any."""
    data = json.dumps(message).encode() + b"\n"
    sent = socket.send_fds(sock, [data], list(fds)) if fds else 0
    sock.sendall(data[sent:])


class Inbox:
    """What a peer sent on `sock` that has not been read as whole lines yet, and the
    descriptors that came with it."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""
        self.fds: list[int] = []  # received, for messages not read yet

    def receive(self) -> bool:
        """Add what the socket has now (blocking until something comes); False at its end."""
        data, fds, _, _ = socket.recv_fds(self.sock, _RECV_BYTES, _MAX_FDS)
        self.fds += fds
        self.buffer += data
        return bool(data)

    def requests(self) -> Iterator[tuple[dict, list[int]]]:
        """The whole lines received so far, each with the descriptors it says came with it
        (its "stdio" count)."""
        while b"\n" in self.buffer:
            line, _, self.buffer = self.buffer.partition(b"\n")
            request = json.loads(line)
            count = int(request.get("stdio", 0))
            fds, self.fds = self.fds[:count], self.fds[count:]
            yield request, fds

    def next_line(self) -> dict | None:
        """The next line, waiting for it (the socket's timeout applies); None when the peer
        closed first. For answers, which come without descriptors."""
        while b"\n" not in self.buffer:
            if not self.receive():
                return None
        line, _, self.buffer = self.buffer.partition(b"\n")
        return json.loads(line)

    def close_fds(self) -> None:
        """Let go of descriptors received with messages that will not be read."""
        for fd in self.fds:
            os.close(fd)
        self.fds = []
