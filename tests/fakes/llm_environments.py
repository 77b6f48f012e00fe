"""Fake model answers for the `env_spec` and `env_code` stages, computed from the request.

`answer_env_spec(request)` and `answer_env_code(request)` each return a GOOD assistant
message for a chat request of their stage (None for any other request), so a test can
combine them with other stages' responders behind one FakeOpenAIServer:

    FakeOpenAIServer(lambda r: answer_env_spec(r) or answer_env_code(r) or ...)

The spec is the topic's own generated spec (the topic is read back from the request's
`Topic: {...}` line, as the stage sent it); the class is a hand-written EnvScaler-style class
from the foreign corpus, renamed after the topic. The BROKEN_* classes are what a model gets
wrong: each but the first parses and passes the static checks, so only the sandbox can tell.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from synthesis.environments.specgen import generate_spec
from synthesis.models import Topic
from tests.fakes.openai_server import final_answer

WORKING = Path(__file__).parent / "foreign" / "car_rental.py"
WORKING_CLASS = "CarRental"


def stage_of(request: dict[str, Any]) -> str | None:
    return ((request.get("response_format") or {}).get("json_schema") or {}).get("name")


def topic_in(request: dict[str, Any]) -> Topic:
    """The topic the request is about, from its `Topic: {...}` line."""
    for message in request["messages"]:
        if message["role"] == "user" and message["content"].startswith("Topic: "):
            return Topic.model_validate_json(message["content"].removeprefix("Topic: "))
    raise ValueError("no Topic line in the request")


def authored_spec(topic: Topic) -> dict[str, Any]:
    """The spec our generator makes for `topic` plus one tool of the model's own (a copy of
    its first lookup, `<name>_details`): another program than the generated one."""
    spec = generate_spec(topic).model_dump(mode="json")
    lookup = next(t for t in spec["tools"] if t["name"].startswith(("find_", "get_")))
    return {**spec, "tools": [*spec["tools"], {**lookup, "name": lookup["name"] + "_details"}]}


def answer_env_spec(request: dict[str, Any]) -> dict[str, Any] | None:
    """A valid EnvSpec for the requested topic (`authored_spec`)."""
    if stage_of(request) != "env_spec":
        return None
    return final_answer(json.dumps(authored_spec(topic_in(request)), separators=(",", ":")))


def class_name_for(topic: Topic) -> str:
    words = re.findall(r"[A-Za-z0-9]+", topic.title) or ["Topic"]
    name = "".join(w[:1].upper() + w[1:] for w in words) + "Desk"
    return name if name[0].isalpha() else f"Env{name}"


def working_code(class_name: str) -> str:
    """The corpus' car rental class under another name (a model's class for any topic)."""
    return WORKING.read_text(encoding="utf-8").replace(
        f"class {WORKING_CLASS}:", f"class {class_name}:"
    )


def answer_env_code(request: dict[str, Any]) -> dict[str, Any] | None:
    """A small working class for the requested topic."""
    if stage_of(request) != "env_code":
        return None
    name = class_name_for(topic_in(request))
    return final_answer(json.dumps({"class_name": name, "code": working_code(name)}))


def code_answer(class_name: str, code: str) -> dict[str, Any]:
    return final_answer(json.dumps({"class_name": class_name, "code": code}))


_TOOLS = '''
    def list_members(self) -> dict:
        """List every member.

        Args:
        """
        return {"success": True, "data": sorted(self.members)}

    def get_member(self, member_id: str) -> dict:
        """Get one member. Read-only: looking a member up never changes anything.

        Args:
            member_id (str): Id of the member, e.g. "M-1".
        """
        if member_id not in self.members:
            return {"success": False, "error": f"No member {member_id}"}
        return {"success": True, "data": dict(self.members[member_id])}

    def rename_member(self, member_id: str, name: str) -> dict:
        """Change a member's name.

        Args:
            member_id (str): Id of the member.
            name (str): The new name.
        """
        if member_id not in self.members or not isinstance(name, str) or not name:
            return {"success": False, "error": "Unknown member or empty name"}
        self.members[member_id]["name"] = name
        return {"success": True, "data": dict(self.members[member_id])}
'''
_CLUB = """import copy

DEFAULT_STATE = {"members": {
    "M-1": {"name": "Ada Byron", "email": "ada@club.test", "visits": 3},
    "M-2": {"name": "Alan Turing", "email": "alan@club.test", "visits": 7},
    "M-3": {"name": "Grace Hopper", "email": "grace@club.test", "visits": 1},
}}


class ChessClub:
    def __init__(self, config: dict | None = None):
        {init}
        self.members = copy.deepcopy(DEFAULT_STATE if config is None else config)["members"]
"""


def club(init: str = "pass", tools: str = _TOOLS) -> str:
    """A small members club class; `init` is the constructor's first line."""
    return _CLUB.replace("{init}", init) + tools


BROKEN_SYNTAX = club().replace("def rename_member(self,", "def rename_member(self")
BROKEN_CONSTRUCTOR = club(init='raise RuntimeError("config store unavailable")')
BROKEN_HANG = club(init="while True:\n            pass")
# `get_member` says it is read-only, yet counts a visit: a tool that breaks its docstring.
BROKEN_DOCSTRING = club(
    tools=_TOOLS.replace(
        'return {"success": True, "data": dict(self.members[member_id])}\n\n    def rename',
        'self.members[member_id]["visits"] += 1\n'
        '        return {"success": True, "data": dict(self.members[member_id])}\n\n    def rename',
    )
)
WORKING_CLUB = club()
