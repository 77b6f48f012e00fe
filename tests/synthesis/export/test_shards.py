"""Shards: byte-identical per seed, verified by the manifest, only proven oracle data for SFT."""

from __future__ import annotations

import hashlib
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthesis.export import shards
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
        "envfoundry_user.py",
        "envfoundry_verifiers.py",
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
        "envfoundry_verifiers.py": ("py", "verifiers_taskset"),
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
    assert all(set(x) == {"scenario_id", "messages", "tools"} for x in lines)
    # Each training line joins its RL task by scenario id (and the TRL rows the same).
    assert sorted(x["scenario_id"] for x in lines) == ["a", "b"]
    trl_rows = pq.read_table(tmp_path / "sft/train.parquet")
    assert sorted(trl_rows["scenario_id"].to_pylist()) == ["a", "b"]
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


@pytest.mark.parametrize("all_trajectories", [False, True])
def test_shards_from_the_warehouse_are_the_shards_of_the_records(tmp_path, all_trajectories):
    scenarios, trajs, checks = _inputs()
    scenarios = [
        s.model_copy(update={"difficulty": {"tier": "easy"}}) if s.scenario_id == "a" else s
        for s in scenarios
    ]
    # The warehouse leaves out the messages of episodes that never ship: an LLM agent's do
    # ship, and an environment without an oracle episode ("d") takes its prompt from its
    # first episode, a baseline's.
    scenarios.append(_scenario("d"))
    checks = checks + [checks[0].model_copy(update={"check_id": "k-d", "scenario_id": "d"})]
    trajs = trajs + [
        _traj("a", policy="llm:m"),
        _traj("d", policy="noop", success=False).model_copy(
            update={"messages": [{"role": "system", "content": "d's prompt"}]}
        ),
        _traj("d", policy="wrong_record", success=False),
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
            "checks": wh.check_rows(checks, {s.scenario_id: s.env_id for s in scenarios}),
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
        all_trajectories=all_trajectories,
    )
    m2 = write_shards_from_warehouse(
        db, tmp_path / "two", seed=5, all_trajectories=all_trajectories
    )
    assert m1 == m2
    assert _files(tmp_path / "one") == _files(tmp_path / "two")
    shipped = pq.read_table(tmp_path / "two/trajectories/train.parquet")
    assert ("llm:m" in shipped["policy"].to_pylist()) and shipped["messages_json"].null_count == 0
    rl = [json.loads(x) for x in (tmp_path / "two/rl/train.jsonl").read_text().splitlines()]
    assert next(r for r in rl if r["scenario_id"] == "d")["prompt"][0]["content"] == "d's prompt"
    assert rl[0]["difficulty"]["baseline_attempts"] == 3
    assert rl[0]["difficulty"]["baseline_solve_rate"] == round(2 / 3, 6)
    assert "q" not in {r["scenario_id"] for r in rl}


def test_verify_covers_code_docs_and_every_file_beside_the_manifest(tmp_path):
    scenarios, trajs, checks = _inputs()
    write_shards(
        trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks, environments=_envs(scenarios)
    )
    manifest = tmp_path / "manifest.json"
    (tmp_path / "environments/env-a.py").write_text("class Things: pass\n")
    (tmp_path / "README.md").write_text("# edited\n")
    (tmp_path / "notes.txt").write_text("x")
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "__pycache__/envfoundry_reward.cpython-311.pyc").write_bytes(b"x")
    problems = verify_manifest(manifest)
    assert any(p.startswith("environments/env-a.py: sha256") for p in problems)
    assert any(p.startswith("README.md: sha256") for p in problems)
    assert "notes.txt: not listed in the manifest" in problems
    assert not any("__pycache__" in p for p in problems)  # importing the module writes it
    # A non-tabular entry must say split "all" and rows null.
    data = json.loads(manifest.read_text())
    for f in data["files"]:
        if f["path"] == "plots/difficulty.svg":
            f["split"] = "train"
        if f["path"] == "rl/train.jsonl":
            f["kind"] = ""
    manifest.write_text(json.dumps(data))
    problems = verify_manifest(manifest, strict=False)
    assert any(p.startswith("plots/difficulty.svg: not a table") for p in problems)
    assert "rl/train.jsonl: no kind" in problems


def test_trajectories_keep_successful_training_episodes_unless_asked(tmp_path):
    scenarios, trajs, checks = _inputs()
    trajs = trajs + [_traj("a", policy="llm:tiny-model"), _traj("b", policy="guesser")]
    common = dict(seed=0, scenarios=scenarios, checks=checks, environments=_envs(scenarios))
    m = write_shards(trajs, tmp_path / "kept", **common)
    table = pq.read_table(tmp_path / "kept/trajectories/train.parquet")
    assert set(table.column("policy").to_pylist()) == {"oracle", "llm:tiny-model"}
    assert all(table.column("success").to_pylist())
    entry = next(f for f in m["files"] if f["path"] == "trajectories/train.parquet")
    assert entry["policies"] == ["llm:tiny-model", "oracle"]
    everything = write_shards(trajs, tmp_path / "all", all_trajectories=True, **common)
    table = pq.read_table(tmp_path / "all/trajectories/train.parquet")
    assert {"noop", "guesser"} <= set(table.column("policy").to_pylist())
    assert not all(table.column("success").to_pylist())
    # The card says which selection the file holds.
    assert "baselines and failed episodes left out" in (tmp_path / "kept/README.md").read_text()
    assert "every episode" in (tmp_path / "all/README.md").read_text()
    assert everything["files"] != m["files"]


def test_rl_lines_are_self_contained(tmp_path):
    scenarios, trajs, checks = _inputs()
    write_shards(
        trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks, environments=_envs(scenarios)
    )
    line = json.loads((tmp_path / "rl/train.jsonl").read_text().splitlines()[0])
    assert line["prompt"] == [
        {"role": "system", "content": "sys"},
        {"role": "user", "content": "do a"},
    ]
    assert line["tools"] == [{"type": "function", "function": {"name": "f"}}]
    env = line["environment"]
    assert env["path"] == "environments/env-a.py" and env["class_name"] == "Things"
    assert env["compiled_by_us"] is False  # no spec it compiles from
    code = (tmp_path / env["path"]).read_bytes()
    assert env["sha256"] == hashlib.sha256(code).hexdigest()
    assert line["requires"] == []
    assert line["reward_rule"]["module"] == "envfoundry_reward.py"
    assert line["reward_rule"]["function"] == "score"


def test_requires_names_imports_beyond_the_standard_library(tmp_path):
    scenarios, trajs, checks = _inputs()
    code = "import json\nimport numpy as np\nfrom requests import get\n\nclass Things:\n    pass\n"
    envs = [shard_environment(s.env_id, code=code) for s in scenarios]
    write_shards(trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks, environments=envs)
    line = json.loads((tmp_path / "rl/train.jsonl").read_text().splitlines()[0])
    assert line["requires"] == ["numpy", "requests"]


def test_rl_tasks_refuse_to_ship_without_their_environments(tmp_path):
    scenarios, trajs, checks = _inputs()
    with pytest.raises(ValueError, match="environments"):
        write_shards(trajs, tmp_path, seed=0, scenarios=scenarios, checks=checks)
    with pytest.raises(ValueError, match="env-c"):
        write_shards(
            trajs,
            tmp_path,
            seed=0,
            scenarios=scenarios,
            checks=checks,
            environments=_envs(scenarios)[:2],
        )


def test_the_card_renders_with_its_plots(tmp_path):
    scenarios, trajs, checks = _inputs()
    m = write_shards(
        trajs,
        tmp_path,
        seed=4,
        scenarios=scenarios,
        checks=checks,
        environments=_envs(scenarios),
        provenance={"profile": "tiny", "generator": "envfoundry 0.1.0"},
    )
    card = (tmp_path / "README.md").read_text()
    kinds = {f["path"]: f["kind"] for f in m["files"]}
    assert kinds["README.md"] == "dataset_card"
    plots = [p for p, k in kinds.items() if k == "plot"]
    assert sorted(plots) == [
        "plots/chain_lengths.svg",
        "plots/difficulty.svg",
        "plots/success_by_policy.svg",
    ]
    for plot in plots:
        assert f"]({plot})" in card  # referenced from the card
        svg = (tmp_path / plot).read_text()
        assert svg.startswith("<svg") and "<rect" in svg
    assert card.startswith("---\nlicense: ")
    for needed in ("| train | 2 | 2 |", "| test | 1 | 1 |", "## Reward", "| profile | `tiny` |"):
        assert needed in card
    assert "| seed | `4` |" in card and "envfoundry_reward.py" in card
    # success by policy: the oracle solved 3 of 4 episodes, noop none.
    assert "Share of episodes solved" in (tmp_path / "plots/success_by_policy.svg").read_text()
    assert "| noop | 1 | 0 |" in card and "| oracle | 4 | 3 |" in card


def test_episodes_in_many_chunks_and_out_of_order_make_the_same_files(tmp_path, monkeypatch):
    """The warehouse hands its trajectories over in chunks, in the order its parts were
    written: the shards pick and order the shipped episodes themselves, same bytes."""
    scenarios, trajs, checks = _inputs()
    inputs = dict(seed=3, scenarios=scenarios, checks=checks, environments=_envs(scenarios))
    whole = write_shards(trajs, tmp_path / "whole", **inputs)
    one_chunk = shards._trajectory_table

    def scattered(rows):
        table = one_chunk(rows)
        reverse = table.take(list(range(table.num_rows))[::-1])
        return pa.Table.from_batches(reverse.to_batches(max_chunksize=1), schema=table.schema)

    monkeypatch.setattr(shards, "_trajectory_table", scattered)
    assert len(scattered(trajs)["traj_id"].chunks) == len(trajs)
    assert write_shards(trajs, tmp_path / "scattered", **inputs) == whole
    assert _files(tmp_path / "scattered") == _files(tmp_path / "whole")
