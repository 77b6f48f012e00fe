"""The topic catalogue: domains shipped in data/topics.json that environments are built for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from synthesis import codec
from synthesis.config import DATA_DIR
from synthesis.environments.values import BusinessHours
from synthesis.models import Topic

CATALOGUE_PATH = DATA_DIR / "topics.json"


class CatalogueError(ValueError):
    """A catalogue that cannot be used as it is; the message names the file and the entry."""


def load_catalogue(path: Path = CATALOGUE_PATH, *, known: set[str] | None = None) -> list[Topic]:
    """Every topic in the catalogue, sorted by id.

    Raises CatalogueError naming the entry for a malformed entry, a duplicate id, or an
    archetype nobody knows (`known`: every archetype name that may appear; a typo must not
    silently build nothing).
    """
    try:
        raw = codec.read_json(path)
    except OSError as exc:
        raise CatalogueError(f"catalogue {path}: cannot read: {exc.strerror or exc}") from exc
    except ValueError as exc:
        raise CatalogueError(f"catalogue {path}: not valid JSON: {exc}") from exc
    entries = raw.get("topics") if isinstance(raw, dict) else None
    if not isinstance(entries, list):
        raise CatalogueError(f"catalogue {path}: expected an object with a 'topics' list")
    topics: list[Topic] = []
    seen: set[str] = set()
    for i, entry in enumerate(entries):
        where = entry.get("topic_id") if isinstance(entry, dict) else None
        try:
            topic = Topic.model_validate(entry)
        except Exception as exc:  # noqa: BLE001 - re-raised with the entry that caused it
            errors = getattr(exc, "errors", lambda: [])()
            detail = "; ".join(_error_text(e) for e in errors) or str(exc)
            raise CatalogueError(
                f"catalogue {path}: entry {i} ({where!r}) is malformed: {detail}"
            ) from exc
        if topic.topic_id in seen:
            raise CatalogueError(f"catalogue {path}: duplicate topic id {topic.topic_id!r}")
        seen.add(topic.topic_id)
        try:
            check_vocabulary(topic)
        except CatalogueError as exc:
            raise CatalogueError(f"catalogue {path}: {exc}") from exc
        if known is not None and topic.archetype and topic.archetype not in known:
            raise CatalogueError(
                f"catalogue {path}: topic {topic.topic_id!r} names unknown archetype "
                f"{topic.archetype!r} (known: {', '.join(sorted(known))})"
            )
        topics.append(topic)
    return sorted(topics, key=lambda t: t.topic_id)


def _error_text(error: dict) -> str:
    """One pydantic error as "field: problem", without pydantic's "Value error, " preamble
    and without repeating the field when the problem already starts with its name."""
    where = ".".join(str(p) for p in error.get("loc", ()))
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    if not where or message.startswith(where):
        return message
    return f"{where}: {message}"


def select_topics(topics: list[Topic], supported: set[str], limit: int) -> list[Topic]:
    """Up to `limit` topics of supported archetypes, taken round-robin across archetypes.

    Round-robin keeps a small profile from being all one archetype. Entries with a `source`
    are always taken (they were asked for by name) and do not count against `limit`.
    """
    by_archetype: dict[str, list[Topic]] = {}
    for topic in topics:
        if topic.archetype in supported:
            by_archetype.setdefault(topic.archetype, []).append(topic)
    chosen: list[Topic] = []
    queues = [by_archetype[a] for a in sorted(by_archetype)]
    while len(chosen) < limit and any(queues):
        for queue in queues:
            if queue and len(chosen) < limit:
                chosen.append(queue.pop(0))
    chosen += [t for t in topics if t.source]
    return sorted(chosen, key=lambda t: t.topic_id)


def waiting_topics(topics: list[Topic], supported: set[str]) -> list[Topic]:
    """Topics whose archetype is planned but has no generator yet (reported, not built)."""
    return [t for t in topics if t.archetype and t.archetype not in supported]


# --------------------------------------------------------------------------- vocabulary items

# Vocabulary entries that list items: each a plain name, or an object saying what the item
# is ({"name": "Baguette", "category": "bread", "price": [2, 4]}). An archetype reading its
# items through `vocabulary_items` names its lists here so the catalogue is checked when it
# loads; other archetypes keep vocabularies of their own shape under the same keys (product
# rows of a catalogue search), which this check must not judge.
ITEM_LISTS: dict[str, tuple[str, ...]] = {
    "booking": ("services", "provider_names"),
    "order_lifecycle": ("products",),
}

# An item's fact -> the vocabulary list its value must come from.
_MEMBERSHIP = {"category": "categories", "specialty": "specialties"}
_ITEM_KEYS = ("name", "category", "specialty", "price", "duration")


@dataclass(frozen=True)
class VocabularyItem:
    """One product, service or provider of a topic, with what the topic says about it."""

    name: str
    category: str | None = None
    specialty: str | None = None
    price: tuple[float, float] | None = None  # the range its price lies in
    duration: int | None = None  # minutes


def vocabulary_items(topic: Topic, key: str) -> list[VocabularyItem]:
    """The items of `topic.vocabulary[key]` (KeyError when missing, as for any entry).

    Raises CatalogueError naming the topic, the entry and the item when an item is malformed:
    no name, a duplicate name, a category the topic does not declare, a price that is neither
    a number (0 or more) nor a [low, high] range, a duration that is not whole minutes.
    """
    raw = topic.vocabulary[key]
    where = f"topic {topic.topic_id!r}: vocabulary {key!r}"
    if not isinstance(raw, list):
        raise CatalogueError(f"{where} must be a list, not {type(raw).__name__}")
    items: list[VocabularyItem] = []
    seen: set[str] = set()
    for i, entry in enumerate(raw):
        item = _item(topic, entry, f"{where}[{i}]")
        if item.name.casefold() in seen:
            raise CatalogueError(f"{where}[{i}]: duplicate name {item.name!r}")
        seen.add(item.name.casefold())
        items.append(item)
    return items


def _item(topic: Topic, entry: Any, where: str) -> VocabularyItem:
    if isinstance(entry, str):
        entry = {"name": entry}
    if not isinstance(entry, dict):
        raise CatalogueError(
            f"{where} must be a name or an object with a 'name', not {type(entry).__name__}"
        )
    unknown = sorted(set(entry) - set(_ITEM_KEYS))
    if unknown:
        raise CatalogueError(
            f"{where} has unknown keys {unknown} (allowed: {', '.join(_ITEM_KEYS)})"
        )
    name = entry.get("name")
    if not isinstance(name, str) or not name.strip():
        raise CatalogueError(f"{where} needs a 'name' that is a non-empty text, not {name!r}")
    if len(name) > Topic.MAX_WORD:
        raise CatalogueError(
            f"{where} name is {len(name)} characters long; at most {Topic.MAX_WORD}"
        )
    where = f"{where} ({name!r})"
    facts: dict[str, Any] = {}
    for fact, members_key in _MEMBERSHIP.items():
        if fact not in entry:
            continue
        value, members = entry[fact], topic.vocabulary.get(members_key)
        if not isinstance(members, list):
            raise CatalogueError(
                f"{where} has a {fact} but the topic declares no {members_key!r} list"
            )
        if value not in members:
            raise CatalogueError(
                f"{where}: {fact} {value!r} is not one of the topic's {members_key} "
                f"({', '.join(map(str, members))})"
            )
        facts[fact] = value
    if "price" in entry:
        facts["price"] = _price_range(entry["price"], where)
    if "duration" in entry:
        minutes = entry["duration"]
        if not isinstance(minutes, int) or isinstance(minutes, bool) or not 0 < minutes <= 1440:
            raise CatalogueError(
                f"{where}: duration must be whole minutes (1–1440), not {minutes!r}"
            )
        facts["duration"] = minutes
    return VocabularyItem(name=name, **facts)


def _price_range(raw: Any, where: str) -> tuple[float, float]:
    def number(x: Any) -> bool:
        return isinstance(x, (int, float)) and not isinstance(x, bool) and x >= 0

    if number(raw):
        return (float(raw), float(raw))
    if isinstance(raw, list) and len(raw) == 2 and all(number(x) for x in raw) and raw[0] <= raw[1]:
        return (float(raw[0]), float(raw[1]))
    raise CatalogueError(
        f"{where}: price must be a number (0 or more) or a [low, high] range, not {raw!r}"
    )


def business_hours(topic: Topic) -> BusinessHours:
    """The topic's opening hours (`vocabulary.hours`), or ordinary office hours."""
    raw = topic.vocabulary.get("hours")
    if raw is None:
        return BusinessHours()
    try:
        return BusinessHours.parse(raw)
    except ValueError as exc:
        raise CatalogueError(f"topic {topic.topic_id!r}: vocabulary 'hours': {exc}") from exc


def check_vocabulary(topic: Topic) -> None:
    """Raise CatalogueError (naming the topic) for a malformed item list or opening hours."""
    for key in ITEM_LISTS.get(topic.archetype, ()):
        if key in topic.vocabulary:
            vocabulary_items(topic, key)
    business_hours(topic)
