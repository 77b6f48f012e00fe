"""The run's sandbox pool (assets._resources.sandbox_pool): an environment's stages take
their sandboxes from one pool, which starts at most SANDBOX_WORKERS of them for the whole run
and changes no byte of what the stages make; the pool's sandboxes end with the run; and where
the backend cannot run there is no pool, and the stages fail as they did without one, saying
why."""

from __future__ import annotations

import json

import dagster as dg
import pytest

from assets._resources import SANDBOX_WORKERS, BuildSettings, sandbox_pool
from assets.checks import checks
from assets.env_specs import env_sources, env_specs
from assets.environments import env_audit, env_models, environments, initial_states
from assets.judging import env_judgement
from assets.llm_environments import llm_env_code, llm_env_specs
from assets.scenarios import scenarios
from assets.topics import mined_topics, topics
from assets.trajectories import trajectories
from orchestration.io_managers import JsonArtifactIOManager
from sandboxes import WorkerPool
from synthesis import codec
from synthesis.environments.topics import CATALOGUE_PATH

# A record store and a workspace: the two kinds of sandbox the stages keep.
TOPICS = ("bookshop", "invoices_folder")


@pytest.fixture(scope="module")
def catalogue(tmp_path_factory) -> tuple[BuildSettings, dict]:
    home = tmp_path_factory.mktemp("pool_home")
    chosen = [
        t for t in json.loads(CATALOGUE_PATH.read_text())["topics"] if t["topic_id"] in TOPICS
    ]
    path = home / "topics.json"
    path.write_bytes(codec.dumps({"topics": chosen}))
    settings = BuildSettings(profile="small", seed=0, home=str(home), catalogue=str(path))
    with dg.instance_for_test() as instance:
        result = dg.materialize(
            [mined_topics, topics, env_specs, llm_env_specs, llm_env_code, env_sources],
            instance=instance,
            resources={
                "settings": settings,
                "io_manager": JsonArtifactIOManager(root=str(home / "artifacts")),
            },
        )
    assert result.success
    made = {n: result.output_for_node(n) for n in ("env_specs", "env_sources", "llm_env_specs")}
    assert sorted(s["env_id"].split("-")[0] for s in made["env_specs"]["specs"]) == list(TOPICS)
    return settings, made


def stage_bytes(env_id: str, settings: BuildSettings, made: dict, pool) -> dict[str, bytes]:
    """Every stage of one environment, as its run calls them, each output's bytes."""
    out: dict[str, bytes] = {}

    def run(asset, **inputs):
        if "sandbox_pool" in asset.required_resource_keys:
            inputs["sandbox_pool"] = pool
        context = dg.build_asset_context(partition_key=env_id)
        value = asset(context=context, settings=settings, **inputs)
        value = value.value if isinstance(value, dg.Output) else value
        out[asset.key.to_user_string()] = codec.dumps(value)
        return value

    env = run(environments, **made)
    states = run(initial_states, environments=env, env_sources=made["env_sources"])
    model = run(env_models, environments=env, initial_states=states)
    audit = run(env_audit, environments=env, initial_states=states, env_models=model)
    judged = run(
        env_judgement, environments=env, initial_states=states, env_models=model, env_audit=audit
    )
    planned = run(
        scenarios,
        environments=env,
        initial_states=states,
        env_audit=audit,
        env_models=model,
        env_judgement=judged,
    )
    proven = run(checks, environments=env, scenarios=planned, env_models=model)
    run(trajectories, environments=env, checks=proven, env_models=model)
    return out


@pytest.fixture
def launches(monkeypatch) -> list[str]:
    """The sandboxes started (a worker, a warm worker or a zygote), whoever started them."""
    from sandboxes import session, warm, zygote

    started: list[str] = []
    for module in (session, warm, zygote):

        def counted(*args, _prepare=module.prepare_launch, _name=module.__name__, **kwargs):
            started.append(_name)
            return _prepare(*args, **kwargs)

        monkeypatch.setattr(module, "prepare_launch", counted)
    return started


@pytest.mark.parametrize("topic", TOPICS)
def test_an_environments_stages_on_one_pool_start_two_sandboxes_and_make_the_same_bytes(
    catalogue, topic, launches
):
    settings, made = catalogue
    (env_id,) = [s["env_id"] for s in made["env_specs"]["specs"] if s["env_id"].startswith(topic)]
    alone = stage_bytes(env_id, settings, made, None)
    # Each initial state loaded and audited in a sandbox of its own, a pool per batch.
    assert len(launches) >= 2 * 2 + 3 * SANDBOX_WORKERS - 1
    launches.clear()
    with WorkerPool(SANDBOX_WORKERS, backend=settings.sandbox_backend) as pool:
        shared = stage_bytes(env_id, settings, made, pool)
        # Two initial states loaded and audited, gold runs, self-tests, five policies' rollouts:
        # every one of them in the (at most) two sandboxes the pool keeps.
        assert 1 <= len(launches) == pool.sandboxes_started <= SANDBOX_WORKERS
        assert pool.warm_episodes > 50
    assert shared == alone
    trajectories_made = json.loads(alone["trajectories"])["trajectories"]
    assert {t["policy"] for t in trajectories_made} >= {"oracle", "noop", "refuse_always"}


def test_the_pool_is_the_settings_backends_and_its_sandboxes_end_with_the_run():
    settings = BuildSettings(sandbox_backend="process")
    with dg.build_resources({"settings": settings, "sandbox_pool": sandbox_pool}) as resources:
        pool = resources.sandbox_pool
        assert isinstance(pool, WorkerPool) and pool.backend == "process"
        source = _source()
        with pool.session(source, {"label": "x"}) as session:
            assert session.call("mark").ok
        (kept,) = [w for group in pool._warm._idle.values() for w in group]
        assert kept.alive
    assert not kept.alive


def test_a_backend_that_cannot_run_gives_no_pool_and_the_stage_says_why(catalogue):
    settings, made = catalogue
    broken = BuildSettings(**{**settings.model_dump(), "sandbox_backend": "vm"})
    with dg.build_resources({"settings": broken, "sandbox_pool": sandbox_pool}) as resources:
        assert resources.sandbox_pool is None
    env_id = made["env_specs"]["specs"][0]["env_id"]
    env = environments(
        context=dg.build_asset_context(partition_key=env_id), settings=broken, **made
    ).value
    states = initial_states(
        context=dg.build_asset_context(partition_key=env_id),
        settings=broken,
        sandbox_pool=None,
        environments=env,
        env_sources=made["env_sources"],
    ).value
    assert states["states"] == [] and "unknown sandbox backend 'vm'" in states["error"]


def _source():
    from sandboxes import EnvSource

    code = (
        "class Marked:\n"
        "    def __init__(self):\n"
        "        self.label = ''\n"
        "    def mark(self) -> dict:\n"
        "        return {'success': True, 'data': self.label}\n"
    )
    return EnvSource(code=code, class_name="Marked", reuse_interpreter=True)
