"""The shell reads of a project task's gold chain (`work.looks`) change nothing: every kind's
gold chain replayed without them reaches the same final state in the sandbox. That is why the
self-test does not mutate them (quality/selftest.py `make_mutants`): a mutant dropping or
moving one could only ever be equivalent, an episode spent for nothing."""

from __future__ import annotations

import json

import pytest

from sandboxes import EnvSource, WorkerPool
from sandboxes.backends import unavailable_reason
from synthesis.config import DATA_DIR
from synthesis.environments.archetypes.project import build_project_spec
from synthesis.environments.build import environment_code
from synthesis.environments.projects.folder import project_folder
from synthesis.models import Topic
from synthesis.tasks.projects.scenarios import KINDS, plan_project_tasks
from synthesis.tasks.projects.work import PROGRAM_START, looks

pytestmark = pytest.mark.skipif(
    unavailable_reason("bwrap") is not None, reason=f"bwrap: {unavailable_reason('bwrap')}"
)


def _topics(n: int) -> list[Topic]:
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    return [Topic.model_validate(t) for t in catalogue["topics"] if t["archetype"] == "project"][:n]


def test_every_kinds_gold_chain_reaches_its_state_without_its_looks():
    episodes, owners = [], []
    kinds = set()
    for number, topic in enumerate(_topics(3)):
        spec = build_project_spec(topic)
        source = EnvSource(code=environment_code(spec))
        project = project_folder(spec.workspace, number)
        state = {"__workspace__": project.tree()}
        for task in plan_project_tasks(project, spec.workspace, number, len(KINDS)):
            reads = looks(task.gold_chain)
            # Every run is a look or the program; the program is never one.
            runs = [i for i, c in enumerate(task.gold_chain) if c["tool"] == "run"]
            programs = [i for i in runs if i not in reads]
            assert programs or task.kind == "code_fix", task.kind  # a fix is written
            assert all(
                task.gold_chain[i]["args"]["command"].startswith(PROGRAM_START) for i in programs
            )
            whole = [(c["tool"], c["args"]) for c in task.gold_chain]
            without = [call for i, call in enumerate(whole) if i not in reads]
            episodes += [(source, state, whole), (source, state, without)]
            owners.append((topic.topic_id, task.kind))
            kinds.add(task.kind)
    assert len(kinds) == len(KINDS)  # every kind planned
    with WorkerPool(2) as pool:
        results = pool.run_episodes(episodes)
    for n, owner in enumerate(owners):
        whole, without = results[2 * n], results[2 * n + 1]
        assert whole.status == without.status == "ok", (owner, whole.reason, without.reason)
        assert all(r.ok for r in whole.results), owner
        assert without.final_state == whole.final_state, owner
