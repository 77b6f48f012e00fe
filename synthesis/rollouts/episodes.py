"""Rollouts: run a policy against a live sandboxed environment and record an OpenAI-style chat.

The policy decides after every result, like a real agent, so calls go to an open sandbox
session one at a time; a policy that names its calls up front (`scripted_calls`: the oracle,
the wrong-record baseline) has them sent in one batch answered result by result, which gives
the same transcript. The finished episode (initial state, final state, final reply) is
graded by the scenario's checks under the one reward rule, `synthesis.tasks.checks.grade`.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from synthesis import codec
from synthesis.environments.model import EnvModel, model_of
from synthesis.environments.runtime import episode_seed, sandbox_source
from synthesis.hashing import ID_HEX_MANY, short_id
from synthesis.models import Check, Environment, Scenario, Trajectory
from synthesis.rollouts.agents import (
    FinalAnswer,
    Observation,
    Policy,
    ToolCallAction,
    ToolCallTurn,
    scripted_calls,
)
from synthesis.tasks.checks import grade
from synthesis.tasks.envfoundry_reward import Grade, observation
from synthesis.tasks.envfoundry_user import SimulatedUser
from synthesis.tasks.gold import call_payload, recorded_run

SYSTEM_TEMPLATE = (
    "You are an assistant operating {title}. {description}\n"
    "Use the provided tools to carry out the user's request. Records are named in the "
    "request by human details (names, emails, titles, dates); look them up with the tools to "
    "learn their ids, and never guess an id. Change only what the request asks for. "
    "When you are done, reply briefly with what you did and what was asked for; if the "
    "request cannot be done, say so and why.{rules}"
)
STEP_LIMIT_MESSAGE = "I stopped because I reached the step limit for this task."
STEP_LIMIT_NOT_RUN = "not run: the step limit for this task was reached"


def openai_tools(env: Environment) -> list[dict[str, Any]]:
    """The environment's tool schemas in the Chat Completions `tools` shape."""
    out = []
    for info in env.tools:
        schema = dict(info.schema_)
        if schema.get("type") == "function" and "function" in schema:
            out.append(schema)
        else:
            out.append({"type": "function", "function": schema})
    return out


def system_prompt(model: EnvModel) -> str:
    rules = ""
    if model.rules:
        rules = "\nRules of this system:\n" + "\n".join(f"- {r}" for r in model.rules)
    return SYSTEM_TEMPLATE.format(title=model.title, description=model.description, rules=rules)


class User(Protocol):
    """The other side of a multi-turn episode: the task's own simulated user
    (synthesis.tasks.envfoundry_user, offline) or one an LLM plays (synthesis.llm.user_sim):
    the first user message, then an answer to each text turn of the agent until it returns
    None, which ends the episode."""

    opening: str

    def answer(self, messages: Sequence[dict[str, Any]]) -> str | None: ...

    def metadata(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class EpisodeSetup:
    """What every episode of one environment starts from: the sandbox source, the tool
    schemas and the system prompt. Made once per batch: checking that the class is our
    compiler's (`sandbox_source`) serialises the whole spec, a cost per episode otherwise."""

    source: Any
    tools: list[dict[str, Any]]
    system: str

    @classmethod
    def of(cls, env: Environment, model: EnvModel) -> EpisodeSetup:
        return cls(sandbox_source(env), openai_tools(env), system_prompt(model))


def default_max_steps(scenario: Scenario) -> int:
    # Generous enough for an agent that explores, tight enough to stop a looping one.
    return max(8, 3 * len(scenario.gold_chain) + 4)


def rollout(
    env: Environment,
    scenario: Scenario,
    checks: Sequence[Check],
    policy: Policy,
    *,
    backend: str = "auto",
    max_steps: int | None = None,
    model: EnvModel | None = None,
    pool: Any = None,
    user: User | None = None,
    setup: EpisodeSetup | None = None,
    untouched: dict[str, dict[str, Any] | None] | None = None,
    on_graded: Callable[[Grade], None] | None = None,
    proven_gold: bool = False,
) -> Trajectory:
    """One episode of `policy` on `scenario`, graded by `checks`; in a worker `pool` forks
    (its sandbox reused, never its interpreter) when given. With a `user`, the episode is
    multi-turn: the user opens it, and answers the agent's text turns until it has nothing
    more to say; the user messages stay in the transcript, the checks grade it as any. A
    multi-turn task (`scenario.user`) is played with its own offline user when none is given.
    `setup` is `EpisodeSetup.of(env, model)` when the caller plays many episodes of `env`.

    `untouched` holds, by scenario, the final state of an episode that called no tool: the
    class loaded the scenario's state in its world (the same seed for every policy) and
    dumped it, so another policy that calls none (the baselines that only answer) takes that
    state instead of playing the same episode in the sandbox again.

    `on_graded` is given the episode's grade (each check's verdict, not only the reward the
    trajectory keeps): an evaluation classifies a failure by the checks it failed.

    `proven_gold`: the scenario's recorded gold run (`gold_results`, `final_state`) is one
    the self-test reproduced (quality/selftest.py `deterministic`: its replay gave the same
    results and state), so while the policy's calls are the gold chain's, in order, their
    results are the recorded ones and no sandbox is opened; an episode that ends on the whole
    chain ends in the recorded state. The first call off the chain (or a state read before
    its end) opens the sandbox, which makes the calls served so far before it goes on, and
    must give the recorded results. The transcript is the one a sandbox gives; the oracle
    and most of the guesser's attempts then cost no episode."""
    from sandboxes import CallResult, open_session  # generated code only runs in there

    setup = setup or EpisodeSetup.of(env, model or model_of(env))
    tools = setup.tools
    if user is None and scenario.user is not None:  # the task's own user, offline
        user = SimulatedUser(scenario.user)
    task_text = user.opening if user is not None else scenario.task_text
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": setup.system},
        {"role": "user", "content": task_text},
    ]
    limit = max_steps if max_steps is not None else default_max_steps(scenario)
    n_calls = 0
    last_result: Any = None
    final_state: dict[str, Any] | None = None
    script = scripted_calls(policy)
    # Results of the script's calls, run ahead in one batch when its first call is made.
    ahead: list[Any] = []
    # The state the policy last read, and after how many calls: the episode's final state
    # when no call came after it (the oracle reads it to answer), instead of asking again.
    state_read: tuple[int, dict[str, Any] | None] | None = None
    # The recorded gold run that answers calls on the gold chain (see `proven_gold`).
    gold = recorded_run(scenario) if proven_gold else None

    def opened() -> Any:
        if pool is not None:
            return pool.session(
                setup.source, scenario.initial_state, entropy_seed=episode_seed(scenario)
            )
        return open_session(
            setup.source,
            scenario.initial_state,
            backend=backend,
            entropy_seed=episode_seed(scenario),
        )

    observed: list[dict[str, Any]] = []  # each call and its result, for the reply checks
    with contextlib.ExitStack() as stack:
        # Opened when the policy first needs it: an episode that calls no tool may not.
        live: list[Any] = []

        def session() -> Any:
            if not live:
                live.append(stack.enter_context(opened()))
                if gold is not None and n_calls:
                    # The calls answered from the record so far are made for real now.
                    served = gold.calls[:n_calls]
                    made = [call_payload(r) for r in live[0].call_batch(served, each=True)]
                    if made != gold.payloads[:n_calls]:
                        raise RuntimeError(
                            f"scenario {scenario.scenario_id}: replaying its first "
                            f"{n_calls} gold calls did not give the recorded results"
                        )
            return live[0]

        # While no sandbox is open, every call so far was served from the record.
        def on_gold(call: ToolCallAction) -> bool:
            return (
                gold is not None
                and not live
                and n_calls < len(gold.calls)
                and gold.calls[n_calls] == (call.tool, call.args)
            )

        def at_gold_end() -> bool:
            return gold is not None and not live and n_calls == len(gold.calls)

        def read_state() -> dict[str, Any] | None:
            nonlocal state_read
            if at_gold_end():
                state_read = (n_calls, gold.final_state)  # the whole chain, from the record
            else:
                state_read = (n_calls, session().final_state())
            return state_read[1]

        def run(call: ToolCallAction) -> Any:
            nonlocal ahead
            if script is not None and (
                n_calls >= len(script) or script[n_calls] != (call.tool, call.args)
            ):
                scripted = script[n_calls] if n_calls < len(script) else None
                raise RuntimeError(
                    f"policy {policy.name} left its script at call {n_calls}: {call.tool} "
                    f"{call.args!r}, scripted {scripted!r}"
                )
            if on_gold(call):
                return CallResult(call.tool, True, gold.payloads[n_calls], None)
            if script is None:
                return session().call(call.tool, call.args)
            if not ahead:
                # The script's calls from here up to the step limit, in one message. The
                # worker runs them in order, each with its own timeout, sends each result
                # before the next call and stops at a kill: the results are the ones the
                # calls made one at a time get.
                ahead = session().call_batch(script[n_calls:limit], each=True)
            return ahead.pop(0)

        while True:
            if n_calls >= limit:
                messages.append({"role": "assistant", "content": STEP_LIMIT_MESSAGE})
                break
            action = policy.next_action(
                Observation(
                    task_text=task_text,
                    tools=tools,
                    messages=list(messages),
                    step=n_calls,
                    last_result=last_result,
                    read_state=read_state,
                )
            )
            if isinstance(action, FinalAnswer):
                messages.append({"role": "assistant", "content": action.text})
                follow_up = user.answer(messages) if user is not None else None
                if follow_up is None:
                    break
                messages.append({"role": "user", "content": follow_up})
                continue
            if isinstance(action, ToolCallAction):
                calls: tuple[ToolCallAction, ...] = (action,)
            elif isinstance(action, ToolCallTurn):
                calls = action.calls
            else:
                raise TypeError(f"policy {policy.name} returned {type(action).__name__}")
            # One assistant message carries the whole turn; each call then runs in order and
            # its result follows, so the transcript is what an OpenAI-format trainer expects.
            ids = [f"call_{n_calls + i}" for i in range(len(calls))]
            messages.append(
                {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "id": call_id,
                            "type": "function",
                            "function": {
                                "name": call.tool,
                                "arguments": codec.dumps_str(call.args),
                            },
                        }
                        for call_id, call in zip(ids, calls, strict=True)
                    ],
                }
            )
            for call_id, call in zip(ids, calls, strict=True):
                if n_calls < limit:
                    last_result = call_payload(run(call))
                    n_calls += 1
                else:  # every call of a turn needs its answer, even one not run
                    last_result = {"success": False, "error": STEP_LIMIT_NOT_RUN}
                observed.append(observation(call.tool, call.args, last_result))
                messages.append(
                    {
                        "role": "tool",
                        "tool_call_id": call_id,
                        "content": codec.dumps_str(last_result),
                    }
                )

        def finished() -> dict[str, Any] | None:
            if state_read is not None and state_read[0] == n_calls and state_read[1] is not None:
                return state_read[1]  # read with the worker alive, and nothing ran since
            if at_gold_end():
                return gold.final_state
            return _final_state(session())

        if n_calls or untouched is None:
            final_state = finished()
        elif scenario.scenario_id in untouched:
            final_state = untouched[scenario.scenario_id]
        else:
            final_state = untouched[scenario.scenario_id] = finished()
    # The reply is held to what the calls showed: a value no result showed earns nothing.
    graded = grade(checks, scenario.start_state, final_state, final_reply(messages), shown=observed)
    if on_graded is not None:
        on_graded(graded)
    # A policy that attempts a task several times (the guesser) names the attempt, so two
    # attempts that happen to say the same are still two trajectories.
    attempt = getattr(policy, "attempt", None)
    identity = [] if attempt is None else [attempt]
    metadata = {**getattr(policy, "metadata", {}), **(user.metadata() if user else {})}
    return Trajectory(
        traj_id=short_id(
            "traj", scenario.scenario_id, policy.name, messages, *identity, length=ID_HEX_MANY
        ),
        scenario_id=scenario.scenario_id,
        env_id=scenario.env_id,
        policy=policy.name,
        reward=graded.reward,
        success=graded.success,
        n_steps=n_calls,
        messages=messages,
        tools=tools,
        split=scenario.split,
        # Policies that call a model account for it; the others cost nothing.
        tokens_in=getattr(policy, "tokens_in", 0),
        tokens_out=getattr(policy, "tokens_out", 0),
        cost_usd=round(getattr(policy, "cost_usd", 0.0), 8),
        attempt_seed=attempt,
        metadata=metadata or None,  # scripted policies record nothing: their bytes stay
    )


def final_reply(messages: Sequence[dict[str, Any]]) -> str:
    """The episode's last assistant text: what the reply checks read."""
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), str):
            return message["content"]
    return ""


def _final_state(session: Any) -> dict[str, Any] | None:
    # A killed worker has no state to report; the episode then fails every check.
    if getattr(session, "status", "ok") != "ok":
        return None
    try:
        return session.final_state()
    except Exception:  # noqa: BLE001 - any sandbox failure means "no final state"
        return None


def rollouts(
    env: Environment,
    items: Sequence[tuple[Scenario, Sequence[Check]]],
    policy_for: Callable[[Scenario], Policy],
    *,
    backend: str = "auto",
    pool: Any = None,
    model: EnvModel | None = None,
    untouched: dict[str, dict[str, Any] | None] | None = None,
    proven_gold: bool = False,
) -> list[Trajectory]:
    """Roll out `policy_for(scenario)` on every scenario; concurrently over `pool` if given.

    Results are in input order either way, so a pool changes speed, never the output.
    `untouched`: see `rollout` (one dict for every batch of the same scenarios).
    `proven_gold`: see `rollout`; only for scenarios the self-test published.
    """
    model = model or model_of(env)
    setup = EpisodeSetup.of(env, model)
    if pool is None:
        return [
            rollout(
                env,
                scenario,
                checks,
                policy_for(scenario),
                backend=backend,
                model=model,
                setup=setup,
                untouched=untouched,
                proven_gold=proven_gold,
            )
            for scenario, checks in items
        ]
    return pool.map(
        lambda item: rollout(
            env,
            item[0],
            item[1],
            policy_for(item[0]),
            model=model,
            pool=pool,
            setup=setup,
            untouched=untouched,
            proven_gold=proven_gold,
        ),
        list(items),
    )
