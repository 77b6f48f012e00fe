"""A plausible model for the `topic` stage: answers from keywords in the request's text.

`answer_topic(request)` returns a GOOD assistant message (one `accept` takes) for a chat
request of the `topic` stage, or None for any other request, so a test can combine it with
the other stages' responders for a whole build. A request none of the keywords fit is
answered as stateless, like trivia or chit-chat.
"""

from __future__ import annotations

import json
import re
from typing import Any

from tests.fakes.openai_server import final_answer

STAGE = "topic"

# (keywords, archetype, title, description); the first entry with a keyword in the request
# wins, so more specific keywords come first ("helpdesk" before "laptop").
KEYWORDS: list[tuple[tuple[str, ...], str, str, str]] = [
    # First: a folder of monthly CSVs is a project whatever the rows are (sales, expenses).
    (
        ("csv", "spreadsheet"),
        "project",
        "Garden centre tills",
        "The shop team's folder of monthly till ledgers and the reports made from them.",
    ),
    (("helpdesk", "vpn"), "ticketing", "IT helpdesk", "Staff report IT problems to the helpdesk."),
    (("broadband",), "ticketing", "Broadband support", "Customers report broadband faults."),
    (
        ("plumber", "property maintenance", "leak"),
        "ticketing",
        "Property maintenance",
        "Tenants report repairs to the property maintenance team.",
    ),
    (
        ("dentist", "dental", "hygienist"),
        "booking",
        "Dental clinic",
        "Patients book check-ups and cleanings with dentists.",
    ),
    (("barber", "haircut"), "booking", "Barber shop", "Customers book haircuts with barbers."),
    (
        ("grooming", "groomer"),
        "booking",
        "Dog grooming salon",
        "Owners book washes and trims for their dogs.",
    ),
    (
        ("vet", "vaccination"),
        "booking",
        "Veterinary practice",
        "Pet owners book visits and vaccinations with vets.",
    ),
    (("restaurant", "table for"), "booking", "Restaurant", "Guests book tables at a restaurant."),
    (
        ("study room", "library"),
        "scheduling",
        "Library study rooms",
        "Students book study rooms at the library.",
    ),
    (("meeting room",), "scheduling", "Office meeting rooms", "Staff book meeting rooms."),
    (("expense",), "approvals", "Expense approvals", "Staff claim expenses for approval."),
    (("leave request",), "approvals", "Leave requests", "Managers approve staff leave."),
    (
        ("purchase order",),
        "approvals",
        "Purchase order approvals",
        "Finance approves purchase orders over a limit.",
    ),
    (
        ("pharmacy",),
        "inventory",
        "Hospital pharmacy stock",
        "Pharmacists reserve and restock medical supplies.",
    ),
    (
        ("rental depot", "projector"),
        "inventory",
        "Event rental depot",
        "Staff reserve rental equipment for events.",
    ),
    (
        ("credit union", "savings account"),
        "ledger",
        "Credit union",
        "Members move money between their accounts.",
    ),
    (("fare card", "transit"), "ledger", "Transit fare cards", "Riders top up fare cards."),
    (("arcade",), "ledger", "Arcade credits", "Players move credits between game cards."),
    (("bakery", "sourdough"), "order_lifecycle", "Bakery", "Customers order bread and cakes."),
    (("flower shop", "bouquet"), "order_lifecycle", "Flower shop", "Customers order flowers."),
    (("wine",), "order_lifecycle", "Wine merchant", "Customers order and return wine."),
    (
        ("electronics",),
        "order_lifecycle",
        "Electronics shop",
        "Customers order electronics and cancel unshipped orders.",
    ),
    (("laptop",), "catalogue_search", "Laptop store", "Shoppers compare laptops by spec."),
    (
        ("running shoe",),
        "catalogue_search",
        "Running shoe shop",
        "Runners compare shoes by type and price.",
    ),
    (("forum",), "messaging", "Neighbourhood forum", "Neighbours post in forum channels."),
    (("recipe",), "workspace", "Recipe collection", "A cook's recipes, renamed and tagged."),
    (("research notes",), "workspace", "Research notes", "A researcher's lab notes."),
]
# Each change a request asks for makes an environment for it a little more useful to train on.
ACTIONS = (
    "book",
    "cancel",
    "refund",
    "transfer",
    "move",
    "change",
    "reschedule",
    "reserve",
    "approve",
    "assign",
    "open",
    "reorder",
    "top up",
    "rename",
    "add",
    "post",
    "submit",
    "send",
    "escalate",
    "return",
)


def request_text(request: dict[str, Any]) -> str | None:
    """The corpus request the chat request asks about (from its first `Request:` line)."""
    for message in request.get("messages", []):
        if message.get("role") != "user" or not isinstance(message.get("content"), str):
            continue
        for line in message["content"].splitlines():
            if line.startswith("Request: "):
                return line.removeprefix("Request: ")
    return None


def _has(text: str, keyword: str) -> bool:
    return re.search(rf"\b{re.escape(keyword)}", text) is not None


def topic_value(text: str, archetypes: list[str]) -> dict[str, Any]:
    """The answer object for a request's text, given the archetypes the schema allows."""
    low = text.casefold()
    for keywords, archetype, title, description in KEYWORDS:
        if archetype in archetypes and any(_has(low, k) for k in keywords):
            actions = sum(_has(low, a) for a in ACTIONS)
            return {
                "stateful": True,
                "archetype": archetype,
                "title": title,
                "description": description,
                "usefulness": round(min(0.95, 0.5 + 0.1 * actions), 2),
                "reason": f"it changes records a {title.lower()} keeps",
            }
    return {
        "stateful": False,
        "archetype": "none",
        "title": "",
        "description": "",
        "usefulness": 0,
        "reason": "nothing is kept in a system: a one-off answer",
    }


def answer_topic(request: dict[str, Any]) -> dict[str, Any] | None:
    """A good `topic` answer for `request`, or None when the request is not the stage's."""
    fmt = request.get("response_format") or {}
    schema = fmt.get("json_schema") or {}
    if schema.get("name") != STAGE:
        return None
    text = request_text(request)
    if text is None:
        return None
    archetypes = schema["schema"]["properties"]["archetype"]["enum"]
    return final_answer(json.dumps(topic_value(text, archetypes)))
