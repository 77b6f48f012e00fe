"""A hostile environment inside the asset graph: contained, quarantined with its reason, and
the stages keep going instead of failing the run."""

from __future__ import annotations

import dagster as dg

from assets._resources import BuildSettings
from assets.environments import env_audit, initial_states
from assets.warehouse import collect_tables
from sandboxes import WorkerPool
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue

HANG = """    def _next_id(self, records: dict, prefix: str) -> str:
        while True:
            pass
"""


def test_an_environment_that_hangs_is_quarantined_with_the_timeout(tmp_path):
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    spec = generate_spec(topic)
    env = build_environment(spec)
    marker = "    def _next_id(self, records: dict, prefix: str) -> str:\n"
    assert marker in env.code
    hostile = env.model_copy(
        update={
            "code": env.code.replace(
                marker, HANG + "\n    def _old(self, records: dict, prefix: str) -> str:\n"
            )
        }
    )
    env_json = hostile.model_dump(mode="json", by_alias=True)
    settings = BuildSettings(profile="tiny", seed=0, home=str(tmp_path))
    context = dg.build_asset_context(partition_key=env.env_id)

    # The stages share one sandbox pool, as in a run: the hanging worker is killed, not kept.
    with WorkerPool(2, backend="auto") as pool:
        states = initial_states(
            context=context,
            settings=settings,
            sandbox_pool=pool,
            environments=env_json,
            env_sources={"foreign": []},
        ).value
        assert states["states"] == []
        assert "timeout" in states["error"], states["error"]

        audit = env_audit(
            context=dg.build_asset_context(partition_key=env.env_id),
            settings=settings,
            sandbox_pool=pool,
            environments=env_json,
            initial_states=states,
            env_models=from_spec(hostile.spec, hostile).model_dump(mode="json", by_alias=True),
        ).value
    assert audit["passed"] is False and "timeout" in audit["findings"][0]

    tables = collect_tables(
        topics=[topic.model_dump(mode="json")],
        env_specs={"specs": [spec.model_dump(mode="json")], "quarantine": []},
        environments={env.env_id: env_json},
        initial_states={env.env_id: states},
        env_audit={env.env_id: audit},
        checks={},
        trajectories={},
    )
    (row,) = tables["environments"].to_pylist()
    assert row["status"] == "quarantined" and "timeout" in row["reason"]
    (quarantined,) = tables["quarantine"].to_pylist()
    assert quarantined["artifact_id"] == env.env_id and "timeout" in quarantined["reason"]
