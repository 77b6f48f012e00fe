"""Libraries an environment imports load ahead of its code, under seed 0 (sandboxes/imports.py):
a zygote loads them once and forks workers that play exactly what fresh workers play."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from sandboxes import EnvSource, WorkerPool
from sandboxes.imports import code_libraries, module_libraries
from sandboxes.inside.entropy import EPOCH_S
from sandboxes.source import resolve


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))


def test_the_libraries_a_module_loads_are_read_through_its_package(tmp_path):
    _write(
        tmp_path,
        {
            "shop/__init__.py": "import yaml\n",
            "shop/tools.py": """
                from __future__ import annotations
                import json
                from typing import TYPE_CHECKING
                from . import models
                from .util.helpers import clean
                try:
                    import orjson
                except ImportError:
                    orjson = None
                if TYPE_CHECKING:
                    import never_loaded_for_types

                class Tools:
                    import inside_class_body

                    def lazy(self):
                        import only_when_called
            """,
            "shop/models.py": "from pydantic import BaseModel\nimport shop.util\n",
            "shop/util/__init__.py": "import loguru.logger\n",
            "shop/util/helpers.py": "from ..models import BaseModel\nimport numpy as np\n",
            "shop/unused.py": "import never_imported_module\n",
        },
    )
    found = module_libraries("shop.tools", tmp_path / "shop")
    assert found == ("yaml", "orjson", "inside_class_body", "pydantic", "loguru", "numpy")
    assert code_libraries("import os\nimport pandas as pd\nfrom . import x\n") == ("pandas",)
    assert code_libraries("def f(:\n") == ()  # unreadable: nothing ahead, the load reports it


CLOCK_LIBRARY = """
    import random
    import time

    LOADED_AT = time.time()
    DRAWN = random.random()
"""
CLOCK_ENV = """
    import random
    import time

    import {library}


    class ClockEnv:
        def __init__(self):
            self.seen = []

        def stamp(self) -> dict:
            \"\"\"What the library kept while it loaded, and what this episode reads now.\"\"\"
            seen = {{
                "library_loaded_at": {library}.LOADED_AT,
                "library_drew": {library}.DRAWN,
                "now": time.time(),
                "draw": random.random(),
                "other_draw": random.Random().random(),
            }}
            self.seen.append(seen)
            return seen
"""


def _clock_source(tmp_path: Path, monkeypatch, library: str, library_code: str) -> EnvSource:
    # Both in a folder named site-packages: it is mounted whole, so the sandbox imports both.
    site = tmp_path / "site-packages"
    _write(
        site,
        {
            f"{library}/__init__.py": library_code,
            "clockenv/__init__.py": "",
            "clockenv/env.py": CLOCK_ENV.format(library=library),
        },
    )
    monkeypatch.syspath_prepend(str(site))
    source = EnvSource(module="clockenv.env:ClockEnv")
    assert resolve(source).payload["library_imports"] == [library]
    return source


def _play(pool: WorkerPool, source: EnvSource, seeds: list) -> list:
    episodes = [(source, {}, [("stamp", {})], None, seed) for seed in seeds]
    results = pool.run_episodes(episodes)
    for result in results:
        assert result.status == "ok", result.reason
    return [(r.results[0].result, r.final_state) for r in results]


def test_forked_workers_play_what_fresh_workers_play_and_libraries_load_under_seed_zero(
    backend, tmp_path, monkeypatch
):
    source = _clock_source(tmp_path, monkeypatch, "clocklib", CLOCK_LIBRARY)
    seeds = [0, 7, 7]
    with (
        WorkerPool(1, backend=backend) as pool,
        WorkerPool(1, backend=backend, reuse_sandboxes=False) as fresh,
    ):
        kept = _play(pool, source, seeds)
        started = _play(fresh, source, seeds)
        forked = pool.forked_episodes
    assert kept == started
    if pool._zygotes is not None:  # backends that host a zygote fork every episode
        assert forked == len(seeds)
    (zero, _), (seven, _), (again, _) = kept
    assert again == seven  # deterministic
    # What the library read while loading is seed 0's in every episode; the episode's own
    # clock and draws are its seed's.
    assert zero["library_loaded_at"] == seven["library_loaded_at"]
    assert zero["library_drew"] == seven["library_drew"]
    assert zero["now"] != seven["now"] and zero["draw"] != seven["draw"]
    assert zero["other_draw"] != seven["other_draw"]


def test_a_library_that_starts_a_thread_keeps_episodes_in_fresh_workers(
    backend, tmp_path, monkeypatch
):
    """A thread does not survive a fork, so a zygote refuses such libraries; the episodes
    still run, each in a worker of its own, and play the same."""
    threads = textwrap.dedent(CLOCK_LIBRARY) + (
        "import threading\n"
        "threading.Thread(target=time.sleep, args=(60,), name='poller', daemon=True).start()\n"
    )
    source = _clock_source(tmp_path, monkeypatch, "pollinglib", threads)
    with (
        WorkerPool(1, backend=backend) as pool,
        WorkerPool(1, backend=backend, reuse_sandboxes=False) as fresh,
    ):
        kept = _play(pool, source, [3])
        assert kept == _play(fresh, source, [3])
        assert pool.forked_episodes == 0


def test_an_unseeded_episode_of_a_source_with_libraries_gets_the_real_clock(
    backend, tmp_path, monkeypatch
):
    source = _clock_source(tmp_path, monkeypatch, "clocklib", CLOCK_LIBRARY)
    with WorkerPool(1, backend=backend) as pool:
        _play(pool, source, [1])
        ((result, _),) = _play(pool, source, [None])
        if pool._zygotes is not None:
            assert pool.forked_episodes == 1  # the seeded one only
    # The seeded clock starts within 30 days of EPOCH_S; this one is the machine's.
    assert result["now"] > EPOCH_S + 60 * 86400
    assert result["library_loaded_at"] > EPOCH_S + 60 * 86400


@pytest.mark.parametrize("seed", [None, 4])
def test_a_module_source_without_libraries_loads_as_before(backend, seed):
    from sandbox_helpers import fake

    source = fake("sandbox_envs.py", "Counter")
    assert "library_imports" not in resolve(source).payload
    with WorkerPool(1, backend=backend) as pool:
        (result,) = pool.run_episodes([(source, {"count": 1}, [], None, seed)])
    assert result.status == "ok", result.reason
