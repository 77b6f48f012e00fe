"""A plausible model for the `project_topic` stage: the data folder of a garden centre's
tills, whatever project topic it is asked about (a folder the catalogue does not have).

`answer_project_topic(request)` returns a GOOD assistant message (one the stage's checks take)
for a chat request of the `project_topic` stage, or None for any other request, so it chains
with the other stages' responders. `good_vocabulary()` is the answer object, for tests that
script broken variants of it.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from tests.fakes.openai_server import final_answer

STAGE = "project_topic"

GOOD: dict[str, Any] = {
    "ledger": "tills",
    "group_field": "branch",
    "groups": ["Riverside", "Hilltop", "Old Town"],
    "item_field": "department",
    "items": [
        {"name": "Plants", "low": 4, "high": 160},
        {"name": "Tools", "low": 9, "high": 240},
        {"name": "Garden furniture", "low": 120, "high": 1900},
        {"name": "Gifts", "low": 3, "high": 60},
    ],
    "status_field": "status",
    "statuses": ["paid", "on account"],
    "void_statuses": ["voided", "returned"],
    "amount_field": "amount",
    "currency": "GBP",
    "features": ["head", "wc", "find"],
}


def good_vocabulary() -> dict[str, Any]:
    return copy.deepcopy(GOOD)


def answer_project_topic(request: dict[str, Any]) -> dict[str, Any] | None:
    schema = (request.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") != STAGE:
        return None
    return final_answer(json.dumps(GOOD))
