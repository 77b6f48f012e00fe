"""Never "ok" with nothing: a build whose every task is dropped keeps the last good dataset.

The maintainer's case: an endpoint whose agent solves nothing, so the difficulty filter (its
default, 1..k-1) drops every task. Over a good home (a copy of the suite's tiny build) that
build publishes nothing, exits 3 naming the stage that lost the tasks, and says why each
environment has none; the same build with `--allow-empty` publishes the empty dataset.
One catalogue topic (and the model's three environments) keeps it to about half a minute.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from synthesis.export import datasets
from synthesis.hashing import sha256_file
from tests.build_support import copy_home, query, run_build, small_catalogue
from tests.fakes.llm_build import respond
from tests.fakes.openai_server import FakeOpenAIServer

pytestmark = pytest.mark.slow


def snapshot(home: Path) -> dict[str, str]:
    """Every published file's sha256, and where `current` points."""
    current = (home / datasets.CURRENT).resolve()
    files = {
        str(p.relative_to(current)): sha256_file(p)
        for p in sorted(current.rglob("*"))
        if p.is_file() and "dbt" not in p.relative_to(current).parts
    }
    return {"current": os.readlink(home / datasets.CURRENT), **files}


def test_an_agent_that_solves_nothing_publishes_nothing_and_keeps_the_dataset(tiny_home, tmp_path):
    home = copy_home(tiny_home[0], tmp_path / "home")
    before = snapshot(home)
    tasks_before = query(home, "SELECT count(*) FROM scenarios WHERE status = 'published'")
    catalogue = small_catalogue(tmp_path / "catalogue.json", ("airline_baggage",))
    with FakeOpenAIServer(respond) as server:
        llm = {
            "OPENAI_BASE_URL": server.base_url,
            "OPENAI_API_KEY": "sk-floor-test",
            "ENVFOUNDRY_MODEL": "fake-model",
            # The default difficulty filter: the fake agent solves no task, so none is kept.
            "ENVFOUNDRY_DIFFICULTY_FILTER": "",
        }
        refused = run_build(home, extra=["--catalogue", str(catalogue)], env=llm)
        out = refused.stdout
        assert refused.returncode == 3, out[-4000:] + refused.stderr[-2000:]
        assert "Traceback" not in out
        # The last good dataset is exactly as it was, warehouse and report included.
        assert snapshot(home) == before
        assert (
            query(home, "SELECT count(*) FROM scenarios WHERE status = 'published'") == tasks_before
        )
        (line,) = [x for x in out.splitlines() if x.startswith("NOT PUBLISHED")]
        assert "0 task(s), under the publish floor of 1 (profile tiny's floor)" in line
        assert "lost at scenarios_published, which went to zero" in line
        assert "at difficulty_calibration: difficulty (e.g. difficulty: solved 0/3" in line
        assert f"the current dataset stays {(home / datasets.CURRENT).resolve()}" in line
        assert "Build finished with nothing published: under the publish floor (exit 3)" in out
        # This build's dataset is left to read; every environment in it says why it is empty,
        # and the summary prints those reasons as the warehouse holds them.
        (unpublished,) = [
            d for d in (home / datasets.DATASETS).iterdir() if (d / datasets.UNPUBLISHED).is_file()
        ]
        assert f"of this build's UNPUBLISHED dataset {unpublished}" in out
        reasons = query(unpublished, "SELECT env_id, status, reason FROM environments")
        assert len(reasons) == 4
        for env_id, status, reason in reasons:
            assert reason.startswith("0 of ") and "dropped by the difficulty filter" in reason
            assert f"  {env_id} ({status}): {reason}" in out

        # --allow-empty: the same build publishes what it made, nothing at all.
        allowed = run_build(home, extra=["--catalogue", str(catalogue), "--allow-empty"], env=llm)
    out = allowed.stdout
    assert allowed.returncode == 0, out[-4000:] + allowed.stderr[-2000:]
    current = datasets.current_dir(home)
    assert current is not None and os.readlink(home / datasets.CURRENT) != before["current"]
    assert datasets.published_tasks(current) == 0
    assert query(home, "SELECT count(*) FROM scenarios WHERE status = 'published'") == [(0,)]
    assert "Published an empty dataset (0 tasks)" in out
    assert "Build finished ok" in out
    # The refused dataset is gone; the one it would have replaced is kept as the previous.
    kept = sorted(d.name for d in (home / datasets.DATASETS).iterdir())
    assert kept == sorted([current.name, Path(before["current"]).name])
