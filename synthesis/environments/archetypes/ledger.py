"""Ledger archetype: holders' accounts with balances that never go negative.

Deposits, withdrawals and transfers move money; every guard that protects a balance is
declared (a withdrawal or transfer needs the balance to cover it, frozen or closed accounts
refuse it). Optional features, chosen per topic, change the program's shape: per-account
withdrawal limits, a cap on one transfer, holds on funds (with a quota of open holds),
reversible transfers, refundable withdrawals, freezing accounts, balance alerts, memos.
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    add_filter,
    add_lifecycle,
    adjust,
    aggregate_tool,
    amount,
    at_most,
    choice,
    compare_tool,
    contains_filter,
    count_below,
    covers,
    create_tool,
    entity,
    enum_field,
    eq_filter,
    find_by_email,
    find_tool,
    get_tool,
    linked_covers,
    list_by_tool,
    no_duplicate,
    noun_entity,
    param,
    person_entity,
    positive,
    range_filters,
    ref,
    ref_field,
    ref_filter,
    ref_in,
    ref_is,
    search_tool,
    shaping_params,
    status_filter,
    text,
    transition_tool,
    update_tool,
    value,
)
from synthesis.models import Effect, EntitySpec, EnvSpec, FieldSpec, Precondition, Topic

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
optional = FeatureSet("ledger", FEATURES, at_least=3, draw="coin_flips")
ACCOUNT_STATUSES = ["active", "frozen", "closed"]
# A ledger with few tools also gets a side-by-side comparison of two accounts.
COMPARE_BELOW = 22


class Ledger(SpecDraft):
    """A ledger spec being built: the topic's words, then the records `core` makes."""

    holder: EntitySpec
    account: EntitySpec
    deposit: EntitySpec
    withdrawal: EntitySpec
    transfer: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.hold_n, self.acct = noun(self.vocab, "holder"), noun(self.vocab, "account")
        self.low, self.high = self.vocab["balance_range"]
        self.kinds: list[str] = list(self.vocab["account_kinds"])
        names = ["holder", "account", "deposit", "withdrawal", "transfer", "hold", "alert"]
        prefixes = assign_prefixes([self.hold_n.name, self.acct.name, *names[2:]])
        self.px = dict(zip(names, prefixes, strict=True))
        self.acct_ref = f"{self.acct.name}_id"
        self.limit_step = max(50, int(self.high) // 20 // 50 * 50)
        self.cap = self.vocab.get("transfer_cap", int(self.high) // 2)
        money = self.vocab.get("currency", "")
        self.amount = amount("amount", f"The amount{f' in {money}' if money else ''}.")
        self.positive = positive("amount", "amount must be positive")
        self.active = ref_is(
            self.acct_ref, "status", "active", f"the {self.acct.label} is not active"
        )
        self.covered = covers(
            self.acct_ref,
            "balance",
            "amount",
            "insufficient balance: the balance may never go negative",
        )
        self.withdraw = f"withdraw_from_{self.acct.name}"
        self.transfer_tool = f"transfer_between_{self.acct.plural}"


def money_fields(account: str) -> list[FieldSpec]:
    """The fields of a record of money moved on one account (a deposit, a hold)."""
    return [ref_field(account), FieldSpec(name="amount", type="float")]


def money(via: str, by: str, sign: int) -> list[Effect]:
    """The balance of the account `via` points to moves by the record's `by`, in cents."""
    return [adjust(via, "balance", by, sign, money=True)]


def core(d: Ledger) -> None:
    holder_n, acct, acct_ref = d.hold_n, d.acct, d.acct_ref
    holder_ref = f"{holder_n.name}_id"
    d.holder = person_entity(
        holder_n, d.px["holder"], FieldSpec(name="city", type="str", generator="city")
    )
    d.account = noun_entity(
        acct,
        d.px["account"],
        lookup="number",
        fields=[
            ref_field(holder_n.name),
            FieldSpec(
                name="name", type="str", generator="choice", values=list(d.vocab["account_names"])
            ),
            FieldSpec(
                name="number",
                type="str",
                generator=f"code:{d.vocab.get('number_prefix', 'AC')}:6",
                unique=True,
            ),
            enum_field("kind", d.kinds),
            FieldSpec(name="balance", type="float", generator=f"price:{d.low}:{d.high}"),
            FieldSpec(
                name="status",
                type="enum",
                values=ACCOUNT_STATUSES,
                generator="weighted:active=8:frozen=1:closed=1",
            ),
        ],
    )
    d.account.status_field = "status"  # no initial status: the initial states draw it
    d.deposit = entity("deposit", "deposit", d.px["deposit"], money_fields(acct.name))
    d.withdrawal = entity("withdrawal", "withdrawal", d.px["withdrawal"], money_fields(acct.name))
    d.transfer = entity(
        "transfer",
        "transfer",
        d.px["transfer"],
        [
            ref_field(acct.name, "from_account_id"),
            ref_field(acct.name, "to_account_id"),
            FieldSpec(name="amount", type="float"),
        ],
    )
    d.entities += [d.holder, d.account, d.deposit, d.withdrawal, d.transfer]

    # Closed accounts never take money; under the stricter rule set frozen ones do not either.
    receiving = ["active"] if d.has("frozen_refuses_deposits") else ["active", "frozen"]
    refusing = [s for s in ACCOUNT_STATUSES if s not in receiving]
    acct_id, by_holder = (
        ref(d.account),
        ref_filter(holder_n.name, f"Only {acct.plural_label} of this {holder_n.label}."),
    )
    statuses = eq_filter("status", "Only this status.", enum=ACCOUNT_STATUSES)
    transfer_filters = [
        eq_filter("from_account_id", f"Only transfers out of this {acct.label}.", ref=acct.name),
        eq_filter("to_account_id", f"Only transfers into this {acct.label}.", ref=acct.name),
        *range_filters("amount", "amount"),
    ]
    d.tools += [
        find_by_email(d.holder, f"Find {a(holder_n.label)} by email address."),
        find_tool(d.account, f"Find {a(acct.label)} by its number.", f"The {acct.label} number."),
        get_tool(d.account),
        list_by_tool(
            f"list_{holder_n.name}_{acct.plural}",
            d.account,
            d.holder,
            holder_ref,
            f"List the {acct.plural_label} of {a(holder_n.label)}, optionally with one status.",
            status=ACCOUNT_STATUSES,
        ),
        search_tool(
            f"search_{acct.plural}",
            d.account,
            f"Search {acct.plural_label} by owner, kind, status, balance or name; "
            "sort and limit the results.",
            [
                by_holder,
                eq_filter("kind", f"Only {acct.plural_label} of this kind.", enum=d.kinds),
                statuses,
                *range_filters("balance", "balance"),
                contains_filter("name", "name"),
            ],
            shaping_params(["balance", "name"], limit=True),
        ),
        aggregate_tool(
            f"summarize_{acct.name}_balances",
            d.account,
            f"Count, total, lowest, highest or average balance of the {acct.plural_label} "
            "that match the filters.",
            "balance",
            [by_holder, eq_filter("kind", "Only this kind.", enum=d.kinds), statuses],
            functions=["count", "sum", "min", "max", "average"],
        ),
        create_tool(
            f"deposit_to_{acct.name}",
            d.deposit,
            f"Deposit money into {a(acct.label)}. "
            f"{' or '.join(refusing).capitalize()} ones refuse it.",
            [acct_id, d.amount],
            guards=[
                d.positive,
                ref_in(
                    acct_ref,
                    "status",
                    receiving,
                    f"a {' or '.join(refusing)} {acct.label} takes no deposits",
                ),
            ],
            effects=money(acct_ref, "amount", 1),
        ),
        create_tool(
            d.withdraw,
            d.withdrawal,
            f"Withdraw money from an active {acct.label}; the balance must cover it.",
            [acct_id, d.amount],
            guards=[d.positive, d.active, d.covered],
            effects=money(acct_ref, "amount", -1),
        ),
        list_by_tool(
            f"list_{acct.name}_deposits",
            d.deposit,
            d.account,
            acct_ref,
            f"List the deposits into {a(acct.label)}.",
        ),
        list_by_tool(
            f"list_{acct.name}_withdrawals",
            d.withdrawal,
            d.account,
            acct_ref,
            f"List the withdrawals from {a(acct.label)}.",
        ),
        create_tool(
            d.transfer_tool,
            d.transfer,
            f"Move money from one active {acct.label} to another.",
            [
                ref(d.account, "from_account_id", f"Id of the {acct.label} the money leaves."),
                ref(d.account, "to_account_id", f"Id of the {acct.label} the money goes to."),
                d.amount,
            ],
            guards=[
                d.positive,
                Precondition(
                    kind="params_differ",
                    param="from_account_id",
                    other="to_account_id",
                    error=f"a transfer needs two different {acct.plural_label}",
                ),
                ref_is(
                    "from_account_id", "status", "active", f"the sending {acct.label} is not active"
                ),
                ref_is(
                    "to_account_id", "status", "active", f"the receiving {acct.label} is not active"
                ),
                covers(
                    "from_account_id",
                    "balance",
                    "amount",
                    "insufficient balance: the balance may never go negative",
                ),
            ],
            effects=[*money("from_account_id", "amount", -1), *money("to_account_id", "amount", 1)],
        ),
        get_tool(d.transfer),
        search_tool(
            "search_transfers",
            d.transfer,
            "Search transfers by account, amount; sort and limit the results.",
            transfer_filters,
            shaping_params(["amount"], limit=True),
        ),
        aggregate_tool(
            "total_transferred",
            d.transfer,
            "The total amount of the transfers that match the filters.",
            "amount",
            transfer_filters[:2],
            fixed="sum",
        ),
    ]
    d.rules += [
        f"A balance never goes negative: a withdrawal or transfer needs the {acct.label}'s "
        "balance to cover it.",
        f"Only active {acct.plural_label} can send money; a transfer needs two different "
        f"active {acct.plural_label}.",
        f"{' and '.join(refusing).capitalize()} {acct.plural_label} take no deposits.",
    ]


@optional.feature
def limits(d: Ledger) -> None:
    """Each account has a withdrawal limit (a withdrawal may not exceed it), changeable."""
    acct, step = d.acct, d.limit_step
    d.account.fields.append(
        FieldSpec(
            name="withdrawal_limit", type="float", generator=f"steps:{step}:{step * 6}:{step}"
        )
    )
    param(d.tool(f"search_{acct.plural}"), "sort_by").enum.append("withdrawal_limit")
    above = f"the amount is above the {acct.label}'s withdrawal limit"
    d.guard(
        d.withdraw,
        covers(d.acct_ref, "withdrawal_limit", "amount", above),
        rule=f"A withdrawal may not exceed the {acct.label}'s withdrawal limit.",
    )
    d.tools.append(
        update_tool(
            f"set_{acct.name}_withdrawal_limit",
            d.account,
            value("withdrawal_limit", "number", "The new limit."),
            f"Change the withdrawal limit of {a(acct.label)}.",
            guards=[
                positive("withdrawal_limit", "a limit must be positive"),
                at_most(
                    "withdrawal_limit",
                    float(step * 10),
                    f"a withdrawal limit may not exceed {step * 10}",
                ),
            ],
        )
    )


@optional.feature
def transfer_cap(d: Ledger) -> None:
    """No single transfer above a fixed amount."""
    cap = d.cap
    d.tool(d.transfer_tool).description += f" At most {cap} per transfer."
    d.guard(
        d.transfer_tool,
        at_most("amount", float(cap), f"a single transfer may not exceed {cap}"),
        rule=f"A single transfer may not exceed {cap}.",
    )


@optional.feature
def freezing(d: Ledger) -> None:
    """Accounts are frozen (they send no money) and unfrozen; a closed one stays closed."""
    acct = d.acct
    d.account.transitions = {"active": ["frozen", "closed"], "frozen": ["active"]}
    d.rules.append(f"A frozen {acct.label} can be unfrozen; a closed one stays closed.")
    d.tools += [
        transition_tool(
            "freeze",
            d.account,
            "frozen",
            ["active"],
            f"Freeze an active {acct.label}: it can no longer send money.",
        ),
        transition_tool(
            "unfreeze", d.account, "active", ["frozen"], f"Unfreeze a frozen {acct.label}."
        ),
    ]


@optional.feature
def memos(d: Ledger) -> None:
    """Transfers carry a memo, which the transfer search matches."""
    d.add_field(
        d.transfer,
        FieldSpec(name="memo", type="str"),
        create=d.transfer_tool,
        arg=text("memo", "What it is for."),
    )
    search = d.tool("search_transfers")
    search.description = "Search transfers by account, amount, memo; sort and limit the results."
    add_filter(search, contains_filter("memo", "memo"))


@optional.feature
def reversals(d: Ledger) -> None:
    """A completed transfer is reversed while the receiving balance still covers it."""
    add_lifecycle(d.transfer, ["completed", "reversed"])
    add_filter(
        d.tool("search_transfers"),
        eq_filter("status", "Only this status.", enum=["completed", "reversed"]),
    )
    d.rules.append(
        "A completed transfer can be reversed only while the receiving balance covers it."
    )
    d.tools.append(
        transition_tool(
            "reverse",
            d.transfer,
            "reversed",
            ["completed"],
            "Reverse a completed transfer: the money goes back to the sender.",
            guards=[
                linked_covers(
                    "to_account_id",
                    "balance",
                    "amount",
                    "the receiving balance no longer covers the transfer",
                )
            ],
            effects=[*money("to_account_id", "amount", -1), *money("from_account_id", "amount", 1)],
        )
    )


@optional.feature
def refunds(d: Ledger) -> None:
    """A posted withdrawal is refunded once: the money returns."""
    add_lifecycle(d.withdrawal, ["posted", "refunded"])
    d.tool(f"list_{d.acct.name}_withdrawals").params.append(
        status_filter(["posted", "refunded"], "records")
    )
    d.rules.append("A posted withdrawal can be refunded once; the money returns.")
    d.tools.append(
        transition_tool(
            "refund",
            d.withdrawal,
            "refunded",
            ["posted"],
            "Refund a posted withdrawal: its amount returns to the balance.",
            effects=money(d.acct_ref, "amount", 1),
        )
    )


@optional.feature
def holds(d: Ledger) -> None:
    """Money put on hold leaves the balance until released or captured; a quota of active
    holds per account."""
    acct, acct_ref, limit = d.acct, d.acct_ref, int(d.vocab.get("hold_quota", 2))
    statuses = ["active", "released", "captured"]
    d.account.fields.append(FieldSpec(name="held", type="float", generator="zero"))
    hold = entity("hold", "hold", d.px["hold"], money_fields(acct.name), statuses=statuses)
    d.entities.append(hold)
    d.rules.append(
        f"A hold takes money out of the balance until it is released or captured; "
        f"at most {limit} active holds per {acct.label}."
    )

    def held(sign: int) -> Effect:
        return adjust(acct_ref, "held", "amount", sign, money=True)

    d.tools += [
        create_tool(
            f"place_hold_on_{acct.name}",
            hold,
            f"Put an amount of an active {acct.label}'s balance on hold.",
            [ref(d.account), d.amount],
            guards=[
                d.positive,
                d.active,
                d.covered,
                count_below(
                    acct_ref,
                    limit,
                    ["active"],
                    f"{a(acct.label)} may have at most {limit} active holds",
                ),
            ],
            effects=[*money(acct_ref, "amount", -1), held(1)],
        ),
        transition_tool(
            "release",
            hold,
            "released",
            ["active"],
            "Release an active hold: the amount returns to the balance.",
            effects=[*money(acct_ref, "amount", 1), held(-1)],
        ),
        transition_tool(
            "capture",
            hold,
            "captured",
            ["active"],
            "Capture an active hold: the held amount is paid out.",
            effects=[held(-1)],
        ),
        list_by_tool(
            f"list_{acct.name}_holds",
            hold,
            d.account,
            acct_ref,
            f"List the holds on {a(acct.label)}, optionally with one status.",
            status=statuses,
        ),
    ]


@optional.feature
def alerts(d: Ledger) -> None:
    """Balance alerts per account and channel, never two alike."""
    acct, acct_ref = d.acct, d.acct_ref
    channels = list(d.vocab.get("alert_channels", ["email", "sms"]))
    alert = entity(
        "alert",
        "balance alert",
        d.px["alert"],
        [
            ref_field(acct.name),
            enum_field("channel", channels),
            FieldSpec(name="threshold", type="float"),
        ],
        statuses=["on", "off"],
    )
    d.entities.append(alert)
    d.rules.append(f"One balance alert per {acct.label} and channel.")
    d.tools += [
        create_tool(
            "create_balance_alert",
            alert,
            f"Alert the {d.hold_n.label} when {a(acct.label)}'s balance drops below a threshold.",
            [
                ref(d.account),
                choice("channel", "How the alert is sent.", channels),
                amount("threshold", "Alert below this balance."),
            ],
            guards=[
                positive("threshold", "threshold must be positive"),
                no_duplicate(
                    acct_ref,
                    "channel",
                    ["on"],
                    f"this {acct.label} already has an alert on that channel",
                ),
            ],
        ),
        transition_tool(
            "turn_off",
            alert,
            "off",
            ["on"],
            "Turn a balance alert off.",
            name="turn_off_balance_alert",
        ),
        list_by_tool(
            f"list_{acct.name}_alerts",
            alert,
            d.account,
            acct_ref,
            f"List the balance alerts of {a(acct.label)}.",
        ),
    ]


@optional.feature
def frozen_refuses_deposits(d: Ledger) -> None:
    """A stricter rule set: frozen accounts take no deposits either. It changes the words of
    the core's deposit guard and rules, so the core reads it (`receiving`); nothing is added."""


@register_archetype("ledger")
def build_ledger_spec(topic: Topic) -> EnvSpec:
    d = Ledger(topic)
    core(d)
    optional.apply(d)
    if len(d.tools) < COMPARE_BELOW:
        d.tools.append(
            compare_tool(d.account, f"Compare two {d.acct.plural_label} field by field.")
        )
    return d.spec()
