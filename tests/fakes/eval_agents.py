"""Scripted agents for `envfoundry eval` tests, served by the loopback fake endpoint
(tests/fakes/openai_server.py) and told apart by the model a request names.

* `CAPABLE`: plays the dataset's own oracle episode of the task: the gold calls, the oracle's
  questions to a multi-turn task's user and its grounded final reply, each turn the one the
  oracle's transcript holds at the same place (found by the task's opening message). A
  model-worded user (sampled attempts) answers as the offline one does (llm_rollouts).
* `WEAK`: answers at once without calling a tool.
* `REFUSING`: declines at once ("Sorry, I cannot do that.").
* `LOOKALIKE`: plays the dataset's wrong-record baseline episode of the task (the oracle's
  calls on a look-alike record), where the task has one.
* `LOOPING`: makes the task's first gold call again and again, until the step limit.
* `UNKNOWN_TOOL`: calls a tool the environment does not have (the client rejects the turn).
* `MIXED`: one of the above per task and attempt (by a hash of the opening and the request's
  seed): right on some, wrong in each of those ways on others; a demo of the failure classes
  and of pass^k below pass@k.
* any other model: a final answer that says nothing (no call).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb

from tests.fakes.llm_rollouts import answer_user_sim
from tests.fakes.openai_server import final_answer, tool_call

CAPABLE = "capable-agent"
WEAK = "weak-agent"
REFUSING = "refusing-agent"
LOOPING = "looping-agent"
UNKNOWN_TOOL = "unknown-tool-agent"
LOOKALIKE = "lookalike-agent"
MIXED = "mixed-agent"
WEAK_REPLY = "I have taken care of that for you."
REFUSAL = "Sorry, I cannot do that."


def oracle_transcripts(
    warehouse: Path, policy: str = "oracle"
) -> dict[tuple[str, str], list[dict[str, Any]]]:
    """(system prompt, opening message) → the messages of `policy`'s episode (the oracle's,
    or a baseline's), for every published task it played."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute(
            "SELECT t.messages_json FROM trajectories t JOIN scenarios s USING (scenario_id) "
            "WHERE t.policy = ? AND s.status = 'published'",
            [policy],
        ).fetchall()
    finally:
        con.close()
    out = {}
    for (text,) in rows:
        messages = json.loads(text)
        out[(messages[0]["content"], messages[1]["content"])] = messages
    return out


def openings(warehouse: Path) -> dict[str, str]:
    """The opening message of every published task (what an episode's first request ends
    with) → its scenario id."""
    con = duckdb.connect(str(warehouse), read_only=True)
    try:
        rows = con.execute(
            "SELECT s.scenario_id, t.messages_json FROM trajectories t "
            "JOIN scenarios s USING (scenario_id) "
            "WHERE t.policy = 'oracle' AND s.status = 'published'"
        ).fetchall()
    finally:
        con.close()
    return {json.loads(text)[1]["content"]: scenario_id for scenario_id, text in rows}


def responder(warehouse: Path):
    """A responder for FakeOpenAIServer playing both agents on the tasks of `warehouse`."""
    transcripts = {CAPABLE: oracle_transcripts(warehouse), LOOKALIKE: {}}
    transcripts[LOOKALIKE] = oracle_transcripts(warehouse, "wrong_record")

    def respond(request: dict[str, Any]) -> dict[str, Any]:
        sim = answer_user_sim(request)
        if sim is not None:
            return sim
        model = request.get("model")
        messages = request["messages"]
        if model == MIXED:
            model = _mixed(messages[1]["content"], request.get("seed", 0))
        if model == WEAK:
            return final_answer(WEAK_REPLY)
        if model == REFUSING:
            return final_answer(REFUSAL)
        if model == UNKNOWN_TOOL:
            return tool_call("drop_all_records", {})
        key = (messages[0]["content"], messages[1]["content"])
        oracle = transcripts[CAPABLE].get(key)
        if model == LOOPING and oracle is not None:
            first = next(m for m in oracle if m.get("tool_calls"))["tool_calls"][0]["function"]
            return tool_call(first["name"], first["arguments"])
        if model == LOOKALIKE:
            oracle = transcripts[LOOKALIKE].get(key)
        elif model != CAPABLE:
            return final_answer("Hello.")
        if oracle is None or len(oracle) <= len(messages):
            return final_answer("I could not find this task.")
        turn = oracle[len(messages)]
        if turn.get("role") != "assistant":
            return final_answer("I lost my place in this task.")
        message = {"role": "assistant", "content": turn.get("content")}
        if turn.get("tool_calls"):
            message["tool_calls"] = turn["tool_calls"]
        return message

    return respond


# What the mixed agent plays: capable three times as often as each way of failing.
_MIXED = (CAPABLE, CAPABLE, CAPABLE, WEAK, REFUSING, LOOPING, UNKNOWN_TOOL)


def _mixed(opening: str, seed: int) -> str:
    digest = hashlib.sha256(f"{seed}:{opening}".encode()).digest()
    return _MIXED[digest[0] % len(_MIXED)]


def first_messages(server_requests: list[dict[str, Any]], model: str) -> list[str]:
    """The opening user message of each agent request of `model` that began an episode."""
    return [
        r["messages"][1]["content"]
        for r in server_requests
        if r.get("model") == model
        and r.get("tools")
        and not any(m["role"] in ("assistant", "tool") for m in r["messages"])
    ]
