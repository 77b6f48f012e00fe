"""The topic catalogue: domains shipped in data/topics.json that environments are built for."""

from __future__ import annotations

from pathlib import Path

from synthesis import codec
from synthesis.config import DATA_DIR
from synthesis.models import Topic

CATALOGUE_PATH = DATA_DIR / "topics.json"


def load_catalogue(path: Path = CATALOGUE_PATH) -> list[Topic]:
    """Every topic in the catalogue, sorted by id; a malformed entry raises with its id."""
    raw = codec.read_json(path)
    topics = []
    for entry in raw["topics"]:
        try:
            topics.append(Topic.model_validate(entry))
        except Exception as exc:  # noqa: BLE001 - re-raised with the entry that caused it
            raise ValueError(
                f"catalogue entry {entry.get('topic_id')!r} is malformed: {exc}"
            ) from exc
    return sorted(topics, key=lambda t: t.topic_id)


def select_topics(topics: list[Topic], supported: set[str], limit: int) -> list[Topic]:
    """Up to `limit` topics of supported archetypes, taken round-robin across archetypes.

    Round-robin keeps a small profile from being all one archetype.
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
    return sorted(chosen, key=lambda t: t.topic_id)
