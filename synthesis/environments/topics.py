"""The topic catalogue: domains shipped in data/topics.json that environments are built for."""

from __future__ import annotations

from pathlib import Path

from synthesis import codec
from synthesis.config import DATA_DIR
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
