"""Environment audit: call every tool with valid and invalid arguments in the sandbox and grade
the contract (result shape, no crash, queries never write, invalid calls change nothing).

An environment is kept when its score (passed probes / probes) reaches AUDIT_THRESHOLD, the
same bar EnvScaler uses for its pass+warning rate, and no probe found silent state corruption
(a query that writes, a failed call that still changed the state): a score cannot excuse those.

Compiled environments promise our result contract and are graded on it. Code from elsewhere
is taken as it comes (a failure is an exception, `success: false` or an `error` key): it is
graded on what any environment owes — answering without crashing or hanging, queries that
never write, refusals that change nothing — and an invalid argument it accepts is a warning.

Either way a tool is held to its own description, the words an agent chooses it by: one
that says it changes nothing (read-only, no side effects) and changes the state is fatal,
whatever kind its code or the probes gave it.
"""

from __future__ import annotations

import random
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from synthesis.environments.arguments import ValuePools, candidates, is_id_name
from synthesis.environments.model import EnvModel, model_of
from synthesis.environments.runtime import result_failure, sandbox_source
from synthesis.hashing import derive_seed
from synthesis.models import Environment

AUDIT_THRESHOLD = 0.85
# Code from elsewhere whose tools never do anything is no environment to plan tasks in: when
# fewer than this share of its tools ever succeeded (in probing, or in one of the audit's own
# calls), the audit fails it and names the tools (tau2's raw TelecomTools, loaded without its
# database, passed with 15 of its 16 tools refusing every call).
WORKING_TOOLS_FLOOR = 0.25
# A tool description promising that a call changes nothing.
READ_ONLY_CLAIM = re.compile(
    r"\bread[- ]only\b|\bno side[- ]effects?\b"
    r"|\b(?:never|does not|doesn't) (?:change|modify|alter)s? (?:anything|the state)\b",
    re.IGNORECASE,
)


@dataclass
class AuditProbe:
    tool: str
    args: dict[str, Any]
    expect: str  # "valid" (may succeed or fail cleanly) | "invalid" (must fail cleanly)
    passed: bool = False
    finding: str = ""
    fatal: bool = False  # a violation no score can excuse (silent state corruption)
    warning: str = ""  # passed, but worth knowing (code from elsewhere accepting bad input)


@dataclass
class AuditReport:
    env_id: str
    score: float
    probes: list[AuditProbe] = field(default_factory=list)
    # Tools no call ever succeeded for, when they are too many of `n_tools` (else empty).
    idle_tools: list[str] = field(default_factory=list)
    n_tools: int = 0

    @property
    def passed(self) -> bool:
        return (
            self.score >= AUDIT_THRESHOLD
            and not any(p.fatal for p in self.probes)
            and not self.idle_tools
        )

    def findings(self) -> list[str]:
        found = [f"{p.tool}: {p.finding}" for p in self.probes if not p.passed]
        if not self.idle_tools:
            return found
        named = ", ".join(self.idle_tools[:12]) + (" ..." if len(self.idle_tools) > 12 else "")
        idle = (
            f"{len(self.idle_tools)} of {self.n_tools} tools never succeeded in any call "
            f"(probing and audit): {named}"
        )
        return [idle, *found]

    def warnings(self) -> list[str]:
        return [f"{p.tool}: {p.warning}" for p in self.probes if p.warning]

    def to_json(self) -> dict[str, Any]:
        out = {
            "env_id": self.env_id,
            "score": self.score,
            "passed": self.passed,
            "n_probes": len(self.probes),
            "n_fatal": sum(p.fatal for p in self.probes),
            "findings": self.findings(),
        }
        if self.warnings():
            out["warnings"] = self.warnings()
        return out


def _valid_args(model: EnvModel, tool_name: str, state: dict, rng: random.Random) -> dict:
    tool = model.tool(tool_name)
    if not model.exact:
        pools = ValuePools.from_states([state], model.collections)
        args = {}
        for p in tool.params:
            values = candidates(tool, p, pools, rng)
            if values and (p.required or rng.random() < 0.5):
                args[p.name] = rng.choice(values)
        return args
    entity = model.entity(tool.entity)
    args: dict[str, Any] = {}
    for p in tool.params:
        ref = p.takes
        if ref:
            ids = sorted(state.get(model.entity(ref).collection, {}))
            args[p.name] = rng.choice(ids) if ids else f"{model.entity(ref).id_prefix}-0001"
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


def plan_probes(model: EnvModel, state: dict, seed: int) -> list[AuditProbe]:
    """Per tool: two valid calls, one with every argument of the wrong type, one unknown id."""
    rng = random.Random(derive_seed("audit", model.env_id, seed))
    probes = []
    for info in model.tools:
        for _ in range(2):
            probes.append(AuditProbe(info.name, _valid_args(model, info.name, state, rng), "valid"))
        properties = info.schema_["function"]["parameters"]["properties"]
        if properties:
            wrong = {
                name: ([] if prop.get("type") != "array" else 7)
                for name, prop in properties.items()
            }
            probes.append(AuditProbe(info.name, wrong, "invalid"))
        if model.exact:
            id_params = [n for n in properties if n.endswith("_id")]
        else:
            id_params = [p.name for p in info.params if p.takes or is_id_name(p.name)]
        if id_params:
            args = _valid_args(model, info.name, state, rng)
            param = info.param(id_params[0])
            unknown = 987654321 if param is not None and param.type == "integer" else None
            args[id_params[0]] = unknown if unknown is not None else "NO-SUCH-ID-9999"
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


def _kind_confirmed(tool: Any) -> bool:
    """Whether a tool's kind is known rather than guessed. A query the probes settled on
    while the code holds a write (calls that changed nothing: a refusal the code does not
    flag, an argument that missed) is a guess the first write overrules, like an
    unconfirmed one; a declared kind (a spec's) or an observed write is known."""
    if tool.kind_evidence == "unconfirmed":
        return False
    guessed = tool.kind == "query" and tool.kind_evidence == "probe"
    return not (guessed and tool.ast_kind == "mutate")


def _grade_as_it_comes(
    probe: AuditProbe,
    kind: str,
    alive: bool,
    raised: bool,
    failure: str | None,
    changed: bool,
    confirmed: bool = True,
) -> None:
    if not alive:
        probe.finding = f"call crashed or was killed: {failure}"
    elif kind == "query" and changed and not confirmed:
        # No probe call of this tool had worked, so its kind was the AST's guess; now one
        # did, and wrote: the audit learns the kind, the environment is not at fault.
        probe.passed = True
        probe.warning = "unconfirmed query changed the state: it writes"
    elif kind == "query" and changed:
        probe.finding, probe.fatal = "query tool changed the state", True
    elif failure is not None and changed and not raised:
        # The tool said it refused, yet it changed the state: silent corruption.
        probe.finding, probe.fatal = "failed call changed the state", True
    else:
        probe.passed = True
        if failure is not None and changed:
            # An exception after a partial write: loud, and graded like any change, but
            # worth knowing (`self.x = arg` before `"..." + arg` raised).
            probe.warning = f"raised after changing the state ({failure[:120]})"
        elif probe.expect == "invalid" and failure is None:
            probe.warning = f"accepted invalid arguments {probe.args}"


def claims_read_only(model: EnvModel) -> set[str]:
    """The tools whose description (the docstring's summary) says a call changes nothing."""
    return {
        t.name
        for t in model.tools
        if READ_ONLY_CLAIM.search(t.schema_["function"].get("description") or "")
    }


def _hold_to_its_word(probe: AuditProbe, promised: set[str], changed: bool) -> None:
    """Fatal, whatever the grade, when a tool that says it changes nothing changed the state:
    an agent trusting the description would change a record unknowingly (a lookup that
    counts a visit). The AST and the probes call such a tool `mutate`, so no kind rule sees it."""
    if probe.tool in promised and changed:
        probe.passed, probe.warning = False, ""
        probe.finding = "its description says it changes nothing, yet the call changed the state"
        probe.fatal = True


def audit_environment(
    env: Environment,
    states: Sequence[dict],
    *,
    seed: int,
    backend: str = "auto",
    model: EnvModel | None = None,
    pool: Any = None,
) -> AuditReport:
    """Probe every tool over each initial state, one fresh sandbox session per state.

    Different states reach different branches (an empty list, an out-of-stock item, a
    record in every status), so every state the build made is audited, not just one.
    `states` are what the environment is loaded from. `pool`: the WorkerPool to take the
    sessions from (a reset warm worker or a forked one is as fresh), else sandboxes of their
    own.
    """
    from sandboxes import session_in

    model = model or model_of(env)
    kinds = {t.name: t.kind for t in model.tools}
    promised = claims_read_only(model)
    source = sandbox_source(env)
    probes: list[AuditProbe] = []
    worked: set[str] = set()
    for index, state in enumerate(states):
        with session_in(pool, source, state, backend=backend) as session:
            before = session.final_state()
            # Arguments come from the state as the environment reports it.
            reported = state if model.exact or before is None else before
            state_probes = plan_probes(model, reported, derive_seed(seed, index))
            probes += state_probes
            for probe in state_probes:
                if session.status != "ok":
                    probe.finding = f"worker gone: {session.reason}"
                    continue
                call = session.call(probe.tool, probe.args)
                after = session.final_state() if session.status == "ok" else before
                changed = after != before
                if model.exact:
                    _grade(probe, kinds[probe.tool], call.ok, call.result, call.error, changed)
                else:
                    failure = result_failure(call.ok, call.result, call.error)
                    if failure is None:
                        worked.add(probe.tool)
                    alive = session.status == "ok"
                    _grade_as_it_comes(
                        probe,
                        kinds[probe.tool],
                        alive,
                        not call.ok,
                        failure,
                        changed,
                        confirmed=_kind_confirmed(model.tool(probe.tool)),
                    )
                _hold_to_its_word(probe, promised, changed)
                before = after
    score = sum(p.passed for p in probes) / len(probes) if probes else 0.0
    # A spec's tools are compiled by us and graded on its contract; only inferred ones can
    # be idle.
    idle = [
        t.name
        for t in model.tools
        if not model.exact and t.kind_evidence == "unconfirmed" and t.name not in worked
    ]
    working = len(model.tools) - len(idle)
    too_idle = bool(model.tools) and working < WORKING_TOOLS_FLOOR * len(model.tools)
    return AuditReport(
        env_id=env.env_id,
        score=round(score, 4),
        probes=probes,
        idle_tools=idle if too_idle else [],
        n_tools=len(model.tools),
    )
