"""Catalogue-search archetype: products with rich attributes to search, sort, aggregate and
compare, and a few things shoppers do with what they find.

Reads are the heart of it: a search with filters on every kind of field (category, brand,
topic attributes, price and rating ranges, name text), sorting and a limit; aggregates over
prices and ratings; a side-by-side comparison. Wishlists are always there so tasks can act;
optional features, chosen per topic, change the program's shape: a cart whose checkout takes
stock, reviews, price alerts, merchandising (changing prices), a wishlist quota, sale flags.
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, identifier, noun
from synthesis.environments.archetypes.parts import (
    a,
    adjust,
    aggregate_tool,
    amount_param,
    compare_tool,
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
    "cart",  # cart lines, checkout takes stock (only while it covers the quantity)
    "reviews",  # one review of 1 to 5 stars per shopper and product
    "price_alerts",  # alert a shopper when a product's price falls to a target
    "merchandising",  # staff change prices
    "wishlist_quota",  # at most a few saved products per shopper
    "sale_flags",  # products on sale, a filter of the search
    "rating_stats",  # an aggregate of ratings besides the one of prices
]


@register_archetype("catalogue_search")
def build_catalogue_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = pick_features(topic, "catalogue_search", FEATURES, at_least=3)
    shop_n, prod_n = noun(vocab, "shopper"), noun(vocab, "product")
    catalogue: list[list] = vocab["products"]  # [name, category, brand, price]
    categories = sorted({str(row[1]) for row in catalogue})
    brands = sorted({str(row[2]) for row in catalogue})
    attributes: dict[str, list[str]] = vocab.get("attributes", {})
    names = ["shopper", "product", "wishlist", "cart", "review", "alert"]
    px = dict(zip(names, assign_prefixes([shop_n.name, prod_n.name, *names[2:]]), strict=True))
    tiers = list(vocab.get("tiers", ["standard", "member"]))

    shopper = person_entity(
        shop_n, px["shopper"], FieldSpec(name="tier", type="enum", values=tiers)
    )
    by_name = {str(row[0]): row for row in catalogue}
    product_fields = [
        FieldSpec(name="name", type="str", generator="choice", values=list(by_name), unique=True),
        FieldSpec(
            name="category",
            type="enum",
            values=categories,
            generator="by:name",
            mapping={k: str(r[1]) for k, r in by_name.items()},
        ),
        FieldSpec(
            name="brand",
            type="enum",
            values=brands,
            generator="by:name",
            mapping={k: str(r[2]) for k, r in by_name.items()},
        ),
        FieldSpec(
            name="price",
            type="float",
            generator="by:name",
            mapping={k: float(r[3]) for k, r in by_name.items()},
        ),
        FieldSpec(name="rating", type="float", generator="decimal:2.5:5:1"),
        FieldSpec(name="stock", type="int", generator="int:0:25"),
    ]
    attribute_fields = []
    for attr, values in sorted(attributes.items()):
        fname = identifier(attr, f"vocabulary attribute {attr!r}")
        attribute_fields.append((fname, attr, list(values)))
        product_fields.append(FieldSpec(name=fname, type="enum", values=list(values)))
    if "sale_flags" in features:
        product_fields.append(FieldSpec(name="on_sale", type="bool"))
    product = EntitySpec(
        name=prod_n.name,
        collection=prod_n.plural,
        id_prefix=px["product"],
        label=prod_n.label,
        lookup_field="name",
        fields=product_fields,
    )
    shop_ref, prod_ref = f"{shop_n.name}_id", f"{prod_n.name}_id"

    def shopper_product_entity(
        name: str, label: str, extra: list[FieldSpec], statuses: list[str] | None
    ) -> EntitySpec:
        fields = [
            FieldSpec(name=shop_ref, type="ref", ref=shop_n.name),
            FieldSpec(name=prod_ref, type="ref", ref=prod_n.name),
            *extra,
        ]
        if statuses:
            fields.append(FieldSpec(name="status", type="enum", values=statuses))
        return EntitySpec(
            name=name,
            collection=f"{name}s",
            id_prefix=px[name.split("_")[0]],
            label=label,
            fields=fields,
            status_field="status" if statuses else None,
            initial_status=statuses[0] if statuses else None,
            transitions={statuses[0]: statuses[1:]} if statuses else {},
        )

    wishlist = shopper_product_entity("wishlist_item", "wishlist item", [], ["saved", "removed"])
    entities = [shopper, product, wishlist]
    shop_id, prod_id = id_param(shopper, field=shop_ref), id_param(product, field=prod_ref)

    def once(entity: EntitySpec, what: str, statuses: list[str]) -> Precondition:
        return Precondition(
            kind="no_duplicate",
            param=shop_ref,
            other=prod_ref,
            values=statuses,
            error=f"this {shop_n.label} already has {what} for that {prod_n.label}",
        )

    filters = [
        eq_filter("category", "category", "Only this category.", enum=categories),
        eq_filter("brand", "brand", "Only this brand.", enum=brands),
        *(
            eq_filter(fname, fname, f"Only this {label}.", enum=values)
            for fname, label, values in attribute_fields
        ),
        *range_filters("price", "price"),
        ParamSpec(
            name="min_rating",
            type="number",
            field="rating",
            required=False,
            role="min",
            description="Only products rated at least this (1 to 5).",
        ),
        contains_filter("name", "name"),
    ]
    if "sale_flags" in features:
        filters.append(
            ParamSpec(
                name="on_sale",
                type="boolean",
                field="on_sale",
                required=False,
                role="eq",
                description="Only products on sale (true) or not on sale (false).",
            )
        )
    sort_fields = ["price", "rating", "name"] + (["stock"] if "cart" in features else [])
    tools: list[ToolSpec] = [
        find_tool(shopper, f"Find {a(shop_n.label)} by email address.", "Email address."),
        find_tool(
            product, f"Find {a(prod_n.label)} by its exact name.", f"The {prod_n.label} name."
        ),
        get_tool(product),
        search_tool(
            f"search_{prod_n.plural}",
            product,
            f"Search the {prod_n.plural_label} with filters; sort and limit the results.",
            filters,
            shaping_params(sort_fields, limit=True),
        ),
        aggregate_tool(
            f"summarize_{prod_n.name}_prices",
            product,
            f"Count, total, lowest, highest or average price of the {prod_n.plural_label} "
            "that match the filters.",
            "price",
            filters[:2],
            functions=["count", "min", "max", "average"],
        ),
        compare_tool(product, f"Compare two {prod_n.plural_label} field by field."),
        add_to_wishlist := ToolSpec(
            name="add_to_wishlist",
            kind="mutate",
            operation="create",
            entity="wishlist_item",
            description=f"Save {a(prod_n.label)} to {a(shop_n.label)}'s wishlist.",
            params=[shop_id, prod_id],
            preconditions=[once(wishlist, "a saved wishlist item", ["saved"])],
        ),
        transition_tool(
            "remove_from_wishlist",
            wishlist,
            "removed",
            ["saved"],
            "Remove a saved item from a wishlist.",
        ),
        list_by_tool(
            f"list_{shop_n.name}_wishlist",
            wishlist,
            shopper,
            shop_ref,
            f"List the wishlist items of {a(shop_n.label)}, optionally with one status.",
            status=["saved", "removed"],
        ),
    ]
    rules = [f"{a(prod_n.label).capitalize()} is saved at most once on a wishlist."]
    if "wishlist_quota" in features:
        quota = int(vocab.get("wishlist_quota", 3))
        add_to_wishlist.preconditions.append(
            Precondition(
                kind="count_below",
                param=shop_ref,
                value=quota,
                values=["saved"],
                error=f"a wishlist holds at most {quota} saved {prod_n.plural_label}",
            )
        )
        rules.append(f"A wishlist holds at most {quota} saved {prod_n.plural_label}.")
    if "rating_stats" in features:
        tools.append(
            aggregate_tool(
                f"average_{prod_n.name}_rating",
                product,
                f"The average rating of the {prod_n.plural_label} that match the filters.",
                "rating",
                filters[:2],
                fixed="average",
            )
        )
    if "cart" in features:
        max_line = int(vocab.get("max_per_line", 5))
        cart = shopper_product_entity(
            "cart_line",
            "cart line",
            [FieldSpec(name="quantity", type="int")],
            ["in_cart", "removed", "ordered"],
        )
        entities.append(cart)
        rules += [
            f"A cart line needs the stock to cover its quantity, at most {max_line} units; "
            "checking it out takes the units from stock.",
        ]
        tools += [
            ToolSpec(
                name="add_to_cart",
                kind="mutate",
                operation="create",
                entity="cart_line",
                description=f"Put units of {a(prod_n.label)} in {a(shop_n.label)}'s cart.",
                params=[
                    shop_id,
                    prod_id,
                    amount_param("quantity", "quantity", "How many units.", integer=True),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="quantity", error="quantity must be at least 1"
                    ),
                    Precondition(
                        kind="param_at_most",
                        param="quantity",
                        value=max_line,
                        error=f"at most {max_line} units per cart line",
                    ),
                    Precondition(
                        kind="ref_field_gte_param",
                        param=prod_ref,
                        field="stock",
                        other="quantity",
                        error="not enough stock",
                    ),
                    once(cart, "a cart line", ["in_cart"]),
                ],
            ),
            transition_tool(
                "remove_cart_line",
                cart,
                "removed",
                ["in_cart"],
                "Take a line out of the cart.",
            ),
            transition_tool(
                "check_out_cart_line",
                cart,
                "ordered",
                ["in_cart"],
                "Order a cart line: its units leave the stock.",
                guards=[
                    Precondition(
                        kind="linked_field_gte_field",
                        param=prod_ref,
                        field="stock",
                        other="quantity",
                        error="the stock no longer covers this cart line",
                    )
                ],
                effects=[adjust(prod_ref, "stock", "quantity", -1)],
            ),
            list_by_tool(
                f"list_{shop_n.name}_cart",
                cart,
                shopper,
                shop_ref,
                f"List the cart lines of {a(shop_n.label)}, optionally with one status.",
                status=["in_cart", "removed", "ordered"],
            ),
        ]
    if "reviews" in features:
        review = shopper_product_entity(
            "review", "review", [FieldSpec(name="stars", type="int")], None
        )
        entities.append(review)
        rules.append(f"One review per {shop_n.label} and {prod_n.label}, from 1 to 5 stars.")
        tools += [
            ToolSpec(
                name=f"review_{prod_n.name}",
                kind="mutate",
                operation="create",
                entity="review",
                description=f"Record {a(shop_n.label)}'s review of {a(prod_n.label)}.",
                params=[
                    shop_id,
                    prod_id,
                    ParamSpec(
                        name="stars",
                        type="integer",
                        field="stars",
                        minimum=1,
                        description="From 1 to 5 stars.",
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="stars", error="stars run from 1 to 5"
                    ),
                    Precondition(
                        kind="param_at_most", param="stars", value=5, error="stars run from 1 to 5"
                    ),
                    once(review, "a review", []),
                ],
            ),
            search_tool(
                "search_reviews",
                review,
                "Search reviews by product, shopper or stars; sort and limit.",
                [
                    eq_filter(
                        prod_ref, prod_ref, f"Only reviews of this {prod_n.label}.", ref=prod_n.name
                    ),
                    eq_filter(
                        shop_ref, shop_ref, f"Only reviews by this {shop_n.label}.", ref=shop_n.name
                    ),
                    *range_filters("stars", "stars", integer=True),
                ],
                shaping_params(["stars"], limit=True),
            ),
        ]
    if "price_alerts" in features:
        alert = shopper_product_entity(
            "alert_rule",
            "price alert",
            [FieldSpec(name="target_price", type="float")],
            ["active", "cancelled"],
        )
        entities.append(alert)
        rules.append(f"One active price alert per {shop_n.label} and {prod_n.label}.")
        tools += [
            ToolSpec(
                name="create_price_alert",
                kind="mutate",
                operation="create",
                entity="alert_rule",
                description=f"Alert {a(shop_n.label)} when {a(prod_n.label)}'s price falls "
                "to a target.",
                params=[
                    shop_id,
                    prod_id,
                    amount_param("target_price", "target_price", "Alert at or below this price."),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive",
                        param="target_price",
                        error="a target price must be positive",
                    ),
                    once(alert, "an active price alert", ["active"]),
                ],
            ),
            transition_tool(
                "cancel_price_alert",
                alert,
                "cancelled",
                ["active"],
                "Cancel an active price alert.",
            ),
            list_by_tool(
                f"list_{shop_n.name}_price_alerts",
                alert,
                shopper,
                shop_ref,
                f"List the price alerts of {a(shop_n.label)}.",
            ),
        ]
    if "merchandising" in features:
        rules.append("Prices are positive and change only through the price tool.")
        tools.append(
            ToolSpec(
                name=f"set_{prod_n.name}_price",
                kind="mutate",
                operation="update",
                entity=prod_n.name,
                field="price",
                description=f"Change the price of {a(prod_n.label)}.",
                params=[
                    id_param(product),
                    ParamSpec(
                        name="price", type="number", field="price", description="The new price."
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="price", error="a price must be positive"
                    )
                ],
            )
        )
    return EnvSpec(
        env_id=f"{topic.topic_id}-catalogue_search",
        topic_id=topic.topic_id,
        archetype="catalogue_search",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
