"""The `env_spec` stage: a model authors an EnvSpec for a topic; our compiler turns it into code.

The answer is the spec itself: the schema sent is `EnvSpec`'s own JSON schema, so it follows
every change of the model. An answer is accepted only when it validates as an EnvSpec,
passes the same semantic check a generated spec passes (`specgen.validate_spec`), and
compiles to a class whose analysed tools agree with it (`build.build_environment`); the
reason lists every problem, so a repair prompt can fix them all at once. Compiling and
analysing only write and parse source: nothing the model wrote runs here.

The ids are ours, not the answer's: an authored spec's env id is `<topic_id>-llm-spec`
(never the topic's offline one), its topic and archetype are the topic's. A spec that
compiles to the same program as an environment this build already has (`taken`: program
shape → env id; the same tools under other names) is rejected too: a copy adds no
environment, and two environments of one shape leave the split no test side. Anything else
(rejected after its repairs, no endpoint reachable, a spent budget) gives no spec and a
reason `env_spec: <why>`, never a traceback.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.shape import program_shape
from synthesis.environments.specgen import generate_spec, validate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.hashing import derive_seed
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import EnvSpec, Topic

STAGE = "env_spec"
SCHEMA: dict[str, Any] = EnvSpec.model_json_schema()
# Problems named in one rejection: enough for a repair, short enough to read.
MAX_PROBLEMS = 12
# The example's topic and the tools it keeps: one of each common operation, so the model
# sees a guard, an effect and a status transition without a 10 KB spec to read.
EXAMPLE_TOPIC = "driving_school"
EXAMPLE_TOOLS = (
    "find_student_by_email",
    "list_instructor_slots",
    "get_lesson",
    "create_lesson",
    "cancel_lesson",
)


def example_spec() -> dict[str, Any]:
    """A valid spec trimmed to a few tools (a generated one, so it follows the model too)."""
    topic = next(t for t in load_catalogue() if t.topic_id == EXAMPLE_TOPIC)
    spec = generate_spec(topic)
    spec.tools = [t for t in spec.tools if t.name in EXAMPLE_TOOLS]
    spec.rules = spec.rules[:2]
    problems = validate_spec(spec)
    if problems:  # the example teaches: an invalid one is our bug, fail loudly
        raise ValueError(f"the env_spec prompt's example is invalid: {problems}")
    return spec.model_dump(mode="json")


PROMPT = (
    "You design tool-use environments for training assistants. Given a business topic, "
    "answer with one EnvSpec JSON object (the `env_spec` schema): the record types "
    "(entities) the business keeps, each with typed fields, and 4 to 10 tools an assistant "
    "calls on them. Our compiler writes the Python class from your spec, so every name must "
    "be a lowercase Python identifier; references between records are `ref` fields; "
    "statuses are an `enum` field named by `status_field` with its `transitions`. "
    "Tool kinds: list, get, find, search, aggregate and compare tools are `query`; create, "
    "transition and update tools are `mutate`. A get, transition or update tool takes the "
    "parameter `<entity>_id`; a find tool takes a parameter named after the field it finds "
    "by; a create tool sets every field of its entity by a parameter (`field`), `fixed`, "
    "`derived` or the status. Write descriptions and rules in plain English. Answer with the "
    "JSON object only. Example (a driving school, trimmed to five tools):\n"
    + json.dumps(example_spec(), separators=(",", ":"))
)


def authored_env_id(topic_id: str) -> str:
    """The env id of the spec a model authored for a topic: never the topic's offline id."""
    return f"{topic_id}-llm-spec"


@dataclass
class AuthoredSpec:
    """The spec a model authored for a topic (None when none was usable), and why not."""

    topic_id: str
    env_id: str
    spec: EnvSpec | None
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)


def owned(topic: Topic, value: dict[str, Any]) -> dict[str, Any]:
    """The answer with the fields that are ours set by us: ids, topic and archetype."""
    return {
        **value,
        "env_id": authored_env_id(topic.topic_id),
        "topic_id": topic.topic_id,
        "archetype": topic.archetype,
    }


def program_shapes(specs: Iterable[EnvSpec]) -> dict[str, str]:
    """Program shape → env id of the specs that compile (the first of a shape keeps it)."""
    shapes: dict[str, str] = {}
    for spec in specs:
        try:
            shape = program_shape(compile_spec(spec), spec.class_name)
        except Exception:  # noqa: BLE001 - its own partition quarantines it with the reason
            continue
        if shape is not None:
            shapes.setdefault(shape, spec.env_id)
    return shapes


def spec_fault(
    topic: Topic, value: dict[str, Any], taken: Mapping[str, str] | None = None
) -> str | None:
    """Why `value` is no spec our compiler can build for `topic`, or None. Every problem is
    listed (up to MAX_PROBLEMS), so one repair can fix them all. `taken`: program shape →
    env id of this build's environments, which the spec must not copy."""
    try:
        spec = EnvSpec.model_validate(owned(topic, value))
    except ValidationError as exc:
        problems = [
            f"{'/'.join(str(p) for p in e['loc']) or '(root)'}: {e['msg']}" for e in exc.errors()
        ]
        return _listed("model", problems)
    if spec.kind != "tool":
        # The example and the prompt teach record tools; a workspace spec is a file tree.
        return "kind: only 'tool' environments are authored"
    try:
        problems = validate_spec(spec)
        env = None if problems else build_environment(spec)
    except Exception as exc:  # noqa: BLE001 - a spec our checks trip on is rejected, said why
        return f"compile: {type(exc).__name__}: {exc}"
    if env is None:
        return _listed("invalid", problems)
    if env.status != "accepted":
        return f"compile: {env.reason}"
    twin = (taken or {}).get(program_shape(env.code, env.class_name) or "")
    if twin is not None:
        return (
            f"duplicate: the same program as environment {twin} under other names; design "
            "other tools, rules or records"
        )
    return None


def _listed(kind: str, problems: list[str]) -> str:
    more = f" (and {len(problems) - MAX_PROBLEMS} more)" if len(problems) > MAX_PROBLEMS else ""
    return f"{kind}: " + "; ".join(problems[:MAX_PROBLEMS]) + more


def request_messages(topic: Topic) -> list[dict[str, Any]]:
    """The topic as the model sees it: its JSON (title, description, vocabulary)."""
    shown = topic.model_dump(
        mode="json", include={"topic_id", "title", "archetype", "description", "vocabulary"}
    )
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "Topic: " + json.dumps(shown, sort_keys=True)},
    ]


def author_spec(
    client: LLMClient, topic: Topic, *, seed: int = 0, taken: Mapping[str, str] | None = None
) -> AuthoredSpec:
    """The model's spec for `topic` when it passes every check, else no spec and the reason
    (`env_spec: <why>`). Ledger rows name the authored env id. `taken`: program shape → env
    id of the build's environments (see `spec_fault`)."""
    env_id = authored_env_id(topic.topic_id)
    try:
        answer = ask_structured(
            client,
            request_messages(topic),
            stage=STAGE,
            artifact_id=env_id,
            schema=SCHEMA,
            seed=derive_seed(STAGE, topic.topic_id, seed),
            accept=lambda value: spec_fault(topic, value, taken),
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return AuthoredSpec(topic.topic_id, env_id, None, f"{STAGE}: {exc.reason}", exc.attempts)
    spec = EnvSpec.model_validate(owned(topic, answer.value))
    return AuthoredSpec(topic.topic_id, env_id, spec, None, answer.attempts)
