"""A loopback server that accepts every connection and never answers: the endpoint that
hangs (a stuck load balancer, a model server whose workers are all wedged).

Nothing is read or written; connections are held open (never closed, which the client
would see as an error and retry at once) until the server stops, so a client's only way
out is its own timeout.
"""

from __future__ import annotations

import socket
import threading


class SilentServer:
    def __init__(self) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(256)
        self._held: list[socket.socket] = []
        self._lock = threading.Lock()
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._sock.getsockname()[1]}/v1"

    @property
    def accepted(self) -> int:
        """Connections taken (and never answered) so far."""
        with self._lock:
            return len(self._held)

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:  # the listening socket was closed: stopping
                return
            with self._lock:
                self._held.append(conn)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stopped.set()
        self._sock.close()
        self._thread.join(timeout=5)
        with self._lock:
            for conn in self._held:
                conn.close()
