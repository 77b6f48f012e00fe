"""Sandbox reuse: a worker forked by a zygote gives exactly what a freshly started worker gives,
whatever the episodes before it did, and a hostile episode neither changes its own result nor
the next episode's.
"""

from __future__ import annotations

import os
import signal
import textwrap

import pytest
from sandbox_helpers import backend_params, hostile

from sandboxes import EnvSource, Limits, WorkerPool, open_session
from sandboxes.session import run_episode


@pytest.fixture(params=backend_params(("bwrap", "process")))
def backend(request) -> str:
    """The backends that can host a zygote: a docker container cannot be handed the pipes of
    each forked worker (its stdio passes through the engine), so docker starts one per episode."""
    return request.param


POISONER = EnvSource(
    code=textwrap.dedent("""
    import json
    import os
    import random
    import threading
    import time

    DEFAULTS = {"tags": ["new"]}

    class Poisoner:
        label = "pristine"

        def __init__(self):
            self.tags = list(DEFAULTS["tags"])

        def poison(self, sandboxed: bool) -> dict:
            DEFAULTS["tags"].append("leaked")
            Poisoner.label = "poisoned"
            json.dumps = lambda *args, **kwargs: "patched"

            def scribble():
                while True:
                    with open("/tmp/from-a-thread", "a") as out:
                        out.write("x")
                    time.sleep(0.001)

            if not sandboxed:
                return {"success": True}  # the process backend's /tmp is the host's
            threading.Thread(target=scribble, daemon=True).start()
            with open("/tmp/left-behind", "w") as out:
                out.write("episode 1")
            os.makedirs("/tmp/locked/inner")
            os.chmod("/tmp/locked", 0o500)
            if os.fork() == 0:
                os.setsid()
                time.sleep(60)
                os._exit(0)
            return {"success": True}

        def look(self, sandboxed: bool) -> dict:
            seen = {
                "defaults": DEFAULTS,
                "label": Poisoner.label,
                "tags": self.tags,
                "dumps": json.dumps({"a": 1}),
                "threads": threading.active_count(),
                "time": time.time(),
                "random": random.random(),
            }
            if sandboxed:
                # The sandbox's own /tmp and pid namespace.
                seen["tmp"] = sorted(os.listdir("/tmp"))
                seen["processes"] = len([p for p in os.listdir("/proc") if p.isdigit()])
            return {"success": True, "data": seen}
""")
)


def _run(backend, episodes, *, reuse, limits=None):
    with WorkerPool(1, backend=backend, limits=limits, reuse_sandboxes=reuse) as pool:
        results = pool.run_episodes(episodes)
        started = pool._zygotes.started if pool._zygotes is not None else 0
        return [r.to_json() for r in results], pool.forked_episodes, started


def test_an_episode_after_a_poisoning_one_is_a_fresh_workers(backend):
    sandboxed = backend == "bwrap"
    look = ("look", {"sandboxed": sandboxed})
    poison = (POISONER, {}, [("poison", {"sandboxed": sandboxed}), look], None, 7)
    clean = (POISONER, {}, [look], None, 7)
    reused, forked, started = _run(backend, [poison, clean, clean], reuse=True)
    assert (forked, started) == (3, 1)  # one zygote served all three
    (fresh,), _, _ = _run(backend, [clean], reuse=False)
    # Episode 1 really did poison its interpreter and its sandbox...
    poisoned = reused[0]["results"][1]["result"]["data"]
    assert poisoned["label"] == "poisoned" and poisoned["dumps"] == "patched"
    assert poisoned["defaults"] == {"tags": ["new", "leaked"]}
    if sandboxed:
        assert poisoned["threads"] == 2
        assert {"left-behind", "locked"} <= set(poisoned["tmp"])
    # ... and the episodes after it see what a fresh worker sees, to the byte.
    assert reused[1] == reused[2] == fresh
    clean_look = fresh["results"][0]["result"]["data"]
    assert clean_look["label"] == "pristine" and clean_look["threads"] == 1
    if sandboxed:
        assert clean_look["tmp"] == [] and clean_look["processes"] == 2


def _hostile_episodes(backend):
    episodes = [
        (hostile("processes", "SelfDestruct"), {}, [("segfault", {})]),
        (hostile("processes", "SelfDestruct"), {}, [("exit", {"code": 3})]),
        (hostile("resources", "CpuLoop"), {}, [("quick", {}), ("spin", {}), ("quick", {})]),
        (hostile("resources", "MemoryBomb"), {}, [("allocate", {"gigabytes": 8}), ("ping", {})]),
        (hostile("protocol", "Forger"), {}, [("write", {"kind": "other_id"}), ("ping", {})]),
        (hostile("protocol", "Forger"), {}, [("write", {"kind": "endless_line"})]),
        (hostile("protocol", "PipeVandal"), {}, [("steal_input", {}), ("steal_input", {})]),
        (hostile("import_time", "NeverLoads"), {}, [("tool", {})]),
    ]
    if backend == "bwrap":
        # Only a sandbox of its own contains these (the process backend would hit the host).
        episodes += [
            (hostile("processes", "Signaller"), {}, [("kill_everyone", {}), ("ping", {})]),
            (hostile("processes", "Escaper"), {}, [("daemonize", {})]),
            (hostile("processes", "ForkBomb"), {}, [("bomb", {})]),
        ]
    episodes.append((hostile("processes", "Signaller"), {}, [("ping", {})]))
    return episodes


@pytest.mark.slow
def test_hostile_episodes_give_what_fresh_workers_give(backend):
    limits = Limits(call_timeout_s=1.0, start_timeout_s=2.0, address_space_mb=512, processes=16)
    episodes = _hostile_episodes(backend)
    reused, forked, _ = _run(backend, episodes, reuse=True, limits=limits)
    fresh, _, _ = _run(backend, episodes, reuse=False, limits=limits)
    assert forked == len(episodes)
    assert reused == fresh
    assert reused[-1]["status"] == "ok"
    assert reused[0]["results"][0]["error"] == "worker killed by SIGSEGV"
    assert reused[1]["reason"] == "worker exited with status 3 during call 'exit'"


def test_a_dead_zygote_is_replaced(backend):
    clean = (POISONER, {}, [("look", {"sandboxed": False})], None, 3)
    with WorkerPool(1, backend=backend) as pool:
        first = pool.run_episodes([clean])[0]
        (zygote,) = pool._zygotes._idle[(POISONER, False)]
        os.kill(zygote.process.popen.pid, signal.SIGKILL)
        zygote.process.popen.wait()
        second = pool.run_episodes([clean])[0]
        assert pool._zygotes.started == 2 and pool.forked_episodes == 2
    assert second.to_json() == first.to_json()
    assert second.status == "ok"


def test_a_zygote_serves_only_its_own_source(backend):
    from sandboxes.backends import get_backend
    from sandboxes.errors import SandboxError
    from sandboxes.zygote import Zygote

    zygote = Zygote(POISONER, get_backend(backend), Limits())
    try:
        other = hostile("processes", "Signaller")
        with pytest.raises(SandboxError, match="its own source"):
            run_episode(other, {}, [("ping", {})], backend=backend, zygote=zygote)
        assert "typing" not in zygote.preloaded  # only what the source imports
        assert {"json", "threading"} <= set(zygote.preloaded)
    finally:
        zygote.close()


SCRIBBLER = EnvSource(
    code=textwrap.dedent("""
    import os

    class Scribbler:
        def scribble(self) -> dict:
            os.makedirs("junk/deep")
            with open("junk/deep/note.txt", "w") as out:
                out.write("left behind")
            os.symlink("/etc/passwd", "link")
            os.chmod("junk", 0o500)
            os.chmod(".", 0o500)
            return {"success": True}

        def look(self) -> dict:
            return {"success": True, "data": sorted(os.listdir("."))}
""")
)


def test_a_workspace_episode_after_a_scribbling_one_is_a_fresh_workers(backend):
    state = {"__workspace__": {"files": {"seed.txt": "hello"}, "dirs": ["empty"]}}
    scribble = (SCRIBBLER, state, [("scribble", {}), ("look", {})], None, 1)
    clean = (SCRIBBLER, state, [("look", {})], None, 1)
    reused, forked, started = _run(backend, [scribble, clean], reuse=True)
    assert (forked, started) == (2, 1)
    assert reused[0]["results"][1]["result"]["data"] == ["empty", "junk", "link", "seed.txt"]
    (fresh,), _, _ = _run(backend, [clean], reuse=False)
    assert reused[1] == fresh
    assert fresh["results"][0]["result"]["data"] == ["empty", "seed.txt"]


def test_interactive_sessions_from_the_pool_are_fresh_workers_too(backend):
    look = {"sandboxed": backend == "bwrap"}
    with WorkerPool(1, backend=backend) as pool:
        with pool.session(POISONER, {}, entropy_seed=5) as session:
            assert session.call("poison", look).ok
        with pool.session(POISONER, {}, entropy_seed=5) as session:
            reused = [session.call("look", look).to_json(), session.final_state()]
        assert pool._zygotes.started == 1
    with open_session(POISONER, {}, backend=backend, entropy_seed=5) as session:
        fresh = [session.call("look", look).to_json(), session.final_state()]
    assert reused == fresh
