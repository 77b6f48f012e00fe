"""The host-CPU fast paths decide exactly as the slow walks they skip (same verdicts, same
copies), including on the values where Python's == is looser than the checks."""

from __future__ import annotations

import copy
import random
import re

from synthesis.environments.model import model_of
from synthesis.tasks.answers import final_answer
from synthesis.tasks.assembly import mentions_an_id
from synthesis.tasks.checks import (
    diff_states,
    evaluate_check,
    fails_on_state,
    grade,
    is_collection,
)
from synthesis.tasks.decoys import record_named_by
from synthesis.tasks.envfoundry_reward import mentions
from synthesis.tasks.spec_model import SpecModel, json_copy
from tests.synthesis.test_workspace import TOPICS as WORKSPACE_TOPICS

STATE = {
    "orders": {
        "ORD-0001": {"id": "ORD-0001", "paid": True, "qty": 1, "tags": ["a", {"k": 1}]},
        "ORD-0002": {"id": "ORD-0002", "paid": False, "qty": 2.5, "tags": []},
    },
    "customers": {"CUS-0001": {"id": "CUS-0001", "name": "Ann Lee", "email": "ann@x.com"}},
    "version": 3,
}


def guard(**overrides):
    spec = {
        "type": "no_collateral_changes",
        "touched": [],
        "deleted": [],
        "created": {},
        "created_refs": {},
        "attributes": [],
        "paths": [],
    }
    return {**spec, **overrides}


def with_field(state, coll, rid, fname, value):
    out = copy.deepcopy(state)
    out[coll][rid][fname] = value
    return out


def test_json_copy_is_a_deep_copy_with_the_same_order_and_types():
    copied = json_copy(STATE)
    assert copied == STATE and copied is not STATE
    assert list(copied["orders"]) == list(STATE["orders"])
    copied["orders"]["ORD-0001"]["tags"][1]["k"] = 2
    assert STATE["orders"]["ORD-0001"]["tags"][1]["k"] == 1
    odd = {"pair": (1, [2]), "n": 1.0}
    again = json_copy(odd)
    assert again == odd and type(again["pair"]) is tuple and type(again["n"]) is float
    assert again["pair"][1] is not odd["pair"][1]


def test_collateral_guard_holds_on_an_untouched_state():
    assert evaluate_check(guard(), STATE, copy.deepcopy(STATE))


def test_collateral_guard_sees_a_bool_that_became_a_number():
    # True == 1 to Python, not to the checks: the fast path must not call this unchanged.
    final = with_field(STATE, "orders", "ORD-0001", "paid", 1)
    assert final == STATE
    assert not evaluate_check(guard(), STATE, final)
    nested = copy.deepcopy(STATE)
    nested["orders"]["ORD-0001"]["tags"][1]["k"] = True
    assert not evaluate_check(guard(), STATE, nested)


def test_collateral_guard_takes_an_int_for_the_same_float():
    final = with_field(STATE, "orders", "ORD-0002", "qty", 2.5)
    final["version"] = 3.0
    assert evaluate_check(guard(), STATE, final)


def test_collateral_guard_still_wants_the_records_a_task_creates():
    assert not evaluate_check(guard(created={"orders": 1}, created_refs=None), STATE, STATE)
    assert evaluate_check(guard(created={"orders": 0}, created_refs=None), STATE, STATE)


def test_collateral_guard_leaves_a_form_to_the_walk():
    # A value that is itself a form compares as a pattern, never as equal data.
    state = {"things": {"T-1": {"id": "T-1", "spec": {"$form": "int"}}}}
    assert not evaluate_check(guard(), state, copy.deepcopy(state))


def test_diff_of_equal_collections_is_empty_and_a_change_is_found():
    assert diff_states(STATE, copy.deepcopy(STATE)).empty
    final = with_field(STATE, "orders", "ORD-0002", "paid", True)
    assert diff_states(STATE, final).changed == [("orders", "ORD-0002", "paid", True)]


def test_is_collection_counts_dict_subclasses_and_rejects_other_values():
    class Records(dict):
        pass

    assert is_collection({}) and is_collection({"a": Records()})
    assert not is_collection({"a": {}, "b": []}) and not is_collection([{}])


def test_record_named_by_an_id_a_unique_value_or_nothing():
    assert record_named_by(STATE, "ORD-0002") == ("orders", "ORD-0002", "id")
    assert record_named_by(STATE, "ann@x.com") == ("customers", "CUS-0001", "email")
    twice = copy.deepcopy(STATE)
    twice["customers"]["CUS-0002"] = {"id": "CUS-0002", "name": "Bo", "email": "ann@x.com"}
    assert record_named_by(twice, "ann@x.com") is None


def test_a_reply_is_read_the_same_every_time():
    reply = "Order total is $1,200.00, due March 4, 2025."
    for _ in range(3):
        assert mentions(reply, 1200) and mentions(reply, "2025-03-04")
        assert not mentions(reply, 120)


def test_id_leaks_are_found_in_any_case_and_any_script():
    assert mentions_an_id("Please cancel ord-0007 today", ["ORD-0007"])
    assert mentions_an_id("Bitte storniere ORD-0007 für mich", ["ORD-0007"])
    assert not mentions_an_id("Please cancel ORD-00071", ["ORD-0007"])
    assert not mentions_an_id("Please cancel the order", ["ORD-0007"])
    # The Kelvin sign folds to k only for the regex: non-ASCII text is left to it.
    assert mentions_an_id("see \u212a-1234 now", ["k-1234"])


def test_id_leaks_in_ascii_text_are_what_the_regex_finds():
    # The ASCII path finds ids by substring and neighbours, not by a pattern per id: on every
    # text of a few characters likely at an id's edges, it agrees with the regex.
    rng = random.Random(0)
    for _ in range(3000):
        text = "".join(rng.choice("aB-_ 9.K") for _ in range(rng.randint(0, 10)))
        rid = "".join(rng.choice("aB-_9K") for _ in range(rng.randint(4, 5)))
        leaked = re.search(rf"(?<![\w-]){re.escape(rid)}(?![\w-])", text, re.IGNORECASE)
        assert mentions_an_id(text, [rid]) == bool(leaked), (text, rid)
    assert mentions_an_id("ord-0007-b, ord-0007.", ["ORD-0007"])  # a later occurrence counts


def test_answers_name_records_from_either_state():
    final = copy.deepcopy(STATE)
    final["orders"]["ORD-0003"] = {"id": "ORD-0003", "customer_id": "CUS-0001", "qty": 1}
    final["orders"]["ORD-0001"]["customer_id"] = "ORD-0003"
    # Which collection an id is in comes from either state (the new order only from the
    # final one); what names a record comes from the results the run showed.
    calls = [
        ("find_customer", {"email": "ann@x.com"}),
        ("get_order", {"order_id": "ORD-0001"}),
        ("create_order", {"customer_id": "CUS-0001", "qty": 1}),
        ("merge_order", {"order_id": "ORD-0001", "into": "ORD-0003"}),
    ]
    results = [
        {"success": True, "data": STATE["customers"]["CUS-0001"]},
        {"success": True, "data": {**STATE["orders"]["ORD-0001"], "customer_id": "CUS-0001"}},
        {"success": True, "data": final["orders"]["ORD-0003"]},
        {"success": True, "data": final["orders"]["ORD-0001"]},
    ]
    text = final_answer(STATE, final, results, calls=calls)
    assert "customer Ann Lee" in text and "the new order" in text


def test_the_workspace_planners_grep_sees_what_grep_sees_as_the_world_changes():
    import random

    from synthesis.environments.build import build_environment
    from synthesis.environments.specgen import generate_spec
    from synthesis.environments.states import build_initial_state
    from synthesis.tasks.workspace_plans import _Planner

    topic = WORKSPACE_TOPICS[0]
    env = build_environment(generate_spec(topic))
    state = build_initial_state(env, seed=3, index=0, records_per_entity=4)
    planner = _Planner.start(env, state, random.Random(0))

    def grep_files(tree, value):
        return {h.split(":", 1)[0] for h in tree.grep(value)["data"]}

    path = sorted(planner.world.files)[0]
    words = planner.world.files[path].split()
    values = [words[0], words[-1].upper(), " ".join(words[:2]), "a\nb", "zzz-nothing"]
    for value in values:
        assert planner._grep_files(planner.world, value) == grep_files(planner.world, value)
    mark = planner._mark()
    assert planner._do("rm", {"path": path}, "mutation")
    for value in values:
        assert planner._grep_files(planner.world, value) == grep_files(planner.world, value)
        assert planner._grep_files(planner.initial, value) == grep_files(planner.initial, value)
    assert path not in planner._grep_files(planner.world, words[0])
    assert path in planner._grep_files(planner.initial, words[0])
    planner._rollback(mark)
    for value in values:
        assert planner._grep_files(planner.world, value) == grep_files(planner.world, value)


def test_a_spec_model_changes_only_its_own_copies(shop_env, shop_state):
    # Copy on write: what a model was made from, its checkpoints and its forks keep their
    # records while the model plays on (a transition, a create and its stock effect).
    start = copy.deepcopy(shop_state.state)
    world = SpecModel(model_of(shop_env), start)
    assert world.call("pay_order", {"order_id": "ORD-0001"})["success"]
    checkpoint = world.checkpoint()
    at_checkpoint = copy.deepcopy(checkpoint)
    fork = world.fork()
    order = {"customer_id": "CUS-0002", "product_id": "PRD-0001", "quantity": 3}
    created = world.call("create_order", order)["data"]["id"]
    assert fork.call("create_order", {**order, "quantity": 1})["success"]

    assert start == shop_state.state
    assert checkpoint == at_checkpoint
    assert world.state["orders"]["ORD-0001"]["status"] == "paid"
    assert (
        world.state["products"]["PRD-0001"]["stock"] == start["products"]["PRD-0001"]["stock"] - 3
    )
    assert fork.state["products"]["PRD-0001"]["stock"] == start["products"]["PRD-0001"]["stock"] - 1
    assert fork.state["orders"][created]["quantity"] == 1  # the same new id, its own record
    world.state = checkpoint  # restore: later calls still leave the checkpoint as it was
    assert world.call("create_order", order)["success"]
    assert checkpoint == at_checkpoint


def test_a_state_that_fails_a_check_fails_the_grade_whatever_the_reply():
    """`fails_on_state` says, without a reply, what `grade` says with the best reply: whether
    the final state alone already fails the episode."""
    checks = [
        {"type": "field_equals", "collection": "orders", "id": "ORD-0002", "field": "paid",
         "value": True},
        guard(touched=[["orders", "ORD-0002", "paid"]], paths=[["orders", "ORD-0002", "paid"]]),
        {"type": "reply_contains", "value": "ORD-0002"},
        {"type": "reply_excludes", "values": ["ORD-0001"]},
    ]  # fmt: skip
    best = "ORD-0002 is paid now"
    rng = random.Random(0)
    outcomes = set()
    for _ in range(200):
        final = copy.deepcopy(STATE)
        order = final["orders"][rng.choice(["ORD-0001", "ORD-0002"])]
        order[rng.choice(["paid", "qty", "note"])] = rng.choice([True, False, 2.5, "x"])
        failed = fails_on_state(checks, STATE, final)
        assert failed == (not grade(checks, STATE, final, best).success)
        assert not failed or not any(
            grade(checks, STATE, final, r).success for r in (best, "", "ORD-0001 ORD-0002")
        )
        outcomes.add(failed)
    assert outcomes == {True, False}
    assert fails_on_state(checks, STATE, None)
    assert not fails_on_state(checks[2:], STATE, None)  # reply checks only: the reply decides


def test_a_run_of_words_is_found_where_a_sliding_window_finds_it():
    from synthesis.tasks.envfoundry_reward import _has_run

    def window(haystack, needle):
        n = len(needle)
        return any(list(haystack[i : i + n]) == list(needle) for i in range(len(haystack) - n + 1))

    rng = random.Random(5)
    found = 0
    for _ in range(20000):
        haystack = [rng.choice("abc") for _ in range(rng.randrange(0, 9))]
        needle = [rng.choice("abc") for _ in range(rng.randrange(2, 5))]
        for h in (haystack, tuple(haystack)):
            assert _has_run(h, needle) == window(h, needle), (h, needle)
        found += window(haystack, needle)
    assert 0 < found < 20000  # both answers were tried
