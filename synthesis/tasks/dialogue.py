"""What a task's simulated user knows and says: the `user` record of a multi-turn task.

About half the tasks that change a field or create a record are multi-turn: the user's
opening asks for the change but holds back a value the agent cannot do without (the new tag
of a claim, the amount of a new deposit), and gives it when the agent asks. The record is
read by the shipped simulator, synthesis/tasks/envfoundry_user.py, in the engine's own
rollouts and in every trainer's:

* `opening`: the request worded from the same plan with the held values left out (the
  persona and every other fact as in the whole request, `Scenario.task_text`);
* `details`: per held value, the words a question names it by (`about`), the question the
  oracle asks (`question`) and the user's answer (`say`, stating the value);
* `known`: the other values the opening stated, said again when asked;
* `replies`: what this persona says to a question it cannot answer, and to "I'll do it now";
* `stages` (half the multi-turn tasks that open with plain changes): the requests the user
  makes next, one after each reply of the agent ("Thanks. Next, could you ..."), each with
  the `facts` it states. A question, a condition or a refusal is in the last request (the
  final reply answers it); the oracle makes each request's calls only once it is made (the
  scenario's provenance `stage_steps`). A value is held back only from the first request.

A value is held back only where a person would leave it for later and the agent must come
back for it: the new value of an update, or a new record's field; the opening names the
field ("change the tag of ...", "it needs a reason as well"), so the agent knows to ask.
The choice is drawn from the task's own seed and never from whether the task is feasible,
so refusals are multi-turn as often as the rest. Whatever cannot be
held back cleanly (the opening still states the value, or drops another fact) leaves the
task single-turn.
"""

from __future__ import annotations

import itertools
import random
from typing import Any, NamedTuple

from synthesis.hashing import derive_seed
from synthesis.tasks.envfoundry_reward import mentions
from synthesis.tasks.envfoundry_user import USER_SIM_VERSION
from synthesis.tasks.phrasing import EMAIL, as_asked, phrase
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.text.grammar import capitalise, with_article
from synthesis.tasks.text.values import value_in_context
from synthesis.tasks.text.voices import Persona

# The share of tasks with a value to hold back that are asked over several turns.
MULTI_TURN_PROBABILITY = 0.7
# Of those with two such values, the share that hold back both.
SECOND_DETAIL_PROBABILITY = 0.3
# A value shorter than this ("4", "no") is never held back: too easily said by accident.
MIN_HELD_CHARS = 3
# Of the multi-turn tasks that open with plain changes, the share asked one request at a
# time: the user asks for the next once the agent has replied to the one before. Which tasks
# are multi-turn is drawn as before, so refusals stay multi-turn as often as the rest.
STAGED_PROBABILITY = 0.5
# At most this many requests in one conversation: the opening's and the later ones.
MAX_STAGES = 3
# Goals a later request may follow: changes whose outcome is in the state. A question, a
# condition or a refusal is answered in the reply that ends the task, so each of them comes
# in the last request.
_PLAIN = frozenset({"update", "transition", "create", "action"})

# The words a question may name a field by, beyond the field's own words.
_ASKED_AS: dict[str, tuple[str, ...]] = {
    "amount": ("how much", "sum", "figure", "total", "price", "cost"),
    "quantity": ("how many", "number of", "count", "units"),
    "count": ("how many", "number"),
    "hours": ("how many hours", "how long", "time"),
    "body": ("text", "say", "wording", "message", "content", "read"),
    "text": ("say", "wording", "message", "content", "read", "body"),
    "message": ("text", "say", "wording", "content"),
    "note": ("text", "say", "wording", "comment"),
    "notes": ("note", "text", "say", "wording", "comment"),
    "comment": ("text", "say", "wording", "note"),
    "subject": ("title", "heading", "topic"),
    "title": ("name", "called", "subject", "heading"),
    "name": ("called", "title"),
    "tag": ("label",),
    "category": ("type", "kind"),
    "reason": ("why",),
    "date": ("when", "day"),
    "start": ("when", "time", "date", "day"),
    "time": ("when",),
    "status": ("state",),
    "priority": ("urgent", "urgency"),
    "email": ("address", "contact", "e-mail"),
    "phone": ("number", "contact"),
    "score": ("rating", "how many"),
    "rating": ("score",),
    "limit": ("cap", "maximum", "how much"),
    "price": ("cost", "how much"),
}
_SAYS_UPDATE = (
    "The {what} should be {v}.",
    "Oh, sorry: the {what} should be {v}.",
    "Make the {what} {v}, please.",
    "Sorry, I forgot to say: the new {what} is {v}.",
    "It should be {v}.",
    "{V}, please.",
    "The new {what} is {v}.",
    "Right, the {what}: {v}.",
)
_SAYS_CREATE = (
    "The {what} is {v}.",
    "Put {v} as the {what}.",
    "Oh right, the {what}: {v}.",
    "Sorry, the {what} should be {v}.",
    "{V} for the {what}, please.",
    "Use {v} for the {what}.",
)
# A register's own answers (voices.REGISTERS); the others use the banks above.
_SAYS_BY_REGISTER = {
    "terse": ("{V}.", "{V}, please.", "{what}: {v}."),
    "formal": ("The {what} should be {v}.", "The {what} is to be {v}, please."),
    "non_native": ("The {what} is {v}, please.", "Please put {v} for the {what}."),
}
_UNKNOWN = {
    "customer": (
        "Sorry, I don't know that.",
        "I'm not sure, I'm afraid; I don't have that.",
        "No idea, sorry. I only know what I told you.",
        "I don't have that to hand, I'm afraid.",
    ),
    "staff": (
        "I don't have that, sorry. You'll have to look it up.",
        "No idea, I'm afraid; it should be in the system.",
        "I don't know that one. Can you find it?",
        "Not something I have on me, sorry.",
    ),
}
_GO_AHEAD = ("Yes, please go ahead.", "Sure, go ahead.", "Please do.", "Go ahead, thanks.")


class Held(NamedTuple):
    """A value the opening leaves out: the goal it belongs to and its words."""

    goal: int
    what: str
    value: str
    create: bool
    label: str | None
    unique: bool  # no other goal of the task sets a field of this name


class User(NamedTuple):
    """A multi-turn task's user: the `record` the simulator plays, and where its gold chain
    breaks between requests (`stage_steps`: per later request, the index of the first call
    made for it; the oracle replies before each, since only then has it been asked)."""

    record: dict[str, Any]
    stage_steps: list[int]


def user_record(plan: TaskPlan, text: str, persona: Persona, archetype: str) -> User | None:
    """The simulated user of the task `plan` worded as `text` by `persona`, or None when the
    task stays single-turn (see the module's text)."""
    rng = random.Random(derive_seed("user", plan.env_id, plan.state_id, plan.seed, plan.index))
    candidates = _candidates(plan)
    if not candidates or rng.random() >= MULTI_TURN_PROBABILITY:
        return None
    starts = _stage_starts(plan, rng)
    # The oracle asks for what is held back before it starts: only of what it was asked.
    first = [c for c in candidates if not starts or c.goal < starts[0]]
    held = [rng.choice(first)] if first else []
    # A second detail of another goal and another field: each answer names its field.
    others = [c for c in first if held and c.goal != held[0].goal and c.what != held[0].what]
    if others and rng.random() < SECOND_DETAIL_PROBABILITY:
        held.append(rng.choice(others))
    steps = _stage_steps(plan, starts)
    said = [f for f in plan.facts if stated(text, f)]
    requests = _by_stage(plan, held, starts, persona, archetype, rng) if steps else None
    if requests is not None and not _keeps_facts(requests, said, held):
        requests = None
    if requests is None:
        if starts:  # not to be asked in turn after all: at once, a value held back
            held = [rng.choice(candidates)]
        steps, requests = [], [_opening(plan, held, persona, archetype, rng)]
        if not _keeps_facts(requests, said, held):
            return None
    opening, later = requests[0], requests[1:]
    voice = "customer" if persona.voice in ("customer", "on_behalf") else "staff"
    details = [_detail(h, len(held) > 1, persona.register, rng) for h in held]
    record: dict[str, Any] = {
        "version": USER_SIM_VERSION,
        "opening": opening,
        "details": details,
        "known": _known(plan, held, opening),
        "replies": {"unknown": rng.choice(_UNKNOWN[voice]), "go_ahead": rng.choice(_GO_AHEAD)},
    }
    if later:
        record["stages"] = [
            {"say": t, "facts": [f for f in said if stated(t, f) and not stated(opening, f)]}
            for t in later
        ]
    return User(record, steps)


def _keeps_facts(requests: list[str], said: list[str], held: list[Held]) -> bool:
    """Whether the requests hold back every held value (no other goal's words carry it)
    and, between them, state every other fact the whole request states."""
    values = {h.value for h in held}
    if any(stated(t, v) for t in requests for v in values):
        return False
    everything = " ".join(requests)
    return all(stated(everything, f) for f in said if f not in values)


def _stage_starts(plan: TaskPlan, rng: random.Random) -> list[int]:
    """The goals that begin a later request (none: one request): the second goal, and now
    and then a later one, among the places after a leading plain change."""
    goals = plan.goals
    places = []
    for i in range(1, len(goals)):
        if goals[i - 1].kind not in _PLAIN:
            break
        places.append(i)
    if not places or rng.random() >= STAGED_PROBABILITY:
        return []
    # People ask for the first thing on its own; what follows comes in one request or two.
    more = [rng.choice(places[1:])] if places[1:] and rng.random() < 0.5 else []
    return [1, *more][: MAX_STAGES - 1]


def _stage_steps(plan: TaskPlan, starts: list[int]) -> list[int]:
    """Per later request, the index of its first gold call: the one after the mutation of
    the goal before it ([] when the chain does not show where, so the task is asked at once)."""
    mutations = [i for i, role in enumerate(plan.roles) if role == "mutation"]
    out = []
    for start in starts:
        if start > len(mutations) or plan.gold_chain[mutations[start - 1]].tool != (
            plan.goals[start - 1].tool
        ):
            return []
        out.append(mutations[start - 1] + 1)
    return out


def _by_stage(
    plan: TaskPlan,
    held: list[Held],
    starts: list[int],
    persona: Persona,
    archetype: str,
    rng: random.Random,
) -> list[str]:
    """The requests the user makes in turn: the goals before each start, by the same
    persona, the later ones as follow-ups; the held values left out."""
    goals = list(plan.goals)
    for h in held:
        goals[h.goal] = _without(goals[h.goal], h.what)
    facts = [f for f in plan.facts if f not in {h.value for h in held}]
    bounds = [0, *starts, len(goals)]
    out = []
    for n, (a, b) in enumerate(itertools.pairwise(bounds)):
        part = plan.model_copy(update={"goals": goals[a:b], "facts": facts})
        # A person's address is given once in the conversation, as in one request.
        introduced = frozenset(e for said in out for e in EMAIL.findall(said))
        words, _ = phrase(
            part, rng, archetype=archetype, persona=persona, follow_up=n > 0, introduced=introduced
        )
        out.append(words)
    return out


def _candidates(plan: TaskPlan) -> list[Held]:
    """The values a person could leave for a later turn: an update's new value or a new
    record's field (the opening names the field, so the agent knows to ask for it)."""
    goals = [as_asked(g) for g in plan.goals]
    whats = [what for g in goals for what, _ in g.values]
    out = []
    for i, goal in enumerate(goals):
        if goal.kind not in ("update", "create") or not goal.values:
            continue
        for what, value in goal.values if goal.kind == "create" else goal.values[:1]:
            if len(value) >= MIN_HELD_CHARS:
                unique = whats.count(what) == 1
                out.append(Held(i, what, value, goal.kind == "create", goal.label, unique))
    return out


def _opening(
    plan: TaskPlan, held: list[Held], persona: Persona, archetype: str, rng: random.Random
) -> str:
    """The request worded with the held values left out, by the same persona."""
    goals = list(plan.goals)
    for h in held:
        goals[h.goal] = _without(goals[h.goal], h.what)
    facts = [f for f in plan.facts if f not in {h.value for h in held}]
    reduced = plan.model_copy(update={"goals": goals, "facts": facts})
    opening, _ = phrase(reduced, rng, archetype=archetype, persona=persona)
    return opening


def _without(goal: PlanGoal, what: str) -> PlanGoal:
    if goal.kind == "refuse" and goal.then is not None:
        return goal.model_copy(update={"then": _without(goal.then, what)})
    values = [(w, v) for w, v in goal.values if w != what]
    return goal.model_copy(update={"values": values, "withheld": [*goal.withheld, what]})


def about(what: str) -> list[str]:
    """The words a question may name field `what` by: its own, its head word's, synonyms."""
    words = [what]
    head = what.split()[-1]
    if head != what:
        words.append(head)
    for word in (what, head):
        words += _ASKED_AS.get(word, ())
    words.append("value")
    return list(dict.fromkeys(words))


def _detail(h: Held, several: bool, register: str, rng: random.Random) -> dict[str, Any]:
    said = value_in_context(h.what, h.value)
    label = h.label or "record"
    if h.create and not h.unique:  # another new record has this field too: say whose
        say = f"For the new {label}, the {h.what} is {said}."
    else:
        bank = _SAYS_BY_REGISTER.get(register) or (_SAYS_CREATE if h.create else _SAYS_UPDATE)
        if several:  # each answer must say which of the fields it gives
            bank = tuple(b for b in bank if "{what}" in b)
        say = capitalise(rng.choice(bank).format(what=h.what, v=said, V=capitalise(said)))
    if h.create:
        question = f"What {h.what} should {with_article('new ' + label)} have?"
    else:
        question = f"What should the new {h.what} be?"
    return {"about": about(h.what), "question": question, "say": say, "facts": [h.value]}


def _known(plan: TaskPlan, held: list[Held], opening: str) -> list[dict[str, Any]]:
    """The opening's other values, each of a field only one goal sets: asked again, said again."""
    goals = [as_asked(g) for g in plan.goals]
    whats = [what for g in goals for what, _ in g.values]
    held_whats = {h.what for h in held}
    out = []
    for goal in goals:
        for what, value in goal.values:
            if what in held_whats or whats.count(what) != 1 or not stated(opening, value):
                continue
            said = value_in_context(what, value)
            out.append({"about": about(what), "say": f"The {what} is {said}.", "facts": [value]})
    return out


def stated(text: str, fact: str) -> bool:
    """Whether `text` states `fact`: as a reply check reads it (normalised), or verbatim."""
    return mentions(text, fact) or fact.casefold() in text.casefold()
