"""WorkerPool: concurrent episodes in input order, bounded concurrency, one uid per sandbox;
sessions and episodes taken from a pool when one is given."""

from __future__ import annotations

import dataclasses
import textwrap

import pytest
from sandbox_helpers import fake

from sandboxes import EnvSource, SandboxError, WorkerPool, episode_in, session_in
from sandboxes.uids import UID_BASE, UID_COUNT

WHO = EnvSource(
    code=textwrap.dedent("""
    import os
    import time

    class Who:
        def __init__(self):
            self.label = ""

        def who(self, pause: float = 0.0) -> dict:
            time.sleep(pause)
            return {"success": True, "data": {"uid": os.getuid(), "label": self.label}}
""")
)


def test_results_come_back_in_input_order(backend):
    episodes = [
        (WHO, {"label": f"episode-{i}"}, [("who", {"pause": 0.05 * (5 - i)})]) for i in range(6)
    ]
    with WorkerPool(3, backend=backend) as pool:
        results = pool.run_episodes(episodes)
    assert [r.results[0].result["data"]["label"] for r in results] == [
        f"episode-{i}" for i in range(6)
    ]
    assert all(r.status == "ok" and r.final_state["label"].startswith("episode") for r in results)


def test_concurrency_is_bounded_by_size(backend):
    clock = EnvSource(
        code=textwrap.dedent("""
        import time

        class Clock:
            def span(self, pause: float) -> dict:
                start = time.time()
                time.sleep(pause)
                return {"success": True, "data": [start, time.time()]}
    """)
    )
    with WorkerPool(2, backend=backend) as pool:
        # No entropy seed: the host's real clock, not each episode's own.
        results = pool.run_episodes([(clock, {}, [("span", {"pause": 0.3})], None, None)] * 5)
    spans = [r.results[0].result["data"] for r in results]
    # The most episodes running at any one moment (sandboxes share the host's clock).
    busiest = max(sum(start <= moment < end for start, end in spans) for moment, _ in spans)
    assert busiest == 2


def test_each_live_sandbox_gets_its_own_uid():
    with WorkerPool(4, backend="bwrap") as pool:
        if pool.backend != "bwrap":
            pytest.skip("bwrap is not available")
        results = pool.run_episodes([(WHO, {}, [("who", {"pause": 0.3})]) for _ in range(4)])
    uids = [r.results[0].result["data"]["uid"] for r in results]
    import os

    if os.geteuid() == 0:
        assert len(set(uids)) == 4
        assert all(UID_BASE <= uid < UID_BASE + UID_COUNT for uid in uids)


def test_a_broken_episode_does_not_sink_the_others(backend):
    episodes = [
        (WHO, {}, [("who", {})]),
        (EnvSource(path="/nonexistent.py"), {}, [("who", {}), {"tool": "x"}]),
        (fake("sandbox_envs.py", "Broken"), {}, [("tool", {})]),
        (WHO, {}, [("who", {})]),
    ]
    with WorkerPool(2, backend=backend) as pool:
        results = pool.run_episodes(episodes)
    assert [r.status for r in results] == ["ok", "error", "error", "ok"]
    assert results[1].reason.startswith("sandbox error: cannot read environment source")
    assert [c.tool for c in results[1].results] == ["who", "x"]
    assert not any(c.ok for c in results[1].results)


def test_pool_arguments_are_checked():
    with pytest.raises(SandboxError):
        WorkerPool(0)
    with pytest.raises(SandboxError):
        WorkerPool(2, backend="vm")


# Whatever a sandbox holds that is not the class's state: each session must see it as new.
MARKED = EnvSource(
    code=textwrap.dedent("""
    import random

    SEEN = []

    class Marked:
        def __init__(self):
            self.label = ""

        def mark(self) -> dict:
            SEEN.append(self.label)
            return {"success": True, "data": {"seen": list(SEEN), "draw": random.random()}}
""")
)


@pytest.mark.parametrize("reuse", [True, False], ids=["warm", "forked"])
def test_sessions_and_episodes_given_a_pool_come_from_it_as_a_fresh_sandbox_would_play_them(
    backend, reuse
):
    """session_in / episode_in: with a pool, the sessions and episodes of one source are
    played by the one sandbox it keeps (a warm worker, or a zygote's forks for a class we did
    not compile; Docker hosts no zygote, so there each starts its own), each as a sandbox of
    its own plays it; with no pool, each starts its own."""
    source = dataclasses.replace(MARKED, reuse_interpreter=reuse)

    def play(pool):
        out = []
        for label in ("a", "b", "c"):
            with session_in(pool, source, {"label": label}, backend=backend) as session:
                out.append(session.call("mark").result["data"])
                out.append(session.final_state())
            calls = [("mark", {}), ("mark", {})]
            episode = episode_in(
                pool, source, {"label": label * 2}, calls, backend=backend, entropy_seed=7
            )
            out.append((episode.status, [r.result["data"] for r in episode.results]))
        return out

    alone = play(None)
    with WorkerPool(2, backend=backend) as pool:
        shared = play(pool)
        assert pool.sandboxes_started == (1 if reuse or backend != "docker" else 0)
    assert shared == alone
    assert alone[0]["seen"] == ["a"] and alone[1] == {"label": "a"}
    assert alone[2][0] == "ok" and [d["seen"] for d in alone[2][1]] == [["aa"], ["aa", "aa"]]
