"""Project tasks as scenarios: the kinds drawn in turn over one initial folder.

Every kind module (`ledger_reports` and its peers) lists its kinds in `KINDS`; a state's
tasks alternate over all of them with one random draw, and each becomes a scenario whose
checks read its outputs by their format (`outputs`) and whose self-test runs its mistakes.
"""

from __future__ import annotations

import random
from typing import Any

from synthesis.environments.projects.folder import Project, project_folder
from synthesis.hashing import derive_seed
from synthesis.tasks.projects import ledger_reports, log_triage
from synthesis.tasks.projects.work import ProjectTask

KINDS = (*ledger_reports.KINDS, *log_triage.KINDS)


def plan_project_tasks(
    project: Project, vocabulary: dict[str, Any], seed: int, count: int = 2
) -> list[ProjectTask]:
    """`count` tasks over `project`, alternating the kinds, a pure function of the seed."""
    rng = random.Random(seed)
    return [KINDS[index % len(KINDS)](project, vocabulary, rng) for index in range(count)]


GENERATOR = "project_work/v1"


def plan_project_scenarios(env: Any, state: Any, *, seed: int, count: int) -> list[Any]:
    """Up to `count` scenarios in one initial project folder (a pure function of the
    environment, the state and the seed). The folder is made again from the state's seed:
    the rows a right report counts come from the same draw as its files."""
    from synthesis.models import ToolCall
    from synthesis.tasks.assembly import keep_distinct, scenario_of
    from synthesis.tasks.difficulty import difficulty_record
    from synthesis.tasks.plan import PlanGoal, TaskPlan
    from synthesis.tasks.text.voices import STAFF

    vocabulary = env.spec.workspace
    project = project_folder(vocabulary, state.seed)
    if state.state.get("__workspace__") != project.tree():
        raise ValueError(f"state {state.state_id} is not the project folder its seed makes")
    rng = random.Random(derive_seed("scenario", env.env_id, state.state_id, seed))
    out: list[Any] = []
    seen: set[str] = set()
    for index, task in enumerate(
        plan_project_tasks(project, vocabulary, rng.getrandbits(32), count)
    ):
        chain = [ToolCall(tool=c["tool"], args=c["args"]) for c in task.gold_chain]
        roles = ["lookup"] * (len(chain) - 1) + ["mutation"]
        plan = TaskPlan(
            env_id=env.env_id,
            state_id=state.state_id,
            seed=seed,
            index=index,
            title=env.spec.title,
            goals=[PlanGoal(kind="action", tool="run", verb="report", description=task.kind)],
            gold_chain=chain,
            roles=roles,
            goal_tools=["run"],
            generator=GENERATOR,
        )
        difficulty = difficulty_record(
            steps=len(chain),
            n_mutations=1,
            n_lookups=len(chain) - 1,
            hidden_lookups=0,
            decoys=0,
            conditionals=0,
            infeasible=False,
        )
        extra = {
            "workspace_goals": [task.kind],
            "outputs": task.outputs,
            "mistakes": [{"label": m.label, "chain": m.chain} for m in task.mistakes],
        }
        persona = STAFF[index % len(STAFF)]
        scenario = scenario_of(env, state, plan, task.task_text, persona, difficulty, None, extra)
        keep_distinct(scenario, seen, out)
    return out
