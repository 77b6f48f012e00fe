"""Warm workers: one started worker plays episode after episode of a class whose whole state is
the plain data its loader sets (`EnvSource.reuse_interpreter`: the classes our compiler writes).

A zygote (sandboxes/zygote.py) forks a fresh worker per episode because code we did not write
may leave anything behind in its process. Our compiler's classes hold nothing but the records
their loader sets, import nothing stateful and never touch the process, so between two of
their episodes it is enough that the worker executes the module again (a fresh class object),
constructs a fresh instance from the episode's state and reseeds its clock and randomness
(sandboxes/inside/entropy.py `reseed`): a few hundred microseconds instead of a fork's few
milliseconds. The sandbox is a started worker's; only the reset between episodes differs.

A workspace class of our compiler keeps its state in the workspace's files, which only the
worker itself writes (its class's verbs and the built-in file tools): a warm worker with a
workspace empties it at the next episode's init, before seeding it, as a zygote does after
each child. A tool that starts a process (`PROCESS_TOOLS`: the shell) would let something
other than the worker run in the sandbox, which could outlive the episode or tamper with
the worker, so the session marks a worker that ran one for retirement: it plays no other.

An episode that goes wrong in any way (a timeout, a crash, a protocol violation, a reply left
unread) kills the worker instead of giving it back. The worker's CPU rlimit counts its whole
life, so a worker that has used half of it retires: every episode keeps at least half the
CPU budget a fresh worker has.
"""

from __future__ import annotations

import select

from sandboxes.backends import Backend, WorkerProcess
from sandboxes.errors import SandboxError
from sandboxes.idle import IdleCache
from sandboxes.launch import await_ready, prepare_launch
from sandboxes.limits import Limits
from sandboxes.source import EnvSource, resolve
from sandboxes.uids import UidLease
from sandboxes.workspace import HostWorkspace


class WarmWorker:
    """A started worker kept between the episodes of one source; lent to one session at a time.

    To the session it is a WorkerProcess: the same pipes, `kill` ends it for good, and `close`
    (the session is over) gives it back to its cache when the episode ended cleanly.
    """

    def __init__(
        self,
        source: EnvSource,
        backend: Backend,
        limits: Limits,
        cache: WarmCache | None = None,
        *,
        workspace: bool = False,
    ) -> None:
        if not source.reuse_interpreter:
            raise SandboxError("only a source marked reuse_interpreter gets a warm worker")
        self.source = source
        self.backend = backend
        self.limits = limits
        self.cache = cache
        self.process: WorkerProcess | None = None
        self._lease: UidLease | None = None
        self._workspace: HostWorkspace | None = None
        # Where its episodes' workspace is, inside the sandbox (None: it has none).
        self.workspace_inside: str | None = None
        self.episodes = 0
        self.cpu_s = 0.0
        self.ready: dict = {}
        self._broken = False
        try:
            launch = prepare_launch(backend, resolve(source), limits, wants_workspace=workspace)
            self._lease, self._workspace, spec = launch.lease, launch.workspace, launch.spec
            if workspace:
                self.workspace_inside = backend.workspace_inside(spec)
            self.nproc = backend.nproc_limit(spec)
            self.process = backend.launch(spec)
            self.ready = await_ready(self.process, limits, backend.name, "worker")
        except BaseException:
            self.retire()
            raise

    # ------------------------------------------------------------ the WorkerProcess interface

    @property
    def write_fd(self) -> int:
        return self.process.write_fd

    @property
    def read_fd(self) -> int:
        return self.process.read_fd

    @property
    def alive(self) -> bool:
        return not self._broken and self.process is not None and self.process.popen.poll() is None

    def kill(self) -> None:
        """The episode failed: this worker plays no other."""
        self._broken = True
        if self.process is not None:
            self.process.kill()

    def exit_status(self, timeout: float = 1.0) -> int | None:
        return self.process.exit_status(timeout) if self.process is not None else None

    def stderr_text(self, limit: int = 2000) -> str:
        return self.process.stderr_text(limit) if self.process is not None else ""

    @property
    def key(self) -> tuple[EnvSource, bool]:
        return self.source, self.workspace_inside is not None

    def last_episode(self) -> None:
        """This episode started a process (`PROCESS_TOOLS`): it is the worker's last."""
        self._broken = True

    def close(self) -> None:
        """The session is over: back to the cache when the episode ended cleanly."""
        self.episodes += 1
        if self.cache is not None and self.reusable():
            self.cache.release(self)
        else:
            self.retire()

    # ------------------------------------------------------------------------------ reuse

    def loaded(self, info: dict) -> None:
        """The init reply of an episode: the CPU time the worker has used so far."""
        cpu = info.get("cpu_s")
        if isinstance(cpu, (int, float)) and not isinstance(cpu, bool):
            self.cpu_s = float(cpu)
        else:
            self._broken = True  # not a warm worker's reply: do not trust it with another

    def reusable(self) -> bool:
        return (
            self.alive
            and self.cpu_s < self.limits.cpu_s / 2
            # Anything still on the pipe belongs to no request: the episode did not end cleanly.
            and not select.select([self.process.read_fd], [], [], 0)[0]
        )

    def retire(self) -> None:
        self._broken = True
        if self.process is not None:
            self.process.close()
        if self._workspace is not None:
            self._workspace.release()
            self._workspace = None
        if self._lease is not None:
            self._lease.release()
            self._lease = None


class WarmCache(IdleCache[tuple[EnvSource, bool], WarmWorker]):
    """Idle warm workers by (source, with a workspace), at most `capacity` of them."""

    def __init__(self, backend: Backend, limits: Limits, capacity: int) -> None:
        super().__init__(capacity)
        self.backend = backend
        self.limits = limits

    def acquire(self, source: EnvSource, *, workspace: bool = False) -> WarmWorker:
        return self._acquire((source, workspace))

    def _make(self, key: tuple[EnvSource, bool]) -> WarmWorker:
        source, workspace = key
        return WarmWorker(source, self.backend, self.limits, self, workspace=workspace)

    def _key(self, item: WarmWorker) -> tuple[EnvSource, bool]:
        return item.key

    def _discard(self, item: WarmWorker) -> None:
        item.retire()
