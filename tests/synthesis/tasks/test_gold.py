"""Gold runs: executed in the sandbox; failures quarantined with a precise reason, not dropped."""

from __future__ import annotations

from types import SimpleNamespace

from synthesis import codec
from synthesis.environments.model import from_spec, model_of
from synthesis.environments.topology import id_params
from synthesis.models import ToolCall
from synthesis.tasks.gold import execute_gold, first_unproduced_id, gold_failure
from synthesis.tasks.scenarios import plan_scenarios


def _call(tool, ok=True, result=None, error=None):
    return SimpleNamespace(tool=tool, ok=ok, result=result, error=error)


def _episode(results, final_state, status="ok", reason=None):
    return SimpleNamespace(results=results, final_state=final_state, status=status, reason=reason)


CHAIN = [
    ToolCall(tool="find_product_by_name", args={"name": "Oolong"}),
    ToolCall(
        tool="create_order",
        args={"customer_id": "CUS-0001", "product_id": "PRD-0003", "quantity": 1},
    ),
]


def test_failed_step_is_named_with_the_tool_error():
    ep = _episode(
        [
            _call("find_product_by_name", result={"success": True, "data": {}}),
            _call("create_order", result={"success": False, "error": "insufficient stock"}),
        ],
        {"a": 1},
    )
    assert gold_failure(CHAIN, ep, {"a": 0}) == (
        "gold step 2 create_order failed: insufficient stock"
    )


def test_exception_kill_and_no_change_are_reasons():
    raised = _episode(
        [
            _call("find_product_by_name", ok=False, error="ZeroDivisionError: x"),
            _call("create_order", result={"success": True}),
        ],
        {"a": 1},
    )
    assert gold_failure(CHAIN, raised, {"a": 0}) == (
        "gold step 1 find_product_by_name failed: ZeroDivisionError: x"
    )
    killed = _episode([], None, status="killed", reason="wall clock 5s exceeded")
    assert gold_failure(CHAIN, killed, {}) == "gold run killed: wall clock 5s exceeded"
    ok = [
        _call("find_product_by_name", result={"success": True, "data": {}}),
        _call("create_order", result={"success": True, "data": {}}),
    ]
    assert gold_failure(CHAIN, _episode(ok, {"a": 0}), {"a": 0}) == (
        "gold chain changed nothing in the state"
    )
    assert gold_failure(CHAIN, _episode(ok, {"a": 1}), {"a": 0}) is None
    broken = [_call("find_product_by_name", result="not a dict"), ok[1]]
    assert "broke the contract" in gold_failure(CHAIN, _episode(broken, {"a": 1}), {"a": 0})


def test_ids_must_come_from_earlier_results(shop_spec):
    chain = [
        ToolCall(tool="find_customer_by_email", args={"email": "ada@example.com"}),
        ToolCall(tool="list_orders", args={"customer_id": "CUS-0001"}),
        ToolCall(tool="pay_order", args={"order_id": "ORD-0004"}),
    ]
    results = [
        {"success": True, "data": {"id": "CUS-0001"}},
        {"success": True, "data": [{"id": "ORD-0001", "customer_id": "CUS-0001"}]},
        {"success": True, "data": {}},
    ]
    assert first_unproduced_id(from_spec(shop_spec), chain, results) == (
        "gold step 3 pay_order uses order id 'ORD-0004' that no earlier step produced"
    )
    results[1]["data"].append({"id": "ORD-0004"})
    assert first_unproduced_id(from_spec(shop_spec), chain, results) is None


# --------------------------------------------------------------------------- in the sandbox


def test_gold_runs_fill_results_and_prove_id_flow(sandbox, world):
    env, state = world
    planned = plan_scenarios(env, state, seed=1, count=8, max_chain_length=5)
    ran = execute_gold(env, planned)
    assert [s.scenario_id for s in ran] == [s.scenario_id for s in planned]
    for s in ran:
        assert s.status == "published", s.reason
        assert len(s.gold_results) == len(s.gold_chain)
        roles = s.provenance["roles"]
        assert [r["success"] for r in s.gold_results] == [r != "refused" for r in roles]
        assert s.final_state is not None
        # A state task changes the state; an infeasible one refused alone leaves it as it was.
        if s.expected_reply is None:
            assert s.final_state != s.initial_state
        if s.kind == "infeasible" and "mutation" not in roles:
            assert s.final_state == s.initial_state
        for i, call in enumerate(s.gold_chain):
            earlier = codec.dumps_str(s.gold_results[:i])
            for param in id_params(model_of(env).tool(call.tool)):
                if param in call.args:
                    assert f'"{call.args[param]}"' in earlier


def test_infeasible_gold_is_quarantined_with_reason_not_dropped(sandbox, shop_env, shop_state):
    planned = plan_scenarios(shop_env, shop_state, seed=1, count=12, max_chain_length=5)
    good = [s for s in planned if s.expected_reply is None]
    bad = good[0].model_copy(
        update={
            "scenario_id": "bad-one",
            "gold_chain": [
                ToolCall(tool="find_customer_by_email", args={"email": "ada@example.com"}),
                ToolCall(tool="find_product_by_name", args={"name": "Oolong"}),
                ToolCall(
                    tool="create_order",
                    args={"customer_id": "CUS-0001", "product_id": "PRD-0003", "quantity": 2},
                ),
            ],
        }
    )
    ran = execute_gold(shop_env, [good[0], bad, good[1]])
    assert [s.status for s in ran] == ["published", "quarantined", "published"]
    assert ran[1].reason == "gold step 3 create_order failed: insufficient stock"
    assert ran[1].gold_results[2] == {"success": False, "error": "insufficient stock"}
