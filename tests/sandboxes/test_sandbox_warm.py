"""Warm workers (sandboxes/warm.py): a source marked `reuse_interpreter` plays its episodes one
after another in one worker, each exactly as a fresh worker would play it; an episode that
goes wrong ends the worker; and only classes our compiler wrote are ever marked.
"""

from __future__ import annotations

import dataclasses
import textwrap
import time

from sandboxes import EnvSource, Limits, WorkerPool, open_session
from sandboxes.session import run_episode
from synthesis.environments.build import build_environment
from synthesis.environments.runtime import compiled_by_us, sandbox_source
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.models import EnvOrigin

# Our compiler's classes use none of this; a warm worker must still reset all of it, since it
# resets by re-executing the module and reseeding the entropy, not by knowing the class.
CLOCKWORK = EnvSource(
    code=textwrap.dedent("""
    import random
    import time
    import uuid
    from datetime import datetime

    DEFAULTS = {"tags": ["new"]}

    class Clockwork:
        label = "pristine"

        def __init__(self):
            self.items = {}
            self.tags = list(DEFAULTS["tags"])

        def meddle(self) -> dict:
            DEFAULTS["tags"].append("leaked")
            Clockwork.label = "meddled"
            self.items["x"] = {"n": random.random()}
            return {"success": True}

        def look(self) -> dict:
            return {
                "success": True,
                "data": {
                    "label": Clockwork.label,
                    "tags": self.tags,
                    "items": sorted(self.items),
                    "time": time.time(),
                    "now": datetime.now().isoformat(),
                    "random": [random.random(), random.Random().random()],
                    "uuid": str(uuid.uuid4()),
                },
            }

        def odd(self) -> dict:
            # Values a warm worker may not pass through as plain JSON: the walk must decide.
            deep = []
            for _ in range(120):
                deep = [deep]
            self.items["odd"] = {"set": {3, 1, 2}, 7: "int key", "deep": deep, "big": 2**70}
            return {"success": True}

        def spin(self, seconds: float) -> dict:
            end = time.process_time() + seconds
            while time.process_time() < end:
                pass
            return {"success": True}
    """),
    reuse_interpreter=True,
)
LOOK = ("look", {})

# A workspace class (its state is the workspace directory, as in our compiler's): episode 1
# leaves behind what would show in episode 2 if the workspace were not emptied in between.
SCRIBE = EnvSource(
    code=textwrap.dedent("""
    import os

    class Scribe:
        def scribble(self) -> dict:
            os.makedirs("deep/er/est", exist_ok=True)
            with open("deep/er/est/note.txt", "w") as handle:
                handle.write("left behind")
            os.remove("seed.txt")
            os.symlink("/etc/passwd", "outside")
            os.makedirs("locked/inner")
            with open("locked/inner/kept.txt", "w") as handle:
                handle.write("x")
            os.chmod("locked/inner", 0)
            os.chmod("locked", 0)
            return {"success": True}

        def look(self) -> dict:
            found = []
            for current, dirs, files in os.walk("."):
                dirs.sort()
                found += [os.path.join(current, name) for name in sorted(dirs + files)]
            return {"success": True, "data": found}
    """),
    reuse_interpreter=True,
)
SEEDED = {"__workspace__": {"files": {"seed.txt": "hello", "docs/a.txt": "a"}, "dirs": ["empty"]}}


def _episodes(pool: WorkerPool, episodes: list) -> list[dict]:
    return [r.to_json() for r in pool.run_episodes(episodes)]


def _fresh(backend: str, source: EnvSource, state, calls, seed: int) -> dict:
    plain = dataclasses.replace(source, reuse_interpreter=False)
    return run_episode(plain, state, calls, backend=backend, entropy_seed=seed).to_json()


def test_each_episode_in_a_warm_worker_is_a_fresh_workers(backend):
    episodes = [
        (CLOCKWORK, {"items": {"a": {}}}, [("meddle", {}), LOOK], None, 3),
        (CLOCKWORK, {}, [LOOK], None, 3),
        (CLOCKWORK, {"items": {"b": {}}}, [LOOK], None, 11),
        (CLOCKWORK, {}, [("odd", {})], None, 11),
    ]
    with WorkerPool(1, backend=backend) as pool:
        warm = _episodes(pool, episodes)
        assert pool.warm_episodes == 4 and pool.forked_episodes == 0
        assert pool._warm.started == 1  # one worker played them all
    fresh = [_fresh(backend, src, state, calls, seed) for src, state, calls, _, seed in episodes]
    assert warm == fresh
    # Episode 1 really did change its class, its module and its randomness...
    meddled = warm[0]["results"][1]["result"]["data"]
    assert meddled["label"] == "meddled" and meddled["tags"] == ["new"]
    # ...and episode 2, same seed, saw none of it: clock, random, uuid start over.
    clean = warm[1]["results"][0]["result"]["data"]
    assert clean["label"] == "pristine" and clean["items"] == []
    assert clean["time"] == meddled["time"]  # the first reading of the same seed's clock
    assert clean["random"] != meddled["random"]  # episode 1 drew once more before it looked
    assert warm[2]["results"][0]["result"]["data"]["items"] == ["b"]
    odd = warm[3]["final_state"]["items"]["odd"]
    assert odd["set"] == [1, 2, 3] and odd["7"] == "int key" and odd["big"] == str(2**70)


def test_a_warm_workspace_worker_plays_each_episode_on_a_fresh_workspace(backend):
    """Episode 1 writes, deletes, plants a symlink out of the workspace and locks a directory;
    each later episode finds exactly the seeded tree a fresh worker would, and the final
    states (the workspace snapshots) are a fresh worker's byte for byte."""
    look = ("look", {})
    episodes = [
        (SCRIBE, SEEDED, [("scribble", {}), look, ("list_files", {})], None, 0),
        (SCRIBE, SEEDED, [look, ("list_files", {})], None, 0),
        (SCRIBE, {"__workspace__": {"files": {"other.txt": "b"}}}, [look], None, 4),
        (SCRIBE, SEEDED, [look], None, 0),
    ]
    with WorkerPool(1, backend=backend) as pool:
        warm = _episodes(pool, episodes)
        assert pool.warm_episodes == 4 and pool.forked_episodes == 0
        assert pool._warm.started == 1
    fresh = [_fresh(backend, src, state, calls, seed) for src, state, calls, _, seed in episodes]
    assert warm == fresh
    assert "./deep/er/est/note.txt" in warm[0]["results"][1]["result"]["data"]  # it did write
    assert warm[1]["results"][0]["result"]["data"] == [
        "./docs",
        "./empty",
        "./seed.txt",
        "./docs/a.txt",
    ]
    assert warm[2]["results"][0]["result"]["data"] == ["./other.txt"]


def test_an_episode_that_starts_a_process_is_its_warm_workers_last(isolating_backend):
    """The shell could leave a process behind (here one that would write into the workspace
    later) or tamper with the worker: after an episode that ran it the worker retires, and
    the next episode gets a new one."""
    shell = ("run_shell", {"command": "(sleep 0.5; echo late > late.txt) >/dev/null 2>&1 &"})
    episodes = [
        (SCRIBE, SEEDED, [("look", {})], None, 0),
        (SCRIBE, SEEDED, [shell], None, 0),
        (SCRIBE, SEEDED, [("look", {})], None, 0),
        (SCRIBE, SEEDED, [("look", {})], None, 0),
    ]
    with WorkerPool(1, backend=isolating_backend) as pool:
        results = _episodes(pool, episodes[:2])
        time.sleep(1)  # the leftover process, were it alive, has written by now
        results += _episodes(pool, episodes[2:])
        assert [r["status"] for r in results] == ["ok"] * 4
        assert pool.warm_episodes == 4 and pool._warm.started == 2
    assert results[2] == results[3] == results[0]


def test_a_timed_out_episode_ends_its_warm_worker_and_the_next_gets_a_new_one():
    limits = Limits(call_timeout_s=0.5)
    with WorkerPool(1, backend="process", limits=limits) as pool:
        hung, after = _episodes(
            pool,
            [
                (CLOCKWORK, {}, [("spin", {"seconds": 5})], None, 0),
                (CLOCKWORK, {}, [LOOK], None, 0),
            ],
        )
        assert hung["status"] == "killed" and "timeout" in hung["reason"]
        assert after["status"] == "ok"
        assert pool._warm.started == 2


def test_a_worker_that_used_half_its_cpu_budget_retires():
    limits = Limits(cpu_s=2)
    with WorkerPool(1, backend="process", limits=limits) as pool:
        results = _episodes(
            pool,
            [
                (CLOCKWORK, {}, [("spin", {"seconds": 1.2})], None, 0),
                (CLOCKWORK, {}, [LOOK], None, 0),  # its init reports > 1 s used: retires after
                (CLOCKWORK, {}, [LOOK], None, 0),
            ],
        )
        assert [r["status"] for r in results] == ["ok", "ok", "ok"]
        assert pool._warm.started == 2


def test_interactive_sessions_from_the_pool_reuse_warm_workers():
    with WorkerPool(1, backend="process") as pool:
        seen = []
        for seed in (5, 5):
            with pool.session(CLOCKWORK, {}, entropy_seed=seed) as session:
                seen.append(session.call("look").result)
                session.call("meddle")
                assert list(session.final_state()["items"]) == ["x"]
        assert seen[0] == seen[1] and seen[1]["data"]["label"] == "pristine"
        assert pool.warm_episodes == 2 and pool._warm.started == 1


def test_a_fresh_worker_refuses_a_second_episode():
    plain = dataclasses.replace(CLOCKWORK, reuse_interpreter=False)
    with open_session(plain, {}, backend="process") as session:
        deadline = time.monotonic() + 10
        session._channel.send(
            b'{"op":"init","id":99,"source":{"kind":"code","code":"x"}}\n', deadline
        )
        reply = session._channel.receive(deadline)
        assert reply["reply"][0] is False and "one init" in reply["reply"][1]


def test_only_classes_our_compiler_wrote_are_marked_for_reuse():
    topic = next(t for t in load_catalogue() if t.archetype == "ticketing")
    env = build_environment(generate_spec(topic))
    assert compiled_by_us(env) and sandbox_source(env).reuse_interpreter
    edited = env.model_copy(update={"code": env.code + "\nLEAK = []\n"})
    assert not compiled_by_us(edited) and not sandbox_source(edited).reuse_interpreter
    foreign = env.model_copy(update={"origin": EnvOrigin(kind="code")})
    assert not sandbox_source(foreign).reuse_interpreter
    with WorkerPool(1, backend="process") as pool:
        pool.run_episodes([(sandbox_source(edited), {}, [], None, 0)])
        assert pool.warm_episodes == 0 and pool.forked_episodes == 1
    # A workspace class of our compiler too (its state is its files), compared the same way.
    topic = next(t for t in load_catalogue() if t.archetype == "workspace")
    workspace_env = build_environment(generate_spec(topic))
    assert workspace_env.kind == "workspace" and sandbox_source(workspace_env).reuse_interpreter
    edited = workspace_env.model_copy(update={"code": workspace_env.code + "\nLEAK = []\n"})
    assert not sandbox_source(edited).reuse_interpreter
    # A tool class's code under a workspace spec is not what the compiler writes for it.
    swapped = workspace_env.model_copy(update={"code": env.code})
    assert not compiled_by_us(swapped)
