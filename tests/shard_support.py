"""One planned task written as shards, as a build writes them: for tests that replay a task
line with the shipped files (trainers) or serve it (the MCP server)."""

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
