"""Planning by exploration: the same shop, with its spec thrown away, still gives proven tasks."""

from __future__ import annotations

import pytest

from quality.selftest import selftest_outcomes
from synthesis.environments.inference import infer_model
from synthesis.tasks.assembly import mentions_an_id
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios


@pytest.fixture
def specless(shop_env, shop_state, sandbox):
    env = shop_env.model_copy(update={"spec": None})
    return env, shop_state, infer_model(env, [shop_state], seed=0)


def test_inference_confirms_kinds_and_finds_ids_producers_and_statuses(specless):
    _, _, model = specless
    kinds = {t.name: (t.kind, t.kind_evidence) for t in model.tools}
    assert kinds["pay_order"] == ("mutate", "probe")
    assert kinds["find_customer_by_email"] == ("query", "probe")
    assert model.tool("create_order").id_params() == {
        "customer_id": "customer",
        "product_id": "product",
    }
    assert "order" in model.tool("list_orders").produces
    orders = model.entity("order")
    assert orders.status_field == "status"
    assert "paid" in orders.transitions.get("pending", [])


def test_explored_tasks_hide_ids_look_them_up_and_are_proven(specless):
    env, state, model = specless
    planned = plan_scenarios(env, state, seed=0, count=5, model=model)
    assert len(planned) == 5
    executed = execute_gold(env, planned, model=model)
    published = [s for s in executed if s.status == "published"]
    assert len(published) == 5, [s.reason for s in executed]
    ids = {rid for coll in state.state.values() for rid in coll}
    for scenario in published:
        assert not mentions_an_id(scenario.task_text, ids)
        assert scenario.provenance["generator"] == "explore/v1"
        assert "mutation" in scenario.provenance["roles"], scenario.gold_chain
    items = [(s, derive_checks(s, model=model)) for s in published]
    outcomes = selftest_outcomes(env, items, model=model)
    assert all(o.selftest.proven for o in outcomes), [o.selftest.reason for o in outcomes]
    kill = [o.selftest.mutation_kill_rate for o in outcomes]
    assert sum(kill) / len(kill) >= 0.9
    # Same seed, same plans: exploring is as reproducible as predicting.
    again = plan_scenarios(env, state, seed=0, count=5, model=model)
    assert [s.model_dump() for s in again] == [s.model_dump() for s in planned]


ACCOUNTS = '''
class Airline:
    """Seats booked from a traveller's own account; no tool lists the accounts."""

    def __init__(self):
        self.users = {
            "user1": {"name": "Ada Lim", "password": "pw-ada", "cash": 900},
            "user2": {"name": "Bo Chen", "password": "pw-bo", "cash": 700},
        }
        self.flights = [
            {"flight_no": "CA1", "price": 100, "seats": 5},
            {"flight_no": "MU2", "price": 150, "seats": 5},
        ]
        self.menu = ["vegetarian", "fish"]
        self.booked = {"user2": ["MU2"]}
        self.meals = {}

    def list_flights(self) -> list:
        """Every flight with its price and free seats."""
        return [dict(f) for f in self.flights]

    def get_bookings(self, user_id: str) -> list:
        """A traveller's bookings (it shows user ids, but only to whoever has one)."""
        return [{"user_id": user_id, "flight_no": f} for f in self.booked.get(user_id, [])]

    def reserve(self, user_id, password, flight_no):
        user = self.users.get(user_id)
        if user is None or user["password"] != password:
            return {"error": "authentication failed"}
        flight = next((f for f in self.flights if f["flight_no"] == flight_no), None)
        if flight is None or flight["seats"] < 1 or user["cash"] < flight["price"]:
            return {"error": "cannot book that flight"}
        flight["seats"] -= 1
        user["cash"] -= flight["price"]
        self.booked.setdefault(user_id, []).append(flight_no)
        return {"success": True}

    def order_meal(self, user_id, password, meal):
        user = self.users.get(user_id)
        if user is None or user["password"] != password or meal not in self.menu:
            return {"error": "refused"}
        self.meals[user_id] = meal
        return {"success": True}
'''


def test_an_accounts_own_id_is_said_and_tasks_spread_over_the_tools(tmp_path, sandbox):
    # ACEBench's Travel: whoever books knows their user id and password, so a task says
    # them (no query reveals accounts); the same call is never two goals, and a state's
    # tasks lean on each mutating tool rather than on one.
    from synthesis.environments.foreign import foreign_environment, resolve_sources
    from synthesis.environments.foreign_states import build_foreign_states

    path = tmp_path / "airline.py"
    path.write_text(ACCOUNTS)
    env = foreign_environment(resolve_sources(str(path))[0])
    state = build_foreign_states(env, seed=0, count=1)[0]
    model = infer_model(env, [state], seed=0)
    assert {t.name for t in model.tools if t.kind == "mutate"} == {"reserve", "order_meal"}
    planned = plan_scenarios(env, state, seed=0, count=4, model=model)
    assert len(planned) >= 3
    goal_tools = [c.tool for s in planned for c in s.gold_chain]
    assert {"reserve", "order_meal"} <= set(goal_tools)
    for scenario in planned:
        calls = [(c.tool, repr(sorted(c.args.items()))) for c in scenario.gold_chain]
        assert len(calls) == len(set(calls)), scenario.gold_chain
        for call in scenario.gold_chain:
            if "user_id" in call.args:
                assert call.args["user_id"] in scenario.task_text
    executed = execute_gold(env, planned, model=model)
    assert all(s.status == "published" for s in executed), [s.reason for s in executed]
