"""The shipped reward module (`envfoundry_reward.py`) takes and reports a foreign class's
state as the sandbox does when the class keeps it in models (tau2's `RetailTools(db:
RetailDB)`): a trainer replaying a published task then sees the states its checks were
proven on. Before, such a class did not even load there (`missing 1 required positional
argument: 'db'`)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from sandboxes import EnvSource, run_episode
from synthesis.tasks import envfoundry_reward as efr

MODELS = Path(__file__).resolve().parents[2] / "fakes" / "foreign_models.py"
SHOP_STATE = {
    "shop": "Corner Store",
    "orders": {"O1": {"order_id": "O1", "item": "lamp", "status": "pending"}},
}


def _class(name: str) -> type:
    spec = importlib.util.spec_from_file_location("foreign_models_for_reward", MODELS)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the reward module registers an environment's code
    spec.loader.exec_module(module)
    return getattr(module, name)


def _reported(obj) -> dict:
    return {name: efr._plain(value) for name, value in efr._public_attributes(obj)}


def test_a_model_typed_constructor_loads_and_reports_as_in_the_sandbox():
    calls = [("ship_order", {"order_id": "O1"}), ("get_order", {"order_id": "O1"})]
    sandboxed = run_episode(
        EnvSource(path=str(MODELS), class_name="ShopTools", libraries=True),
        SHOP_STATE,
        calls,
        backend="process",
    )
    shop = efr._construct(_class("ShopTools"), "auto", SHOP_STATE)
    results = [efr._plain(getattr(shop, tool)(**args), strict=True) for tool, args in calls]
    assert results == [r.result for r in sandboxed.results]
    assert _reported(shop) == sandboxed.final_state
    # The state as the class reports it ({db: ...}) loads back the same.
    again = efr._construct(_class("ShopTools"), "auto", sandboxed.final_state)
    assert _reported(again) == sandboxed.final_state


def test_a_dataclass_typed_constructor_loads_as_in_the_sandbox():
    ledger = efr._construct(_class("LedgerTools"), "auto", {"owner": "ana"})
    assert efr._plain(ledger.deposit(5), strict=True) == {"owner": "ana", "balance": 5}
    assert _reported(ledger) == {"ledger": {"owner": "ana", "balance": 5}}


def test_an_early_returning_loader_gets_the_modules_default_as_in_the_sandbox():
    path = MODELS.with_name("foreign_default_state.py")
    spec = importlib.util.spec_from_file_location("foreign_default_state_for_reward", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    rental = efr._construct(module.CarRental, "auto", None)
    sandboxed = run_episode(
        EnvSource(path=str(path), class_name="CarRental"), None, [], backend="process"
    )
    assert _reported(rental) == sandboxed.final_state and rental.cars["C1"]["available"]
    assert module.DEFAULT_STATE["cars"]["C1"]["available"]  # a copy was loaded, not the default


def test_a_class_with_dataclass_records_loads_in_the_trainers_process():
    # tests/fakes/foreign/parcel_tracking.py: `@dataclass` records under string annotations
    # look their module up in sys.modules, which the reward module did not fill.
    code = (
        "from __future__ import annotations\n"
        "from dataclasses import dataclass, field\n\n\n"
        "@dataclass\nclass Scan:\n    where: str\n"
        "    tags: list[str] = field(default_factory=list)\n\n\n"
        "class Tracker:\n    def scan(self, where: str) -> dict:\n"
        "        return {'where': Scan(where).where}\n"
    )
    cls = efr._load_class(code, "Tracker", "parcel tracking")
    assert cls().scan("Leeds") == {"where": "Leeds"}


def test_a_class_of_a_package_resolves_its_relative_imports(tmp_path, monkeypatch):
    # ACEBench's phone_platform/message.py: `from ..phone_platform.base_api import BaseApi`.
    package = tmp_path / "phone" / "platform"
    package.mkdir(parents=True)
    (tmp_path / "phone" / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "base_api.py").write_text("class BaseApi:\n    wifi = False\n")
    code = "from ..platform.base_api import BaseApi\n\n\nclass Messages(BaseApi):\n    pass\n"
    monkeypatch.syspath_prepend(str(tmp_path))
    cls = efr._load_class(code, "Messages", "messages", "phone.platform.message")
    assert cls.wifi is False
