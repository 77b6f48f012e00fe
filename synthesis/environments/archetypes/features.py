"""Optional features of an archetype, chosen per topic, so environments differ in program shape.

Two topics of one archetype should not compile to the same program with other names: each
archetype lists optional features (priorities, recurring events, delegation, threads …) and a
topic gets a subset drawn from a hash of its id, or the subset its vocabulary names under
"features" (a catalogue author's explicit choice; a name the archetype does not know is
refused). Each feature is one function that adds its entities, tools and rules to the draft.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from typing import Any, Literal

from synthesis.environments.archetypes.naming import NamingError
from synthesis.hashing import content_hash, derive_seed
from synthesis.models import Topic

# How a topic whose vocabulary names no features gets its subset. Both are seeded by the topic
# id alone; archetypes written at different times use different ones, and switching one would
# change every topic's program of that archetype (and the pinned default build), so each
# feature set names its own.
Draw = Literal["hash_bits", "coin_flips"]
Feature = Callable[[Any], None]

_SETS: dict[str, FeatureSet] = {}


class FeatureSet:
    """An archetype's optional features: their names, how a topic gets a subset, and the
    function that applies each.

    `names` is the draw order (reordering it changes which features topics get); the functions
    are applied in the order they are defined, which places their tools and rules in the spec.
    `requires` maps a feature to one it only makes sense with; without that one it is dropped
    (suppliers without purchase orders).
    """

    def __init__(
        self,
        archetype: str,
        names: Sequence[str],
        *,
        at_least: int,
        draw: Draw = "hash_bits",
        requires: dict[str, str] | None = None,
    ) -> None:
        self.archetype = archetype
        self.names = tuple(names)
        self.at_least = at_least
        self.draw = draw
        self.requires = dict(requires or {})
        self._functions: dict[str, tuple[Feature, Feature | None]] = {}
        _SETS[archetype] = self

    def feature(self, function: Feature | None = None, *, otherwise: Feature | None = None) -> Any:
        """Register a feature's function (named as the feature). `otherwise` is the core's
        own way, applied in the feature's place when a topic does not have it."""

        def register(function: Feature) -> Feature:
            if function.__name__ not in self.names:
                raise ValueError(
                    f"{function.__name__!r} is not a feature of archetype {self.archetype}"
                )
            self._functions[function.__name__] = (function, otherwise)
            return function

        return register(function) if function is not None else register

    def choose(self, topic: Topic) -> frozenset[str]:
        """The features this topic's environment has (deterministic per topic)."""
        listed = topic.vocabulary.get("features")
        if listed is None:
            chosen = self._drawn(topic.topic_id)
        else:
            chosen = set(self.check(listed))
        return frozenset(f for f in chosen if self.requires.get(f, f) in chosen)

    def check(self, listed: Any) -> list[str]:
        """A vocabulary's feature list, refused (NamingError) unless every name is known."""
        return check_listed(self.archetype, listed, self.names)

    def apply(self, draft: Any) -> None:
        """Apply the draft's features (and the core's own way for those it lacks), in order."""
        missing = [name for name in self.names if name not in self._functions]
        if missing:
            raise TypeError(f"archetype {self.archetype}: features without a function {missing}")
        draft.begin_features()
        for name, (function, otherwise) in self._functions.items():
            if name in draft.features:
                function(draft)
            elif otherwise is not None:
                otherwise(draft)

    def _drawn(self, topic_id: str) -> set[str]:
        if self.draw == "coin_flips":
            return self._coin_flips(topic_id)
        return self._hash_bits(topic_id)

    def _hash_bits(self, topic_id: str) -> set[str]:
        """One bit of the topic's hash per feature, then topped up to `at_least`."""
        options = self.names
        bits = int(content_hash(["features", self.archetype, topic_id])[:16], 16)
        chosen = [name for i, name in enumerate(options) if bits >> i & 1]
        # Too few features would make small programs that all look alike: top up from a
        # hash-chosen starting point, so which ones are added also varies by topic.
        start = (bits >> 32) % len(options)
        for k in range(len(options)):
            if len(chosen) >= min(self.at_least, len(options)):
                break
            name = options[(start + k) % len(options)]
            if name not in chosen:
                chosen.append(name)
        return set(chosen)

    def _coin_flips(self, topic_id: str) -> set[str]:
        """A seeded coin per feature, then topped up to `at_least` in a seeded order."""
        rng = random.Random(derive_seed("archetype-features", self.archetype, topic_id))
        chosen = {f for f in self.names if rng.random() < 0.5}
        rest = [f for f in self.names if f not in chosen]
        rng.shuffle(rest)
        return chosen | set(rest[: max(0, self.at_least - len(chosen))])


def check_listed(archetype: str, listed: Any, known: Sequence[str]) -> list[str]:
    """The features a topic's vocabulary lists for `archetype`, as listed; a name the
    archetype does not know is refused, naming the archetype and what it knows."""
    if not isinstance(listed, list):
        raise NamingError("vocabulary 'features'", listed, "must be a list of names")
    unknown = [f for f in listed if f not in known]
    if unknown:
        raise NamingError(
            "vocabulary 'features'",
            unknown[0],
            f"is not a feature of archetype {archetype} (known: {', '.join(known)})",
        )
    return listed


def feature_set(archetype: str) -> FeatureSet | None:
    """The optional features of `archetype` (None for one without: workspace, composition)."""
    return _SETS.get(archetype)


def feature_names(archetype: str) -> tuple[str, ...]:
    found = _SETS.get(archetype)
    return found.names if found else ()
