"""Reply matching: a value counts as stated however the reply writes it, and only whole."""

from __future__ import annotations

import pytest

from synthesis.tasks.envfoundry_reward import mentions, normalise, same_value, tokens


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("The total is $1,200.00.", 1200),
        ("The total is 1200", 1200.0),
        ("It comes to 1,200.", "1200.00"),
        ("Balance: 314.07 EUR", 314.07),
        ("The balance is 0.5", 0.50),
        ("Status: In   Progress", "in_progress"),
        ("Her email is Alisha.Myers97@gmail.com.", "alisha.myers97@gmail.com"),
        ("The customer is ann  LEE", "Ann Lee"),
        ("Your slot is on March 4, 2025.", "2025-03-04"),
        ("Your slot is on 4 March 2025.", "2025-03-04"),
        ("Your slot is on Tuesday, Mar. 4th, 2025.", "2025-03-04"),
        ("Your slot is on 03/04/2025.", "2025-03-04"),
        ("It starts March 4, 2025 at 2:00 PM.", "2025-03-04T14:00:00"),
        ("It starts at 2 pm on 4 March 2025.", "2025-03-04T14:00:00Z"),
        ("It starts 2025-03-04 14:00.", "2025-03-04T14:00:00"),
        ("Express shipping: yes", True),
        ("express shipping is true", True),
        ("(ORD-0007)", "ORD-0007"),
    ],
)
def test_a_value_is_found_however_the_reply_writes_it(reply, value):
    assert mentions(reply, value)


@pytest.mark.parametrize(
    ("reply", "value"),
    [
        ("The total is 11200.", 1200),
        ("The total is 1200.5.", 1200),
        ("The total is 200.", 1200),
        ("The customer is Anne Lee.", "Ann"),
        ("Your slot is on March 5, 2025.", "2025-03-04"),
        ("It starts March 4, 2025 at 3:00 PM.", "2025-03-04T14:00:00"),
        ("It starts at 2 PM.", "2025-03-04T14:00:00"),
        ("Express shipping: no", True),
        ("ORD-00071", "ORD-0007"),
        ("", "anything"),
        ("Nothing to see", ""),
    ],
)
def test_a_value_is_not_found_in_part_or_in_another_form(reply, value):
    assert not mentions(reply, value)


def test_normal_forms():
    assert normalise("  March 4, 2025 at 2:05 pm ") == "2025-03-04 at 14:05"
    assert normalise("12 AM and 12 PM") == "00:00 and 12:00"
    assert tokens("Total: $1,200.00, paid.") == ["total", "1200", "paid"]
    assert tokens("-0.0 and +5") == ["0", "and", "5"]
    assert same_value(1200, "1,200.00") and not same_value(1200, 1201)
