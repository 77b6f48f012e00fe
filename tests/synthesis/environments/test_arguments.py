def test_a_new_part_of_an_address_is_of_its_kind_and_other_text_stays_plain():
    import random

    from faker.providers.address.en_US import Provider

    from synthesis.environments.arguments import fresh_value
    from synthesis.environments.model import ParamModel

    def new(name: str) -> str:
        return fresh_value(ParamModel(name=name, type="string"), random.Random(3))

    assert new("country") in Provider.countries
    assert new("zip").isdigit() and len(new("zip")) == 5
    assert new("address2").startswith(("Suite", "Apt."))
    assert new("country") == new("country")  # seeded by the caller's rng
    assert len(new("destination").split()) == 3  # nothing known of it: plain words, as before
