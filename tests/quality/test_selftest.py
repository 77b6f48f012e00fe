"""Check self-tests: gold passes, do-nothing fails, replays agree, mutants get killed."""

from __future__ import annotations

import importlib.util
import time
from pathlib import Path

import pytest

from quality.selftest import make_mutants, selftest_outcomes, selftest_scenario
from synthesis.environments.model import model_of
from synthesis.models import Check, ToolCall
from synthesis.tasks.checks import AskedValue, derive_checks, reply_request
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.spec_model import SpecModel


def _load_worlds():
    # The hand-written worlds live in tests/synthesis/conftest.py; pytest shares conftest
    # fixtures only downwards, so load the module by path under a name of its own.
    path = Path(__file__).resolve().parents[1] / "synthesis" / "conftest.py"
    spec = importlib.util.spec_from_file_location("envfoundry_test_worlds", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


W = _load_worlds()


@pytest.fixture
def sandbox():
    if not W.sandbox_available():
        pytest.skip("sandboxes package (run_episode/WorkerPool/open_session) not available yet")


@pytest.fixture
def shop():
    env = W.make_environment(W.SHOP_SPEC, W.SHOP_CODE)
    return env, W.make_state(env, W.SHOP_STATE)


def _modelled(env, state, calls):
    """A scenario whose gold results and final state come from the spec model (no sandbox)."""
    model = SpecModel(model_of(env), state.state)
    chain = [ToolCall(tool=t, args=a) for t, a in calls]
    results = [model.call(c.tool, c.args) for c in chain]
    base = plan_scenarios(env, state, seed=0, count=1, max_chain_length=5)[0]
    return base.model_copy(
        update={
            "scenario_id": "sc-mut",
            "gold_chain": chain,
            "gold_results": results,
            "final_state": model.state,
        }
    )


ORDER_AND_PAY = [
    ("find_customer_by_email", {"email": "alan@example.com"}),
    ("find_product_by_name", {"name": "Sencha"}),
    ("create_order", {"customer_id": "CUS-0002", "product_id": "PRD-0001", "quantity": 2}),
    ("pay_order", {"order_id": "ORD-0006"}),
]


def test_mutants_cover_drops_id_changes_numbers_and_swaps(shop):
    env, state = shop
    scenario = _modelled(env, state, ORDER_AND_PAY)
    mutants = make_mutants(model_of(env), scenario)
    labels = [m.label for m in mutants]
    assert "drop step 3 create_order" in labels and "drop step 4 pay_order" in labels
    assert not any(label.startswith("drop step 1") for label in labels)  # lookups stay
    assert "step 3 create_order: quantity 2 -> 3" in labels
    assert "swap steps 3 create_order and 4 pay_order" in labels
    for m in mutants:
        assert list(m.chain) != list(scenario.gold_chain)
        if m.kind == "change_id":
            step = int(m.label.split()[1]) - 1
            (param,) = [
                k
                for k in m.chain[step].args
                if m.chain[step].args[k] != scenario.gold_chain[step].args[k]
            ]
            new = m.chain[step].args[param]
            collection = {
                "customer_id": "customers",
                "product_id": "products",
                "order_id": "orders",
            }[param]
            assert new in state.state[collection]  # another *valid* id, same entity
    assert {m.kind for m in mutants} == {"drop_step", "change_id", "change_number", "swap_steps"}
    assert [m.label for m in make_mutants(model_of(env), scenario)] == labels  # deterministic


def test_planned_scenarios_are_proven_and_mutants_killed(sandbox, shop):
    env, state = shop
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=4, count=8, max_chain_length=5))
    items = [(s, derive_checks(s, model=model_of(env))) for s in scenarios]
    started = time.perf_counter()
    outcomes = selftest_outcomes(env, items)
    per_scenario = (time.perf_counter() - started) / len(items)
    print(
        f"\nselftest: {len(items)} scenarios, {per_scenario * 1000:.1f} ms/scenario, "
        f"{sum(o.selftest.n_mutants for o in outcomes)} mutants"
    )
    changing = 0
    for (scenario, _), outcome in zip(items, outcomes, strict=True):
        st = outcome.selftest
        assert st.proven, st.reason
        assert st.reason is None and st.n_mutants >= 1
        if "mutation" not in scenario.provenance["roles"]:
            continue  # a refusal changes nothing: its mutants drop or change its lookups
        changing += 1
        # Dropping the (last) mutation can never go unnoticed.
        verdicts = {m.label: v for m, v in outcome.mutants}
        drops = {label: v for label, v in verdicts.items() if label.startswith("drop step")}
        assert drops and "killed" in drops.values()
        assert st.mutation_kill_rate > 0.5, outcome.mutants
    assert changing >= len(items) // 2
    single = selftest_scenario(env, items[0][0], items[0][1])
    assert single == outcomes[0].selftest


def test_checks_a_noop_passes_are_not_proven(sandbox, shop):
    env, state = shop
    scenario = execute_gold(env, plan_scenarios(env, state, seed=4, count=1, max_chain_length=5))[0]
    # True before and after: says nothing about the task, so it proves nothing.
    vacuous = Check(
        check_id="k",
        scenario_id=scenario.scenario_id,
        description="Ada is still called Ada Lovelace.",
        spec={
            "type": "field_equals",
            "collection": "customers",
            "id": "CUS-0001",
            "field": "name",
            "value": "Ada Lovelace",
        },
    )
    st = selftest_scenario(env, scenario, [vacuous])
    # Gold passes the check but earns nothing for it: the goal held before anyone acted.
    assert not st.gold_pass and not st.noop_fail and not st.proven
    assert "gold earns reward 0, not 1" in st.reason
    assert "do-nothing or refusing agent passes every check" in st.reason
    assert st.mutation_kill_rate < 1.0


def test_checks_gold_fails_are_not_proven(sandbox, shop):
    env, state = shop
    scenario = execute_gold(env, plan_scenarios(env, state, seed=4, count=1, max_chain_length=5))[0]
    impossible = Check(
        check_id="k",
        scenario_id=scenario.scenario_id,
        description="Sencha costs a million.",
        spec={
            "type": "field_equals",
            "collection": "products",
            "id": "PRD-0001",
            "field": "price",
            "value": 1e6,
        },
    )
    st = selftest_scenario(env, scenario, [*derive_checks(scenario), impossible])
    assert not st.gold_pass and not st.proven
    assert "gold final state fails: Sencha costs a million." in st.reason


def test_nondeterministic_environment_is_caught(sandbox, shop):
    env, state = shop
    scenario = execute_gold(env, _planned_create(env, state))[0]
    # A clock reading differs between any two replays, however they are isolated.
    flaky_code = W.SHOP_CODE.replace(
        '"total": round(product["price"] * quantity, 2),',
        '"total": round(product["price"] * quantity, 2), "token": time.perf_counter_ns(),',
    ).replace("class ShopEnv:", "import time\n\n\nclass ShopEnv:")
    assert flaky_code != W.SHOP_CODE
    flaky = W.make_environment(W.SHOP_SPEC, flaky_code)
    flaky_scenario = execute_gold(flaky, [scenario.model_copy(update={"final_state": None})])[0]
    st = selftest_scenario(flaky, flaky_scenario, derive_checks(flaky_scenario))
    assert not st.deterministic and not st.proven
    assert "replays differ" in st.reason or "differs from the recorded" in st.reason


def test_the_recorded_gold_run_is_the_second_replay(sandbox, shop, monkeypatch):
    """A scenario that recorded its gold run is replayed once and held to the record; one that
    recorded none is replayed twice. A record the replay does not meet is not proven."""
    import quality.selftest as selftest

    env, state = shop
    scenario = execute_gold(env, _planned_create(env, state))[0]
    chains = []
    run_chains = selftest.run_chains
    monkeypatch.setattr(
        selftest,
        "run_chains",
        lambda env, episodes, **kw: (
            chains.append([e[1] for e in episodes]) or run_chains(env, episodes, **kw)
        ),
    )
    st = selftest_scenario(env, scenario, derive_checks(scenario))
    assert st.proven and st.deterministic
    assert [c == scenario.gold_chain for c in chains[-1]].count(True) == 1
    bare = scenario.model_copy(update={"final_state": None})
    assert selftest_scenario(env, bare, derive_checks(scenario)).proven
    assert [c == scenario.gold_chain for c in chains[-1]].count(True) == 2
    forged = scenario.model_copy(
        update={"gold_results": [{"success": True, "data": "x"}, *scenario.gold_results[1:]]}
    )
    st = selftest_scenario(env, forged, derive_checks(forged))
    assert not st.deterministic and not st.proven
    assert "the gold replay differs from the recorded gold run" in st.reason


def _planned_create(env, state):
    for s in plan_scenarios(env, state, seed=0, count=20, max_chain_length=5):
        # Made, not refused: the order's result is what carries the clock reading.
        if s.kind == "feasible" and any(c.tool == "create_order" for c in s.gold_chain):
            return [s]
    raise AssertionError("no create_order scenario planned")


def _reply_task(env, state):
    """A hand-made information task: the total of Grace Hopper's pending order."""
    chain = [
        ToolCall(tool="find_customer_by_email", args={"email": "grace@example.com"}),
        ToolCall(tool="list_orders", args={"customer_id": "CUS-0003", "status": "pending"}),
        ToolCall(tool="get_order", args={"order_id": "ORD-0004"}),
    ]
    asked = AskedValue("the total of Grace Hopper's pending order", 12.5, 2, ("data", "total"))
    base = plan_scenarios(env, state, seed=0, count=1, max_chain_length=5)[0]
    planned = base.model_copy(
        update={
            "scenario_id": "sc-reply",
            "gold_chain": chain,
            "provenance": {"reply": reply_request([asked], decoys=[25.0, 6.75])},
        }
    )
    return execute_gold(env, [planned])[0]


def test_reply_task_mutants_rebuild_the_answer_from_their_own_results(sandbox, shop):
    env, state = shop
    model = model_of(env)
    scenario = _reply_task(env, state)
    checks = derive_checks(scenario, model=model)
    mutants = make_mutants(model, scenario)
    labels = {m.label for m in mutants}
    # Nothing is changed, so only the lookup the answer reads can be wrong: it is mutated.
    assert "drop step 3 get_order" in labels
    assert any(label.startswith("step 3 get_order: order_id ORD-0004 ->") for label in labels)
    # The lookups before it only found ids step 3 carries as gold has them: a mutant of those
    # could never be told apart, so none is made.
    assert not any(
        label.startswith(("step 1", "step 2", "drop step 1", "drop step 2")) for label in labels
    )
    (outcome,) = selftest_outcomes(env, [(scenario, checks)], model=model)
    st = outcome.selftest
    assert st.proven, st.reason
    verdicts = {m.label: v for m, v in outcome.mutants}
    # Another order's total, or none at all, is in the rebuilt answer: killed.
    assert verdicts["drop step 3 get_order"] == "killed"
    (other_order,) = [v for k, v in verdicts.items() if k.startswith("step 3 get_order")]
    assert other_order == "killed"
    assert st.n_mutants == sum(v != "equivalent" for v in verdicts.values())
    assert st.mutation_kill_rate == 1.0


def test_a_reply_fact_the_wrong_record_shares_is_not_proven(sandbox, shop):
    env, state = shop
    model = model_of(env)
    scenario = _reply_task(env, state)
    # "pending" is no evidence that the agent looked at Grace's order: the decoy customer's
    # pending order says the same, so the wrong-record baseline would earn the reward.
    status = AskedValue("the status of Grace Hopper's order", "pending", 1, ("data", 0, "status"))
    weak = scenario.model_copy(update={"provenance": {"reply": reply_request([status])}})
    st = selftest_scenario(env, weak, derive_checks(weak, model=model), model=model)
    assert st.gold_pass and not st.noop_fail and not st.proven
    assert "the wrong-record baseline (CUS-0003 -> CUS-0001) earns reward 1" in st.reason


def test_mutants_are_judged_as_if_each_reply_were_worked_out(sandbox, shop, monkeypatch):
    """A mutant whose final state fails a check is killed without its reply; the verdicts are
    the ones working out every mutant's reply gives, on state and reply tasks alike."""
    from quality import selftest

    env, state = shop
    model = model_of(env)
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=4, count=8, max_chain_length=5))
    items = [(s, derive_checks(s, model=model)) for s in scenarios]
    reply = _reply_task(env, state)
    items.append((reply, derive_checks(reply, model=model)))
    answered = []
    real_answer = selftest.oracle_answer

    def counting_answer(*args, **kwargs):
        answered.append(1)
        return real_answer(*args, **kwargs)

    monkeypatch.setattr(selftest, "oracle_answer", counting_answer)
    shortcut = selftest_outcomes(env, items, model=model)
    with_shortcut = len(answered)
    monkeypatch.setattr(selftest, "fails_on_state", lambda *args: False)
    every_reply = selftest_outcomes(env, items, model=model)
    without_shortcut = len(answered) - with_shortcut
    assert [(o.selftest, o.mutants) for o in shortcut] == [
        (o.selftest, o.mutants) for o in every_reply
    ]
    killed = sum(v == "killed" for o in shortcut for _, v in o.mutants)
    assert killed >= 10
    # Most kills needed no reply: the shortcut worked out that many fewer.
    assert without_shortcut - with_shortcut >= killed // 2, (without_shortcut, with_shortcut)


def test_planned_tasks_pay_no_shortcut_and_keep_every_right_alternative(sandbox, shop):
    """Every shortcut earns 0 and every correct alternative 1 on the planned tasks, and the
    self-test records each one's reward (the dataset card's reward audit reads them)."""
    env, state = shop
    model = model_of(env)
    scenarios = execute_gold(env, plan_scenarios(env, state, seed=9, count=8, max_chain_length=5))
    outcomes = selftest_outcomes(env, [(s, derive_checks(s, model=model)) for s in scenarios])
    kinds = {s.kind for s in scenarios}
    assert kinds == {"feasible", "infeasible"}, kinds
    for scenario, outcome in zip(scenarios, outcomes, strict=True):
        st = outcome.selftest
        assert st.shortcuts_fail and st.alternatives_pass, st.reason
        assert set(st.shortcut_rewards) >= {"dump", "hedge", "false_done", "pasted_policy"}
        assert ("refuse_feasible" in st.shortcut_rewards) == (scenario.kind == "feasible")
        assert all(r == 0.0 for r in st.shortcut_rewards.values())
        assert "pleasantries" in st.alternative_rewards
        assert all(r == 1.0 for r in st.alternative_rewards.values())
        if scenario.kind == "infeasible":
            assert "refusal_quoting_the_error" in st.alternative_rewards


def test_a_reply_check_a_dump_satisfies_is_not_proven(sandbox, shop):
    """Without its guards a question pays for listing every value after the calls that
    showed them: the shortcut screen says which shortcut earned what, and the task is not
    proven. With no call the same dump earns nothing: no value it states was shown."""
    env, state = shop
    model = model_of(env)
    scenario = _reply_task(env, state)
    checks = derive_checks(scenario, model=model)
    goals_only = [c for c in checks if c.spec["role"] == "goal" or "collateral" in c.spec["type"]]
    st = selftest_scenario(env, scenario, goals_only, model=model)
    assert st.gold_pass and not st.shortcuts_fail and not st.proven
    assert st.shortcut_rewards["gold_then_dump"] == 1.0
    assert st.shortcut_rewards["dump"] == st.shortcut_rewards["guess"] == 0.0
    assert "a shortcut earns a reward: " in st.reason
    assert "gold_then_dump earns 1" in st.reason
