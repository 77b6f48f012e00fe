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


def test_values_one_object_holds_together_are_taken_together():
    # tau2's retail: a new shipping address was a city of one user with another's state
    # and a third's zip; one user's address object gives all of them.
    from synthesis.environments.arguments import argument_groups
    from synthesis.environments.model import ParamModel, ToolModel

    params = ["order_id", "address1", "city", "state", "zip"]
    tool = ToolModel(
        name="modify_pending_order_address",
        schema={},
        kind="mutate",
        kind_evidence="probe",
        ast_kind="mutate",
        params=[
            ParamModel(name=p, type="string", takes="order" if p == "order_id" else None)
            for p in params
        ],
    )
    home = {"address1": "1 Elm St", "city": "Austin", "state": "TX", "zip": "73301"}
    state = {
        "users": {"u1": {"name": "Ada", "address": home}, "u2": {"name": "Bo", "city": "Reno"}},
        "orders": {"o1": {"order_id": "o1", "status": "pending"}},
    }
    assert argument_groups(tool, state) == [home]
    assert argument_groups(tool, {"users": {"u2": {"city": "Reno", "zip": "1"}}}) == []
