"""The LLM spend marts: per accepted environment, per published task, per successful
trajectory, from ledger rows whose sums are known (a call two owners claim is split)."""

from __future__ import annotations

import pytest
from test_dbt_project import _dbt, _rows
from test_warehouse import _env, _tool, _traj, populate, small_world

from synthesis.export import warehouse as wh

MARTS = ("mart_llm_spend_by_environment", "mart_llm_spend_by_task", "mart_llm_spend_by_trajectory")


def _call(call_id, stage, artifact_id, cost, status="accepted", build="b1", tokens_in=0):
    return {
        "call_id": call_id,
        "build_id": build,
        "stage": stage,
        "artifact_id": artifact_id,
        "model": "m",
        "status": status,
        "reason": None if status == "accepted" else "budget_exhausted: build cost cap $1",
        "tokens_in": tokens_in,
        "cost_usd": cost,
    }


def spend_world() -> dict[str, list]:
    world = small_world()
    # e4 comes from e1's topic t1: the topic's calls are split between them.
    world["environments"].append(_env("e4", "t1", [_tool("list_x", "query")], "accepted", 0.9))
    world["trajectories"] += [
        _traj("L1", "s1", "llm:m", 1.0, True),
        _traj("L2", "s1", "llm:m", 0.0, False),
        _traj("L4", "s4", "llm:m", 1.0, True),
    ]
    world["llm_calls"] = [
        _call("k1", "env_spec", "t1", 0.40),  # topic → e1 and e4, 0.20 each
        _call("k2", "audit_judge", "e1", 0.10),
        _call("k3", "task_text", "s1", 0.05),
        _call("k4", "agent", "s1", 0.06, tokens_in=100),  # s1's LLM trajectories: L1, L2
        _call("k5", "agent", "L4", 0.02),
        _call("k6", "agent", "s4", 0.0, status="skipped", build="b2"),
        _call("k7", "task_text", "s3", 0.50),  # quarantined task: e1's spend, no task row
        _call("k8", "audit_judge", "e2", 1.00),  # quarantined environment: no row
    ]
    return world


@pytest.mark.slow
def test_llm_spend_marts(tmp_path):
    home = tmp_path / "home"
    populate(home / wh.WAREHOUSE_FILE, spend_world())
    result = _dbt(
        "build",
        "--indirect-selection",
        "cautious",  # only tests whose models are all selected
        "--select",
        *(f"+{m}" for m in MARTS),
        home=home,
        tmp=tmp_path,
    )
    assert result.returncode == 0, result.stdout[-4000:]
    assert "ERROR=0" in result.stdout

    cols = "n_calls, n_skipped, n_builds, round(cost_usd, 6), round(agent_cost_usd, 6)"
    envs = _rows(home, f"SELECT env_id, {cols} FROM mart_llm_spend_by_environment ORDER BY 1")
    assert envs == [("e1", 7, 1, 2, 0.93, 0.08), ("e4", 1, 0, 1, 0.2, 0.0)]

    tasks = _rows(home, f"SELECT scenario_id, {cols} FROM mart_llm_spend_by_task ORDER BY 1")
    assert tasks == [
        ("s1", 2, 0, 1, 0.11, 0.06),
        ("s2", 0, 0, 0, 0.0, 0.0),  # published, never asked: zero, not missing
        ("s4", 2, 1, 2, 0.02, 0.02),
    ]

    trajs = _rows(
        home,
        f"SELECT traj_id, {cols}, tokens_in FROM mart_llm_spend_by_trajectory ORDER BY 1",
    )
    # L1 shares s1's agent call with the failed L2; L4 alone has s4's.
    assert trajs == [("L1", 1, 0, 1, 0.03, 0.03, 50), ("L4", 2, 1, 2, 0.02, 0.02, 0)]
