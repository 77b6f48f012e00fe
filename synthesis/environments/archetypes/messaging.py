"""Messaging archetype: members join channels and post messages that can be edited or deleted.

Optional features (per topic): threads (replies to a live message), reactions (one of each per
member and message), muting channels, read receipts, archiving channels (an archived channel
takes no posts or members), pinning, moderation (flag and restore) and membership roles.
"""

from __future__ import annotations

from synthesis.environments.archetypes import register_archetype
from synthesis.environments.archetypes.features import choose_features
from synthesis.environments.archetypes.naming import assign_prefixes, class_name, label, noun
from synthesis.environments.archetypes.parts import a, find_tool
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
from synthesis.models import EntitySpec, EnvSpec, FieldSpec, Precondition, ToolSpec, Topic

FEATURES = (
    "threads",
    "reactions",
    "muting",
    "read_receipts",
    "archiving",
    "pinning",
    "moderation",
    "roles",
)
REACTIONS = ["thumbs up", "heart", "laugh", "eyes", "party"]
MUTE_FOR = ["1 hour", "8 hours", "1 day", "1 week"]
ROLES = ["member", "moderator", "owner"]


@register_archetype("messaging")
def build_messaging_spec(topic: Topic) -> EnvSpec:
    vocab = topic.vocabulary
    features = choose_features(topic, FEATURES, minimum=3)
    mem, chan, msg = (noun(vocab, key) for key in ("member", "channel", "message"))
    reactions = [label(r) for r in vocab.get("reactions", REACTIONS)]
    px = assign_prefixes(
        [mem.name, chan.name, msg.name, "membership", "reply", "reaction", "mute", "receipt"]
    )
    mem_px, chan_px, msg_px, mbr_px, rep_px, rea_px, mut_px, rec_px = px

    member = EntitySpec(
        name=mem.name,
        collection=mem.plural,
        id_prefix=mem_px,
        label=mem.label,
        lookup_field="email",
        fields=[
            FieldSpec(name="name", type="str", generator="person_name"),
            FieldSpec(name="email", type="str", generator="email", unique=True),
            FieldSpec(name="handle", type="str", generator="handle", unique=True),
        ],
    )
    archiving = "archiving" in features
    channel = EntitySpec(
        name=chan.name,
        collection=chan.plural,
        id_prefix=chan_px,
        label=chan.label,
        lookup_field="name",
        fields=[
            FieldSpec(
                name="name",
                type="str",
                unique=True,
                generator="choice",
                values=[label(c) for c in vocab["channels"]],
            ),
            FieldSpec(name="visibility", type="enum", values=["public", "private"]),
            *(
                [FieldSpec(name="status", type="enum", values=["active", "archived"])]
                if archiving
                else []
            ),
        ],
        status_field="status" if archiving else None,
        initial_status="active" if archiving else None,
        transitions={"active": ["archived"], "archived": ["active"]} if archiving else {},
    )
    membership_fields = [
        FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
        FieldSpec(name=f"{chan.name}_id", type="ref", ref=chan.name),
    ]
    join_params = [ref(member), ref(channel)]
    if "roles" in features:
        membership_fields.append(FieldSpec(name="role", type="enum", values=ROLES))
        join_params.append(value("role", "string", "The member's role there.", enum=ROLES))
    membership = EntitySpec(
        name="membership",
        collection="memberships",
        id_prefix=mbr_px,
        label="membership",
        fields=membership_fields,
    )

    statuses = ["posted", "deleted"]
    transitions: dict[str, list[str]] = {"posted": ["deleted"]}
    if "moderation" in features:
        statuses.append("flagged")
        transitions = {"posted": ["deleted", "flagged"], "flagged": ["posted", "deleted"]}
    live = ["posted"]
    message_fields = [
        FieldSpec(name=f"{chan.name}_id", type="ref", ref=chan.name),
        FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
        FieldSpec(name="body", type="str"),
        FieldSpec(name="status", type="enum", values=statuses),
    ]
    post_params = [
        ref(channel),
        ref(member, description=f"Id of the {mem.label} who writes it."),
        value("body", "string", f"Text of the {msg.label}."),
    ]
    if "pinning" in features:
        message_fields.append(FieldSpec(name="pinned", type="bool"))
        post_params.append(value("pinned", "boolean", "Pin it to the channel."))
    active_channel = Precondition(
        kind="ref_field_equals",
        param=f"{chan.name}_id",
        field="status",
        value="active",
        error=f"the {chan.label} is archived",
    )
    message = EntitySpec(
        name=msg.name,
        collection=msg.plural,
        id_prefix=msg_px,
        label=msg.label,
        status_field="status",
        initial_status="posted",
        transitions=transitions,
        fields=message_fields,
    )
    entities = [member, channel, membership, message]
    live_message = Precondition(
        kind="ref_field_in",
        param=f"{msg.name}_id",
        field="status",
        values=live,
        error=f"only {a(words(live))} {msg.label} can take that",
    )
    tools: list[ToolSpec] = [
        find_tool(member, f"Find a {mem.label} by email address.", "Email address."),
        find_tool(channel, f"Find a {chan.label} by name.", f"The {chan.label}'s name."),
        list_tool(
            f"list_{chan.name}_{msg.plural}",
            message,
            f"List the {msg.plural_label} in a {chan.label}, optionally with one status.",
            ref(channel),
            status_filter(statuses, msg.plural_label),
        ),
        list_tool(
            f"list_{mem.name}_{msg.plural}",
            message,
            f"List the {msg.plural_label} a {mem.label} wrote.",
            ref(member),
        ),
        get_tool(message),
        ToolSpec(
            name=f"join_{chan.name}",
            kind="mutate",
            operation="create",
            entity="membership",
            description=f"Add a {mem.label} to a {chan.label} they are not in yet.",
            params=join_params,
            preconditions=[
                Precondition(
                    kind="no_conflict",
                    values=[f"{mem.name}_id", f"{chan.name}_id"],
                    error=f"the {mem.label} is already in that {chan.label}",
                ),
                *([active_channel] if archiving else []),
            ],
        ),
        list_tool(
            f"list_{chan.name}_memberships",
            membership,
            f"List the memberships of a {chan.label}.",
            ref(channel),
        ),
        ToolSpec(
            name=f"post_{msg.name}",
            kind="mutate",
            operation="create",
            entity=msg.name,
            description=f"Post a {msg.label} to a {chan.label}.",
            params=post_params,
            preconditions=[active_channel] if archiving else [],
        ),
        transition_tool(
            "delete",
            message,
            "deleted",
            [s for s in statuses if s != "deleted"],
            f"Delete a {msg.label}.",
        ),
        update_tool(
            f"edit_{msg.name}",
            message,
            value("body", "string", "The new text."),
            f"Change the text of a {msg.label} that is not deleted.",
            guards=[
                Precondition(
                    kind="status_in",
                    values=live,
                    error=f"only {a(words(live))} {msg.label} can be edited",
                )
            ],
        ),
    ]
    rules = [
        f"A {mem.label} joins a {chan.label} at most once.",
        f"A deleted {msg.label} cannot be edited.",
    ]
    if archiving:
        tools += [
            transition_tool(
                "archive", channel, "archived", ["active"], f"Archive an active {chan.label}."
            ),
            transition_tool(
                "unarchive",
                channel,
                "active",
                ["archived"],
                f"Bring an archived {chan.label} back.",
            ),
        ]
        rules.append(f"An archived {chan.label} takes no new {msg.plural_label} or members.")
    if "moderation" in features:
        tools += [
            transition_tool(
                "flag", message, "flagged", live, f"Flag a {msg.label} for moderators."
            ),
            transition_tool(
                "restore", message, "posted", ["flagged"], f"Restore a flagged {msg.label}."
            ),
        ]
        rules.append(f"A flagged {msg.label} is restored or deleted by moderators.")
    if "pinning" in features:
        tools.append(
            update_tool(
                f"pin_{msg.name}",
                message,
                value("pinned", "boolean", "True to pin, false to unpin."),
                f"Pin or unpin a {msg.label} that is not deleted.",
                guards=[
                    Precondition(
                        kind="status_in",
                        values=live,
                        error=f"only {a(words(live))} {msg.label} can be pinned",
                    )
                ],
            )
        )
    if "roles" in features:
        tools.append(
            update_tool(
                "change_membership_role",
                membership,
                value("role", "string", "The new role.", enum=ROLES),
                f"Change a {mem.label}'s role in a {chan.label}.",
            )
        )
    if "threads" in features:
        reply = EntitySpec(
            name="reply",
            collection="replies",
            id_prefix=rep_px,
            label="reply",
            fields=[
                FieldSpec(name=f"{msg.name}_id", type="ref", ref=msg.name),
                FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
                FieldSpec(name="body", type="str"),
            ],
        )
        entities.append(reply)
        tools += [
            ToolSpec(
                name=f"reply_to_{msg.name}",
                kind="mutate",
                operation="create",
                entity="reply",
                description=f"Reply in the thread of a {msg.label} that is not deleted.",
                params=[
                    ref(message),
                    ref(member, description=f"Id of the {mem.label} who replies."),
                    value("body", "string", "Text of the reply."),
                ],
                preconditions=[live_message],
            ),
            list_tool(
                f"list_{msg.name}_replies",
                reply,
                f"List the replies to a {msg.label}.",
                ref(message),
            ),
        ]
        rules.append(f"Only a {words(live)} {msg.label} takes replies.")
    if "reactions" in features:
        reaction = EntitySpec(
            name="reaction",
            collection="reactions",
            id_prefix=rea_px,
            label="reaction",
            fields=[
                FieldSpec(name=f"{msg.name}_id", type="ref", ref=msg.name),
                FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
                FieldSpec(name="emoji", type="enum", values=reactions),
            ],
        )
        entities.append(reaction)
        tools += [
            ToolSpec(
                name=f"react_to_{msg.name}",
                kind="mutate",
                operation="create",
                entity="reaction",
                description=f"React to a {msg.label} (each reaction once per {mem.label}).",
                params=[
                    ref(message),
                    ref(member),
                    value("emoji", "string", "The reaction.", enum=reactions),
                ],
                preconditions=[
                    live_message,
                    Precondition(
                        kind="no_conflict",
                        values=[f"{msg.name}_id", f"{mem.name}_id", "emoji"],
                        error="that reaction is already there",
                    ),
                ],
            ),
            list_tool(
                f"list_{msg.name}_reactions",
                reaction,
                f"List the reactions to a {msg.label}.",
                ref(message),
            ),
        ]
        rules.append(f"A {mem.label} gives each reaction to a {msg.label} at most once.")
    if "muting" in features:
        mute = EntitySpec(
            name="mute",
            collection="mutes",
            id_prefix=mut_px,
            label="mute",
            fields=[
                FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
                FieldSpec(name=f"{chan.name}_id", type="ref", ref=chan.name),
                FieldSpec(name="duration", type="enum", values=MUTE_FOR),
            ],
        )
        entities.append(mute)
        tools.append(
            ToolSpec(
                name=f"mute_{chan.name}",
                kind="mutate",
                operation="create",
                entity="mute",
                description=f"Mute a {chan.label} for a {mem.label} for a while (once).",
                params=[
                    ref(member),
                    ref(channel),
                    value("duration", "string", "How long.", enum=MUTE_FOR),
                ],
                preconditions=[
                    Precondition(
                        kind="no_conflict",
                        values=[f"{mem.name}_id", f"{chan.name}_id"],
                        error=f"the {chan.label} is already muted for that {mem.label}",
                    )
                ],
            )
        )
    if "read_receipts" in features:
        receipt = EntitySpec(
            name="receipt",
            collection="receipts",
            id_prefix=rec_px,
            label="read receipt",
            fields=[
                FieldSpec(name=f"{msg.name}_id", type="ref", ref=msg.name),
                FieldSpec(name=f"{mem.name}_id", type="ref", ref=mem.name),
            ],
        )
        entities.append(receipt)
        tools += [
            ToolSpec(
                name=f"mark_{msg.name}_read",
                kind="mutate",
                operation="create",
                entity="receipt",
                description=f"Record that a {mem.label} read a {msg.label}.",
                params=[ref(message), ref(member)],
                preconditions=[
                    live_message,
                    Precondition(
                        kind="no_conflict",
                        values=[f"{msg.name}_id", f"{mem.name}_id"],
                        error=f"the {mem.label} already read that {msg.label}",
                    ),
                ],
            ),
            list_tool(
                f"list_{msg.name}_receipts",
                receipt,
                f"List who read a {msg.label}.",
                ref(message),
            ),
        ]
    return EnvSpec(
        env_id=f"{topic.topic_id}-messaging",
        topic_id=topic.topic_id,
        archetype="messaging",
        class_name=class_name(topic.topic_id),
        title=topic.title,
        description=topic.description,
        entities=entities,
        tools=tools,
        rules=rules,
    )
