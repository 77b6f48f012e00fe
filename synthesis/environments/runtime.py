"""How the engine reaches an environment's code: always through the sandbox, in a seeded world.

`sandbox_source` turns an Environment into what the sandbox loads (source text, or a module
imported inside it, with the loading and state-dump conventions its origin recorded);
`episode_seed` gives every replay of one scenario the same clock and randomness, so runs of
the same chain agree byte for byte.
"""

from __future__ import annotations

import functools
from typing import Any

from synthesis.hashing import derive_seed
from synthesis.models import Environment


def sandbox_source(env: Environment) -> Any:
    """The sandbox's EnvSource for `env` (imported lazily: the engine loads without it).

    A class our compiler wrote may reuse its worker's interpreter between episodes
    (sandboxes/warm.py): a tool class's whole state is the records its loader sets, a
    workspace class's the files of its workspace.
    """
    from sandboxes import EnvSource

    origin = env.origin
    if origin is None:
        return EnvSource(
            code=env.code, class_name=env.class_name, reuse_interpreter=compiled_by_us(env)
        )
    # The tools the analysis found, and only those, are callable: a helper it told apart
    # (a balance update taking a user record) is not a way into the state.
    tools = tuple(t.name for t in env.tools) or None
    if origin.kind == "module":
        return EnvSource(
            module=origin.module,
            class_name=env.class_name,
            loader=origin.loader,
            dumper=origin.dumper,
            tools=tools,
        )
    # A foreign class's file imports what its authors installed (pydantic, its toolkit's
    # dependencies): the interpreter's site-packages are mounted for it, read-only.
    return EnvSource(
        code=env.code,
        class_name=env.class_name,
        loader=origin.loader,
        dumper=origin.dumper,
        libraries=True,
        tools=tools,
    )


@functools.lru_cache(maxsize=256)
def _compiles_to(spec_json: str, code: str) -> bool:
    from synthesis.environments.build import environment_code
    from synthesis.models import EnvSpec

    return environment_code(EnvSpec.model_validate_json(spec_json)) == code


def compiled_by_us(env: Environment) -> bool:
    """Whether `env` is a class exactly as our compiler writes it for its spec (a tool class
    or a workspace class, of the spec's own kind).

    Checked against the compiler's output, not taken from a field: an artifact edited on disk
    (or a class from anywhere else) gets a fresh worker per episode like any foreign code.
    """
    if env.origin is not None or env.spec is None or env.kind != env.spec.kind:
        return False
    return _compiles_to(env.spec.model_dump_json(), env.code)


def episode_seed(scenario: Any) -> int:
    """The entropy seed of every episode played in `scenario` (a Scenario or its id).

    A task planned by exploring the sandbox was planned in a world of its own; its replays
    must run in that same world, so its plan's seed wins.
    """
    if not isinstance(scenario, str):
        planned = (scenario.provenance or {}).get("episode_seed")
        if isinstance(planned, int):
            return planned
        scenario = scenario.scenario_id
    return derive_seed("episode", scenario) % (2**31)


def sandbox_refusal(requested: str) -> str | None:
    """Why code we did not compile may not run on `requested`, or None when it may.

    Fail closed: foreign and LLM-written code runs under bwrap or docker; the plain
    `process` backend (rlimits only, the host's files in reach) only when asked for by name,
    and never in a deployment's step container, where it runs in sibling docker sandboxes
    (sandboxes.backends.generated_code_refusal).
    """
    from sandboxes.backends import default_backend, generated_code_refusal, unavailable_reason

    refusal = generated_code_refusal(requested)
    if refusal is not None:
        return refusal
    if requested == "process":
        return None
    backend = default_backend() if requested == "auto" else requested
    if backend == "process":
        why = unavailable_reason("bwrap") or "bwrap is not usable"
        return (
            "refused to run code we did not compile without a real sandbox "
            f"({why}); install bubblewrap, or pass --sandbox process to accept reduced "
            "isolation"
        )
    return None


def result_failure(ok: bool, result: Any, error: str | None) -> str | None:
    """Why a call failed, taking results as they come (None when it succeeded).

    A failure is an exception (or a contained crash), `success: false`, or an `error` key
    with a value; anything else a tool returns — a dict, a list, a number, None — succeeded.
    """
    if not ok:
        return error or "call failed"
    if isinstance(result, dict):
        if result.get("success") is False:
            return str(result.get("error") or result.get("message") or "tool reported failure")
        error_value = result.get("error")
        if error_value not in (None, "", False) and result.get("success") is not True:
            return str(error_value)
    return None
