"""Self-contained RL tasks: each line carries what a trainer needs to reset and score an episode.

A line holds the prompt (system + user), the tool schemas, a reference to its environment's
code, the initial state, the checks and the reward rule, plus what the environment
`requires` beyond the standard library. The code itself is bundled once per environment as
`environments/<env_id>.py` (listed in the manifest with its sha256) rather than inlined: a
build has hundreds of tasks per environment, so inlining would repeat tens of kilobytes of
source on every line. `envfoundry_reward.py` (synthesis/tasks/envfoundry_reward.py, the
engine's own reward rule, shipped verbatim) loads the code, plays the tools and scores;
`envfoundry_verifiers.py` (shipped the same way) makes the lines a `verifiers` taskset.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import orjson

from synthesis import codec
from synthesis.environments.foreign import third_party_imports
from synthesis.environments.runtime import compiled_by_us
from synthesis.hashing import sha256_text
from synthesis.models import Environment, EnvOrigin, EnvSpec

REWARD_MODULE = "envfoundry_reward.py"
REWARD_MODULE_SOURCE = Path(__file__).parent.parent / "tasks" / REWARD_MODULE
# The simulated user of multi-turn lines (their `user` record), shipped the same way.
USER_MODULE = "envfoundry_user.py"
USER_MODULE_SOURCE = Path(__file__).parent.parent / "tasks" / USER_MODULE
# A `verifiers` taskset over these lines, shipped beside them (it imports `verifiers`, which
# EnvFoundry does not depend on: the module is shipped as a file, never imported here).
VERIFIERS_MODULE = "envfoundry_verifiers.py"
VERIFIERS_MODULE_SOURCE = Path(__file__).with_name(VERIFIERS_MODULE)
# Shipped as files: part of the code version of every stage that ships them
# (synthesis/code_versions.py).
VERSIONED_FILES = (
    "../tasks/envfoundry_reward.py",
    "../tasks/envfoundry_user.py",
    "envfoundry_verifiers.py",
)
ENVIRONMENTS_DIR = "environments"
# The rule as a trainer reads it: the text of synthesis.tasks.checks.grade, in plain words.
REWARD_DEFINITION = (
    "reward = 0 when any guard check fails (collateral damage, a forbidden change, a final "
    "reply that is not specific: another candidate value, a rule that does not block the "
    "request, a dump of the records' values) or when a goal that already held before the "
    "agent acted no longer holds; otherwise the share of the goal checks achieved, counting "
    "only goals that did not already hold before the agent acted (doing nothing earns 0). A "
    "question's reply must state the asked value (as people write it); a refusal must "
    "decline, give a true reason and claim nothing was done. A reply is grounded: a value "
    "earns only where a tool result of the same episode showed it, a reason only where the "
    "episode showed the block or the request alone tells it (score reads the calls step "
    "recorded). success = every check passes. A task without checks earns 0 and never "
    "succeeds."
)
_SAFE_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


def reward_rule() -> dict[str, Any]:
    """What a line says about its reward: the shipped module's function, version and the rule."""
    from synthesis.tasks import envfoundry_reward

    return {
        "module": REWARD_MODULE,
        "function": "score",
        "version": envfoundry_reward.REWARD_RULE_VERSION,
        "definition": REWARD_DEFINITION,
    }


def environment_record(env: Environment) -> dict[str, Any]:
    """How an environment is bundled: its code and what loading it takes."""
    origin = env.origin
    record = {
        "env_id": env.env_id,
        "archetype": env.archetype,
        "class_name": env.class_name,
        "kind": env.kind,
        "source": env.source,
        "code": env.code,
        # Hashed once here, not in each of its tasks' lines.
        "code_sha256": sha256_text(env.code),
        # The project's own rule (recompiled from the spec and compared), not a stored flag:
        # only such code may run outside a sandbox by default.
        "compiled_by_us": compiled_by_us(env),
        "loader": origin.loader if origin else "auto",
        "dumper": origin.dumper if origin else "auto",
        "requires": _requires(env),
    }
    if origin is not None and origin.kind == "module":
        # A class imported from its package (`pkg.sub.mod:Class`) runs its bundled file as
        # that module, so its relative imports (`from ..base_api import BaseApi`) resolve.
        record["module"] = origin.module
    return record


def _requires(env: Environment) -> list[str]:
    # A module-kind class was imported from its package inside the sandbox; bundled as one
    # file, it needs that package installed too, so its own package counts.
    found = set(third_party_imports(env.code))
    if env.origin is not None and env.origin.kind != "module":
        found |= set(env.origin.requires)
    return sorted(found)


def environment_records_from_warehouse(con: Any, env_ids: Iterable[str]) -> list[dict[str, Any]]:
    """`environment_record` of each of `env_ids`, from the warehouse tables."""
    wanted = sorted(set(env_ids))
    if not wanted:
        return []
    rows = con.execute(
        "SELECT e.env_id, e.topic_id, e.archetype, e.kind, e.source, e.class_name, e.code, "
        "e.code_sha256, e.origin_json, s.spec_json FROM environments e "
        "LEFT JOIN env_specs s ON s.env_id = e.env_id WHERE e.env_id IN "
        f"({', '.join('?' for _ in wanted)}) ORDER BY e.env_id",
        wanted,
    ).fetchall()
    out = []
    for env_id, topic, archetype, kind, source, class_name, code, sha, origin, spec in rows:
        env = Environment(
            env_id=env_id,
            topic_id=topic,
            archetype=archetype,
            kind=kind,
            source=source,
            class_name=class_name,
            code=code,
            code_sha256=sha,
            tools=[],
            spec=EnvSpec.model_validate_json(spec) if spec else None,
            origin=EnvOrigin.model_validate_json(origin) if origin else None,
        )
        out.append(environment_record(env))
    missing = set(wanted) - {r["env_id"] for r in out}
    if missing:
        raise ValueError(f"published tasks of environments not in the warehouse: {sorted(missing)}")
    return out


def environment_path(env_id: str) -> str:
    if not _SAFE_ID.match(env_id):
        raise ValueError(f"environment id {env_id!r} cannot name a bundled file")
    return f"{ENVIRONMENTS_DIR}/{env_id}.py"


def environment_entry(record: Mapping[str, Any]) -> dict[str, Any]:
    """What a task line says about its environment (the code stays in its bundled file)."""
    return {
        "path": environment_path(record["env_id"]),
        "sha256": record["code_sha256"],
        "class_name": record["class_name"],
        "kind": record["kind"],
        "source": record["source"],
        "compiled_by_us": record["compiled_by_us"],
        "loader": record["loader"],
        "dumper": record["dumper"],
        **({"module": record["module"]} if record.get("module") else {}),
    }


def rl_line(
    task: Mapping[str, Any],
    checks: list[Mapping[str, Any]],
    difficulty: Mapping[str, Any],
    environment: Mapping[str, Any],
    prompt: tuple[str, str],
) -> bytes:
    """One task line: `prompt` is (system message, tool schemas JSON) of its environment.

    A multi-turn task's prompt opens with what its simulated user says first; `task_text`
    stays the whole request, and `user` is the record the shipped simulator
    (`envfoundry_user.py`) plays the rest of the conversation from."""
    system, tools_json = prompt
    user_json = task.get("user_json")
    opening = codec.loads(user_json)["opening"] if user_json else task["task_text"]
    line = {
        "scenario_id": task["scenario_id"],
        "env_id": task["env_id"],
        "split": task["split"],
        "task_text": task["task_text"],
        "prompt": [
            {"role": "system", "content": system},
            {"role": "user", "content": opening},
        ],
        "tools": orjson.Fragment(tools_json),
        "environment": environment_entry(environment),
        "requires": environment["requires"],
        "initial_state": orjson.Fragment(task["initial_state_json"]),
        "checks": [
            {
                "check_id": c["check_id"],
                "description": c["description"],
                "spec": orjson.Fragment(c["spec_json"]),
            }
            for c in checks
        ],
        "reward_rule": reward_rule(),
        # The structural tier (`tier`) with the guesser's attempts and the `final_tier`.
        "difficulty": difficulty,
    }
    if user_json:
        line["user"] = orjson.Fragment(user_json)
    return codec.dumps(line)
