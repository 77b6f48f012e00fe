"""Booking, ticketing, scheduling, approvals and messaging: every topic compiles to valid
tools, plans proven tasks, new guards refuse what they must (compiled code and SpecModel
agree), and topics of one archetype differ in program shape.

Compiled code is run in-process with `exec` where only our own compiler's output is involved
(as in test_vocabulary_text); the end-to-end runs go through the sandbox like the pipeline.
"""

from __future__ import annotations

import ast
import copy
import random

import pytest

from synthesis.environments.archetypes import PLANNED_ARCHETYPES, supported_archetypes
from synthesis.environments.archetypes.approvals import FEATURES as APPROVAL_FEATURES
from synthesis.environments.archetypes.booking import FEATURES as BOOKING_FEATURES
from synthesis.environments.archetypes.messaging import FEATURES as MESSAGING_FEATURES
from synthesis.environments.archetypes.scheduling import FEATURES as SCHEDULING_FEATURES
from synthesis.environments.archetypes.ticketing import FEATURES as TICKETING_FEATURES
from synthesis.environments.build import build_environment
from synthesis.environments.compiler import compile_spec
from synthesis.environments.model import model_of
from synthesis.environments.shape import program_shape as build_shape
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.environments.splits import held_out_shapes
from synthesis.environments.states import base_state, replay_history
from synthesis.environments.topics import load_catalogue
from synthesis.hashing import short_id
from synthesis.models import InitialState, Topic
from synthesis.tasks.checks import derive_checks
from synthesis.tasks.scenarios import plan_scenarios
from synthesis.tasks.spec_model import SpecModel
from tests.synthesis.gold_in_model import assert_gold_earns_one_and_noop_zero, proven_enough
from tests.synthesis.tool_schemas import assert_valid_tools

WORKFLOW = ("booking", "ticketing", "scheduling", "approvals", "messaging")
FEATURES = {
    "booking": BOOKING_FEATURES,
    "ticketing": TICKETING_FEATURES,
    "scheduling": SCHEDULING_FEATURES,
    "approvals": APPROVAL_FEATURES,
    "messaging": MESSAGING_FEATURES,
}
TOPICS = [t for t in load_catalogue() if t.archetype in WORKFLOW]


def _topic(topic_id: str, **vocabulary) -> Topic:
    topic = next(t for t in TOPICS if t.topic_id == topic_id)
    return topic.model_copy(update={"vocabulary": {**topic.vocabulary, **vocabulary}})


def _load(spec):
    namespace: dict = {}
    exec(compile(compile_spec(spec), f"<{spec.env_id}>", "exec"), namespace)  # noqa: S102
    return namespace[spec.class_name]()


def _initial(env, seed: int = 0) -> InitialState:
    """An initial state as build_initial_state makes it, with the history replayed in the
    model instead of the sandbox (the model predicts the compiled code exactly)."""
    spec, rng = env.spec, random.Random(seed)
    model = SpecModel(model_of(env), base_state(spec, seed, 5))
    replay_history(
        spec,
        model.state,
        rng,
        3,
        lambda calls: [model.call(tool, args) for tool, args in calls],
        lambda: model.state,
    )
    return InitialState(
        state_id=short_id(env.env_id, "history", seed),
        env_id=env.env_id,
        seed=seed,
        state=model.state,
    )


# --------------------------------------------------------------------------- catalogue


def test_the_workflow_archetypes_are_built_with_twelve_topics_each():
    assert set(WORKFLOW) <= supported_archetypes()
    assert not set(WORKFLOW) & PLANNED_ARCHETYPES
    for archetype in WORKFLOW:
        topics = [t for t in TOPICS if t.archetype == archetype]
        assert len(topics) >= 12, archetype
        nouns = {tuple(sorted(str(v) for v in t.vocabulary.values())) for t in topics}
        assert len(nouns) == len(topics)  # each topic its own vocabulary


@pytest.mark.parametrize("topic", TOPICS, ids=lambda t: t.topic_id)
def test_every_topic_compiles_to_valid_tools_and_plans_tasks_proven_in_the_model(topic):
    spec = generate_spec(topic)
    env = build_environment(spec)
    assert env.status == "accepted", env.reason
    assert_valid_tools(spec, env)
    assert any(t.operation == "get" for t in spec.tools)
    assert any(t.operation == "list" and any(p.ref for p in t.params) for t in spec.tools)
    initial = _initial(env)
    scenarios = plan_scenarios(env, initial, seed=0, count=4, max_chain_length=6)
    assert scenarios, topic.topic_id
    for s in scenarios:
        assert_gold_earns_one_and_noop_zero(s, model_of(env))


# --------------------------------------------------------------------------- end to end


@pytest.mark.parametrize(
    ("topic_id", "features"),
    [
        ("it_helpdesk", "all"),
        ("municipal_311", "none"),
        ("office_meeting_rooms", "all"),
        ("expense_approvals", "all"),
        ("team_chat", "all"),
        ("gaming_guild", None),
        ("hair_salon", "all"),
    ],
)
def test_sandboxed_states_gold_runs_and_selftests_prove_the_checks(topic_id, features):
    from quality.selftest import selftest_scenarios
    from synthesis.environments.states import build_initial_state
    from synthesis.tasks.gold import execute_gold

    topic = TOPICS[[t.topic_id for t in TOPICS].index(topic_id)]
    if features is not None:
        chosen = list(FEATURES[topic.archetype]) if features == "all" else []
        topic = _topic(topic_id, features=chosen)
    env = build_environment(generate_spec(topic))
    assert env.status == "accepted", env.reason
    initial = build_initial_state(env, seed=1, index=0, records_per_entity=5)
    created = {t.entity for t in env.spec.tools if t.operation == "create"}
    made = [e for e in env.spec.entities if e.name in created and initial.state[e.collection]]
    assert made, "the history created no records"
    ran = execute_gold(env, plan_scenarios(env, initial, seed=0, count=4, max_chain_length=6))
    published = [s for s in ran if s.status == "published"]
    assert len(published) >= 2, [s.reason for s in ran]
    model = model_of(env)
    selftests = selftest_scenarios(env, [(s, derive_checks(s, model=model)) for s in published])
    proven_enough(selftests)


# --------------------------------------------------------------------------- guards


def _id(spec, entity: str, n: int) -> str:
    return f"{spec.entity(entity).id_prefix}-{n:04d}"


def _agree(spec, state: dict, calls: list[tuple[str, dict]]) -> list[dict]:
    """Run `calls` on the compiled class and on SpecModel; both must answer and end alike."""
    env = build_environment(spec)
    instance = _load(spec)
    for entity in spec.entities:
        setattr(instance, entity.collection, copy.deepcopy(state.get(entity.collection, {})))
    model = SpecModel(model_of(env), state)
    out = []
    for tool, args in calls:
        real = getattr(instance, tool)(**args)
        predicted = model.call(tool, args)
        assert real["success"] == predicted["success"], (tool, args, real, predicted)
        if not real["success"] and predicted["error"] in {
            p.error for t in spec.tools for p in t.preconditions
        }:
            assert real["error"] == predicted["error"]
        out.append(real)
    final = {e.collection: getattr(instance, e.collection) for e in spec.entities}
    assert final == {e.collection: model.state.get(e.collection, {}) for e in spec.entities}
    return out


def test_a_room_holds_one_scheduled_event_per_start_and_capacity_and_closures_hold():
    spec = generate_spec(_topic("office_meeting_rooms", features=list(SCHEDULING_FEATURES)))
    state = base_state(spec, 3, 4)
    room_id = next(r for r, room in sorted(state["meeting_rooms"].items()) if room["capacity"] >= 2)
    person = sorted(state["colleagues"])[0]
    book = {
        "organizer_colleague_id": person,
        "meeting_room_id": room_id,
        "title": "Plan",
        "start": "2026-03-02T10:00",
        "kind": "review",
        "attendees": 2,
        "repeat": "weekly",
    }
    too_many = state["meeting_rooms"][room_id]["capacity"] + 1
    results = _agree(
        spec,
        state,
        [
            ("book_meeting", book),
            ("book_meeting", {**book, "title": "Clash"}),  # same room, same start
            ("book_meeting", {**book, "start": "2026-03-02T11:00", "attendees": too_many}),
            ("book_meeting", {**book, "start": "2026-03-02T11:00"}),
            (
                "reschedule_meeting",
                {"meeting_id": _id(spec, "meeting", 2), "start": "2026-03-02T10:00"},
            ),
            (
                "reschedule_meeting",
                {"meeting_id": _id(spec, "meeting", 1), "start": "2026-03-02T12:00"},
            ),
            ("cancel_meeting", {"meeting_id": _id(spec, "meeting", 1)}),
            ("book_meeting", {**book, "start": "2026-03-02T12:00"}),  # a cancelled one blocks none
            ("close_meeting_room", {"meeting_room_id": room_id}),
            ("book_meeting", {**book, "start": "2026-03-03T09:00"}),
        ],
    )
    ok = [r["success"] for r in results]
    assert ok == [True, False, False, True, False, True, True, True, True, False]
    assert results[1]["error"] == "the meeting room already has a meeting at that time"
    assert results[2]["error"] == "the meeting room is too small for that many people"
    assert results[4]["error"] == results[1]["error"]  # moving onto a taken start
    assert results[9]["error"] == "the meeting room is closed"


def test_an_approvers_limit_must_cover_the_amount_and_levels_roles_and_delegation_hold():
    spec = generate_spec(_topic("expense_approvals", features=list(APPROVAL_FEATURES)))
    state = base_state(spec, 3, 4)
    managers = state["managers"]
    lead = next(m for m, r in sorted(managers.items()) if r["role"] == "team lead")
    state["managers"][lead]["approval_limit"] = 1000.0
    director = next(m for m, r in sorted(managers.items()) if r["role"] == "finance director")
    state["managers"][director]["approval_limit"] = 20.0
    budget = sorted(state["budgets"])[0]
    state["budgets"][budget]["remaining"] = 600.0  # room for the claims below
    employee = sorted(state["employees"])[0]
    claim = {
        "employee_id": employee,
        "budget_id": budget,
        "title": "Train",
        "amount": 40.0,
        "category": "travel",
    }
    approve = {
        "expense_claim_id": _id(spec, "expense_claim", 1),
        "manager_id": director,
        "note": "ok",
    }
    results = _agree(
        spec,
        state,
        [
            ("draft_expense_claim", claim),
            ("approve_expense_claim", approve),  # still a draft
            ("submit_expense_claim", {"expense_claim_id": _id(spec, "expense_claim", 1)}),
            (
                "endorse_expense_claim",
                {"expense_claim_id": _id(spec, "expense_claim", 1), "manager_id": director},
            ),
            (
                "endorse_expense_claim",
                {"expense_claim_id": _id(spec, "expense_claim", 1), "manager_id": lead},
            ),
            ("approve_expense_claim", {**approve, "manager_id": lead}),  # wrong level
            ("approve_expense_claim", approve),  # 40 is above the director's 20
            ("delegate_manager", {"manager_id": director, "delegate_id": director}),
        ],
    )
    ok = [r["success"] for r in results]
    assert ok == [True, False, True, False, True, False, False, False]
    assert results[3]["error"] == "only a team lead can endorse"
    assert results[5]["error"] == "only a finance director can approve"
    assert results[6]["error"] == "the amount is above this manager's approval limit"
    assert results[7]["error"] == "a manager cannot delegate to themselves"


def test_escalation_needs_a_high_priority_and_one_rating_per_ticket():
    spec = generate_spec(_topic("it_helpdesk", features=list(TICKETING_FEATURES)))
    state = base_state(spec, 3, 4)
    employee = sorted(state["employees"])[0]
    tech = sorted(state["technicians"])[0]
    state["technicians"][tech]["hours_free"] = 3
    ticket = {
        "employee_id": employee,
        "subject": "Screen",
        "category": "hardware",
        "priority": "low",
        "tag": "laptop",
        "due_at": "2026-03-04T12:00",
    }
    t1 = {"ticket_id": _id(spec, "ticket", 1)}
    assign = {"ticket_id": _id(spec, "ticket", 1), "technician_id": tech, "hours": 2}
    results = _agree(
        spec,
        state,
        [
            ("open_ticket", ticket),
            ("start_ticket", t1),
            ("escalate_ticket", t1),  # low priority
            ("change_ticket_priority", {**t1, "priority": "urgent"}),
            ("escalate_ticket", t1),
            ("assign_ticket", assign),
            ("assign_ticket", assign),  # the same technician twice
            (
                "assign_ticket",
                {**assign, "technician_id": sorted(state["technicians"])[1], "hours": 0},
            ),
            ("resolve_ticket", t1),
            ("rate_ticket", {**t1, "score": "5"}),
            ("rate_ticket", {**t1, "score": "4"}),
        ],
    )
    ok = [r["success"] for r in results]
    assert ok == [True, True, False, True, True, True, False, False, True, True, False]
    assert results[2]["error"] == "only a high or urgent ticket can be escalated"
    assert results[6]["error"] == "that technician is already assigned to this ticket"
    assert results[10]["error"] == "this ticket is already rated"


def test_messaging_memberships_reactions_and_deleted_messages():
    spec = generate_spec(_topic("team_chat", features=list(MESSAGING_FEATURES)))
    state = base_state(spec, 3, 4)
    member = sorted(state["colleagues"])[0]
    channel = sorted(state["channels"])[0]
    m1 = {"message_id": _id(spec, "message", 1)}
    react = {**m1, "colleague_id": member, "emoji": "heart"}
    results = _agree(
        spec,
        state,
        [
            ("join_channel", {"colleague_id": member, "channel_id": channel, "role": "member"}),
            ("join_channel", {"colleague_id": member, "channel_id": channel, "role": "owner"}),
            (
                "post_message",
                {"channel_id": channel, "colleague_id": member, "body": "hi", "pinned": False},
            ),
            ("react_to_message", react),
            ("react_to_message", react),
            ("delete_message", m1),
            ("reply_to_message", {**m1, "colleague_id": member, "body": "late"}),
            ("archive_channel", {"channel_id": channel}),
            (
                "post_message",
                {"channel_id": channel, "colleague_id": member, "body": "x", "pinned": True},
            ),
        ],
    )
    ok = [r["success"] for r in results]
    assert ok == [True, False, True, True, False, True, False, True, False]
    assert results[8]["error"] == "the channel is archived"


def test_bookings_quota_waitlist_reviews_no_shows_and_blocked_slots():
    spec = generate_spec(_topic("hair_salon", features=list(BOOKING_FEATURES)))
    state = base_state(spec, 3, 6)
    client, other = sorted(state["clients"])[:2]
    slots = sorted(state["slots"])
    book = [
        (
            "create_session",
            {"client_id": client, "slot_id": slot, "service": "haircut", "reminder": "email"},
        )
        for slot in slots[:4]
    ]
    s1 = {"session_id": _id(spec, "session", 1)}
    results = _agree(
        spec,
        state,
        [
            *book,  # the fourth is over the quota of three confirmed sessions
            ("join_waitlist", {"client_id": other, "slot_id": slots[0]}),
            ("join_waitlist", {"client_id": other, "slot_id": slots[0]}),  # already waiting
            ("join_waitlist", {"client_id": other, "slot_id": slots[5]}),  # not booked
            ("review_session", {**s1, "stars": "5"}),  # not completed yet
            ("complete_session", s1),
            ("review_session", {**s1, "stars": "5"}),
            ("review_session", {**s1, "stars": "4"}),  # once per session
            ("mark_session_no_show", s1),  # completed, not confirmed
            ("block_slot", {"slot_id": slots[5]}),
            (
                "create_session",
                {
                    "client_id": other,
                    "slot_id": slots[5],
                    "service": "haircut",
                    "reminder": "email",
                },
            ),
            ("unblock_slot", {"slot_id": slots[5]}),
            ("change_session_reminder", {**s1, "reminder": "text message"}),  # completed
        ],
    )
    ok = [r["success"] for r in results]
    assert ok == [
        True,
        True,
        True,
        False,
        True,
        False,
        False,
        False,
        True,
        True,
        False,
        False,
        True,
        False,
        True,
        False,
    ]
    assert results[3]["error"] == "a client can hold at most 3 confirmed sessions"
    assert results[5]["error"] == "that client is already waiting for this slot"
    assert results[6]["error"] == "only a booked slot has a waitlist"
    assert results[10]["error"] == "this session is already reviewed"
    assert results[11]["error"] == "only a confirmed session can be marked a no-show"
    assert results[13]["error"] == "slot is not available"


def test_records_made_from_made_records_are_in_the_initial_state():
    """The history's second round: waitlist entries wait for booked slots and reviews review
    completed bookings, as the environment's own guards demand."""
    from synthesis.environments.states import build_initial_state

    env = build_environment(generate_spec(_topic("hair_salon", features=list(BOOKING_FEATURES))))
    state = build_initial_state(env, seed=0, index=0, records_per_entity=8).state
    assert state["waitlist_entries"] and state["reviews"]
    for entry in state["waitlist_entries"].values():
        assert state["slots"][entry["slot_id"]]["status"] == "booked"
    for review in state["reviews"].values():
        assert state["sessions"][review["session_id"]]["status"] == "completed"


def test_booking_topics_are_many_programs_and_some_are_held_out_for_test():
    topics = [t for t in TOPICS if t.archetype == "booking"]
    shapes = set()
    for topic in topics:
        env = build_environment(generate_spec(topic))
        shapes.add(build_shape(env.code, env.class_name))
    assert len(shapes) >= len(topics) // 2, len(shapes)
    assert held_out_shapes("booking", shapes)


def test_an_unknown_feature_name_is_a_spec_error():
    with pytest.raises(SpecError, match="is not a feature of archetype ticketing"):
        generate_spec(_topic("it_helpdesk", features=["sla", "teleport"]))


# --------------------------------------------------------------------------- program shapes


class _Abstract(ast.NodeTransformer):
    """Identifiers, attribute names, arguments and constants replaced by placeholders."""

    def visit_Name(self, node):
        return ast.copy_location(ast.Name(id="_", ctx=node.ctx), node)

    def visit_Attribute(self, node):
        self.generic_visit(node)
        node.attr = "_"
        return node

    def visit_arg(self, node):
        node.arg, node.annotation = "_", None
        return node

    def visit_FunctionDef(self, node):
        self.generic_visit(node)
        node.name, node.returns = "_", None
        return node

    def visit_ClassDef(self, node):
        self.generic_visit(node)
        node.name = "_"
        return node

    def visit_Constant(self, node):
        return ast.copy_location(ast.Constant(value=None), node)

    def visit_keyword(self, node):
        self.generic_visit(node)
        node.arg = "_"
        return node


def program_shape(code: str) -> str:
    return ast.dump(_Abstract().visit(ast.parse(code)))


@pytest.mark.parametrize("archetype", WORKFLOW)
def test_topics_of_one_archetype_differ_in_program_shape(archetype):
    topics = [t for t in TOPICS if t.archetype == archetype]
    shapes = {program_shape(compile_spec(generate_spec(t))) for t in topics}
    assert len(shapes) >= 8, (archetype, len(shapes))

    # Two topics with the same features are one program with other names (this shape keeps
    # list lengths: take two topics whose vocabulary lists are as long).
    def lengths(t):
        return sorted((k, len(v)) for k, v in t.vocabulary.items() if isinstance(v, list))

    a = topics[0]
    b = next(t for t in topics[1:] if lengths(t) == lengths(a))
    same = [
        _topic(t.topic_id, features=["sla"] if archetype == "ticketing" else []) for t in (a, b)
    ]
    assert program_shape(compile_spec(generate_spec(same[0]))) == program_shape(
        compile_spec(generate_spec(same[1]))
    )
