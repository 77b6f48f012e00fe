"""Which published tasks an evaluation plays, and the start state of code we did not compile."""

from __future__ import annotations

import textwrap

import pytest

from synthesis.environments.foreign import foreign_environment, resolve_sources
from synthesis.evaluation.dataset import (
    EvalError,
    TaskRef,
    _add_initial_dumps,
    current_dataset,
    read_task_ids,
    select_tasks,
    split_counts,
)
from synthesis.models import Scenario


def _task(scenario_id: str, split: str, env_id: str = "e1") -> TaskRef:
    return TaskRef(
        scenario_id=scenario_id,
        env_id=env_id,
        archetype="booking",
        origin="synthesized",
        kind="feasible",
        family="chain",
        split=split,
        multi_turn=False,
        structural_tier="easy",
        final_tier="easy",
        answer_kind="state",
    )


TASKS = [_task("a", "train"), _task("b", "test"), _task("c", "train", "e2"), _task("d", "test")]


def test_tasks_are_chosen_by_split_list_and_limit():
    assert [t.scenario_id for t in select_tasks(TASKS)] == ["b", "d"]  # test by default
    assert [t.scenario_id for t in select_tasks(TASKS, split="train")] == ["a", "c"]
    # A limit takes a fixed sample spread over the environments, kept in play order.
    limited = [t.scenario_id for t in select_tasks(TASKS, split="all", limit=2)]
    assert limited == [t.scenario_id for t in select_tasks(TASKS, split="all", limit=2)]
    assert len(limited) == 2 and limited == sorted(limited)
    three = [t.scenario_id for t in select_tasks(TASKS, split="all", limit=3)]
    assert set(limited) < set(three)  # a larger limit keeps the smaller one's tasks
    listed = select_tasks(TASKS, split="all", task_ids=["d", "a"])
    assert [t.scenario_id for t in listed] == ["a", "d"]
    assert select_tasks(TASKS, split="test", task_ids=["a"]) == []
    assert split_counts(TASKS) == {"test": 2, "train": 2}
    with pytest.raises(EvalError, match="not a published task of this dataset: x, y"):
        select_tasks(TASKS, task_ids=["a", "x", "y"])
    with pytest.raises(EvalError, match="unknown split"):
        select_tasks(TASKS, split="dev")


def test_a_tasks_file_lists_ids_one_a_line(tmp_path):
    path = tmp_path / "tasks.txt"
    path.write_text("# chosen by hand\nabc123\n\n  def456  # the hard one\nabc123\n")
    assert read_task_ids(path) == ["abc123", "def456"]
    with pytest.raises(EvalError, match="cannot read the tasks file"):
        read_task_ids(tmp_path / "missing.txt")


def test_a_home_without_a_published_dataset_says_how_to_make_one(tmp_path):
    with pytest.raises(EvalError, match="envfoundry build --home"):
        current_dataset(tmp_path)


NORMALISING = textwrap.dedent('''
    class FrontDesk:
        def __init__(self):
            self.rooms = {}
            self.opened = 0

        def list_rooms(self) -> list:
            """List the rooms."""
            return sorted(self.rooms)
''')


def test_the_start_state_of_foreign_code_is_what_it_reports_after_loading(tmp_path):
    path = tmp_path / "front_desk.py"
    path.write_text(NORMALISING)
    (source,) = resolve_sources(str(path))
    env = foreign_environment(source)
    loaded = {"rooms": {"101": {"floor": 1}}}
    scenario = Scenario(
        scenario_id="s1",
        env_id=env.env_id,
        state_id="st",
        task_text="List the rooms.",
        initial_state=loaded,
        gold_chain=[],
    )
    notes: list[str] = []
    _add_initial_dumps(env, [scenario], "auto", notes)
    # The class reports an attribute the state did not set: the checks compare against that.
    assert scenario.initial_dump == {"rooms": {"101": {"floor": 1}}, "opened": 0}
    assert scenario.start_state == scenario.initial_dump and notes == []
