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

CREATE_FOR = (" for {x}", " for {x}", " on behalf of {x}", " under {x}", " in the name of {x}")
CREATE_FOR_MINE = (" for me", "", " under my name", " on my account")
CREATE_WITH = (
    " with {x}",
    " with {x}",
    ", with {x}",
    " ({x})",
    "; use {x}",
    " and give it {x}",
    " — {x}",
)
# Adjectives for the noun of a created record; an empty string leaves it plain.
NEW_WORDS = ("new", "new", "fresh", "", "", "", "brand-new", "additional", "extra")

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

# Context sentences, per voice; {title}, {label} and {labels} are the domain's words. Drawn
# now and then, before or after the request.
CONTEXT = {
    "customer": (
        "My plans changed at the last minute.",
        "I tried to do this on the website but got stuck.",
        "Sorry to bother you with this.",
        "I hope this is the right place to ask.",
        "It's been a hectic week.",
        "A friend recommended you, by the way.",
        "I'm travelling at the moment, so email is easiest.",
        "Something came up at work.",
        "I should have sorted this out earlier, apologies.",
        "This is my first time doing this online.",
        "My partner usually handles this, but they're away.",
        "I've been meaning to get to this for days.",
        "The app kept timing out on me.",
        "I'm on my lunch break, so I'll keep it short.",
        "I couldn't find a button for it anywhere.",
        "My calendar has been chaos lately.",
        "I hope it's not too late to ask.",
        "Your colleague said you would be able to help.",
        "I'm writing from my phone, excuse any typos.",
        "Long-time {label} here, first time asking for something like this.",
    ),
    "on_behalf": (
        "They couldn't get it to work online.",
        "They sounded a bit stressed about it.",
        "They've been with {title} for years.",
        "They asked for it to be done today.",
        "I checked their details already.",
        "They'll call back in an hour.",
        "It's a fairly common request from our {labels}.",
        "They said a friend had the same problem last month.",
        "I've noted it in their file as well.",
        "They apologised for the short notice.",
        "The line kept dropping, so bear with me.",
        "They were very polite about it.",
    ),
    "staff": (
        "We're tidying the {title} records before the weekly review.",
        "The {labels} list has been a bit of a mess lately.",
        "The auditors come in on Thursday.",
        "I'm doing this from my phone, so sorry for any typos.",
        "The system was down this morning, so this piled up.",
        "Management wants the board up to date by tonight.",
        "This came up in the stand-up meeting.",
        "We're short-staffed today.",
        "It's part of the monthly clean-up.",
        "The regular person for this is on holiday.",
        "Numbers need to be right before the report goes out.",
        "We promised this yesterday.",
        "A colleague flagged it in the team chat.",
        "There was a mix-up during the last shift.",
        "This has been sitting in my inbox all week.",
        "No rush, but it should be done before close of business.",
        "We're migrating to a new process next month.",
        "The {title} dashboard shows this as outstanding.",
        "I double-checked the details against the paperwork.",
        "Head office asked about it this morning.",
    ),
}
# Archetype-specific context, mixed in with the voice's own.
ARCHETYPE_CONTEXT = {
    "booking": (
        "The diary is filling up fast this month.",
        "Appointments have been shuffling around all week.",
        "We want the schedule accurate before reminders go out.",
        "Half the afternoon sessions moved after the holiday.",
        "Reminder texts go out tonight, so the diary has to be right.",
        "A few no-shows last week made us stricter about the calendar.",
    ),
    "order_lifecycle": (
        "The warehouse is waiting on this.",
        "The courier picks up at four.",
        "Orders have been backing up since Monday.",
        "Packing starts early tomorrow.",
        "The payment provider had an outage overnight.",
        "Returns have been higher than usual this month.",
    ),
    "ledger": (
        "The books need to balance by month end.",
        "Finance asked for this.",
        "The reconciliation is due on Friday.",
        "An overdraft warning went out by mistake.",
        "The auditors will look at every transfer this quarter.",
    ),
    "inventory": (
        "Stock counts were off after the last delivery.",
        "The stocktake is on Sunday.",
        "A pallet arrived damaged this morning.",
        "Reorder levels were changed last week.",
        "The shelves and the system disagree again.",
    ),
    "ticketing": (
        "The support queue is long today.",
        "Our response-time target is slipping.",
        "Two agents are off sick.",
        "Customers have been chasing replies all morning.",
        "The escalation rota changed on Monday.",
    ),
    "scheduling": (
        "The calendar has a few clashes to sort.",
        "Room bookings overlap on Thursday.",
        "The recurring meetings got duplicated after the migration.",
        "Half the team is on a different time zone this month.",
    ),
    "approvals": (
        "The approval backlog is growing.",
        "Spending limits were revised this quarter.",
        "The finance director signs off on Fridays only.",
        "Requests above the threshold need a second look.",
    ),
    "messaging": (
        "The thread has been busy today.",
        "Notifications were muted by accident.",
        "Someone posted in the wrong channel.",
        "The group chat got out of hand yesterday.",
    ),
    "catalogue_search": (
        "The catalogue was updated last night.",
        "Prices changed across a few categories.",
        "Customers keep asking about comparable items.",
        "The new season's range just went live.",
    ),
    "workspace": (
        "The project folder needs tidying.",
        "The shared drive is getting cluttered.",
        "Old drafts are lying around everywhere.",
        "The build scripts expect a clean directory.",
    ),
}

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
)

# One goal said with an explicit "one thing/two things" framing, for multi-goal tasks.
MULTI_INTRO = {
    "staff": (
        "Two things to do.",
        "A couple of changes are needed.",
        "There are two steps to this.",
        "I need two updates made.",
        "Here's what needs doing.",
        "",
        "",
        "",
    ),
    "customer": (
        "I have two requests.",
        "There are a couple of things I need.",
        "I need a couple of changes.",
        "",
        "",
        "",
    ),
    "on_behalf": ("They have two requests.", "They need a couple of things.", "", ""),
}

# How a customer says "the record of mine": {own} is the record's own words.
MINE = ("my {own}", "my {own}", "the {own} I have with you", "my {own} with you", "our {own}")
THEIRS = ("their {own}", "their {own}", "the {own} they have with us", "their {own} with us")

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
)
# Staff naming a customer's record through the customer; {own} the record's words.
OWNED = (
    "the {own} of {label} {who}",
    "the {own} belonging to {label} {who}",
    "the {own} that {label} {who} has",
    "the {own} on the account of {label} {who}",
    "the {own} held by {label} {who}",
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
)

# Asides: a second, shorter remark some requests carry; {label}/{labels}/{title} as above.
ASIDES = (
    "Leave everything else as it is.",
    "Nothing else on the account needs changing.",
    "Don't worry about notifying anyone.",
    "Please don't change any other details.",
    "Just that, nothing more.",
    "The rest is fine as it stands.",
    "No other records should be affected.",
    "If anything looks odd, stop and tell me.",
    "You shouldn't need anything else from me.",
    "All the details should already be in the system.",
    "You can look everything up yourself.",
    "Shout if something doesn't match.",
    "I've got the paperwork here if needed.",
    "Let's keep it simple.",
    "Hopefully it's a quick one.",
    "It should only take a minute.",
    "Take your time to get it right.",
    "Accuracy matters more than speed here.",
    "Don't bother with a confirmation email.",
    "Keep an eye out for similar names in the list.",
    "There may be a few {labels} with similar details, so check carefully.",
    "Make sure you pick the right one.",
    "Please double-check before saving.",
    "Everything else can stay as it is.",
    "There's no need to call anyone about it.",
    "Nothing else needs doing afterwards.",
    "You won't need to contact anyone.",
    "Watch out for lookalike entries.",
    "If it doesn't go through, tell me why.",
    "Check the name matches before you act.",
    "Please don't guess if something is unclear.",
    "The other entries are correct.",
)

# Reasons and times that compose into a context sentence: "{reason} {when}".
REASONS = {
    "customer": (
        "I've had a change of plans",
        "my schedule moved around",
        "I spoke to my family about it",
        "my budget changed",
        "I got my dates mixed up",
        "I just got back from a trip",
        "my boss changed my shifts",
        "I've been unwell",
        "I found a better option",
        "the kids' school timetable changed",
        "my car broke down",
        "I noticed a mistake",
    ),
    "on_behalf": (
        "their plans changed",
        "they made a mistake online",
        "they got a new job",
        "they are moving house",
        "they were double-charged before",
        "they noticed an error",
        "a relative is in hospital",
        "their schedule changed",
    ),
    "staff": (
        "a colleague entered this wrongly",
        "the numbers didn't add up",
        "the client called about it",
        "the regional office asked",
        "we changed our process",
        "the system flagged it",
        "this slipped through the cracks",
        "the review found a gap",
        "we got a complaint",
        "the figures were out of date",
    ),
}
WHEN = (
    "this week",
    "yesterday",
    "over the weekend",
    "this morning",
    "a few days ago",
    "last night",
    "earlier today",
    "recently",
    "on Friday",
    "at the last minute",
    "just now",
    "",
)
REASON_FORMS = (
    "{R} {w}.",
    "Some background: {r} {w}.",
    "For context, {r} {w}.",
    "The reason is that {r} {w}.",
    "This is because {r} {w}.",
    "Why? {R} {w}.",
    "As it happens, {r} {w}.",
    "Long story short, {r} {w}.",
)

# More context, per voice: everyday reasons people give, each worded once.
CONTEXT_MORE = {
    "customer": (
        "We have family visiting from abroad next week.",
        "My daughter's graduation is coming up, so the calendar is packed.",
        "I only just noticed the confirmation email in my spam folder.",
        "Work is sending me to a conference at short notice.",
        "The weather forecast looks terrible for the weekend.",
        "I moved house recently and things are still in boxes.",
        "My neighbour mentioned you could do this over email.",
        "I'm recovering from a minor operation, so I'm taking it easy.",
        "Money is a little tight this month.",
        "I'd rather sort it now than forget about it.",
        "Our wedding anniversary falls around then.",
        "My shifts at the hospital change every fortnight.",
        "I've just started a new job with odd hours.",
        "The train strikes have made everything complicated.",
        "I misread the details when I first did it.",
        "My mother is staying with us for a while.",
        "The dog has been poorly, so plans are on hold.",
        "I'm studying for exams and barely have time to breathe.",
        "My phone died and I lost a few messages.",
        "Honestly, I just changed my mind.",
        "I compared prices and want to keep things simple.",
        "We're saving up for a holiday.",
        "The school run takes up most of my mornings.",
        "I got a reminder and realised something was off.",
        "I'm usually very organised, but this one slipped.",
        "A coworker is covering for me that day.",
        "I have a dentist appointment clashing with it anyway.",
        "The roadworks near my place make getting anywhere a pain.",
        "My account password was reset last week, so I couldn't log in.",
        "I'm writing on behalf of myself and my partner.",
        "I tried calling but the line was always busy.",
        "My brother recommended you last year and I've been happy since.",
        "We're expecting a baby soon, so plans are shifting.",
        "My landlord is doing repairs that week.",
        "I was double-booked by my own mistake.",
        "The festival in town has taken over my weekend.",
        "I'm between jobs at the moment.",
        "A colleague at work is getting married around then.",
        "I only have a few minutes before my next meeting.",
        "The heating broke, so my week has been upside down.",
        "I'm helping my parents move next month.",
        "I'm usually the one who forgets these things, sorry.",
        "My sister is coming to visit and I'd like to be free.",
        "I got a new phone number recently, in case that matters.",
        "The website showed an error when I tried earlier.",
    ),
    "on_behalf": (
        "English isn't their first language, so I'm helping out.",
        "They're elderly and prefer not to use the website.",
        "They called twice already, so let's get it right this time.",
        "They mentioned they're recommending us to friends.",
        "They had trouble with the login page.",
        "They were quite apologetic about the whole thing.",
        "Their details match what we have on file.",
        "They'd like a confirmation once it's done.",
        "They're on a train, so the signal is patchy.",
        "They've been a loyal {label} of {title} for a long time.",
        "Their partner usually handles these things.",
        "They said it's rather urgent.",
        "They'll be travelling for the next two weeks.",
        "They asked me to pass on their thanks.",
        "I verified who they are with a couple of questions.",
        "They sounded tired, it's been a long week for them.",
    ),
    "staff": (
        "Our quarterly review is next Tuesday and the numbers must be right.",
        "A new colleague started today and I'm showing them the ropes.",
        "The printer is broken again, so everything is digital today.",
        "Finance keeps asking why the figures don't match.",
        "The regional manager is visiting tomorrow.",
        "We're catching up after the bank holiday.",
        "The overnight import left a few loose ends.",
        "I promised the team lead this would be done by noon.",
        "The shared inbox has been overflowing.",
        "We want a clean slate before the new season starts.",
        "Someone from compliance asked about this record.",
        "The weekly report is due this afternoon.",
        "It's been flagged twice in the shift handover notes.",
        "Our spreadsheet and the system disagree, and the system wins.",
        "The coffee machine is out, so let's be quick.",
        "We had a power cut yesterday and lost some changes.",
        "Training day is tomorrow, so I'm clearing my list.",
        "The phones have been ringing non-stop.",
        "This is the last item on my checklist for today.",
        "We're trialling a new way of working this month.",
        "I spotted this while reconciling last month's records.",
        "The intern asked how this is done, so I'll watch how you do it.",
        "Several {labels} have asked about similar things lately.",
        "The {title} team is stretched thin this week.",
        "We need this fixed before the newsletter goes out.",
        "The previous note on this was ambiguous, so here it is clearly.",
        "The spreadsheet we used to track this is retired now.",
        "I'm off from tomorrow, so I'm clearing my desk.",
        "Last time this waited a week and caused a fuss.",
        "The team voted to tidy things up on Fridays.",
        "A trainee made a few entries that need fixing.",
        "We're preparing for the inspection next month.",
        "Our director likes the dashboard green on Mondays.",
        "The evening shift left a handwritten note about it.",
        "I was asked about it at the front counter twice today.",
        "The owner wants it settled before the holidays.",
        "It came up during the budget meeting.",
        "The old booking tool used to do this automatically.",
        "We're switching suppliers soon and want clean data first.",
        "This keeps showing up on the exceptions report.",
        "I've been chasing this since the start of the month.",
        "Nobody else seems to have the access to do it.",
        "A partner company asked us to confirm the details.",
        "The team meeting ran long, so this is late.",
        "The numbers for the branch need to be reported upstairs.",
        "Quality control picked this up on a spot check.",
    ),
}

# A record qualified by a date field; {f} the field, {v} the date in words.
DATED_FORMS = (
    "with {f} {v}",
    "with the {f} {v}",
    "whose {f} is {v}",
    "where the {f} is {v}",
    "({f}: {v})",
    "with its {f} on {v}",
    "dated {v} for the {f}",
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
)
FRONTS_STAFF = (
    "Please look up {t}.",
    "Find {t} first.",
    "Look for {t} in the system.",
    "Pull up {t}.",
    "There's {t}.",
    "Take {t}.",
    "You'll find {t} in the records.",
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
)
# Before a question of its own that follows another request.
QUESTION_LINKS = ("Also,", "And", "Oh, and", "Separately,", "One more question:", "Plus,", "Then:")
NUMBER_WORDS = {2: "two", 3: "three", 4: "four", 5: "five", 6: "six", 7: "seven", 8: "eight"}
# The same framing as MULTI_INTRO for three goals or more; {n} the number in words.
MULTI_INTRO_MANY = {
    "staff": (
        "A few things to do.",
        "There are {n} steps to this.",
        "I have {n} items for you.",
        "Several changes are needed.",
        "Here's the list.",
        "This one has a few parts.",
        "Bear with me, it's a list.",
        "",
        "",
    ),
    "customer": (
        "I have a few requests.",
        "There are {n} things I need.",
        "I've got a handful of changes.",
        "Sorry, it's a bit of a list.",
        "",
        "",
    ),
    "on_behalf": ("They have a few requests.", "They need {n} things.", "It's a short list.", ""),
}

# -- questions, conditions and refusals -------------------------------------------------------

# An asked value as a bare verb phrase the agent does for the asker; {q} the question's words.
ASK_FORMS = (
    "tell me {q}",
    "let me know {q}",
    "find out {q} and tell me",
    "check {q} and let me know",
    "look up {q} and tell me",
    "get back to me with {q}",
    "confirm {q} for me",
    "see what the system says about {q} and tell me",
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
)
# ... or a clause ('how many orders Ada has').
ASK_WHOLE_CLAUSE = (
    "Can you tell me {q}?",
    "Do you know {q}?",
    "I'd like to know {q}.",
    "Could you find out {q}?",
    "Would you check {q}?",
    "I'm wondering {q}.",
    "Let me know {q}.",
)
# A conditional goal: {t} the record, {cond} the status the change needs, {then} the change
# said on 'it', {other} what to report instead.
CONDITIONAL_FORMS = (
    "check {t}: if it is still {cond}, {then}; otherwise tell me {other}",
    "look at {t} first: if it's still {cond}, {then}; if not, just tell me {other}",
    "see whether {t} is still {cond} — if so, {then}; if it isn't, let me know {other}",
    "find {t} and, if it is still {cond}, {then}; otherwise tell me {other}",
    "have a look at {t} — if it's still {cond}, {then}, and if it isn't, tell me {other}",
    "check on {t}; should it still be {cond}, {then}, otherwise report {other}",
    "pull up {t}: when it's still {cond}, {then}, but if not, let me know {other}",
    "check {t}; as long as it's still {cond}, {then}, and if it isn't, tell me {other} instead",
)
# After a request a rule may forbid: ask to be told why if it can't be done.
REFUSE_TAILS = (
    "(if that isn't possible, tell me why)",
    "— and if it can't be done, tell me why",
    "; if the system won't allow it, explain why",
    "(and if you can't, let me know what's stopping it)",
    "— if that's not allowed, tell me the reason",
    "(if it doesn't go through, I'd like to know why)",
    ", or tell me why not if it can't be done",
    "; if there's a rule against it, tell me what it is",
    "(should that fail, explain what's blocking it)",
    ", and if that's not possible, say why",
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
)
OWNER_END = (
    "the {l} that {o} has",
    "the {l} {o} has with us",
    "the {l} we have for {o}",
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
    "When you're done with that,",
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
    "That done,",
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

# A second remark about the situation some requests carry, per voice (drawn apart from
# CONTEXT so one text never says the same kind of thing twice).
SITUATION = {
    "customer": (
        "My train was late this morning and everything has slipped since.",
        "I'm juggling two jobs right now, so evenings are the only time I can write.",
        "The kids are off school this week and the house is chaos.",
        "I asked a friend to help me with the website, but neither of us could figure it out.",
        "My internet at home is patchy, so I'm writing from the library.",
        "I've been a bit scatterbrained since the move.",
        "Work has me travelling up and down the country this month.",
        "Our car is in the garage, which threw my whole week off.",
        "I'm recovering from the flu and catching up on admin.",
        "It's my first time sorting this kind of thing without my partner's help.",
        "I've got a big deadline at work, so I'd like this off my plate.",
        "I'm hopeless with apps, to be honest.",
        "The confirmation text never arrived on my phone.",
        "I've been looking forward to this for ages, so I want it right.",
        "My calendar is colour-coded but apparently not foolproof.",
        "Grandma's birthday lunch landed on the same weekend.",
        "I keep a paper diary and only just checked it.",
        "Our holiday got moved because of a strike at the airport.",
        "Honestly, I'd forgotten about it until the reminder popped up.",
        "I share an account with my flatmate, which confuses things.",
        "I got the wrong end of the stick when I first read your email.",
        "The cat knocked my laptop off the desk, so I'm on my tablet.",
        "A storm knocked the power out here last night.",
        "I'm trying to get my finances in order before the new year.",
        "I changed banks recently and some details moved around.",
        "My hours at the bakery changed without much warning.",
        "We're renovating the kitchen, so our evenings are a building site.",
        "My son's football tournament takes up most Saturdays now.",
        "I'm caring for a relative, so my time is not my own.",
        "The bus strike means I can't get across town easily.",
    ),
    "on_behalf": (
        "They rang from a noisy café, so I double-checked each detail.",
        "They mentioned they'd tried the app twice without luck.",
        "Their daughter usually helps with this but she's abroad.",
        "They were polite but clearly in a hurry.",
        "They asked whether we could send a short confirmation afterwards.",
        "They've had a rough month and want one less thing to worry about.",
        "They spelled their surname out for me, so that part is right.",
        "They said the reminder email confused them.",
        "They're hard of hearing, so email suits them better than calls.",
        "They sounded relieved that someone could help.",
        "They were in between meetings and had only a minute.",
        "They wondered whether other people had the same trouble.",
        "They'd rather we handle it than try the portal again.",
        "Their signal kept cutting out, but we got there.",
        "They thanked us twice before hanging up.",
    ),
    "staff": (
        "The morning huddle ran over, so I'm catching up now.",
        "Our team lead is keen to close out the backlog by Friday.",
        "I noticed it while checking something unrelated.",
        "The weekend cover team left a handover note about it.",
        "We've had three calls about similar problems today.",
        "The data entry backlog from the holidays is finally shrinking.",
        "A supplier rang about it, which is how it came up.",
        "The audit trail needs to make sense to someone reading it later.",
        "It showed up in yesterday's reconciliation as a loose end.",
        "The branch manager asked for it in her weekly email.",
        "I was asked to do it while the usual person is on leave.",
        "The new starter shadowing me wants to see how it's done.",
        "We agreed in the retro to stop leaving these for later.",
        "Half the office is at the offsite, so it's quiet here.",
        "It's the kind of thing that snowballs if nobody touches it.",
        "The client success team keeps getting asked about it.",
        "Our contractor flagged a mismatch in the export.",
        "We're trying to get the monthly figures to line up.",
        "There's a board meeting on Thursday and this came up in prep.",
        "Two people gave me conflicting instructions, so I checked with the manager.",
        "The night shift didn't get round to it.",
        "Ops wants fewer manual fixes, so let's get this one right.",
        "It's a leftover from the migration weekend.",
        "The compliance checklist asks for this to be tidy.",
        "A customer complaint brought it to our attention.",
        "I'm covering two desks today, so forgive the brevity.",
        "This is a follow-up from the call with head office.",
        "We're trying to clear the queue before the bank holiday weekend.",
        "The weekly dashboard looked wrong because of this.",
        "Someone asked on the team channel and nobody had picked it up.",
    ),
}
# A record named a second time in one request; {l} its noun.
SAME_RECORD = ("the same {l}", "that same {l}", "the same {l} as before")
