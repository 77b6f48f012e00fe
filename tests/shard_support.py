"""One planned task written as shards, as a build writes them: for tests that replay a task
line with the shipped files (trainers) or serve it (the MCP server); and that replay itself,
in a virtualenv without EnvFoundry."""

from __future__ import annotations

import json
from pathlib import Path

from synthesis.config import DATA_DIR
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.export.shards import write_shards
from synthesis.models import Check, Environment, Scenario, Topic, Trajectory
from synthesis.rollouts.episodes import openai_tools
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from tests.clean_venv import run_clean


def task_shards(
    out: Path, env: Environment, scenario: Scenario, checks: list[Check], system: str
) -> Path:
    """Shards of the one task in `out`; the path of its RL line's file."""
    traj = Trajectory(
        traj_id="t1",
        scenario_id=scenario.scenario_id,
        env_id=env.env_id,
        policy="oracle",
        reward=1.0,
        success=True,
        n_steps=0,
        messages=[
            {"role": "system", "content": system},
            {"role": "user", "content": scenario.task_text},
        ],
        tools=openai_tools(env),
    )
    write_shards([traj], out, seed=0, scenarios=[scenario], checks=checks, environments=[env])
    return out / "rl" / f"{scenario.split}.jsonl"


def planned_task(topic: Topic, **plan) -> tuple[Environment, Scenario, list[Check]]:
    """A topic's environment and one of its tasks, its gold run and checks as a build has them."""
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    model = from_spec(env.spec, env)
    planned = plan_scenarios(env, state, seed=5, count=1, model=model, **plan)
    (scenario,) = execute_gold(env, planned, model=model)
    return env, scenario, derive_checks(scenario, model=model)


def first_topic(archetype: str) -> Topic:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return next(Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == archetype)


def replay_in_clean_venv(shards: Path, line: Path, chains: dict[str, list]) -> dict:
    """What the shipped module alone pays the task of the RL `line` for doing nothing and for
    each of `chains` (label -> calls), in a virtualenv without EnvFoundry, as a trainer
    replays it: without trust where bwrap is usable (each `run` command in a sandbox of its
    own), else with trust=True. Also reports `envfoundry_importable` and `commands`."""
    (shards / "chains.json").write_text(json.dumps(chains))
    proc = run_clean(_REPLAY, str(shards), str(line), cwd=shards)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


_REPLAY = r"""
import json, sys
shards, line = sys.argv[1], sys.argv[2]
sys.path.insert(0, shards)
import envfoundry_reward as efr

report = {"envfoundry_importable": True}
try:
    import synthesis  # noqa: F401
except ImportError:
    report["envfoundry_importable"] = False
task = json.loads(open(line).readline())
trust = efr.bwrap_unusable_reason() is not None
report["commands"] = efr.load_env(task, trust=trust).commands
report["nothing"] = efr.score(task, efr.load_env(task, trust=trust))
for label, chain in json.load(open(f"{shards}/chains.json")).items():
    env = efr.load_env(task, trust=trust)
    for call in chain:
        efr.step(env, call["tool"], call["args"])
    report[label] = efr.score(task, env)
print(json.dumps(report))
"""
