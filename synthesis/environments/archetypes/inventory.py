"""Inventory archetype: stock of items per location; reservations hold stock back.

A stock record counts what is available and what is reserved for one item at one location.
Reserving takes from available (never below zero) and adds to reserved; releasing gives it
back, fulfilling ships it. Optional features, chosen per topic, change the program's shape:
direct restocks or purchase orders (with suppliers), storage capacity, write-offs, cycle
counts, reorder points, a cap on one reservation, a quota of open reservations per requester.
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, noun
from synthesis.environments.archetypes.parts import (
    a,
    adjust,
    aggregate_tool,
    amount_param,
    contains_filter,
    eq_filter,
    find_tool,
    get_tool,
    id_param,
    list_by_tool,
    person_entity,
    pick_features,
    range_filters,
    search_tool,
    shaping_params,
    transition_tool,
)
from synthesis.models import (
    EntitySpec,
    EnvSpec,
    FieldSpec,
    ParamSpec,
    Precondition,
    ToolSpec,
    Topic,
)

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
RESERVATION_STATUSES = ["held", "released", "fulfilled"]


@register_archetype("inventory")
def build_inventory_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = pick_features(topic, "inventory", FEATURES, at_least=3)
    if "suppliers" in features and "purchase_orders" not in features:
        features.discard("suppliers")
    item_n, loc_n, req_n = noun(vocab, "item"), noun(vocab, "location"), noun(vocab, "requester")
    catalogue: list[list] = vocab["items"]  # [name, category, unit cost]
    categories = sorted({str(row[1]) for row in catalogue})
    names = ["item", "location", "requester", "stock", "reservation", "receipt", "order",
             "supplier", "writeoff"]  # fmt: skip
    px = dict(
        zip(
            names,
            assign_prefixes([item_n.name, loc_n.name, req_n.name, *names[3:]]),
            strict=True,
        )
    )

    item = EntitySpec(
        name=item_n.name,
        collection=item_n.plural,
        id_prefix=px["item"],
        label=item_n.label,
        lookup_field="sku",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="choice",
                values=[str(row[0]) for row in catalogue],
                unique=True,
            ),
            FieldSpec(
                name="sku",
                type="str",
                generator=f"code:{vocab.get('sku_prefix', 'SKU')}:5",
                unique=True,
            ),
            FieldSpec(
                name="category",
                type="enum",
                values=categories,
                generator="by:name",
                mapping={str(row[0]): str(row[1]) for row in catalogue},
            ),
            FieldSpec(
                name="unit_cost",
                type="float",
                generator="by:name",
                mapping={str(row[0]): float(row[2]) for row in catalogue},
            ),
        ],
    )
    location = EntitySpec(
        name=loc_n.name,
        collection=loc_n.plural,
        id_prefix=px["location"],
        label=loc_n.label,
        lookup_field="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                generator="choice",
                values=list(vocab["locations"]),
                unique=True,
            ),
            FieldSpec(
                name="zone", type="enum", values=list(vocab.get("zones", ["north", "south"]))
            ),
        ],
    )
    requester = person_entity(
        req_n,
        px["requester"],
        FieldSpec(name="team", type="str", generator="choice", values=list(vocab["teams"])),
    )
    item_ref, loc_ref, req_ref = f"{item_n.name}_id", f"{loc_n.name}_id", f"{req_n.name}_id"
    stock_fields = [
        FieldSpec(name=item_ref, type="ref", ref=item_n.name),
        FieldSpec(name=loc_ref, type="ref", ref=loc_n.name),
        FieldSpec(name="available", type="int", generator="int:0:40"),
        FieldSpec(name="reserved", type="int", generator="zero"),
    ]
    if "capacity" in features:
        stock_fields.append(FieldSpec(name="free_space", type="int", generator="int:0:30"))
    if "reorder_points" in features:
        stock_fields.append(FieldSpec(name="reorder_point", type="int", generator="steps:5:20:5"))
    stock = EntitySpec(
        name="stock",
        collection="stock_levels",
        id_prefix=px["stock"],
        label="stock level",
        fields=stock_fields,
    )
    reservation = EntitySpec(
        name="reservation",
        collection="reservations",
        id_prefix=px["reservation"],
        label="reservation",
        status_field="status",
        initial_status="held",
        transitions={"held": ["fulfilled", "released"]},
        fields=[
            FieldSpec(name="stock_id", type="ref", ref="stock"),
            FieldSpec(name=req_ref, type="ref", ref=req_n.name),
            FieldSpec(name="quantity", type="int"),
            FieldSpec(name="status", type="enum", values=RESERVATION_STATUSES),
        ],
    )
    entities = [item, location, requester, stock, reservation]

    stock_id = id_param(stock, field="stock_id")
    quantity = amount_param("quantity", "quantity", "How many units.", integer=True)
    positive = Precondition(
        kind="param_positive", param="quantity", error="quantity must be at least 1"
    )
    covers = Precondition(
        kind="ref_field_gte_param",
        param="stock_id",
        field="available",
        other="quantity",
        error="not enough available stock",
    )
    reserve_guards = [positive, covers]
    cap = int(vocab.get("reservation_cap", 10))
    if "reservation_cap" in features:
        reserve_guards.append(
            Precondition(
                kind="param_at_most",
                param="quantity",
                value=cap,
                error=f"a single reservation may not exceed {cap} units",
            )
        )
    quota = int(vocab.get("quota", 3))
    if "quota" in features:
        reserve_guards.append(
            Precondition(
                kind="count_below",
                param=req_ref,
                value=quota,
                values=["held"],
                error=f"{a(req_n.label)} may hold at most {quota} open reservations",
            )
        )
    space_effect = (
        [adjust("stock_id", "free_space", "quantity", 1)] if "capacity" in features else []
    )

    stock_filters = [
        eq_filter(item_ref, item_ref, f"Only stock of this {item_n.label}.", ref=item_n.name),
        eq_filter(loc_ref, loc_ref, f"Only stock at this {loc_n.label}.", ref=loc_n.name),
    ]
    tools: list[ToolSpec] = [
        find_tool(item, f"Find {a(item_n.label)} by its SKU.", "The SKU code."),
        find_tool(location, f"Find {a(loc_n.label)} by name.", f"The {loc_n.label}'s name."),
        find_tool(requester, f"Find {a(req_n.label)} by email address.", "Email address."),
        search_tool(
            f"search_{item_n.plural}",
            item,
            f"Search {item_n.plural_label} by category, name or unit cost; sort and limit.",
            [
                eq_filter("category", "category", "Only this category.", enum=categories),
                contains_filter("name", "name"),
                *range_filters("unit_cost", "unit cost"),
            ],
            shaping_params(["unit_cost", "name"], limit=True),
        ),
        get_tool(stock),
        list_by_tool(
            f"list_{item_n.name}_stock",
            stock,
            item,
            item_ref,
            f"List the stock levels of {a(item_n.label)} at every {loc_n.label}.",
        ),
        list_by_tool(
            f"list_{loc_n.name}_stock",
            stock,
            location,
            loc_ref,
            f"List the stock levels held at {a(loc_n.label)}.",
        ),
        search_tool(
            "search_stock",
            stock,
            "Search stock levels by item, location and available quantity; sort and limit.",
            [*stock_filters, *range_filters("available", "available quantity", integer=True)],
            shaping_params(
                ["available", "reserved"] + (["free_space"] if "capacity" in features else []),
                limit=True,
            ),
        ),
        aggregate_tool(
            "summarize_available_stock",
            stock,
            "Count, total, lowest, highest or average available quantity over the stock "
            "levels that match the filters.",
            "available",
            stock_filters,
            functions=["count", "sum", "min", "max", "average"],
        ),
        aggregate_tool(
            "total_reserved",
            stock,
            "The total quantity reserved over the stock levels that match the filters.",
            "reserved",
            stock_filters,
            fixed="sum",
        ),
        ToolSpec(
            name="reserve_stock",
            kind="mutate",
            operation="create",
            entity="reservation",
            description=f"Reserve units of a stock level for {a(req_n.label)}; "
            "they stop being available.",
            params=[stock_id, id_param(requester, field=req_ref), quantity],
            preconditions=reserve_guards,
            effects=[
                adjust("stock_id", "available", "quantity", -1),
                adjust("stock_id", "reserved", "quantity", 1),
            ],
        ),
        get_tool(reservation),
        list_by_tool(
            f"list_{req_n.name}_reservations",
            reservation,
            requester,
            req_ref,
            f"List the reservations of {a(req_n.label)}, optionally with one status.",
            status=RESERVATION_STATUSES,
        ),
        transition_tool(
            "release_reservation",
            reservation,
            "released",
            ["held"],
            "Release a held reservation: its units are available again.",
            effects=[
                adjust("stock_id", "available", "quantity", 1),
                adjust("stock_id", "reserved", "quantity", -1),
            ],
        ),
        transition_tool(
            "fulfil_reservation",
            reservation,
            "fulfilled",
            ["held"],
            "Fulfil a held reservation: its units leave the stock.",
            effects=[adjust("stock_id", "reserved", "quantity", -1), *space_effect],
        ),
    ]
    rules = [
        "Available stock never goes below zero: a reservation needs the available quantity "
        "to cover it, and moves it from available to reserved.",
        "Releasing a held reservation makes its units available again; fulfilling it ships them.",
    ]
    if "reservation_cap" in features:
        rules.append(f"A single reservation may not exceed {cap} units.")
    if "quota" in features:
        rules.append(f"{a(req_n.label).capitalize()} may hold at most {quota} open reservations.")

    arrival_guards = [positive]
    if "capacity" in features:
        rules.append("Arriving stock may not exceed the free space of its stock level.")
        arrival_guards.append(
            Precondition(
                kind="ref_field_gte_param",
                param="stock_id",
                field="free_space",
                other="quantity",
                error="not enough free space for that many units",
            )
        )
    arrival_effects = [adjust("stock_id", "available", "quantity", 1)]
    if "capacity" in features:
        arrival_effects.append(adjust("stock_id", "free_space", "quantity", -1))
    if "purchase_orders" in features:
        order_fields = [
            FieldSpec(name="stock_id", type="ref", ref="stock"),
            FieldSpec(name="quantity", type="int"),
            FieldSpec(name="status", type="enum", values=["ordered", "received", "cancelled"]),
        ]
        order_params = [stock_id, quantity]
        if "suppliers" in features:
            supplier = EntitySpec(
                name="supplier",
                collection="suppliers",
                id_prefix=px["supplier"],
                label="supplier",
                lookup_field="name",
                fields=[
                    FieldSpec(
                        name="name",
                        type="str",
                        generator="choice",
                        values=list(vocab["suppliers"]),
                        unique=True,
                    ),
                    FieldSpec(name="lead_days", type="int", generator="int:2:21"),
                ],
            )
            entities.append(supplier)
            order_fields.insert(1, FieldSpec(name="supplier_id", type="ref", ref="supplier"))
            order_params.insert(1, id_param(supplier, field="supplier_id"))
            tools.append(find_tool(supplier, "Find a supplier by name.", "The supplier's name."))
        order = EntitySpec(
            name="purchase_order",
            collection="purchase_orders",
            id_prefix=px["order"],
            label="purchase order",
            status_field="status",
            initial_status="ordered",
            transitions={"ordered": ["received", "cancelled"]},
            fields=order_fields,
        )
        entities.append(order)
        # Capacity is checked when the goods arrive, not when they are ordered.
        receive_guards = (
            [
                Precondition(
                    kind="linked_field_gte_field",
                    param="stock_id",
                    field="free_space",
                    other="quantity",
                    error="not enough free space to receive this order",
                )
            ]
            if "capacity" in features
            else []
        )
        rules.append("Stock arrives when a purchase order is received; cancelled orders add none.")
        tools += [
            ToolSpec(
                name="create_purchase_order",
                kind="mutate",
                operation="create",
                entity="purchase_order",
                description="Order more units for a stock level.",
                params=order_params,
                preconditions=[positive],
            ),
            transition_tool(
                "receive_purchase_order",
                order,
                "received",
                ["ordered"],
                "Receive an ordered purchase order: its units become available.",
                guards=receive_guards,
                effects=arrival_effects,
            ),
            transition_tool(
                "cancel_purchase_order",
                order,
                "cancelled",
                ["ordered"],
                "Cancel a purchase order that has not arrived.",
            ),
            list_by_tool(
                "list_purchase_orders",
                order,
                stock,
                "stock_id",
                "List the purchase orders of a stock level, optionally with one status.",
                status=["ordered", "received", "cancelled"],
            ),
        ]
    else:
        receipt = EntitySpec(
            name="receipt",
            collection="receipts",
            id_prefix=px["receipt"],
            label="stock receipt",
            fields=[
                FieldSpec(name="stock_id", type="ref", ref="stock"),
                FieldSpec(name="quantity", type="int"),
            ],
        )
        entities.append(receipt)
        rules.append("A restock adds its units to the available quantity at once.")
        tools += [
            ToolSpec(
                name="restock",
                kind="mutate",
                operation="create",
                entity="receipt",
                description="Record units arriving for a stock level; they are available at once.",
                params=[stock_id, quantity],
                preconditions=arrival_guards,
                effects=arrival_effects,
            ),
            list_by_tool(
                "list_receipts",
                receipt,
                stock,
                "stock_id",
                "List the receipts of a stock level.",
            ),
        ]
    if "writeoffs" in features:
        reasons = list(vocab.get("writeoff_reasons", ["damaged", "expired", "lost"]))
        writeoff = EntitySpec(
            name="writeoff",
            collection="writeoffs",
            id_prefix=px["writeoff"],
            label="write-off",
            fields=[
                FieldSpec(name="stock_id", type="ref", ref="stock"),
                FieldSpec(name="quantity", type="int"),
                FieldSpec(name="reason", type="enum", values=reasons),
            ],
        )
        entities.append(writeoff)
        rules.append("Only available units can be written off.")
        tools.append(
            ToolSpec(
                name="write_off_stock",
                kind="mutate",
                operation="create",
                entity="writeoff",
                description="Write off damaged, expired or lost units from available stock.",
                params=[
                    stock_id,
                    quantity,
                    ParamSpec(
                        name="reason",
                        type="string",
                        field="reason",
                        enum=reasons,
                        description="Why the units are written off.",
                    ),
                ],
                preconditions=[positive, covers],
                effects=[adjust("stock_id", "available", "quantity", -1), *space_effect],
            )
        )
    if "cycle_counts" in features:
        rules.append("A cycle count sets the available quantity to what was counted.")
        tools.append(
            ToolSpec(
                name="record_cycle_count",
                kind="mutate",
                operation="update",
                entity="stock",
                field="available",
                description="Set the available quantity of a stock level to a counted figure.",
                params=[
                    id_param(stock),
                    ParamSpec(
                        name="available",
                        type="integer",
                        field="available",
                        description="The quantity counted on the shelf.",
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_at_most",
                        param="available",
                        value=500,
                        error="a counted quantity above 500 needs a recount",
                    )
                ],
            )
        )
    if "reorder_points" in features:
        rules.append("Each stock level has a reorder point, a multiple the planners set.")
        tools.append(
            ToolSpec(
                name="set_reorder_point",
                kind="mutate",
                operation="update",
                entity="stock",
                field="reorder_point",
                description="Change the reorder point of a stock level.",
                params=[
                    id_param(stock),
                    ParamSpec(
                        name="reorder_point",
                        type="integer",
                        field="reorder_point",
                        description="Reorder when available stock falls to this.",
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive",
                        param="reorder_point",
                        error="a reorder point must be at least 1",
                    ),
                    Precondition(
                        kind="param_at_most",
                        param="reorder_point",
                        value=100,
                        error="a reorder point may not exceed 100",
                    ),
                ],
            )
        )
    return EnvSpec(
        env_id=f"{topic.topic_id}-inventory",
        topic_id=topic.topic_id,
        archetype="inventory",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
