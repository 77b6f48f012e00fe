"""The LLM agent's k attempts at a task: the samples difficulty calibration counts.

Attempt 0 is single-turn and greedy: the task as published, the answer a rerun reproduces.
Attempts 1..k-1 are sampled (synthesis.rollouts.agents.sampling) and multi-turn: the
simulated user (synthesis.llm.user_sim) withholds the task's facts after the first and gives
them when the agent asks. Every attempt carries the same information, so each counts the
same towards the solved count (synthesis.tasks.calibration), while the shards of a build
get both single- and multi-turn transcripts. A task with fewer than two facts to withhold
is single-turn in every attempt (its metadata says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.llm.client import LLMClient
from synthesis.llm.user_sim import SimulatedUser
from synthesis.models import Check, Environment, Scenario, Trajectory
from synthesis.rollouts.agents import LLMPolicy
from synthesis.rollouts.episodes import rollout


def multi_turn(attempt: int) -> bool:
    """Whether attempt `attempt` of the LLM agent talks to a simulated user."""
    return attempt > 0


def llm_attempt(
    env: Environment,
    scenario: Scenario,
    checks: Sequence[Check],
    client: LLMClient,
    attempt: int,
    *,
    model: EnvModel,
    pool: Any = None,
    backend: str = "auto",
) -> Trajectory:
    """Attempt `attempt` of the LLM agent at `scenario`, graded by its checks. Raises what
    the agent's client raises (StageStopped, LLMError); the user never does."""
    policy = LLMPolicy(client, scenario.scenario_id, attempt=attempt)
    user = None
    if multi_turn(attempt):
        user = SimulatedUser(client, scenario, model, seed=attempt)
    trajectory = rollout(
        env, scenario, checks, policy, model=model, pool=pool, backend=backend, user=user
    )
    if user is None:  # a single-turn attempt records that it was one
        metadata = {**(trajectory.metadata or {}), "turns": 1, "user_sim": "off"}
        trajectory = trajectory.model_copy(update={"metadata": metadata})
    return trajectory
