"""IntOrString parsing and scaling."""

import pytest

from placement.scheduler.intstr import IntOrStringError, parse_percent, scaled_value


def test_percentages_scale_with_the_requested_rounding() -> None:
    assert scaled_value("25%", 3, round_up=True) == 1
    assert scaled_value("25%", 3, round_up=False) == 0
    assert scaled_value("20%", 5, round_up=True) == 1
    assert scaled_value(4, 100, round_up=True) == 4


def test_strings_without_percent_are_errors() -> None:
    with pytest.raises(IntOrStringError, match="invalid type: string is not a percentage"):
        parse_percent("25")
    with pytest.raises(IntOrStringError):
        scaled_value("50", 10, round_up=False)
    with pytest.raises(IntOrStringError):
        parse_percent("abc%")
