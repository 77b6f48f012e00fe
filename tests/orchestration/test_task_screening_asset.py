"""The task_screening asset in a Dagster run: a build whose splits measure nothing fails, naming
the archetype; screened tasks come out as quarantine records; with LLM agent attempts, the
difficulty filter quarantines the tasks it drops."""

from __future__ import annotations

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets._staleness import DATA_VERSION_TAG
from assets.task_screening import task_screening
from orchestration.io_managers import JsonArtifactIOManager
from synthesis import codec
from synthesis.models import Environment, ToolCall, Trajectory
from tests.fakes.screened_scenarios import scenario

TEXT = (
    "Please transfer forty pounds from the savings account of Ada Lovelace to her current "
    "account, then tell me the balance that is left on the savings account afterwards."
)


def _write(root, asset, partition, value):
    codec.write_json(root / asset / f"{partition}.json", value)


def _env(env_id: str, shape: str, split: str) -> dict:
    env = Environment(
        env_id=env_id,
        topic_id=env_id,
        archetype="ledger",
        class_name="LedgerEnv",
        code="class LedgerEnv:\n    pass\n",
        code_sha256="0" * 64,
        tools=[],
        program_shape=shape,
        split=split,
    )
    return env.model_dump(mode="json", by_alias=True)


def _scenario(sid: str, env_id: str, text: str = TEXT) -> dict:
    chain = [ToolCall(tool="transfer", args={"amount": 40, "ref": sid})]
    return scenario(sid, env_id, text, chain=chain, results=[]).model_dump(mode="json")


def _llm_attempts(sid: str, env_id: str, solved: int, k: int = 3) -> list[dict]:
    """k LLM agent trajectories of `sid`, the first `solved` of them successful."""
    return [
        Trajectory(
            traj_id=f"{sid}-t{a}",
            scenario_id=sid,
            env_id=env_id,
            policy="llm:fake-model",
            reward=float(a < solved),
            success=a < solved,
            n_steps=1,
            messages=[],
            attempt_seed=a,
        ).model_dump(mode="json")
        for a in range(k)
    ]


def _screen(
    tmp_path,
    splits: dict[str, tuple[str, str]],
    holdout=(),
    texts=None,
    solved=None,
    judged_failed=(),
    instance=None,
    trajectory_versions=None,
):
    """`texts`: per environment, its scenarios' texts (one of TEXT by default); `solved`:
    per scenario id, how many of the LLM agent's 3 attempts solved it (none: offline);
    `judged_failed`: environments the LLM judge quarantined (the rest: offline judgement);
    `instance`: one to screen in (by default a new one); `trajectory_versions`: the data
    version each environment's trajectories are recorded with before (by default none)."""
    root = tmp_path / "artifacts"
    for env_id, (shape, split) in splits.items():
        _write(root, "environments", env_id, _env(env_id, shape, split))
        _write(root, "env_audit", env_id, {"passed": True, "score": 1.0})
        judgement = (
            {"judged": True, "passed": False, "reason": "audit_judge: tool x failed every call"}
            if env_id in judged_failed
            else {"judged": False, "passed": True, "reason": "offline: no endpoint"}
        )
        _write(root, "env_judgement", env_id, judgement)
        scenarios = [
            _scenario(f"{env_id}-s{i + 1}", env_id, text)
            for i, text in enumerate((texts or {}).get(env_id, [TEXT]))
        ]
        _write(root, "checks", env_id, {"scenarios": scenarios, "checks": [], "selftests": []})
        trajs = [
            t
            for s in scenarios
            if s["scenario_id"] in (solved or {})
            for t in _llm_attempts(s["scenario_id"], env_id, solved[s["scenario_id"]])
        ]
        _write(root, "trajectories", env_id, {"trajectories": trajs, "llm_calls": []})
    settings = BuildSettings(profile="tiny", home=str(tmp_path), holdout_archetypes=list(holdout))
    if instance is None:
        with dg.instance_for_test() as instance:
            return _screen(
                tmp_path, splits, holdout, texts, solved, judged_failed, instance,
                trajectory_versions,
            )  # fmt: skip
    instance.add_dynamic_partitions(environment_partitions.name, sorted(splits))
    for env_id, version in (trajectory_versions or {}).items():
        instance.report_runless_asset_event(
            dg.AssetMaterialization(
                "trajectories", partition=env_id, tags={DATA_VERSION_TAG: version}
            )
        )
    # The per-environment stages as their stored artifacts, as a publish run reads them.
    upstream = [
        dg.AssetSpec(name, partitions_def=environment_partitions).with_io_manager_key("io_manager")
        for name in ("environments", "env_audit", "env_judgement", "checks", "trajectories")
    ]
    return dg.materialize(
        [*upstream, task_screening],
        instance=instance,
        resources={
            "settings": settings,
            "io_manager": JsonArtifactIOManager(root=str(root)),
            "artifact_paths": JsonArtifactIOManager(root=str(root), paths_only=True),
        },
        raise_on_error=False,
    )


def _failure(result) -> str:
    (event,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    return event.step_failure_data.error.message


def test_an_archetype_of_two_shapes_without_test_environment_fails_the_publish(tmp_path):
    result = _screen(tmp_path, {"ledger-a": ("s1", "train"), "ledger-b": ("s2", "train")})
    assert not result.success
    message = _failure(result)
    assert "archetype 'ledger' has 2 program shapes" in message and "no test environment" in message


def test_a_split_archetype_passes_and_its_duplicates_are_quarantined(tmp_path):
    result = _screen(tmp_path, {"ledger-a": ("s1", "train"), "ledger-b": ("s2", "test")})
    assert result.success
    (record,) = result.output_for_node("task_screening")["quarantine"]
    # Same text in both environments: the second by environment id names the first.
    assert record["artifact_id"] == "ledger-b-s1" and record["stage"] == "task_screening"
    assert record["reason"].startswith("near_duplicate:") and "ledger-a-s1" in record["reason"]
    # Held out as a whole, the same archetype passes with no train environment at all.
    held = _screen(tmp_path, {"ledger-a": ("s1", "test"), "ledger-b": ("s2", "test")}, ["ledger"])
    assert held.success


def test_a_test_environment_the_llm_judge_failed_leaves_its_archetype_without_one(tmp_path):
    splits = {"ledger-a": ("s1", "train"), "ledger-b": ("s2", "test"), "ledger-c": ("s3", "train")}
    assert _screen(tmp_path, splits).success
    result = _screen(tmp_path, splits, judged_failed={"ledger-b"})
    assert not result.success
    assert "archetype 'ledger'" in _failure(result) and "no test environment" in _failure(result)


DISTINCT = [
    "Please close the loyalty card of Grace Hopper, she has moved to another city for work.",
    "Kindly add a note to the booking of Alan Turing saying that he will arrive late today.",
    "Could you tell me which of Ada Lovelace's invoices are still unpaid as of this morning?",
]


def test_the_difficulty_filter_keeps_only_the_task_some_attempts_solved(tmp_path):
    envs = {"ledger-a": ("s1", "train")}
    solved = {"ledger-a-s1": 0, "ledger-a-s2": 2, "ledger-a-s3": 3}
    result = _screen(tmp_path, envs, texts={"ledger-a": DISTINCT}, solved=solved)
    assert result.success
    out = result.output_for_node("task_screening")
    reasons = {q["artifact_id"]: q["reason"] for q in out["quarantine"]}
    assert reasons == {
        "ledger-a-s1": "difficulty: solved 0/3 by the LLM agent",
        "ledger-a-s3": "difficulty: solved 3/3 by the LLM agent",
    }
    flags = {c["scenario_id"]: c["flags"] for c in out["calibration"]}
    assert flags == {"ledger-a-s1": ["unsolved"], "ledger-a-s2": [], "ledger-a-s3": ["saturated"]}


def test_without_llm_attempts_the_artifact_is_as_before(tmp_path):
    result = _screen(tmp_path, {"ledger-a": ("s1", "train")}, texts={"ledger-a": DISTINCT})
    assert result.output_for_node("task_screening") == {"quarantine": []}


def test_a_bad_difficulty_filter_fails_the_publish_naming_the_variable(tmp_path, monkeypatch):
    monkeypatch.setenv("ENVFOUNDRY_DIFFICULTY_FILTER", "1-2")
    envs = {"ledger-a": ("s1", "train")}
    result = _screen(tmp_path, envs, texts={"ledger-a": DISTINCT[:1]}, solved={"ledger-a-s1": 1})
    assert not result.success
    assert "ENVFOUNDRY_DIFFICULTY_FILTER='1-2'" in _failure(result)


def test_the_llm_agent_attempts_are_kept_until_an_environments_trajectories_change(tmp_path):
    """A publish reads an environment's attempts once per version of its trajectories: the
    next with the same versions reads none and calibrates the same; a new version (here with
    other attempts in the file) is read again, and its verdicts follow."""
    envs = {"ledger-a": ("s1", "train"), "ledger-b": ("s2", "test")}
    texts = {"ledger-a": DISTINCT[:2], "ledger-b": DISTINCT[2:]}
    solved = {"ledger-a-s1": 0, "ledger-a-s2": 2, "ledger-b-s1": 3}
    versions = {"ledger-a": "a1", "ledger-b": "b1"}

    def screen(solved, versions):
        result = _screen(
            tmp_path, envs, texts=texts, solved=solved, instance=instance,
            trajectory_versions=versions,
        )  # fmt: skip
        assert result.success
        (materialization,) = result.asset_materializations_for_node("task_screening")
        out = result.output_for_node("task_screening")
        flags = {c["scenario_id"]: c["flags"] for c in out["calibration"]}
        kept = materialization.metadata["attempts_kept"].value
        assert kept.startswith(f"{len(envs) - materialization.metadata['attempts_read'].value} ")
        return materialization.metadata["attempts_read"].value, flags

    with dg.instance_for_test() as instance:
        read, first = screen(solved, versions)
        assert read == 2
        assert first == {
            "ledger-a-s1": ["unsolved"],
            "ledger-a-s2": [],
            "ledger-b-s1": ["saturated"],
        }
        # The files change, their versions do not: what was kept is what counts.
        assert screen({**solved, "ledger-a-s1": 1}, versions) == (0, first)
        read, flags = screen({**solved, "ledger-a-s1": 1}, {**versions, "ledger-a": "a2"})
        assert read == 1 and flags == {**first, "ledger-a-s1": []}
