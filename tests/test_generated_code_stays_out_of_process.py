"""No pipeline stage runs generated code in the pipeline's own process.

The pipeline's builtins `compile` and `exec` are wrapped to fail on a marker that only the
generated source carries (AST parsing, which never executes, stays allowed). Then every stage
that touches an environment runs for real: initial-state history, audit, gold runs, check
self-tests and rollouts. Any in-process execution trips the wrapper; the sandbox workers are
separate processes and do not see it.
"""

from __future__ import annotations

import ast
import builtins

import pytest

from quality.audit import audit_environment
from quality.selftest import selftest_scenarios
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue
from synthesis.rollouts.agents import OraclePolicy
from synthesis.rollouts.episodes import rollout
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios

MARKER = "GENERATED_CODE_MARKER_7f3a"


def _mentions_marker(obj) -> bool:
    if isinstance(obj, (str, bytes)):
        return MARKER in (obj if isinstance(obj, str) else obj.decode(errors="ignore"))
    code = getattr(obj, "co_consts", None)
    return code is not None and any(_mentions_marker(c) for c in code)


@pytest.fixture
def guarded(monkeypatch):
    real_compile, real_exec = builtins.compile, builtins.exec
    tripped: list[str] = []

    def guarded_compile(source, filename, mode, flags=0, *args, **kwargs):
        if not flags & ast.PyCF_ONLY_AST and _mentions_marker(source):
            tripped.append("compile")
            raise AssertionError("generated code compiled in the pipeline process")
        return real_compile(source, filename, mode, flags, *args, **kwargs)

    def guarded_exec(obj, *args, **kwargs):
        if _mentions_marker(obj):
            tripped.append("exec")
            raise AssertionError("generated code executed in the pipeline process")
        return real_exec(obj, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", guarded_compile)
    monkeypatch.setattr(builtins, "exec", guarded_exec)
    return tripped


def test_the_guard_itself_trips_on_in_process_execution(guarded):
    with pytest.raises(AssertionError):
        exec(compile(f"x = '{MARKER}'", "<generated>", "exec"))  # noqa: S102
    assert guarded == ["compile"]


def test_every_stage_runs_generated_code_only_in_the_sandbox(guarded):
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    env = env.model_copy(update={"code": f"# {MARKER}\n" + env.code})
    assert env.status == "accepted"

    state = build_initial_state(env, seed=1, index=0, records_per_entity=4)
    assert state.state["orders"]
    assert audit_environment(env, [state.state], seed=1).passed
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=1, count=3, max_chain_length=4))
    published = [s for s in scenarios if s.status == "published"]
    assert published and all(s.final_state for s in published)
    items = [(s, derive_checks(s, model=model_of(env))) for s in published]
    selftests = selftest_scenarios(env, items)
    assert all(t.proven for t in selftests)
    traj = rollout(env, published[0], items[0][1], OraclePolicy(published[0]))
    assert traj.success
    assert guarded == []
