"""A tiny build takes a workspace topic and publishes its tasks, graded on the final workspace."""

from __future__ import annotations

import json

from synthesis.tasks.workspace_checks import WORKSPACE_CHECK_TYPES
from tests.build_support import query


def test_a_tiny_build_publishes_workspace_scenarios_whose_checks_read_the_workspace(tiny_home):
    home, _ = tiny_home
    envs = query(
        home,
        "select env_id, n_tools from environments where kind = 'workspace' and status = 'accepted'",
    )
    assert envs, "the tiny build took no workspace topic"
    for env_id, n_tools in envs:
        assert 8 <= n_tools <= 30
        rows = query(
            home,
            "select s.scenario_id, s.initial_state_json, st.gold_pass, st.noop_fail, "
            "st.mutation_kill_rate from scenarios s join check_selftests st using (scenario_id) "
            f"where s.env_id = '{env_id}' and s.status = 'published'",
        )
        assert rows, f"{env_id} published nothing"
        for scenario_id, initial, gold_pass, noop_fail, kill_rate in rows:
            assert "__workspace__" in json.loads(initial)
            assert gold_pass and noop_fail and kill_rate == 1.0
            kinds = {
                json.loads(spec)["type"]
                for (spec,) in query(
                    home, f"select spec_json from checks where scenario_id = '{scenario_id}'"
                )
            }
            assert kinds and kinds <= set(WORKSPACE_CHECK_TYPES)
            assert "no_other_file_changes" in kinds
        oracle = query(
            home,
            "select min(t.reward) from trajectories t join scenarios s using (scenario_id) "
            f"where s.env_id = '{env_id}' and t.policy = 'oracle'",
        )
        assert oracle == [(1.0,)]
