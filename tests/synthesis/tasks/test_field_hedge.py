"""The field hedge: "it is A, or B, or C" over one field's values, plain or inside a refusal.

It is the shortcut a reply-graded task is most open to: short enough for the conciseness
guard, and right whatever the field's value is unless a guard excludes another of them. The
planner drops the tasks it would earn on (synthesis.tasks.screens.hedge_earns), and a rule
line quoted word for word is read apart from a hedge (the `quoted` texts of
`reply_excludes`).
"""

from __future__ import annotations

import pytest

from synthesis.environments.model import model_of
from synthesis.tasks import scenarios
from synthesis.tasks.checks import derive_checks, grade
from synthesis.tasks.envfoundry_reward import evaluate_check
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.screens import hedge_earns
from synthesis.tasks.shortcuts import (
    SHORTCUTS,
    ShortcutContext,
    field_hedge_replies,
    field_values,
    shortcut_reward,
)
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.tasks.planner_worlds import archetype_worlds

STATE = {
    "orders": {
        "ORD-1": {"id": "ORD-1", "status": "pending", "note": "x" * 40},
        "ORD-2": {"id": "ORD-2", "status": "shipped", "note": "y" * 40},
    },
    "customers": {
        "CUS-1": {"id": "CUS-1", "tier": "gold"},
        "CUS-2": {"id": "CUS-2", "tier": "gold"},
    },
}
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "list_orders",
            "parameters": {"properties": {"status": {"enum": ["pending", "paid", "shipped"]}}},
        },
    }
]


def test_a_field_hedge_is_one_reply_per_field_plain_and_inside_a_refusal():
    context = ShortcutContext("", "", TOOLS, STATE)
    # The tool's enum, and the state's status field; not a field with one value (tier), an
    # id, or free text (notes longer than a value).
    assert field_values(context) == [["pending", "paid", "shipped"], ["pending", "shipped"]]
    assert field_hedge_replies(context) == [
        "It is pending, or paid, or shipped.",
        "Sorry, I can't do that: it is pending, or paid, or shipped.",
        "It is pending, or shipped.",
        "Sorry, I can't do that: it is pending, or shipped.",
    ]


def test_a_shortcut_earns_its_best_reply_and_nothing_with_nothing_to_say():
    hedge = next(s for s in SHORTCUTS if s.name == "field_hedge")
    paid = {"It is pending, or shipped.": 0.5}
    context = ShortcutContext("", "", TOOLS, STATE)
    assert shortcut_reward(hedge, context, lambda reply: paid.get(reply, 0.0)) == 0.5
    bare = ShortcutContext("", "", [], {"orders": {}})
    assert shortcut_reward(hedge, bare, lambda reply: 1.0) == 0.0


def _answered(planned):
    return [(env, s) for env, s in planned if (s.provenance or {}).get("reply")]


def _plan_all():
    return [
        (env, s)
        for env, state in archetype_worlds(6, 8)
        for s in plan_scenarios(env, state, seed=0, count=12, max_chain_length=14)
    ]


def _tools(env):
    return [info.schema_ for info in env.tools]


def test_the_planner_drops_every_task_a_field_hedge_would_earn_on(monkeypatch):
    with monkeypatch.context() as m:
        m.setattr(scenarios, "hedge_earns", lambda *_, **__: None)
        unscreened = _answered(_plan_all())
    open_to_it = []
    for env, s in unscreened:
        model = model_of(env)
        reply = hedge_earns(s, model, _tools(env))
        if reply is None:
            continue
        open_to_it.append(s.scenario_id)
        # What the screen saw is what a trainer gets: after the lookups (every value shown),
        # the hedge earns reward through a reply goal, every guard passing.
        world = SpecModel(model, s.initial_state)
        results = [world.call(c.tool, c.args) for c in s.gold_chain]
        played = s.model_copy(update={"final_state": world.state, "gold_results": results})
        earned = grade(derive_checks(played, model=model), s.start_state, s.start_state, reply)
        assert earned.reward > 0 and not earned.guard_failed, (s.task_text, reply)
    # Unscreened, the planner makes such tasks (a conditional whose request names every
    # other status, a refusal whose rule names them): the screen has work to do.
    assert len(open_to_it) >= 3, len(open_to_it)
    screened = _answered(_plan_all())
    assert screened
    assert not {s.scenario_id for _, s in screened} & set(open_to_it)
    for env, s in screened:
        assert hedge_earns(s, model_of(env), _tools(env)) is None, s.task_text


LINE = (
    "Orders move pending -> paid -> shipped -> delivered; pending or paid orders can be cancelled."
)
GUARD = {"type": "reply_excludes", "values": ["delivered"], "quoted": [LINE]}


@pytest.mark.parametrize(
    ("reply", "passes"),
    [
        # The refused order has shipped: the rule line quoted word for word names every
        # status, and states none of them as the order's.
        (f"I can't cancel it: it has shipped. {LINE}", True),
        (f"Sorry, I can't. The rule: {LINE.lower().rstrip('.')}", True),
        # Outside a quotation a value the guard excludes is a hedge, quoted line or not.
        ("Sorry, I can't do that: it is pending, or paid, or shipped, or delivered.", False),
        (f"{LINE} It is shipped or delivered.", False),
        # A paraphrase of the line is no quotation.
        ("Orders go from pending to paid to shipped to delivered, so I can't.", False),
    ],
)
def test_a_rule_line_quoted_word_for_word_is_read_apart_from_a_hedge(reply, passes):
    assert evaluate_check(GUARD, {}, {}, reply) is passes
