"""One feature picker for every archetype: a topic's listed features are taken as they are, an
unknown name is refused naming the archetype and what it knows, and every feature of every
archetype is a function that applies."""

from __future__ import annotations

import pytest

from synthesis.environments.archetypes import supported_archetypes
from synthesis.environments.archetypes.features import feature_set
from synthesis.environments.archetypes.naming import NamingError
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.environments.topics import load_catalogue
from synthesis.models import Topic

CATALOGUE = load_catalogue()
WITH_FEATURES = sorted(a for a in supported_archetypes() if feature_set(a) is not None)


def _topic(archetype: str, features=None) -> Topic:
    """The archetype's first catalogue topic, with `features` listed (when given)."""
    topic = next(t for t in CATALOGUE if t.archetype == archetype)
    if features is None:
        return topic
    return topic.model_copy(update={"vocabulary": {**topic.vocabulary, "features": features}})


def test_the_archetypes_with_optional_features_are_those_that_draw_them():
    assert {"booking", "ledger", "inventory", "catalogue_search", "order_lifecycle", "approvals",
            "messaging", "ticketing", "scheduling"} == set(WITH_FEATURES)  # fmt: skip
    assert feature_set("composition") is None and feature_set("workspace") is None


@pytest.mark.parametrize("archetype", WITH_FEATURES)
def test_an_unknown_feature_is_refused_naming_the_archetype_and_its_features(archetype):
    known = feature_set(archetype).names
    topic = _topic(archetype, [known[0], "teleport"])
    with pytest.raises(SpecError) as refused:
        generate_spec(topic)
    message = str(refused.value)
    assert message.startswith(f"topic {topic.topic_id}: vocabulary 'features' = 'teleport' ")
    assert f"is not a feature of archetype {archetype} (known: {', '.join(known)})" in message
    # The picker itself refuses, whoever calls it (a composition's part, a test).
    with pytest.raises(NamingError, match="'teleport' is not a feature of archetype"):
        feature_set(archetype).choose(topic)


@pytest.mark.parametrize("archetype", WITH_FEATURES)
def test_listed_features_are_taken_and_a_list_is_required(archetype):
    optional = feature_set(archetype)
    assert optional.choose(_topic(archetype, [])) == frozenset()
    assert optional.choose(_topic(archetype, list(optional.names[:2]))) == set(optional.names[:2])
    with pytest.raises(NamingError, match="must be a list of names"):
        optional.choose(_topic(archetype, optional.names[0]))


@pytest.mark.parametrize("archetype", WITH_FEATURES)
def test_drawn_features_are_deterministic_per_topic_and_differ_between_topics(archetype):
    optional = feature_set(archetype)
    topics = [t for t in CATALOGUE if t.archetype == archetype]
    drawn = [optional.choose(t) for t in topics]
    assert drawn == [optional.choose(t) for t in topics]
    # Every topic gets at least `at_least`, except a feature dropped for want of another.
    assert all(len(d) >= optional.at_least - len(optional.requires) for d in drawn)
    assert len(set(drawn)) > len(topics) // 2


@pytest.mark.parametrize("archetype", WITH_FEATURES)
def test_every_feature_is_a_function_that_adds_to_the_spec(archetype):
    optional = feature_set(archetype)
    bare = generate_spec(_topic(archetype, []))
    for name in optional.names:
        listed = [name] + ([optional.requires[name]] if name in optional.requires else [])
        spec = generate_spec(_topic(archetype, listed))
        assert spec != bare, name


def test_a_feature_is_dropped_without_the_feature_it_requires():
    inventory = feature_set("inventory")
    assert inventory.choose(_topic("inventory", ["suppliers"])) == frozenset()
    both = ["suppliers", "purchase_orders"]
    assert inventory.choose(_topic("inventory", both)) == set(both)
