"""Run many episodes concurrently, each in its own fresh sandbox, at most `size` at a time.

Nothing is reused between episodes: a worker is started per episode (spawn is ~20 ms) so no
state, file or process can leak from one episode into the next. Each live sandbox holds its
own uid lease, so concurrent sandboxes never share a process budget.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

from sandboxes.backends import get_backend
from sandboxes.errors import SandboxError
from sandboxes.limits import Limits
from sandboxes.session import CallResult, EpisodeResult, run_episode
from sandboxes.source import EnvSource

T = TypeVar("T")
R = TypeVar("R")
# (source, state, calls[, workspace[, entropy_seed]]); the seed defaults to 0 as in run_episode.
Episode = (
    tuple[EnvSource, dict[str, Any] | None, list]
    | tuple[EnvSource, dict[str, Any] | None, list, Path | None]
    | tuple[EnvSource, dict[str, Any] | None, list, Path | None, int | None]
)


class WorkerPool:
    def __init__(self, size: int, backend: str = "auto", limits: Limits | None = None) -> None:
        if not isinstance(size, int) or size < 1:
            raise SandboxError(f"pool size must be a positive integer, got {size!r}")
        self.size = size
        # Resolved once: "auto" must not pick different backends for different episodes.
        self.backend = get_backend(backend).name
        self.limits = limits
        self._executor = ThreadPoolExecutor(
            max_workers=size, thread_name_prefix="envfoundry-sandbox"
        )

    def run_episodes(self, episodes: Iterable[Episode]) -> list[EpisodeResult]:
        """Results in input order. A malformed episode is an "error" result, not an exception."""
        futures = [self._executor.submit(self._run_one, episode) for episode in episodes]
        return [future.result() for future in futures]

    def map(self, episode_fn: Callable[[T], R], items: Iterable[T]) -> list[R]:
        """Interactive episodes (an agent decides after each result), `size` at a time.

        `episode_fn(item)` opens its own session with `self.backend`; results come back in
        input order, so concurrency never changes what a build writes.
        """
        futures = [self._executor.submit(episode_fn, item) for item in items]
        return [future.result() for future in futures]

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

    def close(self) -> None:
        self._executor.shutdown(wait=True)

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def _tool_name(call: Any) -> str:
    if isinstance(call, dict):
        return str(call.get("tool"))
    if isinstance(call, (tuple, list)) and call:
        return str(call[0])
    return "?"
