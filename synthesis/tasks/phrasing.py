"""How a task is worded (offline): a persona and its voice, one request per plan goal, and
the sentences around them.

Phrasing reads only the task-plan record (synthesis.tasks.plan) and the environment's
archetype. The parts live in synthesis.tasks.text: grammar (articles, plurals, capitals),
values (dates and codes as people write them), voices (who asks, and how they name their
own records) and banks (many ways to ask for each kind of goal, per archetype). Every
choice draws from the rng it is handed: the planner's own stream, continued, so the words
are as reproducible as the plan.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import re
from typing import NamedTuple

from synthesis.environments.free_text import TextTopic, free_text
from synthesis.tasks.plan import PlanGoal, TaskPlan
from synthesis.tasks.text import banks
from synthesis.tasks.text.grammar import (
    article,
    capitalise,
    join_phrases,
    plural,
    sentence,
    tidy,
    with_article,
)
from synthesis.tasks.text.lexicon import vary
from synthesis.tasks.text.values import field_noun, field_words, value_in_context, value_words
from synthesis.tasks.text.voices import CUSTOMER, ON_BEHALF, PERSONAS, REGISTERS, STAFF, Persona
from synthesis.wordbank import FIRST_NAMES, LAST_NAMES

__all__ = [
    "PERSONAS",
    "STATUS_VERBS",
    "Persona",
    "field_noun",
    "field_words",
    "fresh_text",
    "join_phrases",
    "phrase",
    "task_text",
    "tool_verb",
    "value_words",
]

STATUS_VERBS = {"set", "mark", "transition", "update", "change", "move"}
# A sentence of at most this many words may stand alone: one this short is said by many
# people (and counted by no measure of reuse); a longer one runs on into the request.
SHORT_WORDS = 4
CLOSER_PROBABILITY = 0.5
STAFF_OPENER_PROBABILITY = 0.3
PURPOSE_PROBABILITY = 0.5
_CREATE_VERBS = {"create", "add", "new", "register", "make"}
# People often say why they ask; a task says it about three times in four.
MANNER_PROBABILITY = 0.15
JOINED_PROBABILITY = 0.3
LIST_PROBABILITY = 0.18
LABEL_BESIDE_PROBABILITY = 0.5
FIRST_NAME_PROBABILITY = 0.4
LABEL_AGAIN_DROPPED = 0.7
FRONTED_PROBABILITY = 0.3
GREETING_PROBABILITY = 0.25
WHOLE_QUESTION_PROBABILITY = 0.45
PREFACE_PROBABILITY = 0.2
COMPOSED_PROBABILITY = 0.6
# "If it can't go ahead, tell me why": said of one change in a quarter of the tasks that ask
# for one, feasible or not, so the clause never tells the agent which requests will be refused.
WHY_NOT_PROBABILITY = 0.25
_CHANGES = frozenset({"update", "transition", "create", "action"})


def phrase(
    plan: TaskPlan,
    rng: random.Random,
    archetype: str | None = None,
    persona: Persona | None = None,
    follow_up: bool = False,
    introduced: frozenset[str] = frozenset(),
) -> tuple[str, Persona]:
    """The request for `plan`, and the persona who makes it (drawn, unless given: the
    opening of a multi-turn task is said by the whole request's persona). `follow_up`: the
    words are what the user asks next in a conversation (after the agent's reply to the
    first request): no greeting, no sign-off, an acknowledgement and a word of what is next.
    `introduced`: the addresses of people the conversation has named already (by name alone
    from then on)."""
    arch = archetype or banks.GENERIC
    asked = [as_asked(g) for g in plan.goals]
    owner = _single_owner(asked)
    if persona is None:
        persona = with_register(_persona(asked, owner, rng), rng)
    voice = persona.voice
    # Records named again are found on the planner's own words, before any rewording could
    # make two mentions of one record read differently.
    goals = [_reword_goal(g, plan.facts, rng) for g in _second_mentions(asked, rng)]
    cores = _why_not([_core(goal, voice, arch, rng) for goal in goals], goals, rng)
    # Passed on for a customer, staff's work (ship their order) is asked of us, not them.
    if voice == "on_behalf" and not all(_customer_asks(g) for g in asked):
        voice = "on_behalf_staff"
    requests = _requests(cores, voice, rng, persona.register, follow_up)

    label, name = owner if owner is not None else ("customer", "")
    fill = {"title": plan.title, "name": name, "label": label, "labels": plural(label)}
    # Who asks (a customer's name is how the agent finds their records), what is wanted,
    # and now and then why, in the words of the change itself.
    # A later request of a conversation gives no reason: the first one said why.
    reason = _purpose(goals[0], persona, rng) if goals and not follow_up else ""
    if reason and requests:
        requests[0] = _with_reason(requests[0], reason, rng)
    parts = (
        _followed_up(persona, requests, rng) if follow_up else _framed(persona, fill, requests, rng)
    )
    # A part ending with a colon ("Before the end of the day:") runs on into the next one.
    parts = [
        _lower_first(p) if i and parts[i - 1].endswith(":") else p for i, p in enumerate(parts)
    ]
    text = " ".join(parts)
    people = [m[1] for m in _PERSON.finditer(text)]
    people += [n.split()[0] for n in people if n.split()[0] in _FIRST_NAMES]
    # A customer writing names themselves: "their email is" would be someone else's.
    speaker = EMAIL.search(name) if persona.voice == "customer" else None
    text = _reword_dates(text, rng)
    text = _reword_people(
        _reword_statuses(text, rng),
        rng,
        plan.labels,
        speaker[0] if speaker else None,
        introduced,
    )
    text = _possessives(text, people, plan.facts, rng)
    text = _CODED.sub(lambda m: _pick(banks.CODE_FORMS, rng).format(n=m[1], k=m[2]), text)
    text = _field_forms(text, plan.facts, rng)
    text = short_nouns(text, plan.labels, plan.facts, rng)
    if persona.register == "formal":
        text = _uncontracted(text, plan.facts)
    return tidy(_acronyms(text, plan.labels)), persona


# The first words of record nouns that are letters said one by one ("it ticket" is an IT
# ticket): a topic's vocabulary writes them lower-case, as every other noun.
_ACRONYMS = frozenset({"it", "hr", "pr", "tv", "gp", "dj", "vip", "sms", "atm", "pc", "qa", "vat"})


def _acronyms(text: str, labels: list[str]) -> str:
    """Record nouns that start with an acronym written as one ('an IT ticket'); the values
    the text must carry (a channel called "it notices") are no noun of it and stay as they
    are. The article before is put right by `tidy`."""
    for label in labels:
        head, _, rest = label.partition(" ")
        if head in _ACRONYMS and rest:
            text = re.sub(
                rf"(?<![\w\"'])\b{re.escape(head)} (?={re.escape(rest)}s?\b)",
                head.upper() + " ",
                text,
                flags=re.IGNORECASE,
            )
    return text


def with_register(persona: Persona, rng: random.Random) -> Persona:
    """`persona` writing in a register drawn by voices.REGISTERS' weights."""
    names = list(REGISTERS)
    register = rng.choices(names, weights=[REGISTERS[n] for n in names])[0]
    return dataclasses.replace(persona, register=register)


_CONTRACTION = re.compile(r"\b(" + "|".join(map(re.escape, banks.UNCONTRACTED)) + r")\b", re.I)


def _uncontracted(text: str, facts: list[str]) -> str:
    """A formal writer's words: contractions spelt out (never inside a fact)."""

    def say(m: re.Match[str]) -> str:
        full = banks.UNCONTRACTED.get(m[1]) or banks.UNCONTRACTED.get(m[1].lower(), m[1])
        return capitalise(full) if m[1][0].isupper() else full

    out = _CONTRACTION.sub(say, text)
    return text if any(f in text and f not in out for f in facts) else out


def _persona(asked: list[PlanGoal], owner: tuple[str, str] | None, rng: random.Random) -> Persona:
    """Who asks: the record's owner (or someone for them) when one person is behind every
    goal, else staff."""
    if owner is not None and all(_customer_asks(g) for g in asked):
        return rng.choice((CUSTOMER, CUSTOMER, ON_BEHALF, *STAFF))
    if owner is not None:
        return rng.choice((ON_BEHALF, *STAFF))
    return rng.choice(STAFF)


def as_asked(goal: PlanGoal) -> PlanGoal:
    """The goal as the asker words it: a request a rule will refuse is asked exactly as the
    same request would be if the rules allowed it (its `then`), since nothing in the words
    may tell the agent that it will be refused (benchmarks/request_tells.py measures this)."""
    if goal.kind == "refuse" and goal.then is not None:
        return goal.then
    return goal


def _why_not(cores: list[_Core], goals: list[PlanGoal], rng: random.Random) -> list[_Core]:
    """Now and then one change asked with "and if it can't go ahead, tell me why": drawn
    from the goals' kinds alone, never from whether a rule will refuse the change."""
    changes = [i for i, g in enumerate(goals) if g.kind in _CHANGES and cores[i].whole is None]
    if not changes or rng.random() >= WHY_NOT_PROBABILITY:
        return cores
    i = rng.choice(changes)
    # Only the agent can tell the asker why: the lead must address the agent.
    cores[i] = cores[i]._replace(tail=" " + _pick(banks.WHY_NOT_TAILS, rng), addressed=True)
    return cores


# The words before a record's noun that let it be said shorter ('the baggage claim' -> 'the
# claim'); a name after the noun ('game card Party Card') keeps the whole label.
_DETERMINERS = (
    "the|that|this|a|an|my|our|their|your|his|her|same|new|fresh|additional|extra|brand-new"
)


def noun_forms(label: str, labels: list[str]) -> tuple[str, ...]:
    """Shorter words for a record's noun that no other collection's label could answer to:
    the label's head word ('claim' of 'baggage claim') and its everyday synonyms."""
    forms = list(banks.NOUN_SYNONYMS.get(label, ()))
    head = label.split()[-1]
    if head != label and head not in banks.HEAD_UNSAID:
        forms.insert(0, head)
    others = [o for o in labels if o != label]
    clear = []
    for form in forms:
        words = set(form.split())
        if any(words & set(o.split()) or form in o for o in others):
            continue
        clear.append(form)
    return tuple(clear)


_FIELD_QUALIFIER = re.compile(
    r"\b(?:with|that has|having|which has|showing|carrying|listed with|bearing|with the) "
    rf"({'|'.join(banks.FIELD_FORMS)}) (?!set to |of |as |is |to |from |becomes )(?=\S)"
)


def _field_forms(text: str, facts: list[str], rng: random.Random) -> str:
    """'with title X' said the ways that field is said ('titled X', 'called X'), now and then."""

    def say(m: re.Match[str]) -> str:
        if rng.random() >= 0.6:
            return m[0]
        return rng.choice(banks.FIELD_FORMS[m[1]]) + " "

    out = _FIELD_QUALIFIER.sub(say, text)
    if any(f in text and f not in out for f in facts):
        return text
    return out


def short_nouns(text: str, labels: list[str], facts: list[str], rng: random.Random) -> str:
    """Records' nouns said the short ways people say them once the kind is clear: now and
    then at the first mention, mostly after it ('the baggage claim ... the claim'). A text
    that would lose a fact this way keeps its words."""
    out = text
    for label in sorted(labels, key=len, reverse=True):
        forms = noun_forms(label, labels)
        if not forms:
            continue
        seen = [0]

        def say(m: re.Match[str], forms: tuple[str, ...] = forms, seen: list[int] = seen) -> str:
            seen[0] += 1
            if rng.random() >= (0.4 if seen[0] == 1 else 0.85):
                return m[0]
            det, form = m[1], rng.choice(forms)
            if det.lower() in ("a", "an"):
                det = article(form) if det.islower() else capitalise(article(form))
            return f"{det} {form}"

        out = re.sub(
            rf"\b({_DETERMINERS}|The|That|This|A|An|My|Our|Their|(?<=[a-z])'s?) "
            rf"{re.escape(label)}\b(?![\w-])",
            say,
            out,
        )
    if any(f in text and f not in out for f in facts):
        return text
    return out


def _reword_goal(goal: PlanGoal, facts: list[str], rng: random.Random) -> PlanGoal:
    """The goal with its records' words said one of the ways people say them (the same
    records, the same values: a rewording that would lose a fact is not used)."""
    update: dict[str, object] = {}
    if goal.target and goal.target != "it":
        update["target"] = record_words(goal.target, facts, rng)
        if goal.question and goal.question.endswith(goal.target):
            head = goal.question[: len(goal.question) - len(goal.target)]
            update["question"] = head + str(update["target"])
    question = str(update.get("question", goal.question or ""))
    if question.startswith("the status of "):
        head = rng.choice(banks.STATUS_QUESTION_HEADS)
        update["question"] = head + question[len("the status of ") :]
    if goal.refs:
        update["refs"] = [record_words(r, facts, rng) for r in goal.refs]
    if goal.then is not None:
        update["then"] = _reword_goal(goal.then, facts, rng)
    return goal.model_copy(update=update) if update else goal


def _record_label(words: str) -> str | None:
    """The noun a record's words name it by: 'the order of ...' -> 'order', 'artist Ada Lee
    (ada@x.com)' -> 'artist'; None when the words do not say."""
    m = re.match(
        r"(?:the|that|that new) ([a-z]+(?: [a-z]+)?)(?: (?:of|with|for|on|under|"
        r"linked|attached|belonging|tied|that|having|which|showing|carrying)\b|$)",
        words,
    )
    if m is None:
        m = re.match(r"([a-z]+(?: [a-z]+)?) [A-Z]", words)
    return m[1] if m else None


def _second_mentions(goals: list[PlanGoal], rng: random.Random) -> list[PlanGoal]:
    """A record named again in a later goal said as 'the same order', when no other record
    of that noun was named before it (so the words still single it out)."""
    named: list[tuple[str, str | None]] = []

    def again(words: str) -> str:
        label = _record_label(words)
        earlier = [w for w, lab in named if lab == label]
        if label and words in earlier and len(set(earlier)) == 1 and rng.random() < 0.8:
            return _pick(banks.SAME_RECORD, rng).format(l=label)
        if (words, label) not in named:
            named.append((words, label))
        return words

    out = []
    for g in goals:
        update: dict[str, object] = {}
        if g.kind in ("update", "transition", "create") and g.target and g.target != "it":
            update["target"] = again(g.target)
        if g.kind == "create" and g.refs:
            update["refs"] = [again(r) for r in g.refs]
        elif g.target and g.kind not in ("update", "transition", "create"):
            again(g.target)
        out.append(g.model_copy(update=update) if update else g)
    return out


# " of " between a record's noun and the record it belongs to, unless that is a person named
# with an address (those are _reword_owners').
_RELATION = re.compile(
    r"(?<=[a-z]) of (?=(?:the |that )?[a-z]+(?: [a-z]+)? "
    r"(?![A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3} \())"
)
_QUALIFIER = re.compile(
    r"(?<=[a-z)])(?<!associated)(?<!along) with (?!status\b)"
    r"(?=[a-z]+ (?!(?:[a-z]+ )?(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)\b))"
)


def record_words(words: str, facts: list[str], rng: random.Random) -> str:
    """A record's words ('the hold of the game card with number GC-1') with the words that
    tie it to another record and to its qualifiers varied ('the hold on the game card that
    has number GC-1'); a person named with an address keeps the address beside the name."""
    out = _reword_owners(words, rng)
    out = _RELATION.sub(lambda m: _pick(banks.RELATIONS, rng), out)
    out = _QUALIFIER.sub(lambda m: _pick(banks.QUALIFIER_LINKS, rng), out)
    if any(f in words and f not in out for f in facts):
        return words
    return out


def _opener(persona: Persona, fill: dict[str, str], rng: random.Random) -> str:
    """Who asks, where the request needs it said: a customer (or whoever passes a customer's
    request on) names that customer; staff now and then say where the work comes from, else
    at most greet (a terse writer never does). Now and then a greeting before an opener that
    has none."""
    terse = persona.register == "terse"
    if persona.voice == "staff" and (terse or rng.random() >= STAFF_OPENER_PROBABILITY):
        greets = not terse and rng.random() < GREETING_PROBABILITY
        return _pick(_greetings(persona), rng) if greets else ""
    openers = persona.openers
    if persona.register == "formal":  # no "Hey, it's Ada" from a formal writer
        openers = tuple(o for o in openers if not _CASUAL.match(o)) or openers
    template = _pick(openers, rng)
    opener = template.format(**fill)
    # "the Airline baggage desk desk": a title that already ends with the template's noun.
    last = fill["title"].rsplit(" ", 1)[-1]
    if fill["title"] and last.islower():
        opener = opener.replace(f"{fill['title']} {last}", fill["title"])
    # A name or a greeting keeps the opener's own start ("Hi, {name} here" is greeted already).
    if template[:1] not in ("", "{") and not _GREETS.match(template):
        if rng.random() < GREETING_PROBABILITY:
            opener = f"{_pick(_greetings(persona), rng)} {_lower_first(opener)}"
    return opener


_CASUAL = re.compile(r"(?:Hey|Hiya|Hi folks|Hi all|Yo)\b")


def _greetings(persona: Persona) -> tuple[str, ...]:
    """The greetings this writer uses: a formal one says "Good morning", never "Hey"."""
    if persona.register == "formal":
        return tuple(g for g in banks.GREETINGS if g.startswith(("Good", "Hello,")))
    return banks.GREETINGS


def _words(text: str) -> int:
    """How many words `text` has, a template field ('{name}') counting as one and a
    contraction as two ("I'm" is "I am" once the lexicon has varied it)."""
    return len(re.findall(r"[\w{}-]+", text))


def _run_on(opener: str, request: str, rng: random.Random) -> str:
    """The opener and the first request as one sentence: 'Ada Lee rang — could you ...?'."""
    if opener.endswith((",", ":", "—")):
        return f"{opener} {_lower_first(request)}"
    head = opener.rstrip(".!")
    # "Ticket for X: quick one: ..." would stack two colons.
    joins = (" — ",) if ":" in request[:40] else banks.RUN_ONS
    return f"{head}{rng.choice(joins)}{_lower_first(request)}"


def _purpose(goal: PlanGoal, persona: Persona, rng: random.Random) -> str:
    """Now and then, why the first goal is asked for, in the words of what it does (see
    banks.PURPOSES); '' otherwise (always from a terse writer, seldom from a chatty one).
    Drawn from the goal as asked, so a request a rule will refuse gives the same reasons as
    one that goes through."""
    voice = persona.voice
    chance = {"terse": 0.0, "chatty": 0.9}.get(persona.register, PURPOSE_PROBABILITY)
    if rng.random() >= chance:
        return ""
    kind = _goal_class(goal)
    bank = banks.PURPOSES.get(voice, banks.PURPOSES["staff"]).get(kind, ())
    # {who} is the person behind the record: a record found through a game card or a room
    # has none ("the game card is expecting it"), and then no reason names one.
    person = goal.owner is not None and "@" in goal.owner[1]
    if not person:
        bank = tuple(b for b in bank if "{who}" not in b)
    if not bank:
        return ""
    what = goal.values[0][0] if goal.values else (goal.withheld or ["details"])[0]
    label = goal.label or _record_label(goal.target or "") or "record"
    who = goal.owner[0] if person and goal.owner else ""
    return _pick(bank, rng).format(what=what, label=label, who=who)


_UNDO_VERBS = re.compile(
    r"^(?:cancel|void|withdraw|revoke|delete|remove|decline|reject|refund|archive|retire|"
    r"close|deactivate|suspend|freeze|block|discard|drop|dismiss|expire|terminate|end|"
    r"deny|disable|lock|abandon|unpublish|return|release|mark_lost|write)",
    re.IGNORECASE,
)


def _goal_class(goal: PlanGoal) -> str:
    """What a goal does, as a reason for it reads it: undo, advance, update, create or ask."""
    if goal.kind == "update":
        return "update"
    if goal.kind == "create":
        return "create"
    if goal.kind in ("ask", "conditional"):
        return "ask"
    return "undo" if _UNDO_VERBS.match(goal.verb or goal.tool) else "advance"


def _with_reason(request: str, reason: str, rng: random.Random) -> str:
    """`request` said with its reason: before it ('Since ..., could you ...?') or after
    its first sentence, before the stop (', since ...?')."""
    if ":" not in request[:40] and rng.random() < 0.5:
        lead = _pick(banks.PURPOSE_LEADS, rng).format(r=reason)
        return f"{lead} {_lower_first(request)}"
    if _NUMBERED.search(request):
        return request  # a numbered list: a tail would land in the numbering ("1 because")
    m = re.search(r"[.?!](?=\s|$)", request)
    if m is None:
        return request
    tail = _pick(banks.PURPOSE_TAILS, rng).format(r=reason)
    return request[: m.start()] + tail + request[m.start() :]


_NUMBERED = re.compile(r"(?:^|\s)(?:\(\d+\)|\d+[.)]|\d+ -)\s")
_GREETS = re.compile(r"(?i)(hi|hello|hey|hiya|good|morning|evening|afternoon|dear|to whom)\b")


def task_text(
    title: str, persona: Persona, sentences: list[str], rng: random.Random
) -> tuple[str, Persona]:
    """A request made of goal sentences a planner worded itself (file workspaces name files
    by content and path): the persona's opener, one lead per goal from the banks, a closer;
    and the persona with the register it was written in."""
    fill = {"title": title, "name": "", "label": "user", "labels": "users"}
    sentences = [_reword_workspace(s, rng) for s in sentences]
    persona = with_register(persona, rng)
    requests = _requests([_Core(None, s) for s in sentences], persona.voice, rng, persona.register)
    text = tidy(" ".join(_framed(persona, fill, requests, rng)))
    return (_uncontracted(text, sentences) if persona.register == "formal" else text), persona


def _framed(
    persona: Persona, fill: dict[str, str], requests: list[str], rng: random.Random
) -> list[str]:
    """The request's sentences with who asks before them and, now and then, thanks after.

    Nothing is said that the request does not need (no small talk). A sentence that stands
    alone is short, so that no task shares a whole sentence with another: a longer opener
    runs on into the first request."""
    parts = []
    opener = _opener(persona, fill, rng)
    if opener and requests and (opener.endswith((",", ":")) or _words(opener) > SHORT_WORDS):
        requests = [_run_on(opener, requests[0], rng), *requests[1:]]
    elif opener:
        parts.append(opener)
    parts += requests
    register = persona.register
    if register != "terse" and (register == "chatty" or rng.random() < CLOSER_PROBABILITY):
        # A register's own sign-offs are said as written (the lexicon's variants of "thank
        # you" would stack on them: "many thank you very much").
        own = banks.REGISTER_CLOSERS.get(register)
        short = tuple(c for c in persona.closers if _words(c) <= SHORT_WORDS)
        parts.append(rng.choice(own) if own else _pick(short, rng))
    return [p for p in parts if p]


def _followed_up(persona: Persona, requests: list[str], rng: random.Random) -> list[str]:
    """The requests a user makes next, after the agent's reply: "Thanks. Next, could you ..."."""
    if not requests:
        return requests
    register = persona.register
    ack = rng.choice(banks.FOLLOW_UP_ACKS.get(register, banks.FOLLOW_UP_ACKS["plain"]))
    front = _pick(banks.FOLLOW_UP_FRONTS, rng)
    if _NUMBERED.search(requests[0]):
        front = ""  # a list says its own order: "Then steps, in order: 1 - ..." would not
    # A lead that opens a conversation ("Okay, here goes: ...") is not said twice in it.
    request = _drop_colon_lead(requests[0])
    if _TURNS_ALREADY.match(request):
        front = ""  # "Now now, the order ..." / "Next, next ...": the request turns itself
    first = f"{front} {_lower_first(request)}" if front else request
    return [p for p in (ack, first, *requests[1:]) if p]


# A request whose own lead already turns to it (banks.FOLLOW_UP_FRONTS says the same).
_TURNS_ALREADY = re.compile(r"(?i)(?:now|next|also|then|and|plus|one more thing)\b")
_FIRST_NAMES = frozenset(FIRST_NAMES)
_WORKSPACE_FORMS = tuple((re.compile(p), forms) for p, forms in banks.WORKSPACE_FORMS)


def _reword_workspace(text: str, rng: random.Random) -> str:
    """A workspace planner's goal sentence said one of the other ways people say it (its
    paths, names, statuses and lines carried over verbatim)."""
    for pattern, forms in _WORKSPACE_FORMS:
        m = pattern.fullmatch(text) or pattern.search(text)
        if m is None:
            continue
        said = rng.choice(forms).format(*("", *(g or "" for g in m.groups())))
        text = text[: m.start()] + said + text[m.end() :]
    return text


_PERSON = re.compile(r"([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}) \(([\w.+-]+@[\w-]+(?:\.[\w-]+)+)\)")
_STATUS_QUALIFIER = re.compile(r"\bwith status ([a-z]+)\b(?! [a-z]+ (?:and|with)\b)")


_WEEKDAY = "(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
_DATED = re.compile(
    rf"\bwith (?!the\b)([a-z]+(?: [a-z]+)?) ({_WEEKDAY} \d{{1,2}} [A-Z][a-z]+ \d{{4}}"
    r"(?: at (?:\d{1,2}(?::\d{2})? [ap]m|noon|midnight))?)"
)


def _reword_dates(text: str, rng: random.Random) -> str:
    """'with start Tuesday 3 March 2026 at 2 pm' said the ways people date a record."""

    def say(m: re.Match[str]) -> str:
        what, when = m[1], m[2]
        forms = (
            banks.START_FORMS if what in ("start", "start time", "starts") else banks.DATED_FORMS
        )
        return vary(rng.choice(forms), rng).format(f=what, v=when)

    return _DATED.sub(say, text)


_OWNED_BY = re.compile(
    r"(?<!\bin )(?<!\bon )\bthe (?!name\b|account\b|behalf\b)([a-z]+(?: [a-z]+)?) of "
    r"([a-z]+(?: [a-z]+)? [A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3} "
    r"\([\w.+-]+@[\w-]+(?:\.[\w-]+)+\))"
)


def _reword_owners(words: str, rng: random.Random) -> str:
    """'the order of artist Ada Lee (ada@x.com)' said the ways people tie a record to its
    person ('the order under artist ...', 'the order on file for ...')."""

    def say(m: re.Match[str]) -> str:
        rest = words[m.end() : m.end() + 1]
        forms = banks.OWNER_FORMS if rest else banks.OWNER_FORMS + banks.OWNER_END
        return _pick(forms, rng).format(l=m[1], o=m[2])

    return _OWNED_BY.sub(say, words)


# A record named with its code beside its name: 'Season Card (GC-884767)'.
_CODED = re.compile(
    r"([A-Z][\w'.-]*(?: [A-Z][\w'.-]*){0,3}) \(((?=[A-Z-]*\d)[A-Z0-9][A-Z0-9-]{3,})\)"
)


# An email address as the request writes it (a person named with theirs is found by it).
EMAIL = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")
_THIRD_PERSON = re.compile(r"\b(?:their|them|they)\b")


def _reword_people(
    text: str,
    rng: random.Random,
    labels: list[str] | None = None,
    speaker: str | None = None,
    introduced: frozenset[str] = frozenset(),
) -> str:
    """'Ada Lee (ada@x.com)' said the many ways people write a name with its address; now
    and then the person's label goes beside the address ('Ada Lee (manager, ada@x.com)').
    A person whose address is `introduced` (said earlier in the conversation) is named alone."""
    said: set[str] = set(introduced)
    kinds = "|".join(re.escape(lab) for lab in sorted(labels or (), key=len, reverse=True))
    pattern = re.compile(rf"(?:\b({kinds}) )?{_PERSON.pattern}") if kinds else None

    # A first name is enough later on when no one else named in the text shares it.
    firsts = [m[1].split()[0] for m in _PERSON.finditer(text)]
    people = {m[2]: m[1] for m in _PERSON.finditer(text)}
    unique = {
        f
        for f in firsts
        if f in _FIRST_NAMES and sum(n.split()[0] == f for n in set(people.values())) == 1
    }

    def say(name: str, email: str) -> str:
        # The address is given once; later the person is named (their name is enough then).
        if email in said:
            return name
        said.add(email)
        forms = banks.PERSON_FORMS
        if email == speaker:  # the writer's own address: no "their email is"
            forms = tuple(f for f in forms if not _THIRD_PERSON.search(f))
        return rng.choice(forms).format(n=name, e=email)

    def say_labelled(m: re.Match[str]) -> str:
        label, name, email = m[1], m[2], m[3]
        first = name.split()[0]
        if email in said and first in unique and rng.random() < FIRST_NAME_PROBABILITY:
            return first
        if label is not None and email in said and rng.random() < LABEL_AGAIN_DROPPED:
            return name  # who they are was said with their first mention
        if label is None or email in said or rng.random() >= LABEL_BESIDE_PROBABILITY:
            return (f"{label} " if label else "") + say(name, email)
        said.add(email)
        forms = banks.LABELLED_PERSON_FORMS
        if email == speaker:
            forms = tuple(f for f in forms if not _THIRD_PERSON.search(f))
        return rng.choice(forms).format(n=name, e=email, l=label, a=article(label))

    if pattern is None:
        return _PERSON.sub(lambda m: say(m[1], m[2]), text)
    return pattern.sub(say_labelled, text)


@functools.lru_cache(maxsize=4096)
def _possessive_pattern(names: str) -> re.Pattern[str]:
    # Compiled once per set of people: the same few are named again and again across an
    # environment's tasks, and compiling took ~5% of planning.
    links = "|".join(re.escape(w) for w in sorted(banks.OWNER_LINKS, key=len, reverse=True))
    return re.compile(
        # The noun's second word ("baggage claim") is never an owner form's participle.
        rf"\bthe ([a-z]+(?: (?!(?:kept|set|held|[a-z]+ed)\b)[a-z]+)?) (?:{links}) "
        rf"((?:[a-z]+ ){{0,2}})({names})"
        r"(?=[.,;:?!]|$| [a-z])"
    )


def _possessives(text: str, people: list[str], facts: list[str], rng: random.Random) -> str:
    """A record named again through its person said as theirs ("the claim belonging to
    passenger Sarah Graham" -> "Sarah Graham's claim"): only people the text named with
    their address, and only where the name is not followed by their address again."""
    if not people:
        return text
    names = "|".join(re.escape(n) for n in sorted(set(people), key=len, reverse=True))
    pattern = _possessive_pattern(names)

    def say(m: re.Match[str]) -> str:
        if rng.random() >= 0.65:
            return m[0]
        who = f"{m[2]}{m[3]}" if m[2] and rng.random() < 0.5 else m[3]
        return f"{who}'{'' if who.endswith('s') else 's'} {m[1]}"

    out = pattern.sub(say, text)
    if any(f in text and f not in out for f in facts):
        return text
    return out


def _reword_statuses(text: str, rng: random.Random) -> str:
    """'with status paid' said the ways people qualify a record by its state. A status of
    more words ('in cart', 'no show') is left as it is: its first word alone is no status."""

    def say(m: re.Match[str]) -> str:
        if m[1] in _STATUS_FIRST_WORDS:
            return m[0]
        return rng.choice(banks.STATUS_FORMS).format(s=m[1])

    return _STATUS_QUALIFIER.sub(say, text)


# Words that begin a status of several words, never a status alone.
_STATUS_FIRST_WORDS = frozenset({"in", "on", "at", "no", "not", "out", "off", "to", "under"})


def _customer_asks(goal: PlanGoal) -> bool:
    """Whether a customer would ask for this themselves (cancel my order; not ship it)."""
    return goal.kind in ("update", "create") or goal.verb in banks.CUSTOMER_VERBS


def _pick(bank: tuple[str, ...], rng: random.Random) -> str:
    """One phrase of a bank, its words varied (synthesis.tasks.text.lexicon)."""
    return vary(rng.choice(bank), rng)


def _single_owner(goals: list[PlanGoal]) -> tuple[str, str] | None:
    """The one person behind every goal, when there is one the task can speak as.

    A person is named with an email address; a goal naming anyone else by address rules
    the first-person voices out (the customer would be asking about a stranger's record).
    """
    owners = {g.owner for g in goals if g.owner is not None}
    if len(owners) != 1:
        return None
    (owner,) = owners
    if "@" not in owner[1]:
        return None
    for g in goals:
        if g.owner is not None:
            continue
        words = " ".join([g.target or "", *g.refs, *(v for _, v in g.values)])
        if "@" in words:
            return None
    return owner


class _Core(NamedTuple):
    """One goal in words: the record named up front (or None), the bare verb phrase, and
    whether only the agent can do it for the asker ("tell me ...", "check ...: if ...")."""

    front: str | None
    text: str
    addressed: bool = False
    # A whole sentence of its own (a question), used instead of a lead around `text`.
    whole: str | None = None
    # Said after the goal and its manner: "(if that isn't possible, tell me why)".
    tail: str = ""


# Leads whose subject is not the agent ("I'd like to {c}", "They asked us to {c}") cannot
# carry a request only the agent can do for the asker: "We need to tell me ..." is wrong.
# The doer of {c} is the last person named before it ("Would you mind if we {c}?": we).
_AGENT_WORDS = frozenset({"you", "you'd", "you're", "your", "please", "kindly"})
_OTHER_WORDS = frozenset(
    {
        "i",
        "i'd",
        "i'm",
        "i've",
        "we",
        "we've",
        "we'd",
        "let's",
        "they",
        "they'd",
        "they're",
        "their",
        "me",
        "us",
        "them",
    }
)


def addresses_agent(lead: str) -> bool:
    """Whether a lead ('Could you {c}?') makes the agent the one who does {c} for the asker."""
    before, _, after = lead.partition("{c}")
    if re.search(r"\bfor (?:me|them)\b", after):
        return False
    words = re.findall(r"[a-z']+", before.replace("{C}", "").lower())
    for word in reversed(words):
        if word in _AGENT_WORDS:
            return True
        if word in _OTHER_WORDS:
            return False
    # No one named: an imperative ("Go ahead and {c}") is the agent's; "Time to {c}" is no one's.
    return not words or words[-1] != "to"


def _leads(bank: tuple[str, ...], addressed: bool) -> tuple[str, ...]:
    return tuple(lead for lead in bank if addresses_agent(lead)) if addressed else bank


def _requests(
    cores: list[_Core],
    voice: str,
    rng: random.Random,
    register: str = "plain",
    follow_up: bool = False,
) -> list[str]:
    """Sentences asking for the goals in order: a lead per goal, or two goals in one; a
    goal whose record is named up front ("About my order: ...") keeps a sentence of its own.
    A lead that counts ("Second, ...") or closes ("Finally, ...") is used only in its place.
    """
    cores = [
        c._replace(text=c.text + _pick(banks.MANNER, rng) + c.tail, tail="")
        if c.whole is None and rng.random() < MANNER_PROBABILITY
        else c._replace(text=c.text + c.tail, tail="")
        for c in cores
    ]
    if (
        len(cores) >= 2
        and not any(c.front or c.whole for c in cores)
        and rng.random() < LIST_PROBABILITY
    ):
        # Some people simply list what they need: "In order, please: 1) ... 2) ...".
        intro = _pick(banks.LIST_INTROS, rng)
        number = rng.choice(banks.LIST_NUMBERS)
        items = [
            number.format(n=i + 1) + " " + sentence(capitalise(c.text)) for i, c in enumerate(cores)
        ]
        return [" ".join([intro, *items])]
    if (
        len(cores) == 2
        and not any(c.front or c.whole for c in cores)
        and rng.random() < JOINED_PROBABILITY
    ):
        joiner = _pick(banks.JOINERS, rng)
        text = joiner.format(a=cores[0].text, b=cores[1].text)
        cores = [_Core(None, text, cores[0].addressed or cores[1].addressed)]
    out = []
    n = len(cores)
    for i, core in enumerate(cores):
        if core.whole is not None and core.front is None:
            if i and rng.random() < 0.6:
                link = _pick(banks.QUESTION_LINKS, rng)
                out.append(f"{link} {_lower_first(core.whole)}")
            else:
                out.append(core.whole)
            continue
        lead = _lead(voice, i, n, core.addressed, core.front is not None, rng, register, follow_up)
        request = sentence(lead.format(c=core.text, C=capitalise(core.text)))
        if core.front is None:
            out.append(request)
        elif core.front.endswith((":", ",")):
            out.append(f"{core.front} {_lower_first(_drop_colon_lead(request))}")
        else:
            out.append(f"{core.front} {request}")
    return out


def _lead(
    voice: str,
    i: int,
    n: int,
    addressed: bool,
    fronted: bool,
    rng: random.Random,
    register: str = "plain",
    follow_up: bool = False,
) -> str:
    """The words around goal i of n: a bank lead, or a link word and a frame composed; the
    first in the writer's register (banks.REGISTER_LEADS) four times in five. `follow_up`:
    the first goal is a later request of a conversation, so no lead that starts one."""
    own = _leads(banks.REGISTER_LEADS.get(register, ()), addressed)
    if follow_up:
        own = tuple(lead for lead in own if not _STARTS.search(lead))
    if i == 0 and own and rng.random() < 0.8:
        return rng.choice(own)  # as written: a register's words are its own
    if i == 0:
        bank = _leads(banks.FIRST_LEADS[voice], addressed)
        if follow_up:
            bank = tuple(lead for lead in bank if not _STARTS.search(lead)) or bank
        lead = _pick(bank, rng)
        plain = not lead.startswith("{C}") and ":" not in lead
        if not follow_up and not fronted and plain and rng.random() < PREFACE_PROBABILITY:
            lead = f"{_pick(banks.FIRST_PREFACES, rng)} {_lower_first(lead)}"
        return lead
    if rng.random() < COMPOSED_PROBABILITY:
        link = _pick(banks.NEXT_LINKS, rng)
        frame = _pick(_leads(banks.NEXT_FRAMES[voice], addressed), rng)
        return f"{link} {frame}"
    bank = banks.NEXT_LEADS[voice]
    if i == 1 and n > 2:
        bank = bank + banks.SECOND_LEADS
    if i == n - 1 and n > 2:
        bank = bank + banks.LAST_LEADS
    return _pick(_leads(bank, addressed), rng)


# Leads that start a conversation ("First, ...", "Okay, here goes: ..."), not a later request.
_STARTS = re.compile(r"(?i)\b(?:first|start|begin|here goes)\b")


def _drop_colon_lead(request: str) -> str:
    """'Quick one: cancel it.' after 'About my order:' would stack two colons: drop the first."""
    head, sep, rest = request.partition(": ")
    if sep and len(head.split()) <= 4:
        return capitalise(rest)
    return request


def _lower_first(text: str) -> str:
    """A sentence going on after a colon or comma: lower case, except 'I' and names."""
    first = text.split(" ", 1)[0]
    if first in ("I", "I'd", "I'm", "I've", "I'll") or first[1:2].isupper():
        return text
    return text[:1].lower() + text[1:]


# -- one goal -------------------------------------------------------------------------------


def _bank(table: dict[str, tuple[str, ...]], arch: str) -> tuple[str, ...]:
    """An archetype's own entries beside the generic ones (the generic alone if it has none)."""
    return table.get(arch, ()) + table.get(banks.GENERIC, ())


def _target(goal: PlanGoal, voice: str, rng: random.Random) -> str:
    """How this voice names the record the goal acts on."""
    if goal.owner is not None and goal.own_target:
        own = _adjective_status(goal.own_target)
        if voice in ("customer", "on_behalf"):
            forms = banks.MINE if voice == "customer" else banks.THEIRS
            return _pick(forms, rng).format(own=own)
        if rng.random() < 0.6:
            label, who = goal.owner
            return _pick(banks.OWNED, rng).format(own=own, label=label, who=who)
    return goal.target or "it"


def _adjective_status(own: str) -> str:
    """'order with status paid' -> 'paid order': people put a status before the noun."""
    m = re.fullmatch(r"([\w-]+) with status ([a-z]+)", own)
    return f"{m[2]} {m[1]}" if m else own


# Templates that cannot take "it" for their record: a particle before it ("call off it") or
# a possessive ("it's price").
_NO_PRONOUN = re.compile(r"\b(?:off|out|up|in|through|down|over) \{t\}|\{t\}'")


def _core(goal: PlanGoal, voice: str, arch: str, rng: random.Random, inner: bool = False) -> _Core:
    """One goal in words (see _Core); an `inner` one (the change a condition is about)
    names its record in place, never up front."""
    front = None
    pronoun = False
    if (
        not inner
        and goal.kind in ("update", "transition")
        and goal.target
        and rng.random() < FRONTED_PROBABILITY
    ):
        fronts = banks.FRONTS + (banks.FRONTS_STAFF if voice == "staff" else ())
        front = _pick(fronts, rng).format(t=_target(goal, voice, rng))
        pronoun = True
    if goal.kind == "update" and (goal.values or goal.withheld):
        return _Core(front, _update(goal, voice, arch, rng, pronoun))
    if goal.kind == "transition":
        return _Core(front, _transition(goal, voice, rng, pronoun))
    if goal.kind == "create":
        return _Core(None, _create(goal, voice, arch, rng))
    if goal.kind == "ask":
        if rng.random() < WHOLE_QUESTION_PROBABILITY:
            return _Core(None, ask_sentence(goal, rng), True, whole=question_sentence(goal, rng))
        return _Core(None, ask_sentence(goal, rng), True)
    if goal.kind == "conditional":
        then = _core(goal.then, voice, arch, rng, inner=True).text if goal.then else goal.verb
        return _Core(None, conditional_sentence(goal, then, rng), True)
    return _Core(None, action_sentence(goal, rng))


def _update(goal: PlanGoal, voice: str, arch: str, rng: random.Random, pronoun: bool) -> str:
    target = "it" if pronoun else _target(goal, voice, rng)
    if not goal.values:  # the new value is held back for a later turn: the field alone
        templates = banks.UPDATE_WITHHELD
        if target == "it":
            templates = tuple(t for t in templates if not _NO_PRONOUN.search(t))
        return _pick(templates, rng).format(t=target, what=goal.withheld[0])
    what, value = goal.values[0]
    templates = _bank(banks.UPDATE, arch)
    if target == "it":
        templates = tuple(t for t in templates if not _NO_PRONOUN.search(t))
    template = _pick(templates, rng)
    return template.format(t=target, what=what, v=value_in_context(what, value))


def ask_sentence(goal: PlanGoal, rng: random.Random | None = None) -> str:
    """An information-seeking goal, asked of the agent: 'tell me the status of the order ...'."""
    if rng is None:
        return f"tell me {goal.question}"
    return _pick(banks.ASK_FORMS, rng).format(q=goal.question)


def question_sentence(goal: PlanGoal, rng: random.Random) -> str | None:
    """The same goal as a question of its own: 'What is the status of ...?' for a noun
    phrase, 'Can you tell me how many orders Ada has?' for a clause."""
    q = goal.question or ""
    bank = banks.ASK_WHOLE if q.startswith("the ") else banks.ASK_WHOLE_CLAUSE
    return sentence(_pick(bank, rng).format(q=q, Q=capitalise(q)))


def conditional_sentence(goal: PlanGoal, then: str, rng: random.Random | None = None) -> str:
    """'check the booking ...: if it is still confirmed, cancel it; otherwise tell me its
    status' (`then` is the mutation's own phrase, on 'it')."""
    form = (
        "check {t}: if it is still {cond}, {then}; otherwise tell me {other}"
        if rng is None
        else _pick(banks.CONDITIONAL_FORMS, rng)
    )
    return form.format(t=goal.target, cond=goal.condition, then=then, other=goal.otherwise)


def _transition(goal: PlanGoal, voice: str, rng: random.Random, pronoun: bool = False) -> str:
    target = "it" if pronoun else _target(goal, voice, rng)
    pronoun = target == "it"
    status = value_words(goal.to_status) if goal.to_status else ""
    by_verb = banks.TRANSITION_BY_VERB.get(goal.verb, ())
    generic = banks.TRANSITION[banks.GENERIC] if status else ()
    if pronoun:
        by_verb = tuple(t for t in by_verb if not _NO_PRONOUN.search(t))
        generic = tuple(t for t in generic if not _NO_PRONOUN.search(t))
    if goal.verb in STATUS_VERBS or not by_verb:
        if not generic:
            return f"{goal.verb} {target}"
        if goal.verb not in STATUS_VERBS and rng.random() < 0.5:
            text = f"{field_words(goal.verb)} {target}"
            if goal.says_result:
                text += " " + _pick(banks.RESULT_TAILS, rng).format(status=status)
            return text
        return _pick(generic, rng).format(t=target, status=status)
    if generic and rng.random() < 0.25:
        return _pick(generic, rng).format(t=target, status=status)
    text = _pick(by_verb, rng).format(t=target)
    if goal.says_result and status and not text.endswith(status):
        text += " " + _pick(banks.RESULT_TAILS, rng).format(status=status)
    return text


def _create(goal: PlanGoal, voice: str, arch: str, rng: random.Random) -> str:
    label = goal.label or "record"
    adjective = rng.choice(banks.NEW_WORDS)
    a_label = with_article(f"{adjective} {label}".strip())
    if goal.owner is not None and voice in ("customer", "on_behalf"):
        mine = voice == "customer"
        if goal.own_target:
            for_part = " for " + goal.own_target
        elif mine:
            for_part = rng.choice(banks.CREATE_FOR_MINE)
        else:
            for_part = " for them"
    elif goal.refs:
        for_part = rng.choice(banks.CREATE_FOR).format(x=goal.refs[0])
        if goal.refs[1:]:
            for_part += rng.choice(banks.CREATE_ALSO).format(x=join_phrases(goal.refs[1:]))
    else:
        for_part = ""
    with_part = ""
    if goal.values:
        said = [_value_phrase(what, value, rng) for what, value in goal.values]
        with_part = rng.choice(banks.CREATE_WITH).format(x=join_phrases(said))
    if goal.withheld:  # named, its value given when asked (a multi-turn opening)
        fields = join_phrases([with_article(what) for what in goal.withheld])
        with_part += rng.choice(banks.CREATE_WITHHELD).format(x=fields)
    if goal.verb not in _CREATE_VERBS and not _echoes(goal.verb, label) and rng.random() < 0.3:
        # The tool's own verb (book, order, enrol) is often the most natural one.
        return f"{field_words(goal.verb)} {a_label}{for_part}{with_part}"
    template = _pick(_bank(banks.CREATE_VERBS, arch), rng)
    return template.format(a_label=a_label, **{"for": for_part, "with": with_part})


def _echoes(verb: str, label: str) -> bool:
    """Whether the tool's verb repeats the new record's noun ('assign an assignment',
    'transfer a transfer'), which no one says."""
    head = label.split()[-1].lower() if label.split() else ""
    return head[:5] == verb.lower()[:5] or verb.lower() in label.lower()


def _value_phrase(what: str, value: str, rng: random.Random) -> str:
    said = value_in_context(what, value)
    form = rng.choice(
        (
            "{w} {v}",
            "{w} {v}",
            "{w} {v}",
            "the {w} {v}",
            "{w} set to {v}",
            "{v} as the {w}",
            "{w}: {v}",
            "{w} of {v}",
            "the {w} as {v}",
        )
    )
    return form.format(w=what, v=said)


def action_sentence(goal: PlanGoal, rng: random.Random | None = None) -> str:
    """A tool call said through the tool's own description, with its values and targets."""
    summary = goal.description.strip().rstrip(".")
    if summary.lower() in ("", field_words(goal.tool).lower()):  # no docstring: the name's
        summary = name_phrase(goal.tool, bool(goal.target))
    first, _, _ = summary.partition(". ")
    body = imperative(first[:1].lower() + first[1:])
    details = [f"{what} {value}" for what, value in goal.values]
    if goal.target:
        details.insert(0, goal.target)
    if rng is None:
        return body + (" — " + ", ".join(details) if details else "")
    detail_text = ""
    if details:
        detail_text = rng.choice(banks.ACTION_DETAILS).format(x=join_phrases(details))
    return rng.choice(banks.ACTION_FORMS).format(body=body, details=detail_text)


# Session verbs tool names run together, as a request says them before a system's name.
_SESSION_VERBS = {"login": "log in to", "logout": "log out of", "signin": "sign in to"}


def name_phrase(tool_name: str, definite: bool = False) -> str:
    """An undocumented tool's name as a request says it: a verb and its one object get an
    article ("reserve a flight", "cancel the reservation" when the task names the record);
    longer names ("turn on wifi") and plural objects stay as they are."""
    words = field_words(tool_name).lower().split()
    if words[0] in _SESSION_VERBS and len(words) > 1:  # login_food_platform
        return f"{_SESSION_VERBS[words[0]]} the {' '.join(words[1:])}"
    if len(words) != 2 or not words[1].isalpha() or words[1].endswith("s"):
        return " ".join(words)
    article = "the" if definite else ("an" if words[1][0] in "aeiou" else "a")
    return f"{words[0]} {article} {words[1]}"


# Third-person forms a docstring opens with that are not "base + s" (tau2's "Refuels data").
_IRREGULAR_THIRD = {"does": "do", "goes": "go", "has": "have", "is": "be"}
# Words ending in s that are not verbs in the third person.
_NOT_THIRD = {"news", "status", "series", "analysis", "bus", "canvas", "this", "its", "his"}
# Words that follow a plural noun, seldom a verb: "records for", "flights matching".
_AFTER_A_NOUN = {"of", "for", "about", "per", "matching", "that", "which", "in", "on", "by"}


def imperative(body: str) -> str:
    """A description opening with a verb in the third person ("sends a payment request",
    "modifies the order", as docstrings say what a method does) opened with the verb as a
    request says it ("send a payment request", "modify the order"); anything else as it is."""
    word, space, rest = body.partition(" ")
    if not word.isalpha() or not word.islower() or word in _NOT_THIRD:
        return body
    if rest.split(" ", 1)[0] in _AFTER_A_NOUN:
        return body  # "details of the order", "flights matching ...": a plural noun
    if word in _IRREGULAR_THIRD:
        verb = _IRREGULAR_THIRD[word]
    elif len(word) > 4 and word.endswith("ies"):
        verb = word[:-3] + "y"
    elif word.endswith(("sses", "shes", "ches", "xes", "zes")):
        verb = word[:-2]
    elif len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        verb = word[:-1]
    else:
        return body
    return verb + space + rest


# -- helpers the planners use ---------------------------------------------------------------


def tool_verb(tool_name: str) -> str:
    return tool_name.split("_")[0].lower()


def fresh_text(
    rng: random.Random, fname: str, taken: set[str], topic: TextTopic | None = None
) -> str:
    """A plausible new value for text field `fname`, unlike any casefolded value in `taken`:
    a person's name, email address or phone number, or else what a person writes in such a
    field about `topic` (a subject, a message, a memo)."""
    topic = topic or TextTopic(label="request")
    value = ""
    for _ in range(50):
        if "email" in fname:
            first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
            value = f"{first}.{last}@example.com".lower()
        elif "phone" in fname:
            value = f"+1-555-{rng.randint(100, 999)}-{rng.randint(1000, 9999)}"
        elif "name" in fname:
            value = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
        else:
            value = free_text(rng, fname, topic)
        if value.casefold() not in taken:
            return value
    return f"{value} ({rng.randint(2, 99)})"
