"""Booking archetype: customers reserve time slots of providers; slots cannot be double-booked."""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, noun
from synthesis.environments.archetypes.parts import find_tool, id_param, person_entity
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


@register_archetype("booking")
def build_booking_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
    cust, prov, book = (noun(vocab, key) for key in ("customer", "provider", "booking"))
    services = [s.name for s in vocabulary_items(topic, "services")]
    providers = vocabulary_items(topic, "provider_names") if "provider_names" in vocab else []
    hours = business_hours(topic)
    cust_px, prov_px, _, book_px = assign_prefixes([cust.name, prov.name, "slot", book.name])

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
                values=list(vocab["specialties"]),
                # A named provider may say its specialty (a boardroom is not a small room).
                generator=lookup_generator(
                    "name", {p.name: p.specialty for p in providers if p.specialty}
                )
                if any(p.specialty for p in providers)
                else None,
            ),
        ],
    )
    slot = EntitySpec(
        name="slot",
        collection="slots",
        id_prefix="SLT",
        label="time slot",
        status_field="status",
        initial_status="available",
        fields=[
            FieldSpec(name=f"{prov.name}_id", type="ref", ref=prov.name),
            FieldSpec(name="start", type="datetime", generator=f"slot_start:{hours.to_arg()}"),
            FieldSpec(name="status", type="enum", values=["available", "booked"]),
        ],
    )
    booking = EntitySpec(
        name=book.name,
        collection=book.plural,
        id_prefix=book_px,
        label=book.label,
        status_field="status",
        initial_status="confirmed",
        transitions={"confirmed": ["cancelled", "completed"]},
        fields=[
            FieldSpec(name=f"{cust.name}_id", type="ref", ref=cust.name),
            FieldSpec(name="slot_id", type="ref", ref="slot"),
            FieldSpec(name="service", type="enum", values=services),
            FieldSpec(name="status", type="enum", values=["confirmed", "cancelled", "completed"]),
        ],
    )

    cust_id = id_param(customer, field=f"{cust.name}_id")
    book_id = id_param(booking)
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
                    enum=["available", "booked"],
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
            params=[cust_id],
        ),
        ToolSpec(
            name=f"get_{book.name}",
            kind="query",
            operation="get",
            entity=book.name,
            description=f"Get one {book.label} by id.",
            params=[book_id],
        ),
        ToolSpec(
            name=f"create_{book.name}",
            kind="mutate",
            operation="create",
            entity=book.name,
            description=f"Book a free time slot for a {cust.label}.",
            params=[
                cust_id,
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
            ],
            preconditions=[
                Precondition(
                    kind="ref_field_equals",
                    param="slot_id",
                    field="status",
                    value="available",
                    error="slot is not available",
                ),
            ],
            effects=[Effect(kind="set_ref_field", via="slot_id", field="status", value="booked")],
        ),
        ToolSpec(
            name=f"cancel_{book.name}",
            kind="mutate",
            operation="transition",
            entity=book.name,
            target_status="cancelled",
            description=f"Cancel a confirmed {book.label}; its slot opens again.",
            params=[book_id],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error=f"only a confirmed {book.label} can be cancelled",
                )
            ],
            effects=[
                Effect(kind="set_ref_field", via="slot_id", field="status", value="available")
            ],
        ),
        ToolSpec(
            name=f"complete_{book.name}",
            kind="mutate",
            operation="transition",
            entity=book.name,
            target_status="completed",
            description=f"Mark a confirmed {book.label} as completed.",
            params=[book_id],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error=f"only a confirmed {book.label} can be completed",
                )
            ],
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
    return EnvSpec(
        env_id=f"{topic.topic_id}-booking",
        topic_id=topic.topic_id,
        archetype="booking",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=[customer, provider, slot, booking],
        tools=tools,
        rules=[
            "A time slot holds at most one booking: only an available slot can be booked.",
            "Cancelling a booking makes its slot available again.",
            "Only confirmed bookings can be cancelled, completed or changed.",
        ],
    )
