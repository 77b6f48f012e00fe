"""Scheduling archetype: people book events in rooms; a room holds one scheduled event per start.

Optional features (per topic): room capacity, recurring events, invitations that attendees
accept or decline, reminders, rescheduling (which must not clash either), room closures,
event kinds and renaming.
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, label, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    add_lifecycle,
    choice,
    covers,
    create_tool,
    entity,
    enum_field,
    find_by_email,
    find_by_name,
    get_tool,
    list_tool,
    noun_entity,
    once,
    person_entity,
    positive,
    ref,
    ref_field,
    ref_is,
    status_filter,
    status_in,
    text,
    transition_tool,
    update_tool,
    value,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Topic

FEATURES = ("capacity", "recurring", "invitations", "reminders", "reschedule", "closures",
            "kinds", "rename")  # fmt: skip
optional = FeatureSet("scheduling", FEATURES, at_least=3)
EVENT_STATUSES = ["scheduled", "cancelled", "completed"]
INVITATION_STATUSES = ["invited", "accepted", "declined"]
REPEATS = ["none", "daily", "weekly", "monthly"]
REMINDERS = ["10", "30", "60", "1440"]


class Scheduling(SpecDraft):
    """A scheduling spec being built: the topic's words, then the records `core` makes."""

    person: EntitySpec
    room: EntitySpec
    event: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.per, self.res, self.evt = (
            noun(self.vocab, k) for k in ("person", "resource", "event")
        )
        self.px = assign_prefixes(
            [self.per.name, self.res.name, self.evt.name, "invitation", "reminder"]
        )
        self.res_ref, self.evt_ref = f"{self.res.name}_id", f"{self.evt.name}_id"
        self.book = f"book_{self.evt.name}"
        self.scheduled_only = status_in(
            ["scheduled"], f"only a scheduled {self.evt.label} can be changed"
        )
        self.no_clash = once(
            [self.res_ref, "start"],
            f"the {self.res.label} already has a {self.evt.label} at that time",
            ["scheduled"],
        )


def core(d: Scheduling) -> None:
    per, res, evt = d.per, d.res, d.evt
    organizer = f"organizer_{per.name}_id" if per.name != "organizer" else "organizer_id"
    d.person = person_entity(per, d.px[0], FieldSpec(name="phone", type="str", generator="phone"))
    d.room = noun_entity(
        res,
        d.px[1],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="choice",
                values=[label(r) for r in d.vocab["resources"]],
            ),
        ],
    )
    d.event = noun_entity(
        evt,
        d.px[2],
        [
            ref_field(per.name, organizer),
            ref_field(res.name),
            FieldSpec(name="title", type="str"),
            FieldSpec(name="start", type="datetime"),
        ],
        statuses=EVENT_STATUSES,
        transitions={"scheduled": ["completed", "cancelled"]},
    )
    d.entities += [d.person, d.room, d.event]
    d.tools += [
        find_by_email(d.person, f"Find a {per.label} by email address."),
        find_by_name(d.room, f"Find a {res.label} by name."),
        list_tool(
            f"list_{res.name}_{evt.plural}",
            d.event,
            f"List the {evt.plural_label} in a {res.label}, optionally with one status.",
            ref(d.room),
            status_filter(EVENT_STATUSES, evt.plural_label),
        ),
        list_tool(
            f"list_{per.name}_{evt.plural}",
            d.event,
            f"List the {evt.plural_label} a {per.label} organises.",
            ref(d.person, organizer, f"Id of the {per.label} who organises them."),
        ),
        get_tool(d.event),
        create_tool(
            d.book,
            d.event,
            f"Book a {evt.label} in a {res.label} at a free start time.",
            [
                ref(d.person, organizer, f"Id of the {per.label} who organises it."),
                ref(d.room),
                text("title", f"Title of the {evt.label}."),
                text("start", "Start time (YYYY-MM-DDTHH:MM); events last one hour."),
            ],
            guards=[d.no_clash],
        ),
        transition_tool(
            "cancel", d.event, "cancelled", ["scheduled"], f"Cancel a scheduled {evt.label}."
        ),
        transition_tool(
            "complete",
            d.event,
            "completed",
            ["scheduled"],
            f"Mark a scheduled {evt.label} as held.",
        ),
    ]
    d.rules += [
        f"A {res.label} holds at most one scheduled {evt.label} per start time.",
        f"Only a scheduled {evt.label} can be cancelled or completed.",
    ]


@optional.feature
def kinds(d: Scheduling) -> None:
    """An event says what kind it is."""
    kinds = [label(k) for k in d.vocab["kinds"]]
    d.add_field(
        d.event,
        enum_field("kind", kinds),
        create=d.book,
        arg=choice("kind", f"What kind of {d.evt.label}.", kinds),
    )


@optional.feature
def capacity(d: Scheduling) -> None:
    """A room holds so many people; an event has no more attendees than that."""
    res = d.res
    d.room.fields.append(FieldSpec(name="capacity", type="int", generator="capacity"))
    d.add_field(
        d.event,
        FieldSpec(name="attendees", type="int"),
        create=d.book,
        arg=value("attendees", "integer", "How many people attend.", minimum=1),
    )
    d.guard(
        d.book,
        positive("attendees", "attendees must be at least 1"),
        covers(
            d.res_ref, "capacity", "attendees", f"the {res.label} is too small for that many people"
        ),
        rule=f"A {d.evt.label} cannot have more attendees than its {res.label} holds.",
    )


@optional.feature
def recurring(d: Scheduling) -> None:
    """An event repeats daily, weekly, monthly or not at all, changeable while scheduled."""
    evt = d.evt
    d.add_field(
        d.event,
        enum_field("repeat", REPEATS),
        create=d.book,
        arg=choice("repeat", "How it recurs.", REPEATS),
    )
    d.tools.append(
        update_tool(
            f"change_{evt.name}_recurrence",
            d.event,
            choice("repeat", "How it recurs from now on.", REPEATS),
            f"Change how a scheduled {evt.label} recurs.",
            guards=[d.scheduled_only],
        )
    )
    d.rules.append(f"A {evt.label} repeats daily, weekly, monthly or not at all.")


@optional.feature
def reschedule(d: Scheduling) -> None:
    """A scheduled event moves to another start time its room is free at."""
    evt, res = d.evt, d.res
    d.tools.append(
        update_tool(
            f"reschedule_{evt.name}",
            d.event,
            text("start", "The new start time (YYYY-MM-DDTHH:MM)."),
            f"Move a scheduled {evt.label} to another start time in the same {res.label}.",
            guards=[d.scheduled_only, d.no_clash],
        )
    )
    d.rules.append(f"A {evt.label} can only be moved to a time its {res.label} is free.")


@optional.feature
def rename(d: Scheduling) -> None:
    """A scheduled event gets a new title."""
    d.tools.append(
        update_tool(
            f"rename_{d.evt.name}",
            d.event,
            text("title", "The new title."),
            f"Change the title of a scheduled {d.evt.label}.",
            guards=[d.scheduled_only],
        )
    )


@optional.feature
def closures(d: Scheduling) -> None:
    """A room is closed to new bookings and reopened."""
    res = d.res
    add_lifecycle(d.room, ["open", "closed"], {"open": ["closed"], "closed": ["open"]})
    d.guard(
        d.book,
        ref_is(d.res_ref, "status", "open", f"the {res.label} is closed"),
        rule=f"A closed {res.label} takes no new {d.evt.plural_label}.",
    )
    d.tools += [
        transition_tool(
            "close", d.room, "closed", ["open"], f"Close a {res.label} to new bookings."
        ),
        transition_tool("reopen", d.room, "open", ["closed"], f"Reopen a closed {res.label}."),
    ]


@optional.feature
def invitations(d: Scheduling) -> None:
    """People are invited to a scheduled event (once each) and accept or decline."""
    per, evt = d.per, d.evt
    invitation = entity(
        "invitation",
        "invitation",
        d.px[3],
        [ref_field(evt.name), ref_field(per.name)],
        statuses=INVITATION_STATUSES,
    )
    d.entities.append(invitation)
    d.tools += [
        create_tool(
            f"invite_{per.name}",
            invitation,
            f"Invite a {per.label} to a scheduled {evt.label} (once).",
            [ref(d.event), ref(d.person)],
            guards=[
                ref_is(
                    d.evt_ref,
                    "status",
                    "scheduled",
                    f"only a scheduled {evt.label} takes invitations",
                ),
                once([d.evt_ref, f"{per.name}_id"], f"that {per.label} is already invited"),
            ],
        ),
        list_tool(
            f"list_{per.name}_invitations",
            invitation,
            f"List the invitations of a {per.label}, optionally with one status.",
            ref(d.person),
            status_filter(INVITATION_STATUSES, "invitations"),
        ),
        transition_tool(
            "accept", invitation, "accepted", ["invited"], "Accept an open invitation."
        ),
        transition_tool(
            "decline", invitation, "declined", ["invited"], "Decline an open invitation."
        ),
    ]
    d.rules.append(f"A {per.label} is invited to a {evt.label} at most once.")


@optional.feature
def reminders(d: Scheduling) -> None:
    """Reminders some minutes before a scheduled event, each lead time once."""
    evt = d.evt
    reminder = entity(
        "reminder",
        "reminder",
        d.px[4],
        [ref_field(evt.name), enum_field("minutes_before", REMINDERS)],
    )
    d.entities.append(reminder)
    d.tools += [
        create_tool(
            f"set_{evt.name}_reminder",
            reminder,
            f"Set a reminder some minutes before a scheduled {evt.label}.",
            [ref(d.event), choice("minutes_before", "Minutes before the start.", REMINDERS)],
            guards=[
                ref_is(
                    d.evt_ref,
                    "status",
                    "scheduled",
                    f"only a scheduled {evt.label} takes reminders",
                ),
                once([d.evt_ref, "minutes_before"], "that reminder is already set"),
            ],
        ),
        list_tool(
            f"list_{evt.name}_reminders",
            reminder,
            f"List the reminders of a {evt.label}.",
            ref(d.event),
        ),
    ]


@register_archetype("scheduling")
def build_scheduling_spec(topic: Topic) -> EnvSpec:
    d = Scheduling(topic)
    core(d)
    optional.apply(d)
    return d.spec()
