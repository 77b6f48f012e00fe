"""Which environments a build's publish run publishes: decided once per run."""

from __future__ import annotations

from types import SimpleNamespace

from assets import _util


def _context(run_id: str, build: str = "b1") -> SimpleNamespace:
    return SimpleNamespace(
        run_id=run_id,
        run=SimpleNamespace(tags={_util.BUILD_TAG: build} if build else {}),
        instance=None,
        repository_def=SimpleNamespace(asset_graph=None),
    )


def test_one_answer_per_run_for_every_step_that_asks(monkeypatch):
    stale_now = {"b"}
    asked = []

    def found(instance, graph, stages, env_ids):
        asked.append(list(env_ids))
        return SimpleNamespace(stale_partitions=lambda: sorted(stale_now & set(env_ids)))

    monkeypatch.setattr(_util, "staleness", found)
    first = _util.made_by_this_build(_context("run-1"), ["c", "a", "b"])
    assert first == (["a", "c"], ["b"])
    # A UI run remakes "b" while the publish run goes on: its later steps keep one answer.
    stale_now.clear()
    first[0].append("changed by the caller")
    assert _util.made_by_this_build(_context("run-1"), ["a", "b", "c"]) == (["a", "c"], ["b"])
    assert asked == [["a", "b", "c"]]
    # Another run asks again, and so does a run from the UI (no build: everything, no look).
    assert _util.made_by_this_build(_context("run-2"), ["a", "b", "c"]) == (["a", "b", "c"], [])
    assert _util.made_by_this_build(_context("run-3", build=""), ["b", "a"]) == (["a", "b"], [])
    assert asked == [["a", "b", "c"], ["a", "b", "c"]]
