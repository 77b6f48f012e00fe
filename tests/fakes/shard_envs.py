"""Environments for shard tests that write RL tasks without a build: every task line names
its environment, so the shards need one per published scenario's env_id."""

from __future__ import annotations

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
