"""Ticketing archetype: requesters open tickets, agents are assigned, tickets move to resolved.

Optional features (per topic): priorities, escalation (only high-priority tickets), SLA due
dates, internal notes, tags, agent workload (hours an assignment takes from an agent), reopening
and satisfaction ratings (one per resolved ticket).
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.features import choose_features
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, label, noun
from synthesis.environments.archetypes.parts import a, find_tool, person_entity
from synthesis.environments.archetypes.toolkit import (
    get_tool,
    list_tool,
    ref,
    status_filter,
    transition_tool,
    update_tool,
    value,
    words,
)
from synthesis.models import (
    Effect,
    EntitySpec,
    EnvSpec,
    FieldSpec,
    Precondition,
    ToolSpec,
    Topic,
)

FEATURES = (
    "priorities",
    "escalation",
    "sla",
    "notes",
    "tags",
    "workload",
    "reopen",
    "ratings",
)
PRIORITIES = ["low", "normal", "high", "urgent"]
URGENT = ["high", "urgent"]


@register_archetype("ticketing")
def build_ticketing_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    req, agt, tkt = (noun(vocab, key) for key in ("requester", "agent", "ticket"))
    categories = [label(c) for c in vocab["categories"]]
    teams = [label(t) for t in vocab["teams"]]
    req_px, agt_px, tkt_px, asg_px, note_px, rat_px = assign_prefixes(
        [req.name, agt.name, tkt.name, "assignment", "note", "rating"]
    )

    requester = person_entity(req, req_px, FieldSpec(name="phone", type="str", generator="phone"))
    agent_fields = [
        FieldSpec(name="name", type="str", generator="person_name"),
        FieldSpec(name="email", type="str", generator="email", unique=True),
        FieldSpec(name="team", type="enum", values=teams),
    ]
    if "workload" in features:
        agent_fields.append(FieldSpec(name="hours_free", type="int", generator="hours_free"))
    agent = EntitySpec(
        name=agt.name,
        collection=agt.plural,
        id_prefix=agt_px,
        label=agt.label,
        lookup_field="email",
        fields=agent_fields,
    )

    statuses = ["open", "active", "resolved", "closed"]
    transitions: dict[str, list[str]] = {
        "open": ["active"],
        "active": ["resolved"],
        "resolved": ["closed"],
    }
    if "escalation" in features:
        statuses.insert(2, "escalated")
        transitions["active"] = ["resolved", "escalated"]
        transitions["escalated"] = ["resolved"]
    if "reopen" in features:
        transitions["resolved"] = ["closed", "open"]
    working = [s for s in ("open", "active", "escalated") if s in statuses]

    ticket_fields = [
        FieldSpec(name=f"{req.name}_id", type="ref", ref=req.name),
        FieldSpec(name="subject", type="str"),
        FieldSpec(name="category", type="enum", values=categories),
        FieldSpec(name="status", type="enum", values=statuses),
    ]
    create_params = [
        ref(requester),
        value("subject", "string", f"Short subject of the {tkt.label}."),
        value("category", "string", "Category of the request.", enum=categories),
    ]
    if "priorities" in features:
        ticket_fields.append(FieldSpec(name="priority", type="enum", values=PRIORITIES))
        create_params.append(value("priority", "string", "How urgent it is.", enum=PRIORITIES))
    if "tags" in features:
        tags = [label(t) for t in vocab["tags"]]
        ticket_fields.append(FieldSpec(name="tag", type="enum", values=tags))
        create_params.append(value("tag", "string", "A tag for reporting.", enum=tags))
    if "sla" in features:
        ticket_fields.append(FieldSpec(name="due_at", type="datetime"))
        create_params.append(
            value("due_at", "string", "When it must be resolved (YYYY-MM-DDTHH:MM).")
        )
    ticket = EntitySpec(
        name=tkt.name,
        collection=tkt.plural,
        id_prefix=tkt_px,
        label=tkt.label,
        status_field="status",
        initial_status="open",
        transitions=transitions,
        fields=ticket_fields,
    )

    assignment_fields = [
        FieldSpec(name=f"{tkt.name}_id", type="ref", ref=tkt.name),
        FieldSpec(name=f"{agt.name}_id", type="ref", ref=agt.name),
    ]
    assign_params = [ref(ticket), ref(agent)]
    assign_guards = [
        Precondition(
            kind="ref_field_in",
            param=f"{tkt.name}_id",
            field="status",
            values=working,
            error=f"only {a(words(working))} {tkt.label} can be assigned",
        ),
        Precondition(
            kind="no_conflict",
            values=[f"{tkt.name}_id", f"{agt.name}_id"],
            error=f"that {agt.label} is already assigned to this {tkt.label}",
        ),
    ]
    assign_effects: list[Effect] = []
    if "workload" in features:
        assignment_fields.append(FieldSpec(name="hours", type="int", generator="quantity"))
        assign_params.append(
            value("hours", "integer", "Hours of work the assignment takes.", minimum=1)
        )
        assign_guards += [
            Precondition(kind="param_positive", param="hours", error="hours must be at least 1"),
            Precondition(
                kind="ref_field_gte_param",
                param=f"{agt.name}_id",
                field="hours_free",
                other="hours",
                error=f"the {agt.label} does not have that many free hours",
            ),
        ]
        assign_effects.append(
            Effect(
                kind="adjust_ref_field",
                via=f"{agt.name}_id",
                field="hours_free",
                by_field="hours",
                sign=-1,
            )
        )
    assignment = EntitySpec(
        name="assignment",
        collection="assignments",
        id_prefix=asg_px,
        label="assignment",
        fields=assignment_fields,
    )
    entities = [requester, agent, ticket, assignment]

    tools: list[ToolSpec] = [
        find_tool(requester, f"Find a {req.label} by email address.", "Email address."),
        find_tool(agent, f"Find a {agt.label} by email address.", "Email address."),
        list_tool(
            f"list_{tkt.plural}",
            ticket,
            f"List the {tkt.plural_label} a {req.label} opened, optionally with one status.",
            ref(requester),
            status_filter(statuses, tkt.plural_label),
        ),
        get_tool(ticket),
        ToolSpec(
            name=f"open_{tkt.name}",
            kind="mutate",
            operation="create",
            entity=tkt.name,
            description=f"Open a new {tkt.label} for a {req.label}.",
            params=create_params,
        ),
        ToolSpec(
            name=f"assign_{tkt.name}",
            kind="mutate",
            operation="create",
            entity="assignment",
            description=f"Assign a {agt.label} to a {tkt.label} that is still being worked on.",
            params=assign_params,
            preconditions=assign_guards,
            effects=assign_effects,
        ),
        list_tool(
            f"list_{agt.name}_assignments",
            assignment,
            f"List the assignments of a {agt.label}.",
            ref(agent),
        ),
        transition_tool("start", ticket, "active", ["open"], f"Start work on an open {tkt.label}."),
        transition_tool(
            "resolve",
            ticket,
            "resolved",
            [s for s in ("active", "escalated") if s in statuses],
            f"Mark a {tkt.label} that is active as resolved.",
        ),
        transition_tool("close", ticket, "closed", ["resolved"], f"Close a resolved {tkt.label}."),
    ]
    rules = [
        f"A new {tkt.label} is open; work starts, it is resolved, then closed.",
        f"Only a {words(working)} {tkt.label} can get an assignment, "
        f"and one {agt.label} is assigned to a {tkt.label} at most once.",
    ]
    if "escalation" in features:
        guards = []
        if "priorities" in features:
            guards.append(
                Precondition(
                    kind="field_in",
                    field="priority",
                    values=URGENT,
                    error=f"only a high or urgent {tkt.label} can be escalated",
                )
            )
            rules.append(f"Only high or urgent {tkt.plural_label} can be escalated.")
        tools.append(
            transition_tool(
                "escalate",
                ticket,
                "escalated",
                ["active"],
                f"Escalate a {tkt.label} that is active to the next support tier.",
                guards=guards,
            )
        )
    if "reopen" in features:
        tools.append(
            transition_tool(
                "reopen", ticket, "open", ["resolved"], f"Reopen a resolved {tkt.label}."
            )
        )
        rules.append(f"A resolved {tkt.label} can be reopened until it is closed.")
    if "priorities" in features:
        tools.append(
            update_tool(
                f"change_{tkt.name}_priority",
                ticket,
                value("priority", "string", "The new priority.", enum=PRIORITIES),
                f"Change the priority of a {tkt.label} that is not resolved yet.",
                guards=[_working(working, tkt.label, "reprioritised")],
            )
        )
    if "tags" in features:
        tools.append(
            update_tool(
                f"retag_{tkt.name}",
                ticket,
                value("tag", "string", "The new tag.", enum=[label(t) for t in vocab["tags"]]),
                f"Change the tag of a {tkt.label}.",
            )
        )
    if "sla" in features:
        tools.append(
            update_tool(
                f"extend_{tkt.name}_due_date",
                ticket,
                value("due_at", "string", "The new due date (YYYY-MM-DDTHH:MM)."),
                f"Move the due date of a {tkt.label} that is not resolved yet.",
                guards=[_working(working, tkt.label, "given a new due date")],
            )
        )
        tools.append(
            list_tool(
                f"list_{tkt.plural}_by_category",
                ticket,
                f"List {tkt.plural_label} in one category, optionally with one status.",
                value("category", "string", "The category.", enum=categories),
                status_filter(statuses, tkt.plural_label),
            )
        )
        rules.append(f"Every {tkt.label} carries the date by which it must be resolved.")
    if "workload" in features:
        rules.append(
            f"An assignment takes hours from the {agt.label}'s free hours, "
            "and cannot take more than are free."
        )
    if "notes" in features:
        note = EntitySpec(
            name="note",
            collection="notes",
            id_prefix=note_px,
            label="note",
            fields=[
                FieldSpec(name=f"{tkt.name}_id", type="ref", ref=tkt.name),
                FieldSpec(name=f"{agt.name}_id", type="ref", ref=agt.name),
                FieldSpec(name="body", type="str"),
                FieldSpec(name="visibility", type="enum", values=["internal", "public"]),
            ],
        )
        entities.append(note)
        tools += [
            ToolSpec(
                name=f"add_{tkt.name}_note",
                kind="mutate",
                operation="create",
                entity="note",
                description=f"Add a note by a {agt.label} to a {tkt.label} that is not closed.",
                params=[
                    ref(ticket),
                    ref(agent),
                    value("body", "string", "The note text."),
                    value(
                        "visibility",
                        "string",
                        "internal (staff only) or public.",
                        enum=["internal", "public"],
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="ref_field_in",
                        param=f"{tkt.name}_id",
                        field="status",
                        values=[s for s in statuses if s != "closed"],
                        error=f"a closed {tkt.label} takes no notes",
                    )
                ],
            ),
            list_tool(
                f"list_{tkt.name}_notes", note, f"List the notes on a {tkt.label}.", ref(ticket)
            ),
        ]
        rules.append(f"Notes can be added until a {tkt.label} is closed.")
    if "ratings" in features:
        rating = EntitySpec(
            name="rating",
            collection="ratings",
            id_prefix=rat_px,
            label="satisfaction rating",
            fields=[
                FieldSpec(name=f"{tkt.name}_id", type="ref", ref=tkt.name),
                FieldSpec(name="score", type="enum", values=["1", "2", "3", "4", "5"]),
            ],
        )
        entities.append(rating)
        tools.append(
            ToolSpec(
                name=f"rate_{tkt.name}",
                kind="mutate",
                operation="create",
                entity="rating",
                description=f"Record the {req.label}'s satisfaction with a resolved "
                f"or closed {tkt.label} (once per {tkt.label}).",
                params=[
                    ref(ticket),
                    value(
                        "score",
                        "string",
                        "1 (poor) to 5 (excellent).",
                        enum=["1", "2", "3", "4", "5"],
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="ref_field_in",
                        param=f"{tkt.name}_id",
                        field="status",
                        values=["resolved", "closed"],
                        error=f"only a resolved or closed {tkt.label} can be rated",
                    ),
                    Precondition(
                        kind="no_conflict",
                        values=[f"{tkt.name}_id"],
                        error=f"this {tkt.label} is already rated",
                    ),
                ],
            )
        )
        rules.append(f"A {tkt.label} is rated at most once, after it is resolved.")

    return EnvSpec(
        env_id=f"{topic.topic_id}-ticketing",
        topic_id=topic.topic_id,
        archetype="ticketing",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )


def _working(working: list[str], ticket_label: str, done: str) -> Precondition:
    return Precondition(
        kind="status_in",
        values=working,
        error=f"only {a(words(working))} {ticket_label} can be {done}",
    )
