"""The planner's task families on compiled archetype environments with seeded histories.

Long related chains, questions, conditionals and infeasible requests: their share and length
(the issue's figures), coherence, that reply values are the state's, that an infeasible
request is refused by the compiled code in the sandbox and changes nothing, and the tiers.
"""

from __future__ import annotations

import statistics
from collections import Counter

import pytest

from synthesis import codec
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.environments.topology import target_param
from synthesis.tasks.checks import derive_checks, evaluate_checks
from synthesis.tasks.difficulty import BANDS, structure_score, tier
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.phrasing import tool_verb, value_words
from synthesis.tasks.planner import UNDO_VERBS
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.tasks.planner_worlds import archetype_worlds, history_state

# A default-like profile: 8 records per collection, 12 candidates per state, the default
# chain cap; 6 topics spread over the archetypes.
TOPICS, RECORDS, PER_STATE, MAX_CHAIN = 6, 8, 12, 14


@pytest.fixture(scope="module")
def planned():
    out = []
    for env, state in archetype_worlds(TOPICS, RECORDS):
        for s in plan_scenarios(env, state, seed=0, count=PER_STATE, max_chain_length=MAX_CHAIN):
            out.append((env, s))
    return out


def _replay(env, s):
    world = SpecModel(model_of(env), s.initial_state)
    return world, [world.call(c.tool, c.args) for c in s.gold_chain]


def test_chain_lengths_and_family_shares_meet_the_issue_figures(planned):
    archetypes = {env.archetype for env, _ in planned}
    assert len(archetypes) >= 3
    lengths = [len(s.gold_chain) for _, s in planned]
    assert len(lengths) >= 100
    assert statistics.median(lengths) >= 5
    assert sum(n >= 8 for n in lengths) / len(lengths) >= 0.25
    assert max(lengths) >= 12
    families = Counter(s.provenance["family"] for _, s in planned)
    assert sum(s.kind == "infeasible" for _, s in planned) / len(planned) >= 0.10
    assert families["ask"] and families["conditional"] and families["chain"]
    # Reads go through several tools, not one finder: find, list by reference, get by id.
    ops = Counter(
        model_of(env).tool(c.tool).operation
        for env, s in planned
        for c, role in zip(s.gold_chain, s.provenance["roles"], strict=True)
        if role == "lookup"
    )
    assert ops["find"] and ops["list"] and ops["get"]
    firsts = Counter(s.gold_chain[0].tool for _, s in planned)
    assert len(firsts) >= 6  # chains do not all open with the customer finder


def test_goals_never_contradict_each_other(planned):
    for env, s in planned:
        model = model_of(env)
        created: set[str] = set()
        acted: Counter[str] = Counter()
        world = SpecModel(model, s.initial_state)
        for call, role in zip(s.gold_chain, s.provenance["roles"], strict=True):
            result = world.call(call.tool, call.args)
            if role != "mutation":
                continue
            tool = model.tool(call.tool)
            if tool.operation == "create":
                created.add(result["data"]["id"])
                continue
            rid = call.args[target_param(tool)]
            acted[rid] += 1
            # At most one goal per record; one more only on a record the task created, and
            # never one that undoes the creation ("book it, then cancel it").
            assert acted[rid] == 1, s.task_text
            if rid in created:
                assert tool_verb(tool.name) not in UNDO_VERBS, s.task_text
        # No goal can be left out with the same end state.
        from synthesis.tasks.families.chains import redundant

        assert not redundant(
            model, s.initial_state, s.gold_chain, s.provenance["roles"], world.state
        ), s.task_text


def test_question_answers_are_the_states_values_and_decoys_are_not(planned):
    asked = [(env, s) for env, s in planned if s.provenance["family"] == "ask"]
    # Fewer than one in twelve: a question a hedge over the field's values would answer is
    # dropped (synthesis.tasks.screens.hedge_earns).
    assert len(asked) >= 6
    for env, s in asked:
        world, results = _replay(env, s)
        seen = set()
        for r in results:
            data = r.get("data")
            for rec in data if isinstance(data, list) else [data]:
                if isinstance(rec, dict):
                    seen.update(value_words(v) for v in rec.values() if v is not None)
            if isinstance(data, list):
                seen.add(str(len(data)))  # a count is the length of a listing
        reply = s.expected_reply
        assert reply and reply["include"], s.task_text
        for value in reply["include"]:
            assert value in seen, (value, s.task_text)
        for decoy in reply["exclude"]:
            assert decoy not in reply["include"]
            assert decoy.casefold() not in s.task_text.casefold()
        # The asked values are those of the state the task leaves (no goal changed them).
        assert s.kind == "feasible"


def _otherwise_world():
    """Orders, whose five statuses leave a conditional's "otherwise" answer values the
    request does not name (with three, "if still pending, cancel it, otherwise tell me its
    status" names all but the answer, which a hedge then states: those are dropped)."""
    topic = next(t for t in load_catalogue() if t.topic_id == "art_supplies")
    env = build_environment(generate_spec(topic))
    return [
        (env, s)
        for i in range(2)
        for s in plan_scenarios(
            env, history_state(env, i, RECORDS), seed=0, count=24, max_chain_length=MAX_CHAIN
        )
    ]


def test_conditional_branch_follows_the_state(planned):
    conds = [
        (env, s)
        for env, s in [*planned, *_otherwise_world()]
        if s.provenance["family"] == "conditional"
    ]
    assert conds
    branches = Counter()
    for env, s in conds:
        model = model_of(env)
        goal_tool = model.tool(s.provenance["goal"][0])
        ent = model.entity(goal_tool.entity)
        tp = target_param(goal_tool)
        acted = [c for c in s.gold_chain if c.tool == goal_tool.name and tp in c.args]
        if s.expected_reply is not None and not acted:
            branches["otherwise"] += 1
            # The status reported is a record's status in the state, outside the condition.
            statuses = {
                value_words(r.get(ent.status_field))
                for r in s.initial_state[ent.collection].values()
            }
            pre = next(p for p in goal_tool.preconditions if p.kind == "status_in")
            (status,) = s.expected_reply["include"]
            assert status in statuses and status not in pre.values, s.task_text
            # Guarded against a hedge: some other status is one the reply may not state.
            checks = derive_checks(
                s.model_copy(update={"final_state": _replay(env, s)[0].state}), model=model
            )
            excluded = [c.spec["values"] for c in checks if c.spec["type"] == "reply_excludes"]
            assert excluded and any(v != status for vs in excluded for v in vs), s.task_text
        else:
            branches["then"] += 1
            rid = acted[0].args[tp]
            status = s.initial_state[ent.collection][rid][ent.status_field]
            pre = next(p for p in goal_tool.preconditions if p.kind == "status_in")
            assert status in pre.values
    assert branches["then"] and branches["otherwise"]


def test_reply_contract_becomes_reply_checks_that_grade_replies(planned):
    for env, s in planned:
        world, results = _replay(env, s)
        final = s.model_copy(update={"final_state": world.state})
        checks = derive_checks(final, model=model_of(env))
        types = {c.spec["type"]: c.spec for c in checks}
        if s.expected_reply is None:
            assert "reply_contains" not in types and "reply" not in s.provenance
            continue
        if s.kind == "infeasible":
            # A refusal is graded as one: declined, with any true reason, the state untouched.
            assert types["reply_refuses"]["role"] == "goal"
            assert s.expected_reply["rule"] and types["reply_refuses"]["reasons"]
            roles = s.provenance["roles"]
            if "mutation" not in roles:
                assert world.state == s.initial_state  # refused alone, nothing changed
            error = results[roles.index("refused")]["error"]
            # The refusal, and the answer to any question the task also asks.
            asked = ", ".join(s.expected_reply["include"][1:])
            quoted = f"I couldn't do that: {error}. " + (
                f"As for your question: {asked}." if asked else ""
            )
            assert all(evaluate_checks(checks, s.initial_state, world.state, reply=quoted))
            bare = "I'm sorry, I can't do that."
            assert not all(evaluate_checks(checks, s.initial_state, world.state, reply=bare))
            continue
        contains = [c.spec for c in checks if c.spec["type"] == "reply_contains"]
        assert all(c["role"] == "goal" for c in contains)
        assert [value_words(c["value"]) for c in contains] == s.expected_reply["include"]
        # The oracle and mutants read each value where the gold run showed it.
        for c in contains:
            if c["step"] is not None:
                at = results[c["step"]]
                for key in c["path"]:
                    at = at[key]
                assert at == c["value"], (c, s.task_text)
        oracle = "Done: " + ", ".join(s.expected_reply["include"]) + "."
        assert all(evaluate_checks(checks, s.initial_state, world.state, reply=oracle))
        # Doing nothing and saying nothing fails; so does naming a decoy instead.
        assert not all(evaluate_checks(checks, s.initial_state, s.initial_state, reply=""))
        if s.expected_reply["exclude"]:
            assert types["reply_excludes"]["role"] == "guard"
            wrong = oracle + " Also " + s.expected_reply["exclude"][0] + "."
            assert not all(evaluate_checks(checks, s.initial_state, world.state, reply=wrong))


def test_infeasible_requests_are_refused_by_the_compiled_code_in_the_sandbox(sandbox, planned):
    refused = [(env, s) for env, s in planned if s.kind == "infeasible"]
    by_env: dict[str, list] = {}
    for env, s in refused:
        by_env.setdefault(env.env_id, []).append((env, s))
    ran_any = 0
    for pairs in list(by_env.values())[:2]:
        env = pairs[0][0]
        ran = execute_gold(env, [s for _, s in pairs[:3]], model=model_of(env))
        for s in ran:
            assert s.status == "published", s.reason
            roles = s.provenance["roles"]
            at = roles.index("refused")
            refused = s.gold_results[at]
            assert refused["success"] is False and refused.get("error"), refused
            assert all(r["success"] for i, r in enumerate(s.gold_results) if i != at)
            if "mutation" not in roles:
                assert s.final_state == s.initial_state
            # The refused fact is in what the lookups before the attempt returned.
            fact = s.expected_reply["include"][0]
            assert fact in codec.dumps_str(s.gold_results[:at])
            ran_any += 1
    assert ran_any >= 2


def test_every_scenario_carries_a_structural_tier(planned):
    tiers = Counter()
    for _, s in planned:
        d = s.difficulty
        assert d["steps"] == len(s.gold_chain)
        assert d["tier"] == tier(
            d["steps"], d["hidden_lookups"], d["decoys"], d["conditionals"], d["infeasible"]
        )
        assert d["infeasible"] == (s.kind == "infeasible")
        tiers[d["tier"]] += 1
    assert len(tiers) == 4


def test_tier_is_a_pure_monotone_function_of_structure():
    assert tier(3, 0, 0, 0, False) == tier(3, 0, 0, 0, False) == "easy"
    assert tier(BANDS[0] + 1, 0, 0, 0, False) == "medium"
    assert tier(8, 2, 1, 1, True) == "expert"
    base = structure_score(5, 1, 1, 0, False)
    assert structure_score(6, 1, 1, 0, False) > base
    assert structure_score(5, 1, 1, 1, False) > base
    assert structure_score(5, 1, 1, 0, True) > base
    assert structure_score(5, 1, 9, 0, False) == structure_score(5, 1, 3, 0, False)
    order = ["easy", "medium", "hard", "expert"]
    ranks = [order.index(tier(n, 0, 0, 0, False)) for n in range(1, 20)]
    assert ranks == sorted(ranks)


def test_planning_the_families_is_deterministic():
    env, state = archetype_worlds(TOPICS, RECORDS)[0]
    a = plan_scenarios(env, state, seed=3, count=PER_STATE, max_chain_length=MAX_CHAIN)
    b = plan_scenarios(env, state, seed=3, count=PER_STATE, max_chain_length=MAX_CHAIN)
    dump = lambda ss: codec.dumps([s.model_dump(mode="json") for s in ss])  # noqa: E731
    assert dump(a) == dump(b)
    assert dump(a) != dump(
        plan_scenarios(env, state, seed=4, count=PER_STATE, max_chain_length=MAX_CHAIN)
    )


def test_profiles_allow_long_chains_and_full_replaces_large():
    from synthesis.config import PROFILES, get_profile

    assert "large" not in PROFILES
    full = get_profile("full")
    assert full.max_topics >= 200 and full.max_chain_length >= 12
    assert all(p.max_chain_length >= 12 for p in PROFILES.values())
