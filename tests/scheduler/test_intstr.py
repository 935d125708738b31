"""IntOrString parsing and scaling."""

import pytest

from placement.scheduler.intstr import (
    IntOrStringError,
    ceil_percent_of,
    go_parse_float,
    parse_percent,
    scaled_value,
)


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


def test_go_parse_float_accepts_what_go_accepts() -> None:
    assert go_parse_float("12.5") == 12.5
    assert go_parse_float("0x1p-2") == 0.25
    assert go_parse_float("-Inf") == float("-inf")
    with pytest.raises(ValueError, match='parsing "1_0": invalid syntax'):
        go_parse_float("1_0")
    with pytest.raises(ValueError, match="value out of range"):
        go_parse_float("1e400")


def test_ceil_percent_of_rounds_up_in_float() -> None:
    assert ceil_percent_of("25%", 3) == 1
    assert ceil_percent_of("50%", 5) == 3
    assert ceil_percent_of("12.5%", 16) == 2
    assert ceil_percent_of("NaN%", 5) is None
    with pytest.raises(IntOrStringError):
        ceil_percent_of("25", 4)
