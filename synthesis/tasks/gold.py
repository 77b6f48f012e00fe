"""Gold runs: replay each scenario's gold chain in a sandbox and keep what really happened.

A scenario whose gold chain fails, is killed, changes nothing, or uses an id no earlier step
produced is returned quarantined with a precise reason, never dropped.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.environments.runtime import episode_seed, result_failure, sandbox_source
from synthesis.environments.topology import id_params
from synthesis.models import Environment, Scenario, ToolCall
from synthesis.tasks.envfoundry_reward import Seen, observation


def run_chains(
    env: Environment,
    episodes: Sequence[tuple[dict[str, Any], Sequence[ToolCall]] | tuple[Any, ...]],
    *,
    backend: str = "auto",
    pool: Any = None,
) -> list[Any]:
    """Run (initial state, chain[, entropy seed]) episodes in fresh sandboxes.

    One round trip per episode. The pipeline process never executes environment code:
    everything goes through the sandbox's run_episode / WorkerPool. Pass `pool` to share one
    WorkerPool across calls. An episode without a seed runs with seed 0.
    """
    from sandboxes import WorkerPool  # the engine runs without them

    source = sandbox_source(env)
    jobs = [
        (source, episode[0], [(c.tool, dict(c.args)) for c in episode[1]], None, _seed(episode))
        for episode in episodes
    ]
    if not jobs:
        return []
    if pool is not None:
        return list(pool.run_episodes(jobs))
    with WorkerPool(min(len(jobs), os.cpu_count() or 1), backend=backend) as own:
        return list(own.run_episodes(jobs))


def _seed(episode: tuple[Any, ...]) -> int:
    return episode[2] if len(episode) > 2 and episode[2] is not None else 0


def call_payload(call_result: Any) -> Any:
    """What the caller saw: the tool's return value, or the contained failure as an error."""
    if call_result.ok:
        return call_result.result
    return {"success": False, "error": call_result.error or "call failed"}


def shown_by(chain: Sequence[ToolCall], payloads: Sequence[Any]) -> Seen:
    """What a run of `chain` showed, as the reply checks read it: each call with the payload
    it returned (`call_payload`); a run that stopped early showed only what it ran."""
    return Seen(
        [observation(c.tool, dict(c.args), p) for c, p in zip(chain, payloads, strict=False)]
    )


def call_failed(call_result: Any, *, contract: bool = True) -> str | None:
    """Why a call failed, else None.

    With `contract` (our own compiled classes) a result must be a `{'success': ...}` object;
    without it (code from elsewhere) results are taken as they come (`result_failure`).
    """
    if not call_result.ok:
        return call_result.error or "call failed in the sandbox"
    result = call_result.result
    if not contract:
        return result_failure(True, result, None)
    if isinstance(result, dict) and result.get("success") is False:
        return str(result.get("error") or "tool reported failure")
    if not isinstance(result, dict) or "success" not in result:
        return "tool broke the contract: result is not a {'success': ...} object"
    return None


def gold_failure(
    chain: Sequence[ToolCall],
    episode: Any,
    initial_state: dict[str, Any],
    model: EnvModel | None = None,
    *,
    infeasible: bool = False,
    reply_task: bool = False,
    roles: Sequence[str] = (),
) -> str | None:
    """The reason a gold run does not prove its scenario solvable, or None if it does.

    An `infeasible` scenario's refused step (its role "refused"; the last step when `roles`
    are not given) is the request a guard must refuse: the run proves it only if the
    compiled tool refuses it, and, when it is the only request, the state stays as it was.
    A `reply_task` (its goal is a value in the final reply) may leave the state unchanged.
    An infeasible scenario whose every step looks (a report of data a project folder does
    not hold: synthesis.tasks.projects.missing_data) attempts nothing a guard could refuse:
    its run proves it when every call succeeds and the state stays as it was.
    """
    looked = bool(roles) and all(role == "lookup" for role in roles)
    refused = (
        roles.index("refused") + 1
        if "refused" in roles
        else len(chain)
        if infeasible and not looked
        else None
    )
    if episode.status != "ok":
        return f"gold run {episode.status}: {episode.reason or 'no reason given'}"
    if len(episode.results) < len(chain):
        return f"gold run stopped after {len(episode.results)} of {len(chain)} steps"
    contract = model is None or model.exact
    for i, (call, res) in enumerate(zip(chain, episode.results, strict=False), start=1):
        why = call_failed(res, contract=contract)
        if infeasible and i == refused:
            if why is None:
                return f"gold step {i} {call.tool} should be refused by a guard but succeeded"
            continue
        if why is not None:
            return f"gold step {i} {call.tool} failed: {why}"
    if model is not None:
        unproduced = first_unproduced_id(model, chain, [call_payload(r) for r in episode.results])
        if unproduced is not None:
            return unproduced
    if episode.final_state is None:
        return "gold run returned no final state"
    alone = not any(role == "mutation" for role in roles)
    if infeasible and alone:
        if episode.final_state != initial_state:
            return "the refused request changed the state"
        return None
    if infeasible:
        return None
    if episode.final_state == initial_state and not reply_task:
        return "gold chain changed nothing in the state"
    return None


def first_unproduced_id(
    model: EnvModel, chain: Sequence[ToolCall], results: Sequence[Any]
) -> str | None:
    """The first id argument no earlier step's result contained (a planner bug), if any.

    Only ids some query hands out count: for inferred code, an id no tool reveals (a branch
    code the environment takes as given) is stated by the task, not looked up.
    """
    given = set() if model.exact else given_collections(model)
    seen: set[str] = set()
    for i, call in enumerate(chain, start=1):
        try:
            params = {p: c for p, c in id_params(model.tool(call.tool)).items() if c not in given}
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


# Fields that make a record someone's account: whoever asks knows its id (their user id, the
# name they log in with) as they know its password, and says it.
CREDENTIAL_FIELDS = frozenset({"password", "passcode", "passphrase", "pin"})


def given_collections(model: EnvModel) -> set[str]:
    """Collections whose ids a task states instead of hiding them: those no query shows, and
    accounts (records with a password), whose ids the person asking knows (ACEBench's
    Travel books with `user_id` and `password`, and no tool lists users)."""
    shown = {c for t in model.tools if t.kind == "query" for c in t.produces}
    accounts = {
        c.name for c in model.collections if CREDENTIAL_FIELDS & {f.name.lower() for f in c.fields}
    }
    return ({c.name for c in model.collections} - shown) | accounts


def _strings(obj: Any) -> set[str]:
    out: set[str] = set()
    stack = [obj]
    while stack:
        cur = stack.pop()
        if isinstance(cur, str):
            out.add(cur)
        elif isinstance(cur, int) and not isinstance(cur, bool):
            out.add(str(cur))  # integer ids (ticket 7) compare as text, like string ids
        elif isinstance(cur, dict):
            stack.extend(cur.keys())
            stack.extend(cur.values())
        elif isinstance(cur, list):
            stack.extend(cur)
    return out


def execute_gold(
    env: Environment,
    scenarios: Sequence[Scenario],
    *,
    model: EnvModel | None = None,
    backend: str = "auto",
    pool: Any = None,
) -> list[Scenario]:
    """Each scenario with gold_results and final_state filled in, or quarantined with why."""
    todo = [s for s in scenarios if s.status != "quarantined"]
    episodes = run_chains(
        env,
        [(s.initial_state, s.gold_chain, episode_seed(s)) for s in todo],
        backend=backend,
        pool=pool,
    )
    ran = iter(episodes)
    out: list[Scenario] = []
    for scenario in scenarios:
        if scenario.status == "quarantined":
            out.append(scenario)
            continue
        episode = next(ran)
        reason = gold_failure(
            scenario.gold_chain,
            episode,
            scenario.start_state,
            model,
            infeasible=scenario.kind == "infeasible",
            reply_task=scenario.expected_reply is not None,
            roles=(scenario.provenance or {}).get("roles") or (),
        )
        update: dict[str, Any] = {
            "gold_results": [call_payload(r) for r in episode.results],
            "final_state": episode.final_state,
        }
        if reason is not None:
            update.update(status="quarantined", reason=reason)
        # A shallow copy: the fields it replaces come fresh from the sandbox, and the rest
        # (whole states, the chain) are never changed in place. A deep copy here was a fifth
        # of the stage's CPU.
        out.append(scenario.model_copy(update=update))
    return out


@dataclass(frozen=True)
class RecordedRun:
    """The gold run a scenario recorded when it was made (`execute_gold`): each call (tool and
    arguments) with its payload as the caller saw it, and the final state."""

    calls: list[tuple[str, dict[str, Any]]]
    payloads: list[Any]
    final_state: dict[str, Any]
    status: str = "ok"

    @property
    def results(self) -> list[Any]:
        """The payloads in the shape of a replay's results (`call_payload` gives each back)."""
        from sandboxes import CallResult  # the engine runs without them

        pairs = zip(self.calls, self.payloads, strict=True)
        return [CallResult(tool, True, payload, None) for (tool, _), payload in pairs]


def recorded_run(scenario: Scenario) -> RecordedRun | None:
    """`scenario`'s recorded gold run, or None where it holds no whole record of one."""
    final, payloads = scenario.final_state, scenario.gold_results
    if final is None or len(payloads) != len(scenario.gold_chain):
        return None
    calls = [(c.tool, dict(c.args)) for c in scenario.gold_chain]
    return RecordedRun(calls, list(payloads), final)


def other_world_finals(
    env: Environment, scenarios: Sequence[Scenario], *, backend: str = "auto", pool: Any = None
) -> dict[str, dict[str, Any] | None]:
    """Each scenario's gold final state in another world (another clock and random seed).

    What differs from the gold run was generated (ids, timestamps): checks then ask for its
    form. Only code whose model is inferred needs this; compiled code generates nothing.
    """
    episodes = run_chains(
        env,
        [(s.initial_state, s.gold_chain, (episode_seed(s) + 1) % (2**31)) for s in scenarios],
        backend=backend,
        pool=pool,
    )
    return {
        s.scenario_id: (e.final_state if e.status == "ok" else None)
        for s, e in zip(scenarios, episodes, strict=True)
    }
