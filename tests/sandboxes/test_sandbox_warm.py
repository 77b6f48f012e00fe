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
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.models import EnvOrigin
from synthesis.runtime import compiled_by_us, sandbox_source

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
