"""The environment audit grades the contract in the sandbox and catches broken environments."""

from __future__ import annotations

import pytest

from quality.audit import AUDIT_THRESHOLD, audit_environment, plan_probes
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue


@pytest.fixture(scope="module")
def shop():
    topic = next(t for t in load_catalogue() if t.topic_id == "bookshop")
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=5, index=0, records_per_entity=4)
    return env, state.state


def test_plan_probes_cover_every_tool_with_valid_and_invalid_calls(shop):
    env, state = shop
    probes = plan_probes(model_of(env), state, seed=5)
    assert {p.tool for p in probes} == {t.name for t in env.tools}
    for tool in env.tools:
        kinds = {p.expect for p in probes if p.tool == tool.name}
        assert kinds == {"valid", "invalid"}, tool.name
    unknown_id = [p for p in probes if "NO-SUCH-ID-9999" in p.args.values()]
    assert unknown_id and all(p.expect == "invalid" for p in unknown_id)


def test_a_compiled_environment_passes_every_probe(shop):
    env, state = shop
    report = audit_environment(env, [state], seed=5)
    assert report.score == 1.0 and report.passed, report.findings()


def _broken(env, old: str, new: str):
    assert old in env.code
    return env.model_copy(update={"code": env.code.replace(old, new)})


def test_a_tool_that_crashes_is_found_and_the_run_goes_on(shop):
    env, state = shop
    broken = _broken(env, "record['status'] = 'paid'", "raise RuntimeError('boom')")
    # Every order pending, so whichever order a probe picks reaches the broken line.
    orders = {k: {**o, "status": "pending"} for k, o in state["orders"].items()}
    report = audit_environment(broken, [{**state, "orders": orders}], seed=5)
    crashes = [f for f in report.findings() if f.startswith("pay_order")]
    assert crashes and "RuntimeError: boom" in crashes[0]
    assert report.score < 1.0
    assert all(p.passed for p in report.probes if p.tool != "pay_order")


def test_a_query_that_writes_and_a_malformed_result_fail_the_audit(shop):
    env, state = shop
    broken = _broken(
        env,
        'return {"success": True, "data": dict(record)}\n\n    def create_order',
        'self.orders.clear()\n        return {"success": True, "data": dict(record)}'
        "\n\n    def create_order",
    )
    broken = _broken(broken, "def list_books(", "def list_books_old(")
    broken = broken.model_copy(
        update={
            "code": broken.code
            + (
                "\n    def list_books(self, category: str | None = None) -> dict:\n"
                "        return ['not', 'a', 'dict']\n"
            )
        }
    )
    report = audit_environment(broken, [state], seed=5)
    findings = report.findings()
    assert any(f.startswith("get_order: query tool changed the state") for f in findings)
    assert any(f.startswith("list_books: result is not a") for f in findings)
    # The score alone would pass; silent state corruption fails the audit regardless.
    assert report.score >= AUDIT_THRESHOLD
    assert not report.passed and report.to_json()["n_fatal"] >= 1


def test_every_initial_state_is_audited(shop):
    env, state = shop
    stocked = {
        **state,
        "books": {k: {**b, "stock": max(1, b["stock"])} for k, b in state["books"].items()},
    }
    empty_shelf = {**state, "books": {k: {**b, "stock": 0} for k, b in state["books"].items()}}
    # A tool that crashes only in some states: one audited state is not enough to see it.
    broken = _broken(
        env,
        "        records = [\n            dict(record) for _, record in sorted(self.books.items())",
        "        if any(b['stock'] == 0 for b in self.books.values()):\n"
        "            raise RuntimeError('empty shelf')\n"
        "        records = [\n            dict(record) for _, record in "
        "sorted(self.books.items())",
    )
    one = audit_environment(broken, [stocked], seed=5)
    both = audit_environment(broken, [stocked, empty_shelf], seed=5)
    assert one.score == 1.0
    assert len(both.probes) == 2 * len(one.probes)
    assert any(
        f.startswith("list_books: call crashed") and "empty shelf" in f for f in both.findings()
    )


IDLE_TOOLS = '''
class Vault:
    """A class whose tools, but one, refuse every call."""

    def __init__(self):
        self.items = {"a1": {"name": "lamp"}}

    def list_items(self) -> list:
        """The items."""
        return list(self.items)

    def open_vault(self, code: str) -> dict:
        """Open the vault."""
        raise PermissionError("the vault stays shut")

    def take_item(self, item_id: str) -> dict:
        """Take an item."""
        raise PermissionError("the vault stays shut")

    def put_item(self, item_id: str, name: str) -> dict:
        """Put an item."""
        raise PermissionError("the vault stays shut")

    def move_item(self, item_id: str, to: str) -> dict:
        """Move an item."""
        raise PermissionError("the vault stays shut")
'''


@pytest.mark.parametrize("working", [1, 2])
def test_a_foreign_class_whose_tools_never_succeed_fails_naming_them(tmp_path, working):
    """1 of 5 tools working is under the floor (a quarter): the audit fails and names the 4
    that never succeeded; 2 of 5 is a class whose other tools may just refuse well."""
    from synthesis.environments.foreign import foreign_environment, resolve_sources
    from synthesis.environments.foreign_states import build_foreign_states
    from synthesis.environments.inference import infer_model

    code = IDLE_TOOLS
    if working == 2:
        code = code.replace(
            '''        """Move an item."""
        raise PermissionError("the vault stays shut")''',
            '''        """Move an item."""
        return {"moved": item_id, "to": to}''',
        )
    path = tmp_path / "vault.py"
    path.write_text(code)
    (source,) = resolve_sources(str(path))
    env = foreign_environment(source)
    states = build_foreign_states(env, seed=0, count=1)
    model = infer_model(env, states, seed=0)
    report = audit_environment(env, [s.state for s in states], seed=0, model=model)
    if working == 1:
        assert not report.passed
        assert report.findings()[0].startswith("4 of 5 tools never succeeded in any call")
        assert "open_vault" in report.findings()[0] and "list_items" not in report.findings()[0]
    else:
        assert report.passed and report.idle_tools == []
