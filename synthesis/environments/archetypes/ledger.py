"""Ledger archetype: holders' accounts with balances that never go negative.

Deposits, withdrawals and transfers move money; every guard that protects a balance is
declared (a withdrawal or transfer needs the balance to cover it, frozen or closed accounts
refuse it). Optional features, chosen per topic, change the program's shape: per-account
withdrawal limits, a cap on one transfer, holds on funds (with a quota of open holds),
reversible transfers, refundable withdrawals, freezing accounts, balance alerts, memos.
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, noun
from synthesis.environments.archetypes.parts import (
    a,
    adjust,
    aggregate_tool,
    amount_param,
    compare_tool,
    contains_filter,
    eq_filter,
    find_tool,
    get_tool,
    id_param,
    list_by_tool,
    person_entity,
    pick_features,
    range_filters,
    search_tool,
    shaping_params,
    transition_tool,
)
from synthesis.models import (
    EntitySpec,
    EnvSpec,
    FieldSpec,
    ParamSpec,
    Precondition,
    ToolSpec,
    Topic,
)

FEATURES = [
    "limits",  # per-account withdrawal limits, and a tool to change them
    "transfer_cap",  # no single transfer above a fixed amount
    "holds",  # funds put on hold, released or captured; a quota of open holds per account
    "reversals",  # a completed transfer can be reversed if the receiver still has the money
    "refunds",  # a withdrawal can be refunded
    "freezing",  # accounts can be frozen and unfrozen
    "alerts",  # balance alerts per account and channel, never two alike
    "memos",  # transfers carry a memo, searchable
    "frozen_refuses_deposits",  # a stricter rule set: frozen accounts take no deposits either
]
ACCOUNT_STATUSES = ["active", "frozen", "closed"]


@register_archetype("ledger")
def build_ledger_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = pick_features(topic, "ledger", FEATURES, at_least=3)
    hold_noun, acct = noun(vocab, "holder"), noun(vocab, "account")
    low, high = vocab["balance_range"]
    kinds: list[str] = list(vocab["account_kinds"])
    money = vocab.get("currency", "")
    names = ["holder", "account", "deposit", "withdrawal", "transfer", "hold", "alert"]
    px = dict(zip(names, assign_prefixes([hold_noun.name, acct.name, *names[2:]]), strict=True))

    holder = person_entity(
        hold_noun, px["holder"], FieldSpec(name="city", type="str", generator="city")
    )
    holder_ref = f"{hold_noun.name}_id"
    account_fields = [
        FieldSpec(name=holder_ref, type="ref", ref=hold_noun.name),
        FieldSpec(name="name", type="str", generator="choice", values=list(vocab["account_names"])),
        FieldSpec(
            name="number",
            type="str",
            generator=f"code:{vocab.get('number_prefix', 'AC')}:6",
            unique=True,
        ),
        FieldSpec(name="kind", type="enum", values=kinds),
        FieldSpec(name="balance", type="float", generator=f"price:{low}:{high}"),
        FieldSpec(
            name="status",
            type="enum",
            values=ACCOUNT_STATUSES,
            generator="weighted:active=8:frozen=1:closed=1",
        ),
    ]
    limit_step = max(50, int(high) // 20 // 50 * 50)
    if "limits" in features:
        account_fields.append(
            FieldSpec(
                name="withdrawal_limit",
                type="float",
                generator=f"steps:{limit_step}:{limit_step * 6}:{limit_step}",
            )
        )
    if "holds" in features:
        account_fields.append(FieldSpec(name="held", type="float", generator="zero"))
    account = EntitySpec(
        name=acct.name,
        collection=acct.plural,
        id_prefix=px["account"],
        label=acct.label,
        lookup_field="number",
        status_field="status",
        transitions={"active": ["frozen", "closed"], "frozen": ["active"]}
        if "freezing" in features
        else {},
        fields=account_fields,
    )
    acct_ref = f"{acct.name}_id"

    def money_record(name: str, label: str, extra: list[FieldSpec], statuses=None) -> EntitySpec:
        fields = [
            FieldSpec(name=acct_ref, type="ref", ref=acct.name),
            FieldSpec(name="amount", type="float"),
            *extra,
        ]
        if statuses:
            fields.append(FieldSpec(name="status", type="enum", values=statuses))
        return EntitySpec(
            name=name,
            collection=f"{name}s",
            id_prefix=px[name],
            label=label,
            fields=fields,
            status_field="status" if statuses else None,
            initial_status=statuses[0] if statuses else None,
            transitions={statuses[0]: statuses[1:]} if statuses else {},
        )

    deposit = money_record("deposit", "deposit", [])
    withdrawal = money_record(
        "withdrawal",
        "withdrawal",
        [],
        ["posted", "refunded"] if "refunds" in features else None,
    )
    transfer_fields = [
        FieldSpec(name="from_account_id", type="ref", ref=acct.name),
        FieldSpec(name="to_account_id", type="ref", ref=acct.name),
        FieldSpec(name="amount", type="float"),
    ]
    if "memos" in features:
        transfer_fields.append(FieldSpec(name="memo", type="str"))
    transfer_statuses = ["completed", "reversed"] if "reversals" in features else []
    if transfer_statuses:
        transfer_fields.append(FieldSpec(name="status", type="enum", values=transfer_statuses))
    transfer = EntitySpec(
        name="transfer",
        collection="transfers",
        id_prefix=px["transfer"],
        label="transfer",
        fields=transfer_fields,
        status_field="status" if transfer_statuses else None,
        initial_status="completed" if transfer_statuses else None,
        transitions={"completed": ["reversed"]} if transfer_statuses else {},
    )
    entities = [holder, account, deposit, withdrawal, transfer]

    active = Precondition(
        kind="ref_field_equals",
        param=acct_ref,
        field="status",
        value="active",
        error=f"the {acct.label} is not active",
    )
    covers = Precondition(
        kind="ref_field_gte_param",
        param=acct_ref,
        field="balance",
        other="amount",
        error="insufficient balance: the balance may never go negative",
    )
    positive = Precondition(kind="param_positive", param="amount", error="amount must be positive")
    amount = amount_param("amount", "amount", f"The amount{f' in {money}' if money else ''}.")
    acct_id = id_param(account, field=acct_ref)

    withdraw_guards = [positive, active, covers]
    if "limits" in features:
        withdraw_guards.append(
            Precondition(
                kind="ref_field_gte_param",
                param=acct_ref,
                field="withdrawal_limit",
                other="amount",
                error=f"the amount is above the {acct.label}'s withdrawal limit",
            )
        )
    # Closed accounts never take money; under the stricter rule set frozen ones do not either.
    receiving = ["active"] if "frozen_refuses_deposits" in features else ["active", "frozen"]
    deposit_guards = [
        positive,
        Precondition(
            kind="ref_field_in",
            param=acct_ref,
            field="status",
            values=receiving,
            error=f"a {' or '.join(s for s in ACCOUNT_STATUSES if s not in receiving)} "
            f"{acct.label} takes no deposits",
        ),
    ]

    tools: list[ToolSpec] = [
        find_tool(holder, f"Find {a(hold_noun.label)} by email address.", "Email address."),
        find_tool(account, f"Find {a(acct.label)} by its number.", f"The {acct.label} number."),
        get_tool(account),
        list_by_tool(
            f"list_{hold_noun.name}_{acct.plural}",
            account,
            holder,
            holder_ref,
            f"List the {acct.plural_label} of {a(hold_noun.label)}, optionally with one status.",
            status=ACCOUNT_STATUSES,
        ),
        search_tool(
            f"search_{acct.plural}",
            account,
            f"Search {acct.plural_label} by owner, kind, status, balance or name; "
            "sort and limit the results.",
            [
                eq_filter(
                    holder_ref,
                    holder_ref,
                    f"Only {acct.plural_label} of this {hold_noun.label}.",
                    ref=hold_noun.name,
                ),
                eq_filter("kind", "kind", f"Only {acct.plural_label} of this kind.", enum=kinds),
                eq_filter("status", "status", "Only this status.", enum=ACCOUNT_STATUSES),
                *range_filters("balance", "balance"),
                contains_filter("name", "name"),
            ],
            shaping_params(
                ["balance", "name"] + (["withdrawal_limit"] if "limits" in features else []),
                limit=True,
            ),
        ),
        aggregate_tool(
            f"summarize_{acct.name}_balances",
            account,
            f"Count, total, lowest, highest or average balance of the {acct.plural_label} "
            "that match the filters.",
            "balance",
            [
                eq_filter(
                    holder_ref,
                    holder_ref,
                    f"Only {acct.plural_label} of this {hold_noun.label}.",
                    ref=hold_noun.name,
                ),
                eq_filter("kind", "kind", "Only this kind.", enum=kinds),
                eq_filter("status", "status", "Only this status.", enum=ACCOUNT_STATUSES),
            ],
            functions=["count", "sum", "min", "max", "average"],
        ),
        ToolSpec(
            name=f"deposit_to_{acct.name}",
            kind="mutate",
            operation="create",
            entity="deposit",
            description=f"Deposit money into {a(acct.label)}."
            + (
                " Frozen or closed ones refuse it."
                if "frozen_refuses_deposits" in features
                else " Closed ones refuse it."
            ),
            params=[acct_id, amount],
            preconditions=deposit_guards,
            effects=[adjust(acct_ref, "balance", "amount", 1, money=True)],
        ),
        ToolSpec(
            name=f"withdraw_from_{acct.name}",
            kind="mutate",
            operation="create",
            entity="withdrawal",
            description=f"Withdraw money from an active {acct.label}; the balance must cover it.",
            params=[acct_id, amount],
            preconditions=withdraw_guards,
            effects=[adjust(acct_ref, "balance", "amount", -1, money=True)],
        ),
        list_by_tool(
            f"list_{acct.name}_deposits",
            deposit,
            account,
            acct_ref,
            f"List the deposits into {a(acct.label)}.",
        ),
        list_by_tool(
            f"list_{acct.name}_withdrawals",
            withdrawal,
            account,
            acct_ref,
            f"List the withdrawals from {a(acct.label)}.",
            status=withdrawal.field("status").values if "refunds" in features else None,
        ),
    ]

    transfer_params = [
        ParamSpec(
            name="from_account_id",
            type="string",
            ref=acct.name,
            field="from_account_id",
            description=f"Id of the {acct.label} the money leaves.",
        ),
        ParamSpec(
            name="to_account_id",
            type="string",
            ref=acct.name,
            field="to_account_id",
            description=f"Id of the {acct.label} the money goes to.",
        ),
        amount,
    ]
    if "memos" in features:
        transfer_params.append(
            ParamSpec(name="memo", type="string", field="memo", description="What it is for.")
        )
    transfer_guards = [
        positive,
        Precondition(
            kind="params_differ",
            param="from_account_id",
            other="to_account_id",
            error=f"a transfer needs two different {acct.plural_label}",
        ),
        Precondition(
            kind="ref_field_equals",
            param="from_account_id",
            field="status",
            value="active",
            error=f"the sending {acct.label} is not active",
        ),
        Precondition(
            kind="ref_field_equals",
            param="to_account_id",
            field="status",
            value="active",
            error=f"the receiving {acct.label} is not active",
        ),
        Precondition(
            kind="ref_field_gte_param",
            param="from_account_id",
            field="balance",
            other="amount",
            error="insufficient balance: the balance may never go negative",
        ),
    ]
    cap = vocab.get("transfer_cap", int(high) // 2)
    if "transfer_cap" in features:
        transfer_guards.append(
            Precondition(
                kind="param_at_most",
                param="amount",
                value=float(cap),
                error=f"a single transfer may not exceed {cap}",
            )
        )
    tools.append(
        ToolSpec(
            name=f"transfer_between_{acct.plural}",
            kind="mutate",
            operation="create",
            entity="transfer",
            description=f"Move money from one active {acct.label} to another."
            + (f" At most {cap} per transfer." if "transfer_cap" in features else ""),
            params=transfer_params,
            preconditions=transfer_guards,
            effects=[
                adjust("from_account_id", "balance", "amount", -1, money=True),
                adjust("to_account_id", "balance", "amount", 1, money=True),
            ],
        )
    )
    tools.append(get_tool(transfer))
    transfer_filters = [
        eq_filter(
            "from_account_id",
            "from_account_id",
            f"Only transfers out of this {acct.label}.",
            ref=acct.name,
        ),
        eq_filter(
            "to_account_id",
            "to_account_id",
            f"Only transfers into this {acct.label}.",
            ref=acct.name,
        ),
        *range_filters("amount", "amount"),
    ]
    if "memos" in features:
        transfer_filters.append(contains_filter("memo", "memo"))
    if transfer_statuses:
        transfer_filters.append(
            eq_filter("status", "status", "Only this status.", enum=transfer_statuses)
        )
    tools.append(
        search_tool(
            "search_transfers",
            transfer,
            "Search transfers by account, amount"
            + (", memo" if "memos" in features else "")
            + "; sort and limit the results.",
            transfer_filters,
            shaping_params(["amount"], limit=True),
        )
    )
    tools.append(
        aggregate_tool(
            "total_transferred",
            transfer,
            "The total amount of the transfers that match the filters.",
            "amount",
            transfer_filters[:2],
            fixed="sum",
        )
    )

    rules = [
        f"A balance never goes negative: a withdrawal or transfer needs the {acct.label}'s "
        "balance to cover it.",
        f"Only active {acct.plural_label} can send money; a transfer needs two different "
        f"active {acct.plural_label}.",
    ]
    if "frozen_refuses_deposits" in features:
        rules.append(f"Frozen and closed {acct.plural_label} take no deposits.")
    else:
        rules.append(f"Closed {acct.plural_label} take no deposits.")
    if "limits" in features:
        rules.append(f"A withdrawal may not exceed the {acct.label}'s withdrawal limit.")
        tools.append(
            ToolSpec(
                name=f"set_{acct.name}_withdrawal_limit",
                kind="mutate",
                operation="update",
                entity=acct.name,
                field="withdrawal_limit",
                description=f"Change the withdrawal limit of {a(acct.label)}.",
                params=[
                    id_param(account),
                    ParamSpec(
                        name="withdrawal_limit",
                        type="number",
                        field="withdrawal_limit",
                        description="The new limit.",
                    ),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive",
                        param="withdrawal_limit",
                        error="a limit must be positive",
                    ),
                    Precondition(
                        kind="param_at_most",
                        param="withdrawal_limit",
                        value=float(limit_step * 10),
                        error=f"a withdrawal limit may not exceed {limit_step * 10}",
                    ),
                ],
            )
        )
    if "transfer_cap" in features:
        rules.append(f"A single transfer may not exceed {cap}.")
    if "freezing" in features:
        rules.append(f"A frozen {acct.label} can be unfrozen; a closed one stays closed.")
        tools += [
            transition_tool(
                f"freeze_{acct.name}",
                account,
                "frozen",
                ["active"],
                f"Freeze an active {acct.label}: it can no longer send money.",
            ),
            transition_tool(
                f"unfreeze_{acct.name}",
                account,
                "active",
                ["frozen"],
                f"Unfreeze a frozen {acct.label}.",
            ),
        ]
    if "reversals" in features:
        rules.append(
            "A completed transfer can be reversed only while the receiving balance covers it."
        )
        tools.append(
            transition_tool(
                "reverse_transfer",
                transfer,
                "reversed",
                ["completed"],
                "Reverse a completed transfer: the money goes back to the sender.",
                guards=[
                    Precondition(
                        kind="linked_field_gte_field",
                        param="to_account_id",
                        field="balance",
                        other="amount",
                        error="the receiving balance no longer covers the transfer",
                    )
                ],
                effects=[
                    adjust("to_account_id", "balance", "amount", -1, money=True),
                    adjust("from_account_id", "balance", "amount", 1, money=True),
                ],
            )
        )
    if "refunds" in features:
        rules.append("A posted withdrawal can be refunded once; the money returns.")
        tools.append(
            transition_tool(
                "refund_withdrawal",
                withdrawal,
                "refunded",
                ["posted"],
                "Refund a posted withdrawal: its amount returns to the balance.",
                effects=[adjust(acct_ref, "balance", "amount", 1, money=True)],
            )
        )
    if "holds" in features:
        hold = money_record("hold", "hold", [], ["active", "released", "captured"])
        entities.append(hold)
        quota = int(vocab.get("hold_quota", 2))
        rules.append(
            f"A hold takes money out of the balance until it is released or captured; "
            f"at most {quota} active holds per {acct.label}."
        )
        tools += [
            ToolSpec(
                name=f"place_hold_on_{acct.name}",
                kind="mutate",
                operation="create",
                entity="hold",
                description=f"Put an amount of an active {acct.label}'s balance on hold.",
                params=[acct_id, amount],
                preconditions=[
                    positive,
                    active,
                    covers,
                    Precondition(
                        kind="count_below",
                        param=acct_ref,
                        value=quota,
                        values=["active"],
                        error=f"{a(acct.label)} may have at most {quota} active holds",
                    ),
                ],
                effects=[
                    adjust(acct_ref, "balance", "amount", -1, money=True),
                    adjust(acct_ref, "held", "amount", 1, money=True),
                ],
            ),
            transition_tool(
                "release_hold",
                hold,
                "released",
                ["active"],
                "Release an active hold: the amount returns to the balance.",
                effects=[
                    adjust(acct_ref, "balance", "amount", 1, money=True),
                    adjust(acct_ref, "held", "amount", -1, money=True),
                ],
            ),
            transition_tool(
                "capture_hold",
                hold,
                "captured",
                ["active"],
                "Capture an active hold: the held amount is paid out.",
                effects=[adjust(acct_ref, "held", "amount", -1, money=True)],
            ),
            list_by_tool(
                f"list_{acct.name}_holds",
                hold,
                account,
                acct_ref,
                f"List the holds on {a(acct.label)}, optionally with one status.",
                status=["active", "released", "captured"],
            ),
        ]
    if "alerts" in features:
        channels = list(vocab.get("alert_channels", ["email", "sms"]))
        alert = EntitySpec(
            name="alert",
            collection="alerts",
            id_prefix=px["alert"],
            label="balance alert",
            fields=[
                FieldSpec(name=acct_ref, type="ref", ref=acct.name),
                FieldSpec(name="channel", type="enum", values=channels),
                FieldSpec(name="threshold", type="float"),
                FieldSpec(name="status", type="enum", values=["on", "off"]),
            ],
            status_field="status",
            initial_status="on",
            transitions={"on": ["off"]},
        )
        entities.append(alert)
        rules.append(f"One balance alert per {acct.label} and channel.")
        tools += [
            ToolSpec(
                name="create_balance_alert",
                kind="mutate",
                operation="create",
                entity="alert",
                description=f"Alert the {hold_noun.label} when {a(acct.label)}'s balance "
                "drops below a threshold.",
                params=[
                    acct_id,
                    ParamSpec(
                        name="channel",
                        type="string",
                        field="channel",
                        enum=channels,
                        description="How the alert is sent.",
                    ),
                    amount_param("threshold", "threshold", "Alert below this balance."),
                ],
                preconditions=[
                    Precondition(
                        kind="param_positive", param="threshold", error="threshold must be positive"
                    ),
                    Precondition(
                        kind="no_duplicate",
                        param=acct_ref,
                        other="channel",
                        values=["on"],
                        error=f"this {acct.label} already has an alert on that channel",
                    ),
                ],
            ),
            transition_tool(
                "turn_off_balance_alert",
                alert,
                "off",
                ["on"],
                "Turn a balance alert off.",
            ),
            list_by_tool(
                f"list_{acct.name}_alerts",
                alert,
                account,
                acct_ref,
                f"List the balance alerts of {a(acct.label)}.",
            ),
        ]
    if len(tools) < 22:
        tools.append(compare_tool(account, f"Compare two {acct.plural_label} field by field."))
    return EnvSpec(
        env_id=f"{topic.topic_id}-ledger",
        topic_id=topic.topic_id,
        archetype="ledger",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
