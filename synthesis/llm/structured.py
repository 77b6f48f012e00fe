"""Structured answers: a JSON object that matches a stage's JSON schema, with bounded repairs.

The request carries `response_format` of type `json_schema` whose `name` is the stage's
name (test doubles and caches key on it). An answer that is not JSON or breaks the schema is
rejected (never cached) and the model is shown the error and asked again, at most
`settings.repairs` times; every attempt is a ledger row. A stage's own check of the object
(`accept`) runs inside the same screening, so an answer it rejects is never cached either.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

import jsonschema

from synthesis.llm.client import ChatAnswer, LLMClient
from synthesis.llm.errors import LLMRejected
from synthesis.llm.ledger import LLMCall


@dataclass
class StructuredAnswer:
    value: dict[str, Any]
    attempts: list[LLMCall]


def response_format(stage: str, schema: dict[str, Any]) -> dict[str, Any]:
    return {"type": "json_schema", "json_schema": {"name": stage, "schema": schema}}


def schema_violation(schema: dict[str, Any], message: dict[str, Any]) -> str | None:
    """Why the answer in `message` is not a JSON object matching `schema`, or None."""
    content = message.get("content")
    if message.get("tool_calls") or not isinstance(content, str):
        return "schema: expected a JSON object as text, got tool calls or no text"
    try:
        value = json.loads(content)
    except ValueError as exc:
        return f"json: the answer is not JSON ({exc})"
    if not isinstance(value, dict):
        return f"schema: expected a JSON object, got {type(value).__name__}"
    error = jsonschema.exceptions.best_match(_validator(schema).iter_errors(value))
    if error is not None:
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        return f"schema: at {where}: {error.message}"
    return None


def _validator(schema: dict[str, Any]) -> jsonschema.protocols.Validator:
    return _checked_validator(json.dumps(schema, sort_keys=True))


@functools.lru_cache(maxsize=128)
def _checked_validator(schema_json: str) -> jsonschema.protocols.Validator:
    # Checked once per schema, not once per answer: the check costs ~1 ms (50 times the
    # validation of a user_sim answer), on the thread of an agent episode among 64.
    schema = json.loads(schema_json)
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)  # a broken schema is our bug: fail loudly, not as a rejection
    return cls(schema)


def ask_structured(
    client: LLMClient,
    messages: list[dict[str, Any]],
    *,
    stage: str,
    artifact_id: str | None,
    schema: dict[str, Any],
    repairs: int | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    accept: Callable[[dict[str, Any]], str | None] | None = None,
) -> StructuredAnswer:
    """The stage's answer as a validated object, or LLMRejected after the last repair.

    `accept`: the stage's own check of a schema-valid object (the reason it cannot be used,
    or None); a rejected object is repaired like a schema violation and never cached."""
    steps = _repair_steps(client, messages, stage, artifact_id, schema, repairs, accept)
    outcome: ChatAnswer | LLMRejected | None = None
    while True:
        try:
            conversation, screen = steps.send(outcome)
        except StopIteration as done:
            return done.value
        try:
            outcome = client.chat(
                conversation,
                stage=stage,
                artifact_id=artifact_id,
                response_format=response_format(stage, schema),
                temperature=temperature,
                seed=seed,
                accept=screen,
            )
        except LLMRejected as exc:
            outcome = exc


async def ask_structured_async(
    client: LLMClient,
    messages: list[dict[str, Any]],
    *,
    stage: str,
    artifact_id: str | None,
    schema: dict[str, Any],
    repairs: int | None = None,
    temperature: float = 0.0,
    seed: int = 0,
    accept: Callable[[dict[str, Any]], str | None] | None = None,
) -> StructuredAnswer:
    """`ask_structured` over `client.achat`: the same repairs, screening and errors."""
    steps = _repair_steps(client, messages, stage, artifact_id, schema, repairs, accept)
    outcome: ChatAnswer | LLMRejected | None = None
    while True:
        try:
            conversation, screen = steps.send(outcome)
        except StopIteration as done:
            return done.value
        try:
            outcome = await client.achat(
                conversation,
                stage=stage,
                artifact_id=artifact_id,
                response_format=response_format(stage, schema),
                temperature=temperature,
                seed=seed,
                accept=screen,
            )
        except LLMRejected as exc:
            outcome = exc


Screen = Callable[[dict[str, Any]], str | None]


def _repair_steps(
    client: LLMClient,
    messages: list[dict[str, Any]],
    stage: str,
    artifact_id: str | None,
    schema: dict[str, Any],
    repairs: int | None,
    accept: Callable[[dict[str, Any]], str | None] | None,
) -> Generator[tuple[list[dict[str, Any]], Screen], ChatAnswer | LLMRejected, StructuredAnswer]:
    """The repair loop, whatever sends the requests: it yields (conversation, screen) to ask
    with and is sent back the ChatAnswer or the LLMRejected; it returns the object or raises
    LLMRejected after the last repair. Written once for the sync and the async callers."""
    repairs = client.settings.repairs if repairs is None else repairs

    def screen(message: dict[str, Any]) -> str | None:
        reason = schema_violation(schema, message)
        if reason is None and accept is not None:
            reason = accept(json.loads(message["content"]))
        return reason

    conversation = list(messages)
    attempts: list[LLMCall] = []
    for _ in range(repairs + 1):
        outcome = yield conversation, screen
        if isinstance(outcome, LLMRejected):
            attempts += outcome.attempts
            last = outcome
            # Show the model its own answer and what is wrong with it, then ask again.
            shown = (outcome.message or {}).get("content") or ""
            conversation = [
                *conversation,
                {"role": "assistant", "content": shown[:2000]},
                {
                    "role": "user",
                    "content": f"That answer was rejected ({outcome.reason}). Reply again with "
                    f"only a JSON object that matches the `{stage}` schema.",
                },
            ]
            continue
        attempts += outcome.attempts
        return StructuredAnswer(json.loads(outcome.message["content"]), attempts)
    error = LLMRejected(
        f"{last.reason.split(':', 1)[0]}: no valid answer after {repairs + 1} attempts "
        f"(last: {last.reason})",
        last.message,
    )
    error.attempts = attempts
    raise error
