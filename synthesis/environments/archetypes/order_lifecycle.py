"""Order-lifecycle archetype: orders move pending → paid → shipped → delivered, stock follows.

Optional features (per topic): refunds (a delivered order is refunded; the goods stay with
the customer, so no stock comes back), return requests (once per delivered order), a cap on
one order's quantity, a quota of open orders per customer, delivery options (chosen when
ordering, changeable until the order ships), shipments (one carrier booking per paid order),
price changes by staff (totals stay as placed), restocks, and order reports (a search with
filters and an aggregate over order totals).
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, label, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    adjust,
    aggregate_tool,
    amount,
    at_most,
    choice,
    count_below,
    covers,
    create_tool,
    entity,
    enum_field,
    eq_filter,
    find_by_email,
    find_tool,
    get_tool,
    list_tool,
    noun_entity,
    once,
    person_entity,
    positive,
    range_filters,
    ref,
    ref_field,
    ref_filter,
    ref_in,
    search_tool,
    shaping_params,
    status_filter,
    status_in,
    transition_tool,
    update_tool,
    value,
    words,
)
from synthesis.environments.topics import vocabulary_items
from synthesis.environments.values import lookup_generator
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Topic

ORDER_STATUSES = ["pending", "paid", "shipped", "delivered", "cancelled"]
FEATURES = ("refunds", "returns", "order_cap", "quota", "delivery_options", "shipments",
            "price_changes", "restock", "reports")  # fmt: skip
optional = FeatureSet("order_lifecycle", FEATURES, at_least=3)
# Generic vocabulary for the features; a topic may name its own under the same keys.
RETURN_REASONS = ["damaged", "wrong item", "not as described", "no longer needed"]
DELIVERY_OPTIONS = ["standard", "express", "collection"]
CARRIERS = ["national post", "express courier", "local courier"]
OPEN = ["pending", "paid"]  # orders that are placed but not yet on their way


class Orders(SpecDraft):
    """An order spec being built: the topic's words, then the records `core` makes."""

    customer: EntitySpec
    product: EntitySpec
    order: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
        self.cust, self.prod = noun(self.vocab, "customer"), noun(self.vocab, "product")
        self.px = assign_prefixes(
            [self.cust.name, self.prod.name, "order", "return_request", "shipment", "receipt"]
        )
        self.prod_ref = f"{self.prod.name}_id"


def stock(d: Orders, sign: int) -> list:
    """The ordered product's stock moves by the order's quantity."""
    return [adjust(d.prod_ref, "stock", "quantity", sign)]


def core(d: Orders) -> None:
    cust, prod = d.cust, d.prod
    products = vocabulary_items(d.topic, "products")
    categories = list(d.vocab["categories"])
    # Every product's price range: its own, or the topic's shared `price_range`.
    prices = {p.name: list(p.price or _shared_price_range(d.vocab)) for p in products}
    city = FieldSpec(name="city", type="str", generator="city")
    d.customer = person_entity(cust, d.px[0], city)
    d.product = noun_entity(
        prod,
        d.px[1],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="item",
                values=[p.name for p in products],
                unique=True,
            ),
            # A product without a category of its own gets a random one.
            FieldSpec(
                name="category",
                type="enum",
                values=categories,
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
    d.order = entity(
        "order",
        "order",
        "ORD",
        [
            ref_field(cust.name),
            ref_field(prod.name),
            FieldSpec(name="quantity", type="int", generator="quantity"),
            FieldSpec(name="total", type="float"),
        ],
        statuses=ORDER_STATUSES,
        transitions={
            "pending": ["paid", "cancelled"],
            "paid": ["shipped", "cancelled"],
            "shipped": ["delivered"],
        },
    )
    d.entities += [d.customer, d.product, d.order]
    order = d.order
    d.tools += [
        find_by_email(d.customer, f"Find a {cust.label} by email address."),
        find_tool(d.product, f"Find a {prod.label} by its exact name.", f"The {prod.label} name."),
        list_tool(
            f"list_{prod.plural}",
            d.product,
            f"List {prod.plural_label}, optionally in one category.",
            choice("category", "Only this category.", categories, required=False),
        ),
        list_tool(
            "list_orders",
            order,
            f"List the orders of a {cust.label}, optionally with one status.",
            ref(d.customer),
            status_filter(ORDER_STATUSES, "orders"),
        ),
        get_tool(order),
        create_tool(
            "create_order",
            order,
            f"Place a pending order of a {prod.label} for a {cust.label}; reserves stock.",
            [ref(d.customer), ref(d.product), amount("quantity", "How many units.", integer=True)],
            guards=[
                positive("quantity", "quantity must be at least 1"),
                covers(d.prod_ref, "stock", "quantity", "not enough stock"),
            ],
            effects=stock(d, -1),
            derived={"total": [d.prod_ref, "price", "quantity"]},
        ),
        transition_tool("pay", order, "paid", ["pending"], "Record payment for a pending order."),
        transition_tool("ship", order, "shipped", ["paid"], "Ship a paid order."),
        transition_tool(
            "deliver", order, "delivered", ["shipped"], "Confirm delivery of a shipped order."
        ),
        transition_tool(
            "cancel",
            order,
            "cancelled",
            OPEN,
            "Cancel a pending or paid order; its stock is returned.",
            effects=stock(d, 1),
        ),
    ]
    d.rules += [
        "An order can only be placed when the stock covers the quantity; placing it reserves the "
        "stock.",
        "Orders move pending -> paid -> shipped -> delivered; pending or paid orders can be "
        "cancelled.",
        "Cancelling an order returns its quantity to stock.",
        "An order's total is the unit price times the quantity at the time it was placed.",
    ]


@optional.feature
def order_cap(d: Orders) -> None:
    """No single order above a fixed quantity."""
    cap = int(d.vocab.get("order_cap", 5))
    d.guard(
        "create_order",
        at_most("quantity", cap, f"a single order may not exceed {cap} units"),
        rule=f"A single order may not exceed {cap} units.",
    )


@optional.feature
def quota(d: Orders) -> None:
    """At most a few pending or paid orders per customer."""
    limit, who = int(d.vocab.get("order_quota", 3)), a(d.cust.label)
    guard = count_below(
        f"{d.cust.name}_id", limit, OPEN, f"{who} may have at most {limit} pending or paid orders"
    )
    d.guard(
        "create_order",
        guard,
        rule=f"{who.capitalize()} may have at most {limit} pending or paid orders at a time.",
    )


@optional.feature
def delivery_options(d: Orders) -> None:
    """A delivery option chosen when ordering, changeable until the order ships."""
    options = [label(o) for o in d.vocab.get("delivery_options", DELIVERY_OPTIONS)]
    d.add_field(
        d.order,
        enum_field("delivery", options),
        create="create_order",
        arg=choice("delivery", "How the order reaches the customer.", options),
    )
    d.rules.append(
        f"Every order has a delivery option ({words(options)}), chosen when it is placed; "
        "it can be changed while the order is pending or paid."
    )
    d.tools.append(
        update_tool(
            "change_order_delivery",
            d.order,
            choice("delivery", "The new delivery option.", options),
            "Change the delivery option of a pending or paid order.",
            guards=[
                status_in(OPEN, "only a pending or paid order can be given a new delivery option")
            ],
        )
    )


@optional.feature
def refunds(d: Orders) -> None:
    """A delivered order is refunded; the goods stay with the customer, so no stock returns."""
    d.add_status(d.order, "refunded", after=["delivered"])
    d.rules.append(
        f"A delivered order can be refunded; the goods stay with the {d.cust.label}, "
        "so refunding returns no stock."
    )
    d.tools.append(
        transition_tool(
            "refund",
            d.order,
            "refunded",
            ["delivered"],
            "Refund a delivered order (no stock returns).",
        )
    )


@optional.feature
def returns(d: Orders) -> None:
    """A return is requested for a delivered order, once."""
    reasons = [label(r) for r in d.vocab.get("return_reasons", RETURN_REASONS)]
    request = entity(
        "return_request",
        "return request",
        d.px[3],
        [ref_field("order"), enum_field("reason", reasons)],
    )
    d.entities.append(request)
    d.rules.append("A return can be requested only for a delivered order, once per order.")
    d.tools += [
        create_tool(
            "request_return",
            request,
            "Request the return of a delivered order (once per order).",
            [ref(d.order), choice("reason", "Why it is returned.", reasons)],
            guards=[
                ref_in(
                    "order_id", "status", ["delivered"], "only a delivered order can be returned"
                ),
                once(["order_id"], "a return is already requested for this order"),
            ],
        ),
        list_tool(
            "list_return_requests",
            request,
            "List return requests, optionally only those with one reason.",
            choice("reason", "Only this reason.", reasons, required=False),
        ),
    ]


@optional.feature
def shipments(d: Orders) -> None:
    """A carrier is booked (one or more parcels) for a paid order, once."""
    carriers = [label(c) for c in d.vocab.get("carriers", CARRIERS)]
    shipment = entity(
        "shipment",
        "shipment",
        d.px[4],
        [
            ref_field("order"),
            enum_field("carrier", carriers),
            FieldSpec(name="parcels", type="int", generator="int:1:3"),
        ],
    )
    d.entities.append(shipment)
    d.rules.append(
        "A shipment (a carrier booking of one or more parcels) can be made only for a paid order, "
        "once per order."
    )
    d.tools += [
        create_tool(
            "book_shipment",
            shipment,
            "Book a carrier for a paid order (one shipment per order).",
            [
                ref(d.order),
                choice("carrier", "The carrier.", carriers),
                value("parcels", "integer", "How many parcels.", minimum=1),
            ],
            guards=[
                positive("parcels", "parcels must be at least 1"),
                ref_in("order_id", "status", ["paid"], "only a paid order can get a shipment"),
                once(["order_id"], "this order already has a shipment"),
            ],
        ),
        list_tool(
            "list_order_shipments",
            shipment,
            "List the shipments booked for an order.",
            ref(d.order),
        ),
    ]


@optional.feature
def price_changes(d: Orders) -> None:
    """Staff change a product's price; placed orders keep their total."""
    prod = d.prod
    d.rules.append(
        f"Staff may change a {prod.label}'s price; orders already placed keep their total."
    )
    d.tools.append(
        update_tool(
            f"change_{prod.name}_price",
            d.product,
            amount("price", "The new unit price."),
            f"Change the unit price of a {prod.label}; placed orders keep their total.",
            guards=[positive("price", "a price must be positive")],
        )
    )


@optional.feature
def restock(d: Orders) -> None:
    """Units of a product arrive and are in stock at once."""
    prod = d.prod
    receipt = entity(
        "receipt",
        "stock receipt",
        d.px[5],
        [
            ref_field(prod.name),
            FieldSpec(name="quantity", type="int", generator="quantity"),
        ],
    )
    d.entities.append(receipt)
    d.rules.append(f"A restock adds its units to the {prod.label}'s stock at once.")
    d.tools += [
        create_tool(
            f"restock_{prod.name}",
            receipt,
            f"Record units of a {prod.label} arriving; they are in stock at once.",
            [ref(d.product), amount("quantity", "How many units arrived.", integer=True)],
            guards=[positive("quantity", "quantity must be at least 1")],
            effects=stock(d, 1),
        ),
        list_tool(
            f"list_{prod.name}_receipts",
            receipt,
            f"List the stock receipts of a {prod.label}.",
            ref(d.product),
        ),
    ]


@optional.feature
def reports(d: Orders) -> None:
    """Orders searched by customer, product, status and total, and their totals aggregated."""
    cust, prod = d.cust, d.prod
    filters = [
        ref_filter(cust.name, f"Only orders of this {cust.label}."),
        ref_filter(prod.name, f"Only orders of this {prod.label}."),
        eq_filter("status", "Only orders with this status.", enum=d.order.field("status").values),
    ]
    d.tools += [
        search_tool(
            "search_orders",
            d.order,
            f"Search orders by {cust.label}, {prod.label}, status and total; sort and limit.",
            [*filters, *range_filters("total", "total")],
            shaping_params(["total", "quantity"], limit=True),
        ),
        aggregate_tool(
            "summarize_order_totals",
            d.order,
            "Count, total, lowest, highest or average order total over the orders that match the "
            "filters.",
            "total",
            filters,
            functions=["count", "sum", "min", "max", "average"],
        ),
    ]


@register_archetype("order_lifecycle")
def build_order_spec(topic: Topic) -> EnvSpec:
    d = Orders(topic)
    core(d)
    optional.apply(d)
    return d.spec()


def _shared_price_range(vocab: dict) -> tuple[float, float]:
    """The topic-wide `price_range` for products that name no price (KeyError if absent)."""
    low, high = vocab["price_range"]
    return (low, high)
