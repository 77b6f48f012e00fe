"""Inventory archetype: stock of items per location; reservations hold stock back.

A stock record counts what is available and what is reserved for one item at one location.
Reserving takes from available (never below zero) and adds to reserved; releasing gives it
back, fulfilling ships it. Optional features, chosen per topic, change the program's shape:
direct restocks or purchase orders (with suppliers), storage capacity, write-offs, cycle
counts, reorder points, a cap on one reservation, a quota of open reservations per requester.
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    adjust,
    aggregate_tool,
    amount,
    at_most,
    choice,
    contains_filter,
    count_below,
    covers,
    create_tool,
    entity,
    enum_field,
    eq_filter,
    find_by_email,
    find_by_name,
    find_tool,
    get_tool,
    linked_covers,
    list_by_tool,
    noun_entity,
    param,
    person_entity,
    positive,
    range_filters,
    ref,
    ref_field,
    ref_filter,
    search_tool,
    shaping_params,
    transition_tool,
    update_tool,
    value,
)
from synthesis.models import Effect, EntitySpec, EnvSpec, FieldSpec, Precondition, Topic

FEATURES = [
    "purchase_orders",  # stock arrives through purchase orders (ordered -> received/cancelled)
    "suppliers",  # purchase orders name a supplier (only with purchase_orders)
    "capacity",  # every stock record has free space a restock may not exceed
    "writeoffs",  # damaged or lost units are written off available stock
    "cycle_counts",  # a count corrects the available quantity
    "reorder_points",  # each stock record has a reorder point, which can be changed
    "reservation_cap",  # no single reservation above a fixed quantity
    "quota",  # at most a few open reservations per requester
]
optional = FeatureSet(
    "inventory",
    FEATURES,
    at_least=3,
    draw="coin_flips",
    requires={"suppliers": "purchase_orders"},
)
RESERVATION_STATUSES = ["held", "released", "fulfilled"]
ORDER_STATUSES = ["ordered", "received", "cancelled"]


class Inventory(SpecDraft):
    """An inventory spec being built: the topic's words, then the records `core` makes."""

    item: EntitySpec
    location: EntitySpec
    requester: EntitySpec
    stock: EntitySpec
    reservation: EntitySpec
    supplier: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        vocab = self.vocab
        self.item_n, self.loc_n = noun(vocab, "item"), noun(vocab, "location")
        self.req_n = noun(vocab, "requester")
        self.catalogue: list[list] = vocab["items"]  # [name, category, unit cost]
        names = ["item", "location", "requester", "stock", "reservation", "receipt", "order",
                 "supplier", "writeoff"]  # fmt: skip
        prefixes = assign_prefixes([self.item_n.name, self.loc_n.name, self.req_n.name, *names[3:]])
        self.px = dict(zip(names, prefixes, strict=True))
        self.quantity = amount("quantity", "How many units.", integer=True)
        self.positive = positive("quantity", "quantity must be at least 1")
        self.covered = covers("stock_id", "available", "quantity", "not enough available stock")
        # Units leaving a stock level free its space, where stock levels have a capacity.
        self.space_freed: list[Effect] = []


def units(field: str, sign: int) -> Effect:
    """The stock level's `field` moves by the record's quantity."""
    return adjust("stock_id", field, "quantity", sign)


def core(d: Inventory) -> None:
    item_n, loc_n, req_n = d.item_n, d.loc_n, d.req_n
    rows = d.catalogue
    categories = sorted({str(row[1]) for row in rows})
    d.item = noun_entity(
        item_n,
        d.px["item"],
        lookup="sku",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="choice",
                values=[str(r[0]) for r in rows],
                unique=True,
            ),
            FieldSpec(
                name="sku",
                type="str",
                generator=f"code:{d.vocab.get('sku_prefix', 'SKU')}:5",
                unique=True,
            ),
            FieldSpec(
                name="category",
                type="enum",
                values=categories,
                generator="by:name",
                mapping={str(r[0]): str(r[1]) for r in rows},
            ),
            FieldSpec(
                name="unit_cost",
                type="float",
                generator="by:name",
                mapping={str(r[0]): float(r[2]) for r in rows},
            ),
        ],
    )
    d.location = noun_entity(
        loc_n,
        d.px["location"],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="choice",
                values=list(d.vocab["locations"]),
                unique=True,
            ),
            enum_field("zone", d.vocab.get("zones", ["north", "south"])),
        ],
    )
    team = FieldSpec(name="team", type="str", generator="choice", values=list(d.vocab["teams"]))
    d.requester = person_entity(req_n, d.px["requester"], team)
    d.stock = entity(
        "stock",
        "stock level",
        d.px["stock"],
        collection="stock_levels",
        fields=[
            ref_field(item_n.name),
            ref_field(loc_n.name),
            FieldSpec(name="available", type="int", generator="int:0:40"),
            FieldSpec(name="reserved", type="int", generator="zero"),
        ],
    )
    d.reservation = entity(
        "reservation",
        "reservation",
        d.px["reservation"],
        [
            ref_field("stock"),
            ref_field(req_n.name),
            FieldSpec(name="quantity", type="int"),
        ],
        statuses=RESERVATION_STATUSES,
        transitions={"held": ["fulfilled", "released"]},
    )
    d.entities += [d.item, d.location, d.requester, d.stock, d.reservation]

    stock_filters = [
        ref_filter(item_n.name, f"Only stock of this {item_n.label}."),
        ref_filter(loc_n.name, f"Only stock at this {loc_n.label}."),
    ]
    req_ref = f"{req_n.name}_id"
    d.tools += [
        find_tool(d.item, f"Find {a(item_n.label)} by its SKU.", "The SKU code."),
        find_by_name(d.location, f"Find {a(loc_n.label)} by name."),
        find_by_email(d.requester, f"Find {a(req_n.label)} by email address."),
        search_tool(
            f"search_{item_n.plural}",
            d.item,
            f"Search {item_n.plural_label} by category, name or unit cost; sort and limit.",
            [
                eq_filter("category", "Only this category.", enum=categories),
                contains_filter("name", "name"),
                *range_filters("unit_cost", "unit cost"),
            ],
            shaping_params(["unit_cost", "name"], limit=True),
        ),
        get_tool(d.stock),
        list_by_tool(
            f"list_{item_n.name}_stock",
            d.stock,
            d.item,
            f"{item_n.name}_id",
            f"List the stock levels of {a(item_n.label)} at every {loc_n.label}.",
        ),
        list_by_tool(
            f"list_{loc_n.name}_stock",
            d.stock,
            d.location,
            f"{loc_n.name}_id",
            f"List the stock levels held at {a(loc_n.label)}.",
        ),
        search_tool(
            "search_stock",
            d.stock,
            "Search stock levels by item, location and available quantity; sort and limit.",
            [*stock_filters, *range_filters("available", "available quantity", integer=True)],
            shaping_params(["available", "reserved"], limit=True),
        ),
        aggregate_tool(
            "summarize_available_stock",
            d.stock,
            "Count, total, lowest, highest or average available quantity over the stock "
            "levels that match the filters.",
            "available",
            stock_filters,
            functions=["count", "sum", "min", "max", "average"],
        ),
        aggregate_tool(
            "total_reserved",
            d.stock,
            "The total quantity reserved over the stock levels that match the filters.",
            "reserved",
            stock_filters,
            fixed="sum",
        ),
        create_tool(
            "reserve_stock",
            d.reservation,
            f"Reserve units of a stock level for {a(req_n.label)}; they stop being available.",
            [ref(d.stock), ref(d.requester), d.quantity],
            guards=[d.positive, d.covered],
            effects=[units("available", -1), units("reserved", 1)],
        ),
        get_tool(d.reservation),
        list_by_tool(
            f"list_{req_n.name}_reservations",
            d.reservation,
            d.requester,
            req_ref,
            f"List the reservations of {a(req_n.label)}, optionally with one status.",
            status=RESERVATION_STATUSES,
        ),
        transition_tool(
            "release",
            d.reservation,
            "released",
            ["held"],
            "Release a held reservation: its units are available again.",
            effects=[units("available", 1), units("reserved", -1)],
        ),
        transition_tool(
            "fulfil",
            d.reservation,
            "fulfilled",
            ["held"],
            "Fulfil a held reservation: its units leave the stock.",
            effects=[units("reserved", -1)],
        ),
    ]
    d.rules += [
        "Available stock never goes below zero: a reservation needs the available quantity "
        "to cover it, and moves it from available to reserved.",
        "Releasing a held reservation makes its units available again; fulfilling it ships them.",
    ]


@optional.feature
def reservation_cap(d: Inventory) -> None:
    """No single reservation above a fixed quantity."""
    cap = int(d.vocab.get("reservation_cap", 10))
    d.guard(
        "reserve_stock",
        at_most("quantity", cap, f"a single reservation may not exceed {cap} units"),
        rule=f"A single reservation may not exceed {cap} units.",
    )


@optional.feature
def quota(d: Inventory) -> None:
    """At most a few open reservations per requester."""
    limit, who = int(d.vocab.get("quota", 3)), a(d.req_n.label)
    guard = count_below(
        f"{d.req_n.name}_id", limit, ["held"], f"{who} may hold at most {limit} open reservations"
    )
    d.guard(
        "reserve_stock",
        guard,
        rule=f"{who.capitalize()} may hold at most {limit} open reservations.",
    )


@optional.feature
def capacity(d: Inventory) -> None:
    """Every stock level has free space: arriving units may not exceed it, leaving ones free it."""
    d.stock.fields.append(FieldSpec(name="free_space", type="int", generator="int:0:30"))
    param(d.tool("search_stock"), "sort_by").enum.append("free_space")
    d.space_freed = [units("free_space", 1)]
    d.tool("fulfil_reservation").effects += d.space_freed
    d.rules.append("Arriving stock may not exceed the free space of its stock level.")


@optional.feature
def suppliers(d: Inventory) -> None:
    """Purchase orders name a supplier (found by name)."""
    d.supplier = entity(
        "supplier",
        "supplier",
        d.px["supplier"],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="choice",
                values=list(d.vocab["suppliers"]),
                unique=True,
            ),
            FieldSpec(name="lead_days", type="int", generator="int:2:21"),
        ],
    )
    d.entities.append(d.supplier)
    d.tools.append(find_by_name(d.supplier, "Find a supplier by name."))


def arrival(d: Inventory) -> tuple[list[Precondition], list[Effect]]:
    """Arriving units become available (taking free space, where stock levels have one)."""
    if not d.has("capacity"):
        return [d.positive], [units("available", 1)]
    space = covers(
        "stock_id", "free_space", "quantity", "not enough free space for that many units"
    )
    return [d.positive, space], [units("available", 1), units("free_space", -1)]


def restock(d: Inventory) -> None:
    """Without purchase orders, a restock adds its units to the available quantity at once."""
    guards, effects = arrival(d)
    receipt = entity(
        "receipt",
        "stock receipt",
        d.px["receipt"],
        [ref_field("stock"), FieldSpec(name="quantity", type="int")],
    )
    d.entities.append(receipt)
    d.rules.append("A restock adds its units to the available quantity at once.")
    d.tools += [
        create_tool(
            "restock",
            receipt,
            "Record units arriving for a stock level; they are available at once.",
            [ref(d.stock), d.quantity],
            guards=guards,
            effects=effects,
        ),
        list_by_tool(
            "list_receipts", receipt, d.stock, "stock_id", "List the receipts of a stock level."
        ),
    ]


@optional.feature(otherwise=restock)
def purchase_orders(d: Inventory) -> None:
    """Stock arrives through purchase orders: ordered, then received or cancelled."""
    fields, params = (
        [ref_field("stock"), FieldSpec(name="quantity", type="int")],
        [ref(d.stock), d.quantity],
    )
    if d.has("suppliers"):
        fields.insert(1, ref_field("supplier"))
        params.insert(1, ref(d.supplier))
    order = entity(
        "purchase_order",
        "purchase order",
        d.px["order"],
        fields,
        statuses=ORDER_STATUSES,
        transitions={"ordered": ["received", "cancelled"]},
    )
    d.entities.append(order)
    # Capacity is checked when the goods arrive, not when they are ordered.
    _, effects = arrival(d)
    room = linked_covers(
        "stock_id", "free_space", "quantity", "not enough free space to receive this order"
    )
    d.rules.append("Stock arrives when a purchase order is received; cancelled orders add none.")
    d.tools += [
        create_tool(
            "create_purchase_order",
            order,
            "Order more units for a stock level.",
            params,
            guards=[d.positive],
        ),
        transition_tool(
            "receive",
            order,
            "received",
            ["ordered"],
            "Receive an ordered purchase order: its units become available.",
            guards=[room] if d.has("capacity") else [],
            effects=effects,
        ),
        transition_tool(
            "cancel",
            order,
            "cancelled",
            ["ordered"],
            "Cancel a purchase order that has not arrived.",
        ),
        list_by_tool(
            "list_purchase_orders",
            order,
            d.stock,
            "stock_id",
            "List the purchase orders of a stock level, optionally with one status.",
            status=ORDER_STATUSES,
        ),
    ]


@optional.feature
def writeoffs(d: Inventory) -> None:
    """Damaged, expired or lost units are written off available stock."""
    reasons = list(d.vocab.get("writeoff_reasons", ["damaged", "expired", "lost"]))
    writeoff = entity(
        "writeoff",
        "write-off",
        d.px["writeoff"],
        [
            ref_field("stock"),
            FieldSpec(name="quantity", type="int"),
            enum_field("reason", reasons),
        ],
    )
    d.entities.append(writeoff)
    d.rules.append("Only available units can be written off.")
    d.tools.append(
        create_tool(
            "write_off_stock",
            writeoff,
            "Write off damaged, expired or lost units from available stock.",
            [ref(d.stock), d.quantity, choice("reason", "Why the units are written off.", reasons)],
            guards=[d.positive, d.covered],
            effects=[units("available", -1), *d.space_freed],
        )
    )


@optional.feature
def cycle_counts(d: Inventory) -> None:
    """A cycle count sets the available quantity to what was counted."""
    d.rules.append("A cycle count sets the available quantity to what was counted.")
    d.tools.append(
        update_tool(
            "record_cycle_count",
            d.stock,
            value("available", "integer", "The quantity counted on the shelf."),
            "Set the available quantity of a stock level to a counted figure.",
            guards=[at_most("available", 500, "a counted quantity above 500 needs a recount")],
        )
    )


@optional.feature
def reorder_points(d: Inventory) -> None:
    """Each stock level has a reorder point, which planners change."""
    d.stock.fields.append(FieldSpec(name="reorder_point", type="int", generator="steps:5:20:5"))
    d.rules.append("Each stock level has a reorder point, a multiple the planners set.")
    d.tools.append(
        update_tool(
            "set_reorder_point",
            d.stock,
            value("reorder_point", "integer", "Reorder when available stock falls to this."),
            "Change the reorder point of a stock level.",
            guards=[
                positive("reorder_point", "a reorder point must be at least 1"),
                at_most("reorder_point", 100, "a reorder point may not exceed 100"),
            ],
        )
    )


@register_archetype("inventory")
def build_inventory_spec(topic: Topic) -> EnvSpec:
    d = Inventory(topic)
    core(d)
    optional.apply(d)
    return d.spec()
