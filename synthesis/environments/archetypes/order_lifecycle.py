"""Order-lifecycle archetype: orders move pending → paid → shipped → delivered, stock follows."""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, noun
from synthesis.environments.archetypes.parts import find_tool, id_param, person_entity
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


@register_archetype("order_lifecycle")
def build_order_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
    cust, prod = noun(vocab, "customer"), noun(vocab, "product")
    products = vocabulary_items(topic, "products")
    categories = list(vocab["categories"])
    # Every product's price range: its own, or the topic's shared `price_range`.
    prices = {p.name: list(p.price or _shared_price_range(vocab)) for p in products}
    cust_px, prod_px, _ = assign_prefixes([cust.name, prod.name, "order"])

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
        },
        fields=[
            FieldSpec(name=f"{cust.name}_id", type="ref", ref=cust.name),
            FieldSpec(name=f"{prod.name}_id", type="ref", ref=prod.name),
            FieldSpec(name="quantity", type="int", generator="quantity"),
            FieldSpec(name="total", type="float"),
            FieldSpec(name="status", type="enum", values=ORDER_STATUSES),
        ],
    )

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
                    enum=ORDER_STATUSES,
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
            params=[
                id_param(customer, field=f"{cust.name}_id"),
                id_param(product, field=f"{prod.name}_id"),
                ParamSpec(
                    name="quantity",
                    type="integer",
                    field="quantity",
                    minimum=1,
                    description="How many units.",
                ),
            ],
            preconditions=[
                Precondition(
                    kind="param_positive", param="quantity", error="quantity must be at least 1"
                ),
                Precondition(
                    kind="ref_field_gte_param",
                    param=f"{prod.name}_id",
                    field="stock",
                    other="quantity",
                    error="not enough stock",
                ),
            ],
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
    return EnvSpec(
        env_id=f"{topic.topic_id}-order_lifecycle",
        topic_id=topic.topic_id,
        archetype="order_lifecycle",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=[customer, product, order],
        tools=tools,
        rules=[
            "An order can only be placed when the stock covers the quantity; "
            "placing it reserves the stock.",
            "Orders move pending -> paid -> shipped -> delivered; "
            "pending or paid orders can be cancelled.",
            "Cancelling an order returns its quantity to stock.",
            "An order's total is the unit price times the quantity at the time it was placed.",
        ],
    )


def _shared_price_range(vocab: dict) -> tuple[float, float]:
    """The topic-wide `price_range` for products that name no price (KeyError if absent)."""
    low, high = vocab["price_range"]
    return (low, high)
