"""The trajectories asset with an endpoint: the LLM agent attempts every published task k
times (a multi-turn task's attempt 0 with its own offline user, the others with the LLM
user; a single-turn task single-turn in each), its ledger rows (agent and user_sim) go to
the run's spool, and the trajectories carry their attempt and turns; the scripted
policies' rows are as they were (with their offline user's on a multi-turn task)."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from assets._partitions import environment_partitions
from assets._resources import BuildSettings, sandbox_pool
from assets.trajectories import trajectories
from orchestration.io_managers import JsonArtifactIOManager
from synthesis import codec
from synthesis.config import get_profile
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.fakes.llm_rollouts import answer_asking_agent, answer_user_sim
from tests.fakes.openai_server import FakeOpenAIServer, final_answer

K = get_profile("tiny").llm_agent_attempts


def _artifacts(root):
    """One bookshop environment with two published tasks (one multi-turn, one not), as its
    stored artifacts."""
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    model = model_of(env)
    state = build_initial_state(env, seed=2, index=0, records_per_entity=4)
    planned = execute_gold(env, plan_scenarios(env, state, seed=2, count=6, max_chain_length=6))
    ready = [s for s in planned if s.status == "published"]
    published = [s for s in ready if s.user][:1] + [s for s in ready if not s.user][:1]
    assert len(published) == 2, "the planned tasks need one multi-turn and one single-turn"
    checks = [c for s in published for c in derive_checks(s, model=model)]
    for asset, value in {
        "environments": env.model_dump(mode="json", by_alias=True),
        "env_models": model.model_dump(mode="json"),
        "checks": {
            "scenarios": [s.model_dump(mode="json") for s in published],
            "checks": [c.model_dump(mode="json") for c in checks],
            "selftests": [],
        },
    }.items():
        codec.write_json(root / asset / f"{env.env_id}.json", value)
    return env.env_id, published


def _respond(request):
    return answer_user_sim(request) or answer_asking_agent(request) or final_answer("Done.")


@pytest.fixture
def materialized(tmp_path, monkeypatch):
    root = tmp_path / "artifacts"
    env_id, published = _artifacts(root)
    with FakeOpenAIServer(_respond) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        settings = BuildSettings(profile="tiny", home=str(tmp_path))
        with dg.instance_for_test() as instance:
            instance.add_dynamic_partitions(environment_partitions.name, [env_id])
            upstream = [
                dg.AssetSpec(name, partitions_def=environment_partitions).with_io_manager_key(
                    "io_manager"
                )
                for name in ("environments", "env_models", "checks")
            ]
            result = dg.materialize(
                [*upstream, trajectories],
                instance=instance,
                partition_key=env_id,
                resources={
                    "settings": settings,
                    "io_manager": JsonArtifactIOManager(root=str(root)),
                    "sandbox_pool": sandbox_pool,
                },
                selection=[trajectories],
            )
    return tmp_path, published, result.output_for_node("trajectories")


def test_the_llm_agent_attempts_every_task_k_times(materialized):
    home, published, out = materialized
    llm = [t for t in out["trajectories"] if t["policy"].startswith("llm:")]
    assert out["quarantine"] == []
    attempts = sorted((t["scenario_id"], t["attempt_seed"]) for t in llm)
    assert attempts == sorted((s.scenario_id, a) for s in published for a in range(K))
    assert len({t["traj_id"] for t in llm}) == len(llm)
    multi = {s.scenario_id for s in published if s.user is not None}
    for t in llm:
        meta = t["metadata"]
        assert meta["attempt"] == t["attempt_seed"]
        users = [m for m in t["messages"] if m["role"] == "user"]
        assert meta["turns"] == len(users)
        if t["scenario_id"] not in multi:
            assert meta["user_sim"] == "off" and meta["turns"] == 1
        elif t["attempt_seed"] == 0:
            assert meta["user_sim"] == "offline" and meta["turns"] > 1
        else:  # the agent asked, the LLM user answered
            assert meta["user_sim"] == "llm" and meta["turns"] > 1
    assert any(t["metadata"]["turns"] > 1 for t in llm)
    # The scripted policies record no metadata on a single-turn task (their bytes are as
    # before), and their offline user's on a multi-turn one.
    scripted = [t for t in out["trajectories"] if t not in llm]
    assert all("metadata" not in t for t in scripted if t["scenario_id"] not in multi)
    assert all(
        t["metadata"]["user_sim"] == "offline" for t in scripted if t["scenario_id"] in multi
    )
    spooled = [
        json.loads(line)
        for f in (home / "ledger").rglob("*.jsonl")
        for line in f.read_text().splitlines()
    ]
    assert {row["stage"] for row in spooled} == {"agent", "user_sim"}
