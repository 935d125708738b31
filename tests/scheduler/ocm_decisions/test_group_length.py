"""clustersPerDecisionGroup -> group length (upstream calculateLength)."""

import pytest

from placement.scheduler.ocm.decisions import GroupStrategyError, calculate_group_length


@pytest.mark.parametrize(
    ("value", "total", "expected"),
    [
        ("100%", 3, 3),
        ("25%", 3, 1),  # ceil(0.75)
        ("25%", 4, 1),
        ("50%", 5, 3),  # ceil(2.5)
        ("12.5%", 16, 2),  # upstream parses the percentage with ParseFloat
        (1, 4, 1),
        (2, 5, 2),
    ],
)
def test_length_from_int_or_percentage(value: int | str, total: int, expected: int) -> None:
    assert calculate_group_length(value, total) == expected


@pytest.mark.parametrize(("value", "total"), [(0, 5), (-3, 5), (10, 5), ("0%", 5), ("250%", 4), ("30%", 0)])
def test_length_out_of_range_falls_back_to_total(value: int | str, total: int) -> None:
    assert calculate_group_length(value, total) == total


def test_nan_percentage_falls_back_to_total() -> None:
    # Go's int(NaN) is negative on amd64, so the <= 0 fallback applies
    assert calculate_group_length("NaN%", 7) == 7


@pytest.mark.parametrize("value", ["25", "abc%", "1_0%", " 5%", "1e400%", "%"])
def test_non_percentage_string_is_misconfigured(value: str) -> None:
    with pytest.raises(GroupStrategyError) as raised:
        calculate_group_length(value, 4)
    assert str(raised.value) == f"{value} invalid type: string is not a percentage"
