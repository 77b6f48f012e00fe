"""The LLM agent's k attempts at a task: the samples difficulty calibration counts.

Attempt 0 is greedy: the task as published, the answer a rerun reproduces. A single-turn
task (no `Scenario.user`) is single-turn in every attempt: the agent is told `task_text`.
A multi-turn task is multi-turn in every attempt: attempt 0 talks to the task's own offline
user (synthesis.tasks.envfoundry_user, as a trainer's rollout does), and attempts 1..k-1,
sampled (synthesis.rollouts.agents.sampling), to the same user as a model words it
(synthesis.llm.user_sim), which ends the conversation exactly when the offline one would and
falls back to its answers. Every attempt carries the same information, so each counts the
same towards the solved count (synthesis.tasks.calibration).

`llm_attempts` plays many attempts at once: an episode spends nearly all its time waiting on
the endpoint, so how many run together is the client's concurrency, not the CPU count.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from synthesis.environments.model import EnvModel
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.user_sim import SimulatedUser
from synthesis.models import Check, Environment, Scenario, Trajectory
from synthesis.rollouts.agents import LLMPolicy
from synthesis.rollouts.episodes import rollout
from synthesis.tasks.envfoundry_reward import Grade


def multi_turn(scenario: Scenario) -> bool:
    """Whether the attempts at `scenario` talk to a simulated user: those of a multi-turn
    task (its `user` record), every one of them."""
    return scenario.user is not None


def llm_user(scenario: Scenario, attempt: int) -> bool:
    """Whether attempt `attempt` at `scenario` talks to the model-worded user: the sampled
    attempts (1..k-1) of a multi-turn task; attempt 0 talks to the task's offline user."""
    return multi_turn(scenario) and attempt > 0


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
    on_graded: Callable[[Grade], None] | None = None,
) -> Trajectory:
    """Attempt `attempt` of the LLM agent at `scenario`, graded by its checks (`on_graded`
    is given the grade, each check's verdict: `rollout`). Raises what the agent's client
    raises (StageStopped, LLMError); the user never does."""
    policy = LLMPolicy(client, scenario.scenario_id, attempt=attempt)
    user = None  # attempt 0: `rollout` plays a multi-turn task with its own offline user
    if llm_user(scenario, attempt):
        user = SimulatedUser(client, scenario, model, seed=attempt)
    trajectory = rollout(
        env,
        scenario,
        checks,
        policy,
        model=model,
        pool=pool,
        backend=backend,
        user=user,
        on_graded=on_graded,
    )
    if not multi_turn(scenario):  # a single-turn attempt records that it was one
        metadata = {**(trajectory.metadata or {}), "turns": 1, "user_sim": "off"}
        trajectory = trajectory.model_copy(update={"metadata": metadata})
    return trajectory


# One LLM attempt to play: the task, its checks and the attempt's index.
Job = tuple[Scenario, Sequence[Check], int]


def llm_attempts(
    env: Environment,
    jobs: Sequence[Job],
    client: LLMClient,
    *,
    model: EnvModel,
    backend: str = "auto",
    in_flight: int | None = None,
) -> list[Trajectory | LLMError]:
    """Each job's trajectory, or the LLMError (StageStopped included) that ended it, in the
    order of `jobs` whatever order they finish in: the same answers give the same list.

    `in_flight` episodes (default: the requests the client lets be in flight) run at once,
    each on a thread of a sandbox pool of its own that wide. An episode holds its session
    while it waits on the endpoint, and a session holds a zygote (sandboxes/zygote.py: one
    forked worker at a time, ~8 MB, ~60 ms of CPU to start), so the pool keeps as many warm
    as episodes run together, started once per call: none is killed for want of room and
    started again. Threads, not `achat`: the episode and its sandbox calls block, and an
    event loop answering 64 threads' calls waits on the GIL between them (measured in
    benchmarks/rollouts.py, as is the rate).
    """
    from sandboxes import WorkerPool  # the engine runs without them, as everywhere

    width = min(in_flight or client.settings.concurrency, len(jobs))
    if width < 1:
        return []

    def play(job: Job) -> Trajectory | LLMError:
        scenario, checks, attempt = job
        try:
            return llm_attempt(env, scenario, checks, client, attempt, model=model, pool=pool)
        except LLMError as exc:  # one attempt's failure must not sink the others
            return exc

    # The longest episodes start first, so the last to finish are short ones: fewer threads
    # sit idle at the end while a long one runs alone. The list keeps the order of `jobs`.
    order = sorted(range(len(jobs)), key=lambda i: _expected_length(jobs[i]), reverse=True)
    # The pool's own threads run the episodes: a zygote dies with the thread that started
    # it (bwrap --die-with-parent), and these live as long as the pool.
    with WorkerPool(size=width, backend=backend) as pool:
        played = pool.map(play, [jobs[i] for i in order])
    by_job = dict(zip(order, played, strict=True))
    return [by_job[i] for i in range(len(jobs))]


def _expected_length(job: Job) -> tuple[bool, int]:
    """How long an episode will likely run, to order them: a multi-turn task (the user
    holds a value back, the agent asks) before a single-turn one, a longer gold chain first."""
    scenario, _, _ = job
    return multi_turn(scenario), len(scenario.gold_chain)
