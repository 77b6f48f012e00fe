"""Tool-dependency graph: data-flow edges follow ids, state edges follow statuses and guards."""

from __future__ import annotations

from synthesis.environments.model import from_spec
from synthesis.environments.topology import build_tool_graph, from_statuses, id_params, target_param


def _edges(graph, kind):
    return {(e.src, e.dst) for e in graph.edges if e.kind == kind}


def test_data_edges_connect_id_producers_to_id_consumers(shop_spec):
    g = build_tool_graph(from_spec(shop_spec))
    data = _edges(g, "data")
    # pay_order takes an order id: anything that yields order ids feeds it.
    assert {
        ("list_orders", "pay_order"),
        ("get_order", "pay_order"),
        ("create_order", "pay_order"),
    } <= data
    assert {
        ("find_customer_by_email", "create_order"),
        ("find_product_by_name", "create_order"),
    } <= data
    # list_orders filters by a customer id, so it depends on the customer lookup.
    assert ("find_customer_by_email", "list_orders") in data
    # Nothing that yields only order ids may feed a tool that takes a product id.
    assert ("list_orders", "update_product_price") not in data
    assert ("find_customer_by_email", "update_product_price") not in data
    # Mutating transitions do not produce ids for others (they need the id already).
    assert not any(src in ("pay_order", "cancel_order") for src, _ in data)


def test_state_edges_follow_status_and_guards(shop_spec, booking_spec):
    g = build_tool_graph(from_spec(shop_spec))
    state = _edges(g, "state")
    assert ("create_order", "pay_order") in state  # pending comes from create
    assert ("pay_order", "ship_order") in state  # paid comes from pay
    assert ("create_order", "ship_order") not in state  # create never yields 'paid'
    assert ("create_order", "cancel_order") in state and ("pay_order", "cancel_order") in state
    assert ("cancel_order", "create_order") in state  # cancelling restores stock
    booking = _edges(build_tool_graph(from_spec(booking_spec)), "state")
    # cancelling frees the slot that create_booking requires to be available
    assert ("cancel_booking", "create_booking") in booking
    assert ("complete_booking", "create_booking") not in booking


def test_graph_queries_and_weights(shop_spec):
    g = build_tool_graph(from_spec(shop_spec))
    assert g.mutations() == sorted(
        ["create_order", "pay_order", "ship_order", "cancel_order", "update_product_price"]
    )
    assert g.lookups("order") == ["list_orders"]
    assert g.lookups("customer") == ["find_customer_by_email"]
    assert g.goal_weight("create_order") > g.goal_weight("update_product_price") > 1.0
    assert g.depends_on("pay_order", "create_order")
    assert not g.depends_on("create_order", "pay_order")
    nx_graph = g.to_networkx()
    assert set(nx_graph.nodes) == {t.name for t in shop_spec.tools}
    assert nx_graph.number_of_edges() == len(g.edges)


def test_graph_is_deterministic(shop_spec):
    assert (
        build_tool_graph(from_spec(shop_spec)).to_dict()
        == build_tool_graph(from_spec(shop_spec)).to_dict()
    )


def test_id_params_and_targets(shop_spec):
    assert id_params(from_spec(shop_spec).tool("create_order")) == {
        "customer_id": "customer",
        "product_id": "product",
    }
    assert target_param(from_spec(shop_spec).tool("pay_order")) == "order_id"
    assert target_param(from_spec(shop_spec).tool("update_product_price")) == "product_id"
    assert target_param(from_spec(shop_spec).tool("create_order")) is None
    assert from_statuses(from_spec(shop_spec), from_spec(shop_spec).tool("cancel_order")) == (
        "pending",
        "paid",
    )
