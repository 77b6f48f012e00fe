"""The offline simulated user (synthesis/tasks/envfoundry_user.py) and the records it plays
(synthesis/tasks/dialogue.py): the contract of issue 40.

* replaying the oracle against the user 10 times per task gives identical dialogues and
  reward 1 (in the engine's sandboxed rollouts, and with the shipped files alone);
* an agent that acts before asking gets the held details only when it asks;
* the user never ends the conversation before the agent's last message: a message that
  announces work to come is answered, not taken as the end;
* the user says only what its record holds: never a hidden id, "I don't know" to the rest.
"""

from __future__ import annotations

import json
import re

import pytest

from synthesis import codec
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.build import build_environment
from synthesis.environments.model import model_of
from synthesis.environments.specgen import generate_spec
from synthesis.environments.states import build_initial_state
from synthesis.environments.topics import load_catalogue, select_topics
from synthesis.rollouts.agents import OraclePolicy, oracle_question
from synthesis.rollouts.episodes import rollout
from synthesis.tasks import envfoundry_reward as efr
from synthesis.tasks import envfoundry_user as efu
from synthesis.tasks.assembly import mentions_an_id
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.dialogue import user_record
from synthesis.tasks.gold import execute_gold
from synthesis.tasks.scenarios import plan_scenarios

TOPICS = 3
PER_ENV = 12
REPLAYS = 10


def _plan_all() -> list[tuple]:
    topics = select_topics(load_catalogue(), supported_archetypes(), TOPICS)
    out = []
    for topic in topics:
        env = build_environment(generate_spec(topic))
        state = build_initial_state(env, seed=0, index=0, records_per_entity=6)
        for s in plan_scenarios(env, state, seed=0, count=PER_ENV, max_chain_length=6):
            out.append((env, s))
    return out


@pytest.fixture(scope="module")
def planned():
    return _plan_all()


@pytest.fixture(scope="module")
def multi(planned):
    out = [(env, s) for env, s in planned if s.user is not None]
    assert out, "no planned task is multi-turn"
    return out


@pytest.fixture(scope="module")
def held_back(multi):
    """Multi-turn tasks asked in one request with a detail held back."""
    out = [(env, s) for env, s in multi if s.user["details"] and not s.user.get("stages")]
    assert out, "no planned task holds a detail back"
    return out


@pytest.fixture(scope="module")
def staged(multi):
    """Multi-turn tasks asked one request at a time."""
    out = [(env, s) for env, s in multi if s.user.get("stages")]
    assert out, "no planned task is asked one request at a time"
    return out


def _text(user: efu.SimulatedUser, *agent: str) -> list[str | None]:
    """The user's answers to the agent's text turns, one after another."""
    messages: list[dict] = [{"role": "user", "content": user.opening}]
    answers = []
    for said in agent:
        messages.append({"role": "assistant", "content": said})
        answer = user.answer(messages)
        answers.append(answer)
        if answer is not None:
            messages.append({"role": "user", "content": answer})
    return answers


# -- the records ----------------------------------------------------------------------------


def test_the_opening_holds_back_a_value_the_agent_needs_and_keeps_every_other(multi):
    for _, s in multi:
        plan, record = s._plan, s.user
        held = [f for d in record["details"] for f in d["facts"]]
        later = [st["say"] for st in record.get("stages", ())]
        assert held or later
        assert all(efr.mentions(s.task_text, f) or f in s.task_text for f in held)
        opening = record["opening"]
        for fact in held:
            for said in (opening, *later):
                assert fact.casefold() not in said.casefold() and not efr.mentions(said, fact)
        for d in record["details"]:
            assert all(efr.mentions(d["say"], f) or f in d["say"] for f in d["facts"])
            assert d["question"].endswith("?") and d["about"]
        # Every other fact of the whole request is said by the opening or a later request.
        told = " ".join([opening, *later])
        kept = [f for f in plan.facts if f not in held and f.casefold() in s.task_text.casefold()]
        assert all(f.casefold() in told.casefold() or efr.mentions(told, f) for f in kept)
        assert not mentions_an_id(codec.dumps_str(record), plan.hidden_ids)
        # No marker or template field stands in for what is held back ("[detail 1]").
        assert not re.search(r"\[[A-Za-z ]+\d*\]|\{\w*\}", opening), opening


def test_records_are_deterministic_and_refusals_are_multi_turn_too(planned, multi):
    again = _plan_all()
    assert [codec.dumps_str(s.user) for _, s in planned] == [
        codec.dumps_str(s.user) for _, s in again
    ]
    assert [s.scenario_id for _, s in planned] == [s.scenario_id for _, s in again]
    # 36 tasks of 3 topics: a share near the full build's (36%, benchmarks/request_text.py)
    # swings by about 8 points, so the bounds only catch multi-turn tasks gone or taken over.
    share = len(multi) / len(planned)
    assert 0.15 <= share <= 0.6, share
    assert any(s.kind == "infeasible" for _, s in multi)


def test_a_task_with_nothing_to_hold_back_stays_single_turn(planned):
    for _, s in planned:
        goals = [g.then if g.kind == "refuse" and g.then else g for g in s._plan.goals]
        if not any(g.kind in ("update", "create") and g.values for g in goals):
            assert s.user is None
            assert user_record(s._plan, s.task_text, _persona(s), "generic") is None


def _persona(s):
    from synthesis.tasks.text.voices import PERSONAS

    return next(p for p in PERSONAS if p.name == s.provenance["persona"])


# -- the contract: the oracle, 10 times -----------------------------------------------------


def _oracle_replays(env, scenario):
    """The task as the gold run leaves it, and the oracle's episode against its user played
    REPLAYS times: one dialogue, reward 1 each time."""
    (scenario,) = execute_gold(env, [scenario])
    model = model_of(env)
    checks = derive_checks(scenario, model=model)
    runs = [
        rollout(env, scenario, checks, OraclePolicy(scenario, model), model=model)
        for _ in range(REPLAYS)
    ]
    assert len({codec.dumps_str(t.messages) for t in runs}) == 1
    assert all(t.reward == 1.0 and t.success for t in runs)
    return scenario, runs


def test_the_oracle_replayed_ten_times_gives_one_dialogue_and_reward_one(sandbox, held_back):
    for env, scenario in held_back[:3]:
        scenario, runs = _oracle_replays(env, scenario)
        messages = runs[0].messages
        assert messages[1] == {"role": "user", "content": scenario.user["opening"]}
        assert messages[2] == {"role": "assistant", "content": oracle_question(scenario)}
        said = messages[3]["content"]
        assert all(d["say"] in said for d in scenario.user["details"])
        # The user's last word comes before the first call: it never speaks after the agent
        # started working, and the conversation ends with the agent's reply.
        assert [m["role"] for m in messages[:4]] == ["system", "user", "assistant", "user"]
        assert all(m["role"] != "user" for m in messages[4:])
        assert messages[-1]["role"] == "assistant" and messages[-1]["content"]
        assert runs[0].metadata["turns"] == 2 and runs[0].metadata["user_sim"] == "offline"


@pytest.mark.parametrize("which", ["held_back", "staged"])
def test_the_shipped_user_replays_the_recorded_dialogue_byte_for_byte(sandbox, which, request):
    """What a trainer does with the shipped simulator: the same record and the same agent
    turns give the recorded user messages, ten times over (the clean-virtualenv trainer test,
    tests/synthesis/export/test_trainers.py, scores such a replay with the shipped files)."""
    env, scenario = request.getfixturevalue(which)[0]
    (scenario,) = execute_gold(env, [scenario])
    model = model_of(env)
    checks = derive_checks(scenario, model=model)
    recorded = rollout(env, scenario, checks, OraclePolicy(scenario, model), model=model)
    task = {
        "environment": {"path": None, "class_name": env.class_name, "compiled_by_us": True},
        "initial_state": scenario.initial_state,
        "checks": [{"check_id": c.check_id, "spec": c.spec} for c in checks],
        "user": json.loads(codec.dumps_str(scenario.user)),
    }
    for _ in range(REPLAYS):
        user = efu.for_task(task)
        messages = [recorded.messages[0], {"role": "user", "content": user.opening}]
        for message in recorded.messages[2:]:
            if message["role"] == "user":
                assert user.answer(messages) == message["content"]
            messages.append(message)
        assert user.answer(messages) is None  # the reply ends it
        assert messages == recorded.messages


# -- the contract: asking, acting, ending ---------------------------------------------------


def test_an_agent_that_acts_before_asking_gets_the_details_only_when_it_asks(held_back):
    for _, s in held_back:
        held = [f for d in s.user["details"] for f in d["facts"]]
        acting = efu.SimulatedUser(s.user)
        messages = [
            {"role": "user", "content": acting.opening},
            {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function"}]},
            {"role": "tool", "tool_call_id": "c0", "content": "{}"},
            {"role": "assistant", "content": "I have updated the record as you asked."},
        ]
        assert acting.answer(messages) is None and acting.given == set()
        asking = efu.SimulatedUser(s.user)
        messages[-1] = {"role": "assistant", "content": oracle_question(s)}
        answer = asking.answer(messages)
        assert answer is not None and all(f.casefold() in answer.casefold() for f in held)
        assert not asking.pending


def test_each_detail_is_given_when_its_field_is_asked_for_in_other_words(held_back):
    for _, s in held_back:
        for detail in s.user["details"]:
            word = detail["about"][-2] if len(detail["about"]) > 1 else detail["about"][0]
            (answer,) = _text(efu.SimulatedUser(s.user), f"Which {word} would you like?")
            assert answer == detail["say"] or detail["say"] in answer


def test_the_user_never_ends_before_the_agent_has_done_its_work(held_back):
    s = held_back[0][1]
    user = efu.SimulatedUser(s.user)
    messages = [
        {"role": "user", "content": user.opening},
        {"role": "assistant", "content": "Thanks. I'll look the record up and make the change."},
    ]
    go = user.answer(messages)
    assert go == s.user["replies"]["go_ahead"]
    messages += [
        {"role": "user", "content": go},
        {"role": "assistant", "tool_calls": [{"id": "c0", "type": "function"}]},
        {"role": "tool", "tool_call_id": "c0", "content": "{}"},
        {"role": "assistant", "content": "Found it. Let me make the change now."},
    ]
    # It acted since the go-ahead: announcing the next step is still work, not the end.
    assert user.answer(messages) == s.user["replies"]["go_ahead"]
    messages += [
        {"role": "user", "content": s.user["replies"]["go_ahead"]},
        {"role": "assistant", "content": "I will do it in a moment."},
    ]
    # Told to go ahead, announcing again without a call: stalling, the user has said it all.
    assert user.answer(messages) is None
    assert user.answer(messages) is None  # and it stays over


def test_the_user_knows_only_its_record(held_back):
    for _, s in held_back:
        user = efu.SimulatedUser(s.user)
        (unknown, more, done) = _text(
            user,
            "What is the internal record id of it?",
            "Could you give me the rest of the details?",
            "All done. Anything else?",
        )
        assert unknown == s.user["replies"]["unknown"]
        assert more is not None and not user.pending
        assert done is None
        for said in (unknown, more):
            assert not mentions_an_id(said, s._plan.hidden_ids)


def test_a_reply_that_quotes_a_question_or_a_promise_still_ends_the_conversation(held_back):
    s = held_back[0][1]
    about = s.user["details"][0]["about"][0]
    for quoted in (f'"Please confirm the {about}?"', "\u201cI will look into it\u201d"):
        user = efu.SimulatedUser(s.user)
        (answer,) = _text(user, f"Done: I added the note {quoted} to the record.")
        assert answer is None and not user.given


def test_a_question_about_a_value_the_opening_gave_is_answered_again(held_back):
    with_known = [s for _, s in held_back if s.user["known"]]
    assert with_known
    for s in with_known:
        known = s.user["known"][0]
        (answer,) = _text(efu.SimulatedUser(s.user), f"Sorry, what was the {known['about'][0]}?")
        assert known["say"] in answer


def test_a_record_of_another_version_or_without_an_opening_is_refused():
    with pytest.raises(ValueError, match="version"):
        efu.SimulatedUser({"version": efu.USER_SIM_VERSION + 1, "opening": "hi"})
    with pytest.raises(ValueError, match="opening"):
        efu.SimulatedUser({"details": []})
    assert efu.for_task({"task_text": "hi"}) is None


def test_the_user_is_bounded():
    user = efu.SimulatedUser({"opening": "hi", "details": []})
    messages = [{"role": "user", "content": "hi"}]
    answers = []
    for _ in range(efu.MAX_ANSWERS + 3):
        messages.append({"role": "assistant", "content": "What is the id?"})
        answers.append(user.answer(messages))
    assert answers[: efu.MAX_ANSWERS] == [user.unknown] * efu.MAX_ANSWERS
    assert answers[efu.MAX_ANSWERS :] == [None, None, None]


# -- one request at a time ------------------------------------------------------------------


def test_the_user_asks_for_the_next_request_after_each_reply(staged):
    for _, s in staged:
        stages = [st["say"] for st in s.user["stages"]]
        user = efu.SimulatedUser(s.user)
        # Its details first, if it holds any; then each reply gets the next request.
        replies = [oracle_question(s)] if s.user["details"] else []
        replies += ["That's done."] * len(stages) + ["All done."]
        answers = _text(user, *replies)
        assert answers[len(answers) - len(stages) - 1 : -1] == stages
        assert answers[-1] is None
        # "Anything else?" with nothing held back is a reply too.
        if not s.user["details"]:
            assert _text(efu.SimulatedUser(s.user), "Done. Anything else?") == [stages[0]]


def test_the_oracle_makes_no_call_for_a_request_it_was_not_yet_asked(sandbox, staged):
    for env, scenario in staged[:3]:
        scenario, runs = _oracle_replays(env, scenario)
        messages = runs[0].messages
        stages = [st["say"] for st in scenario.user["stages"]]
        # The calls made before each later request are exactly those of the earlier ones.
        calls = 0
        before = []
        for m in messages:
            calls += len(m.get("tool_calls") or ())
            if m["role"] == "user" and m["content"] in stages:
                before.append(calls)
        assert before == scenario.provenance["stage_steps"]
        assert calls == len(scenario.gold_chain)
        assert messages[-1]["role"] == "assistant" and messages[-1]["content"]
        assert runs[0].metadata["stages"] == runs[0].metadata["staged"] == 1 + len(stages)


def test_a_later_request_is_worded_as_one_not_as_the_start_of_a_conversation(staged):
    starts = re.compile(
        r"(?i)\b(?:hi|hello|hey|good (?:morning|afternoon)|first|start by|here goes)\b"
    )
    for _, s in staged:
        for stage in s.user["stages"]:
            assert not starts.search(stage["say"]), stage["say"]
            # The turn is said once: not "Now now, the order ..." ("Now" + "now, ...").
            twice = r"(?i)\b(now|next|also|then|and)\W+\1\b"
            assert not re.search(twice, stage["say"]), stage["say"]
            # A reason was the first request's to give.
            # ("as" only where it joins a clause: "haircut and beard as the service" is none.)
            reason = r"(?i)\b(?:since|because) (?:it|the|we)\b|(?:^|[,;:—] )as (?:it|the|we)\b"
            assert not re.search(reason, stage["say"]), stage
