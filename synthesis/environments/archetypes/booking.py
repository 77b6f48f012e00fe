"""Booking archetype: customers reserve time slots of providers; slots cannot be double-booked.

Optional features (per topic, at least three): a waitlist for booked slots, reviews of
completed bookings (one each), no-shows, a reminder channel per booking, a quota of confirmed
bookings per customer, blocked slots (staff close a free slot and open it again), a provider
directory (providers by specialty, one slot by id), slot counts (an aggregate read) and a
booking search (filters and a limit).
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    aggregate_tool,
    choice,
    count_below,
    create_tool,
    entity,
    enum_field,
    eq_filter,
    find_by_email,
    find_by_name,
    get_tool,
    list_tool,
    noun_entity,
    once,
    person_entity,
    ref,
    ref_field,
    ref_filter,
    ref_is,
    search_tool,
    set_ref,
    shaping_params,
    status_filter,
    status_in,
    transition_tool,
    update_tool,
)
from synthesis.environments.topics import business_hours, vocabulary_items
from synthesis.environments.values import lookup_generator
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Topic

FEATURES = ("waitlist", "reviews", "no_shows", "reminders", "quota", "blocked_slots",
            "directory", "slot_counts", "booking_search")  # fmt: skip
optional = FeatureSet("booking", FEATURES, at_least=3)
STARS = ["1", "2", "3", "4", "5"]
REMINDER_CHANNELS = ["email", "text message", "phone call", "no reminder"]
# Confirmed bookings one customer may hold at once under the quota: low enough that the
# initial states hold customers at the limit, so the rule meets real refusals.
QUOTA = 3


class Booking(SpecDraft):
    """A booking spec being built: the topic's words, then the records `core` makes."""

    customer: EntitySpec
    provider: EntitySpec
    slot: EntitySpec
    booking: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        # Nouns name identifiers (`cust.name`) and appear in text as written (`cust.label`).
        self.cust, self.prov, self.book = (
            noun(self.vocab, k) for k in ("customer", "provider", "booking")
        )
        self.services = [s.name for s in vocabulary_items(topic, "services")]
        self.specialties = list(self.vocab["specialties"])
        self.px = assign_prefixes(
            [self.cust.name, self.prov.name, "slot", self.book.name, "waitlist_entry", "review"]
        )
        self.create = f"create_{self.book.name}"
        self.confirmed_only = status_in(
            ["confirmed"], f"only a confirmed {self.book.label} can be changed"
        )


def core(d: Booking) -> None:
    c, p, b = d.cust, d.prov, d.book
    named = vocabulary_items(d.topic, "provider_names") if "provider_names" in d.vocab else []
    specialty_of = {n.name: n.specialty for n in named if n.specialty}
    d.customer = person_entity(c, d.px[0], FieldSpec(name="phone", type="str", generator="phone"))
    d.provider = noun_entity(
        p,
        d.px[1],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                values=[n.name for n in named],
                generator="item" if named else "person_name",
            ),
            # A named provider may say its specialty (a boardroom is not a small room).
            FieldSpec(
                name="specialty",
                type="enum",
                values=d.specialties,
                generator=lookup_generator("name", specialty_of) if specialty_of else None,
            ),
        ],
    )
    # Booking and cancelling move a slot between available and booked (effects of the booking
    # tools): staff change a slot directly only where slots can be blocked.
    start = FieldSpec(
        name="start", type="datetime", generator=f"slot_start:{business_hours(d.topic).to_arg()}"
    )
    d.slot = entity(
        "slot",
        "time slot",
        "SLT",
        [ref_field(p.name), start],
        statuses=["available", "booked"],
        transitions={},
    )
    d.booking = noun_entity(
        b,
        d.px[3],
        [ref_field(c.name), ref_field("slot"), enum_field("service", d.services)],
        statuses=["confirmed", "cancelled", "completed"],
    )
    d.entities += [d.customer, d.provider, d.slot, d.booking]
    slot_statuses = d.slot.field("status").values
    d.tools += [
        find_by_email(d.customer, f"Find a {c.label} by email address."),
        find_by_name(d.provider, f"Find a {p.label} by name."),
        list_tool(
            f"list_{p.name}_slots",
            d.slot,
            f"List the time slots of a {p.label}, optionally only those with a status.",
            ref(d.provider),
            status_filter(slot_statuses, "slots"),
        ),
        list_tool(
            f"list_{b.plural}",
            d.booking,
            f"List the {b.plural_label} of a {c.label}.",
            ref(d.customer),
        ),
        get_tool(d.booking),
        create_tool(
            d.create,
            d.booking,
            f"Book a free time slot for a {c.label}.",
            [
                ref(d.customer),
                ref(d.slot, description="Id of an available time slot."),
                choice("service", "The service to book.", d.services),
            ],
            guards=[ref_is("slot_id", "status", "available", "slot is not available")],
            effects=[set_ref("slot_id", "status", "booked")],
        ),
        transition_tool(
            "cancel",
            d.booking,
            "cancelled",
            ["confirmed"],
            f"Cancel a confirmed {b.label}; its slot opens again.",
            effects=[set_ref("slot_id", "status", "available")],
        ),
        transition_tool(
            "complete",
            d.booking,
            "completed",
            ["confirmed"],
            f"Mark a confirmed {b.label} as completed.",
        ),
        update_tool(
            f"change_{b.name}_service",
            d.booking,
            choice("service", "The new service.", d.services),
            f"Change the service of a confirmed {b.label}.",
            guards=[d.confirmed_only],
        ),
    ]
    d.rules += [
        "A time slot holds at most one booking: only an available slot can be booked.",
        "Cancelling a booking makes its slot available again.",
        "Only confirmed bookings can be cancelled, completed or changed.",
    ]


@optional.feature
def quota(d: Booking) -> None:
    """A customer holds at most QUOTA confirmed bookings at once."""
    holds = f"at most {QUOTA} confirmed {d.book.plural_label}"
    guard = count_below(
        f"{d.cust.name}_id", QUOTA, ["confirmed"], f"a {d.cust.label} can hold {holds}"
    )
    d.guard(d.create, guard, rule=f"A {d.cust.label} holds {holds}.")


@optional.feature
def no_shows(d: Booking) -> None:
    """A confirmed booking the customer missed is a no-show; its slot stays booked (the time
    was held and is gone)."""
    b = d.book
    d.add_status(d.booking, "no_show", after=["confirmed"])
    d.tools.append(
        transition_tool(
            "mark",
            d.booking,
            "no_show",
            ["confirmed"],
            f"Record that the {d.cust.label} missed a confirmed {b.label}.",
            name=f"mark_{b.name}_no_show",
            refusal=f"only a confirmed {b.label} can be marked a no-show",
        )
    )
    d.rules.append(f"A confirmed {b.label} the {d.cust.label} missed is marked a no-show.")


@optional.feature
def reminders(d: Booking) -> None:
    """Each booking names how its customer is reminded, chosen when booking, changeable."""
    c, b = d.cust, d.book
    d.add_field(
        d.booking,
        enum_field("reminder", REMINDER_CHANNELS),
        create=d.create,
        arg=choice("reminder", f"How to remind the {c.label}.", REMINDER_CHANNELS),
    )
    d.tools.append(
        update_tool(
            f"change_{b.name}_reminder",
            d.booking,
            choice("reminder", "The new reminder channel.", REMINDER_CHANNELS),
            f"Change how the {c.label} of a confirmed {b.label} is reminded.",
            guards=[d.confirmed_only],
        )
    )
    d.rules.append(
        f"Every {b.label} says how its {c.label} is reminded: "
        "by email, text message, phone call, or not at all."
    )


@optional.feature
def blocked_slots(d: Booking) -> None:
    """Staff block a free slot (it takes no booking) and open it again."""
    d.add_status(d.slot, "blocked", after=["available"], back_to=["available"])
    d.tools += [
        transition_tool("block", d.slot, "blocked", ["available"], "Block an available time slot."),
        transition_tool(
            "unblock", d.slot, "available", ["blocked"], "Open a blocked time slot again."
        ),
    ]
    d.rules.append("Only an available slot can be blocked; a blocked slot takes no booking.")


@optional.feature
def directory(d: Booking) -> None:
    """Providers listed by specialty, and one slot by id."""
    specialty = choice("specialty", "Only this specialty.", d.specialties, required=False)
    d.tools += [
        list_tool(
            f"list_{d.prov.plural}",
            d.provider,
            f"List the {d.prov.plural_label}, optionally only those with one specialty.",
            specialty,
        ),
        get_tool(d.slot),
    ]


@optional.feature
def slot_counts(d: Booking) -> None:
    """How many slots a provider has, in a status or all: an aggregate read."""
    p = d.prov
    d.tools.append(
        aggregate_tool(
            f"count_{p.name}_slots",
            d.slot,
            f"Count the time slots of a {p.label}, optionally only those with a status.",
            None,
            [
                ref_filter(p.name, f"Only slots of this {p.label}."),
                eq_filter(
                    "status", "Only slots with this status.", enum=d.slot.field("status").values
                ),
            ],
            fixed="count",
        )
    )


@optional.feature
def booking_search(d: Booking) -> None:
    """All bookings searched by service and status, with a limit."""
    b, statuses = d.book, d.booking.field("status").values
    filters = [
        eq_filter("service", "Only this service.", enum=d.services),
        eq_filter("status", f"Only {b.plural_label} with this status.", enum=statuses),
    ]
    d.tools.append(
        search_tool(
            f"search_{b.plural}",
            d.booking,
            f"Search all {b.plural_label} by service and status.",
            filters,
            shaping_params([], limit=True),
        )
    )


@optional.feature
def waitlist(d: Booking) -> None:
    """A customer waits (once) for a booked slot, and may leave the waitlist."""
    c = d.cust
    entry = entity(
        "waitlist_entry",
        "waitlist entry",
        d.px[4],
        [ref_field(c.name), ref_field("slot")],
        statuses=["waiting", "left"],
    )
    d.entities.append(entry)
    d.tools += [
        create_tool(
            "join_waitlist",
            entry,
            f"Put a {c.label} on the waitlist of a booked time slot.",
            [ref(d.customer), ref(d.slot, description="Id of a booked time slot.")],
            guards=[
                ref_is("slot_id", "status", "booked", "only a booked slot has a waitlist"),
                once(
                    [f"{c.name}_id", "slot_id"],
                    f"that {c.label} is already waiting for this slot",
                    ["waiting"],
                ),
            ],
        ),
        list_tool(
            f"list_{c.name}_waitlist_entries",
            entry,
            f"List the waitlist entries of a {c.label}, optionally with one status.",
            ref(d.customer),
            status_filter(["waiting", "left"], "entries"),
        ),
        transition_tool(
            "leave",
            entry,
            "left",
            ["waiting"],
            "Take a waiting entry off the waitlist.",
            name="leave_waitlist",
        ),
    ]
    d.rules.append(f"Only a booked slot has a waitlist, and a {c.label} waits for one slot once.")


@optional.feature
def reviews(d: Booking) -> None:
    """A completed booking is reviewed (1 to 5 stars) at most once."""
    b, booking_id = d.book, f"{d.book.name}_id"
    review = entity("review", "review", d.px[5], [ref_field(b.name), enum_field("stars", STARS)])
    d.entities.append(review)
    d.tools += [
        create_tool(
            f"review_{b.name}",
            review,
            f"Record the {d.cust.label}'s review of a completed {b.label} (once per {b.label}).",
            [ref(d.booking), choice("stars", "1 (poor) to 5 (excellent).", STARS)],
            guards=[
                ref_is(
                    booking_id, "status", "completed", f"only a completed {b.label} can be reviewed"
                ),
                once([booking_id], f"this {b.label} is already reviewed"),
            ],
        ),
        list_tool(
            f"list_{b.name}_reviews", review, f"List the reviews of a {b.label}.", ref(d.booking)
        ),
    ]
    d.rules.append(f"A {b.label} is reviewed at most once, after it is completed.")


@register_archetype("booking")
def build_booking_spec(topic: Topic) -> EnvSpec:
    d = Booking(topic)
    core(d)
    optional.apply(d)
    return d.spec()
