"""Interaction archetypes: each module turns a topic into an EnvSpec, registered by name.

How to add one: the recipe at the top of toolkit.py (the blocks every archetype is built from);
features.py holds the one feature picker.
"""

from __future__ import annotations

from collections.abc import Callable

from synthesis.models import EnvSpec, Topic

SpecBuilder = Callable[[Topic], EnvSpec]

_REGISTRY: dict[str, SpecBuilder] = {}


def register_archetype(name: str) -> Callable[[SpecBuilder], SpecBuilder]:
    def decorate(builder: SpecBuilder) -> SpecBuilder:
        _REGISTRY[name] = builder
        return builder

    return decorate


def get_archetype(name: str) -> SpecBuilder:
    try:
        return _REGISTRY[name]
    except KeyError:
        raise KeyError(f"archetype {name!r} is not implemented yet") from None


def supported_archetypes() -> set[str]:
    return set(_REGISTRY)


# Named in the catalogue and the design, generators not written yet: their topics are
# reported as waiting, while a name in neither set is a catalogue error.
PLANNED_ARCHETYPES: frozenset[str] = frozenset()


def known_archetypes() -> set[str]:
    return supported_archetypes() | set(PLANNED_ARCHETYPES)


# Importing the modules registers them (one `register_archetype` line each).
from synthesis.environments.archetypes import (  # noqa: E402,F401
    approvals,
    booking,
    catalogue_search,
    composition,
    inventory,
    ledger,
    messaging,
    order_lifecycle,
    scheduling,
    ticketing,
    workspace,
)
