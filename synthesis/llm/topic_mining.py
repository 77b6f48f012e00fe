"""The `topic` stage: mine topics (business domains to build environments for) from a task corpus.

A corpus is a JSONL file of user requests (`{"id": ..., "request": ...}`, one a line;
data/task_corpus.jsonl ships a small one). The model reads each request on its own (the
requests are sent together, up to the client's concurrency) and says whether it needs state
kept in a system (a booking, an order, an account), which archetype such a system is, and
names the business. Everything after that is plain code, so it is reproducible and
explainable: near-identical requests are never asked about, stateless
requests and answers naming a topic already kept are dropped, the rest are ranked by the
model's usefulness score (ties by request id) and the profile's share is taken. Each kept
answer becomes a `Topic` whose vocabulary is borrowed from the closest catalogue topic of
its archetype (the offline spec generator needs one), and is kept only when that generator
compiles it. A `project` topic's vocabulary is the data its folder holds, so it is not
borrowed (the folder would be a catalogue topic's again): the `project_topic` stage has the
model write it (synthesis.llm.project_topic). Every request that is not kept says why;
nothing here raises past the stage.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from synthesis.config import DATA_DIR
from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.archetypes.naming import NamingError, identifier
from synthesis.environments.specgen import generate_spec
from synthesis.llm.client import LLMClient, LLMError
from synthesis.llm.ledger import LLMCall
from synthesis.llm.project_topic import STAGE as STAGE_WRITTEN
from synthesis.llm.project_topic import WrittenVocabulary, with_vocabulary, write_vocabulary
from synthesis.llm.structured import ask_structured
from synthesis.models import Topic

STAGE = "topic"
CORPUS_PATH = DATA_DIR / "task_corpus.jsonl"
NO_ARCHETYPE = "none"
# A title names a business ("Dental clinic"), not a sentence; it becomes the topic id.
MAX_TITLE = 60
MAX_DESCRIPTION = 300
# A corpus line longer than this is a paste, not a request: skipped, never sent.
MAX_REQUEST = 2000
# Requests whose content words overlap this much (Jaccard) are one request asked twice.
NEAR_DUPLICATE = 0.75
TOPIC_PREFIX = "mined_"
# Archetypes whose topics get a vocabulary written for them rather than borrowed.
WRITTEN_VOCABULARY = "project"

# What each archetype's environments keep, for the prompt. An archetype missing here is
# still offered (by name): the enum is built from the registry, not from this table.
ARCHETYPE_HINTS = {
    "approvals": "requests that someone approves or rejects (expenses, leave, purchases)",
    "booking": "appointments with a provider at a business (clinic, salon, restaurant table)",
    "catalogue_search": "a product catalogue searched and compared by attributes and price",
    "composition": "two systems in one business (e.g. orders paid from prepaid accounts)",
    "inventory": "stock of items in locations: reserve, restock, move",
    "ledger": "accounts with balances: transfers, top-ups, statements",
    "messaging": "channels and messages of a community or team",
    "order_lifecycle": "customer orders of products: place, change, cancel, ship, refund",
    "project": "a team's folder of data files (ledgers, reports) worked on with files and a shell",
    "scheduling": "rooms or resources booked for events in time slots",
    "ticketing": "support or service tickets: open, assign, escalate, resolve",
    "workspace": "a folder of documents: create, rename, tag, edit notes",
}


def archetype_enum(archetypes: Iterable[str]) -> list[str]:
    return [*sorted(archetypes), NO_ARCHETYPE]


def topic_schema(archetypes: Iterable[str]) -> dict[str, Any]:
    """The answer's JSON schema; `archetype` is an enum of the archetypes that have a
    generator (and "none"), so the model cannot name one the build could not make."""
    return {
        "type": "object",
        "properties": {
            "stateful": {"type": "boolean"},
            "archetype": {"type": "string", "enum": archetype_enum(archetypes)},
            "title": {"type": "string"},
            "description": {"type": "string"},
            "usefulness": {"type": "number", "minimum": 0, "maximum": 1},
            "reason": {"type": "string"},
        },
        "required": ["stateful", "archetype", "title", "description", "usefulness", "reason"],
        "additionalProperties": False,
    }


SCHEMA: dict[str, Any] = topic_schema(supported_archetypes())
PROMPT = (
    "You sort requests that users sent to assistants. For one request, decide whether "
    "fulfilling it needs records kept in a business's system (a booking, an order, an "
    "account, a ticket, a document) that the assistant would read or change: that is "
    "stateful. Trivia, maths, jokes, writing and chit-chat are not. For a stateful request "
    "choose the archetype whose system it needs, name the business in a short title (at "
    f"most {MAX_TITLE} characters, a kind of business, e.g. 'Dental clinic', no person or "
    "brand names), describe in one sentence who uses the system and for what, and score "
    "0..1 how useful an environment for such requests is for training assistants (common, "
    "several steps, clear right answer score higher). For a stateless request use archetype "
    '"none", an empty title and description, and usefulness 0. Answer with a JSON object '
    '{"stateful", "archetype", "title", "description", "usefulness", "reason"} and nothing '
    "else."
)


class CorpusError(ValueError):
    """A corpus that cannot be read at all; the message names the file."""


@dataclass(frozen=True)
class CorpusRequest:
    id: str
    request: str
    line: int


@dataclass(frozen=True)
class Dropped:
    """A request (or corpus line) that gave no topic, and why."""

    id: str
    reason: str

    def row(self) -> dict[str, str]:
        return {"id": self.id, "reason": self.reason}


@dataclass(frozen=True)
class Candidate:
    """A stateful request's accepted answer."""

    request: CorpusRequest
    archetype: str
    title: str
    description: str
    usefulness: float


@dataclass(frozen=True)
class Kept:
    """A mined topic and where it came from (for the asset's metadata)."""

    topic: Topic
    request_id: str
    usefulness: float
    vocabulary_from: str


@dataclass
class MinedTopics:
    kept: list[Kept] = field(default_factory=list)
    dropped: list[Dropped] = field(default_factory=list)
    attempts: list[LLMCall] = field(default_factory=list)

    @property
    def topics(self) -> list[Topic]:
        return [k.topic for k in self.kept]

    def artifact(self) -> dict[str, list[dict[str, Any]]]:
        return {
            "topics": [t.model_dump(mode="json") for t in self.topics],
            "dropped": [d.row() for d in self.dropped],
        }


# --------------------------------------------------------------------------- the corpus


def load_corpus(path: Path = CORPUS_PATH) -> tuple[list[CorpusRequest], list[Dropped]]:
    """The corpus's requests in file order, and its malformed lines (each with the line
    number and the problem). A malformed line is skipped: one bad paste must not stop a
    build. A file that cannot be read at all raises CorpusError."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise CorpusError(f"corpus: cannot read {path}: {exc}") from exc
    requests: list[CorpusRequest] = []
    dropped: list[Dropped] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        entry, problem = _parse_line(line, seen)
        if problem is not None:
            rid = entry.get("id")
            where = rid.strip() if isinstance(rid, str) and rid.strip() else f"line {number}"
            dropped.append(Dropped(where, f"malformed: {path.name} line {number}: {problem}"))
            continue
        seen.add(entry["id"])
        requests.append(CorpusRequest(entry["id"], entry["request"].strip(), number))
    return requests, dropped


def _parse_line(line: str, seen: set[str]) -> tuple[dict[str, Any], str | None]:
    """The line's object and what is wrong with it, or None."""
    try:
        entry = json.loads(line)
    except ValueError as exc:
        return {}, f"not JSON ({exc})"
    if not isinstance(entry, dict):
        return {}, f"expected an object with 'id' and 'request', got {type(entry).__name__}"
    rid, request = entry.get("id"), entry.get("request")
    if not isinstance(rid, str) or not rid.strip():
        return entry, f"'id' must be a non-empty text, not {rid!r}"
    if rid in seen:
        return {}, f"duplicate id {rid!r}"
    if not isinstance(request, str) or not request.strip():
        return entry, f"'request' must be a non-empty text, not {request!r}"
    if len(request) > MAX_REQUEST:
        return entry, f"'request' is {len(request)} characters long; at most {MAX_REQUEST}"
    return entry, None


# --------------------------------------------------------------------------- similarity

_STOPWORDS = frozenset(
    "a an and are at be by can could do for from have i if in into is it its me my next no "
    "of on or our please same the their this to up us was we what when will with would you "
    "your".split()
)


def content_words(text: str) -> frozenset[str]:
    """The words that carry a text's meaning: casefolded, without stopwords or a plural -s."""
    words = re.findall(r"[a-z0-9]+", text.casefold())
    return frozenset(_stem(w) for w in words if w not in _STOPWORDS)


def _stem(word: str) -> str:
    # Enough for "checkup"/"check-up" style variants and plurals; not a real stemmer.
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def near_duplicates(requests: list[CorpusRequest]) -> tuple[list[CorpusRequest], list[Dropped]]:
    """Requests with a near-identical earlier request (file order) are dropped before any
    call: asking twice would spend twice for one topic."""
    unique: list[tuple[CorpusRequest, frozenset[str]]] = []
    dropped: list[Dropped] = []
    for req in requests:
        words = content_words(req.request)
        same = next((u for u, w in unique if jaccard(words, w) >= NEAR_DUPLICATE), None)
        if same is None:
            unique.append((req, words))
        else:
            dropped.append(Dropped(req.id, f"duplicate: of {same.id} (near-identical request)"))
    return [u for u, _ in unique], dropped


# --------------------------------------------------------------------------- the model's part


def answer_fault(value: dict[str, Any]) -> str | None:
    """Why a schema-valid answer cannot be used, or None (`accept` of the structured call)."""
    if not value["stateful"]:
        return None  # dropped as stateless whatever else it says
    if value["archetype"] == NO_ARCHETYPE:
        return "archetype: a stateful request needs an archetype, not 'none'"
    title = value["title"].strip()
    if not title:
        return "title: empty"
    if len(title) > MAX_TITLE:
        return f"title: {len(title)} characters long; at most {MAX_TITLE}"
    try:
        identifier(title, "title")  # it becomes the topic id and the class name
    except NamingError as exc:
        return f"title: {exc}"
    description = value["description"].strip()
    if not description or len(description) > MAX_DESCRIPTION:
        return f"description: {len(description)} characters; 1..{MAX_DESCRIPTION} expected"
    return None


def request_messages(req: CorpusRequest, archetypes: Iterable[str]) -> list[dict[str, Any]]:
    lines = ["Archetypes:"]
    lines += [f"- {a}: {ARCHETYPE_HINTS.get(a, a.replace('_', ' '))}" for a in sorted(archetypes)]
    lines += [f"Request id: {req.id}", f"Request: {req.request}"]
    return [
        {"role": "system", "content": PROMPT},
        {"role": "user", "content": "\n".join(lines)},
    ]


def classify(
    client: LLMClient, req: CorpusRequest, archetypes: set[str], *, seed: int = 0
) -> tuple[Candidate | Dropped, list[LLMCall]]:
    """The request's candidate topic, or why it gives none (`stateless: ...`, or
    `topic: <why>` when no usable answer came: rejected, unanswered, or stopped)."""
    try:
        answer = ask_structured(
            client,
            request_messages(req, archetypes),
            stage=STAGE,
            artifact_id=req.id,
            schema=topic_schema(archetypes),
            seed=seed,
            accept=answer_fault,
        )
    except LLMError as exc:  # rejected, unanswered, or stopped (budget, deadline, breaker)
        return Dropped(req.id, f"{STAGE}: {exc.reason}"), list(exc.attempts)
    value = answer.value
    if not value["stateful"] or value["archetype"] == NO_ARCHETYPE:
        why = " ".join(value["reason"].split())[:200] or "the model found no state to keep"
        return Dropped(req.id, f"stateless: {why}"), answer.attempts
    candidate = Candidate(
        request=req,
        archetype=value["archetype"],
        title=value["title"].strip(),
        description=" ".join(value["description"].split()),
        usefulness=float(value["usefulness"]),
    )
    return candidate, answer.attempts


# --------------------------------------------------------------------------- plain code


def title_key(title: str) -> tuple[str, ...]:
    """A title as dedupe compares it: "The Dental Clinics" and "dental clinic" are one."""
    return tuple(sorted(content_words(title)))


def same_topics(candidates: list[Candidate]) -> tuple[list[Candidate], list[Dropped]]:
    """One candidate per (normalised title, archetype): the most useful, then the lowest id."""
    best: dict[tuple[tuple[str, ...], str], Candidate] = {}
    for c in sorted(candidates, key=rank_key):
        best.setdefault((title_key(c.title), c.archetype), c)
    winners = {id(c) for c in best.values()}
    dropped = [
        Dropped(
            c.request.id,
            f"duplicate: of {best[(title_key(c.title), c.archetype)].request.id} "
            f"(same topic {c.title!r}, {c.archetype})",
        )
        for c in candidates
        if id(c) not in winners
    ]
    return [c for c in candidates if id(c) in winners], dropped


def rank_key(c: Candidate) -> tuple[float, str]:
    # Usefulness rounded so float noise in the answer cannot reorder equals; then the id.
    return (-round(c.usefulness, 3), c.request.id)


def topic_ids(candidates: list[Candidate]) -> dict[int, str]:
    """`mined_<title>` per candidate; a title kept under two archetypes adds the archetype,
    so ids stay unique (and do not depend on which of them makes the cut)."""
    slugs = {id(c): identifier(c.title, "title") for c in candidates}
    archetypes: dict[str, set[str]] = {}
    for c in candidates:
        archetypes.setdefault(slugs[id(c)], set()).add(c.archetype)
    ids = {}
    for c in candidates:
        slug = slugs[id(c)]
        shared = len(archetypes[slug]) > 1
        ids[id(c)] = TOPIC_PREFIX + (f"{slug}_{c.archetype}" if shared else slug)
    return ids


def closest_template(candidate: Candidate, catalogue: list[Topic]) -> Topic | None:
    """The catalogue topic of the candidate's archetype whose words overlap its title and
    description most (ties: the lowest id): the vocabulary a mined topic borrows."""
    words = content_words(f"{candidate.title} {candidate.description}")
    same = [t for t in catalogue if t.archetype == candidate.archetype and not t.source]
    if not same:
        return None

    def overlap(t: Topic) -> tuple[int, str]:
        theirs = content_words(f"{t.title} {t.description} {t.topic_id.replace('_', ' ')}")
        return (-len(words & theirs), t.topic_id)

    return min(same, key=overlap)


# Writes the vocabulary of a project topic (its id, title and description set) for the
# request it was mined from: `mine_topics` binds the client and the seed.
VocabularyWriter = Callable[[Topic, str], WrittenVocabulary]


def to_topic(
    candidate: Candidate,
    topic_id: str,
    catalogue: list[Topic],
    writer: VocabularyWriter | None = None,
) -> tuple[Kept | Dropped, list[LLMCall]]:
    """The candidate as a Topic the offline spec generator compiles, or why not; and the
    calls made for it (a project topic's vocabulary, when a `writer` is given)."""
    rid = candidate.request.id
    topic = Topic(
        topic_id=topic_id,
        title=candidate.title,
        archetype=candidate.archetype,
        description=candidate.description,
    )
    if writer is not None and candidate.archetype == WRITTEN_VOCABULARY:
        written = writer(topic, candidate.request.request)
        if written.vocabulary is None:
            return Dropped(rid, written.reason or STAGE), written.attempts
        # Checked by the stage as generate_spec would: spec, folder and tasks.
        topic = with_vocabulary(topic, written.vocabulary)
        return Kept(topic, rid, candidate.usefulness, STAGE_WRITTEN), written.attempts
    template = closest_template(candidate, catalogue)
    if template is None:
        why = f"vocabulary: no catalogue topic of archetype {candidate.archetype} to borrow from"
        return Dropped(rid, why), []
    try:
        topic = with_vocabulary(topic, template.vocabulary)
        generate_spec(topic)
    except Exception as exc:  # noqa: BLE001 - any failure is this topic's, recorded
        return Dropped(rid, f"spec: {type(exc).__name__}: {exc}"), []
    return Kept(topic, rid, candidate.usefulness, template.topic_id), []


def select(
    candidates: list[Candidate],
    catalogue: list[Topic],
    limit: int,
    writer: VocabularyWriter | None = None,
) -> MinedTopics:
    """Deduplicate, rank and take up to `limit` topics that compile; say why for the rest.
    `writer`: writes project topics' vocabularies (without one they borrow, as the others);
    a project topic whose vocabulary is rejected gives its place to the next candidate."""
    unique, dropped = same_topics(candidates)
    ranked = sorted(unique, key=rank_key)
    ids = topic_ids(ranked)
    out = MinedTopics(dropped=dropped)
    for rank, c in enumerate(ranked, start=1):
        if len(out.kept) >= limit:
            out.dropped.append(
                Dropped(
                    c.request.id,
                    f"cut: rank {rank} of {len(ranked)} (usefulness {c.usefulness:.2f}); "
                    f"the profile takes {limit}",
                )
            )
            continue
        result, calls = to_topic(c, ids[id(c)], catalogue, writer)
        out.attempts += calls
        (out.kept if isinstance(result, Kept) else out.dropped).append(result)
    return out


def mine_topics(
    client: LLMClient,
    requests: list[CorpusRequest],
    catalogue: list[Topic],
    limit: int,
    *,
    archetypes: set[str] | None = None,
    seed: int = 0,
) -> MinedTopics:
    """Up to `limit` topics mined from `requests`; every other request is in `dropped`
    (in corpus order) with its reason. `catalogue` lends the vocabularies."""
    archetypes = supported_archetypes() if archetypes is None else archetypes
    unique, dropped = near_duplicates(requests)
    candidates: list[Candidate] = []
    attempts: list[LLMCall] = []
    # Asked at once, as the other stages ask: each answer is the request's alone (results
    # in corpus order), and a request the endpoint leaves hanging is cut as soon as the
    # others' answers adapt the timeout (synthesis.llm.timeouts), not after the ceiling
    # the build's first requests are given (asked one at a time, the first hang of the
    # build waited the whole configured timeout).
    workers = max(1, min(client.settings.concurrency, len(unique)))
    with ThreadPoolExecutor(max_workers=workers) as threads:
        results = list(
            threads.map(lambda req: classify(client, req, archetypes, seed=seed), unique)
        )
    for result, calls in results:
        attempts += calls
        (candidates if isinstance(result, Candidate) else dropped).append(result)
    # The catalogue's own project folders, which a written vocabulary must not copy.
    taken = [t.vocabulary for t in catalogue if t.archetype == WRITTEN_VOCABULARY]

    def writer(topic: Topic, request: str) -> WrittenVocabulary:
        return write_vocabulary(client, topic, request, seed=seed, taken=taken)

    out = select(candidates, catalogue, limit, writer)
    order = {r.id: r.line for r in requests}
    out.dropped = sorted(dropped + out.dropped, key=lambda d: order[d.id])
    out.attempts = attempts + out.attempts
    return out


def mine_corpus(
    client: LLMClient,
    path: Path,
    catalogue: list[Topic],
    limit: int,
    *,
    seed: int = 0,
) -> MinedTopics:
    """`mine_topics` over the corpus file at `path`. Its malformed lines come first in
    `dropped`; a file that cannot be read is one dropped row (id "corpus"), not an error."""
    try:
        requests, malformed = load_corpus(path)
    except CorpusError as exc:
        return MinedTopics(dropped=[Dropped("corpus", str(exc))])
    out = mine_topics(client, requests, catalogue, limit, seed=seed)
    out.dropped = malformed + out.dropped
    return out
