"""Reuse the sandbox, not the interpreter: one sandboxed zygote per environment forks a fresh
worker per episode (see sandboxes/inside/zygote.py for what happens inside).

A forked worker is, to the session, a worker like any other: the same pipes, the same
protocol, the same init request (rlimits, entropy seed, state) before any environment code
runs. Only starting it differs (~1 ms instead of ~20), and ending it: the parent asks the
zygote to kill and reap it, and the zygote puts the sandbox back as it found it.

Used for batches of episodes (WorkerPool.run_episodes) on the backends that can host a zygote
(bwrap, process). Workspace episodes get a zygote whose sandbox binds one temporary workspace,
which the zygote empties after each child. Interactive sessions (open_session) and episodes
given a host workspace of their own start a fresh worker as before.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import threading
import time
from typing import Any

import orjson

from sandboxes.backends import Backend, WorkerProcess
from sandboxes.errors import SandboxError
from sandboxes.idle import IdleCache
from sandboxes.launch import await_ready, prepare_launch
from sandboxes.limits import Limits
from sandboxes.protocol import encode
from sandboxes.source import EnvSource, resolve
from sandboxes.uids import UidLease
from sandboxes.workspace import HostWorkspace

# How long the zygote may take to answer a control request (a fork, an end with its cleanup).
_CONTROL_TIMEOUT_S = 10.0


class ZygoteDied(SandboxError):
    """The zygote is gone (or broke its protocol): start another one."""


class Zygote:
    """A live sandbox holding a prepared interpreter for `source`. One thread at a time."""

    def __init__(
        self, source: EnvSource, backend: Backend, limits: Limits, *, workspace: bool = False
    ) -> None:
        if backend.zygote_reap is None:
            raise SandboxError(f"the {backend.name} backend cannot host a zygote")
        self.source = source
        self.backend = backend
        self.limits = limits
        self.process: WorkerProcess | None = None
        self._lease: UidLease | None = None
        # For workspace episodes: one host workspace, emptied by the zygote after each child.
        self._workspace: HostWorkspace | None = None
        self.workspace_inside: str | None = None
        self._buffer = b""
        self._pending = 0
        self._lock = threading.Lock()
        # The latest child's pid as the zygote reported it (a host pid on the process backend).
        self.child_pid: int | None = None
        self.seeded = False
        resolved = resolve(source)
        parent_end, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self._control = parent_end
        try:
            launch = prepare_launch(
                backend,
                resolved,
                limits,
                wants_workspace=bool(workspace),
                control_fd=child_end.fileno(),
            )
            self._lease, self._workspace, spec = launch.lease, launch.workspace, launch.spec
            self.workspace_inside = backend.workspace_inside(spec)
            try:
                self.process = backend.launch(spec)
            finally:
                child_end.close()
            # Counted as for a started worker, whose place the zygote takes; its child is one
            # more process of the uid, so children keep a fresh worker's budget of processes.
            nproc = backend.nproc_limit(spec)
            self.nproc = nproc + 1 if nproc is not None else None
            await_ready(self.process, limits, backend.name, "zygote")
            reply = self._request(
                {
                    "op": "setup",
                    "source": resolved.payload,
                    "reap": backend.zygote_reap,
                    "wipe_tmp": backend.zygote_reap == "namespace",
                    "workspace": self.workspace_inside,
                },
                timeout=limits.start_timeout_s,
            )
            self.preloaded = list(reply.get("preloaded") or [])
            # Its children begin seeded episodes only (they load the libraries under seed 0).
            self.seeded = bool(reply.get("seeded"))
        except BaseException:
            self.close()
            raise

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.popen.poll() is None

    def fork(self) -> ForkedWorker:
        """A fresh worker (it sends "ready" first, as a started one does).

        Neither this request nor a normal end waits for the zygote's answer: the worker's
        "ready" is the answer that matters, and the zygote handles requests in order, so an
        episode costs the round trips of a started worker and no more. Answers are read when
        an exit status is wanted, or as they come in.
        """
        request_read, request_write = os.pipe()
        reply_read, reply_write = os.pipe()
        try:
            with self._lock:
                self._drain()
                try:
                    fds = [request_read, reply_write]
                    socket.send_fds(self._control, [b'{"op":"fork"}\n'], fds)
                except OSError as exc:
                    raise ZygoteDied(f"zygote control socket: {exc}") from None
                self._pending += 1
        except BaseException:
            for fd in (request_write, reply_read):
                os.close(fd)
            raise
        finally:
            os.close(request_read)
            os.close(reply_write)
        return ForkedWorker(self, request_write, reply_read)

    def end(self, eof: bool) -> None:
        """Have the zygote kill the current child and clean the sandbox (not waited for)."""
        with self._lock:
            try:
                self._control.sendall(encode({"op": "end", "eof": eof}))
            except OSError as exc:
                raise ZygoteDied(f"zygote control socket: {exc}") from None
            self._pending += 1

    def status(self) -> int | None:
        """The exit code (negative: a signal) of the child the last end request ended."""
        with self._lock:
            reply: dict[str, Any] = {}
            while self._pending:
                reply = self._reply(_CONTROL_TIMEOUT_S)
        status = reply.get("status")
        return status if isinstance(status, int) else None

    def _drain(self) -> None:
        """Read the answers that have come in (keeps the socket from filling up)."""
        while self._pending and (
            b"\n" in self._buffer or select.select([self._control], [], [], 0)[0]
        ):
            self._reply(_CONTROL_TIMEOUT_S)

    def _request(self, message: dict[str, Any], *, timeout: float) -> dict[str, Any]:
        with self._lock:
            try:
                self._control.sendall(encode(message))
            except OSError as exc:
                raise ZygoteDied(f"zygote control socket: {exc}") from None
            self._pending += 1
            return self._reply(timeout)

    def _reply(self, timeout: float) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([self._control], [], [], remaining)[0]:
                raise ZygoteDied("the zygote did not answer in time")
            try:
                data = self._control.recv(1 << 16)
            except OSError as exc:
                raise ZygoteDied(f"zygote control socket: {exc}") from None
            if not data:
                raise ZygoteDied("the zygote exited")
            self._buffer += data
        line, _, self._buffer = self._buffer.partition(b"\n")
        self._pending -= 1
        try:
            reply = orjson.loads(line)
        except orjson.JSONDecodeError:
            raise ZygoteDied("the zygote sent an undecodable reply") from None
        if not isinstance(reply, dict) or reply.get("ok") is not True:
            error = reply.get("error") if isinstance(reply, dict) else None
            raise ZygoteDied(f"the zygote refused: {error or reply!r}"[:500])
        if isinstance(reply.get("pid"), int):
            self.child_pid = reply["pid"]
        return reply

    def close(self) -> None:
        """Kill the zygote (its sandbox and every child in it) and give back its uid."""
        self._control.close()
        if self.process is not None:
            self.process.close()
        if self._workspace is not None:
            self._workspace.release()
            self._workspace = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None

    @property
    def key(self) -> tuple[EnvSource, bool]:
        return self.source, self.workspace_inside is not None


class ForkedWorker:
    """A worker forked by a zygote, with the interface of a started WorkerProcess."""

    def __init__(self, zygote: Zygote, write_fd: int, read_fd: int) -> None:
        self.zygote = zygote
        self.write_fd = write_fd
        self.read_fd = read_fd
        self._ended = False
        self._status: int | None = None
        self._status_read = False
        self._closed = False

    def kill(self) -> None:
        if self._ended:
            return
        self._ended = True
        try:
            self.zygote.end(eof=_at_eof(self.read_fd))
        except ZygoteDied:
            self._lost()

    def exit_status(self, timeout: float = 1.0) -> int | None:
        self.kill()
        if not self._status_read:
            self._status_read = True
            try:
                self._status = self.zygote.status()
            except ZygoteDied:
                self._lost()
        return self._status

    def _lost(self) -> None:
        # Under bwrap the zygote's end takes its sandbox, and so the child, down with it; a
        # process-backend child is in a process group of its own.
        pid = self.zygote.child_pid
        if self.zygote.backend.zygote_reap == "group" and pid is not None:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                pass
        self.zygote.close()

    def stderr_text(self, limit: int = 2000) -> str:
        return ""

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self.kill()
        for fd in (self.write_fd, self.read_fd):
            try:
                os.close(fd)
            except OSError:
                pass


def _at_eof(fd: int) -> bool:
    """Whether the worker closed its reply pipe (what is left unread no longer matters)."""
    try:
        while select.select([fd], [], [], 0)[0]:
            if not os.read(fd, 1 << 16):
                return True
    except OSError:
        return True
    return False


class ZygoteCache(IdleCache[tuple[EnvSource, bool], Zygote]):
    """Idle zygotes by (source, with a workspace), at most `capacity` of them."""

    def __init__(self, backend: Backend, limits: Limits, capacity: int) -> None:
        super().__init__(capacity)
        self.backend = backend
        self.limits = limits

    def acquire(self, source: EnvSource, *, workspace: bool = False) -> Zygote:
        return self._acquire((source, workspace))

    def _make(self, key: tuple[EnvSource, bool]) -> Zygote:
        source, workspace = key
        return Zygote(source, self.backend, self.limits, workspace=workspace)

    def _key(self, item: Zygote) -> tuple[EnvSource, bool]:
        return item.key

    def _discard(self, item: Zygote) -> None:
        item.close()
