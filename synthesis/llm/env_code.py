"""The `env_code` stage: a model writes an environment class for a topic, EnvScaler style.

The answer is `{"class_name": ..., "code": ...}`. Here the code is only read, never run:
`code_fault` parses it and checks the class is there, has tools by our analysis' rule and
imports nothing beyond the standard library (the sandbox has nothing else), so a repair
prompt can fix what is wrong. An accepted class is written to
`<home>/llm_envs/<env_id>/<module>.py` and enters the build as a foreign source: the same
analysis, sandboxed loading and probing, and contract audit as any class written elsewhere
judge it, and quarantine it with the reason when it crashes, hangs or breaks its word.

Its env id is `<topic_id>-llm-code` (ours, never the topic's offline one). Anything else
(rejected after its repairs, no endpoint reachable, a spent budget) gives no source and a
reason `env_code: <why>`, never a traceback.
"""

from __future__ import annotations

import ast
import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.environments.analysis import AnalysisError, analyze_tools
from synthesis.environments.foreign import (
    ForeignSource,
    SourceError,
    resolve_sources,
    third_party_imports,
)
from synthesis.hashing import derive_seed
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Topic

STAGE = "env_code"
# Bounds on the class: below, no environment fits; above, more than a reviewer would read
# (and more than an answer's max_answer_chars lets through anyway).
MIN_CODE_CHARS = 200
MAX_CODE_CHARS = 30_000
MIN_TOOLS = 3
# Extra keys (a model's notes) are allowed and ignored: rejecting them would spend a repair
# on nothing the build uses.
SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "class_name": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_]*$"},
        "code": {"type": "string", "minLength": MIN_CODE_CHARS, "maxLength": MAX_CODE_CHARS},
    },
    "required": ["class_name", "code"],
    "additionalProperties": True,
}
LLM_ENVS_DIR = "llm_envs"
PROMPT = (
    "You write Python environment classes that simulate a business's back-office system, for "
    "training assistants that use tools. Given a topic, write one module with one public "
    "class, standard library only, following this contract:\n"
    "- `__init__(self, config: dict | None = None)`: deep-copy a module-level DEFAULT_STATE "
    "(or the given config) into public attributes, one per record collection, each a dict of "
    "records keyed by a string id (e.g. 'BK-1001'). DEFAULT_STATE holds at least 4 realistic "
    "records per collection, with names, emails and statuses people would use.\n"
    "- Every public method is a tool an assistant calls: 4 to 10 of them, with type hints on "
    "every parameter and a Google-style docstring (a one-line summary, then `Args:` with one "
    "line per parameter). Include lookups by a human field (email, name), get/list tools, "
    "and tools that create records or move them through statuses with rules.\n"
    "- A tool returns {'success': True, 'data': ...} or {'success': False, 'error': '...'}; "
    "it validates its arguments (types, unknown ids, forbidden status changes) and refuses "
    "without changing anything. A tool that only looks things up says 'Read-only.' in its "
    "summary and never changes the state; every docstring says truthfully what a tool "
    "changes.\n"
    "- Deterministic: no clock, no randomness, no files, network, threads or subprocesses; "
    "new ids count up from the existing ones. Helpers start with an underscore.\n"
    'Answer with a JSON object {"class_name": "...", "code": "..."} and nothing else.'
)


def written_env_id(topic_id: str) -> str:
    """The env id of the class a model wrote for a topic: never the topic's offline id."""
    return f"{topic_id}-llm-code"


def module_name(topic_id: str) -> str:
    """The module file's stem: the topic id as a Python identifier."""
    name = re.sub(r"\W+", "_", topic_id).strip("_").lower() or "env"
    return name if name[0].isalpha() else f"env_{name}"


@dataclass
class WrittenEnv:
    """The class a model wrote for a topic, as a foreign source (None when none was usable)."""

    topic_id: str
    env_id: str
    source: ForeignSource | None
    reason: str | None = None
    attempts: list[LLMCall] = field(default_factory=list)


def code_fault(value: dict[str, Any]) -> str | None:
    """Why the answer's code cannot enter the build, or None. Static only: it is parsed,
    never run (the sandbox alone runs it, later)."""
    code, class_name = value["code"], value["class_name"]
    if not MIN_CODE_CHARS <= len(code) <= MAX_CODE_CHARS:
        return f"size: {len(code)} characters, outside {MIN_CODE_CHARS}..{MAX_CODE_CHARS}"
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        return f"syntax: line {exc.lineno}: {exc.msg}"
    if not any(isinstance(n, ast.ClassDef) and n.name == class_name for n in tree.body):
        return f"class: no top-level class named {class_name!r}"
    imports = third_party_imports(code)
    if imports:
        return f"imports: beyond the standard library: {', '.join(imports)}"
    try:
        tools = analyze_tools(code, class_name)
    except AnalysisError as exc:
        return f"analysis: {exc}"
    if len(tools) < MIN_TOOLS:
        return f"tools: {len(tools)} public methods, at least {MIN_TOOLS} wanted"
    return None


def request_messages(topic: Topic) -> list[dict[str, Any]]:
    shown = topic.model_dump(
        mode="json", include={"topic_id", "title", "archetype", "description", "vocabulary"}
    )
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "Topic: " + json.dumps(shown, sort_keys=True)},
    ]


def module_path(home: Path, topic_id: str) -> Path:
    """Where the class a model wrote for a topic lives in the build's home."""
    return home / LLM_ENVS_DIR / written_env_id(topic_id) / f"{module_name(topic_id)}.py"


def write_module(path: Path, code: str) -> None:
    """The code as a module file, the same bytes for the same answer (line ends and the
    final newline normalised); an unchanged file is left alone."""
    text = code.replace("\r\n", "\n").rstrip("\n") + "\n"
    data = text.encode("utf-8")
    if path.is_file() and path.read_bytes() == data:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)


def write_env(client: LLMClient, topic: Topic, home: Path, *, seed: int = 0) -> WrittenEnv:
    """The model's class for `topic`, written to the home and located as a foreign source,
    or no source and the reason (`env_code: <why>`). Ledger rows name the written env id."""
    env_id = written_env_id(topic.topic_id)
    try:
        answer = ask_structured(
            client,
            request_messages(topic),
            stage=STAGE,
            artifact_id=env_id,
            schema=SCHEMA,
            seed=derive_seed(STAGE, topic.topic_id, seed),
            accept=code_fault,
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return WrittenEnv(topic.topic_id, env_id, None, f"{STAGE}: {exc.reason}", exc.attempts)
    path = module_path(home, topic.topic_id)
    try:
        write_module(path, answer.value["code"])
        # Located like any `file.py:Class` source (read and parsed, not run), under our id.
        (source,) = resolve_sources(f"{path}:{answer.value['class_name']}")
    except (OSError, SourceError) as exc:
        return WrittenEnv(topic.topic_id, env_id, None, f"{STAGE}: write: {exc}", answer.attempts)
    source = dataclasses.replace(source, env_id=env_id)
    return WrittenEnv(topic.topic_id, env_id, source, None, answer.attempts)
