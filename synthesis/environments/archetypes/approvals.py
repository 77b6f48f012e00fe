"""Approvals archetype: requesters submit requests with an amount; approvers whose limit covers
the amount approve them.

Optional features (per topic): drafts edited before submission, two approval levels (a
first-level role endorses, a second-level role approves), delegation (an away approver cannot
approve), comments, budgets the amount is reserved from, withdrawal, approval notes and
recategorising.
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
    "drafts",
    "multi_level",
    "delegation",
    "comments",
    "budgets",
    "withdraw",
    "approval_notes",
    "recategorise",
)
LIMITS = "one_of:20,50,100,250,1000"
BUDGETS = "one_of:0,30,150,600,2500"


@register_archetype("approvals")
def build_approvals_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    rq, ap, req = (noun(vocab, key) for key in ("requester", "approver", "request"))
    categories = [label(c) for c in vocab["categories"]]
    roles = [label(r) for r in vocab["roles"]]
    first_role, top_role = roles[0], roles[-1]
    prefixes = assign_prefixes(
        [rq.name, ap.name, req.name, "approval", "endorsement", "budget", "comment", "delegation"]
    )
    rq_px, ap_px, req_px, apv_px, end_px, bud_px, com_px, del_px = prefixes
    two_levels = "multi_level" in features and len(roles) >= 2

    requester = person_entity(
        rq,
        rq_px,
        FieldSpec(name="department", type="enum", values=[label(d) for d in vocab["departments"]]),
    )
    approver_fields = [
        FieldSpec(name="name", type="str", generator="person_name"),
        FieldSpec(name="email", type="str", generator="email", unique=True),
        FieldSpec(name="role", type="enum", values=roles),
        FieldSpec(name="approval_limit", type="float", generator=LIMITS),
    ]
    if "delegation" in features:
        approver_fields.append(FieldSpec(name="status", type="enum", values=["available", "away"]))
    approver = EntitySpec(
        name=ap.name,
        collection=ap.plural,
        id_prefix=ap_px,
        label=ap.label,
        lookup_field="email",
        fields=approver_fields,
        status_field="status" if "delegation" in features else None,
        initial_status="available" if "delegation" in features else None,
    )
    entities = [requester, approver]
    budget = None
    if "budgets" in features:
        budget = EntitySpec(
            name="budget",
            collection="budgets",
            id_prefix=bud_px,
            label=label(vocab.get("budget", "budget")),
            lookup_field="name",
            fields=[
                FieldSpec(
                    name="name",
                    type="str",
                    unique=True,
                    generator="choice",
                    values=[label(b) for b in vocab["budgets"]],
                ),
                FieldSpec(name="remaining", type="float", generator=BUDGETS),
            ],
        )
        entities.append(budget)

    statuses = ["submitted", "approved", "rejected"]
    ready = "endorsed" if two_levels else "submitted"
    transitions: dict[str, list[str]] = {"submitted": ["rejected"]}
    if two_levels:
        statuses.insert(1, "endorsed")
        transitions["endorsed"] = ["rejected"]
    if "drafts" in features:
        statuses.insert(0, "draft")
        transitions["draft"] = ["submitted"]
    if "withdraw" in features:
        statuses.append("withdrawn")
        transitions["submitted"] = ["rejected", "withdrawn"]
    request_fields = [
        FieldSpec(name=f"{rq.name}_id", type="ref", ref=rq.name),
        FieldSpec(name="title", type="str"),
        FieldSpec(name="amount", type="float"),
        FieldSpec(name="category", type="enum", values=categories),
        FieldSpec(name="status", type="enum", values=statuses),
    ]
    create_params = [
        ref(requester),
        value("title", "string", f"What the {req.label} is for."),
        value("amount", "number", "The amount asked for.", minimum=0.01),
        value("category", "string", "The category.", enum=categories),
    ]
    create_guards = [
        Precondition(kind="param_positive", param="amount", error="amount must be positive")
    ]
    create_effects: list[Effect] = []
    refund: list[Effect] = []
    if budget is not None:
        request_fields.insert(1, FieldSpec(name="budget_id", type="ref", ref="budget"))
        create_params.insert(1, ref(budget))
        create_guards.append(
            Precondition(
                kind="ref_field_gte_param",
                param="budget_id",
                field="remaining",
                other="amount",
                error=f"the {budget.label} does not have enough left",
            )
        )
        create_effects.append(
            Effect(
                kind="adjust_ref_field",
                via="budget_id",
                field="remaining",
                by_field="amount",
                sign=-1,
            )
        )
        refund.append(
            Effect(
                kind="adjust_ref_field",
                via="budget_id",
                field="remaining",
                by_field="amount",
                sign=1,
            )
        )
    request = EntitySpec(
        name=req.name,
        collection=req.plural,
        id_prefix=req_px,
        label=req.label,
        status_field="status",
        initial_status="draft" if "drafts" in features else "submitted",
        transitions=transitions,
        fields=request_fields,
    )
    entities.append(request)

    approval_fields = [
        FieldSpec(name=f"{req.name}_id", type="ref", ref=req.name),
        FieldSpec(name=f"{ap.name}_id", type="ref", ref=ap.name),
    ]
    approval_params = [ref(request), ref(approver)]
    approval_guards = [
        Precondition(
            kind="ref_field_equals",
            param=f"{req.name}_id",
            field="status",
            value=ready,
            error=f"only {a(ready)} {req.label} can be approved",
        ),
        Precondition(
            kind="ref_field_covers",
            param=f"{ap.name}_id",
            field="approval_limit",
            other=f"{req.name}_id",
            other_field="amount",
            error=f"the amount is above this {ap.label}'s approval limit",
        ),
    ]
    if two_levels:
        approval_guards.append(_role_guard(ap.name, top_role, "approve"))
    if "delegation" in features:
        approval_guards.append(_available_guard(ap.name, ap.label))
    if "approval_notes" in features:
        approval_fields.append(FieldSpec(name="note", type="str"))
        approval_params.append(value("note", "string", "Why it is approved."))
    approval = EntitySpec(
        name="approval",
        collection="approvals",
        id_prefix=apv_px,
        label="approval",
        fields=approval_fields,
    )
    entities.append(approval)

    tools: list[ToolSpec] = [
        find_tool(requester, f"Find a {rq.label} by email address.", "Email address."),
        find_tool(approver, f"Find a {ap.label} by email address.", "Email address."),
        list_tool(
            f"list_{req.plural}",
            request,
            f"List the {req.plural_label} of a {rq.label}, optionally with one status.",
            ref(requester),
            status_filter(statuses, req.plural_label),
        ),
        get_tool(request),
        ToolSpec(
            name=f"submit_new_{req.name}" if "drafts" not in features else f"draft_{req.name}",
            kind="mutate",
            operation="create",
            entity=req.name,
            description=(
                f"Start a draft {req.label} for a {rq.label}."
                if "drafts" in features
                else f"Submit a new {req.label} for a {rq.label}."
            ),
            params=create_params,
            preconditions=create_guards,
            effects=create_effects,
        ),
        ToolSpec(
            name=f"approve_{req.name}",
            kind="mutate",
            operation="create",
            entity="approval",
            description=f"Record a {ap.label}'s approval of a {ready} {req.label}.",
            params=approval_params,
            preconditions=approval_guards,
            effects=[
                Effect(kind="set_ref_field", via=f"{req.name}_id", field="status", value="approved")
            ],
        ),
        list_tool(
            f"list_{ap.name}_approvals",
            approval,
            f"List the approvals a {ap.label} gave.",
            ref(approver),
        ),
        transition_tool(
            "reject",
            request,
            "rejected",
            [s for s in ("submitted", "endorsed") if s in statuses],
            f"Reject a {req.label} that awaits a decision.",
            effects=refund,
        ),
    ]
    rules = [
        f"A {ap.label} may approve a {req.label} only when the amount is within the "
        f"{ap.label}'s approval limit.",
        f"Only a {ready} {req.label} can be approved; approving it makes it approved.",
    ]
    if "drafts" in features:
        tools += [
            transition_tool(
                "submit", request, "submitted", ["draft"], f"Submit a draft {req.label}."
            ),
            update_tool(
                f"change_{req.name}_amount",
                request,
                value("amount", "number", "The new amount.", minimum=0.01),
                f"Change the amount of a draft {req.label}.",
                guards=[
                    Precondition(
                        kind="status_in",
                        values=["draft"],
                        error=f"only a draft {req.label} can be changed",
                    ),
                    Precondition(
                        kind="param_positive", param="amount", error="amount must be positive"
                    ),
                ],
            ),
        ]
        rules.append(f"A {req.label} starts as a draft; only drafts can be edited.")
    if two_levels:
        endorsement = EntitySpec(
            name="endorsement",
            collection="endorsements",
            id_prefix=end_px,
            label="endorsement",
            fields=[
                FieldSpec(name=f"{req.name}_id", type="ref", ref=req.name),
                FieldSpec(name=f"{ap.name}_id", type="ref", ref=ap.name),
            ],
        )
        entities.append(endorsement)
        endorse_guards = [
            Precondition(
                kind="ref_field_equals",
                param=f"{req.name}_id",
                field="status",
                value="submitted",
                error=f"only a submitted {req.label} can be endorsed",
            ),
            _role_guard(ap.name, first_role, "endorse"),
        ]
        if "delegation" in features:
            endorse_guards.append(_available_guard(ap.name, ap.label))
        tools.append(
            ToolSpec(
                name=f"endorse_{req.name}",
                kind="mutate",
                operation="create",
                entity="endorsement",
                description=f"Record a {first_role}'s endorsement of a submitted {req.label}.",
                params=[ref(request), ref(approver)],
                preconditions=endorse_guards,
                effects=[
                    Effect(
                        kind="set_ref_field", via=f"{req.name}_id", field="status", value="endorsed"
                    )
                ],
            )
        )
        rules.append(
            f"Two levels: a {first_role} endorses a submitted {req.label}, "
            f"then a {top_role} approves it."
        )
    if "withdraw" in features:
        tools.append(
            transition_tool(
                "withdraw",
                request,
                "withdrawn",
                ["submitted"],
                f"Withdraw a submitted {req.label}.",
                effects=refund,
            )
        )
    if budget is not None:
        tools += [
            find_tool(budget, f"Find a {budget.label} by name.", f"The {budget.label}'s name."),
            list_tool(
                f"list_{req.plural}_by_{budget.name}",
                request,
                f"List the {req.plural_label} charged to a {budget.label}.",
                ref(budget),
            ),
        ]
        rules.append(
            f"Submitting reserves the amount from the {budget.label}; rejecting or withdrawing "
            "gives it back, and no request may take more than is left."
        )
    if "delegation" in features:
        delegation = EntitySpec(
            name="delegation",
            collection="delegations",
            id_prefix=del_px,
            label="delegation",
            fields=[
                FieldSpec(name=f"{ap.name}_id", type="ref", ref=ap.name),
                FieldSpec(name="delegate_id", type="ref", ref=ap.name),
            ],
        )
        entities.append(delegation)
        tools += [
            ToolSpec(
                name=f"delegate_{ap.name}",
                kind="mutate",
                operation="create",
                entity="delegation",
                description=f"Hand an available {ap.label}'s approvals to another available "
                f"{ap.label}; the first is then away.",
                params=[
                    ref(approver),
                    ref(approver, "delegate_id", f"Id of the {ap.label} who stands in."),
                ],
                preconditions=[
                    Precondition(
                        kind="params_differ",
                        values=[f"{ap.name}_id", "delegate_id"],
                        error=f"a {ap.label} cannot delegate to themselves",
                    ),
                    _available_guard(ap.name, ap.label),
                    Precondition(
                        kind="ref_field_equals",
                        param="delegate_id",
                        field="status",
                        value="available",
                        error="the delegate is away",
                    ),
                ],
                effects=[
                    Effect(kind="set_ref_field", via=f"{ap.name}_id", field="status", value="away")
                ],
            ),
            transition_tool(
                "return", approver, "available", ["away"], f"Mark an away {ap.label} as back."
            ),
        ]
        rules.append(f"An away {ap.label} cannot decide; delegation makes a {ap.label} away.")
    if "comments" in features:
        comment = EntitySpec(
            name="comment",
            collection="comments",
            id_prefix=com_px,
            label="comment",
            fields=[
                FieldSpec(name=f"{req.name}_id", type="ref", ref=req.name),
                FieldSpec(name=f"{ap.name}_id", type="ref", ref=ap.name),
                FieldSpec(name="text", type="str"),
            ],
        )
        entities.append(comment)
        open_statuses = [s for s in statuses if s not in ("approved", "rejected", "withdrawn")]
        tools += [
            ToolSpec(
                name=f"comment_on_{req.name}",
                kind="mutate",
                operation="create",
                entity="comment",
                description=f"Add a {ap.label}'s comment to a {req.label} still open.",
                params=[ref(request), ref(approver), value("text", "string", "The comment.")],
                preconditions=[
                    Precondition(
                        kind="ref_field_in",
                        param=f"{req.name}_id",
                        field="status",
                        values=open_statuses,
                        error=f"only {a(words(open_statuses))} {req.label} takes comments",
                    )
                ],
            ),
            list_tool(
                f"list_{req.name}_comments",
                comment,
                f"List the comments on a {req.label}.",
                ref(request),
            ),
        ]
    if "recategorise" in features:
        tools.append(
            update_tool(
                f"recategorise_{req.name}",
                request,
                value("category", "string", "The new category.", enum=categories),
                f"Change the category of a {req.label} that awaits a decision.",
                guards=[
                    Precondition(
                        kind="status_in",
                        values=[s for s in ("draft", "submitted", "endorsed") if s in statuses],
                        error=f"a decided {req.label} keeps its category",
                    )
                ],
            )
        )
    return EnvSpec(
        env_id=f"{topic.topic_id}-approvals",
        topic_id=topic.topic_id,
        archetype="approvals",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )


def _role_guard(approver: str, role: str, verb: str) -> Precondition:
    return Precondition(
        kind="ref_field_equals",
        param=f"{approver}_id",
        field="role",
        value=role,
        error=f"only {a(role)} can {verb}",
    )


def _available_guard(approver: str, approver_label: str) -> Precondition:
    return Precondition(
        kind="ref_field_equals",
        param=f"{approver}_id",
        field="status",
        value="available",
        error=f"the {approver_label} is away",
    )
