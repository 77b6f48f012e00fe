"""Compositions of two archetypes: one environment joining both parts' entities and tools, with
a cross-part link that makes it more than two environments side by side.

A topic names `"archetype": "composition"` and `vocabulary.parts: [first, second]`, with each
part's vocabulary under the part's name. Each part is built by its own archetype; then the
second part's person (holder, member, requester …) is merged into the first part's person (one
customer, not two), entity and tool names that still clash get the second part's name as a
prefix, and the pair's link rewires tools across the parts: a booking charges the client's
account and a cancellation refunds it; an order is paid from an account; an event is signed
off by an approver whose limit covers the room's hire cost; a ticket is raised in a channel.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable
from typing import Any

from synthesis.environments.archetypes.features import feature_names
from synthesis.environments.archetypes.naming import NamingError, class_name, noun, plural
from synthesis.environments.archetypes.registry import get_archetype, register_archetype
from synthesis.environments.archetypes.toolkit import (
    a,
    adjust,
    amount,
    covers,
    linked_covers,
    list_by_tool,
    positive,
    ref,
    ref_is,
    status_in,
    transition_tool,
)
from synthesis.hashing import derive_seed
from synthesis.models import (
    EntitySpec,
    EnvSpec,
    FieldSpec,
    Precondition,
    ToolSpec,
    Topic,
)

# The vocabulary key naming each archetype's person: the one record both parts share.
PERSON_KEY = {
    "booking": "customer",
    "ledger": "holder",
    "order_lifecycle": "customer",
    "inventory": "requester",
    "ticketing": "requester",
    "messaging": "member",
    "scheduling": "person",
    "approvals": "requester",
}

# Features a part gets when its vocabulary names none: few, so the joined environment stays
# within 30 tools; which ones is drawn from the topic id, so compositions differ in shape too.
PART_FEATURES = 2
MAX_TOOLS = 30
# Part features a pair's link does its own way, so a part never draws them: the order-ledger
# link refunds paid orders to the account (order_lifecycle's own refunds feature refunds
# delivered ones, with a tool and a status of the same names).
LINK_REPLACES: dict[tuple[str, str], dict[str, set[str]]] = {
    ("order_lifecycle", "ledger"): {"order_lifecycle": {"refunds"}},
}

Link = Callable[[EnvSpec, dict[str, Any], dict[str, Any]], list[str]]
_LINKS: dict[tuple[str, str], Link] = {}


def register_link(first: str, second: str) -> Callable[[Link], Link]:
    """Register the cross-part link of a pair. A link only makes tools of one part reference
    records no tool creates (people, accounts, rooms, channels): the initial states' history
    creates records from those alone, so a create that needed another created record would
    never appear in a history."""

    def decorate(link: Link) -> Link:
        _LINKS[(first, second)] = link
        return link

    return decorate


def supported_pairs() -> list[tuple[str, str]]:
    return sorted(_LINKS)


@register_archetype("composition")
def build_composition_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    parts = vocab["parts"]
    pair = (
        tuple(parts) if isinstance(parts, list) and all(isinstance(p, str) for p in parts) else ()
    )
    if pair not in _LINKS:
        known = ", ".join("+".join(p) for p in supported_pairs())
        raise NamingError("vocabulary 'parts'", parts, f"is not a known pair (known: {known})")
    first, second = parts
    vocab_a, vocab_b = _part_vocabulary(topic, first), _part_vocabulary(topic, second)
    spec_a, spec_b = part_specs(topic)
    person = noun(vocab_a, PERSON_KEY[first]).name
    spec, from_b = _join(
        topic, spec_a, spec_b, second, person, noun(vocab_b, PERSON_KEY[second]).name
    )
    rules = _LINKS[(first, second)](spec, vocab_a, vocab_b)
    spec.rules = [*spec.rules, *rules]
    _trim(spec, from_b)
    return spec


def part_specs(topic: Topic) -> tuple[EnvSpec, EnvSpec]:
    """The two parts as their own archetypes build them for this topic (before joining)."""
    first, second = topic.vocabulary["parts"]
    return (
        _build_part(topic, first, _part_vocabulary(topic, first)),
        _build_part(topic, second, _part_vocabulary(topic, second)),
    )


# --------------------------------------------------------------------------- joining


def _part_vocabulary(topic: Topic, part: str) -> dict[str, Any]:
    vocab = topic.vocabulary.get(part)
    if not isinstance(vocab, dict):
        raise NamingError(f"vocabulary {part!r}", vocab, "must be the part's vocabulary (a map)")
    vocab = dict(vocab)
    replaced = LINK_REPLACES.get(tuple(topic.vocabulary["parts"]), {}).get(part, set())
    options = [f for f in feature_names(part) if f not in replaced]
    listed = vocab.get("features")
    if isinstance(listed, list) and replaced & set(listed):
        raise NamingError(
            f"vocabulary {part!r} 'features'",
            sorted(replaced & set(listed))[0],
            "is what this composition's link does its own way",
        )
    if "features" not in vocab and options:
        rng = random.Random(derive_seed("composition-features", topic.topic_id, part))
        vocab["features"] = sorted(rng.sample(options, min(PART_FEATURES, len(options))))
    return vocab


def _build_part(topic: Topic, part: str, vocab: dict[str, Any]) -> EnvSpec:
    sub = Topic(
        topic_id=topic.topic_id,
        title=topic.title,
        archetype=part,
        description=topic.description,
        vocabulary=vocab,
    )
    try:
        return get_archetype(part)(sub)
    except KeyError as exc:
        raise KeyError(f"{part}.{exc.args[0]}") from None


def _join(
    topic: Topic, spec_a: EnvSpec, spec_b: EnvSpec, second: str, person: str, person_b: str
) -> tuple[EnvSpec, set[str]]:
    """Both parts in one spec: B's person is A's, B's clashing names get B's prefix; with
    the names of the tools that came from B."""
    b = spec_b.model_dump()
    _rename_entity(b, person_b, person)
    taken = {e.name for e in spec_a.entities}
    tag = second.split("_")[0]
    for entity in list(b["entities"]):
        if entity["name"] in taken and entity["name"] != person:
            _rename_entity(b, entity["name"], f"{tag}_{entity['name']}")
    joined = spec_a.model_copy(deep=True)
    merged = joined.entity(person)
    prefixes = {e.id_prefix for e in joined.entities}
    for raw in b["entities"]:
        entity = EntitySpec.model_validate(raw)
        if entity.name == person:
            have = {f.name for f in merged.fields}
            merged.fields += [f for f in entity.fields if f.name not in have]
            continue
        entity.id_prefix = _free_prefix(entity.id_prefix, prefixes)
        prefixes.add(entity.id_prefix)
        joined.entities.append(entity)
    names = {t.name: t for t in joined.tools}
    from_b: set[str] = set()
    for raw in b["tools"]:
        tool = ToolSpec.model_validate(raw)
        if tool.name in names:
            if _same_tool(names[tool.name], tool):
                continue  # the shared person's lookup, now the same tool twice
            tool.name = f"{tag}_{tool.name}"
        names[tool.name] = tool
        joined.tools.append(tool)
        from_b.add(tool.name)
    joined.env_id = f"{topic.topic_id}-composition"
    joined.archetype = "composition"
    joined.class_name = class_name(topic.topic_id)
    joined.rules = [*spec_a.rules, *spec_b.rules]
    return joined, from_b


def _same_tool(one: ToolSpec, other: ToolSpec) -> bool:
    """Whether two tools do the same thing (their descriptions may name the person apart)."""

    def shape(tool: ToolSpec) -> tuple:
        return (tool.operation, tool.entity, tool.field, [p.name for p in tool.params])

    return shape(one) == shape(other)


def _free_prefix(prefix: str, taken: set[str]) -> str:
    n, candidate = 2, prefix
    while candidate in taken:
        candidate = f"{prefix[:2]}{n}"
        n += 1
    return candidate


def _rename_entity(spec: dict[str, Any], old: str, new: str) -> None:
    """Rename entity `old` to `new` everywhere in a dumped spec: its collection, references,
    `<old>_id` fields and parameters, and the word in tool names (`list_<old>s` …)."""
    if old == new:
        return
    old_id, new_id = f"{old}_id", f"{new}_id"

    def name(value: Any) -> Any:
        return new_id if value == old_id else value

    word = re.compile(rf"(?:(?<=_)|^){re.escape(old)}(?=(?:e?s)?(?:_|$))")
    for entity in spec["entities"]:
        if entity["name"] == old:
            entity["name"], entity["collection"] = new, plural(new)
        for f in entity["fields"]:
            if f["ref"] == old:
                f["ref"] = new
            f["name"] = name(f["name"])
        entity["lookup_field"] = name(entity["lookup_field"])
    for tool in spec["tools"]:
        if tool["entity"] == old:
            tool["entity"] = new
        tool["name"] = word.sub(new, tool["name"])
        tool["field"] = name(tool["field"])
        for p in tool["params"]:
            if p["ref"] == old:
                p["ref"] = new
            p["name"], p["field"] = name(p["name"]), name(p["field"])
        for pre in tool["preconditions"]:
            for key in ("param", "other", "field", "other_field"):
                if key in pre:
                    pre[key] = name(pre[key])
            pre["values"] = [name(v) for v in pre["values"]]
        for effect in tool["effects"]:
            for key in ("via", "field", "by_field"):
                effect[key] = name(effect[key])
        tool["derived"] = {
            name(k): [name(v) for v in values] for k, values in tool["derived"].items()
        }


def _trim(spec: EnvSpec, from_b: set[str]) -> None:
    """Keep at most MAX_TOOLS tools: the second part's extra read tools go first (compare,
    then aggregates, then searches), never a tool the link or a task chain depends on."""
    for operation in ("compare", "aggregate", "search"):
        for tool in reversed(list(spec.tools)):
            if len(spec.tools) <= MAX_TOOLS:
                return
            if tool.operation == operation and tool.name in from_b:
                spec.tools.remove(tool)


# --------------------------------------------------------------------------- links


def _tool(spec: EnvSpec, entity: str, operation: str, target: str | None = None) -> ToolSpec:
    for tool in spec.tools:
        if tool.entity == entity and tool.operation == operation:
            if target is None or tool.target_status == target:
                return tool
    raise KeyError(f"no {operation} tool on {entity} (target {target})")


def _active_account(account: EntitySpec, param: str) -> Precondition:
    return ref_is(param, "status", "active", f"the {account.label} is not active")


@register_link("booking", "ledger")
def link_booking_to_ledger(spec: EnvSpec, vocab_a: dict, vocab_b: dict) -> list[str]:
    """A booking is paid from an account: creating one charges its fee to an active account
    whose balance covers it; cancelling it refunds the fee."""
    book = spec.entity(noun(vocab_a, "booking").name)
    account = spec.entity(noun(vocab_b, "account").name)
    acct_ref = f"{account.name}_id"
    money = vocab_b.get("currency", "")
    book.fields += [
        FieldSpec(name=acct_ref, type="ref", ref=account.name),
        FieldSpec(name="fee", type="float", generator="price:20:90"),
    ]
    create = _tool(spec, book.name, "create")
    create.description += f" Its fee is charged to {a(account.label)}."
    create.params += [
        ref(account),
        amount("fee", f"The fee to charge{f' in {money}' if money else ''}."),
    ]
    create.preconditions += [
        positive("fee", "the fee must be positive"),
        _active_account(account, acct_ref),
        covers(
            acct_ref,
            "balance",
            "fee",
            f"insufficient balance: the {account.label} does not cover the fee",
        ),
    ]
    create.effects.append(adjust(acct_ref, "balance", "fee", -1, money=True))
    cancel = _tool(spec, book.name, "transition", "cancelled")
    cancel.description += f" The fee is refunded to the {account.label}."
    cancel.effects.append(adjust(acct_ref, "balance", "fee", 1, money=True))
    return [
        f"A {book.label}'s fee is charged to an active {account.label} whose balance covers it.",
        f"Cancelling a {book.label} refunds its fee to the {account.label} it was charged to.",
    ]


@register_link("order_lifecycle", "ledger")
def link_order_to_ledger(spec: EnvSpec, vocab_a: dict, vocab_b: dict) -> list[str]:
    """An order names the account that pays it: paying needs the balance to cover the total
    and debits it; a paid order is refunded (not cancelled), crediting the total back."""
    order = spec.entity("order")
    spec.rules = [
        r.replace("pending or paid orders can be cancelled", "pending orders can be cancelled")
        for r in spec.rules
    ]
    account = spec.entity(noun(vocab_b, "account").name)
    acct_ref = f"{account.name}_id"
    order.fields.insert(1, FieldSpec(name=acct_ref, type="ref", ref=account.name))
    status = order.field("status")
    status.values = [*status.values, "refunded"]
    order.transitions = {
        **order.transitions,
        "pending": ["paid", "cancelled"],
        "paid": ["shipped", "refunded"],
    }
    create = _tool(spec, "order", "create")
    create.description += f" Names the {account.label} that will pay it."
    create.params.insert(1, ref(account))
    create.preconditions.append(_active_account(account, acct_ref))
    pay = _tool(spec, "order", "transition", "paid")
    pay.description = f"Pay a pending order from its {account.label}; the balance must cover it."
    pay.preconditions.append(
        linked_covers(
            acct_ref,
            "balance",
            "total",
            f"insufficient balance: the {account.label} does not cover the order total",
        )
    )
    pay.effects.append(adjust(acct_ref, "balance", "total", -1, money=True))
    cancel = _tool(spec, "order", "transition", "cancelled")
    cancel.description = "Cancel a pending order; its stock is returned."
    cancel.preconditions[0] = status_in(["pending"], "only a pending order can be cancelled")
    stock_back = [e for e in cancel.effects if e.kind == "adjust_ref_field"]
    spec.tools.insert(
        spec.tools.index(cancel) + 1,
        transition_tool(
            "refund",
            order,
            "refunded",
            ["paid"],
            f"Refund a paid order: the total returns to its {account.label} and "
            "its stock is returned.",
            effects=[*stock_back, adjust(acct_ref, "balance", "total", 1, money=True)],
        ),
    )
    for tool in spec.tools:  # status filters on orders learn the new status
        for p in tool.params:
            if tool.entity == "order" and p.name == "status" and p.enum:
                p.enum = [*p.enum, "refunded"]
    return [
        f"Paying an order debits its total from the order's {account.label}, whose balance "
        "must cover it.",
        f"A paid order is refunded instead of cancelled: its total returns to the {account.label}.",
    ]


@register_link("scheduling", "approvals")
def link_event_to_approver(spec: EnvSpec, vocab_a: dict, vocab_b: dict) -> list[str]:
    """Every event is signed off by an approver whose approval limit covers the room's hire
    cost (and who is not away, where approvers can be)."""
    event = spec.entity(noun(vocab_a, "event").name)
    room = spec.entity(noun(vocab_a, "resource").name)
    approver = spec.entity(noun(vocab_b, "approver").name)
    room_ref, appr_ref = f"{room.name}_id", f"signed_off_by_{approver.name}_id"
    room.fields.append(FieldSpec(name="hire_cost", type="float", generator="price:15:400"))
    event.fields.append(FieldSpec(name=appr_ref, type="ref", ref=approver.name))
    book = _tool(spec, event.name, "create")
    book.description += (
        f" {a(approver.label).capitalize()} whose approval limit covers the "
        f"{room.label}'s hire cost signs it off."
    )
    book.params.append(
        ref(approver, appr_ref, f"Id of the {approver.label} who signs the {event.label} off.")
    )
    guards = [
        Precondition(
            kind="ref_field_covers",
            param=appr_ref,
            field="approval_limit",
            other=room_ref,
            other_field="hire_cost",
            error=f"the {approver.label}'s approval limit does not cover the {room.label}'s "
            "hire cost",
        )
    ]
    if approver.status_field:
        away = f"the {approver.label} is away"
        guards.insert(0, ref_is(appr_ref, approver.status_field, "available", away))
    book.preconditions += guards
    spec.tools.append(
        list_by_tool(
            f"list_{event.collection}_signed_off_by_{approver.name}",
            event,
            approver,
            appr_ref,
            f"List the {plural(event.label)} {a(approver.label)} signed off.",
        )
    )
    return [
        f"Every {event.label} is signed off by {a(approver.label)} whose approval limit covers "
        f"the {room.label}'s hire cost"
        + (" and who is not away." if approver.status_field else "."),
    ]


@register_link("ticketing", "messaging")
def link_ticket_to_channel(spec: EnvSpec, vocab_a: dict, vocab_b: dict) -> list[str]:
    """Every ticket is raised in a public channel (one not archived, where channels can be
    archived), and a channel's tickets can be listed."""
    ticket = spec.entity(noun(vocab_a, "ticket").name)
    channel = spec.entity(noun(vocab_b, "channel").name)
    chan_ref = f"{channel.name}_id"
    ticket.fields.append(FieldSpec(name=chan_ref, type="ref", ref=channel.name))
    opening = _tool(spec, ticket.name, "create")
    opening.description += f" It is raised in a public {channel.label}."
    opening.params.append(
        ref(channel, description=f"Id of the {channel.label} the {ticket.label} is raised in.")
    )
    opening.preconditions.append(
        ref_is(
            chan_ref,
            "visibility",
            "public",
            f"{a(ticket.label)} can only be raised in a public {channel.label}",
        )
    )
    rule = f"{a(ticket.label).capitalize()} is raised only in a public {channel.label}"
    if channel.status_field:
        archived = f"an archived {channel.label} takes no {plural(ticket.label)}"
        opening.preconditions.append(ref_is(chan_ref, channel.status_field, "active", archived))
        rule += " that is not archived"
    spec.tools.append(
        list_by_tool(
            f"list_{channel.name}_{ticket.collection}",
            ticket,
            channel,
            chan_ref,
            f"List the {plural(ticket.label)} raised in {a(channel.label)}, optionally with "
            "one status.",
            status=ticket.field("status").values,
        )
    )
    return [rule + "."]
