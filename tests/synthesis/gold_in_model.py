"""Playing a planned task's gold chain in the exact model, as every task family expects it.

A state task's calls all succeed; an infeasible task's refused call (its role "refused") is
refused, and changes nothing when it is the whole task; a question is answered in the
oracle's reply. Either way the oracle's run, with its reply, earns reward 1 and doing nothing
earns 0 under the one reward rule.
"""

from __future__ import annotations

from synthesis.environments.model import EnvModel
from synthesis.models import Scenario
from synthesis.tasks.answers import oracle_answer
from synthesis.tasks.checks import derive_checks, grade
from synthesis.tasks.spec_model import SpecModel


def assert_gold_earns_one_and_noop_zero(scenario: Scenario, env_model: EnvModel) -> None:
    model = SpecModel(env_model, scenario.initial_state)
    results = [model.call(c.tool, c.args) for c in scenario.gold_chain]
    if scenario.kind == "infeasible":
        roles = scenario.provenance["roles"]
        refused = roles.index("refused")
        assert all(r["success"] for i, r in enumerate(results) if i != refused), results
        assert not results[refused]["success"], results[refused]
        if "mutation" not in roles:
            assert model.state == scenario.start_state
    else:
        assert all(r["success"] for r in results), results
    played = scenario.model_copy(update={"final_state": model.state, "gold_results": results})
    checks = derive_checks(played, model=env_model)
    reply = oracle_answer(played, model.state, results, model=env_model)
    gold = grade(checks, played.start_state, model.state, reply)
    assert (gold.reward, gold.success) == (1.0, True), (scenario.task_text, reply, gold)
    assert grade(checks, played.start_state, played.start_state, "").reward == 0.0


def proven_enough(selftests: list, at_least: int = 2) -> None:
    """Most planned tasks are proven; any that is not says why (it is quarantined, as the
    build would: an infeasible request whose decoy shares the refused fact, say)."""
    proven = [t for t in selftests if t.proven]
    assert len(proven) >= min(at_least, len(selftests)), [t.reason for t in selftests]
    assert len(proven) * 2 >= len(selftests), [t.reason for t in selftests]
    assert all(t.reason for t in selftests if not t.proven)
