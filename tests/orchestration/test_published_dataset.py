"""The publish gate: a dataset publishes only when every shard file is the one its manifest
lists; the shards step does not read them back, so this is where a changed file is caught."""

from __future__ import annotations

import dagster as dg
import pytest

from assets._resources import BuildSettings
from assets.reports import published_dataset
from synthesis.export import datasets
from synthesis.export.shards import write_shards
from synthesis.export.warehouse import ensure_tables
from synthesis.models import Trajectory


def _publish(tmp_path, tamper: bool):
    # The dataset below holds one SFT conversation and no RL task: under tiny's publish floor
    # (1 task), so the floor is 0 here; tests/orchestration/test_publish_floor.py tests it.
    settings = BuildSettings(profile="tiny", home=str(tmp_path), min_published=0)

    @dg.asset(name="quality_report")
    def staged_dataset(context) -> None:
        """What the publish run's earlier steps leave in its dataset: shards and a warehouse."""
        staged = settings.staged(context.run.run_id)
        ensure_tables(staged / datasets.PARTS["warehouse"])
        episode = Trajectory(
            traj_id="t1",
            scenario_id="s1",
            env_id="e1",
            policy="oracle",
            reward=1.0,
            success=True,
            n_steps=0,
            messages=[{"role": "user", "content": "Do it."}],
        )
        shards = staged / datasets.PARTS["shards"]
        write_shards([episode], shards, seed=settings.seed, inputs_sha256=settings.inputs_sha256)
        if tamper:  # a file changed after it was written (a disk, a stray process)
            with (shards / "sft" / "train.jsonl").open("ab") as f:
                f.write(b"\n")

    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [staged_dataset, published_dataset],
            instance=instance,
            resources={"settings": settings},
            raise_on_error=False,
        )
    return result, datasets.current_dir(tmp_path)


@pytest.mark.parametrize("tamper", [False, True])
def test_only_shards_that_match_their_manifest_publish(tmp_path, tamper):
    result, current = _publish(tmp_path, tamper)
    if not tamper:
        assert result.success and (current / "shards" / "manifest.json").is_file()
        return
    assert not result.success and current is None
    (failure,) = [e for e in result.all_events if e.event_type_value == "STEP_FAILURE"]
    message = failure.step_failure_data.error.message
    assert "does not verify, nothing published" in message and "sft/train.jsonl" in message
