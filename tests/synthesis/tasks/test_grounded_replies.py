"""Grounded replies: a value a reply states earns only where a call of the episode showed it.

A lucky guess with no call ("it is pending") is right as often as the value is common, and
no guard can see one value as a hedge; grounding closes it. The rule lives in the shipped
module (`Seen`, `block_shown`): the engine's episodes, the self-test, `score` (which reads
the calls `step` recorded), the verifiers taskset and the MCP server all hold a reply to it.
"""

from __future__ import annotations

import json

import pytest

from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks.envfoundry_reward import Seen, evaluate_check, grade_episode, observation
from synthesis.tasks.shortcuts import SHORTCUTS, ShortcutContext, guess_replies
from tests.build_support import query

STATE = {"orders": {"ORD-1": {"id": "ORD-1", "status": "shipped", "total": 1200.0}}}
LOOKUP = observation(
    "get_order", {"order_id": "ORD-1"}, {"success": True, "data": STATE["orders"]["ORD-1"]}
)
ASKED = {"type": "reply_contains", "role": "goal", "what": "the status", "value": "shipped"}


@pytest.mark.parametrize(
    ("calls", "value", "shown"),
    [
        ([LOOKUP], "shipped", True),
        ([LOOKUP], 1200, True),  # 1200.0 in the result is the same number
        ([LOOKUP], "1,200.00", True),
        ([LOOKUP], "pending", False),
        ([], "shipped", False),
        # A date is shown inside a date-time, a list when each item is.
        ([observation("t", {}, {"at": "2026-03-04T10:00:00"})], "2026-03-04", True),
        ([observation("t", {}, {"data": ["a b", "c"]})], ["c", "a b"], True),
        ([observation("t", {}, {"data": ["a b"]})], ["c", "a b"], False),
        # An error that echoes what the agent sent shows it nothing new.
        (
            [observation("get_order", {"order_id": "pending"}, {"error": "no order pending"})],
            "pending",
            False,
        ),
        (
            [observation("pending", {}, {"success": False, "error": "unknown tool: pending"})],
            "pending",
            False,
        ),
        # The same word in another call's result is shown.
        (
            [
                observation("get_order", {"order_id": "pending"}, {"error": "no order pending"}),
                observation("list", {}, {"data": [{"status": "pending"}]}),
            ],
            "pending",
            True,
        ),
        # A bare result (its call unknown) shows what it holds.
        ([{"status": "shipped"}], "shipped", True),
    ],
)
def test_a_value_is_shown_when_a_result_states_it_and_its_call_did_not(calls, value, shown):
    assert Seen(calls).states(value) is shown


OTHER = observation(
    "list_orders",
    {"customer": "C-2"},
    {"success": True, "data": [{"id": "ORD-2", "status": "shipped"}]},
)


@pytest.mark.parametrize(
    ("calls", "shown"),
    [
        ([LOOKUP], True),
        # The same value on another record grounds no answer about this one.
        ([OTHER], False),
        ([observation("list", {}, {"data": {"ORD-1": {"status": "shipped"}}})], True),
        # A write that echoes the value it was sent shows nothing it was not told.
        (
            [
                observation(
                    "set_status",
                    {"order_id": "ORD-1", "status": "shipped"},
                    {"success": True, "data": {"id": "ORD-1", "status": "shipped"}},
                )
            ],
            False,
        ),
        ([observation("get", {}, {"data": {"id": "ORD-1", "total": 1200.0}})], False),
    ],
)
def test_a_records_field_is_shown_only_beside_that_records_id(calls, shown):
    assert Seen(calls).shows_field("ORD-1", "status", "shipped") is shown
    spec = {**ASKED, "record": {"id": "ORD-1", "field": "status"}}
    assert evaluate_check(spec, STATE, STATE, "It has shipped.", shown=calls) is shown


def test_the_asked_value_earns_only_where_a_call_showed_it():
    reply = "Order ORD-1 has shipped."
    assert not evaluate_check(ASKED, STATE, STATE, reply, shown=[])
    assert evaluate_check(ASKED, STATE, STATE, reply, shown=[LOOKUP])
    # Checks graded with no episode behind them (a plan's predicted states) read no calls.
    assert evaluate_check(ASKED, STATE, STATE, reply, shown=None)
    assert grade_episode([ASKED], STATE, STATE, reply, shown=[]).reward == 0.0
    assert grade_episode([ASKED], STATE, STATE, reply, shown=[LOOKUP]).reward == 1.0


def _refusal(**reason):
    base = {
        "rule": "status_in:",
        "facts": ["shipped"],
        "texts": ["only a pending order can be cancelled"],
        "told": False,
        "shows": [{"id": "ORD-1", "field": "status", "value": "shipped"}],
    }
    return {"type": "reply_refuses", "role": "goal", "reasons": [{**base, **reason}]}


ERROR = observation(
    "cancel_order",
    {"order_id": "ORD-1"},
    {"success": False, "error": "only a pending order can be cancelled"},
)


@pytest.mark.parametrize(
    ("spec", "calls", "reply", "earns"),
    [
        # By its fact: the status must have been seen.
        (_refusal(), [], "Sorry, I can't cancel it: it has shipped.", False),
        (_refusal(), [LOOKUP], "Sorry, I can't cancel it: it has shipped.", True),
        # Another order's status shows nothing of this one's block.
        (_refusal(), [OTHER], "Sorry, I can't cancel it: it has shipped.", False),
        (_refusal(), [OTHER], "Sorry, I can't: only a pending order can be cancelled.", False),
        # The tool's error shows the block; the rule then earns in words, while the state's
        # fact, never shown, is a guess.
        (_refusal(), [ERROR], "Sorry, I can't: only a pending order can be cancelled.", True),
        (_refusal(), [ERROR], "Sorry, I can't cancel it: it has shipped.", False),
        (_refusal(), [], "Sorry, I can't: only a pending order can be cancelled.", False),
        # A rule the request alone breaks (6 units over a cap of 5) needs no call.
        (
            _refusal(rule="param_at_most:quantity", facts=[5], told=True, shows=[]),
            [],
            "Sorry, I can't: orders are capped at 5 units.",
            True,
        ),
        # A rule's own figure is a reason only said with the rule it caps: not bare, not
        # inside a name, not in a list of numbers.
        (
            _refusal(rule="param_at_most:quantity", facts=[5], told=True, shows=[]),
            [],
            "Sorry, I can't do that: it is Marathon Pro 5.",
            False,
        ),
        (
            _refusal(rule="param_at_most:quantity", facts=[5], told=True, shows=[]),
            [],
            "Sorry, I can't: 1 2 3 4 5 6 7 8 9 10.",
            False,
        ),
        (
            _refusal(rule="param_at_most:quantity", facts=[5], told=True, shows=[]),
            [],
            "Sorry, that is over the limit of 5.",
            True,
        ),
        # A rule's own figure needs the block shown, not the figure.
        (
            _refusal(rule="count_below:member", facts=[3], shows=[]),
            [
                observation(
                    "borrow", {"member": "M-1"}, {"success": False, "error": "loan limit reached"}
                )
            ],
            "Sorry, I can't: a member may hold 3 loans at most.",
            False,
        ),
        (
            _refusal(rule="count_below:member", facts=[3], shows=[], texts=["loan limit reached"]),
            [
                observation(
                    "borrow", {"member": "M-1"}, {"success": False, "error": "loan limit reached"}
                )
            ],
            "Sorry, I can't: a member may hold 3 loans at most.",
            True,
        ),
    ],
)
def test_a_refusal_earns_only_for_a_block_the_episode_showed(spec, calls, reply, earns):
    assert evaluate_check(spec, STATE, STATE, reply, shown=calls) is earns


BOOKED = {"slots": {"S-1": {"id": "S-1", "status": "booked", "day": "Wednesday"}}}
SLOT = observation(
    "get_slot", {"slot_id": "S-1"}, {"success": True, "data": BOOKED["slots"]["S-1"]}
)
REQUEST = "Please take the slot booked for Wednesday for my dog's check-up."


def _booked_refusal() -> dict:
    """The refusal of a request that states its blocking fact by chance, derived as the
    engine derives it (checks.reply_checks): the fact is kept, grounded on its record."""
    from synthesis.tasks.checks import reply_checks

    refusal = {
        "reasons": [
            {
                "rule": "status_in:",
                "facts": ["booked"],
                "texts": ["only an open slot can be taken"],
                "shows": [{"id": "S-1", "field": "status", "value": "booked"}],
            }
        ]
    }
    specs = reply_checks({"include": ["booked"], "refusal": refusal}, task_text=REQUEST)
    return next(s for s in specs if s["type"] == "reply_refuses")


@pytest.mark.parametrize(
    ("calls", "reply", "earns"),
    [
        # The right refusal, in its own words, after the slot was looked up.
        ([SLOT], "Sorry, I can't take that slot: it is already booked.", True),
        ([SLOT], "I can't: the slot booked for Wednesday is already booked by someone.", True),
        # Said back inside the request's words, the fact shows nothing learnt.
        ([SLOT], f"Sorry, I can't do that: {REQUEST}", False),
        ([SLOT], f"{REQUEST} I'm sorry, but I can't do that.", False),
        ([SLOT], "Sorry, I can't take the slot booked for Wednesday.", False),
        # Never looked up, the fact is a guess however it is said.
        ([], "Sorry, I can't take that slot: it is already booked.", False),
    ],
)
def test_a_fact_the_request_states_earns_only_in_the_replys_own_words(calls, reply, earns):
    spec = _booked_refusal()
    assert spec["reasons"][0]["facts"] == ["booked"]
    assert evaluate_check(spec, BOOKED, BOOKED, reply, shown=calls) is earns


def test_the_echo_shortcut_earns_nothing_where_the_request_states_the_fact():
    echo = next(s for s in SHORTCUTS if s.name == "echo")
    assert echo.looks_first and echo.answered_only
    replies = echo.reply(ShortcutContext("", REQUEST, [], BOOKED))
    spec = _booked_refusal()
    assert all(REQUEST in r for r in replies)
    assert not any(evaluate_check(spec, BOOKED, BOOKED, r, shown=[SLOT]) for r in replies)


def test_a_rule_figure_the_request_states_is_no_reason():
    from synthesis.tasks.checks import reply_checks

    refusal = {
        "reasons": [
            {"rule": "param_at_most:quantity", "facts": [5], "texts": ["cap"], "told": True}
        ]
    }
    specs = reply_checks({"include": [5], "refusal": refusal}, task_text="Order 5 more, then 6.")
    assert next(s for s in specs if s["type"] == "reply_refuses")["reasons"][0]["facts"] == []


@pytest.mark.parametrize(
    ("reply", "said"),
    [
        ("it is booked", True),
        ("the slot booked for Wednesday", False),
        # A word inside a copied run is the request's wherever the run sits.
        ("all booked for Wednesday up", False),
        ("booked for Wednesday, and yes, booked", True),
    ],
)
def test_said_beyond_echo_reads_runs_of_three_copied_words_as_the_requests(reply, said):
    assert efr.said_beyond_echo(reply, "booked", REQUEST) is said


def test_the_guess_shortcut_states_one_value_at_a_time():
    context = ShortcutContext("", "", [], {"o": {"1": {"status": "a"}, "2": {"status": "b"}}})
    assert guess_replies(context) == [
        "It is a.",
        "Sorry, I can't do that: it is a.",
        "It is b.",
        "Sorry, I can't do that: it is b.",
    ]
    guess = next(s for s in SHORTCUTS if s.name == "guess")
    assert guess.answered_only and not guess.plays_gold and not guess.looks_first


@pytest.mark.slow
def test_the_shipped_score_reads_the_calls_step_recorded(tiny_home):
    """Through the shipped module, as a trainer plays: the gold answer with no call earns
    nothing on any published task whose reply is graded, unless the request alone tells the
    block; after the gold calls the same answer earns 1, and `score_state` with the calls
    `step` recorded scores as `score` does."""
    home, _ = tiny_home
    shards = home / "shards"
    gold = {
        sid: json.loads(chain)
        for sid, chain in query(
            home, "SELECT scenario_id, gold_chain_json FROM scenarios WHERE status = 'published'"
        )
    }
    answers = {}
    for split in ("train", "test"):
        path = shards / f"sft/{split}.jsonl"
        for row in map(json.loads, path.read_text().splitlines() if path.is_file() else []):
            said = [
                m["content"]
                for m in row["messages"]
                if m["role"] == "assistant" and m.get("content")
            ]
            answers[row["scenario_id"]] = said[-1]
    graded = 0
    for split in ("train", "test"):
        path = shards / f"rl/{split}.jsonl"
        for task in map(json.loads, path.read_text().splitlines() if path.is_file() else []):
            specs = [c["spec"] for c in task["checks"]]
            if not any(s["type"] in ("reply_contains", "reply_refuses") for s in specs):
                continue
            told = any(r.get("told") for s in specs for r in s.get("reasons") or ())
            reply = answers[task["scenario_id"]]
            idle = efr.load_env(task, trust=True, root=str(shards))
            assert efr.score(task, idle, reply)["reward"] == 0.0 or told, task["scenario_id"]
            env = efr.load_env(task, trust=True, root=str(shards))
            for call in gold[task["scenario_id"]]:
                efr.step(env, call["tool"], call["args"])
            assert len(env.shown) == len(gold[task["scenario_id"]])
            assert efr.score(task, env, reply) == {"reward": 1.0, "success": True}
            apart = efr.score_state(task, env.initial_state, efr.state(env), reply, shown=env.shown)
            assert apart == efr.score(task, env, reply)
            # Without the calls, score_state grades the reply as made with none.
            alone = efr.score_state(task, env.initial_state, efr.state(env), reply)
            assert alone["reward"] < 1.0 or told
            graded += 1
    assert graded >= 2, graded  # the tiny build has a few reply-graded tasks
