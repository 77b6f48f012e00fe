"""The environment model: exact from a spec, and what inference reads off states."""

from __future__ import annotations

import pytest

from synthesis.environments.inference import collection_label, find_collections
from synthesis.environments.model import from_analysis, from_spec, model_of
from synthesis.environments.topology import build_tool_graph, id_params, target_param


def test_a_spec_model_keeps_every_kind_id_parameter_and_lookup(shop_env, shop_spec):
    model = from_spec(shop_spec, shop_env)
    assert model.exact and model.source == "spec"
    assert [t.name for t in model.tools] == [t.name for t in shop_spec.tools]
    for tool, spec_tool in zip(model.tools, shop_spec.tools, strict=True):
        assert tool.kind == spec_tool.kind and tool.kind_evidence == "spec"
        assert tool.schema_ == next(t.schema_ for t in shop_env.tools if t.name == tool.name)
        refs = {p.name: p.ref for p in spec_tool.params if p.ref}
        assert {k: v for k, v in tool.id_params().items() if k in refs} == refs
    assert id_params(model.tool("pay_order")) == {"order_id": "order"}
    assert target_param(model.tool("pay_order")) == "order_id"
    customers = model.entity("customer")
    assert (customers.attribute, customers.lookup_field, customers.shape) == (
        "customers",
        "email",
        "keyed",
    )
    orders = model.entity("order")
    assert orders.status_field == "status" and "paid" in orders.statuses
    assert model_of(shop_env) == model


def test_the_graph_of_a_spec_model_links_producers_to_consumers(shop_spec):
    graph = build_tool_graph(from_spec(shop_spec))
    edges = {(e.src, e.dst) for e in graph.edges if e.kind == "data"}
    assert ("find_customer_by_email", "create_order") in edges
    assert ("list_orders", "pay_order") in edges


def test_a_model_from_the_ast_alone_knows_schemas_but_no_collections(shop_env):
    env = shop_env.model_copy(update={"spec": None})
    model = from_analysis(env)
    assert not model.exact and model.collections == []
    assert {t.kind_evidence for t in model.tools} == {"ast"}
    assert model.tool("pay_order").param("order_id").required


@pytest.mark.parametrize(
    ("attribute", "label"),
    [
        ("ticket_queue", "ticket"),
        ("credit_card_list", "credit card"),
        ("user_map", "user"),
        ("tweets", "tweet"),
        ("booking_record", "booking"),
        ("categories", "category"),
        ("orders", "order"),
    ],
)
def test_collection_labels_read_like_nouns(attribute, label):
    assert collection_label(attribute) == label


def test_collections_are_found_in_every_shape_people_use():
    state = {
        "tickets": {
            "T-1": {"id": "T-1", "title": "Printer jam", "status": "open"},
            "T-2": {"id": "T-2", "title": "VPN down", "status": "closed"},
        },
        "ticket_queue": [
            {"id": 1, "title": "Broken chair", "state": "new"},
            {"id": 2, "title": "Old monitor", "state": "new"},
        ],
        "user_map": {"Alice": "USR001", "Bob": "USR002"},
        "door_status": {"driver": "locked", "passenger": "locked"},
        "counter": 3,
        "notes": ["a", "b"],
        "events": [{"what": "x"}, {"what": "x"}],
    }
    found = {c.attribute: c for c in find_collections([state])}
    assert set(found) == {"tickets", "ticket_queue", "user_map"}
    assert found["tickets"].shape == "keyed" and found["tickets"].id_field == "id"
    assert found["tickets"].lookup_field == "title"
    assert found["tickets"].status_field == "status"
    assert found["ticket_queue"].shape == "list" and found["ticket_queue"].id_field == "id"
    assert found["ticket_queue"].status_field == "state"
    assert found["user_map"].shape == "index" and found["user_map"].label == "user"
    assert found["tickets"].ids_in(state) == ["T-1", "T-2"]
    assert found["ticket_queue"].ids_in(state) == [1, 2]
    assert found["user_map"].ids_in(state) == ["USR001", "USR002"]
    assert found["user_map"].records_in(state)[0] == {"name": "Alice", "id": "USR001"}
