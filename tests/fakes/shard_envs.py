"""Environments for shard tests that write RL tasks without a build: every task line names
its environment, so the shards need one per published scenario's env_id."""

from __future__ import annotations

from pathlib import Path

from synthesis.hashing import sha256_text
from synthesis.models import Environment, EnvOrigin

THINGS_CODE = '''class Things:
    """A store of things."""

    def __init__(self):
        self.things = {}

    def add_thing(self, thing_id: str) -> dict:
        """Add a thing."""
        self.things[thing_id] = {"id": thing_id}
        return {"success": True, "data": self.things[thing_id]}
'''


def shard_environment(
    env_id: str,
    code: str = THINGS_CODE,
    class_name: str = "Things",
    origin: EnvOrigin | None = None,
) -> Environment:
    """A foreign-looking environment (not compiled from a spec, so never `compiled_by_us`)."""
    return Environment(
        env_id=env_id,
        topic_id=env_id,
        archetype="foreign" if origin else "test",
        source="foreign" if origin else "programmatic",
        class_name=class_name,
        code=code,
        code_sha256=sha256_text(code),
        tools=[],
        origin=origin,
    )


def write_rl_task(
    dataset: Path,
    env: Environment,
    initial_state: dict,
    *,
    scenario_id: str = "S-1",
    task_text: str = "Add a thing.",
) -> Path:
    """One task line as a build ships it (rl/train.jsonl, written by rl_tasks.rl_line, with the
    environment's code bundled beside it), without building: the file `--task` reads."""
    from synthesis import codec
    from synthesis.environments.analysis import analyze_class
    from synthesis.export import rl_tasks

    record = rl_tasks.environment_record(env)
    schemas = [tool["schema"] for tool in analyze_class(env.code, env.class_name)]
    line = rl_tasks.rl_line(
        {
            "scenario_id": scenario_id,
            "env_id": env.env_id,
            "split": "train",
            "task_text": task_text,
            "initial_state_json": codec.dumps_str(initial_state),
        },
        [],
        {"tier": "easy"},
        record,
        ("You operate a store.", codec.dumps_str(schemas)),
    )
    code = dataset / rl_tasks.environment_path(env.env_id)
    code.parent.mkdir(parents=True, exist_ok=True)
    code.write_text(env.code)
    shard = dataset / "rl" / "train.jsonl"
    shard.parent.mkdir(parents=True, exist_ok=True)
    shard.write_bytes(line + b"\n")
    return shard
