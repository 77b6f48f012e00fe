"""Catalogue words of any spelling name identifiers by transliteration, never by stripping.

A catalogue is written by people (`envfoundry build --catalogue FILE`): nouns may carry
accents, other scripts or emoji. Identifiers are transliterated ("élève" → "eleve"), text
shown to people keeps the original words, and a word with nothing usable is a clear SpecError.
"""

from __future__ import annotations

import pytest

from synthesis.environments.archetypes.naming import identifier
from synthesis.environments.specgen import SpecError, generate_spec
from synthesis.models import Topic

BOOKING = {
    "customer": "patient",
    "provider": "dentist",
    "booking": "appointment",
    "services": ["cleaning", "filling"],
    "specialties": ["general", "orthodontics"],
    "provider_names": ["Dr Ada", "Dr Bo"],
}
ORDERS = {
    "customer": "reader",
    "product": "book",
    "products": ["Dune", "Emma"],
    "categories": ["fiction", "poetry"],
    "price_range": [3, 40],
}
TEXT_FIELDS = {  # archetype -> vocabulary entries holding words (price_range holds numbers)
    "booking": ["customer", "provider", "booking", "services", "specialties", "provider_names"],
    "order_lifecycle": ["customer", "product", "products", "categories"],
}


def _topic(archetype: str, **changes) -> Topic:
    vocabulary = dict(BOOKING if archetype == "booking" else ORDERS)
    vocabulary.update(changes.pop("vocabulary", {}))
    fields = {"topic_id": "t", "title": "T", "description": "D", **changes}
    return Topic(archetype=archetype, vocabulary=vocabulary, **fields)


# --------------------------------------------------------------------------- identifiers


@pytest.mark.parametrize(
    ("word", "name"),
    [
        ("élève", "eleve"),
        ("Straße", "strasse"),
        ("ß", "ss"),
        ("Ærøskøbing", "aeroskobing"),
        ("Łódź", "lodz"),
        ("İstanbul", "istanbul"),
        ("ﬁsh", "fish"),
        ("Crème Brûlée!", "creme_brulee"),
        ("pet_owner", "pet_owner"),
        ("Gear-Item 2", "gear_item_2"),
        ("smile 🙂 face", "smile_face"),
    ],
)
def test_identifiers_are_transliterated(word, name):
    assert identifier(word, "vocabulary 'customer'") == name


def test_a_transliterated_noun_names_identifiers_and_keeps_its_spelling_in_text():
    spec = generate_spec(
        _topic("order_lifecycle", topic_id="école", vocabulary={"customer": "élève"})
    )
    assert spec.class_name == "EcoleEnv"
    pupil = spec.entity("eleve")
    assert (pupil.collection, pupil.id_prefix, pupil.label) == ("eleves", "ELV", "élève")
    finder = spec.tool("find_eleve_by_email")
    assert finder.description == "Find a élève by email address."
    assert spec.tool("create_order").params[0].name == "eleve_id"
    assert spec.tool("create_order").params[0].description == "Id of the élève."


@pytest.mark.parametrize(
    ("word", "message"),
    [
        ("🙂🙂", "vocabulary 'customer' = '🙂🙂' has no letters to name identifiers with"),
        ("--- 42", "vocabulary 'customer' = '--- 42' has no letters to name identifiers with"),
        (
            "ученик",
            "vocabulary 'customer' = 'ученик' has letters with no ASCII spelling for "
            "identifiers ('у', 'ч', 'е', 'н', 'и', 'к')",
        ),
        (
            "3d printer",
            "vocabulary 'customer' = '3d printer' must start with a letter to name "
            "identifiers (it gives '3d_printer')",
        ),
        (7, "vocabulary 'customer' = 7 must be a text, not int"),
    ],
)
def test_a_noun_that_cannot_name_identifiers_is_a_spec_error_naming_topic_and_field(word, message):
    for archetype in TEXT_FIELDS:
        with pytest.raises(SpecError) as info:
            generate_spec(_topic(archetype, topic_id="shop", vocabulary={"customer": word}))
        assert str(info.value) == f"topic shop: {message}"


def test_a_topic_id_without_letters_is_a_spec_error():
    with pytest.raises(SpecError, match=r"^topic 🙂: topic_id = '🙂' has no letters"):
        generate_spec(_topic("booking", topic_id="🙂"))
