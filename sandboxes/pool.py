"""Run many episodes concurrently, each in a fresh worker, at most `size` at a time.

No interpreter of code we did not write is reused between episodes, so no state can leak
from one into the next. The sandbox is: episodes of one source (and sessions from `session`)
get a worker forked by a zygote of that source (sandboxes/zygote.py, ~1 ms instead of a
~20 ms start), which kills what the episode left and empties the sandbox's /tmp (and its
workspace) before the next. A source marked `reuse_interpreter` (the classes our compiler
writes, whose whole state is plain data) plays its episodes in warm workers instead, which
reset in their interpreter, emptying their workspace if they have one (sandboxes/warm.py, a
few hundred microseconds). Other episodes (a host workspace given, a backend that cannot host
a zygote) start a sandbox of their own. Each live sandbox holds its own uid lease, so
concurrent sandboxes never share a process budget.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, TypeVar

from sandboxes.backends import get_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.session import CallResult, EpisodeResult, Session, open_session, run_episode
from sandboxes.source import EnvSource
from sandboxes.warm import WarmCache
from sandboxes.workspace import WORKSPACE_KEY
from sandboxes.zygote import ZygoteCache, ZygoteDied

T = TypeVar("T")
R = TypeVar("R")
# (source, state, calls[, workspace[, entropy_seed]]); the seed defaults to 0 as in run_episode.
Episode = (
    tuple[EnvSource, dict[str, Any] | None, list]
    | tuple[EnvSource, dict[str, Any] | None, list, Path | None]
    | tuple[EnvSource, dict[str, Any] | None, list, Path | None, int | None]
)


class WorkerPool:
    def __init__(
        self,
        size: int,
        backend: str = "auto",
        limits: Limits | None = None,
        *,
        reuse_sandboxes: bool = True,
    ) -> None:
        if not isinstance(size, int) or size < 1:
            raise SandboxError(f"pool size must be a positive integer, got {size!r}")
        self.size = size
        # Resolved once: "auto" must not pick different backends for different episodes.
        resolved = get_backend(backend)
        self.backend = resolved.name
        self.limits = limits
        # reuse_sandboxes=False starts a sandbox per episode (what benchmarks compare against).
        self._zygotes = (
            ZygoteCache(resolved, limits or Limits(), capacity=size)
            if reuse_sandboxes and resolved.zygote_reap is not None
            else None
        )
        self._warm = (
            WarmCache(resolved, limits or Limits(), capacity=size) if reuse_sandboxes else None
        )
        # Episodes run in a forked worker, and in a warm one (the rest started a sandbox of
        # their own).
        self.forked_episodes = 0
        self.warm_episodes = 0
        self._count_lock = threading.Lock()
        self._executor = ThreadPoolExecutor(
            max_workers=size, thread_name_prefix="envfoundry-sandbox"
        )

    @property
    def sandboxes_started(self) -> int:
        """Sandboxes this pool has started to keep (warm workers and zygotes); episodes that
        needed one of their own are not counted."""
        return sum(cache.started for cache in (self._warm, self._zygotes) if cache is not None)

    def run_episodes(self, episodes: Iterable[Episode]) -> list[EpisodeResult]:
        """Results in input order. A malformed episode is an "error" result, not an exception."""
        futures = [self._executor.submit(self._run_one, episode) for episode in episodes]
        return [future.result() for future in futures]

    def map(self, episode_fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Interactive episodes (an agent decides after each result), `size` at a time.

        `episode_fn(item)` opens its own session, with `self.session` (a forked worker) or
        open_session with `self.backend`; results come back in input order, so concurrency
        never changes what a build writes.
        """
        futures = [self._executor.submit(episode_fn, item) for item in items]
        return [future.result() for future in futures]

    @contextmanager
    def session(
        self,
        source: EnvSource,
        state: dict[str, Any] | None = None,
        *,
        entropy_seed: int | None = 0,
    ) -> Iterator[Session]:
        """An interactive session (as open_session gives) with this pool's backend and limits,
        its worker forked by a zygote of `source` when there can be one. Use it inside `map`."""
        zygote = None
        session = self._warm_session(source, state, entropy_seed)
        if session is None and self._zygotes is not None and isinstance(source, EnvSource):
            wants_workspace = _wants_workspace(state)
            for _ in range(2):  # a zygote that died is replaced (once) transparently
                try:
                    zygote = self._zygotes.acquire(source, workspace=wants_workspace)
                except SandboxError:
                    zygote = None
                    break
                if not _serves(zygote, entropy_seed):
                    self._zygotes.release(zygote)
                    zygote = None
                    break
                try:
                    session = Session(
                        source,
                        state,
                        backend=self.backend,
                        limits=self.limits,
                        entropy_seed=entropy_seed,
                        zygote=zygote,
                    )
                    break
                except ZygoteDied:
                    zygote.close()
                except BaseException:
                    self._zygotes.release(zygote)
                    raise
                self._zygotes.release(zygote)
                zygote = None
        if session is None:
            session = open_session(
                source, state, backend=self.backend, limits=self.limits, entropy_seed=entropy_seed
            )
        try:
            yield session
        finally:
            session.close()
            if zygote is not None:
                self._zygotes.release(zygote)

    def _warm_session(self, source: Any, state: Any, entropy_seed: Any) -> Session | None:
        """A session on a warm worker of `source`, or None when it cannot have one."""
        if not self._warm_eligible(source, state):
            return None
        try:
            warm = self._warm.acquire(source, workspace=_wants_workspace(state))
        except SandboxError:
            return None
        try:
            session = Session(
                source,
                state,
                backend=self.backend,
                limits=self.limits,
                entropy_seed=entropy_seed,
                warm=warm,
            )
        except BaseException:
            warm.retire()
            raise
        with self._count_lock:
            self.warm_episodes += 1
        return session

    def _warm_eligible(self, source: Any, state: Any) -> bool:
        return self._warm is not None and isinstance(source, EnvSource) and source.reuse_interpreter

    def _run_one(self, episode: Episode) -> EpisodeResult:
        if not isinstance(episode, (tuple, list)) or not 3 <= len(episode) <= 5:
            return EpisodeResult(
                [],
                None,
                "error",
                "malformed episode: expected (source, state, calls[, workspace[, entropy_seed]])",
            )
        source, state, calls = episode[:3]
        workspace = episode[3] if len(episode) > 3 else None
        entropy_seed = episode[4] if len(episode) > 4 else 0
        try:
            if workspace is None and self._warm_eligible(source, state):
                warm = self._run_warm(source, state, calls, entropy_seed)
                if warm is not None:
                    return warm
            forked = self._run_forked(source, state, calls, workspace, entropy_seed)
            if forked is not None:
                return forked
            return run_episode(
                source,
                state,
                calls,
                backend=self.backend,
                limits=self.limits,
                workspace=workspace,
                entropy_seed=entropy_seed,
            )
        except SandboxError as exc:
            calls = list(calls)
            reason = f"sandbox error: {exc}"
            results = [CallResult(_tool_name(c), False, None, f"not run: {reason}") for c in calls]
            return EpisodeResult(results, None, "error", reason)

    def _run_warm(
        self, source: EnvSource, state: Any, calls: Any, entropy_seed: Any
    ) -> EpisodeResult | None:
        """The episode in a warm worker of its source; None when none could be had."""
        try:
            warm = self._warm.acquire(source, workspace=_wants_workspace(state))
        except SandboxError:
            return None
        result = run_episode(
            source,
            state,
            calls,
            backend=self.backend,
            limits=self.limits,
            entropy_seed=entropy_seed,
            warm=warm,
        )
        with self._count_lock:
            self.warm_episodes += 1
        return result

    def _run_forked(
        self, source: Any, state: Any, calls: Any, workspace: Any, entropy_seed: Any
    ) -> EpisodeResult | None:
        """The episode in a worker forked by a zygote of its source; None when it needs a
        sandbox of its own (a host workspace given, no zygote here) or no zygote could be had,
        so the fresh path runs it and reports whatever is wrong exactly as it always has."""
        if self._zygotes is None or workspace is not None or not isinstance(source, EnvSource):
            return None
        for _ in range(2):  # a zygote that died is replaced (once) transparently
            try:
                zygote = self._zygotes.acquire(source, workspace=_wants_workspace(state))
            except SandboxError:
                return None
            if not _serves(zygote, entropy_seed):
                self._zygotes.release(zygote)
                return None
            try:
                result = run_episode(
                    source,
                    state,
                    calls,
                    backend=self.backend,
                    limits=self.limits,
                    entropy_seed=entropy_seed,
                    zygote=zygote,
                )
                if not zygote.alive:
                    # It died under the episode (no child can kill it under bwrap): the
                    # episode's result is ours, not the environment's; run it again.
                    continue
                with self._count_lock:
                    self.forked_episodes += 1
                return result
            except ZygoteDied:
                zygote.close()
                continue
            finally:
                self._zygotes.release(zygote)
        return None

    def close(self) -> None:
        self._executor.shutdown(wait=True)
        if self._zygotes is not None:
            self._zygotes.close()
        if self._warm is not None:
            self._warm.close()

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def session_in(
    pool: WorkerPool | None,
    source: EnvSource,
    state: dict[str, Any] | None = None,
    *,
    backend: str = "auto",
    entropy_seed: int | None = 0,
) -> AbstractContextManager[Session]:
    """An interactive session on `pool` when there is one (a warm or zygote-forked worker of
    `source`, with the pool's backend and limits), else in a sandbox of its own started with
    `backend` (open_session). Either is used as `with session_in(...) as session:`.

    Code that makes many short sessions of one source passes the pool it was given: starting
    a sandbox costs tens of milliseconds of CPU (an interpreter, its imports, the class),
    handing out a kept one a few."""
    if pool is None:
        return open_session(source, state, backend=backend, entropy_seed=entropy_seed)
    return pool.session(source, state, entropy_seed=entropy_seed)


def episode_in(
    pool: WorkerPool | None,
    source: EnvSource,
    state: dict[str, Any] | None,
    calls: list,
    *,
    backend: str = "auto",
    entropy_seed: int | None = 0,
) -> EpisodeResult:
    """One whole episode (run_episode) on `pool` when there is one, else in a sandbox of its
    own started with `backend`."""
    if pool is None:
        return run_episode(source, state, calls, backend=backend, entropy_seed=entropy_seed)
    (result,) = pool.run_episodes([(source, state, calls, None, entropy_seed)])
    return result


def _serves(zygote: Any, entropy_seed: Any) -> bool:
    """Whether the zygote's children can play an episode of `entropy_seed`: one that loaded
    its source's libraries under seed 0 serves seeded episodes only."""
    return entropy_seed is not None or not getattr(zygote, "seeded", False)


def _wants_workspace(state: Any) -> bool:
    return isinstance(state, dict) and WORKSPACE_KEY in state


def _tool_name(call: Any) -> str:
    if isinstance(call, dict):
        return str(call.get("tool"))
    if isinstance(call, (tuple, list)) and call:
        return str(call[0])
    return "?"
