"""Bad input is quarantined with its reason and the rest of the build goes on."""

from __future__ import annotations

import dagster as dg

from assets._partitions import environment_partitions
from assets._resources import BuildSettings
from assets.env_specs import env_sources, env_specs
from assets.llm_environments import llm_env_code, llm_env_specs
from assets.topics import mined_topics, topics
from orchestration.io_managers import JsonArtifactIOManager
from synthesis import codec
from synthesis.environments.topics import load_catalogue


def test_a_broken_topic_is_quarantined_and_the_good_ones_get_partitions(tmp_path):
    good = [t.model_dump() for t in load_catalogue() if t.topic_id in ("bookshop", "tennis_club")]
    broken = {
        "topic_id": "broken_vocab",
        "title": "Broken",
        "archetype": "booking",
        "description": "A booking topic whose vocabulary lacks every noun.",
        "vocabulary": {},
    }
    catalogue = tmp_path / "topics.json"
    catalogue.write_bytes(codec.dumps({"topics": [*good, broken]}))
    settings = BuildSettings(
        profile="default", seed=0, home=str(tmp_path), catalogue=str(catalogue)
    )
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [mined_topics, topics, env_specs, llm_env_specs, llm_env_code, env_sources],
            instance=instance,
            resources={
                "settings": settings,
                "io_manager": JsonArtifactIOManager(root=str(tmp_path / "artifacts")),
            },
        )
        assert result.success
        out = result.output_for_node("env_specs")
        assert sorted(s["env_id"] for s in out["specs"]) == [
            "bookshop-order_lifecycle",
            "tennis_club-booking",
        ]
        (row,) = out["quarantine"]
        assert row["artifact_id"] == "broken_vocab" and row["stage"] == "env_specs"
        assert row["reason"] == (
            "SpecError: topic broken_vocab: archetype booking needs vocabulary entry 'customer'"
        )
        assert sorted(instance.get_dynamic_partitions(environment_partitions.name)) == [
            "bookshop-order_lifecycle",
            "tennis_club-booking",
        ]
