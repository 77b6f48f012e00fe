"""One loopback model for a whole build: every LLM stage answered from its request alone.

Each stage's fake (tests/fakes/llm_*.py) returns None for a request that is not its own, so
they chain; the first answer wins. The `task_text` fake rewords two tasks in three and
answers the third with an empty text (a schema violation, rejected and never cached); the
agent asks for the details a multi-turn opening withholds, then gives up without a tool
call. Every answer is a pure function of the request, so a rebuild asks again only what
was rejected.
"""

from __future__ import annotations

import json
import zlib
from typing import Any

from synthesis.llm.stages import STAGES as REGISTERED
from synthesis.llm.stages import load
from tests.fakes.llm_environments import answer_env_code, answer_env_spec
from tests.fakes.llm_judging import answer_audit_judge, answer_initial_state
from tests.fakes.llm_plans import answer_task_plan
from tests.fakes.llm_projects import answer_project_topic
from tests.fakes.llm_rollouts import answer_asking_agent, answer_user_sim
from tests.fakes.llm_topics import answer_topic
from tests.fakes.openai_server import final_answer

REWORDED = "Hello there! "
GIVE_UP = "I could not do that."
# Stages as the ledger names them: the registry's (difficulty calibration is the agent's k
# attempts, not a stage of its own).
STAGES = {load(stage).STAGE for stage in REGISTERED}


def rejects_wording(offline: str) -> bool:
    """Whether the fake answers this task's wording with an empty text."""
    return zlib.crc32(offline.encode()) % 3 == 0


def answer_task_text(request: dict[str, Any]) -> dict[str, Any] | None:
    fmt = (request.get("response_format") or {}).get("json_schema") or {}
    if fmt.get("name") != "task_text":
        return None
    (offline,) = [
        line.removeprefix("Request: ")
        for line in request["messages"][1]["content"].splitlines()
        if line.startswith("Request: ")
    ]
    text = "" if rejects_wording(offline) else REWORDED + offline
    return final_answer(json.dumps({"text": text}))


ANSWERS = (
    answer_topic,
    answer_project_topic,
    answer_env_spec,
    answer_env_code,
    answer_audit_judge,
    answer_initial_state,
    answer_task_plan,
    answer_task_text,
    answer_user_sim,
    answer_asking_agent,
)


def respond(request: dict[str, Any]) -> dict[str, Any]:
    for answer in ANSWERS:
        message = answer(request)
        if message is not None:
            return message
    return final_answer(GIVE_UP)
