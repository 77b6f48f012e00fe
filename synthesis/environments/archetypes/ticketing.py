"""Ticketing archetype: requesters open tickets, agents are assigned, tickets move to resolved.

Optional features (per topic): priorities, escalation (only high-priority tickets), SLA due
dates, internal notes, tags, agent workload (hours an assignment takes from an agent), reopening
and satisfaction ratings (one per resolved ticket).
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, label, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    adjust,
    choice,
    covers,
    create_tool,
    entity,
    enum_field,
    field_in,
    find_by_email,
    get_tool,
    list_tool,
    noun_entity,
    once,
    person_entity,
    positive,
    ref,
    ref_field,
    ref_in,
    status_filter,
    status_in,
    text,
    transition_tool,
    update_tool,
    value,
    words,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Precondition, Topic

FEATURES = ("priorities", "escalation", "sla", "notes", "tags", "workload", "reopen", "ratings")
optional = FeatureSet("ticketing", FEATURES, at_least=3)
PRIORITIES = ["low", "normal", "high", "urgent"]
URGENT = ["high", "urgent"]
SCORES = ["1", "2", "3", "4", "5"]


class Ticketing(SpecDraft):
    """A ticketing spec being built: the topic's words, then the records `core` makes."""

    requester: EntitySpec
    agent: EntitySpec
    ticket: EntitySpec
    assignment: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.req, self.agt, self.tkt = (
            noun(self.vocab, k) for k in ("requester", "agent", "ticket")
        )
        self.categories = [label(c) for c in self.vocab["categories"]]
        self.px = assign_prefixes(
            [self.req.name, self.agt.name, self.tkt.name, "assignment", "note", "rating"]
        )
        self.tkt_ref, self.agt_ref = f"{self.tkt.name}_id", f"{self.agt.name}_id"
        self.open, self.assign = f"open_{self.tkt.name}", f"assign_{self.tkt.name}"
        # Escalation adds a status that the core's guards, filters and rules quote.
        self.statuses = ["open", "active", "resolved", "closed"]
        if self.has("escalation"):
            self.statuses.insert(2, "escalated")
        # Tickets still being worked on: they take assignments, new priorities and due dates.
        self.working = [s for s in ("open", "active", "escalated") if s in self.statuses]


def while_working(d: Ticketing, done: str) -> Precondition:
    return status_in(d.working, f"only {a(words(d.working))} {d.tkt.label} can be {done}")


def core(d: Ticketing) -> None:
    req, agt, tkt = d.req, d.agt, d.tkt
    transitions = {"open": ["active"], "active": ["resolved"], "resolved": ["closed"]}
    if d.has("escalation"):
        transitions["active"] = ["resolved", "escalated"]
        transitions["escalated"] = ["resolved"]
    d.requester = person_entity(
        req, d.px[0], FieldSpec(name="phone", type="str", generator="phone")
    )
    d.agent = person_entity(agt, d.px[1], enum_field("team", [label(t) for t in d.vocab["teams"]]))
    d.ticket = noun_entity(
        tkt,
        d.px[2],
        [
            ref_field(req.name),
            FieldSpec(name="subject", type="str"),
            enum_field("category", d.categories),
        ],
        statuses=d.statuses,
        transitions=transitions,
    )
    d.assignment = entity(
        "assignment", "assignment", d.px[3], [ref_field(tkt.name), ref_field(agt.name)]
    )
    d.entities += [d.requester, d.agent, d.ticket, d.assignment]
    working = words(d.working)
    d.tools += [
        find_by_email(d.requester, f"Find a {req.label} by email address."),
        find_by_email(d.agent, f"Find a {agt.label} by email address."),
        list_tool(
            f"list_{tkt.plural}",
            d.ticket,
            f"List the {tkt.plural_label} a {req.label} opened, optionally with one status.",
            ref(d.requester),
            status_filter(d.statuses, tkt.plural_label),
        ),
        get_tool(d.ticket),
        create_tool(
            d.open,
            d.ticket,
            f"Open a new {tkt.label} for a {req.label}.",
            [
                ref(d.requester),
                text("subject", f"Short subject of the {tkt.label}."),
                choice("category", "Category of the request.", d.categories),
            ],
        ),
        create_tool(
            d.assign,
            d.assignment,
            f"Assign a {agt.label} to a {tkt.label} that is still being worked on.",
            [ref(d.ticket), ref(d.agent)],
            guards=[
                ref_in(
                    d.tkt_ref, "status", d.working, f"only {a(working)} {tkt.label} can be assigned"
                ),
                once(
                    [d.tkt_ref, d.agt_ref],
                    f"that {agt.label} is already assigned to this {tkt.label}",
                ),
            ],
        ),
        list_tool(
            f"list_{agt.name}_assignments",
            d.assignment,
            f"List the assignments of a {agt.label}.",
            ref(d.agent),
        ),
        transition_tool(
            "start", d.ticket, "active", ["open"], f"Start work on an open {tkt.label}."
        ),
        transition_tool(
            "resolve",
            d.ticket,
            "resolved",
            [s for s in ("active", "escalated") if s in d.statuses],
            f"Mark a {tkt.label} that is active as resolved.",
        ),
        transition_tool(
            "close", d.ticket, "closed", ["resolved"], f"Close a resolved {tkt.label}."
        ),
    ]
    d.rules += [
        f"A new {tkt.label} is open; work starts, it is resolved, then closed.",
        f"Only a {working} {tkt.label} can get an assignment, and one {agt.label} is assigned to "
        f"a {tkt.label} at most once.",
    ]


@optional.feature
def escalation(d: Ticketing) -> None:
    """An active ticket is escalated to the next support tier (only an urgent one, where
    tickets have priorities); its status is laid out by the core."""
    tkt, guards = d.tkt, []
    if d.has("priorities"):
        guards.append(
            field_in("priority", URGENT, f"only a high or urgent {tkt.label} can be escalated")
        )
        d.rules.append(f"Only high or urgent {tkt.plural_label} can be escalated.")
    d.tools.append(
        transition_tool(
            "escalate",
            d.ticket,
            "escalated",
            ["active"],
            f"Escalate a {tkt.label} that is active to the next support tier.",
            guards=guards,
        )
    )


@optional.feature
def reopen(d: Ticketing) -> None:
    """A resolved ticket is reopened until it is closed."""
    d.ticket.transitions["resolved"].append("open")
    d.tools.append(
        transition_tool(
            "reopen", d.ticket, "open", ["resolved"], f"Reopen a resolved {d.tkt.label}."
        )
    )
    d.rules.append(f"A resolved {d.tkt.label} can be reopened until it is closed.")


@optional.feature
def priorities(d: Ticketing) -> None:
    """A priority chosen when opening, changed while the ticket is worked on."""
    tkt = d.tkt
    d.add_field(
        d.ticket,
        enum_field("priority", PRIORITIES),
        create=d.open,
        arg=choice("priority", "How urgent it is.", PRIORITIES),
    )
    d.tools.append(
        update_tool(
            f"change_{tkt.name}_priority",
            d.ticket,
            choice("priority", "The new priority.", PRIORITIES),
            f"Change the priority of a {tkt.label} that is not resolved yet.",
            guards=[while_working(d, "reprioritised")],
        )
    )


@optional.feature
def tags(d: Ticketing) -> None:
    """A tag for reporting, chosen when opening and changeable."""
    tags = [label(t) for t in d.vocab["tags"]]
    d.add_field(
        d.ticket,
        enum_field("tag", tags),
        create=d.open,
        arg=choice("tag", "A tag for reporting.", tags),
    )
    d.tools.append(
        update_tool(
            f"retag_{d.tkt.name}",
            d.ticket,
            choice("tag", "The new tag.", tags),
            f"Change the tag of a {d.tkt.label}.",
        )
    )


@optional.feature
def sla(d: Ticketing) -> None:
    """Every ticket carries the date it must be resolved by, movable while it is worked on."""
    tkt = d.tkt
    d.add_field(
        d.ticket,
        FieldSpec(name="due_at", type="datetime"),
        create=d.open,
        arg=text("due_at", "When it must be resolved (YYYY-MM-DDTHH:MM)."),
    )
    d.tools += [
        update_tool(
            f"extend_{tkt.name}_due_date",
            d.ticket,
            text("due_at", "The new due date (YYYY-MM-DDTHH:MM)."),
            f"Move the due date of a {tkt.label} that is not resolved yet.",
            guards=[while_working(d, "given a new due date")],
        ),
        list_tool(
            f"list_{tkt.plural}_by_category",
            d.ticket,
            f"List {tkt.plural_label} in one category, optionally with one status.",
            choice("category", "The category.", d.categories),
            status_filter(d.statuses, tkt.plural_label),
        ),
    ]
    d.rules.append(f"Every {tkt.label} carries the date by which it must be resolved.")


@optional.feature
def workload(d: Ticketing) -> None:
    """An assignment takes hours from the agent's free hours, never more than are free."""
    agt = d.agt
    d.agent.fields.append(FieldSpec(name="hours_free", type="int", generator="hours_free"))
    d.add_field(
        d.assignment,
        FieldSpec(name="hours", type="int", generator="quantity"),
        create=d.assign,
        arg=value("hours", "integer", "Hours of work the assignment takes.", minimum=1),
    )
    d.guard(
        d.assign,
        positive("hours", "hours must be at least 1"),
        covers(
            d.agt_ref, "hours_free", "hours", f"the {agt.label} does not have that many free hours"
        ),
    )
    d.tool(d.assign).effects.append(adjust(d.agt_ref, "hours_free", "hours", -1))
    d.rules.append(
        f"An assignment takes hours from the {agt.label}'s free hours, and cannot take more than "
        "are free."
    )


@optional.feature
def notes(d: Ticketing) -> None:
    """Agents add internal or public notes until a ticket is closed."""
    tkt, visibility = d.tkt, ["internal", "public"]
    note = entity(
        "note",
        "note",
        d.px[4],
        [
            ref_field(tkt.name),
            ref_field(d.agt.name),
            FieldSpec(name="body", type="str"),
            enum_field("visibility", visibility),
        ],
    )
    d.entities.append(note)
    d.tools += [
        create_tool(
            f"add_{tkt.name}_note",
            note,
            f"Add a note by a {d.agt.label} to a {tkt.label} that is not closed.",
            [
                ref(d.ticket),
                ref(d.agent),
                text("body", "The note text."),
                choice("visibility", "internal (staff only) or public.", visibility),
            ],
            guards=[
                ref_in(
                    d.tkt_ref,
                    "status",
                    [s for s in d.statuses if s != "closed"],
                    f"a closed {tkt.label} takes no notes",
                )
            ],
        ),
        list_tool(
            f"list_{tkt.name}_notes", note, f"List the notes on a {tkt.label}.", ref(d.ticket)
        ),
    ]
    d.rules.append(f"Notes can be added until a {tkt.label} is closed.")


@optional.feature
def ratings(d: Ticketing) -> None:
    """The requester rates a resolved or closed ticket, once."""
    tkt = d.tkt
    rating = entity(
        "rating", "satisfaction rating", d.px[5], [ref_field(tkt.name), enum_field("score", SCORES)]
    )
    d.entities.append(rating)
    d.tools.append(
        create_tool(
            f"rate_{tkt.name}",
            rating,
            f"Record the {d.req.label}'s satisfaction with a resolved or closed {tkt.label} (once "
            f"per {tkt.label}).",
            [ref(d.ticket), choice("score", "1 (poor) to 5 (excellent).", SCORES)],
            guards=[
                ref_in(
                    d.tkt_ref,
                    "status",
                    ["resolved", "closed"],
                    f"only a resolved or closed {tkt.label} can be rated",
                ),
                once([d.tkt_ref], f"this {tkt.label} is already rated"),
            ],
        )
    )
    d.rules.append(f"A {tkt.label} is rated at most once, after it is resolved.")


@register_archetype("ticketing")
def build_ticketing_spec(topic: Topic) -> EnvSpec:
    d = Ticketing(topic)
    core(d)
    optional.apply(d)
    return d.spec()
