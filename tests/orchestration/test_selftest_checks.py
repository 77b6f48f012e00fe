"""The self-tests as asset checks on `checks`: each check fails on exactly the tampering it is
about, over the artifact as stored, and runs per environment in the environment job."""

from __future__ import annotations

import copy
import shutil

import dagster as dg
import pytest

from orchestration import instance as envfoundry_instance
from quality import proofs
from synthesis import codec
from synthesis.config import PROFILES

BAR = PROFILES["tiny"].min_mutation_kill_rate


def _scenario(n: int, status: str = "published", reason: str | None = None) -> dict:
    return {
        "scenario_id": f"s{n}",
        "env_id": "shop",
        "state_id": "st0",
        "task_text": f"task {n}",
        "initial_state": {},
        "gold_chain": [{"tool": "pay_order", "args": {"order_id": f"O{n}"}}],
        "status": status,
        "reason": reason,
    }


def _selftest(n: int, kill_rate: float = 1.0, n_mutants: int = 3) -> dict:
    return {
        "scenario_id": f"s{n}",
        "gold_pass": True,
        "noop_fail": True,
        "deterministic": True,
        "mutation_kill_rate": kill_rate,
        "n_mutants": n_mutants,
        "reason": None,
    }


def _artifact() -> dict:
    """Three published, proven scenarios and one quarantined by its gold run."""
    return {
        "scenarios": [_scenario(1), _scenario(2), _scenario(3), _scenario(4, "quarantined", "x")],
        "checks": [],
        "selftests": [_selftest(1), _selftest(2), _selftest(3)],
        "quarantine": [
            {
                "artifact_type": "scenario",
                "artifact_id": "s4",
                "stage": "scenarios",
                "reason": "gold step 1 pay_order failed: no such order",
            }
        ],
    }


def _failing(artifact: dict) -> dict[str, proofs.ProofResult]:
    results = proofs.evaluate_proofs(artifact, min_kill_rate=BAR)
    assert [r.name for r in results] == list(proofs.PROOF_CHECKS)
    return {r.name: r for r in results if not r.passed}


def test_an_untampered_artifact_passes_every_check():
    assert _failing(_artifact()) == {}


def test_a_published_scenario_whose_selftest_is_not_proven_fails_only_proven():
    artifact = _artifact()
    artifact["selftests"][1]["gold_pass"] = False
    failing = _failing(artifact)
    assert set(failing) == {proofs.PUBLISHED_PROVEN}
    result = failing[proofs.PUBLISHED_PROVEN]
    assert result.offenders == {"s2": "gold_pass false"}
    assert result.measured == {"published": 3, "proven": 2, "unproven": 1}


def test_a_published_scenario_without_a_selftest_is_not_proven():
    artifact = _artifact()
    del artifact["selftests"][0]
    assert _failing(artifact)[proofs.PUBLISHED_PROVEN].offenders == {"s1": "no self-test"}


def test_lowered_kill_rates_fail_only_the_kill_rate_check():
    artifact = _artifact()
    for test in artifact["selftests"]:
        test["mutation_kill_rate"] = 0.5
    failing = _failing(artifact)
    assert set(failing) == {proofs.KILL_RATE}
    result = failing[proofs.KILL_RATE]
    assert result.measured["mean_kill_rate"] == 0.5 and result.measured["min_kill_rate"] == BAR
    assert set(result.offenders) == {"s1", "s2", "s3"}


def test_scenarios_without_mutants_measure_nothing():
    # Every mutant equivalent to the gold chain: kill rate 0 by convention, left out of the mean.
    artifact = _artifact()
    artifact["selftests"][0].update(mutation_kill_rate=0.0, n_mutants=0)
    (kill,) = [
        r for r in proofs.evaluate_proofs(artifact, min_kill_rate=BAR) if r.name == proofs.KILL_RATE
    ]
    assert kill.passed
    assert kill.measured["measured_scenarios"] == 2 and kill.measured["without_mutants"] == 1


def test_an_emptied_quarantine_reason_fails_only_the_quarantine_check():
    artifact = _artifact()
    artifact["quarantine"][0]["reason"] = "  "
    failing = _failing(artifact)
    assert set(failing) == {proofs.UNPROVEN_QUARANTINED}
    assert failing[proofs.UNPROVEN_QUARANTINED].offenders == {"s4": "quarantine reason empty"}


def test_a_held_back_scenario_missing_from_quarantine_fails_the_quarantine_check():
    artifact = _artifact()
    artifact["quarantine"] = []
    assert _failing(artifact)[proofs.UNPROVEN_QUARANTINED].offenders == {
        "s4": "no quarantine record"
    }


def test_every_scenario_quarantined_fails_only_has_published():
    artifact = _artifact()
    for scenario in artifact["scenarios"][:3]:
        scenario.update(status="quarantined", reason="checks not proven: x")
        artifact["quarantine"].append(
            {
                "artifact_type": "scenario",
                "artifact_id": scenario["scenario_id"],
                "stage": "checks",
                "reason": "checks not proven: x",
            }
        )
    failing = _failing(artifact)
    assert set(failing) == {proofs.HAS_PUBLISHED}
    assert failing[proofs.HAS_PUBLISHED].measured == {
        "scenarios": 4,
        "published": 0,
        "quarantined": 4,
    }


# ---------------------------------------------------------------- on a real build, in Dagster


def _check_keys() -> set[dg.AssetCheckKey]:
    return {dg.AssetCheckKey(dg.AssetKey("checks"), name) for name in proofs.PROOF_CHECKS}


@pytest.fixture
def copied_home(tiny_home, tmp_path, monkeypatch):
    home = tmp_path / "home"
    shutil.copytree(tiny_home[0], home, symlinks=True)
    envfoundry_instance.prepare(home)  # the copy's instance config names the copy
    monkeypatch.setenv("ENVFOUNDRY_HOME", str(home))
    monkeypatch.setenv("DAGSTER_HOME", str(home / "dagster"))
    monkeypatch.setenv("ENVFOUNDRY_PROFILE", "tiny")
    monkeypatch.setenv("ENVFOUNDRY_SEED", "7")
    monkeypatch.delenv("ENVFOUNDRY_BUILD_ID", raising=False)
    return home


def _latest(instance: dg.DagsterInstance, name: str) -> dict[str, tuple[str, str]]:
    """partition → (status, run id) of the newest evaluation of one proof check."""
    key = dg.AssetCheckKey(dg.AssetKey("checks"), name)
    latest: dict[str, tuple[str, str]] = {}
    for record in instance.event_log_storage.get_asset_check_execution_history(key, limit=100):
        latest.setdefault(record.partition, (record.status.value, record.run_id))  # newest first
    return latest


@pytest.mark.slow
def test_the_checks_run_per_environment_on_the_stored_artifact_and_block_rollouts(copied_home):
    from orchestration.definitions import build_definitions

    defs = build_definitions()
    job = defs.resolve_job_def("environment_job")
    instance = dg.DagsterInstance.from_config(str(copied_home / "dagster"))
    env_ids = sorted(p.stem for p in (copied_home / "artifacts" / "checks").glob("*.json"))

    # The build ran them in each partition's environment_job run, and every one passed.
    for name in proofs.PROOF_CHECKS:
        latest = _latest(instance, name)
        assert sorted(latest) == env_ids
        for status, run_id in latest.values():
            assert status == "SUCCEEDED"
            assert instance.get_run_by_id(run_id).job_name == "environment_job"

    tampered_env = env_ids[0]
    path = copied_home / "artifacts" / "checks" / f"{tampered_env}.json"
    artifact = codec.read_json(path)
    original = copy.deepcopy(artifact)
    published = next(s for s in artifact["scenarios"] if s["status"] == "published")
    test = next(t for t in artifact["selftests"] if t["scenario_id"] == published["scenario_id"])
    test["noop_fail"] = False
    codec.write_json(path, artifact, pretty=False)

    # The checks alone, as the UI re-runs them, with the rollouts that depend on `checks`.
    subset = job.get_subset(
        asset_selection={dg.AssetKey("trajectories")}, asset_check_selection=_check_keys()
    )
    result = subset.execute_in_process(
        instance=instance, partition_key=tampered_env, raise_on_error=False
    )
    verdicts = {e.check_name: e for e in result.get_asset_check_evaluations()}
    assert {name: e.passed for name, e in verdicts.items()} == {
        proofs.PUBLISHED_PROVEN: False,
        proofs.KILL_RATE: True,
        proofs.UNPROVEN_QUARANTINED: True,
        proofs.HAS_PUBLISHED: True,
    }
    assert {e.partition for e in verdicts.values()} == {tampered_env}
    offenders = verdicts[proofs.PUBLISHED_PROVEN].metadata["offenders"].value
    assert published["scenario_id"] in offenders and "noop_fail false" in offenders
    kill = verdicts[proofs.KILL_RATE].metadata
    assert kill["min_kill_rate"].value == BAR and kill["mean_kill_rate"].value >= BAR
    # Blocking: the unproven partition is not rolled out.
    assert not result.success
    assert result.get_asset_materialization_events() == []
    assert codec.read_json(path) == artifact != original  # the checks only read

    # One verdict per environment: the other environments keep theirs.
    latest = _latest(instance, proofs.PUBLISHED_PROVEN)
    assert latest[tampered_env] == ("FAILED", result.run_id)
    assert {latest[e][0] for e in env_ids[1:]} == {"SUCCEEDED"}
