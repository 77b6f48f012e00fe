"""Approvals archetype: requesters submit requests with an amount; approvers whose limit covers
the amount approve them.

Optional features (per topic): drafts edited before submission, two approval levels (a
first-level role endorses, a second-level role approves), delegation (an away approver cannot
approve), comments, budgets the amount is reserved from, withdrawal, approval notes and
recategorising.
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, label, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    add_lifecycle,
    adjust,
    amount,
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
    person_entity,
    positive,
    ref,
    ref_field,
    ref_in,
    ref_is,
    set_ref,
    status_filter,
    status_in,
    text,
    transition_tool,
    update_tool,
    words,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Precondition, Topic

FEATURES = ("drafts", "multi_level", "delegation", "comments", "budgets", "withdraw",
            "approval_notes", "recategorise")  # fmt: skip
optional = FeatureSet("approvals", FEATURES, at_least=3)
LIMITS = "one_of:20,50,100,250,1000"
BUDGETS = "one_of:0,30,150,600,2500"


class Approvals(SpecDraft):
    """An approvals spec being built: the topic's words, then the records `core` makes."""

    requester: EntitySpec
    approver: EntitySpec
    request: EntitySpec
    approval: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.rq, self.ap, self.req = (
            noun(self.vocab, k) for k in ("requester", "approver", "request")
        )
        self.categories = [label(c) for c in self.vocab["categories"]]
        self.roles = [label(r) for r in self.vocab["roles"]]
        self.first_role, self.top_role = self.roles[0], self.roles[-1]
        nouns = [self.rq.name, self.ap.name, self.req.name]
        self.px = assign_prefixes(
            [*nouns, "approval", "endorsement", "budget", "comment", "delegation"]
        )
        # Two levels need two roles; a topic with one role approves at one level.
        self.two_levels = self.has("multi_level") and len(self.roles) >= 2
        # The status an approver decides on (quoted by the approve tool's guard and rules).
        self.ready = "endorsed" if self.two_levels else "submitted"
        self.req_ref, self.ap_ref = f"{self.req.name}_id", f"{self.ap.name}_id"
        self.approve, self.reject = f"approve_{self.req.name}", f"reject_{self.req.name}"
        drafts, req = self.has("drafts"), self.req.name
        self.create = f"draft_{req}" if drafts else f"submit_new_{req}"


def role_guard(d: Approvals, role: str, verb: str) -> Precondition:
    return ref_is(d.ap_ref, "role", role, f"only {a(role)} can {verb}")


def available_guard(d: Approvals) -> Precondition:
    return ref_is(d.ap_ref, "status", "available", f"the {d.ap.label} is away")


def core(d: Approvals) -> None:
    rq, ap, req, ready = d.rq, d.ap, d.req, d.ready
    # Drafts and a second level add statuses that the core's guards and filters quote.
    statuses, transitions = ["submitted", "approved", "rejected"], {"submitted": ["rejected"]}
    if d.two_levels:
        statuses.insert(1, "endorsed")
        transitions["endorsed"] = ["rejected"]
    if d.has("drafts"):
        statuses.insert(0, "draft")
        transitions["draft"] = ["submitted"]
    departments = enum_field("department", [label(x) for x in d.vocab["departments"]])
    d.requester = person_entity(rq, d.px[0], departments)
    d.approver = noun_entity(
        ap,
        d.px[1],
        lookup="email",
        fields=[
            FieldSpec(name="name", type="str", generator="person_name"),
            FieldSpec(name="email", type="str", generator="email", unique=True),
            enum_field("role", d.roles),
            FieldSpec(name="approval_limit", type="float", generator=LIMITS),
        ],
    )
    d.request = noun_entity(
        req,
        d.px[2],
        [
            ref_field(rq.name),
            FieldSpec(name="title", type="str"),
            FieldSpec(name="amount", type="float"),
            enum_field("category", d.categories),
        ],
        statuses=statuses,
        transitions=transitions,
    )
    d.approval = entity("approval", "approval", d.px[3], [ref_field(req.name), ref_field(ap.name)])
    d.entities += [d.requester, d.approver, d.request, d.approval]
    drafts = d.has("drafts")
    d.tools += [
        find_by_email(d.requester, f"Find a {rq.label} by email address."),
        find_by_email(d.approver, f"Find a {ap.label} by email address."),
        list_tool(
            f"list_{req.plural}",
            d.request,
            f"List the {req.plural_label} of a {rq.label}, optionally with one status.",
            ref(d.requester),
            status_filter(statuses, req.plural_label),
        ),
        get_tool(d.request),
        create_tool(
            d.create,
            d.request,
            f"Start a draft {req.label} for a {rq.label}."
            if drafts
            else f"Submit a new {req.label} for a {rq.label}.",
            [
                ref(d.requester),
                text("title", f"What the {req.label} is for."),
                amount("amount", "The amount asked for."),
                choice("category", "The category.", d.categories),
            ],
            guards=[positive("amount", "amount must be positive")],
        ),
        create_tool(
            d.approve,
            d.approval,
            f"Record a {ap.label}'s approval of a {ready} {req.label}.",
            [ref(d.request), ref(d.approver)],
            guards=[
                ref_is(d.req_ref, "status", ready, f"only {a(ready)} {req.label} can be approved"),
                Precondition(
                    kind="ref_field_covers",
                    param=d.ap_ref,
                    field="approval_limit",
                    other=d.req_ref,
                    other_field="amount",
                    error=f"the amount is above this {ap.label}'s approval limit",
                ),
            ],
            effects=[set_ref(d.req_ref, "status", "approved")],
        ),
        list_tool(
            f"list_{ap.name}_approvals",
            d.approval,
            f"List the approvals a {ap.label} gave.",
            ref(d.approver),
        ),
        transition_tool(
            "reject",
            d.request,
            "rejected",
            [s for s in ("submitted", "endorsed") if s in statuses],
            f"Reject a {req.label} that awaits a decision.",
        ),
    ]
    d.rules += [
        f"A {ap.label} may approve a {req.label} only when the amount is within the {ap.label}'s "
        "approval limit.",
        f"Only a {ready} {req.label} can be approved; approving it makes it approved.",
    ]


@optional.feature
def drafts(d: Approvals) -> None:
    """A request starts as a draft, edited until it is submitted."""
    req = d.req
    d.tools += [
        transition_tool(
            "submit", d.request, "submitted", ["draft"], f"Submit a draft {req.label}."
        ),
        update_tool(
            f"change_{req.name}_amount",
            d.request,
            amount("amount", "The new amount."),
            f"Change the amount of a draft {req.label}.",
            guards=[
                status_in(["draft"], f"only a draft {req.label} can be changed"),
                positive("amount", "amount must be positive"),
            ],
        ),
    ]
    d.rules.append(f"A {req.label} starts as a draft; only drafts can be edited.")


@optional.feature
def multi_level(d: Approvals) -> None:
    """Two levels: a first-level role endorses a submitted request, the top role approves it."""
    if not d.two_levels:
        return
    req, first = d.req, d.first_role
    d.guard(d.approve, role_guard(d, d.top_role, "approve"))
    endorsement = entity(
        "endorsement", "endorsement", d.px[4], [ref_field(req.name), ref_field(d.ap.name)]
    )
    d.entities.append(endorsement)
    d.tools.append(
        create_tool(
            f"endorse_{req.name}",
            endorsement,
            f"Record a {first}'s endorsement of a submitted {req.label}.",
            [ref(d.request), ref(d.approver)],
            guards=[
                ref_is(
                    d.req_ref,
                    "status",
                    "submitted",
                    f"only a submitted {req.label} can be endorsed",
                ),
                role_guard(d, first, "endorse"),
            ],
            effects=[set_ref(d.req_ref, "status", "endorsed")],
        )
    )
    d.rules.append(
        f"Two levels: a {first} endorses a submitted {req.label}, then a {d.top_role} approves it."
    )


@optional.feature
def withdraw(d: Approvals) -> None:
    """A submitted request is withdrawn by its requester."""
    d.add_status(d.request, "withdrawn", after=["submitted"])
    d.tools.append(
        transition_tool(
            "withdraw",
            d.request,
            "withdrawn",
            ["submitted"],
            f"Withdraw a submitted {d.req.label}.",
        )
    )


@optional.feature
def budgets(d: Approvals) -> None:
    """Submitting reserves the amount from a budget; rejecting or withdrawing gives it back."""
    req = d.req
    budget = entity(
        "budget",
        label(d.vocab.get("budget", "budget")),
        d.px[5],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="choice",
                values=[label(b) for b in d.vocab["budgets"]],
            ),
            FieldSpec(name="remaining", type="float", generator=BUDGETS),
        ],
    )
    d.entities.insert(d.entities.index(d.request), budget)
    d.request.fields.insert(1, ref_field("budget"))
    create = d.tool(d.create)
    create.params.insert(1, ref(budget))
    create.preconditions.append(
        covers("budget_id", "remaining", "amount", f"the {budget.label} does not have enough left")
    )
    create.effects.append(adjust("budget_id", "remaining", "amount", -1))
    for tool in (d.tool(d.reject), d.find(f"withdraw_{req.name}")):
        if tool is not None:
            tool.effects.append(adjust("budget_id", "remaining", "amount", 1))
    d.tools += [
        find_by_name(budget, f"Find a {budget.label} by name."),
        list_tool(
            f"list_{req.plural}_by_{budget.name}",
            d.request,
            f"List the {req.plural_label} charged to a {budget.label}.",
            ref(budget),
        ),
    ]
    d.rules.append(
        f"Submitting reserves the amount from the {budget.label}; rejecting or withdrawing "
        "gives it back, and no request may take more than is left."
    )


@optional.feature
def delegation(d: Approvals) -> None:
    """An approver hands their approvals to another and is away (an away approver cannot decide)."""
    ap = d.ap
    add_lifecycle(d.approver, ["available", "away"], transitions={})
    d.guard(d.approve, available_guard(d))
    if d.two_levels:
        d.guard(f"endorse_{d.req.name}", available_guard(d))
    handover = entity(
        "delegation", "delegation", d.px[7], [ref_field(ap.name), ref_field(ap.name, "delegate_id")]
    )
    d.entities.append(handover)
    d.tools += [
        create_tool(
            f"delegate_{ap.name}",
            handover,
            f"Hand an available {ap.label}'s approvals to another available {ap.label}; the first "
            "is then away.",
            [
                ref(d.approver),
                ref(d.approver, "delegate_id", f"Id of the {ap.label} who stands in."),
            ],
            guards=[
                Precondition(
                    kind="params_differ",
                    values=[d.ap_ref, "delegate_id"],
                    error=f"a {ap.label} cannot delegate to themselves",
                ),
                available_guard(d),
                ref_is("delegate_id", "status", "available", "the delegate is away"),
            ],
            effects=[set_ref(d.ap_ref, "status", "away")],
        ),
        transition_tool(
            "return", d.approver, "available", ["away"], f"Mark an away {ap.label} as back."
        ),
    ]
    d.rules.append(f"An away {ap.label} cannot decide; delegation makes a {ap.label} away.")


@optional.feature
def comments(d: Approvals) -> None:
    """Approvers comment on a request still open."""
    req, ap = d.req, d.ap
    open_statuses = [
        s
        for s in d.request.field("status").values
        if s not in ("approved", "rejected", "withdrawn")
    ]
    comment = entity(
        "comment",
        "comment",
        d.px[6],
        [ref_field(req.name), ref_field(ap.name), FieldSpec(name="text", type="str")],
    )
    d.entities.append(comment)
    d.tools += [
        create_tool(
            f"comment_on_{req.name}",
            comment,
            f"Add a {ap.label}'s comment to a {req.label} still open.",
            [ref(d.request), ref(d.approver), text("text", "The comment.")],
            guards=[
                ref_in(
                    d.req_ref,
                    "status",
                    open_statuses,
                    f"only {a(words(open_statuses))} {req.label} takes comments",
                )
            ],
        ),
        list_tool(
            f"list_{req.name}_comments",
            comment,
            f"List the comments on a {req.label}.",
            ref(d.request),
        ),
    ]


@optional.feature
def recategorise(d: Approvals) -> None:
    """The category of a request that awaits a decision is changed."""
    req, statuses = d.req, d.request.field("status").values
    d.tools.append(
        update_tool(
            f"recategorise_{req.name}",
            d.request,
            choice("category", "The new category.", d.categories),
            f"Change the category of a {req.label} that awaits a decision.",
            guards=[
                status_in(
                    [s for s in ("draft", "submitted", "endorsed") if s in statuses],
                    f"a decided {req.label} keeps its category",
                )
            ],
        )
    )


@optional.feature
def approval_notes(d: Approvals) -> None:
    """An approval says why it was given."""
    d.add_field(
        d.approval,
        FieldSpec(name="note", type="str"),
        create=d.approve,
        arg=text("note", "Why it is approved."),
    )


@register_archetype("approvals")
def build_approvals_spec(topic: Topic) -> EnvSpec:
    d = Approvals(topic)
    core(d)
    optional.apply(d)
    return d.spec()
