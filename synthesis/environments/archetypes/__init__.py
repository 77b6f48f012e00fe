"""Interaction archetypes: each module turns a topic into an EnvSpec, registered by name.

How to add one: the recipe at the top of toolkit.py (the blocks every archetype is built from);
features.py holds the one feature picker.
"""

from __future__ import annotations

# Importing the modules registers them (one `register_archetype` line each, in registry.py).
from synthesis.environments.archetypes import (  # noqa: F401 - importing registers them
    approvals,
    booking,
    catalogue_search,
    composition,
    inventory,
    ledger,
    messaging,
    order_lifecycle,
    project,
    scheduling,
    ticketing,
    workspace,
)
from synthesis.environments.archetypes.registry import (  # noqa: F401 - the package's names
    PLANNED_ARCHETYPES,
    SpecBuilder,
    get_archetype,
    known_archetypes,
    register_archetype,
    supported_archetypes,
)
