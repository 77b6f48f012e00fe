"""The archetype registry: each archetype module registers its spec builder by name.

Kept apart from the package's `__init__`, which imports every archetype to register it, so an
archetype's module imports the registry, not the package that imports it.
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
