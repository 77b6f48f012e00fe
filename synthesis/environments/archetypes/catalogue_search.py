"""Catalogue-search archetype: products with rich attributes to search, sort, aggregate and
compare, and a few things shoppers do with what they find.

Reads are the heart of it: a search with filters on every kind of field (category, brand,
topic attributes, price and rating ranges, name text), sorting and a limit; aggregates over
prices and ratings; a side-by-side comparison. Wishlists are always there so tasks can act;
optional features, chosen per topic, change the program's shape: a cart whose checkout takes
stock, reviews, price alerts, merchandising (changing prices), a wishlist quota, sale flags.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, identifier, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    add_filter,
    adjust,
    aggregate_tool,
    amount,
    at_most,
    compare_tool,
    contains_filter,
    count_below,
    covers,
    create_tool,
    entity,
    enum_field,
    eq_filter,
    find_by_email,
    find_tool,
    get_tool,
    linked_covers,
    list_by_tool,
    no_duplicate,
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
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, ParamSpec, Precondition, Topic

FEATURES = [
    "cart",  # cart lines, checkout takes stock (only while it covers the quantity)
    "reviews",  # one review of 1 to 5 stars per shopper and product
    "price_alerts",  # alert a shopper when a product's price falls to a target
    "merchandising",  # staff change prices
    "wishlist_quota",  # at most a few saved products per shopper
    "sale_flags",  # products on sale, a filter of the search
    "rating_stats",  # an aggregate of ratings besides the one of prices
]
optional = FeatureSet("catalogue_search", FEATURES, at_least=3, draw="coin_flips")
CART_STATUSES = ["in_cart", "removed", "ordered"]


class Catalogue(SpecDraft):
    """A catalogue spec being built: the topic's words, then the records `core` makes."""

    shopper: EntitySpec
    product: EntitySpec
    wishlist: EntitySpec
    by_kind: list[ParamSpec]  # the category and brand filters every aggregate takes

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.shop_n, self.prod_n = noun(self.vocab, "shopper"), noun(self.vocab, "product")
        names = ["shopper", "product", "wishlist", "cart", "review", "alert"]
        prefixes = assign_prefixes([self.shop_n.name, self.prod_n.name, *names[2:]])
        self.px = dict(zip(names, prefixes, strict=True))
        self.shop_ref, self.prod_ref = f"{self.shop_n.name}_id", f"{self.prod_n.name}_id"
        self.search = f"search_{self.prod_n.plural}"


def shopper_product(
    d: Catalogue, name: str, label: str, extra: list[FieldSpec], statuses: Sequence[str] | None
) -> EntitySpec:
    """A record of one shopper and one product (a wishlist item, a cart line, a review)."""
    fields = [ref_field(d.shop_n.name), ref_field(d.prod_n.name), *extra]
    return entity(name, label, d.px[name.split("_")[0]], fields, statuses=statuses)


def one_per_pair(d: Catalogue, what: str, statuses: Sequence[str]) -> Precondition:
    """A shopper has at most one such record (in `statuses`) for a product."""
    error = f"this {d.shop_n.label} already has {what} for that {d.prod_n.label}"
    return no_duplicate(d.shop_ref, d.prod_ref, statuses, error)


def core(d: Catalogue) -> None:
    shop_n, prod_n = d.shop_n, d.prod_n
    catalogue: list[list] = d.vocab["products"]  # [name, category, brand, price]
    categories = sorted({str(row[1]) for row in catalogue})
    brands = sorted({str(row[2]) for row in catalogue})
    by_name = {str(row[0]): row for row in catalogue}
    # Topic attributes (a shoe's width, a lens mount) are enum fields the search filters on.
    attributes = [
        (identifier(attr, f"vocabulary attribute {attr!r}"), attr, list(values))
        for attr, values in sorted(d.vocab.get("attributes", {}).items())
    ]
    tiers = enum_field("tier", d.vocab.get("tiers", ["standard", "member"]))
    d.shopper = person_entity(shop_n, d.px["shopper"], tiers)
    d.product = noun_entity(
        prod_n,
        d.px["product"],
        lookup="name",
        fields=[
            FieldSpec(
                name="name", type="str", generator="choice", values=list(by_name), unique=True
            ),
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
            *(enum_field(field, values) for field, _, values in attributes),
        ],
    )
    d.wishlist = shopper_product(d, "wishlist_item", "wishlist item", [], ["saved", "removed"])
    d.entities += [d.shopper, d.product, d.wishlist]
    d.by_kind = [
        eq_filter("category", "Only this category.", enum=categories),
        eq_filter("brand", "Only this brand.", enum=brands),
    ]
    filters = [
        *d.by_kind,
        *(
            eq_filter(field, f"Only this {words}.", enum=values)
            for field, words, values in attributes
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
    d.tools += [
        find_by_email(d.shopper, f"Find {a(shop_n.label)} by email address."),
        find_tool(
            d.product, f"Find {a(prod_n.label)} by its exact name.", f"The {prod_n.label} name."
        ),
        get_tool(d.product),
        search_tool(
            d.search,
            d.product,
            f"Search the {prod_n.plural_label} with filters; sort and limit the results.",
            filters,
            shaping_params(["price", "rating", "name"], limit=True),
        ),
        aggregate_tool(
            f"summarize_{prod_n.name}_prices",
            d.product,
            f"Count, total, lowest, highest or average price of the {prod_n.plural_label} that "
            "match the filters.",
            "price",
            d.by_kind,
            functions=["count", "min", "max", "average"],
        ),
        compare_tool(d.product, f"Compare two {prod_n.plural_label} field by field."),
        create_tool(
            "add_to_wishlist",
            d.wishlist,
            f"Save {a(prod_n.label)} to {a(shop_n.label)}'s wishlist.",
            [ref(d.shopper), ref(d.product)],
            guards=[one_per_pair(d, "a saved wishlist item", ["saved"])],
        ),
        transition_tool(
            "remove",
            d.wishlist,
            "removed",
            ["saved"],
            "Remove a saved item from a wishlist.",
            name="remove_from_wishlist",
        ),
        list_by_tool(
            f"list_{shop_n.name}_wishlist",
            d.wishlist,
            d.shopper,
            d.shop_ref,
            f"List the wishlist items of {a(shop_n.label)}, optionally with one status.",
            status=["saved", "removed"],
        ),
    ]
    d.rules.append(f"{a(prod_n.label).capitalize()} is saved at most once on a wishlist.")


@optional.feature
def sale_flags(d: Catalogue) -> None:
    """Products on sale, a filter of the search."""
    d.product.fields.append(FieldSpec(name="on_sale", type="bool"))
    add_filter(
        d.tool(d.search),
        ParamSpec(
            name="on_sale",
            type="boolean",
            field="on_sale",
            required=False,
            role="eq",
            description="Only products on sale (true) or not on sale (false).",
        ),
    )


@optional.feature
def wishlist_quota(d: Catalogue) -> None:
    """At most a few saved products per shopper."""
    limit, saved = int(d.vocab.get("wishlist_quota", 3)), d.prod_n.plural_label
    guard = count_below(
        d.shop_ref, limit, ["saved"], f"a wishlist holds at most {limit} saved {saved}"
    )
    d.guard("add_to_wishlist", guard, rule=f"A wishlist holds at most {limit} saved {saved}.")


@optional.feature
def rating_stats(d: Catalogue) -> None:
    """An aggregate of ratings besides the one of prices."""
    prod_n = d.prod_n
    d.tools.append(
        aggregate_tool(
            f"average_{prod_n.name}_rating",
            d.product,
            f"The average rating of the {prod_n.plural_label} that match the filters.",
            "rating",
            d.by_kind,
            fixed="average",
        )
    )


@optional.feature
def cart(d: Catalogue) -> None:
    """Cart lines; checking one out takes stock, only while the stock covers the quantity."""
    shop_n, prod_n, prod_ref = d.shop_n, d.prod_n, d.prod_ref
    max_line = int(d.vocab.get("max_per_line", 5))
    line = shopper_product(
        d, "cart_line", "cart line", [FieldSpec(name="quantity", type="int")], CART_STATUSES
    )
    d.entities.append(line)
    param(d.tool(d.search), "sort_by").enum.append("stock")
    d.rules.append(
        f"A cart line needs the stock to cover its quantity, at most {max_line} units; "
        "checking it out takes the units from stock."
    )
    # The refusals name the status as it is spelled (the pinned builds quote them).
    d.tools += [
        create_tool(
            "add_to_cart",
            line,
            f"Put units of {a(prod_n.label)} in {a(shop_n.label)}'s cart.",
            [ref(d.shopper), ref(d.product), amount("quantity", "How many units.", integer=True)],
            guards=[
                positive("quantity", "quantity must be at least 1"),
                at_most("quantity", max_line, f"at most {max_line} units per cart line"),
                covers(prod_ref, "stock", "quantity", "not enough stock"),
                one_per_pair(d, "a cart line", ["in_cart"]),
            ],
        ),
        transition_tool(
            "remove",
            line,
            "removed",
            ["in_cart"],
            "Take a line out of the cart.",
            refusal="only an in_cart cart line can be removed",
        ),
        transition_tool(
            "check_out",
            line,
            "ordered",
            ["in_cart"],
            "Order a cart line: its units leave the stock.",
            refusal="only an in_cart cart line can be ordered",
            guards=[
                linked_covers(
                    prod_ref, "stock", "quantity", "the stock no longer covers this cart line"
                )
            ],
            effects=[adjust(prod_ref, "stock", "quantity", -1)],
        ),
        list_by_tool(
            f"list_{shop_n.name}_cart",
            line,
            d.shopper,
            d.shop_ref,
            f"List the cart lines of {a(shop_n.label)}, optionally with one status.",
            status=CART_STATUSES,
        ),
    ]


@optional.feature
def reviews(d: Catalogue) -> None:
    """One review of 1 to 5 stars per shopper and product, searchable."""
    shop_n, prod_n = d.shop_n, d.prod_n
    review = shopper_product(d, "review", "review", [FieldSpec(name="stars", type="int")], None)
    d.entities.append(review)
    d.rules.append(f"One review per {shop_n.label} and {prod_n.label}, from 1 to 5 stars.")
    d.tools += [
        create_tool(
            f"review_{prod_n.name}",
            review,
            f"Record {a(shop_n.label)}'s review of {a(prod_n.label)}.",
            [ref(d.shopper), ref(d.product), amount("stars", "From 1 to 5 stars.", integer=True)],
            guards=[
                positive("stars", "stars run from 1 to 5"),
                at_most("stars", 5, "stars run from 1 to 5"),
                one_per_pair(d, "a review", []),
            ],
        ),
        search_tool(
            "search_reviews",
            review,
            "Search reviews by product, shopper or stars; sort and limit.",
            [
                ref_filter(prod_n.name, f"Only reviews of this {prod_n.label}."),
                ref_filter(shop_n.name, f"Only reviews by this {shop_n.label}."),
                *range_filters("stars", "stars", integer=True),
            ],
            shaping_params(["stars"], limit=True),
        ),
    ]


@optional.feature
def price_alerts(d: Catalogue) -> None:
    """A shopper is alerted when a product's price falls to a target; one active per pair."""
    shop_n, prod_n = d.shop_n, d.prod_n
    alert = shopper_product(
        d,
        "alert_rule",
        "price alert",
        [FieldSpec(name="target_price", type="float")],
        ["active", "cancelled"],
    )
    d.entities.append(alert)
    d.rules.append(f"One active price alert per {shop_n.label} and {prod_n.label}.")
    d.tools += [
        create_tool(
            "create_price_alert",
            alert,
            f"Alert {a(shop_n.label)} when {a(prod_n.label)}'s price falls to a target.",
            [
                ref(d.shopper),
                ref(d.product),
                amount("target_price", "Alert at or below this price."),
            ],
            guards=[
                positive("target_price", "a target price must be positive"),
                one_per_pair(d, "an active price alert", ["active"]),
            ],
        ),
        transition_tool(
            "cancel",
            alert,
            "cancelled",
            ["active"],
            "Cancel an active price alert.",
            name="cancel_price_alert",
        ),
        list_by_tool(
            f"list_{shop_n.name}_price_alerts",
            alert,
            d.shopper,
            d.shop_ref,
            f"List the price alerts of {a(shop_n.label)}.",
        ),
    ]


@optional.feature
def merchandising(d: Catalogue) -> None:
    """Staff change prices (positive, through the price tool only)."""
    d.rules.append("Prices are positive and change only through the price tool.")
    d.tools.append(
        update_tool(
            f"set_{d.prod_n.name}_price",
            d.product,
            value("price", "number", "The new price."),
            f"Change the price of {a(d.prod_n.label)}.",
            guards=[positive("price", "a price must be positive")],
        )
    )


@register_archetype("catalogue_search")
def build_catalogue_spec(topic: Topic) -> EnvSpec:
    d = Catalogue(topic)
    core(d)
    optional.apply(d)
    return d.spec()
