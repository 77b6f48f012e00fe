"""The checks asset records every quarantined scenario with the stage that rejected it."""

from __future__ import annotations

import copy

import dagster as dg

from assets._resources import BuildSettings
from assets.checks import checks
from synthesis.environments.build import build_environment
from synthesis.environments.model import from_spec
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


def test_quarantine_rows_name_the_rejecting_stage(tmp_path):
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=4, index=0, records_per_entity=4)
    good, tampered, failed = execute_gold(
        env, plan_scenarios(env, state, seed=4, count=3, max_chain_length=4)
    )[:3]
    # A final state the gold chain does not produce: its derived checks cannot be proven.
    final = copy.deepcopy(tampered.final_state)
    order_id = sorted(final["orders"])[0]
    final["orders"][order_id]["status"] = "teleported"
    tampered = tampered.model_copy(update={"final_state": final})
    failed = failed.model_copy(
        update={"status": "quarantined", "reason": "gold step 1 pay_order failed: nope"}
    )
    out = checks(
        context=dg.build_asset_context(partition_key=env.env_id),
        settings=BuildSettings(profile="tiny", home=str(tmp_path)),
        sandbox_pool=None,  # its self-tests start sandboxes of their own
        environments=env.model_dump(mode="json", by_alias=True),
        scenarios=[s.model_dump(mode="json") for s in (good, tampered, failed)],
        env_models=from_spec(env.spec, env).model_dump(mode="json", by_alias=True),
    ).value
    statuses = [s["status"] for s in out["scenarios"]]
    assert statuses == ["published", "quarantined", "quarantined"]
    rows = {q["artifact_id"]: q for q in out["quarantine"]}
    assert rows.keys() == {tampered.scenario_id, failed.scenario_id}
    assert rows[tampered.scenario_id]["stage"] == "checks"
    assert rows[tampered.scenario_id]["reason"].startswith("checks not proven:")
    assert rows[failed.scenario_id]["stage"] == "scenarios"
    assert rows[failed.scenario_id]["reason"] == "gold step 1 pay_order failed: nope"
