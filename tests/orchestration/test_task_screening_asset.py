"""The task_screening asset in a Dagster run: a build whose splits measure nothing fails, naming
the archetype; screened tasks come out as quarantine records."""

from __future__ import annotations

import dagster as dg

from assets.task_screening import task_screening
from orchestration.io_managers import JsonArtifactIOManager
from orchestration.partitions import environment_partitions
from orchestration.resources import BuildSettings
from synthesis import codec
from synthesis.models import Environment, Scenario, ToolCall

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


def _scenario(sid: str, env_id: str) -> dict:
    return Scenario(
        scenario_id=sid,
        env_id=env_id,
        state_id="st",
        task_text=TEXT,
        initial_state={},
        gold_chain=[ToolCall(tool="transfer", args={"amount": 40, "ref": sid})],
    ).model_dump(mode="json")


def _screen(tmp_path, splits: dict[str, tuple[str, str]], holdout=()):
    root = tmp_path / "artifacts"
    for env_id, (shape, split) in splits.items():
        _write(root, "environments", env_id, _env(env_id, shape, split))
        _write(root, "env_audit", env_id, {"passed": True, "score": 1.0})
        scenarios = [_scenario(f"{env_id}-s1", env_id)]
        _write(root, "checks", env_id, {"scenarios": scenarios, "checks": [], "selftests": []})
    settings = BuildSettings(profile="tiny", home=str(tmp_path), holdout_archetypes=list(holdout))
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(environment_partitions.name, sorted(splits))
        # The per-environment stages as their stored artifacts, as a publish run reads them.
        upstream = [
            dg.AssetSpec(name, partitions_def=environment_partitions).with_io_manager_key(
                "io_manager"
            )
            for name in ("environments", "env_audit", "checks")
        ]
        return dg.materialize(
            [*upstream, task_screening],
            instance=instance,
            resources={"settings": settings, "io_manager": JsonArtifactIOManager(root=str(root))},
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
