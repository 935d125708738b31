"""Quantities parse like apimachinery and convert to float like Go's AsApproximateFloat64."""

from fractions import Fraction

import pytest

from placement.scheduler.quantity import QuantityError, approx_float, go_pow10, parse, parse_quantity


@pytest.mark.parametrize(
    ("text", "exact"),
    [
        ("500m", Fraction(1, 2)),
        ("2Gi", Fraction(2 * 2**30)),
        ("16Gi", Fraction(17179869184)),
        ("1e3", Fraction(1000)),
        ("1.5", Fraction(3, 2)),
        ("+4k", Fraction(4000)),
        ("-3", Fraction(-3)),
        ("0.1Ki", Fraction(512, 5)),
    ],
)
def test_exact_values(text: str, exact: Fraction) -> None:
    assert parse_quantity(text) == exact


def test_binary_and_decimal_forms_compare_exactly() -> None:
    assert parse_quantity("1Gi") == parse_quantity("1024Mi")
    assert parse_quantity("1G") != parse_quantity("1Gi")


def test_values_below_a_nano_round_up_to_one_nano() -> None:
    # upstream rounds non-zero values up so that asking for "some" never yields zero
    assert parse("0.0000000001") == parse("1n")


def test_approximate_float_keeps_go_representation() -> None:
    assert approx_float("500m") == 0.5
    assert approx_float("2Gi") == 2147483648.0
    # 3 * 10**-1 in float64, exactly as Go computes base * math.Pow10(exponent)
    assert approx_float("0.3") == 3 * 0.1


def test_go_pow10_tables() -> None:
    assert go_pow10(0) == 1.0
    assert go_pow10(-3) == 0.001
    # Go multiplies table entries above 1e31, so 10**33 is one ulp off the correctly rounded 1e33
    assert go_pow10(33) == 1e32 * 10
    assert go_pow10(400) == float("inf")


@pytest.mark.parametrize("text", ["", "abc", "1.2.3", "5e", "1ki", ".", "1 Gi"])
def test_rejects_what_apimachinery_rejects(text: str) -> None:
    with pytest.raises(QuantityError):
        parse_quantity(text)


def test_numbers_are_accepted_as_quantities() -> None:
    assert parse_quantity(8) == 8
    assert approx_float(2.5) == 2.5
