"""Who is asking: a persona and the voice it writes in.

A customer writes about their own records ("my order") and introduces themselves with the
words that let the agent find them; staff write about a customer's records in the third
person or as plain work items. A persona is chosen only when its voice fits the plan (a
customer voice needs one owner behind every goal).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Persona:
    name: str
    voice: str  # "customer", "on_behalf" or "staff"
    openers: tuple[str, ...]
    closers: tuple[str, ...]


# Openers may use {title} (the business), {name} and {label} (the customer and what the
# business calls them: artist, patient, guest). Closers use nothing.
PERSONAS = (
    Persona(
        "customer",
        "customer",
        (
            "Hi, this is {name}.",
            "Hello! {name} here.",
            "Hi there, my name is {name}.",
            "Good morning. I'm {name}, one of your {labels}.",
            "Hey, it's {name}.",
            "Hello, I'm writing as {name}.",
            "Hi, {name} speaking.",
            "This is {name}, a regular {label} of yours.",
            "Hi! I'm {name} and I have a small request.",
            "Evening. {name} here, hoping you can help.",
            "Hello {title} team, it's {name}.",
            "Hi folks, {name} here.",
            "Dear {title}, this is {name}.",
            "Hi — {name} writing.",
            "Morning! It's {name} again.",
            "Hello there, {name} here with a quick question.",
            "Hiya, {name} here.",
            "Good afternoon, my name's {name}.",
            "Hi, I'm one of your {labels}: {name}.",
            "To whom it may concern, this is {name}.",
            "Hello, quick one from {name}.",
            "Hey {title}! {name} here.",
        ),
        (
            "Thank you so much!",
            "Thanks in advance.",
            "Cheers!",
            "Much appreciated.",
            "Thanks, and have a nice day.",
            "Let me know if anything is unclear.",
            "Many thanks.",
            "Thank you for your help.",
            "Appreciate it!",
            "Looking forward to your reply.",
            "Thanks ever so much.",
            "Have a good one!",
            "Hope that's not too much trouble.",
            "Please email me when it's sorted.",
            "Kind regards.",
            "Best wishes.",
            "Thanks for sorting this.",
            "Thanks a lot.",
            "",
            "",
        ),
    ),
    Persona(
        "front_desk",
        "on_behalf",
        (
            "I have {name} on the phone.",
            "{name} just called the {title} desk.",
            "A {label}, {name}, emailed us this morning.",
            "Walk-in request from {name}.",
            "{name} left a voicemail for us.",
            "I'm handling a ticket from {name}.",
            "{name} stopped by the counter earlier.",
            "Request from one of our {labels}, {name}.",
            "Got a message from {name} through the website.",
            "{name} is waiting at reception.",
            "Passing on a request from {name}.",
            "{name} asked me to sort something out.",
            "Forwarding a request from {name}.",
            "{name} rang a few minutes ago.",
            "I just finished a chat with {name}.",
            "One of our {labels}, {name}, needs a hand.",
            "{name} wrote in via the contact form.",
            "Got {name} on hold right now.",
        ),
        (
            "Thanks!",
            "Let me know once it's done so I can tell them.",
            "I'll let them know when you confirm.",
            "They're waiting, so the sooner the better.",
            "Ping me when it's finished.",
            "Thanks, I'll call them back afterwards.",
            "Cheers.",
            "",
            "",
        ),
    ),
    Persona(
        "operations_manager",
        "staff",
        (
            "Quick admin task for {title}.",
            "Operations request for {title}.",
            "One for the {title} queue.",
            "Housekeeping on the {title} records.",
            "Small job for you.",
            "Before the end of the day:",
            "Clean-up request.",
            "Something for the {title} back office.",
            "Another item from the ops list.",
            "Need a hand with the {title} system.",
            "Admin item for today.",
            "Following up on this week's backlog.",
            "Another one for the to-do list.",
            "Routine update needed.",
            "Hi, ops here.",
            "Records update for {title}.",
            "Task from the {title} office.",
            "",
        ),
        (
            "Please confirm when finished.",
            "Thanks.",
            "Report back when done.",
            "That's all for now.",
            "Drop me a note once it's through.",
            "Nothing else needed.",
            "Ta.",
            "Cheers for that.",
            "Leave a note in the log when done.",
            "Thanks, that's everything.",
            "Shout if anything blocks you.",
            "",
            "",
        ),
    ),
    Persona(
        "support_agent",
        "staff",
        (
            "I'm working a support ticket for {title}.",
            "Support here, handling a request.",
            "Escalated from the help desk.",
            "Ticket follow-up.",
            "Hi, support team here.",
            "From the support inbox:",
            "Picking up a case from the night shift.",
            "Hello, I'm on support duty today.",
            "Case handover from the morning team.",
            "Support queue item.",
            "Following up on a complaint we received.",
            "Another one from the help desk.",
            "",
        ),
        (
            "Thanks!",
            "Let me know once it's done.",
            "I'll close the ticket after that.",
            "Please update me when it's through.",
            "Thanks for the quick turnaround.",
            "",
        ),
    ),
    Persona(
        "new_staff",
        "staff",
        (
            "I'm new on the {title} team and was asked to sort this out.",
            "First week here, so bear with me.",
            "My manager asked me to get this done.",
            "I was told you could help with the {title} system.",
            "I'm covering for a colleague today.",
            "Not sure I'm doing this right, but here goes.",
            "I'm the new hire at {title}.",
            "Still learning the ropes here.",
            "Someone said you're the one to ask.",
            "I'm filling in at {title} this week.",
            "Just started on the {title} desk.",
            "",
        ),
        (
            "Please tell me when it's done.",
            "Appreciate it!",
            "Thanks for helping me out.",
            "Sorry if that's obvious!",
            "Thank you, I owe you one.",
            "",
        ),
    ),
)

CUSTOMER = PERSONAS[0]
ON_BEHALF = PERSONAS[1]
STAFF = tuple(p for p in PERSONAS if p.voice == "staff")
