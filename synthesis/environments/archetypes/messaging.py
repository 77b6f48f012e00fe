"""Messaging archetype: members join channels and post messages that can be edited or deleted.

Optional features (per topic): threads (replies to a live message), reactions (one of each per
member and message), muting channels, read receipts, archiving channels (an archived channel
takes no posts or members), pinning, moderation (flag and restore) and membership roles.
"""

from __future__ import annotations

from synthesis.environments.archetypes.features import FeatureSet
from synthesis.environments.archetypes.naming import assign_prefixes, label, noun
from synthesis.environments.archetypes.registry import register_archetype
from synthesis.environments.archetypes.toolkit import (
    SpecDraft,
    a,
    add_lifecycle,
    choice,
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
    ref,
    ref_field,
    ref_in,
    ref_is,
    status_filter,
    status_in,
    text,
    transition_tool,
    update_tool,
    value,
    words,
)
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Topic

FEATURES = ("threads", "reactions", "muting", "read_receipts", "archiving", "pinning",
            "moderation", "roles")  # fmt: skip
optional = FeatureSet("messaging", FEATURES, at_least=3)
REACTIONS = ["thumbs up", "heart", "laugh", "eyes", "party"]
MUTE_FOR = ["1 hour", "8 hours", "1 day", "1 week"]
ROLES = ["member", "moderator", "owner"]
LIVE = ["posted"]  # the messages that take edits, pins, replies, reactions and receipts


class Messaging(SpecDraft):
    """A messaging spec being built: the topic's words, then the records `core` makes."""

    member: EntitySpec
    channel: EntitySpec
    membership: EntitySpec
    message: EntitySpec

    def __init__(self, topic: Topic) -> None:
        super().__init__(topic, optional)
        self.mem, self.chan, self.msg = (
            noun(self.vocab, k) for k in ("member", "channel", "message")
        )
        nouns = [self.mem.name, self.chan.name, self.msg.name]
        self.px = assign_prefixes([*nouns, "membership", "reply", "reaction", "mute", "receipt"])
        self.mem_ref, self.chan_ref = f"{self.mem.name}_id", f"{self.chan.name}_id"
        self.msg_ref = f"{self.msg.name}_id"
        self.join, self.post = f"join_{self.chan.name}", f"post_{self.msg.name}"
        self.live_message = ref_in(
            self.msg_ref, "status", LIVE, f"only {a(words(LIVE))} {self.msg.label} can take that"
        )


def core(d: Messaging) -> None:
    mem, chan, msg = d.mem, d.chan, d.msg
    # Moderation adds a status the delete tool's guard and the status filters quote.
    statuses, transitions = ["posted", "deleted"], {"posted": ["deleted"]}
    if d.has("moderation"):
        statuses.append("flagged")
        transitions = {"posted": ["deleted", "flagged"], "flagged": ["posted", "deleted"]}
    d.member = person_entity(
        mem, d.px[0], FieldSpec(name="handle", type="str", generator="handle", unique=True)
    )
    d.channel = noun_entity(
        chan,
        d.px[1],
        lookup="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="choice",
                values=[label(c) for c in d.vocab["channels"]],
            ),
            enum_field("visibility", ["public", "private"]),
        ],
    )
    d.membership = entity(
        "membership", "membership", d.px[3], [ref_field(mem.name), ref_field(chan.name)]
    )
    d.message = noun_entity(
        msg,
        d.px[2],
        [ref_field(chan.name), ref_field(mem.name), FieldSpec(name="body", type="str")],
        statuses=statuses,
        transitions=transitions,
    )
    d.entities += [d.member, d.channel, d.membership, d.message]
    d.tools += [
        find_by_email(d.member, f"Find a {mem.label} by email address."),
        find_by_name(d.channel, f"Find a {chan.label} by name."),
        list_tool(
            f"list_{chan.name}_{msg.plural}",
            d.message,
            f"List the {msg.plural_label} in a {chan.label}, optionally with one status.",
            ref(d.channel),
            status_filter(statuses, msg.plural_label),
        ),
        list_tool(
            f"list_{mem.name}_{msg.plural}",
            d.message,
            f"List the {msg.plural_label} a {mem.label} wrote.",
            ref(d.member),
        ),
        get_tool(d.message),
        create_tool(
            d.join,
            d.membership,
            f"Add a {mem.label} to a {chan.label} they are not in yet.",
            [ref(d.member), ref(d.channel)],
            guards=[
                once([d.mem_ref, d.chan_ref], f"the {mem.label} is already in that {chan.label}")
            ],
        ),
        list_tool(
            f"list_{chan.name}_memberships",
            d.membership,
            f"List the memberships of a {chan.label}.",
            ref(d.channel),
        ),
        create_tool(
            d.post,
            d.message,
            f"Post a {msg.label} to a {chan.label}.",
            [
                ref(d.channel),
                ref(d.member, description=f"Id of the {mem.label} who writes it."),
                text("body", f"Text of the {msg.label}."),
            ],
        ),
        transition_tool(
            "delete",
            d.message,
            "deleted",
            [s for s in statuses if s != "deleted"],
            f"Delete a {msg.label}.",
        ),
        update_tool(
            f"edit_{msg.name}",
            d.message,
            text("body", "The new text."),
            f"Change the text of a {msg.label} that is not deleted.",
            guards=[status_in(LIVE, f"only {a(words(LIVE))} {msg.label} can be edited")],
        ),
    ]
    d.rules += [
        f"A {mem.label} joins a {chan.label} at most once.",
        f"A deleted {msg.label} cannot be edited.",
    ]


@optional.feature
def archiving(d: Messaging) -> None:
    """An archived channel takes no posts or members; it can be brought back."""
    chan = d.chan
    add_lifecycle(
        d.channel, ["active", "archived"], {"active": ["archived"], "archived": ["active"]}
    )
    active = ref_is(d.chan_ref, "status", "active", f"the {chan.label} is archived")
    d.guard(d.join, active)
    d.guard(
        d.post,
        active,
        rule=f"An archived {chan.label} takes no new {d.msg.plural_label} or members.",
    )
    d.tools += [
        transition_tool(
            "archive", d.channel, "archived", ["active"], f"Archive an active {chan.label}."
        ),
        transition_tool(
            "unarchive", d.channel, "active", ["archived"], f"Bring an archived {chan.label} back."
        ),
    ]


@optional.feature
def moderation(d: Messaging) -> None:
    """Moderators flag a message and restore or delete it (its status is laid out by the core)."""
    msg = d.msg
    d.tools += [
        transition_tool("flag", d.message, "flagged", LIVE, f"Flag a {msg.label} for moderators."),
        transition_tool(
            "restore", d.message, "posted", ["flagged"], f"Restore a flagged {msg.label}."
        ),
    ]
    d.rules.append(f"A flagged {msg.label} is restored or deleted by moderators.")


@optional.feature
def pinning(d: Messaging) -> None:
    """A message is pinned when posted, or pinned and unpinned while it is live."""
    msg = d.msg
    d.add_field(
        d.message,
        FieldSpec(name="pinned", type="bool"),
        create=d.post,
        arg=value("pinned", "boolean", "Pin it to the channel."),
    )
    d.tools.append(
        update_tool(
            f"pin_{msg.name}",
            d.message,
            value("pinned", "boolean", "True to pin, false to unpin."),
            f"Pin or unpin a {msg.label} that is not deleted.",
            guards=[status_in(LIVE, f"only {a(words(LIVE))} {msg.label} can be pinned")],
        )
    )


@optional.feature
def roles(d: Messaging) -> None:
    """A membership has a role (member, moderator, owner), changeable."""
    d.add_field(
        d.membership,
        enum_field("role", ROLES),
        create=d.join,
        arg=choice("role", "The member's role there.", ROLES),
    )
    d.tools.append(
        update_tool(
            "change_membership_role",
            d.membership,
            choice("role", "The new role.", ROLES),
            f"Change a {d.mem.label}'s role in a {d.chan.label}.",
        )
    )


@optional.feature
def threads(d: Messaging) -> None:
    """Replies in the thread of a live message."""
    mem, msg = d.mem, d.msg
    reply = entity(
        "reply",
        "reply",
        d.px[4],
        [ref_field(msg.name), ref_field(mem.name), FieldSpec(name="body", type="str")],
    )
    d.entities.append(reply)
    d.tools += [
        create_tool(
            f"reply_to_{msg.name}",
            reply,
            f"Reply in the thread of a {msg.label} that is not deleted.",
            [
                ref(d.message),
                ref(d.member, description=f"Id of the {mem.label} who replies."),
                text("body", "Text of the reply."),
            ],
            guards=[d.live_message],
        ),
        list_tool(
            f"list_{msg.name}_replies", reply, f"List the replies to a {msg.label}.", ref(d.message)
        ),
    ]
    d.rules.append(f"Only a {words(LIVE)} {msg.label} takes replies.")


@optional.feature
def reactions(d: Messaging) -> None:
    """Each reaction once per member and message."""
    mem, msg = d.mem, d.msg
    emoji = [label(r) for r in d.vocab.get("reactions", REACTIONS)]
    reaction = entity(
        "reaction",
        "reaction",
        d.px[5],
        [ref_field(msg.name), ref_field(mem.name), enum_field("emoji", emoji)],
    )
    d.entities.append(reaction)
    d.tools += [
        create_tool(
            f"react_to_{msg.name}",
            reaction,
            f"React to a {msg.label} (each reaction once per {mem.label}).",
            [ref(d.message), ref(d.member), choice("emoji", "The reaction.", emoji)],
            guards=[
                d.live_message,
                once([d.msg_ref, d.mem_ref, "emoji"], "that reaction is already there"),
            ],
        ),
        list_tool(
            f"list_{msg.name}_reactions",
            reaction,
            f"List the reactions to a {msg.label}.",
            ref(d.message),
        ),
    ]
    d.rules.append(f"A {mem.label} gives each reaction to a {msg.label} at most once.")


@optional.feature
def muting(d: Messaging) -> None:
    """A member mutes a channel for a while, once."""
    mem, chan = d.mem, d.chan
    mute = entity(
        "mute",
        "mute",
        d.px[6],
        [ref_field(mem.name), ref_field(chan.name), enum_field("duration", MUTE_FOR)],
    )
    d.entities.append(mute)
    d.tools.append(
        create_tool(
            f"mute_{chan.name}",
            mute,
            f"Mute a {chan.label} for a {mem.label} for a while (once).",
            [ref(d.member), ref(d.channel), choice("duration", "How long.", MUTE_FOR)],
            guards=[
                once(
                    [d.mem_ref, d.chan_ref],
                    f"the {chan.label} is already muted for that {mem.label}",
                )
            ],
        )
    )


@optional.feature
def read_receipts(d: Messaging) -> None:
    """Who read a live message, once each."""
    mem, msg = d.mem, d.msg
    receipt = entity("receipt", "read receipt", d.px[7], [ref_field(msg.name), ref_field(mem.name)])
    d.entities.append(receipt)
    d.tools += [
        create_tool(
            f"mark_{msg.name}_read",
            receipt,
            f"Record that a {mem.label} read a {msg.label}.",
            [ref(d.message), ref(d.member)],
            guards=[
                d.live_message,
                once([d.msg_ref, d.mem_ref], f"the {mem.label} already read that {msg.label}"),
            ],
        ),
        list_tool(
            f"list_{msg.name}_receipts", receipt, f"List who read a {msg.label}.", ref(d.message)
        ),
    ]


@register_archetype("messaging")
def build_messaging_spec(topic: Topic) -> EnvSpec:
    d = Messaging(topic)
    core(d)
    optional.apply(d)
    return d.spec()
