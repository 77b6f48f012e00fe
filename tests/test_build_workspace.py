"""A tiny build of a workspace topic publishes its tasks, graded on the final workspace, and
refuses as a tool environment does a request the "never overwrites" rule blocks."""

from __future__ import annotations

import json

import pytest

from synthesis.config import DATA_DIR
from synthesis.tasks.envfoundry_reward import REPLY_CHECK_TYPES
from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES
from tests.build_support import query, run_build

pytestmark = pytest.mark.slow
WORKSPACE_TOPICS = ("course_materials",)


def test_a_tiny_build_publishes_workspace_scenarios_whose_checks_read_the_workspace(tmp_path):
    # One workspace topic from the shipped catalogue (a tiny build of all of it takes the
    # alphabetically first archetypes only; two topics of one archetype would need a test
    # environment of their own for the split).
    catalogue = json.loads((DATA_DIR / "topics.json").read_text())
    # course_materials names its files by title, so its trees hold same-named files in
    # different folders: a move or copy onto one of them is refused (an infeasible task).
    catalogue["topics"] = [t for t in catalogue["topics"] if t["topic_id"] in WORKSPACE_TOPICS]
    path = tmp_path / "topics.json"
    path.write_text(json.dumps(catalogue))
    home = tmp_path / "home"
    proc = run_build(home, extra=["--catalogue", str(path)])
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    envs = query(
        home,
        "select env_id, n_tools from environments where kind = 'workspace' and status = 'accepted'",
    )
    assert envs, "the tiny build took no workspace topic"
    refused: dict[str, int] = {}
    for env_id, n_tools in envs:
        assert 8 <= n_tools <= 30
        rows = query(
            home,
            "select s.scenario_id, s.kind, s.initial_state_json, st.gold_pass, st.noop_fail, "
            "st.mutation_kill_rate, st.n_mutants "
            "from scenarios s join check_selftests st using (scenario_id) "
            f"where s.env_id = '{env_id}' and s.status = 'published'",
        )
        assert rows, f"{env_id} published nothing"
        for scenario_id, kind, initial, gold_pass, noop_fail, kill_rate, n_mutants in rows:
            assert "__workspace__" in json.loads(initial)
            # A request refused alone has no mutant an answer could not tell from gold (each
            # declines with a true reason): the kill-rate bar leaves such tasks out too.
            assert gold_pass and noop_fail and (kill_rate == 1.0 or n_mutants == 0)
            kinds = {
                json.loads(spec)["type"]
                for (spec,) in query(
                    home, f"select spec_json from checks where scenario_id = '{scenario_id}'"
                )
            }
            assert "no_other_file_changes" in kinds
            if kind == "infeasible":
                refused[env_id] = refused.get(env_id, 0) + 1
                assert {"reply_refuses", "reply_states_no_other_rule"} <= kinds
                kinds -= set(REPLY_CHECK_TYPES)
            assert kinds and kinds <= {*WORKSPACE_CHECK_TYPES, "reply_concise"}
        oracle = query(
            home,
            "select min(t.reward) from trajectories t join scenarios s using (scenario_id) "
            f"where s.env_id = '{env_id}' and t.policy = 'oracle'",
        )
        assert oracle == [(1.0,)]
        baselines = query(
            home,
            "select t.policy, max(t.reward) from trajectories t join scenarios s "
            f"using (scenario_id) where s.env_id = '{env_id}' "
            # The guesser is a weak agent (it rates difficulty), not a baseline that must fail.
            "and t.policy in ('noop', 'refuse_always', 'wrong_record') "
            "group by 1 order by 1",
        )
        assert {p for p, _ in baselines} >= {"noop", "refuse_always"}, baselines
        assert all(best == 0.0 for _, best in baselines), baselines
    # The build is seeded: of course_materials' four candidates it publishes two refused
    # requests (a sixth of candidates are; a tiny build plans four per environment).
    assert sum(refused.values()) >= 1, "no infeasible workspace task was published"
