"""Deterministic episodes: with an entropy seed the environment's clock and randomness come from
the seed; string hashing is fixed in every worker."""

from __future__ import annotations

import datetime
import textwrap
import time

import pytest
from sandbox_helpers import fake

from sandboxes import EnvSource, SandboxError, WorkerPool, open_session, run_episode

CHANCE = EnvSource(
    code=textwrap.dedent("""
    import os
    import random
    import secrets
    import time
    import uuid
    from datetime import date, datetime, timedelta, timezone

    import _datetime


    class Chance:
        def draw(self) -> dict:
            return {
                "time": time.time(),
                "time_ns": time.time_ns(),
                "now": datetime.now().isoformat(),
                "utcnow": datetime.utcnow().isoformat(),
                "now_utc": datetime.now(timezone.utc).isoformat(),
                "today": date.today().isoformat(),
                "strftime": time.strftime("%Y-%m-%d %H:%M:%S"),
                "ctime": time.ctime(),
                "localtime": list(time.localtime()),
                "random": random.random(),
                "choices": random.choices("abcdefghij", k=8),
                "instance": random.Random().random(),
                "another": random.Random().random(),
                "system": random.SystemRandom().random(),
                "uuid4": str(uuid.uuid4()),
                "uuid1": str(uuid.uuid1()),
                "token": secrets.token_hex(16),
                "below": secrets.randbelow(10**12),
                "urandom": os.urandom(16).hex(),
            }

        def readings(self) -> list:
            first = [time.time(), time.time(), time.time_ns(), datetime.now().timestamp()]
            time.sleep(0.05)
            return first + [time.time()]

        def dates(self) -> dict:
            now = datetime.now()
            return {
                "subclasses": issubclass(datetime, _datetime.datetime)
                and issubclass(date, _datetime.date),
                "names": [datetime.__module__, datetime.__name__, date.__module__, date.__name__],
                "isinstance": [
                    isinstance(now, datetime),
                    isinstance(now, date),
                    isinstance(now.date(), date),
                    isinstance(_datetime.datetime(2020, 1, 1), datetime),
                ],
                "strptime": datetime.strptime("2026-01-02 03:04", "%Y-%m-%d %H:%M").isoformat(),
                "fromtimestamp": datetime.fromtimestamp(0, timezone.utc).isoformat(),
                "tomorrow": (now + timedelta(days=1) - now).total_seconds(),
            }

        def hashing(self) -> dict:
            words = {"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"}
            return {"hash": hash("alpha"), "order": list(words)}
""")
)
EPOCH = datetime.datetime(2026, 3, 2, 9, tzinfo=datetime.UTC).timestamp()


def draw(backend: str, seed: int | None) -> dict:
    episode = run_episode(CHANCE, None, [("draw", {})], backend=backend, entropy_seed=seed)
    assert episode.status == "ok", episode.reason
    return episode.results[0].result


def test_the_same_seed_gives_the_same_values_and_another_seed_others(backend):
    first, again, other = draw(backend, 7), draw(backend, 7), draw(backend, 8)
    assert first == again
    for key, value in first.items():
        if key not in ("today", "localtime"):  # a day can come round in another 30-day window
            assert other[key] != value, key
    assert first["instance"] != first["another"] != first["system"]
    assert first["uuid4"][14] == "4" and first["uuid1"][14] == "1"


def test_the_clock_starts_on_a_minute_in_the_window_and_advances_per_reading(backend):
    episode = run_episode(CHANCE, None, [("readings", {})], backend=backend, entropy_seed=3)
    first, second, third_ns, fourth, after_sleep = episode.results[0].result
    assert (first - EPOCH) % 60 == 0 and 0 <= first - EPOCH < 30 * 86400
    assert second == first + 0.001
    assert third_ns == round(first * 1e9) + 2_000_000
    assert fourth == pytest.approx(first + 0.003, abs=1e-6)
    assert after_sleep >= fourth + 0.05


def test_replaced_datetime_classes_behave_like_the_real_ones(backend):
    with open_session(CHANCE, None, backend=backend) as session:
        assert session.call("dates", {}).result == {
            "subclasses": True,
            "names": ["datetime", "datetime", "datetime", "date"],
            "isinstance": [True, True, True, True],
            "strptime": "2026-01-02T03:04:00",
            "fromtimestamp": "1970-01-01T00:00:00+00:00",
            "tomorrow": 86400.0,
        }


def test_no_seed_leaves_the_clock_and_randomness_real(backend):
    before = time.time()
    first, second = draw(backend, None), draw(backend, None)
    assert before - 1 <= first["time"] <= time.time() + 1
    assert first["random"] != second["random"] and first["urandom"] != second["urandom"]


def test_string_hashing_is_the_same_in_every_worker(backend):
    seen = [
        run_episode(CHANCE, None, [("hashing", {})], backend=backend, entropy_seed=seed)
        .results[0]
        .result
        for seed in (None, None, 5)
    ]
    assert seen[0] == seen[1] == seen[2]


def test_modules_imported_after_the_shims_are_patched_on_import(backend, monkeypatch):
    # Without orjson nothing loads datetime before the environment does: the import hook
    # patches it (and random, uuid, secrets) instead, with the same values as a result.
    from sandboxes import launch as launch_module
    from sandboxes import layout

    expected = draw(backend, 11)
    worker_only = ((layout.Mount(str(layout.HOST_WORKER_DIR), layout.WORKER_DIR),), ())
    monkeypatch.setattr(launch_module, "runtime_mounts", lambda: worker_only)
    with open_session(CHANCE, None, backend=backend, entropy_seed=11) as session:
        assert session.info["codec"] == "json"
        assert session.call("draw", {}).result == expected


def test_the_pool_passes_each_episode_its_seed(backend):
    calls = [("draw", {})]
    with WorkerPool(2, backend=backend) as pool:
        results = pool.run_episodes(
            [
                (CHANCE, None, calls),
                (CHANCE, None, calls, None),
                (CHANCE, None, calls, None, 0),
                (CHANCE, None, calls, None, 9),
                (CHANCE, None),
            ]
        )
    values = [r.results[0].result if r.results else None for r in results[:4]]
    assert values[0] == values[1] == values[2] == draw(backend, 0)
    assert values[3] == draw(backend, 9) != values[0]
    assert results[4].status == "error" and results[4].reason.startswith("malformed episode")


def test_the_seed_must_be_an_integer():
    for bad in ("1", 1.5, True):
        with pytest.raises(SandboxError, match="entropy_seed"):
            open_session(fake("sandbox_envs.py", "Counter"), {}, entropy_seed=bad)
