"""Optional features of an archetype, chosen per topic, so environments differ in program shape.

Two topics of one archetype should not compile to the same program with other names: each
archetype lists optional features (priorities, recurring events, delegation, threads …) and a
topic gets a subset drawn from a hash of its id, or the subset its vocabulary names under
"features" (a catalogue author's explicit choice).
"""

from __future__ import annotations

from collections.abc import Sequence

from synthesis.environments.archetypes.naming import NamingError
from synthesis.hashing import content_hash
from synthesis.models import Topic


def choose_features(topic: Topic, options: Sequence[str], *, minimum: int = 2) -> frozenset[str]:
    """The features of `options` this topic's environment has (deterministic per topic)."""
    explicit = topic.vocabulary.get("features")
    if explicit is not None:
        if not isinstance(explicit, list):
            raise NamingError("vocabulary 'features'", explicit, "must be a list of names")
        unknown = [f for f in explicit if f not in options]
        if unknown:
            raise NamingError(
                "vocabulary 'features'",
                unknown[0],
                f"is not a feature of archetype {topic.archetype} (known: {', '.join(options)})",
            )
        return frozenset(explicit)
    bits = int(content_hash(["features", topic.archetype, topic.topic_id])[:16], 16)
    chosen = [name for i, name in enumerate(options) if bits >> i & 1]
    # Too few features would make small programs that all look alike: top up from a
    # hash-chosen starting point, so which ones are added also varies by topic.
    start = (bits >> 32) % len(options)
    for k in range(len(options)):
        if len(chosen) >= min(minimum, len(options)):
            break
        name = options[(start + k) % len(options)]
        if name not in chosen:
            chosen.append(name)
    return frozenset(chosen)
