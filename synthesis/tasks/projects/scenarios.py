"""Project tasks as scenarios: the kinds drawn in turn over one initial folder.

Every kind module (`ledger_reports` and its peers) lists its kinds in `KINDS`; a state's
tasks alternate over all of them with one random draw, and each becomes a scenario whose
checks read its outputs by their format (`outputs`) and whose self-test runs its mistakes.
Requests the folder cannot support (`missing_data`) are a fixed share of every state's
tasks, as the tool environments' refusals are, and become infeasible scenarios whose reply
is graded as a refusal's.
"""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

from synthesis.environments.projects.folder import Project, project_folder
from synthesis.hashing import derive_seed
from synthesis.tasks.projects import (
    code_fixes,
    config_changes,
    joins,
    ledger_reports,
    log_triage,
    missing_data,
)
from synthesis.tasks.projects.work import ProjectTask, looks

KINDS = (
    *ledger_reports.KINDS,
    *joins.KINDS,
    *code_fixes.KINDS,
    *config_changes.KINDS,
    *log_triage.KINDS,
)
# Each feasible kind's declined twin: the same request in the kind's own words, for data the
# folder does not hold or a change its rules forbid (None where a folder affords none). Drawn
# in turn over KINDS as the feasible kinds are, so declined requests come in the feasible
# kinds' proportions: were they all reports, a report's words ("2024", "total") would tell a
# declined request from the rest (benchmarks/request_tells.py). Their share of a state's tasks
# is the tool environments' infeasible family's (synthesis.tasks.scenarios): a share, not a
# turn among KINDS, so it does not shrink with every feasible kind added.
DECLINED = {
    **missing_data.DECLINED,
    **joins.DECLINED,
    **config_changes.DECLINED,
    **log_triage.DECLINED,
    **code_fixes.DECLINED,
}
INFEASIBLE_SHARE = 0.14


# A folder holds a finite set of distinct tasks (each kind's periods, groups, sizes); once a
# state's draws keep repeating, more draws find nothing new. Up to this many draws per task
# asked for, so a state yields as many distinct tasks as its folder supports.
DRAWS_PER_TASK = 4


def plan_project_tasks(
    project: Project, vocabulary: dict[str, Any], seed: int, count: int = 2
) -> list[ProjectTask]:
    """Up to `count` tasks over `project` with distinct gold chains, drawing the kinds in
    turn (a draw that repeats an earlier task is dropped); a pure function of the seed."""
    rng = random.Random(seed)
    # Each state starts the turn at a kind of its own: a build asking a few tasks of many
    # states draws every kind, not only the first few.
    start = rng.randrange(len(KINDS))
    return _in_turn(
        count,
        start,
        lambda kind: kind(project, vocabulary, rng),
        lambda task: json.dumps(task.gold_chain, sort_keys=True),
    )


def plan_infeasible_tasks(
    project: Project, vocabulary: dict[str, Any], seed: int, count: int
) -> list[ProjectTask]:
    """Up to `count` requests `project` cannot support, the declined twins of KINDS drawn in
    turn from a drawn first one (a state of one such task is not always of the first kind);
    a kind with no twin for this folder, or one repeating an earlier request, is passed."""
    rng = random.Random(seed)
    start = rng.randrange(len(KINDS))

    def twin_of(kind: Any) -> ProjectTask | None:
        twin = DECLINED.get(kind)
        return twin(project, vocabulary, rng) if twin else None

    return _in_turn(count, start, twin_of, _declined_key)


def _declined_key(task: ProjectTask) -> str:
    """Two twins are one request when they look alike and decline alike."""
    return json.dumps([task.gold_chain, task.reply], sort_keys=True)


def _in_turn(
    count: int,
    start: int,
    make: Callable[[Any], ProjectTask | None],
    key: Callable[[ProjectTask], str],
) -> list[ProjectTask]:
    """Up to `count` tasks made of KINDS in turn from `start` (up to DRAWS_PER_TASK draws a
    task asked for); a draw that makes none, or one whose `key` an earlier task had, is
    passed."""
    tasks: list[ProjectTask] = []
    seen: set[str] = set()
    for draw in range(count * DRAWS_PER_TASK):
        if len(tasks) == count:
            break
        task = make(KINDS[(start + draw) % len(KINDS)])
        if task is None:
            continue
        made = key(task)
        if made not in seen:
            seen.add(made)
            tasks.append(task)
    return tasks


def infeasible_quota(count: int, env_id: str, state_id: str, seed: int) -> int:
    """How many of a state's `count` tasks are infeasible: count × share, rounded up or down
    at random (seeded), so the expected share holds for small counts."""
    rng = random.Random(derive_seed("project-infeasible-quota", env_id, state_id, seed))
    return min(count, int(count * INFEASIBLE_SHARE + rng.random()))


GENERATOR = "project_work/v1"


def plan_project_scenarios(env: Any, state: Any, *, seed: int, count: int) -> list[Any]:
    """Up to `count` scenarios in one initial project folder (a pure function of the
    environment, the state and the seed). The folder is made again from the state's seed:
    the rows a right report counts come from the same draw as its files."""
    from synthesis.tasks.assembly import gold_chain_key

    vocabulary = env.spec.workspace
    project = project_folder(vocabulary, state.seed)
    if state.state.get("__workspace__") != project.tree():
        raise ValueError(f"state {state.state_id} is not the project folder its seed makes")
    rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed))
    quota = infeasible_quota(count, env.env_id, state.state_id, seed)
    # The feasible tasks draw first, from the stream they always drew from: a state's
    # feasible tasks are the same with or without infeasible ones beside them.
    tasks = plan_project_tasks(project, vocabulary, rng.getrandbits(32), count - quota)
    refused_seed = derive_seed("project-infeasible", env.env_id, state.state_id, seed)
    tasks += plan_infeasible_tasks(project, vocabulary, refused_seed, quota)
    out: list[Any] = []
    seen: set[str] = set()
    for index, task in enumerate(tasks):
        scenario = _scenario(env, state, seed, index, task)
        # Two tasks of one state with the same gold chain are one task, unless they are
        # requests for different reports the folder cannot support: the same looking shows
        # that Q3's summary and Q3's per-item table both lack their data.
        declined = (task.reply or {}).get("refusal", {}).get("declined", {}).get("what", "")
        key = gold_chain_key(state.state_id, scenario.gold_chain) + declined
        if key not in seen:
            seen.add(key)
            out.append(scenario)
    return out


def _scenario(env: Any, state: Any, seed: int, index: int, task: ProjectTask) -> Any:
    from synthesis.models import ToolCall
    from synthesis.tasks.assembly import scenario_of, stored_reply
    from synthesis.tasks.difficulty import difficulty_record
    from synthesis.tasks.plan import PlanGoal, TaskPlan
    from synthesis.tasks.text.voices import STAFF

    chain = [ToolCall(tool=c["tool"], args=c["args"]) for c in task.gold_chain]
    refused = task.reply is not None
    # A request the folder cannot support changes nothing: every step looks.
    roles = ["lookup"] * len(chain) if refused else ["lookup"] * (len(chain) - 1) + ["mutation"]
    goal = PlanGoal(
        kind="refuse" if refused else "action", tool="run", verb="report", description=task.kind
    )
    plan = TaskPlan(
        env_id=env.env_id,
        state_id=state.state_id,
        seed=seed,
        index=index,
        title=env.spec.title,
        goals=[goal],
        gold_chain=chain,
        roles=roles,
        goal_tools=["run"],
        generator=GENERATOR,
    )
    extra: dict[str, Any] = {
        "workspace_goals": [task.kind],
        "outputs": task.outputs,
        "mistakes": [{"label": m.label, "chain": m.chain} for m in task.mistakes],
    }
    if not refused:
        # Judged by its outputs alone: the shell's reads are no step a wrong solution would
        # differ in (a refusal's reply rests on what they showed, so its looks stay mutated).
        extra["looks"] = looks(task.gold_chain)
    reply = None
    if refused:
        plan = _refused_plan(env, plan, task)
        reply = plan.expected_reply
        extra["reply"] = stored_reply(plan, reply)
    difficulty = difficulty_record(
        steps=len(chain),
        n_mutations=0 if refused else 1,
        n_lookups=roles.count("lookup"),
        hidden_lookups=0,
        decoys=0,
        conditionals=0,
        infeasible=refused,
    )
    persona = STAFF[index % len(STAFF)]
    return scenario_of(env, state, plan, task.task_text, persona, difficulty, reply, extra)


def _refused_plan(env: Any, plan: Any, task: ProjectTask) -> Any:
    """`plan` as an infeasible task, its reply contract a refusal's (as the tool and workspace
    environments' infeasible tasks carry theirs): the fact a gold call shows, the reasons,
    and the system's other rules and tools, which a refusal may not paste."""
    assert task.reply is not None
    asked = task.reply["asked"]
    refusal = {
        **task.reply["refusal"],
        "alone": True,  # nothing else was asked: a reply claiming work done is false
        "rules": list(env.spec.rules),
        "tools": [t.description for t in env.spec.tools if t.description],
    }
    return plan.model_copy(
        update={
            "kind": "infeasible",
            "asked": asked,
            "expected_reply": {
                "include": [str(asked[0]["value"])],
                "exclude": [],
                "candidates": [],
                "rule": refusal["reasons"][0]["rule"],
                "refusal": refusal,
            },
        }
    )
