"""Shards: byte-identical per seed, verified by the manifest, only proven oracle data for SFT."""

from __future__ import annotations

import json

import pyarrow.parquet as pq

from synthesis.export import warehouse as wh
from synthesis.export.shards import verify_manifest, write_shards, write_shards_from_warehouse
from synthesis.models import Check, Scenario, Trajectory
from tests.fakes.shard_envs import shard_environment


def _scenario(sid, split="train", status="published"):
    return Scenario(
        scenario_id=sid,
        env_id=f"env-{sid}",
        state_id="st",
        task_text=f"do {sid}",
        initial_state={"things": {}},
        gold_chain=[],
        split=split,
        status=status,
    )


def _traj(sid, policy="oracle", success=True, split="train"):
    messages = [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": f"do {sid}"},
        {"role": "assistant", "content": "done"},
    ]
    return Trajectory(
        traj_id=f"t-{sid}-{policy}",
        scenario_id=sid,
        env_id=f"env-{sid}",
        policy=policy,
        reward=1.0 if success else 0.5,
        success=success,
        n_steps=0,
        messages=messages,
        tools=[{"type": "function", "function": {"name": "f"}}],
        split=split,
    )


def _inputs():
    scenarios = [
        _scenario("a"),
        _scenario("b"),
        _scenario("c", split="test"),
        _scenario("q", status="quarantined"),
    ]
    trajs = [
        _traj("a"),
        _traj("a", policy="noop", success=False),
        _traj("b"),
        _traj("b", policy="oracle", success=False).model_copy(update={"traj_id": "t-b2"}),
        _traj("c", split="test"),
        _traj("q"),
    ]
    checks = [
        Check(
            check_id=f"k-{s.scenario_id}",
            scenario_id=s.scenario_id,
            description="d.",
            spec={
                "type": "no_collateral_changes",
                "touched": [],
                "deleted": [],
                "created": {},
                "attributes": [],
            },
        )
        for s in scenarios
    ]
    return scenarios, trajs, checks


def _envs(scenarios):
    return [shard_environment(s.env_id) for s in scenarios]


def _files(root):
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def test_shards_are_byte_identical_and_verify(tmp_path):
    scenarios, trajs, checks = _inputs()
    m1 = write_shards(
        trajs,
        tmp_path / "one",
        seed=3,
        scenarios=scenarios,
        checks=checks,
        environments=_envs(scenarios),
    )
    # Input order must not matter either.
    m2 = write_shards(
        list(reversed(trajs)),
        tmp_path / "two",
        seed=3,
        scenarios=list(reversed(scenarios)),
        checks=checks,
        environments=list(reversed(_envs(scenarios))),
    )
    assert m1 == m2
    one, two = _files(tmp_path / "one"), _files(tmp_path / "two")
    assert one == two
    assert set(one) == {
        "manifest.json",
        "README.md",
        "envfoundry_reward.py",
        "environments/env-a.py",
        "environments/env-b.py",
        "environments/env-c.py",
        "plots/chain_lengths.svg",
        "plots/difficulty.svg",
        "plots/success_by_policy.svg",
        "sft/train.jsonl",
        "sft/test.jsonl",
        "sft/train.parquet",
        "sft/test.parquet",
        "trajectories/train.parquet",
        "trajectories/test.parquet",
        "rl/train.jsonl",
        "rl/test.jsonl",
    }
    assert verify_manifest(tmp_path / "one" / "manifest.json") == []
    listed = {f["path"] for f in m1["files"]}
    assert listed == set(one) - {"manifest.json"}
    kinds = {
        "sft/train.jsonl": ("jsonl", "openai_chat"),
        "sft/train.parquet": ("parquet", "trl_chat"),
        "trajectories/train.parquet": ("parquet", "trajectories"),
        "rl/train.jsonl": ("jsonl", "rl_tasks"),
        "environments/env-a.py": ("py", "environment_code"),
        "envfoundry_reward.py": ("py", "reward_module"),
        "README.md": ("md", "dataset_card"),
        "plots/difficulty.svg": ("svg", "plot"),
    }
    for f in m1["files"]:
        assert len(f["sha256"]) == 64
        if f["format"] in ("jsonl", "parquet"):
            assert f["split"] in ("train", "test") and f["rows"] > 0
        else:  # code, docs and plots: for every split, no rows
            assert (f["split"], f["rows"]) == ("all", None)
        if f["path"] in kinds:
            assert (f["format"], f["kind"]) == kinds[f["path"]]


def test_sft_has_only_successful_oracle_runs_of_published_scenarios(tmp_path):
    scenarios, trajs, checks = _inputs()
    write_shards(
        trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks, environments=_envs(scenarios)
    )
    lines = [json.loads(x) for x in (tmp_path / "sft/train.jsonl").read_text().splitlines()]
    assert sorted(x["messages"][1]["content"] for x in lines) == ["do a", "do b"]
    assert all(set(x) == {"messages", "tools"} for x in lines)
    table = pq.read_table(tmp_path / "trajectories/train.parquet")
    assert table.column_names[:7] == [
        "traj_id",
        "scenario_id",
        "env_id",
        "split",
        "policy",
        "messages_json",
        "tools_json",
    ]
    assert "reward" in table.column_names
    assert "q" not in table.column("scenario_id").to_pylist()  # quarantined: never shipped
    assert table.column("traj_id").to_pylist() == sorted(table.column("traj_id").to_pylist())
    rl = [json.loads(x) for x in (tmp_path / "rl/train.jsonl").read_text().splitlines()]
    assert [r["scenario_id"] for r in rl] == ["a", "b"]
    assert rl[0]["checks"][0]["spec"]["type"] == "no_collateral_changes"
    assert rl[0]["initial_state"] == {"things": {}} and rl[0]["task_text"] == "do a"


def test_verify_reports_tampering_missing_and_unlisted_files(tmp_path):
    scenarios, trajs, checks = _inputs()
    write_shards(
        trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks, environments=_envs(scenarios)
    )
    manifest = tmp_path / "manifest.json"
    (tmp_path / "sft/train.jsonl").write_bytes(b'{"messages": []}\n')
    (tmp_path / "rl/test.jsonl").unlink()
    (tmp_path / "trajectories/extra.parquet").write_bytes(b"x")
    problems = verify_manifest(manifest)
    assert any(p.startswith("sft/train.jsonl: sha256") for p in problems)
    assert any(p.startswith("sft/train.jsonl: 1 rows != manifest 2") for p in problems)
    assert "rl/test.jsonl: missing" in problems
    assert "trajectories/extra.parquet: not listed in the manifest" in problems
    assert verify_manifest(tmp_path / "nope.json")[0].startswith("cannot read manifest")


def test_seed_changes_only_the_sft_order_and_rewrites_clean_stale_files(tmp_path):
    scenarios, trajs, checks = _inputs()
    many = trajs + [_traj(f"x{i}") for i in range(12)]
    m1 = write_shards(many, tmp_path / "s1", seed=1)
    m2 = write_shards(many, tmp_path / "s2", seed=2)
    f1 = {f["path"]: f["sha256"] for f in m1["files"]}
    f2 = {f["path"]: f["sha256"] for f in m2["files"]}
    assert f1["sft/train.jsonl"] != f2["sft/train.jsonl"]
    assert f1["trajectories/train.parquet"] == f2["trajectories/train.parquet"]
    # Rewriting into a folder that had a test split leaves no stale shard behind.
    write_shards([t for t in many if t.split == "train"], tmp_path / "s1", seed=1)
    assert not (tmp_path / "s1/sft/test.jsonl").exists()
    assert verify_manifest(tmp_path / "s1" / "manifest.json") == []


def test_shards_from_the_warehouse_are_the_shards_of_the_records(tmp_path):
    scenarios, trajs, checks = _inputs()
    scenarios = [
        s.model_copy(update={"difficulty": {"tier": "easy"}}) if s.scenario_id == "a" else s
        for s in scenarios
    ]
    # The guesser's attempts, stored out of attempt order: the RL line lists them in order.
    guesses = [
        _traj("a", policy="guesser", success=ok).model_copy(
            update={"traj_id": f"t-g{seed}", "attempt_seed": seed}
        )
        for seed, ok in ((2, False), (1, True), (3, True))
    ]
    trajs = trajs + guesses
    db = tmp_path / "warehouse.duckdb"
    wh.write_tables(
        db,
        {
            # Stored out of traj_id order: the shards put them back in it.
            "trajectories": wh.trajectory_rows(trajs).take(list(range(len(trajs)))[::-1]),
            "scenarios": wh.scenario_rows(scenarios),
            "checks": wh.check_rows(checks),
            "environments": wh.environment_rows(_envs(scenarios)),
            "env_specs": wh.env_spec_rows([]),
        },
    )
    m1 = write_shards(
        trajs,
        tmp_path / "one",
        seed=5,
        scenarios=scenarios,
        checks=checks,
        environments=_envs(scenarios),
    )
    m2 = write_shards_from_warehouse(db, tmp_path / "two", seed=5)
    assert m1 == m2
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    rl = [json.loads(x) for x in (tmp_path / "two/rl/train.jsonl").read_text().splitlines()]
    assert rl[0]["difficulty"]["baseline_attempts"] == 3
    assert rl[0]["difficulty"]["baseline_solve_rate"] == round(2 / 3, 6)
    assert "q" not in {r["scenario_id"] for r in rl}
