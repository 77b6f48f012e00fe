"""Planning by exploration: the same shop, with its spec thrown away, still gives proven tasks."""

from __future__ import annotations

import pytest

from quality.selftest import selftest_outcomes
from synthesis.environments.inference import infer_model
from synthesis.tasks.assembly import mentions_an_id
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@pytest.fixture
def specless(shop_env, shop_state, sandbox):
    env = shop_env.model_copy(update={"spec": None})
    return env, shop_state, infer_model(env, [shop_state], seed=0)


def test_inference_confirms_kinds_and_finds_ids_producers_and_statuses(specless):
    _, _, model = specless
    kinds = {t.name: (t.kind, t.kind_evidence) for t in model.tools}
    assert kinds["pay_order"] == ("mutate", "probe")
    assert kinds["find_customer_by_email"] == ("query", "probe")
    assert model.tool("create_order").id_params() == {
        "customer_id": "customer",
        "product_id": "product",
    }
    assert "order" in model.tool("list_orders").produces
    orders = model.entity("order")
    assert orders.status_field == "status"
    assert "paid" in orders.transitions.get("pending", [])


def test_explored_tasks_hide_ids_look_them_up_and_are_proven(specless):
    env, state, model = specless
    planned = plan_scenarios(env, state, seed=0, count=5, model=model)
    assert len(planned) == 5
    executed = execute_gold(env, planned, model=model)
    published = [s for s in executed if s.status == "published"]
    assert len(published) == 5, [s.reason for s in executed]
    ids = {rid for coll in state.state.values() for rid in coll}
    for scenario in published:
        assert not mentions_an_id(scenario.task_text, ids)
        assert scenario.provenance["generator"] == "explore/v1"
        assert "mutation" in scenario.provenance["roles"], scenario.gold_chain
    items = [(s, derive_checks(s, model=model)) for s in published]
    outcomes = selftest_outcomes(env, items, model=model)
    assert all(o.selftest.proven for o in outcomes), [o.selftest.reason for o in outcomes]
    kill = [o.selftest.mutation_kill_rate for o in outcomes]
    assert sum(kill) / len(kill) >= 0.9
    # Same seed, same plans: exploring is as reproducible as predicting.
    again = plan_scenarios(env, state, seed=0, count=5, model=model)
    assert [s.model_dump() for s in again] == [s.model_dump() for s in planned]
