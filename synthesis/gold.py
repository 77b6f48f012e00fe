"""Gold runs: replay each scenario's gold chain in a sandbox and keep what really happened.

A scenario whose gold chain fails, is killed, changes nothing, or uses an id no earlier step
produced is returned quarantined with a precise reason, never dropped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from synthesis.models import Environment, EnvSpec, Scenario, ToolCall
from synthesis.topology import id_params


def run_chains(
    env: Environment,
    episodes: Sequence[tuple[dict[str, Any], Sequence[ToolCall]]],
    *,
    backend: str = "auto",
    pool: Any = None,
) -> list[Any]:
    """Run (initial state, chain) episodes in fresh sandboxes; one round trip per episode.

    The pipeline process never executes environment code: everything goes through the
    sandbox's run_episode / WorkerPool. Pass `pool` to share one WorkerPool across calls.
    """
    from sandboxes import EnvSource, WorkerPool, run_episode  # the engine runs without them

    source = EnvSource(code=env.code, class_name=env.class_name)
    jobs = [(source, state, [(c.tool, dict(c.args)) for c in chain]) for state, chain in episodes]
    if not jobs:
        return []
    if pool is not None:
        return list(pool.run_episodes(jobs))
    if len(jobs) == 1:
        return [run_episode(*jobs[0], backend=backend)]
    own = WorkerPool(min(len(jobs), os.cpu_count() or 1), backend=backend)
    try:
        return list(own.run_episodes(jobs))
    finally:
        close = getattr(own, "close", None)
        if close is not None:
            close()


def call_payload(call_result: Any) -> Any:
    """What the caller saw: the tool's return value, or the contained failure as an error."""
    if call_result.ok:
        return call_result.result
    return {"success": False, "error": call_result.error or "call failed"}


def call_failed(call_result: Any) -> str | None:
    """Why a call failed (exception, timeout, or a tool answering success False), else None."""
    if not call_result.ok:
        return call_result.error or "call failed in the sandbox"
    result = call_result.result
    if isinstance(result, dict) and result.get("success") is False:
        return str(result.get("error") or "tool reported failure")
    if not isinstance(result, dict) or "success" not in result:
        return "tool broke the contract: result is not a {'success': ...} object"
    return None


def gold_failure(
    chain: Sequence[ToolCall],
    episode: Any,
    initial_state: dict[str, Any],
    spec: EnvSpec | None = None,
) -> str | None:
    """The reason a gold run does not prove its scenario solvable, or None if it does."""
    if episode.status != "ok":
        return f"gold run {episode.status}: {episode.reason or 'no reason given'}"
    if len(episode.results) < len(chain):
        return f"gold run stopped after {len(episode.results)} of {len(chain)} steps"
    for i, (call, res) in enumerate(zip(chain, episode.results, strict=False), start=1):
        why = call_failed(res)
        if why is not None:
            return f"gold step {i} {call.tool} failed: {why}"
    if spec is not None:
        unproduced = first_unproduced_id(spec, chain, [call_payload(r) for r in episode.results])
        if unproduced is not None:
            return unproduced
    if episode.final_state is None:
        return "gold run returned no final state"
    if episode.final_state == initial_state:
        return "gold chain changed nothing in the state"
    return None


def first_unproduced_id(
    spec: EnvSpec, chain: Sequence[ToolCall], results: Sequence[Any]
) -> str | None:
    """The first id argument no earlier step's result contained (a planner bug), if any."""
    seen: set[str] = set()
    for i, call in enumerate(chain, start=1):
        try:
            params = id_params(spec.tool(call.tool))
        except KeyError:
            params = {}
        for param, entity in sorted(params.items()):
            value = call.args.get(param)
            if value is not None and str(value) not in seen:
                return (
                    f"gold step {i} {call.tool} uses {entity} id {value!r} "
                    "that no earlier step produced"
                )
        if i <= len(results):
            seen.update(_strings(results[i - 1]))
    return None


def _strings(obj: Any) -> set[str]:
    out: set[str] = set()
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.add(cur)
        elif isinstance(cur, dict):
            stack.extend(cur.keys())
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return out


def execute_gold(
    env: Environment, scenarios: Sequence[Scenario], *, backend: str = "auto", pool: Any = None
) -> list[Scenario]:
    """Each scenario with gold_results and final_state filled in, or quarantined with why."""
    todo = [s for s in scenarios if s.status != "quarantined"]
    episodes = run_chains(
        env, [(s.initial_state, s.gold_chain) for s in todo], backend=backend, pool=pool
    )
    ran = iter(episodes)
    out: list[Scenario] = []
    for scenario in scenarios:
        if scenario.status == "quarantined":
            out.append(scenario)
            continue
        episode = next(ran)
        reason = gold_failure(scenario.gold_chain, episode, scenario.initial_state, env.spec)
        update: dict[str, Any] = {
            "gold_results": [call_payload(r) for r in episode.results],
            "final_state": episode.final_state,
        }
        if reason is not None:
            update.update(status="quarantined", reason=reason)
        out.append(scenario.model_copy(update=update, deep=True))
    return out
