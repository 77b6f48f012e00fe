"""Task features kept between publishes: handed back only for what they were made from, and
screening on kept features finds what screening the scenarios finds."""

from __future__ import annotations

import random

from synthesis.models import Scenario, ToolCall
from synthesis.tasks.dedup import duplicate_reasons, duplicates_among
from synthesis.tasks.screening import screen_features, screen_tasks
from synthesis.tasks.task_features import FeatureStore, task_features
from tests.fakes.screened_scenarios import TEXT, scenario

WORDS = "cancel booking slot tuesday refund member court lesson invoice balance ticket".split()


def _scenario(sid: str, env_id: str, text: str, order: str | None = None) -> Scenario:
    chain = [ToolCall(tool="pay_order", args={"order_id": order or f"ORD-{sid}"})]
    return scenario(sid, env_id=env_id, text=text, chain=chain)


def _scenarios() -> list[Scenario]:
    rng = random.Random(3)
    out = [
        _scenario(f"s{i:02d}", f"env-{i % 4}", " ".join(rng.choice(WORDS) for _ in range(30)))
        for i in range(24)
    ]
    out.append(_scenario("n1", "env-0", TEXT))
    out.append(_scenario("n2", "env-2", TEXT.replace("home address", "office address")))
    out.append(_scenario("c1", "env-3", out[5].task_text + " thanks", order="ORD-s05"))
    return out


def test_kept_features_come_back_as_they_were_made(tmp_path):
    store = FeatureStore(tmp_path / "features")
    made = task_features([s for s in _scenarios() if s.env_id == "env-1"])
    store.put("env-1", "v1", made)
    assert store.get("env-1", "v1") == made
    assert store.get("env-1", "v2") is None  # made from something else
    assert store.get("env-2", "v1") is None  # never made
    store.put("env-1", "v2", [])
    assert store.get("env-1", "v2") == [] and store.get("env-1", "v1") is None


def test_a_file_that_does_not_read_is_made_again_not_trusted(tmp_path):
    store = FeatureStore(tmp_path)
    store.put("env-1", "v1", task_features(_scenarios()[:3]))
    path = tmp_path / "env-1.arrow"
    path.write_bytes(path.read_bytes()[:100])
    assert store.get("env-1", "v1") is None


def test_keep_only_forgets_environments_the_build_no_longer_has(tmp_path):
    store = FeatureStore(tmp_path)
    for env_id in ("env-0", "env-1", "env-2"):
        store.put(env_id, "v", [])
    store.keep_only(["env-1"])
    assert sorted(p.name for p in tmp_path.iterdir()) == ["env-1.arrow"]


def test_screening_kept_features_finds_what_screening_the_scenarios_finds(tmp_path):
    scenarios = _scenarios()
    expected = screen_tasks(scenarios, [])
    # The planted near copy (n2 of n1) and chain copy (c1 of s05) are found.
    assert {q.artifact_id for q in expected} == {"n2", "c1"}
    store = FeatureStore(tmp_path)
    for env_id in sorted({s.env_id for s in scenarios}):
        store.put(env_id, "v", task_features([s for s in scenarios if s.env_id == env_id]))
    kept = [f for env_id in ("env-3", "env-1", "env-0", "env-2") for f in store.get(env_id, "v")]
    assert screen_features(kept, []) == expected
    assert duplicates_among(reversed(kept)) == duplicate_reasons(scenarios)
