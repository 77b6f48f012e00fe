"""Environment audit: call every tool with valid and invalid arguments in the sandbox and grade
the contract (result shape, no crash, queries never write, invalid calls change nothing).

An environment is kept when its score (passed probes / probes) reaches AUDIT_THRESHOLD, the
same bar EnvScaler uses for its pass+warning rate, and no probe found silent state corruption
(a query that writes, a failed call that still changed the state): a score cannot excuse those.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.hashing import derive_seed
from synthesis.models import Environment

AUDIT_THRESHOLD = 0.85


@dataclass
class AuditProbe:
    tool: str
    args: dict[str, Any]
    expect: str  # "valid" (may succeed or fail cleanly) | "invalid" (must fail cleanly)
    passed: bool = False
    finding: str = ""
    fatal: bool = False  # a violation no score can excuse (silent state corruption)


@dataclass
class AuditReport:
    env_id: str
    score: float
    probes: list[AuditProbe] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        return self.score >= AUDIT_THRESHOLD and not any(p.fatal for p in self.probes)

    def findings(self) -> list[str]:
        return [f"{p.tool}: {p.finding}" for p in self.probes if not p.passed]

    def to_json(self) -> dict[str, Any]:
        return {
            "env_id": self.env_id,
            "score": self.score,
            "passed": self.passed,
            "n_probes": len(self.probes),
            "n_fatal": sum(p.fatal for p in self.probes),
            "findings": self.findings(),
        }


def _valid_args(env: Environment, tool_name: str, state: dict, rng: random.Random) -> dict:
    spec = env.spec
    tool = spec.tool(tool_name)
    entity = spec.entity(tool.entity)
    args: dict[str, Any] = {}
    for p in tool.params:
        ref = p.ref or (entity.name if p.name == f"{entity.name}_id" else None)
        if ref:
            ids = sorted(state.get(spec.entity(ref).collection, {}))
            args[p.name] = rng.choice(ids) if ids else f"{spec.entity(ref).id_prefix}-0001"
        elif p.enum:
            args[p.name] = rng.choice(p.enum)
        elif tool.operation == "find" and p.name == tool.field:
            records = list(state.get(entity.collection, {}).values())
            args[p.name] = str(rng.choice(records)[tool.field]) if records else "nobody"
        elif p.type == "integer":
            args[p.name] = rng.randint(1, 2)
        elif p.type == "number":
            args[p.name] = 1.5
        elif p.type == "boolean":
            args[p.name] = True
        elif p.required:
            args[p.name] = "sample"
    return args


def plan_probes(env: Environment, state: dict, seed: int) -> list[AuditProbe]:
    """Per tool: two valid calls, one with every argument of the wrong type, one unknown id."""
    rng = random.Random(derive_seed("audit", env.env_id, seed))
    probes = []
    for info in env.tools:
        for _ in range(2):
            probes.append(AuditProbe(info.name, _valid_args(env, info.name, state, rng), "valid"))
        properties = info.schema_["function"]["parameters"]["properties"]
        if properties:
            wrong = {
                name: ([] if prop.get("type") != "array" else 7)
                for name, prop in properties.items()
            }
            probes.append(AuditProbe(info.name, wrong, "invalid"))
        id_params = [n for n in properties if n.endswith("_id")]
        if id_params:
            args = _valid_args(env, info.name, state, rng)
            args[id_params[0]] = "NO-SUCH-ID-9999"
            probes.append(AuditProbe(info.name, args, "invalid"))
    return probes


def _grade(
    probe: AuditProbe, kind: str, ok: bool, result: Any, error: str | None, changed: bool
) -> None:
    if not ok:
        probe.finding = f"call crashed or was killed: {error}"
    elif not isinstance(result, dict) or not isinstance(result.get("success"), bool):
        probe.finding = "result is not a {'success': bool, ...} dict"
    elif result["success"] and not ("data" in result or "message" in result):
        probe.finding = "successful result has neither 'data' nor 'message'"
    elif not result["success"] and not isinstance(result.get("error"), str):
        probe.finding = "failed result has no 'error' string"
    elif kind == "query" and changed:
        probe.finding, probe.fatal = "query tool changed the state", True
    elif probe.expect == "invalid" and result["success"]:
        probe.finding = f"accepted invalid arguments {probe.args}"
    elif not result["success"] and changed:
        probe.finding, probe.fatal = "failed call changed the state", True
    else:
        probe.passed = True


def audit_environment(
    env: Environment, states: Sequence[dict], *, seed: int, backend: str = "auto"
) -> AuditReport:
    """Probe every tool over each initial state, one fresh sandbox session per state.

    Different states reach different branches (an empty list, an out-of-stock item, a
    record in every status), so every state the build made is audited, not just one.
    """
    from sandboxes import EnvSource, open_session

    kinds = {t.name: t.kind for t in env.tools}
    source = EnvSource(code=env.code, class_name=env.class_name)
    probes: list[AuditProbe] = []
    for index, state in enumerate(states):
        state_probes = plan_probes(env, state, derive_seed(seed, index))
        probes += state_probes
        with open_session(source, state, backend=backend) as session:
            before = session.final_state()
            for probe in state_probes:
                if session.status != "ok":
                    probe.finding = f"worker gone: {session.reason}"
                    continue
                call = session.call(probe.tool, probe.args)
                after = session.final_state() if session.status == "ok" else before
                _grade(probe, kinds[probe.tool], call.ok, call.result, call.error, after != before)
                before = after
    score = sum(p.passed for p in probes) / len(probes) if probes else 0.0
    return AuditReport(env_id=env.env_id, score=round(score, 4), probes=probes)
