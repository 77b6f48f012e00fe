"""Scheduling archetype: people book events in rooms; a room holds one scheduled event per start.

Optional features (per topic): room capacity, recurring events, invitations that attendees
accept or decline, reminders, rescheduling (which must not clash either), room closures,
event kinds and renaming.
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.features import choose_features
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, label, noun
from synthesis.environments.archetypes.parts import find_tool, person_entity
from synthesis.environments.archetypes.toolkit import (
    get_tool,
    list_tool,
    ref,
    status_filter,
    transition_tool,
    update_tool,
    value,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Precondition, ToolSpec, Topic

FEATURES = (
    "capacity",
    "recurring",
    "invitations",
    "reminders",
    "reschedule",
    "closures",
    "kinds",
    "rename",
)
EVENT_STATUSES = ["scheduled", "cancelled", "completed"]
REPEATS = ["none", "daily", "weekly", "monthly"]
REMINDERS = ["10", "30", "60", "1440"]


@register_archetype("scheduling")
def build_scheduling_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    per, res, evt = (noun(vocab, key) for key in ("person", "resource", "event"))
    per_px, res_px, evt_px, inv_px, rem_px = assign_prefixes(
        [per.name, res.name, evt.name, "invitation", "reminder"]
    )
    person = person_entity(per, per_px, FieldSpec(name="phone", type="str", generator="phone"))
    room_fields = [
        FieldSpec(
            name="name",
            type="str",
            unique=True,
            generator="choice",
            values=[label(r) for r in vocab["resources"]],
        )
    ]
    if "capacity" in features:
        room_fields.append(FieldSpec(name="capacity", type="int", generator="capacity"))
    room_transitions: dict[str, list[str]] = {}
    if "closures" in features:
        room_fields.append(FieldSpec(name="status", type="enum", values=["open", "closed"]))
        room_transitions = {"open": ["closed"], "closed": ["open"]}
    room = EntitySpec(
        name=res.name,
        collection=res.plural,
        id_prefix=res_px,
        label=res.label,
        lookup_field="name",
        fields=room_fields,
        status_field="status" if "closures" in features else None,
        initial_status="open" if "closures" in features else None,
        transitions=room_transitions,
    )

    organizer = f"organizer_{per.name}_id" if per.name != "organizer" else "organizer_id"
    event_fields = [
        FieldSpec(name=organizer, type="ref", ref=per.name),
        FieldSpec(name=f"{res.name}_id", type="ref", ref=res.name),
        FieldSpec(name="title", type="str"),
        FieldSpec(name="start", type="datetime"),
        FieldSpec(name="status", type="enum", values=EVENT_STATUSES),
    ]
    create_params = [
        ref(person, organizer, f"Id of the {per.label} who organises it."),
        ref(room),
        value("title", "string", f"Title of the {evt.label}."),
        value("start", "string", "Start time (YYYY-MM-DDTHH:MM); events last one hour."),
    ]
    guards = [
        Precondition(
            kind="no_conflict",
            values=[f"{res.name}_id", "start"],
            value=["scheduled"],
            error=f"the {res.label} already has a {evt.label} at that time",
        )
    ]
    rules = [
        f"A {res.label} holds at most one scheduled {evt.label} per start time.",
        f"Only a scheduled {evt.label} can be cancelled or completed.",
    ]
    if "kinds" in features:
        kinds = [label(k) for k in vocab["kinds"]]
        event_fields.append(FieldSpec(name="kind", type="enum", values=kinds))
        create_params.append(value("kind", "string", f"What kind of {evt.label}.", enum=kinds))
    if "capacity" in features:
        event_fields.append(FieldSpec(name="attendees", type="int"))
        create_params.append(value("attendees", "integer", "How many people attend.", minimum=1))
        guards += [
            Precondition(
                kind="param_positive", param="attendees", error="attendees must be at least 1"
            ),
            Precondition(
                kind="ref_field_gte_param",
                param=f"{res.name}_id",
                field="capacity",
                other="attendees",
                error=f"the {res.label} is too small for that many people",
            ),
        ]
        rules.append(f"A {evt.label} cannot have more attendees than its {res.label} holds.")
    if "recurring" in features:
        event_fields.append(FieldSpec(name="repeat", type="enum", values=REPEATS))
        create_params.append(value("repeat", "string", "How it recurs.", enum=REPEATS))
    if "closures" in features:
        guards.append(
            Precondition(
                kind="ref_field_equals",
                param=f"{res.name}_id",
                field="status",
                value="open",
                error=f"the {res.label} is closed",
            )
        )
        rules.append(f"A closed {res.label} takes no new {evt.plural_label}.")
    event = EntitySpec(
        name=evt.name,
        collection=evt.plural,
        id_prefix=evt_px,
        label=evt.label,
        status_field="status",
        initial_status="scheduled",
        transitions={"scheduled": ["completed", "cancelled"]},
        fields=event_fields,
    )
    entities = [person, room, event]
    scheduled_only = [
        Precondition(
            kind="status_in",
            values=["scheduled"],
            error=f"only a scheduled {evt.label} can be changed",
        )
    ]
    tools: list[ToolSpec] = [
        find_tool(person, f"Find a {per.label} by email address.", "Email address."),
        find_tool(room, f"Find a {res.label} by name.", f"The {res.label}'s name."),
        list_tool(
            f"list_{res.name}_{evt.plural}",
            event,
            f"List the {evt.plural_label} in a {res.label}, optionally with one status.",
            ref(room),
            status_filter(EVENT_STATUSES, evt.plural_label),
        ),
        list_tool(
            f"list_{per.name}_{evt.plural}",
            event,
            f"List the {evt.plural_label} a {per.label} organises.",
            ref(person, organizer, f"Id of the {per.label} who organises them."),
        ),
        get_tool(event),
        ToolSpec(
            name=f"book_{evt.name}",
            kind="mutate",
            operation="create",
            entity=evt.name,
            description=f"Book a {evt.label} in a {res.label} at a free start time.",
            params=create_params,
            preconditions=guards,
        ),
        transition_tool(
            "cancel", event, "cancelled", ["scheduled"], f"Cancel a scheduled {evt.label}."
        ),
        transition_tool(
            "complete",
            event,
            "completed",
            ["scheduled"],
            f"Mark a scheduled {evt.label} as held.",
        ),
    ]
    if "recurring" in features:
        tools.append(
            update_tool(
                f"change_{evt.name}_recurrence",
                event,
                value("repeat", "string", "How it recurs from now on.", enum=REPEATS),
                f"Change how a scheduled {evt.label} recurs.",
                guards=scheduled_only,
            )
        )
        rules.append(f"A {evt.label} repeats daily, weekly, monthly or not at all.")
    if "reschedule" in features:
        tools.append(
            update_tool(
                f"reschedule_{evt.name}",
                event,
                value("start", "string", "The new start time (YYYY-MM-DDTHH:MM)."),
                f"Move a scheduled {evt.label} to another start time in the same {res.label}.",
                guards=[
                    *scheduled_only,
                    Precondition(
                        kind="no_conflict",
                        values=[f"{res.name}_id", "start"],
                        value=["scheduled"],
                        error=f"the {res.label} already has a {evt.label} at that time",
                    ),
                ],
            )
        )
        rules.append(f"A {evt.label} can only be moved to a time its {res.label} is free.")
    if "rename" in features:
        tools.append(
            update_tool(
                f"rename_{evt.name}",
                event,
                value("title", "string", "The new title."),
                f"Change the title of a scheduled {evt.label}.",
                guards=scheduled_only,
            )
        )
    if "closures" in features:
        tools += [
            transition_tool(
                "close", room, "closed", ["open"], f"Close a {res.label} to new bookings."
            ),
            transition_tool("reopen", room, "open", ["closed"], f"Reopen a closed {res.label}."),
        ]
    if "invitations" in features:
        invitation = EntitySpec(
            name="invitation",
            collection="invitations",
            id_prefix=inv_px,
            label="invitation",
            status_field="status",
            initial_status="invited",
            transitions={"invited": ["accepted", "declined"]},
            fields=[
                FieldSpec(name=f"{evt.name}_id", type="ref", ref=evt.name),
                FieldSpec(name=f"{per.name}_id", type="ref", ref=per.name),
                FieldSpec(name="status", type="enum", values=["invited", "accepted", "declined"]),
            ],
        )
        entities.append(invitation)
        tools += [
            ToolSpec(
                name=f"invite_{per.name}",
                kind="mutate",
                operation="create",
                entity="invitation",
                description=f"Invite a {per.label} to a scheduled {evt.label} (once).",
                params=[ref(event), ref(person)],
                preconditions=[
                    Precondition(
                        kind="ref_field_equals",
                        param=f"{evt.name}_id",
                        field="status",
                        value="scheduled",
                        error=f"only a scheduled {evt.label} takes invitations",
                    ),
                    Precondition(
                        kind="no_conflict",
                        values=[f"{evt.name}_id", f"{per.name}_id"],
                        error=f"that {per.label} is already invited",
                    ),
                ],
            ),
            list_tool(
                f"list_{per.name}_invitations",
                invitation,
                f"List the invitations of a {per.label}, optionally with one status.",
                ref(person),
                status_filter(["invited", "accepted", "declined"], "invitations"),
            ),
            transition_tool(
                "accept", invitation, "accepted", ["invited"], "Accept an open invitation."
            ),
            transition_tool(
                "decline", invitation, "declined", ["invited"], "Decline an open invitation."
            ),
        ]
        rules.append(f"A {per.label} is invited to a {evt.label} at most once.")
    if "reminders" in features:
        reminder = EntitySpec(
            name="reminder",
            collection="reminders",
            id_prefix=rem_px,
            label="reminder",
            fields=[
                FieldSpec(name=f"{evt.name}_id", type="ref", ref=evt.name),
                FieldSpec(name="minutes_before", type="enum", values=REMINDERS),
            ],
        )
        entities.append(reminder)
        tools += [
            ToolSpec(
                name=f"set_{evt.name}_reminder",
                kind="mutate",
                operation="create",
                entity="reminder",
                description=f"Set a reminder some minutes before a scheduled {evt.label}.",
                params=[
                    ref(event),
                    value(
                        "minutes_before",
                        "string",
                        "Minutes before the start.",
                        enum=REMINDERS,
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="ref_field_equals",
                        param=f"{evt.name}_id",
                        field="status",
                        value="scheduled",
                        error=f"only a scheduled {evt.label} takes reminders",
                    ),
                    Precondition(
                        kind="no_conflict",
                        values=[f"{evt.name}_id", "minutes_before"],
                        error="that reminder is already set",
                    ),
                ],
            ),
            list_tool(
                f"list_{evt.name}_reminders",
                reminder,
                f"List the reminders of a {evt.label}.",
                ref(event),
            ),
        ]
    return EnvSpec(
        env_id=f"{topic.topic_id}-scheduling",
        topic_id=topic.topic_id,
        archetype="scheduling",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
