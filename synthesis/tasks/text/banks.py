"""Phrasing banks: many ways to ask for each kind of goal, per archetype and per operation.

Cores are bare verb phrases ("cancel {t}") so any lead fits them ("Could you ...?", "I need
to ..."). Keys are (archetype, kind) with a fallback to ("", kind), so an archetype without
its own entries (or one added later) still reads well. Placeholders: {t} the record, {what}
a field, {v} a value, {status} a status in words, {label} a new record's noun with its
article ({a_label}), {for} whom or what it is for, {with} its values.

The order of every tuple is part of what a seed means: reordering changes every build's
text.
"""

from __future__ import annotations

GENERIC = ""

# -- leads: how a goal's verb phrase becomes a sentence ---------------------------------------

FIRST_LEADS = {
    "staff": (
        "Please {c}.",
        "Could you {c}?",
        "Can you {c}?",
        "I need you to {c}.",
        "{C}.",
        "Would you {c}?",
        "Kindly {c}.",
        "Go ahead and {c}.",
        "I'd like you to {c}.",
        "We need to {c}.",
        "Your task: {c}.",
        "Be so kind as to {c}.",
        "Have a go at this: {c}.",
        "If you can, {c}.",
        "Right away please, {c}.",
        "First, {c}.",
        "Start by making sure to {c}.",
        "The main thing is to {c}.",
        "Could you please {c}?",
        "Please make sure to {c}.",
        "It'd be great if you could {c}.",
        "I'd appreciate it if you'd {c}.",
        "Would you kindly {c}?",
        "See if you can {c}.",
        "Time to {c}.",
        "We've been asked to {c}.",
        "Let's {c}.",
        "Quick one: {c}.",
        "I'd be grateful if you could {c}.",
        "Do me a favour and {c}.",
        "Would you be able to {c}?",
        "When you have a moment, {c}.",
        "Today's job: {c}.",
        "Can I get you to {c}?",
        "I'm asking you to {c}.",
        "Could you sort this: {c}.",
        "Here's what I need: {c}.",
        "Please go in and {c}.",
        "If you'd be so good, {c}.",
        "Need you to {c}, please.",
        "Be a star and {c}.",
        "Straightforward one: {c}.",
        "Any chance you could {c}?",
    ),
    "customer": (
        "I'd like to {c}.",
        "I want to {c}.",
        "I need to {c}.",
        "Could you {c}?",
        "Can you {c} for me?",
        "Is it possible to {c}?",
        "Please {c}.",
        "Would you be able to {c}?",
        "I was hoping you could {c}.",
        "Can I {c}?",
        "Help me {c}, please.",
        "I'd really appreciate it if you could {c}.",
        "I'm writing because I'd like to {c}.",
        "Could I ask you to {c}?",
        "I'd love it if you could {c}.",
        "Any chance you could {c}?",
        "I'm hoping to {c}.",
        "I would like to {c}, please.",
        "Please could you {c}?",
        "Would it be okay to {c}?",
        "Could you help me {c}?",
        "I'd be really grateful if you could {c}.",
        "Would you mind if we {c}?",
        "I'm keen to {c}.",
        "Is there any way to {c}?",
        "I've decided I'd like to {c}.",
        "Please would you {c}?",
        "I wonder if you could {c}.",
        "Could you possibly {c}?",
        "My request is simple: {c}.",
        "Can you please {c}?",
        "I'd like you to {c}, if you can.",
    ),
    "on_behalf": (
        "They'd like to {c}.",
        "They want to {c}.",
        "They asked us to {c}.",
        "Please {c}.",
        "Could you {c} for them?",
        "Can you {c}?",
        "They need to {c}.",
        "The request is to {c}.",
        "What they want: {c}.",
        "I told them we'd {c}.",
        "They're asking us to {c}.",
        "They'd be grateful if we could {c}.",
        "Their request: {c}.",
        "Could we {c} for them?",
        "They've asked whether we can {c}.",
        "Their ask is to {c}.",
        "Could you please {c}?",
        "They were hoping we could {c}.",
        "Can we {c} for them today?",
        "Please go ahead and {c}.",
        "They'd appreciate it if we could {c}.",
    ),
}

FIRST_LEADS["on_behalf_staff"] = (
    "They asked us to {c}.",
    "Please {c}.",
    "Could you {c} for them?",
    "Can you {c}?",
    "The request is to {c}.",
    "I told them we'd {c}.",
    "They're asking us to {c}.",
    "Could we {c} for them?",
    "They'd like us to {c}.",
)

NEXT_LEADS = {
    "staff": (
        "Then {c}.",
        "After that, {c}.",
        "Once that is done, {c}.",
        "Also, {c}.",
        "Next, {c}.",
        "When that's sorted, {c}.",
        "Following that, please {c}.",
        "Then could you {c}?",
        "And while you're at it, {c}.",
        "On top of that, {c}.",
        "With that out of the way, {c}.",
        "Afterwards, {c}.",
        "After you've finished that, {c}.",
        "Then please make sure to {c}.",
        "Straight after, {c}.",
        "Later on, {c}.",
        "Once you've finished that, {c}.",
    ),
    "customer": (
        "Then I'd like to {c}.",
        "Also, could you {c}?",
        "After that, please {c}.",
        "And I'd also like to {c}.",
        "Once that's done, can you {c}?",
        "One more thing: I need to {c}.",
        "While you're at it, please {c}.",
        "Then, if you don't mind, {c}.",
        "I'd also like you to {c}.",
        "On top of that, I want to {c}.",
    ),
    "on_behalf": (
        "After that they'd like to {c}.",
        "They also want to {c}.",
        "Then please {c}.",
        "Once that's done, {c}.",
        "They also asked us to {c}.",
        "And then {c}.",
        "Also, {c}.",
        "On top of that, {c}.",
    ),
}

NEXT_LEADS["on_behalf_staff"] = (
    "Then please {c}.",
    "Once that's done, {c}.",
    "They also asked us to {c}.",
    "And then {c}.",
    "Also, {c}.",
    "On top of that, {c}.",
)

# -- cores: one goal as a bare verb phrase ------------------------------------------------------

# A change whose new value the asker gives only when asked (a multi-turn opening): the
# field is named, so the agent knows what to ask for.
UPDATE_WITHHELD = (
    "change the {what} of {t}",
    "update the {what} on {t}",
    "set a new {what} for {t}",
    "correct the {what} of {t}",
    "fix the {what} on {t}",
    "give {t} a different {what}",
    "amend the {what} of {t}",
    "edit the {what} of {t}",
    "change {t}'s {what}",
    "sort out the {what} of {t}",
)

UPDATE = {
    GENERIC: (
        "change the {what} of {t} to {v}",
        "update the {what} on {t} to {v}",
        "set the {what} of {t} to {v}",
        "make the {what} of {t} {v}",
        "switch the {what} of {t} over to {v}",
        "put {v} as the {what} for {t}",
        "record {v} as the new {what} of {t}",
        "have the {what} of {t} read {v}",
        "amend {t} so its {what} is {v}",
        "adjust the {what} on {t} to {v}",
        "correct the {what} of {t} to {v}",
        "edit {t} and set its {what} to {v}",
        "give {t} a {what} of {v}",
        "fix the {what} for {t}: it should be {v}",
        "replace the {what} of {t} with {v}",
        "modify {t} so that the {what} becomes {v}",
        "change {t} so it has {v} as its {what}",
        "put the {what} of {t} down as {v}",
        "update {t} with {v} as the new {what}",
        "enter {v} for the {what} of {t}",
        "alter the {what} of {t} to {v}",
        "make {v} the {what} of {t}",
        "get the {what} of {t} changed to {v}",
        "set {t}'s {what} to {v}",
        "swap the {what} on {t} for {v}",
        "note {v} as the {what} for {t}",
    ),
    "booking": (
        "switch {t} to {v} instead",
        "move {t} over to {v} for its {what}",
        "rebook {t} with {v} as the {what}",
        "change {t} so the {what} is {v}",
    ),
    "ledger": (
        "adjust the {what} on {t} to {v}",
        "set {t}'s {what} to {v}",
        "revise the {what} of {t} to {v}",
    ),
    "inventory": (
        "bring the {what} of {t} to {v}",
        "set {t}'s {what} to {v} in the system",
    ),
}

TRANSITION_BY_VERB = {
    "cancel": (
        "cancel {t}",
        "call off {t}",
        "scrap {t}",
        "drop {t}",
        "cancel {t} altogether",
        "void {t}",
        "withdraw {t}",
        "put a stop to {t}",
        "take {t} off the books",
        "get {t} cancelled",
        "cancel {t}, it's no longer needed",
        "cancel {t} since it won't go ahead",
        "strike {t} from the list",
        "go ahead and cancel {t}",
        "take care of cancelling {t}",
        "pull {t}",
        "remove {t} from the schedule by cancelling it",
        "cancel {t} for good",
    ),
    "complete": (
        "complete {t}",
        "close out {t} as finished",
        "mark {t} as done",
        "wrap up {t}",
        "sign off {t} as completed",
        "finish off {t}",
        "record {t} as completed",
        "tick off {t} as complete",
        "complete {t} now that it has taken place",
        "log {t} as finished",
        "close {t} as completed",
        "mark {t} complete, it went ahead as planned",
    ),
    "confirm": (
        "confirm {t}",
        "lock in {t}",
        "give the go-ahead for {t}",
        "make {t} official",
        "approve and confirm {t}",
        "firm up {t}",
        "seal {t}",
        "finalise {t}",
    ),
    "pay": (
        "pay {t}",
        "settle {t}",
        "put the payment through for {t}",
        "register the payment on {t}",
        "take payment for {t}",
        "mark {t} as paid up",
        "record the payment for {t}",
        "put {t} down as paid",
        "pay off {t}",
        "log that {t} has been paid",
    ),
    "ship": (
        "ship {t}",
        "send out {t}",
        "dispatch {t}",
        "get {t} out the door",
        "hand {t} over to the courier",
        "mark {t} as shipped",
        "get {t} on its way",
        "send {t} off",
        "release {t} for shipping",
        "post {t}",
    ),
    "deliver": (
        "deliver {t}",
        "mark {t} as delivered",
        "record that {t} has arrived",
        "log the delivery of {t}",
        "close {t} as delivered",
        "confirm {t} reached its destination",
        "note that {t} was handed over",
        "register {t} as received",
    ),
    "refund": (
        "refund {t}",
        "issue a refund for {t}",
        "give the money back on {t}",
        "process a refund on {t}",
        "reverse the charge for {t}",
    ),
    "approve": (
        "approve {t}",
        "sign off on {t}",
        "give {t} the green light",
        "okay {t}",
        "accept {t}",
    ),
    "reject": (
        "reject {t}",
        "turn down {t}",
        "decline {t}",
        "say no to {t}",
    ),
    "close": ("close {t}", "shut {t}", "close out {t}", "mark {t} closed"),
    "reopen": ("reopen {t}", "open {t} again", "bring {t} back"),
    "escalate": ("escalate {t}", "bump {t} up to the next level", "push {t} up the chain"),
    "assign": ("assign {t}", "hand {t} to someone", "give {t} an owner"),
    "archive": ("archive {t}", "file {t} away", "move {t} to the archive"),
    "activate": ("activate {t}", "switch {t} on", "turn on {t}"),
    "suspend": ("suspend {t}", "put {t} on hold", "freeze {t}"),
    "start": ("start {t}", "kick off {t}", "get {t} going"),
    "check": ("check in {t}", "sign in {t}", "record the arrival for {t}"),
    "resolve": ("resolve {t}", "sort out {t} for good", "mark {t} as resolved", "settle {t}"),
    "submit": ("submit {t}", "send in {t}", "hand in {t}", "file {t}"),
    "reserve": ("reserve {t}", "hold {t}", "set aside {t}", "put {t} on hold for later"),
    "release": ("release {t}", "free up {t}", "let go of {t}"),
    "restock": ("restock {t}", "top up {t}", "replenish {t}"),
    "return": ("return {t}", "send back {t}", "process the return of {t}"),
    "publish": ("publish {t}", "make {t} public", "put {t} live"),
    "accept": ("accept {t}", "take on {t}", "agree to {t}"),
    "decline": ("decline {t}", "turn down {t}", "pass on {t}"),
    "block": ("block {t}", "lock {t}", "bar {t}"),
    "unblock": ("unblock {t}", "unlock {t}", "lift the block on {t}"),
    "read": ("mark {t} as read", "tick {t} as read"),
    "reschedule": ("reschedule {t}", "move {t} to another time", "shift {t}"),
}

# Goals a customer asks for about their own records; anything else (ship, deliver, complete)
# is staff's work, asked by staff or passed on for the customer.
CUSTOMER_VERBS = frozenset(
    {
        "cancel",
        "pay",
        "confirm",
        "change",
        "update",
        "book",
        "create",
        "order",
        "reschedule",
        "submit",
        "return",
        "reserve",
        "accept",
        "decline",
        "read",
        "withdraw",
    }
)

TRANSITION = {
    GENERIC: (
        "mark {t} as {status}",
        "set {t} to {status}",
        "move {t} to {status}",
        "change the status of {t} to {status}",
        "put {t} into {status}",
        "update {t} so it shows {status}",
        "flag {t} as {status}",
        "switch {t} over to {status}",
        "get {t} to {status}",
        "bring {t} to {status}",
        "update the status of {t} to {status}",
        "have {t} show as {status}",
        "record {t} as {status}",
        "put {t} down as {status}",
        "set the status on {t} to {status}",
        "switch {t} to {status}",
        "flip {t} to {status}",
        "move {t} along to {status}",
        "get {t} marked {status}",
        "register {t} as {status}",
        "put the status of {t} at {status}",
        "turn {t} to {status}",
        "log {t} as {status}",
        "take {t} to {status}",
        "make sure {t} reads {status}",
        "change {t} over to {status}",
    ),
}

# Said after a transition core when the task also states where the record ends up.
RESULT_TAILS = (
    "so that its status becomes {status}",
    "so it ends up {status}",
    "so that it shows as {status}",
    "leaving it {status}",
    "which should leave it {status}",
    "so its status reads {status}",
    "so it is marked {status}",
    "and have it show {status} afterwards",
    "so the system shows it as {status}",
    "and leave it {status}",
    "so that it reads {status} afterwards",
    "so it ends up as {status}",
    "to leave it {status}",
    "which will make it {status}",
    "so the record says {status}",
    "so it's showing {status} after",
    "with {status} as the outcome",
    "so that it ends in {status}",
    "and leave it at {status}",
    "so it comes out {status}",
)

CREATE_VERBS = {
    GENERIC: (
        "create {a_label}{for}{with}",
        "add {a_label}{for}{with}",
        "set up {a_label}{for}{with}",
        "register {a_label}{for}{with}",
        "open {a_label}{for}{with}",
        "enter {a_label}{for}{with}",
        "put in {a_label}{for}{with}",
        "make {a_label}{for}{with}",
        "log {a_label}{for}{with}",
        "start {a_label}{for}{with}",
        "get {a_label} going{for}{with}",
        "raise {a_label}{for}{with}",
        "key in {a_label}{for}{with}",
        "put {a_label} into the system{for}{with}",
        "add {a_label} to the system{for}{with}",
        "input {a_label}{for}{with}",
        "get {a_label} set up{for}{with}",
        "put together {a_label}{for}{with}",
        "add {a_label} on file{for}{with}",
    ),
    "booking": (
        "book {a_label}{for}{with}",
        "reserve {a_label}{for}{with}",
        "schedule {a_label}{for}{with}",
        "pencil in {a_label}{for}{with}",
        "arrange {a_label}{for}{with}",
        "fix up {a_label}{for}{with}",
    ),
    "order_lifecycle": (
        "place {a_label}{for}{with}",
        "put through {a_label}{for}{with}",
        "take {a_label}{for}{with}",
        "submit {a_label}{for}{with}",
        "book in {a_label}{for}{with}",
    ),
    "ticketing": ("open {a_label}{for}{with}", "file {a_label}{for}{with}"),
    "scheduling": ("schedule {a_label}{for}{with}", "put {a_label} in the calendar{for}{with}"),
    "messaging": ("send {a_label}{for}{with}", "post {a_label}{for}{with}"),
    "ledger": ("record {a_label}{for}{with}", "book {a_label}{for}{with}"),
    "inventory": ("log {a_label}{for}{with}", "enter {a_label}{for}{with}"),
    "approvals": ("submit {a_label}{for}{with}", "file {a_label}{for}{with}"),
    "catalogue_search": ("add {a_label}{for}{with}",),
    "workspace": ("create {a_label}{for}{with}", "make {a_label}{for}{with}"),
}

CREATE_FOR = (
    " for {x}",
    " for {x}",
    " on behalf of {x}",
    " under {x}",
    " in the name of {x}",
    " attached to {x}",
    " linked to {x}",
    " against {x}",
    " tied to {x}",
    " to go with {x}",
    " on the record of {x}",
    " belonging to {x}",
    " recorded against {x}",
    " connected to {x}",
    " filed against {x}",
    " that goes with {x}",
    " filed for {x}",
)
CREATE_FOR_MINE = (" for me", "", " under my name", " on my account", " in my name", " for myself")
# A new record's field whose value the asker gives only when asked (a multi-turn opening).
CREATE_WITHHELD = (
    "; it needs {x} too",
    ", and it will need {x}",
    " (it needs {x} as well)",
    "; it should get {x} too",
    ", plus {x}",
    "; don't forget {x}",
)

CREATE_WITH = (
    " with {x}",
    " with {x}",
    ", with {x}",
    " ({x})",
    "; use {x}",
    " and give it {x}",
    " — {x}",
    "; it should have {x}",
    ", using {x}",
    " and put down {x}",
    "; fill in {x}",
    " — make it {x}",
    ", including {x}",
    ", and record {x}",
    " — details: {x}",
    "; give it {x}",
    ", filling in {x}",
    " (details: {x})",
    ", setting {x}",
    "; the details are {x}",
    " carrying {x}",
)
# Adjectives for the noun of a created record; an empty string leaves it plain.
NEW_WORDS = (
    "new",
    "new",
    "new",
    "fresh",
    "",
    "",
    "",
    "",
    "",
    "",
    "brand-new",
    "additional",
    "extra",
    "separate",
)

# An action (a tool known only from its description) said through that description.
ACTION_FORMS = (
    "{body}{details}",
    "{body}{details}",
    "go ahead and {body}{details}",
    "take care of this: {body}{details}",
    "make sure to {body}{details}",
    "handle it so that you {body}{details}",
)
ACTION_DETAILS = (" — {x}", " ({x})", ", using {x}", "; details: {x}", ", with {x}")

# -- around the request --------------------------------------------------------------------


# Urgency or manner, appended to a request sentence now and then.
MANNER = (
    " today if possible",
    " when you get a chance",
    " as soon as you can",
    " before lunch",
    " first thing",
    " at your convenience",
    " right now",
    " sometime this afternoon",
    " whenever you're free",
    " without delay",
    ", ideally today",
    ", no rush",
    " by the end of the day",
    ", if you can fit it in",
    " this morning if you can",
    ", whenever suits",
    " before the afternoon is out",
)


# How a customer says "the record of mine": {own} is the record's own words.
MINE = (
    "my {own}",
    "my {own}",
    "the {own} I have with you",
    "my {own} with you",
    "our {own}",
    "the {own} under my name",
    "the {own} I set up",
    "my own {own}",
    "the {own} on my account",
)
THEIRS = (
    "their {own}",
    "their {own}",
    "the {own} they have with us",
    "their {own} with us",
    "the {own} in their name",
    "the {own} on their account",
    "their own {own}",
)

# A person named with their address; {n} the name, {e} the address (kept verbatim: it is how
# the agent finds them).
PERSON_FORMS = (
    "{n} ({e})",
    "{n} ({e})",
    "{n} <{e}>",
    "{n} (email: {e})",
    "{n} [{e}]",
    "{n} (contact {e})",
    "{n} (at {e})",
    "{n} ({e} on file)",
    "{n} (address {e})",
    "{n} (their email is {e})",
    "{n} (registered email {e})",
    "{n} (e-mail {e})",
    "{n} (mail: {e})",
    "{n} ({e} is their address)",
    "{n} (reachable at {e})",
    "{n} (signed up as {e})",
    "{n} (account {e})",
    "{n} (the one with {e})",
    "{n} (writes from {e})",
    "{n} (listed with {e})",
    "{n} (login {e})",
    "{n} (emails us from {e})",
    "{n} (we have {e} for them)",
    "{n} (uses {e})",
    "{n} (email address {e})",
    "{n} (on {e})",
    "{n} (their address: {e})",
    "{n} (email on record: {e})",
    "{n} (contact address {e})",
    "{n} (known as {e} in the system)",
)
# The same with the person's label beside the address instead of before the name; {l} the
# label, {a} its article.
LABELLED_PERSON_FORMS = (
    "{n} ({l}, {e})",
    "{n} ({l}; {e})",
    "{n} (the {l} at {e})",
    "{n} ({a} {l}, email {e})",
    "{n} (our {l}, {e})",
    "{n} ({l}, reachable at {e})",
    "{n} ({l} on file as {e})",
    "{n} ({l}, address {e})",
    "{n} ({a} {l} — {e})",
    "{n} ({l}, signed up as {e})",
    "{n} ({l}; their email is {e})",
    "{n} ({l}, contact {e})",
)
# A record qualified by its status; {s} the status in words.
STATUS_FORMS = (
    "with status {s}",
    "that is {s}",
    "that is currently {s}",
    "marked {s}",
    "in {s} status",
    "showing as {s}",
    "still {s}",
    "whose status is {s}",
    "flagged {s}",
    "which is {s} right now",
    "currently showing {s}",
    "sitting at {s}",
    "that shows {s}",
    "listed as {s}",
    "in the {s} state",
    "whose status shows {s}",
    "at {s} status",
    "that reads {s}",
    "presently {s}",
    "in a {s} state",
    "with the status {s}",
    "that's {s} at the moment",
    "now {s}",
    "set to {s} right now",
    "still showing {s}",
)
# Staff naming a customer's record through the customer; {own} the record's words.
OWNED = (
    "the {own} of {label} {who}",
    "the {own} belonging to {label} {who}",
    "the {own} that {label} {who} has",
    "the {own} on the account of {label} {who}",
    "the {own} held by {label} {who}",
    "the {own} that belongs to {label} {who}",
    "the {own} set up for {label} {who}",
    "the {own} kept for {label} {who}",
)
# More records a new one refers to, after the first.
CREATE_ALSO = (
    " and {x}",
    ", covering {x}",
    " involving {x}",
    ", linked to {x}",
    ", for {x}",
    " with {x} on it",
    " that references {x}",
    ", together with {x}",
    ", naming {x}",
    " alongside {x}",
    " (with {x} on it)",
    ", and put {x} on it",
    " plus {x}",
    ", referencing {x}",
)


# A record qualified by a date field; {f} the field, {v} the date in words.
DATED_FORMS = (
    "with {f} {v}",
    "with the {f} {v}",
    "whose {f} is {v}",
    "where the {f} is {v}",
    "({f}: {v})",
    "with its {f} on {v}",
    "dated {v} for the {f}",
    "with a {f} of {v}",
    "whose {f} falls on {v}",
    "carrying the {f} {v}",
    "that has {v} as its {f}",
    "with {v} as the {f}",
)
# The same for a start time.
START_FORMS = (
    "with start {v}",
    "starting {v}",
    "that starts on {v}",
    "beginning on {v}",
    "scheduled for {v}",
    "set for {v}",
    "on {v}",
    "which begins {v}",
    "due to start {v}",
    "kicking off {v}",
    "that begins {v}",
    "booked for {v}",
    "with its start at {v}",
    "starting at {v}",
)

# Greetings put before an opener now and then (an opener that greets already gets none).
GREETINGS = (
    "Hi,",
    "Hello,",
    "Hey,",
    "Good morning,",
    "Morning,",
    "Afternoon,",
    "Hi there,",
    "Hello again,",
    "Hey team,",
    "Good afternoon,",
    "Evening,",
    "Hi all,",
)

# The record named before the request, which then says "it": a front ending in ':' or ','
# runs on into the request, one ending in '.' stands as its own sentence.
FRONTS = (
    "About {t}:",
    "Regarding {t},",
    "As for {t},",
    "Concerning {t},",
    "Re {t}:",
    "It's about {t}.",
    "This concerns {t}.",
    "This is about {t}.",
    "On the subject of {t}:",
    "With {t},",
    "For {t}:",
    "Now, {t}:",
    "Looking at {t},",
    "Quick one on {t}:",
)
FRONTS_STAFF = (
    "Please look up {t}.",
    "Find {t} first.",
    "Look for {t} in the system.",
    "Pull up {t}.",
    "There's {t}.",
    "Take {t}.",
    "You'll find {t} in the records.",
    "Open {t}.",
    "Bring up {t}.",
    "Go to {t}.",
    "Locate {t}.",
)

# -- positions, joins and counts --------------------------------------------------------------

# Leads that count or close: only for the second goal of several, or for the last.
SECOND_LEADS = (
    "Second thing: {c}.",
    "As a second step, {c}.",
    "Secondly, {c}.",
    "Next on the list: {c}.",
)
LAST_LEADS = (
    "Finally, {c}.",
    "Last of all, {c}.",
    "To finish, {c}.",
    "And lastly, {c}.",
    "One last thing: {c}.",
    "To wrap up, {c}.",
)
# Two goals said in one sentence; {a} and {b} are the bare verb phrases.
JOINERS = (
    "{a}, then {b}",
    "{a} and after that {b}",
    "{a}, and once that's done, {b}",
    "{a} and then {b}",
    "first {a}, then {b}",
    "{a}; after that, {b}",
    "{a}, and when that's through, {b}",
    "{a} before you {b}",
    "{a}, and next {b}",
    "{a}, and right after that {b}",
    "{a}; once done, {b}",
    "{a}, followed by: {b}",
    "{a}, and then please {b}",
    "{a} — and after that, {b}",
    "{a}; then {b}",
)
# Before a question of its own that follows another request.
QUESTION_LINKS = (
    "Also,",
    "And",
    "Oh, and",
    "Separately,",
    "One more question:",
    "Plus,",
    "Then:",
    "While you're at it,",
    "And one more:",
    "On another note,",
    "Last thing:",
    "Unrelated, but",
)

# -- questions, conditions and refusals -------------------------------------------------------

# An asked value as a bare verb phrase the agent does for the asker; {q} the question's words.
ASK_FORMS = (
    "tell me {q}",
    "fill me in on {q}",
    "find out {q} and tell me",
    "check {q} and let me know",
    "look up {q} and tell me",
    "get back to me with {q}",
    "confirm {q} for me",
    "see what the system says about {q} and tell me",
    "find {q} and report back",
    "pull up {q} and tell me",
    "let me know {q}",
    "dig out {q} for me",
    "have a look at {q} and tell me",
    "read off {q} for me",
    "give me {q}",
    "send me {q}",
)
# The same as a question of its own: a noun phrase ('the status of ...') ...
ASK_WHOLE = (
    "What is {q}?",
    "What's {q}?",
    "Can you tell me {q}?",
    "Do you know {q}?",
    "I'd like to know {q}.",
    "Could you look up {q}?",
    "What does the system show as {q}?",
    "I'm after {q}.",
    "Would you check {q} for me?",
    "Quick question: what's {q}?",
    "Any idea what {q} is?",
    "I need {q}, can you find it?",
    "Could you find {q} for me?",
    "Mind checking {q}?",
    "Can I get {q}?",
    "Where do we stand on {q}?",
    "I'm trying to find out {q}; can you help?",
    "What do we have as {q}?",
    "Please look up {q}.",
    "Can you read me {q}?",
)
# ... or a clause ('how many orders Ada has').
ASK_WHOLE_CLAUSE = (
    "Can you tell me {q}?",
    "Do you know {q}?",
    "I'd like to know {q}.",
    "Could you find out {q}?",
    "Would you check {q}?",
    "I'm wondering {q}.",
    "Please find out {q}.",
    "Can you check {q}?",
    "I'd love to know {q}.",
    "Mind finding out {q}?",
    "Could you let me know {q}?",
)
# A conditional goal: {t} the record, {cond} the status the change needs, {then} the change
# said on 'it', {other} what to report instead.
CONDITIONAL_FORMS = (
    "check {t}: if it is still {cond}, {then}; otherwise tell me {other}",
    "look at {t} first: if it's still {cond}, {then}; if not, just tell me {other}",
    "see whether {t} is still {cond} — if so, {then}; if it isn't, tell me {other}",
    "find {t} and, if it is still {cond}, {then}; otherwise tell me {other}",
    "have a look at {t} — if it's still {cond}, {then}, and if it isn't, tell me {other}",
    "check on {t}; should it still be {cond}, {then}, otherwise report {other}",
    "pull up {t}: when it's still {cond}, {then}, but if not, tell me {other}",
    "check {t}; as long as it's still {cond}, {then}, and if it isn't, tell me {other} instead",
    "take a look at {t}. If it's still {cond}, {then}; if it's anything else, tell me {other}",
    "open {t} — still {cond}? Then {then}. If not, tell me {other}",
    "only if {t} is still {cond}, {then}; in any other case tell me {other}",
    "first check {t}. While it's still {cond}, {then}; should it have moved on, tell me {other}",
    "look up {t}; {then} if it's still {cond}, or else tell me {other}",
)
# After a change, now and then: be told why if it can't be done. Said of feasible and
# infeasible requests alike (phrasing.WHY_NOT_PROBABILITY), so it never gives the kind away.
WHY_NOT_TAILS = (
    "(if that isn't possible, tell me why)",
    "— and if it can't go ahead, tell me why",
    "; if the system won't allow it, explain why",
    "(and if you can't, tell me what's stopping it)",
    "— if that's not allowed, tell me the reason",
    "(if it doesn't go through, I'd like to know why)",
    ", or tell me why not if that's impossible",
    "; if there's a rule against it, tell me what it is",
    "(should that fail, explain what's blocking it)",
    ", and if that's not possible, say why",
    "(if it won't go through, tell me why not)",
    "; if you can't, tell me the reason",
    " — if there's a rule that stops it, tell me which",
    "(tell me why if the system refuses)",
    ", unless a rule prevents it, in which case tell me why",
)

# -- naming a record through its person ----------------------------------------------------

# 'the order of artist Ada Lee (ada@x.com)': {l} the record's noun, {o} the person with
# their label and address. OWNER_END may only end the record's words (nothing follows).
OWNER_FORMS = (
    "the {l} of {o}",
    "the {l} of {o}",
    "the {l} for {o}",
    "the {l} under {o}",
    "the {l} belonging to {o}",
    "the {l} on file for {o}",
    "the {l} registered to {o}",
    "the {l} in the name of {o}",
    "the {l} linked to {o}",
    "the {l} listed under {o}",
    "the {l} that belongs to {o}",
    "the {l} set up for {o}",
    "the {l} we hold for {o}",
    "the {l} opened for {o}",
    "the {l} kept for {o}",
    "the {l} associated with {o}",
    "the {l} recorded for {o}",
)
OWNER_END = (
    "the {l} that {o} has",
    "the {l} {o} has with us",
    "the {l} we have for {o}",
    "the {l} {o} holds",
    "the {l} registered for {o}",
    "the {l} {o} opened",
)

# How a record is tied to the record it belongs to ('the hold of the game card'), said with
# spaces around; and how its qualifiers are introduced ('the order with quantity 2').
RELATIONS = (
    " of ",
    " of ",
    " of ",
    " for ",
    " on ",
    " linked to ",
    " attached to ",
    " belonging to ",
    " under ",
    " tied to ",
    " from ",
    " kept under ",
    " connected to ",
    " filed under ",
    " that belongs to ",
)
QUALIFIER_LINKS = (
    " with ",
    " with ",
    " with ",
    " with the ",
    " that has ",
    " having ",
    " which has ",
    " showing ",
    " carrying ",
    " that shows ",
    " listed with ",
    " bearing ",
)

# -- composed leads ---------------------------------------------------------------------------

# A later goal is often a link word and a frame: "Once that's done," + "could you {c}?".
NEXT_LINKS = (
    "Then",
    "And then",
    "After that,",
    "Once that's done,",
    "Next,",
    "When that's sorted,",
    "Also,",
    "Following that,",
    "On top of that,",
    "With that out of the way,",
    "Afterwards,",
    "Straight after,",
    "Later on,",
    "Once you've finished that,",
    "Besides that,",
    "In addition,",
    "As well as that,",
    "When you're through with that,",
    "Right after,",
    "And",
    "Additionally,",
    "Along with that,",
    "Apart from that,",
    "As soon as that's through,",
    "Next up,",
    "Beyond that,",
    "Plus,",
    "While you're in there,",
    "While you're at it,",
    "Oh, and",
    "Another thing:",
    "Moving on,",
    "After this,",
    "Once it's sorted,",
    "With that in place,",
    "Then, if you would,",
    "Also, separately,",
    "In the same go,",
)
NEXT_FRAMES = {
    "staff": (
        "{c}",
        "{c}",
        "please {c}",
        "could you {c}?",
        "can you {c}?",
        "I need you to {c}",
        "make sure you {c}",
        "go ahead and {c}",
        "you can {c}",
        "I'd like you to {c}",
        "would you {c}?",
        "be sure to {c}",
        "you'll need to {c}",
        "we also need to {c}",
        "kindly {c}",
        "do {c}",
        "I'd ask you to {c}",
        "it would help if you could {c}",
        "I'd also like you to {c}",
        "don't forget to {c}",
        "remember to {c}",
        "see that you {c}",
        "you should {c}",
        "could you also {c}?",
        "if you would, {c}",
        "get round to this: {c}",
    ),
    "customer": (
        "could you {c}?",
        "please {c}",
        "can you {c}?",
        "I'd also like to {c}",
        "I also want to {c}",
        "would you {c}?",
        "I'd be grateful if you could {c}",
        "I also need to {c}",
        "could you please {c}?",
        "would you mind if we {c}?",
        "I'd like you to {c}",
        "is it possible to {c}?",
        "I was also hoping to {c}",
    ),
    "on_behalf": (
        "they'd also like to {c}",
        "please {c}",
        "could you {c}?",
        "they also want to {c}",
        "can we {c}?",
        "they've asked us to {c}",
        "we should {c}",
        "they need us to {c}",
        "can you {c}?",
        "{c}",
    ),
}
NEXT_FRAMES["on_behalf_staff"] = (
    "please {c}",
    "could you {c}?",
    "they've asked us to {c}",
    "we should {c}",
    "they need us to {c}",
    "can you {c}?",
    "{c}",
)
# Words some people put before their first request; the request's lead follows.
FIRST_PREFACES = (
    "So,",
    "Right,",
    "Okay,",
    "First of all,",
    "To start,",
    "If you have a minute,",
    "When you get a moment,",
    "For starters,",
    "Straight off,",
    "Before anything else,",
    "To begin with,",
    "Here goes:",
    "Basically,",
    "In short,",
    "Anyway,",
    "Now,",
)

# -- more situation: why people write, in their own words ---------------------------------------

# A record named a second time in one request; {l} its noun.
SAME_RECORD = (
    "the same {l}",
    "that same {l}",
    "the same {l} as before",
    "the {l} I just mentioned",
    "this same {l}",
    "the {l} from before",
    "the {l} mentioned above",
    "the very same {l}",
)
# A record's name with its code (the code kept verbatim: the agent looks it up by it).
CODE_FORMS = (
    "{n} ({k})",
    "{n} ({k})",
    "{n} [{k}]",
    "{n} (no. {k})",
    "{n} (ref {k})",
    "{n} — {k}",
    "{n} (number {k})",
    "{n} (#{k})",
    "{n} (code {k})",
    "{n} (ref. {k})",
    "{n} / {k}",
)

# -- a record's noun said shorter ------------------------------------------------------------

# Everyday words for a record's noun beside its label's own head word ('baggage claim' ->
# 'claim'); phrasing uses one only when no other collection of the environment could be meant.
NOUN_SYNONYMS = {
    "appointment": ("booking", "appt"),
    "reservation": ("booking",),
    "invitation": ("invite",),
    "baggage claim": ("bag claim", "baggage report"),
    "stock level": ("stock record", "stock entry"),
    "cart line": ("cart entry", "basket line"),
    "wishlist item": ("wishlist entry",),
    "fund request": ("funding request",),
    "expense claim": ("expense report", "expenses claim"),
    "clinic session": ("clinic slot",),
    "purchase order": ("supplier order",),
    "satisfaction rating": ("feedback rating",),
    "read receipt": ("receipt",),
    "membership": ("club membership",),
    "time slot": ("timeslot",),
    "game card": ("arcade card",),
    "campus card": ("student card",),
}
# Head words that would read as something else alone ('the agent' is the one asked; 'the
# level', 'the line' say nothing).
HEAD_UNSAID = frozenset({"agent", "level", "line", "member", "off", "item", "rating"})

# Words tying a record to the person it belongs to that a possessive can take the place of
# ('the claim belonging to passenger Sarah Graham' -> "Sarah Graham's claim").
OWNER_LINKS = (
    "of",
    "belonging to",
    "held by",
    "for",
    "under",
    "linked to",
    "listed under",
    "on file for",
    "registered to",
    "in the name of",
    "on the account of",
)

# -- file workspaces: a planner's own goal sentence said other ways ---------------------------

# (pattern over the whole sentence, other wordings with its groups as {1}, {2}, ...). The
# values (paths, names, statuses, quoted lines) are carried over verbatim.
WORKSPACE_FORMS = (
    (
        r"^file (.+) under (\S+)$",
        (
            "file {1} under {2}",
            "move {1} over to {2}",
            "shift {1} into {2}",
        ),
    ),
    (
        r"^put (?!a copy of)(.+) in the (\S+) folder$",
        (
            "put {1} in the {2} folder",
            "relocate {1} to {2}",
            "drag {1} into the {2} folder",
        ),
    ),
    (
        r"^move (.+) into the (\S+) folder$",
        (
            "move {1} into the {2} folder",
            "relocate {1} to the {2} folder",
            "get {1} into {2}",
        ),
    ),
    (
        r"^(?:mark (.+) as|set the status of (.+) to) (\S+)$",
        (
            "mark {1}{2} as {3}",
            "set the status of {1}{2} to {3}",
            "change {1}{2} to {3}",
            "make the status of {1}{2} {3}",
            "update {1}{2} so its status reads {3}",
        ),
    ),
    (
        r"^(?:rename (.+) to|give (.+) the new name) (\S+)$",
        (
            "rename {1}{2} to {3}",
            "give {1}{2} the new name {3}",
            "change the name of {1}{2} to {3}",
            "call {1}{2} {3} from now on",
        ),
    ),
    (
        r"^(?:put a copy of (.+) in the (\S+) folder|copy (.+) into (\S+), keeping the original)$",
        (
            "put a copy of {1}{3} in the {2}{4} folder",
            "copy {1}{3} into {2}{4}, keeping the original",
            "make a copy of {1}{3} in {2}{4}",
            "duplicate {1}{3} into the {2}{4} folder (the original stays)",
        ),
    ),
    (
        r"check (.+): if its status is (\S+), mark it as (\S+); otherwise (.+)",
        (
            "check {1}: if its status is {2}, mark it as {3}; otherwise {4}",
            "look at the status of {1}; if it says {2}, change it to {3}, and if not, {4}",
            "look at {1}: if it's currently {2}, set it to {3}; if it's not, {4}",
            "see whether {1} is {2} — if it is, make it {3}; if not, {4}",
            "have a look at {1}: when its status reads {2}, make it {3}; otherwise {4}",
            "read the status on {1}: for {2}, make it {3}; for any other status, {4}",
        ),
    ),
    (
        r"leave its status and add the line (\"[^\"]+\") at its end",
        (
            "leave its status and add the line {1} at its end",
            "keep the status as it is and append {1} as the last line",
            "don't touch the status, just put {1} on a new line at the bottom",
            "add {1} at the very end and leave the status alone",
        ),
    ),
    (
        r"create an empty file (\S+) in the (\S+) folder",
        (
            "create an empty file {1} in the {2} folder",
            "make a blank file called {1} inside {2}",
            "add an empty {1} to the {2} folder",
            "put a new, empty file named {1} in {2}",
            "set up an empty file {1} in the {2} folder",
        ),
    ),
    (
        r"remove the folder (\S+) if it is empty",
        (
            "remove the folder {1} if it is empty",
            "delete the {1} folder, provided there's nothing in it",
            "get rid of the folder {1} if it's empty",
            "remove {1} — but only if it's an empty folder",
        ),
    ),
    (
        r"create a new folder (\S+) and move (.+) into it",
        (
            "create a new folder {1} and move {2} into it",
            "make a folder {1} and put {2} in there",
            "set up {1} as a new folder and file {2} in it",
            "move {2} into a new folder, {1} (it doesn't exist yet)",
        ),
    ),
    (
        r"add the line (\"[^\"]+\") at the end of (.+)",
        (
            "add the line {1} at the end of {2}",
            "put {1} as a new last line in {2}",
            "write {1} at the bottom of {2}",
            "tack {1} onto the end of {2}",
        ),
    ),
    (
        r"append the note (\"[^\"]+\") to (.+)",
        (
            "append the note {1} to {2}",
            "add the note {1} to the end of {2}",
            "jot {1} at the bottom of {2}",
        ),
    ),
)

# A request made as a numbered list: its introduction, and how the items are numbered.
LIST_INTROS = (
    "In order, please:",
    "Here's the list:",
    "Could you work through these:",
    "What I need, step by step:",
    "The to-do list:",
    "Please do these, in this order:",
    "Steps, in order:",
    "Here is what needs doing:",
)
LIST_NUMBERS = ("{n})", "({n})", "{n}.", "{n} -")

# A record qualified by one of its naming fields said the way that field is said ('the
# fund request with title North willow' -> 'the fund request titled North willow'); the
# value follows unchanged.
FIELD_FORMS = {
    "title": ("titled", "called", "with the title", "entitled"),
    "name": ("named", "called", "by the name of", "going by"),
    "subject": ("about", "with the subject line", "on the subject of", "subject:"),
    "number": ("number", "no.", "numbered", "with the number"),
    "body": ("that says", "reading", "with the text", "whose text is"),
    "service": ("for the service", "booked for"),
}

# An asked status said the ways people ask for one ('the status of X', 'the state of X').
STATUS_QUESTION_HEADS = (
    "the status of ",
    "the status of ",
    "the current status of ",
    "the state of ",
    "the status on ",
    "the status we have for ",
    "the status recorded for ",
    "the status showing for ",
)

# -- purposes -------------------------------------------------------------------------------
# Why a person asks for a change, said inside the request sentence ("Could you cancel my
# booking, since my plans have changed?"), chosen by what the change does, never drawn from a
# bank of unrelated small talk. Keyed by voice ("customer": their own record; "on_behalf":
# someone asked us for them; "staff": the work itself) and the goal's class: `undo` (cancel,
# reject, close, delete), `advance` (approve, ship, confirm, start), `update` (a field's new
# value), `create` (a new record) and `ask` (a value read). Fields: {what} the field, {label}
# the record's noun, {who} what the business calls the person behind it.
PURPOSES = {
    "customer": {
        "undo": (
            "my plans have changed",
            "I won't need it after all",
            "I set it up by mistake",
            "I've found another option",
            "it's no longer any use to me",
            "something came up and I can't go ahead",
        ),
        "advance": (
            "everything's ready on my side",
            "I've checked the details and they're right",
            "I'm happy to go ahead now",
            "I've been waiting on this for a while",
        ),
        "update": (
            "the {what} I gave you was wrong",
            "my {what} has changed",
            "I'd like a different {what}",
            "I mistyped the {what} the first time",
            "the {what} on it isn't what I asked for",
        ),
        "create": (
            "I need another {label}",
            "I'd like a {label} set up before the weekend",
            "I was told I'd need a {label} for this",
        ),
        "ask": (
            "it isn't in any of my emails",
            "I'd like to be sure of it first",
            "I need it for my own records",
        ),
    },
    "on_behalf": {
        "undo": (
            "they won't need it after all",
            "their plans changed",
            "they set it up by mistake",
            "they've gone with another option",
        ),
        "advance": (
            "they've confirmed everything on their side",
            "they've been waiting on it all week",
            "they're ready to go ahead",
        ),
        "update": (
            "the {what} they gave us was wrong",
            "their {what} has changed",
            "they'd like a different {what}",
            "they spotted a mistake in the {what}",
        ),
        "create": (
            "they need another {label}",
            "they were told they'd need a {label}",
            "they asked for a {label} to be set up",
        ),
        "ask": (
            "they're asking and I'd like to tell them straight away",
            "they'd like to be sure before they go ahead",
            "I promised to call them back with it",
        ),
    },
    "staff": {
        "undo": (
            "the {who} asked us to",
            "it was entered by mistake",
            "it duplicates another entry",
            "it's no longer needed",
            "the {who} changed their mind",
        ),
        "advance": (
            "the paperwork has come through",
            "everything on it has been checked",
            "it has been signed off",
            "the {who} confirmed this morning",
        ),
        "update": (
            "the {what} on file is out of date",
            "the {who} sent us a correction",
            "the {what} was entered wrong",
            "we got the new {what} this morning",
            "the {what} doesn't match the paperwork",
        ),
        "create": (
            "the {who} asked for one",
            "it should have gone in last week",
            "it has to be on record before the end of the day",
            "the {who} is expecting it",
        ),
        "ask": (
            "the {who} is asking",
            "I'm putting the weekly summary together",
            "I need it before I call them back",
            "the figures have to go in today's report",
        ),
    },
}
# How a longer opener runs on into the first request (a sequel's front, "Then there's the
# order", is never first: FRONTS holds none).
RUN_ONS = (" — ", ": ")
# How a purpose joins the request it explains: before it, or after, inside one sentence.
PURPOSE_LEADS = ("Since {r},", "Because {r},", "As {r},", "Seeing as {r},")
PURPOSE_TAILS = (", since {r}", " because {r}", ", as {r}", " — {r}")

# -- registers ------------------------------------------------------------------------------
# The first request's lead in a register of its own (voices.REGISTERS); {c} the request.
REGISTER_LEADS = {
    "terse": ("{C}.", "{C}, please.", "Need you to {c}.", "{C} asap.", "Pls {c}."),
    "chatty": (
        "Would you be a star and {c}?",
        "I was hoping you could {c} — would that be okay?",
        "So, I need a hand: could you {c}?",
        "Any chance you could {c}? That would be amazing.",
        "Okay, here goes: could you {c}?",
    ),
    "formal": (
        "Would you kindly {c}?",
        "I should be grateful if you would {c}.",
        "Please could you {c}?",
        "I would ask you to {c}.",
        "May I ask you to {c}?",
        "Could you please arrange to {c}?",
    ),
    "non_native": (
        "Please can you {c}?",
        "I want that you {c}.",
        "Is possible to {c}?",
        "Please, {c}.",
        "I need that you {c}, please.",
        "Can you {c}, please?",
    ),
}
REGISTER_CLOSERS = {
    "chatty": ("Thanks a million!", "You're a star!", "Thanks so much!", "Cheers, legend!"),
    "formal": ("Kind regards.", "Thank you in advance.", "With thanks.", "Yours sincerely."),
    "non_native": ("Thank you for help.", "Thanks, regards.", "Thank you very much.", "Thank you!"),
}
# Contractions a formal writer spells out.
UNCONTRACTED = {
    "I'm": "I am",
    "I'd": "I would",
    "I've": "I have",
    "I'll": "I will",
    "it's": "it is",
    "that's": "that is",
    "there's": "there is",
    "can't": "cannot",
    "won't": "will not",
    "don't": "do not",
    "doesn't": "does not",
    "isn't": "is not",
    "aren't": "are not",
    "didn't": "did not",
    "you'd": "you would",
    "you're": "you are",
    "we're": "we are",
    "we've": "we have",
    "we'd": "we would",
    "let's": "let us",
    "they're": "they are",
    "they've": "they have",
}


# What a user says, by register, before asking for the next thing once the agent has replied.
FOLLOW_UP_ACKS = {
    "plain": ("Thanks.", "Great, thanks.", "Perfect.", "Thank you.", "OK, thanks.", "Good.", ""),
    "chatty": ("Brilliant, thanks so much!", "Lovely, cheers!", "Oh great, thank you!"),
    "terse": ("", "OK.", "Thanks."),
    "formal": ("Thank you.", "Thank you very much.", "Much appreciated."),
    "non_native": ("Thank you.", "Ok, thank you.", "Very good, thanks."),
}
# The words that turn to the next request ("" leaves the request's own lead alone).
FOLLOW_UP_FRONTS = (
    "",
    "",
    "Next,",
    "Now",
    "One more thing:",
    "Also,",
    "While you're at it,",
    "And",
    "Then",
)
