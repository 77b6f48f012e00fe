"""The `audit_judge` stage: a dual-agent audit of one environment (EnvScaler's tester + judge).

A tester model reads the environment's tools (its EnvModel) and a summary of one initial
state and proposes calls: a tool, its arguments and what it expects, every tool at least
once. Our code runs the proposals in order in one sandbox session (the environment's code
never runs in this process), recording the state before, the result and the state after.
A judge model then grades each call `pass`, `warning` or `fail`, with a reason, from the
tool's description, the arguments, the result and the state diff.

Both models are one stage, `audit_judge` (one budget, one ledger stage); each request's
`response_format` is named `audit_judge`, and the role is the first line of the user
message (`Role: tester` or `Role: judge`), so a test double can tell them apart. Their
schemas differ too (`calls` against `grades`).

Keep rule: an environment passes the judge when the share of its graded calls judged
`pass` or `warning` is at least JUDGE_THRESHOLD (0.85, EnvScaler's keep rule) AND no tool
had every one of its calls judged `fail`: a tool the judge finds broken every time it is
called cannot be excused by the others. A failed judgement's reason names the tool and
quotes the judge. An environment is kept only when this rule and the programmatic audit
(quality.audit) both pass.

When the stage cannot run (a rejected answer after its repairs, no answer, a spent budget,
the deadline, an open breaker) the environment is NOT quarantined for it: it is recorded as
`not judged: audit_judge: <why>` and the programmatic audit alone gates it. The judge is a
second opinion on code the audit already passed; our own failure to ask for it is no
evidence against the environment.

Proposals naming a tool the environment does not have are dropped with a reason; an answer
with no usable proposal is rejected (and repaired like any rejection, never cached).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from synthesis.environments.model import EnvModel
from synthesis.environments.runtime import sandbox_source
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.structured import ask_structured
from synthesis.models import Environment

STAGE = "audit_judge"
JUDGE_THRESHOLD = 0.85
GRADES = ("pass", "warning", "fail")
# Bounds on what is run and shown: proposals per tool, the judge's batch, text sizes.
MAX_CALLS_PER_TOOL = 3
JUDGE_BATCH = 12
SAMPLE_RECORDS = 3
MAX_VALUE_CHARS = 600
MAX_DIFF_LINES = 20

TESTER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "calls": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "properties": {
                    "tool": {"type": "string"},
                    "arguments": {"type": "object"},
                    "expect": {"type": "string"},
                },
                "required": ["tool", "arguments", "expect"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["calls"],
    "additionalProperties": False,
}
JUDGE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "grades": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "index": {"type": "integer"},
                    "grade": {"type": "string", "enum": list(GRADES)},
                    "reason": {"type": "string", "minLength": 1},
                },
                "required": ["index", "grade", "reason"],
                "additionalProperties": False,
            },
        }
    },
    "required": ["grades"],
    "additionalProperties": False,
}
# The docs page reads one SCHEMA and one PROMPT per stage. Every answer of the stage
# matches one of its two roles' schemas; PROMPT shows both system prompts, labelled.
SCHEMA: dict[str, Any] = {"oneOf": [TESTER_SCHEMA, JUDGE_SCHEMA]}
TESTER_PROMPT = (
    "You test a software environment that an AI assistant will operate through tools. You "
    "are given its tools (name, description, read or write, JSON parameters) and a summary "
    "of its current records. Propose tool calls that check each tool does what its "
    "description says: call every tool at least once, use record ids and values that exist "
    "in the summary, and add a call with a wrong id where a tool takes one. The calls run "
    "in your order, in one session, so a write is seen by the calls after it. For each call "
    "say in `expect` what a correct environment should answer or change. Answer with a "
    'JSON object {"calls": [{"tool": ..., "arguments": {...}, "expect": "..."}]} and '
    "nothing else."
)
JUDGE_PROMPT = (
    "You judge calls made to a software environment. For each numbered call you are given "
    "the tool's description, whether it reads or writes, the arguments, what the tester "
    "expected, the result and how the records changed. Grade it `pass` when the tool did "
    "what its description promises (a clear refusal of a bad request is a pass), `warning` "
    "when it worked but something is questionable, and `fail` when it did the wrong thing: "
    "a wrong or missing result, a change it should not make, a change it should have made "
    "and did not, a crash. Give a short reason naming what you saw. Grade every call once. "
    'Answer with a JSON object {"grades": [{"index": ..., "grade": ..., "reason": "..."}]} '
    "and nothing else."
)
PROMPT = f"Tester:\n{TESTER_PROMPT}\n\nJudge:\n{JUDGE_PROMPT}"
Role = Literal["tester", "judge"]


@dataclass
class Proposal:
    tool: str
    arguments: dict[str, Any]
    expect: str


@dataclass
class JudgedCall:
    """One proposal as it ran in the sandbox, and (once judged) its grade."""

    index: int
    tool: str
    arguments: dict[str, Any]
    expect: str
    result: Any
    diff: list[str]
    grade: str = ""
    reason: str = ""

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "tool": self.tool,
            "arguments": self.arguments,
            "grade": self.grade,
            "reason": self.reason,
        }


@dataclass
class Judgement:
    """The stage's verdict on one environment; `passed` False only when it was judged."""

    env_id: str
    judged: bool
    passed: bool
    reason: str | None
    calls: list[JudgedCall] = field(default_factory=list)
    dropped: list[str] = field(default_factory=list)
    unproposed: list[str] = field(default_factory=list)
    attempts: list[LLMCall] = field(default_factory=list)

    @property
    def share(self) -> float:
        """Share of graded calls judged pass or warning."""
        if not self.calls:
            return 0.0
        return round(sum(c.grade != "fail" for c in self.calls) / len(self.calls), 4)

    def failed_tools(self) -> list[str]:
        return failed_tools(self.calls)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"judged": self.judged, "passed": self.passed, "reason": self.reason}
        if self.judged:
            out |= {
                "share": self.share,
                "n_calls": len(self.calls),
                "failed_tools": self.failed_tools(),
                "grades": [c.to_json() for c in self.calls],
                "dropped": self.dropped,
                "unproposed": self.unproposed,
            }
        return out


# --------------------------------------------------------------------------- the keep rule


def failed_tools(calls: list[JudgedCall]) -> list[str]:
    """Tools whose every judged call the judge failed, in first-call order."""
    by_tool: dict[str, list[str]] = {}
    for call in calls:
        by_tool.setdefault(call.tool, []).append(call.grade)
    return [t for t, grades in by_tool.items() if all(g == "fail" for g in grades)]


def verdict(calls: list[JudgedCall]) -> tuple[bool, str | None]:
    """(passed, reason) by the keep rule (module docstring); the reason quotes the judge."""
    broken = failed_tools(calls)
    if broken:
        first = next(c for c in calls if c.tool == broken[0])
        more = f" (also failed: {', '.join(broken[1:])})" if broken[1:] else ""
        return False, f"{STAGE}: tool {first.tool} failed every call: {first.reason}{more}"
    share = sum(c.grade != "fail" for c in calls) / len(calls) if calls else 0.0
    if share < JUDGE_THRESHOLD:
        worst = next(c for c in calls if c.grade == "fail")
        return False, (
            f"{STAGE}: pass+warning share {share:.2f} < {JUDGE_THRESHOLD}: "
            f"tool {worst.tool}: {worst.reason}"
        )
    return True, None


# --------------------------------------------------------------------------- prompts


def _shown(value: Any, limit: int = MAX_VALUE_CHARS) -> str:
    """`value` as compact JSON, cut at `limit` characters (states and results can be big)."""
    text = json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)
    return text if len(text) <= limit else text[:limit] + "..."


def state_summary(model: EnvModel, state: dict[str, Any]) -> str:
    """Per collection: how many records and the first few, trimmed."""
    lines = []
    for coll in model.collections:
        records = coll.records_in(state)
        sample = records[:SAMPLE_RECORDS]
        lines.append(f"- {coll.attribute} ({len(records)} records): {_shown(sample, 1500)}")
    if not lines:  # a model without collections: show the state itself
        lines.append(_shown(state, MAX_VALUE_CHARS * 3))
    return "\n".join(lines)


def tester_messages(model: EnvModel, state: dict[str, Any]) -> list[dict[str, Any]]:
    tools = [
        {
            "name": t.name,
            "description": t.description,
            "kind": "read" if t.kind == "query" else "write",
            "parameters": t.schema_.get("function", {}).get("parameters", {}),
        }
        for t in model.tools
    ]
    lines = [
        "Role: tester",
        f"Environment: {model.title}",
        f"Tools: {json.dumps(tools, sort_keys=True)}",
        "Records:",
        state_summary(model, state),
    ]
    return [
        {"role": "system", "content": TESTER_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def judge_messages(model: EnvModel, calls: list[JudgedCall]) -> list[dict[str, Any]]:
    shown = [
        {
            "index": c.index,
            "tool": c.tool,
            "description": model.tool(c.tool).description,
            "kind": "read" if model.tool(c.tool).kind == "query" else "write",
            "arguments": c.arguments,
            "expected": c.expect,
            "result": _shown(c.result),
            "state_changes": c.diff or ["(none)"],
        }
        for c in calls
    ]
    lines = [
        "Role: judge",
        f"Environment: {model.title}",
        f"Calls: {json.dumps(shown, sort_keys=True, ensure_ascii=False)}",
    ]
    return [
        {"role": "system", "content": JUDGE_PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


# --------------------------------------------------------------------------- the two answers


def usable_proposals(model: EnvModel, value: dict[str, Any]) -> tuple[list[Proposal], list[str]]:
    """(the proposals our code will run, why each other one was dropped)."""
    known = {t.name for t in model.tools}
    kept: list[Proposal] = []
    dropped: list[str] = []
    per_tool: dict[str, int] = {}
    for item in value["calls"]:
        tool = item["tool"]
        if tool not in known:
            dropped.append(f"unknown tool {tool!r}")
        elif per_tool.get(tool, 0) >= MAX_CALLS_PER_TOOL:
            dropped.append(f"{tool}: more than {MAX_CALLS_PER_TOOL} calls")
        else:
            per_tool[tool] = per_tool.get(tool, 0) + 1
            kept.append(Proposal(tool, item["arguments"], item["expect"]))
    return kept, dropped


def proposals_fault(model: EnvModel, value: dict[str, Any]) -> str | None:
    kept, dropped = usable_proposals(model, value)
    if kept:
        return None
    return "proposals: no call names a tool of the environment (" + "; ".join(dropped[:3]) + ")"


def grades_fault(calls: list[JudgedCall], value: dict[str, Any]) -> str | None:
    """Why the judge's answer does not grade each of `calls` exactly once, or None."""
    wanted = {c.index for c in calls}
    seen = [g["index"] for g in value["grades"]]
    unknown = sorted(set(seen) - wanted)
    if unknown:
        return f"grades: no call numbered {unknown[:5]}"
    twice = sorted({i for i in seen if seen.count(i) > 1})
    if twice:
        return f"grades: calls {twice[:5]} graded more than once"
    missing = sorted(wanted - set(seen))
    if missing:
        return f"grades: calls {missing[:5]} not graded"
    return None


# --------------------------------------------------------------------------- the sandbox run


def run_proposals(
    env: Environment, state: dict[str, Any] | None, proposals: list[Proposal], *, backend: str
) -> list[JudgedCall]:
    """Each proposal called in order in one sandbox session, with the state diff it made."""
    from sandboxes import open_session
    from sandboxes.statediff import diff_states

    calls = []
    with open_session(sandbox_source(env), state, backend=backend) as session:
        before = session.final_state()
        for index, p in enumerate(proposals):
            if session.status != "ok":
                result: Any = {"error": f"not run: the worker is gone ({session.reason})"}
                calls.append(JudgedCall(index, p.tool, p.arguments, p.expect, result, []))
                continue
            call = session.call(p.tool, p.arguments)
            after = session.final_state() if session.status == "ok" else before
            result = call.result if call.ok else {"error": call.error}
            diff = diff_states(before, after)
            if len(diff) > MAX_DIFF_LINES:
                diff = [*diff[:MAX_DIFF_LINES], f"... {len(diff) - MAX_DIFF_LINES} more changes"]
            calls.append(JudgedCall(index, p.tool, p.arguments, p.expect, result, diff))
            before = after
    return calls


# --------------------------------------------------------------------------- the stage


def judge_environment(
    client: LLMClient,
    env: Environment,
    model: EnvModel,
    state: dict[str, Any] | None,
    *,
    seed: int,
    backend: str = "auto",
    reported: dict[str, Any] | None = None,
) -> Judgement:
    """The judge's verdict on `env` from calls the tester proposes against `state` (what
    the environment is loaded from; None: its defaults). `reported`: the state as the
    environment reports it, when that differs (the tester is shown records as reported).

    Never raises for the model's sake: a stage that cannot run ends as `not judged`."""
    attempts: list[LLMCall] = []
    shown = reported if reported is not None else (state or {})
    try:
        proposed = ask_structured(
            client,
            tester_messages(model, shown),
            stage=STAGE,
            artifact_id=env.env_id,
            schema=TESTER_SCHEMA,
            seed=seed,
            accept=lambda value: proposals_fault(model, value),
        )
        attempts += proposed.attempts
        proposals, dropped = usable_proposals(model, proposed.value)
        try:
            calls = run_proposals(env, state, proposals, backend=backend)
        except Exception as exc:  # noqa: BLE001 - the sandbox could not start: say so, go on
            reason = f"not judged: {STAGE}: sandbox: {type(exc).__name__}: {exc}"
            return Judgement(env.env_id, False, True, reason, attempts=attempts)
        for start in range(0, len(calls), JUDGE_BATCH):
            batch = calls[start : start + JUDGE_BATCH]
            attempts += _grade(client, env, model, batch, seed=seed)
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        attempts += exc.attempts
        reason = f"not judged: {STAGE}: {exc.reason}"
        return Judgement(env.env_id, False, True, reason, attempts=attempts)
    passed, reason = verdict(calls)
    proposed_tools = {p.tool for p in proposals}
    unproposed = [t.name for t in model.tools if t.name not in proposed_tools]
    return Judgement(env.env_id, True, passed, reason, calls, dropped, unproposed, attempts)


def _grade(
    client: LLMClient, env: Environment, model: EnvModel, batch: list[JudgedCall], *, seed: int
) -> list[LLMCall]:
    """The judge's grades written onto `batch`; the attempts it took."""
    answer = ask_structured(
        client,
        judge_messages(model, batch),
        stage=STAGE,
        artifact_id=env.env_id,
        schema=JUDGE_SCHEMA,
        seed=seed,
        accept=lambda value: grades_fault(batch, value),
    )
    by_index = {g["index"]: g for g in answer.value["grades"]}
    for call in batch:
        call.grade = by_index[call.index]["grade"]
        call.reason = by_index[call.index]["reason"].strip()
    return answer.attempts


def offline_judgement() -> dict[str, Any]:
    """The artifact without an endpoint: not judged, so nothing is quarantined for it."""
    return {"judged": False, "passed": True, "reason": "offline: no endpoint"}
