"""Compiled archetype environments with seeded histories, built in-process for planner tests.

The pipeline replays an initial state's history in the sandbox (states.build_initial_state);
for a compiled environment the spec model predicts the same calls exactly, so these tests get
realistic states (bookings in every status, several orders per customer) in milliseconds.
"""

from __future__ import annotations

import random
from functools import lru_cache

from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import base_state, replay_history
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.hashing import derive_seed, short_id
from synthesis.models import Environment, InitialState
from synthesis.tasks.spec_model import SpecModel


def history_state(env: Environment, index: int, records: int) -> InitialState:
    spec = env.spec
    seed = derive_seed("initial_state", env.env_id, 0, index)
    rng = random.Random(seed)
    state = base_state(spec, seed, records)
    world = SpecModel(model_of(env), state)
    replay_history(
        spec,
        state,
        rng,
        max(2, records // 2 + 1),
        lambda calls: [world.call(tool, args) for tool, args in calls],
        lambda: world.state,
    )
    final = {e.collection: world.state.get(e.collection, {}) for e in spec.entities}
    return InitialState(
        state_id=short_id(env.env_id, "history", index), env_id=env.env_id, seed=seed, state=final
    )


@lru_cache(maxsize=4)
def archetype_worlds(n_topics: int, records: int) -> tuple[tuple[Environment, InitialState], ...]:
    out = []
    # Workspace environments keep a file tree and have their own planner (workspace_plans).
    archetypes = [a for a in supported_archetypes() if a != "workspace"]
    for topic in select_topics(load_catalogue(), archetypes, n_topics):
        env = build_environment(generate_spec(topic))
        out += [(env, history_state(env, i, records)) for i in range(2)]
    return tuple(out)
