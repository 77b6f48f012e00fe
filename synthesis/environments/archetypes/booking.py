"""Booking archetype: customers reserve time slots of providers; slots cannot be double-booked."""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import (
    assign_prefixes,
    class_name,
    human,
    plural,
    snake,
)
from synthesis.environments.archetypes.parts import find_tool, id_param, person_entity
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
    cust, prov, book = snake(vocab["customer"]), snake(vocab["provider"]), snake(vocab["booking"])
    services: list[str] = list(vocab["services"])
    providers, bookings = plural(prov), plural(book)
    cust_px, prov_px, _, book_px = assign_prefixes([cust, prov, "slot", book])

    customer = person_entity(cust, cust_px, FieldSpec(name="phone", type="str", generator="phone"))
    provider = EntitySpec(
        name=prov,
        collection=providers,
        id_prefix=prov_px,
        label=human(prov),
        lookup_field="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="choice" if vocab.get("provider_names") else "person_name",
                values=list(vocab.get("provider_names", [])),
            ),
            FieldSpec(name="specialty", type="enum", values=list(vocab["specialties"])),
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
            FieldSpec(name=f"{prov}_id", type="ref", ref=prov),
            FieldSpec(name="start", type="datetime", generator="slot_start"),
            FieldSpec(name="status", type="enum", values=["available", "booked"]),
        ],
    )
    booking = EntitySpec(
        name=book,
        collection=bookings,
        id_prefix=book_px,
        label=human(book),
        status_field="status",
        initial_status="confirmed",
        transitions={"confirmed": ["cancelled", "completed"]},
        fields=[
            FieldSpec(name=f"{cust}_id", type="ref", ref=cust),
            FieldSpec(name="slot_id", type="ref", ref="slot"),
            FieldSpec(name="service", type="enum", values=services),
            FieldSpec(name="status", type="enum", values=["confirmed", "cancelled", "completed"]),
        ],
    )

    cust_id = id_param(customer, field=f"{cust}_id")
    book_id = id_param(booking)
    tools = [
        find_tool(customer, f"Find a {human(cust)} by email address.", "Email address."),
        find_tool(provider, f"Find a {human(prov)} by name.", f"The {human(prov)}'s name."),
        ToolSpec(
            name=f"list_{prov}_slots",
            kind="query",
            operation="list",
            entity="slot",
            description=f"List the time slots of a {human(prov)}, "
            "optionally only those with a status.",
            params=[
                id_param(provider, field=f"{prov}_id"),
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
            name=f"list_{bookings}",
            kind="query",
            operation="list",
            entity=book,
            description=f"List the {human(bookings)} of a {human(cust)}.",
            params=[cust_id],
        ),
        ToolSpec(
            name=f"get_{book}",
            kind="query",
            operation="get",
            entity=book,
            description=f"Get one {human(book)} by id.",
            params=[book_id],
        ),
        ToolSpec(
            name=f"create_{book}",
            kind="mutate",
            operation="create",
            entity=book,
            description=f"Book a free time slot for a {human(cust)}.",
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
            name=f"cancel_{book}",
            kind="mutate",
            operation="transition",
            entity=book,
            target_status="cancelled",
            description=f"Cancel a confirmed {human(book)}; its slot opens again.",
            params=[book_id],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error=f"only a confirmed {human(book)} can be cancelled",
                )
            ],
            effects=[
                Effect(kind="set_ref_field", via="slot_id", field="status", value="available")
            ],
        ),
        ToolSpec(
            name=f"complete_{book}",
            kind="mutate",
            operation="transition",
            entity=book,
            target_status="completed",
            description=f"Mark a confirmed {human(book)} as completed.",
            params=[book_id],
            preconditions=[
                Precondition(
                    kind="status_in",
                    values=["confirmed"],
                    error=f"only a confirmed {human(book)} can be completed",
                )
            ],
        ),
        ToolSpec(
            name=f"change_{book}_service",
            kind="mutate",
            operation="update",
            entity=book,
            field="service",
            description=f"Change the service of a confirmed {human(book)}.",
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
                    error=f"only a confirmed {human(book)} can be changed",
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
