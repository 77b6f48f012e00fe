"""Order-lifecycle archetype: orders move pending → paid → shipped → delivered, stock follows.

Optional features (per topic): refunds (a delivered order is refunded; the goods stay with
the customer, so no stock comes back), return requests (once per delivered order), a cap on
one order's quantity, a quota of open orders per customer, delivery options (chosen when
ordering, changeable until the order ships), shipments (one carrier booking per paid order),
price changes by staff (totals stay as placed), restocks, and order reports (a search with
filters and an aggregate over order totals).
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.features import choose_features
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, label, noun
from synthesis.environments.archetypes.parts import (
    a,
    adjust,
    aggregate_tool,
    eq_filter,
    find_tool,
    id_param,
    person_entity,
    range_filters,
    search_tool,
    shaping_params,
)
from synthesis.environments.archetypes.toolkit import (
    list_tool,
    once,
    ref,
    update_tool,
    value,
    words,
)
from synthesis.environments.topics import vocabulary_items
from synthesis.environments.values import lookup_generator
from synthesis.models import (
    Effect,
    EntitySpec,
    EnvSpec,
    FieldSpec,
    ParamSpec,
    Precondition,
    ToolSpec,
    Topic,
)

ORDER_STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"]
FEATURES = (
    "refunds",
    "returns",
    "order_cap",
    "quota",
    "delivery_options",
    "shipments",
    "price_changes",
    "restock",
    "reports",
)
# Generic vocabulary for the features; a topic may name its own under the same keys.
RETURN_REASONS = ["damaged", "wrong item", "not as described", "no longer needed"]
DELIVERY_OPTIONS = ["standard", "express", "collection"]
CARRIERS = ["national post", "express courier", "local courier"]
OPEN = ["pending", "paid"]  # orders that are placed but not yet on their way


@register_archetype("order_lifecycle")
def build_order_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
    cust, prod = noun(vocab, "customer"), noun(vocab, "product")
    products = vocabulary_items(topic, "products")
    categories = list(vocab["categories"])
    # Every product's price range: its own, or the topic's shared `price_range`.
    prices = {p.name: list(p.price or _shared_price_range(vocab)) for p in products}
    cust_px, prod_px, _, ret_px, shp_px, rcp_px = assign_prefixes(
        [cust.name, prod.name, "order", "return_request", "shipment", "receipt"]
    )
    statuses = list(ORDER_STATUSES)
    if "refunds" in features:
        statuses.append("refunded")

    customer = person_entity(cust, cust_px, FieldSpec(name="city", type="str", generator="city"))
    product = EntitySpec(
        name=prod.name,
        collection=prod.plural,
        id_prefix=prod_px,
        label=prod.label,
        lookup_field="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="item",
                values=[p.name for p in products],
                unique=True,
            ),
            FieldSpec(
                name="category",
                type="enum",
                values=categories,
                # A product without a category of its own gets a random one.
                generator=lookup_generator(
                    "name", {p.name: p.category for p in products if p.category}
                ),
            ),
            FieldSpec(
                name="price",
                type="float",
                generator=lookup_generator("name", prices, name="item_price"),
            ),
            FieldSpec(name="stock", type="int", generator="stock"),
        ],
    )
    order = EntitySpec(
        name="order",
        collection="orders",
        id_prefix="ORD",
        label="order",
        status_field="status",
        initial_status="pending",
        transitions={
            "pending": ["paid", "cancelled"],
            "paid": ["shipped", "cancelled"],
            "shipped": ["delivered"],
            **({"delivered": ["refunded"]} if "refunds" in features else {}),
        },
        fields=[
            FieldSpec(name=f"{cust.name}_id", type="ref", ref=cust.name),
            FieldSpec(name=f"{prod.name}_id", type="ref", ref=prod.name),
            FieldSpec(name="quantity", type="int", generator="quantity"),
            FieldSpec(name="total", type="float"),
            FieldSpec(name="status", type="enum", values=statuses),
        ],
    )
    delivery_options = [label(d) for d in vocab.get("delivery_options", DELIVERY_OPTIONS)]
    if "delivery_options" in features:
        order.fields.append(FieldSpec(name="delivery", type="enum", values=delivery_options))

    order_id = ParamSpec(
        name="order_id", type="string", ref="order", description="Id of the order."
    )

    def transition(verb: str, target: str, sources: list[str], doc: str, effects=()) -> ToolSpec:
        return ToolSpec(
            name=f"{verb}_order",
            kind="mutate",
            operation="transition",
            entity="order",
            target_status=target,
            description=doc,
            params=[order_id],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=sources,
                    error=f"only a {' or '.join(sources)} order can be {target}",
                )
            ],
            effects=list(effects),
        )

    create_params = [
        id_param(customer, field=f"{cust.name}_id"),
        id_param(product, field=f"{prod.name}_id"),
        ParamSpec(
            name="quantity",
            type="integer",
            field="quantity",
            minimum=1,
            description="How many units.",
        ),
    ]
    create_guards = [
        Precondition(kind="param_positive", param="quantity", error="quantity must be at least 1"),
        Precondition(
            kind="ref_field_gte_param",
            param=f"{prod.name}_id",
            field="stock",
            other="quantity",
            error="not enough stock",
        ),
    ]
    cap = int(vocab.get("order_cap", 5))
    if "order_cap" in features:
        create_guards.append(
            Precondition(
                kind="param_at_most",
                param="quantity",
                value=cap,
                error=f"a single order may not exceed {cap} units",
            )
        )
    quota = int(vocab.get("order_quota", 3))
    if "quota" in features:
        create_guards.append(
            Precondition(
                kind="count_below",
                param=f"{cust.name}_id",
                value=quota,
                values=OPEN,
                error=f"{a(cust.label)} may have at most {quota} pending or paid orders",
            )
        )
    if "delivery_options" in features:
        create_params.append(
            value(
                "delivery", "string", "How the order reaches the customer.", enum=delivery_options
            )
        )

    tools = [
        find_tool(customer, f"Find a {cust.label} by email address.", "Email address."),
        find_tool(product, f"Find a {prod.label} by its exact name.", f"The {prod.label} name."),
        ToolSpec(
            name=f"list_{prod.plural}",
            kind="query",
            operation="list",
            entity=prod.name,
            description=f"List {prod.plural_label}, optionally in one category.",
            params=[
                ParamSpec(
                    name="category",
                    type="string",
                    field="category",
                    required=False,
                    enum=categories,
                    description="Only this category.",
                )
            ],
        ),
        ToolSpec(
            name="list_orders",
            kind="query",
            operation="list",
            entity="order",
            description=f"List the orders of a {cust.label}, optionally with one status.",
            params=[
                id_param(customer, field=f"{cust.name}_id"),
                ParamSpec(
                    name="status",
                    type="string",
                    field="status",
                    required=False,
                    enum=statuses,
                    description="Only orders with this status.",
                ),
            ],
        ),
        ToolSpec(
            name="get_order",
            kind="query",
            operation="get",
            entity="order",
            description="Get one order by id.",
            params=[order_id],
        ),
        ToolSpec(
            name="create_order",
            kind="mutate",
            operation="create",
            entity="order",
            description=f"Place a pending order of a {prod.label} for a {cust.label}; "
            "reserves stock.",
            params=create_params,
            preconditions=create_guards,
            effects=[
                Effect(
                    kind="adjust_ref_field",
                    via=f"{prod.name}_id",
                    field="stock",
                    by_field="quantity",
                    sign=-1,
                )
            ],
            derived={"total": [f"{prod.name}_id", "price", "quantity"]},
        ),
        transition("pay", "paid", ["pending"], "Record payment for a pending order."),
        transition("ship", "shipped", ["paid"], "Ship a paid order."),
        transition("deliver", "delivered", ["shipped"], "Confirm delivery of a shipped order."),
        transition(
            "cancel",
            "cancelled",
            ["pending", "paid"],
            "Cancel a pending or paid order; its stock is returned.",
            effects=[
                Effect(
                    kind="adjust_ref_field",
                    via=f"{prod.name}_id",
                    field="stock",
                    by_field="quantity",
                    sign=1,
                )
            ],
        ),
    ]
    rules = [
        "An order can only be placed when the stock covers the quantity; "
        "placing it reserves the stock.",
        "Orders move pending -> paid -> shipped -> delivered; "
        "pending or paid orders can be cancelled.",
        "Cancelling an order returns its quantity to stock.",
        "An order's total is the unit price times the quantity at the time it was placed.",
    ]
    entities = [customer, product, order]
    if "order_cap" in features:
        rules.append(f"A single order may not exceed {cap} units.")
    if "quota" in features:
        rules.append(
            f"{a(cust.label).capitalize()} may have at most {quota} pending or paid orders "
            "at a time."
        )
    if "delivery_options" in features:
        rules.append(
            f"Every order has a delivery option ({words(delivery_options)}), chosen when it is "
            "placed; it can be changed while the order is pending or paid."
        )
        tools.append(
            update_tool(
                "change_order_delivery",
                order,
                value("delivery", "string", "The new delivery option.", enum=delivery_options),
                "Change the delivery option of a pending or paid order.",
                guards=[_open_guard("given a new delivery option")],
            )
        )
    if "refunds" in features:
        rules.append(
            "A delivered order can be refunded; the goods stay with the "
            f"{cust.label}, so refunding returns no stock."
        )
        tools.append(
            transition(
                "refund", "refunded", ["delivered"], "Refund a delivered order (no stock returns)."
            )
        )
    if "returns" in features:
        reasons = [label(r) for r in vocab.get("return_reasons", RETURN_REASONS)]
        return_request = EntitySpec(
            name="return_request",
            collection="return_requests",
            id_prefix=ret_px,
            label="return request",
            fields=[
                FieldSpec(name="order_id", type="ref", ref="order"),
                FieldSpec(name="reason", type="enum", values=reasons),
            ],
        )
        entities.append(return_request)
        rules.append("A return can be requested only for a delivered order, once per order.")
        tools += [
            ToolSpec(
                name="request_return",
                kind="mutate",
                operation="create",
                entity="return_request",
                description="Request the return of a delivered order (once per order).",
                params=[
                    ref(order),
                    value("reason", "string", "Why it is returned.", enum=reasons),
                ],
                preconditions=[
                    Precondition(
                        kind="ref_field_in",
                        param="order_id",
                        field="status",
                        values=["delivered"],
                        error="only a delivered order can be returned",
                    ),
                    once(["order_id"], "a return is already requested for this order"),
                ],
            ),
            list_tool(
                "list_return_requests",
                return_request,
                "List return requests, optionally only those with one reason.",
                value("reason", "string", "Only this reason.", enum=reasons, required=False),
            ),
        ]
    if "shipments" in features:
        carriers = [label(c) for c in vocab.get("carriers", CARRIERS)]
        shipment = EntitySpec(
            name="shipment",
            collection="shipments",
            id_prefix=shp_px,
            label="shipment",
            fields=[
                FieldSpec(name="order_id", type="ref", ref="order"),
                FieldSpec(name="carrier", type="enum", values=carriers),
                FieldSpec(name="parcels", type="int", generator="int:1:3"),
            ],
        )
        entities.append(shipment)
        rules.append(
            "A shipment (a carrier booking of one or more parcels) can be made only for a "
            "paid order, once per order."
        )
        tools += [
            ToolSpec(
                name="book_shipment",
                kind="mutate",
                operation="create",
                entity="shipment",
                description="Book a carrier for a paid order (one shipment per order).",
                params=[
                    ref(order),
                    value("carrier", "string", "The carrier.", enum=carriers),
                    value("parcels", "integer", "How many parcels.", minimum=1),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="parcels", error="parcels must be at least 1"
                    ),
                    Precondition(
                        kind="ref_field_in",
                        param="order_id",
                        field="status",
                        values=["paid"],
                        error="only a paid order can get a shipment",
                    ),
                    once(["order_id"], "this order already has a shipment"),
                ],
            ),
            list_tool(
                "list_order_shipments",
                shipment,
                "List the shipments booked for an order.",
                ParamSpec(
                    name="order_id",
                    type="string",
                    ref="order",
                    field="order_id",
                    description="Id of the order.",
                ),
            ),
        ]
    if "price_changes" in features:
        rules.append(
            f"Staff may change a {prod.label}'s price; orders already placed keep their total."
        )
        tools.append(
            update_tool(
                f"change_{prod.name}_price",
                product,
                ParamSpec(
                    name="price",
                    type="number",
                    field="price",
                    minimum=0.01,
                    description="The new unit price.",
                ),
                f"Change the unit price of a {prod.label}; placed orders keep their total.",
                guards=[
                    Precondition(
                        kind="param_positive", param="price", error="a price must be positive"
                    )
                ],
            )
        )
    if "restock" in features:
        receipt = EntitySpec(
            name="receipt",
            collection="receipts",
            id_prefix=rcp_px,
            label="stock receipt",
            fields=[
                FieldSpec(name=f"{prod.name}_id", type="ref", ref=prod.name),
                FieldSpec(name="quantity", type="int", generator="quantity"),
            ],
        )
        entities.append(receipt)
        rules.append(f"A restock adds its units to the {prod.label}'s stock at once.")
        tools += [
            ToolSpec(
                name=f"restock_{prod.name}",
                kind="mutate",
                operation="create",
                entity="receipt",
                description=f"Record units of a {prod.label} arriving; they are in stock at once.",
                params=[
                    id_param(product, field=f"{prod.name}_id"),
                    ParamSpec(
                        name="quantity",
                        type="integer",
                        field="quantity",
                        minimum=1,
                        description="How many units arrived.",
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="quantity", error="quantity must be at least 1"
                    )
                ],
                effects=[adjust(f"{prod.name}_id", "stock", "quantity", 1)],
            ),
            list_tool(
                f"list_{prod.name}_receipts",
                receipt,
                f"List the stock receipts of a {prod.label}.",
                id_param(product, field=f"{prod.name}_id"),
            ),
        ]
    if "reports" in features:
        order_filters = [
            eq_filter(
                f"{cust.name}_id",
                f"{cust.name}_id",
                f"Only orders of this {cust.label}.",
                ref=cust.name,
            ),
            eq_filter(
                f"{prod.name}_id",
                f"{prod.name}_id",
                f"Only orders of this {prod.label}.",
                ref=prod.name,
            ),
            eq_filter("status", "status", "Only orders with this status.", enum=statuses),
        ]
        tools += [
            search_tool(
                "search_orders",
                order,
                f"Search orders by {cust.label}, {prod.label}, status and total; sort and limit.",
                [*order_filters, *range_filters("total", "total")],
                shaping_params(["total", "quantity"], limit=True),
            ),
            aggregate_tool(
                "summarize_order_totals",
                order,
                "Count, total, lowest, highest or average order total over the orders that "
                "match the filters.",
                "total",
                order_filters,
                functions=["count", "sum", "min", "max", "average"],
            ),
        ]
    return EnvSpec(
        env_id=f"{topic.topic_id}-order_lifecycle",
        topic_id=topic.topic_id,
        archetype="order_lifecycle",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )


def _open_guard(done: str) -> Precondition:
    return Precondition(
        kind="status_in", values=OPEN, error=f"only a pending or paid order can be {done}"
    )


def _shared_price_range(vocab: dict) -> tuple[float, float]:
    """The topic-wide `price_range` for products that name no price (KeyError if absent)."""
    low, high = vocab["price_range"]
    return (low, high)
