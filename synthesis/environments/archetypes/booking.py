"""Booking archetype: customers reserve time slots of providers; slots cannot be double-booked.

Optional features (per topic, at least three): a waitlist for booked slots, reviews of
completed bookings (one each), no-shows, a reminder channel per booking, a quota of confirmed
bookings per customer, blocked slots (staff close a free slot and open it again), a provider
directory (providers by specialty, one slot by id), slot counts (an aggregate read) and a
booking search (filters and a limit).
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.features import choose_features
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, noun
from synthesis.environments.archetypes.parts import (
    aggregate_tool,
    eq_filter,
    find_tool,
    id_param,
    person_entity,
    search_tool,
    shaping_params,
)
from synthesis.environments.archetypes.toolkit import (
    get_tool,
    list_tool,
    once,
    ref,
    status_filter,
    transition_tool,
    update_tool,
    value,
)
from synthesis.environments.topics import business_hours, vocabulary_items
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

FEATURES = (
    "waitlist",
    "reviews",
    "no_shows",
    "reminders",
    "quota",
    "blocked_slots",
    "directory",
    "slot_counts",
    "booking_search",
)
STARS = ["1", "2", "3", "4", "5"]
REMINDER_CHANNELS = ["email", "text message", "phone call", "no reminder"]
# Confirmed bookings one customer may hold at once under the quota: low enough that the
# initial states hold customers at the limit, so the rule meets real refusals.
QUOTA = 3


@register_archetype("booking")
def build_booking_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
    cust, prov, book = (noun(vocab, key) for key in ("customer", "provider", "booking"))
    services = [s.name for s in vocabulary_items(topic, "services")]
    specialties = list(vocab["specialties"])
    providers = vocabulary_items(topic, "provider_names") if "provider_names" in vocab else []
    hours = business_hours(topic)
    cust_px, prov_px, _, book_px, wait_px, rev_px = assign_prefixes(
        [cust.name, prov.name, "slot", book.name, "waitlist_entry", "review"]
    )

    customer = person_entity(cust, cust_px, FieldSpec(name="phone", type="str", generator="phone"))
    provider = EntitySpec(
        name=prov.name,
        collection=prov.plural,
        id_prefix=prov_px,
        label=prov.label,
        lookup_field="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="item" if providers else "person_name",
                values=[p.name for p in providers],
            ),
            FieldSpec(
                name="specialty",
                type="enum",
                values=specialties,
                # A named provider may say its specialty (a boardroom is not a small room).
                generator=lookup_generator(
                    "name", {p.name: p.specialty for p in providers if p.specialty}
                )
                if any(p.specialty for p in providers)
                else None,
            ),
        ],
    )
    slot_statuses = ["available", "booked"] + (["blocked"] if "blocked_slots" in features else [])
    slot = EntitySpec(
        name="slot",
        collection="slots",
        id_prefix="SLT",
        label="time slot",
        status_field="status",
        initial_status="available",
        # Booking and cancelling move a slot between available and booked (effects of the
        # booking tools); blocking is the only change staff make to a slot directly.
        transitions={"available": ["blocked"], "blocked": ["available"]}
        if "blocked_slots" in features
        else {},
        fields=[
            FieldSpec(name=f"{prov.name}_id", type="ref", ref=prov.name),
            FieldSpec(name="start", type="datetime", generator=f"slot_start:{hours.to_arg()}"),
            FieldSpec(name="status", type="enum", values=slot_statuses),
        ],
    )
    statuses = ["confirmed", "cancelled", "completed"]
    ends = ["cancelled", "completed"]
    if "no_shows" in features:
        statuses.append("no_show")
        ends.append("no_show")
    booking_fields = [
        FieldSpec(name=f"{cust.name}_id", type="ref", ref=cust.name),
        FieldSpec(name="slot_id", type="ref", ref="slot"),
        FieldSpec(name="service", type="enum", values=services),
        FieldSpec(name="status", type="enum", values=statuses),
    ]
    create_params = [
        id_param(customer, field=f"{cust.name}_id"),
        ParamSpec(
            name="slot_id",
            type="string",
            ref="slot",
            field="slot_id",
            description="Id of an available time slot.",
        ),
        ParamSpec(
            name="service",
            type="string",
            field="service",
            enum=services,
            description="The service to book.",
        ),
    ]
    if "reminders" in features:
        booking_fields.append(FieldSpec(name="reminder", type="enum", values=REMINDER_CHANNELS))
        create_params.append(
            value("reminder", "string", f"How to remind the {cust.label}.", enum=REMINDER_CHANNELS)
        )
    booking = EntitySpec(
        name=book.name,
        collection=book.plural,
        id_prefix=book_px,
        label=book.label,
        status_field="status",
        initial_status="confirmed",
        transitions={"confirmed": ends},
        fields=booking_fields,
    )
    entities = [customer, provider, slot, booking]

    create_guards = [
        Precondition(
            kind="ref_field_equals",
            param="slot_id",
            field="status",
            value="available",
            error="slot is not available",
        ),
    ]
    rules = [
        "A time slot holds at most one booking: only an available slot can be booked.",
        "Cancelling a booking makes its slot available again.",
        "Only confirmed bookings can be cancelled, completed or changed.",
    ]
    if "quota" in features:
        create_guards.append(
            Precondition(
                kind="count_below",
                param=f"{cust.name}_id",
                value=QUOTA,
                values=["confirmed"],
                error=f"a {cust.label} can hold at most {QUOTA} confirmed {book.plural_label}",
            )
        )
        rules.append(f"A {cust.label} holds at most {QUOTA} confirmed {book.plural_label}.")

    book_id = id_param(booking)
    confirmed_only = [
        Precondition(
            kind="status_in",
            values=["confirmed"],
            error=f"only a confirmed {book.label} can be changed",
        )
    ]
    tools = [
        find_tool(customer, f"Find a {cust.label} by email address.", "Email address."),
        find_tool(provider, f"Find a {prov.label} by name.", f"The {prov.label}'s name."),
        ToolSpec(
            name=f"list_{prov.name}_slots",
            kind="query",
            operation="list",
            entity="slot",
            description=f"List the time slots of a {prov.label}, "
            "optionally only those with a status.",
            params=[
                id_param(provider, field=f"{prov.name}_id"),
                ParamSpec(
                    name="status",
                    type="string",
                    field="status",
                    required=False,
                    enum=slot_statuses,
                    description="Only slots with this status.",
                ),
            ],
        ),
        ToolSpec(
            name=f"list_{book.plural}",
            kind="query",
            operation="list",
            entity=book.name,
            description=f"List the {book.plural_label} of a {cust.label}.",
            params=[id_param(customer, field=f"{cust.name}_id")],
        ),
        get_tool(booking),
        ToolSpec(
            name=f"create_{book.name}",
            kind="mutate",
            operation="create",
            entity=book.name,
            description=f"Book a free time slot for a {cust.label}.",
            params=create_params,
            preconditions=create_guards,
            effects=[Effect(kind="set_ref_field", via="slot_id", field="status", value="booked")],
        ),
        transition_tool(
            "cancel",
            booking,
            "cancelled",
            ["confirmed"],
            f"Cancel a confirmed {book.label}; its slot opens again.",
            effects=[
                Effect(kind="set_ref_field", via="slot_id", field="status", value="available")
            ],
        ),
        transition_tool(
            "complete",
            booking,
            "completed",
            ["confirmed"],
            f"Mark a confirmed {book.label} as completed.",
        ),
        ToolSpec(
            name=f"change_{book.name}_service",
            kind="mutate",
            operation="update",
            entity=book.name,
            field="service",
            description=f"Change the service of a confirmed {book.label}.",
            params=[
                book_id,
                ParamSpec(
                    name="service",
                    type="string",
                    field="service",
                    enum=services,
                    description="The new service.",
                ),
            ],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error=f"only a confirmed {book.label} can be changed",
                )
            ],
        ),
    ]
    if "no_shows" in features:
        # The slot stays booked: the time was held and is gone.
        tools.append(
            ToolSpec(
                name=f"mark_{book.name}_no_show",
                kind="mutate",
                operation="transition",
                entity=book.name,
                target_status="no_show",
                description=f"Record that the {cust.label} missed a confirmed {book.label}.",
                params=[book_id],
                preconditions=[
                    Precondition(
                        kind="status_in",
                        values=["confirmed"],
                        error=f"only a confirmed {book.label} can be marked a no-show",
                    )
                ],
            )
        )
        rules.append(f"A confirmed {book.label} the {cust.label} missed is marked a no-show.")
    if "reminders" in features:
        tools.append(
            update_tool(
                f"change_{book.name}_reminder",
                booking,
                value("reminder", "string", "The new reminder channel.", enum=REMINDER_CHANNELS),
                f"Change how the {cust.label} of a confirmed {book.label} is reminded.",
                guards=confirmed_only,
            )
        )
        rules.append(
            f"Every {book.label} says how its {cust.label} is reminded: "
            "by email, text message, phone call, or not at all."
        )
    if "blocked_slots" in features:
        tools += [
            transition_tool(
                "block", slot, "blocked", ["available"], "Block an available time slot."
            ),
            transition_tool(
                "unblock", slot, "available", ["blocked"], "Open a blocked time slot again."
            ),
        ]
        rules.append("Only an available slot can be blocked; a blocked slot takes no booking.")
    if "directory" in features:
        tools += [
            list_tool(
                f"list_{prov.plural}",
                provider,
                f"List the {prov.plural_label}, optionally only those with one specialty.",
                ParamSpec(
                    name="specialty",
                    type="string",
                    field="specialty",
                    required=False,
                    enum=specialties,
                    description="Only this specialty.",
                ),
            ),
            get_tool(slot),
        ]
    if "slot_counts" in features:
        tools.append(
            aggregate_tool(
                f"count_{prov.name}_slots",
                slot,
                f"Count the time slots of a {prov.label}, optionally only those with a status.",
                None,
                [
                    eq_filter(
                        f"{prov.name}_id",
                        f"{prov.name}_id",
                        f"Only slots of this {prov.label}.",
                        ref=prov.name,
                    ),
                    eq_filter(
                        "status", "status", "Only slots with this status.", enum=slot_statuses
                    ),
                ],
                fixed="count",
            )
        )
    if "booking_search" in features:
        tools.append(
            search_tool(
                f"search_{book.plural}",
                booking,
                f"Search all {book.plural_label} by service and status.",
                [
                    eq_filter("service", "service", "Only this service.", enum=services),
                    eq_filter(
                        "status",
                        "status",
                        f"Only {book.plural_label} with this status.",
                        enum=statuses,
                    ),
                ],
                shaping_params([], limit=True),
            )
        )
    if "waitlist" in features:
        waitlist = EntitySpec(
            name="waitlist_entry",
            collection="waitlist_entries",
            id_prefix=wait_px,
            label="waitlist entry",
            status_field="status",
            initial_status="waiting",
            transitions={"waiting": ["left"]},
            fields=[
                FieldSpec(name=f"{cust.name}_id", type="ref", ref=cust.name),
                FieldSpec(name="slot_id", type="ref", ref="slot"),
                FieldSpec(name="status", type="enum", values=["waiting", "left"]),
            ],
        )
        entities.append(waitlist)
        tools += [
            ToolSpec(
                name="join_waitlist",
                kind="mutate",
                operation="create",
                entity="waitlist_entry",
                description=f"Put a {cust.label} on the waitlist of a booked time slot.",
                params=[ref(customer), ref(slot, "slot_id", "Id of a booked time slot.")],
                preconditions=[
                    Precondition(
                        kind="ref_field_equals",
                        param="slot_id",
                        field="status",
                        value="booked",
                        error="only a booked slot has a waitlist",
                    ),
                    once(
                        [f"{cust.name}_id", "slot_id"],
                        f"that {cust.label} is already waiting for this slot",
                        ["waiting"],
                    ),
                ],
            ),
            list_tool(
                f"list_{cust.name}_waitlist_entries",
                waitlist,
                f"List the waitlist entries of a {cust.label}, optionally with one status.",
                ref(customer),
                status_filter(["waiting", "left"], "entries"),
            ),
            transition_tool(
                "leave", waitlist, "left", ["waiting"], "Take a waiting entry off the waitlist."
            ).model_copy(update={"name": "leave_waitlist"}),
        ]
        rules.append(
            f"Only a booked slot has a waitlist, and a {cust.label} waits for one slot once."
        )
    if "reviews" in features:
        review = EntitySpec(
            name="review",
            collection="reviews",
            id_prefix=rev_px,
            label="review",
            fields=[
                FieldSpec(name=f"{book.name}_id", type="ref", ref=book.name),
                FieldSpec(name="stars", type="enum", values=STARS),
            ],
        )
        entities.append(review)
        tools += [
            ToolSpec(
                name=f"review_{book.name}",
                kind="mutate",
                operation="create",
                entity="review",
                description=f"Record the {cust.label}'s review of a completed {book.label} "
                f"(once per {book.label}).",
                params=[
                    ref(booking),
                    value("stars", "string", "1 (poor) to 5 (excellent).", enum=STARS),
                ],
                preconditions=[
                    Precondition(
                        kind="ref_field_equals",
                        param=f"{book.name}_id",
                        field="status",
                        value="completed",
                        error=f"only a completed {book.label} can be reviewed",
                    ),
                    once([f"{book.name}_id"], f"this {book.label} is already reviewed"),
                ],
            ),
            list_tool(
                f"list_{book.name}_reviews",
                review,
                f"List the reviews of a {book.label}.",
                ref(booking),
            ),
        ]
        rules.append(f"A {book.label} is reviewed at most once, after it is completed.")
    return EnvSpec(
        env_id=f"{topic.topic_id}-booking",
        topic_id=topic.topic_id,
        archetype="booking",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
