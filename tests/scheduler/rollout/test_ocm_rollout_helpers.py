"""parseTimeout and calculateRolloutSize: the regex quirk, Go durations, percentages rounded up."""

from __future__ import annotations

from datetime import timedelta

import pytest

from placement.scheduler.rollout.ocm import RolloutError, calculate_rollout_size, parse_timeout


@pytest.mark.parametrize("text", ["", "None"])
def test_empty_and_none_timeouts_are_infinite(text: str) -> None:
    assert parse_timeout(text) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2h", timedelta(hours=2)),
        ("30m", timedelta(minutes=30)),
        ("90s", timedelta(seconds=90)),
        ("0s", timedelta(0)),
    ],
)
def test_timeouts_in_hours_minutes_seconds(text: str, expected: timedelta) -> None:
    assert parse_timeout(text) == expected


def test_regex_checks_only_the_start_so_compound_durations_pass() -> None:
    # upstream regex ^(([0-9])+[h|m|s])|None$ anchors only its first alternative at the start
    assert parse_timeout("1h30m") == timedelta(hours=1, minutes=30)
    assert parse_timeout("5ms") == timedelta(milliseconds=5)


@pytest.mark.parametrize("text", ["2d", "0", "2d0s", "10g", "1.5h", "-5s", "None\n"])
def test_timeouts_the_regex_refuses(text: str) -> None:
    with pytest.raises(RolloutError, match="^invalid timeout format$"):
        parse_timeout(text)


@pytest.mark.parametrize("text", ["1hx", "1|", "9999999999h"])
def test_timeouts_past_the_regex_that_go_cannot_parse(text: str) -> None:
    with pytest.raises(RolloutError, match=r"^time: (unknown unit|invalid duration)"):
        parse_timeout(text)


def test_rollout_size_int_is_taken_as_is() -> None:
    assert calculate_rollout_size(50, 100, 100) == 50


def test_rollout_size_percent_rounds_up() -> None:
    assert calculate_rollout_size("30%", 100, 100) == 30
    assert calculate_rollout_size("25%", 3, 3) == 1  # 0.75 -> 1
    assert calculate_rollout_size("50%", 5, 5) == 3  # 2.5 -> 3
    assert calculate_rollout_size("12.5%", 10, 10) == 2  # ParseFloat, not Atoi


@pytest.mark.parametrize("value", [0, -1, 101, "0%", "200%"])
def test_rollout_size_outside_one_to_total_falls_back_to_default(value: int | str) -> None:
    assert calculate_rollout_size(value, 100, 7) == 7


def test_rollout_size_string_without_percent_is_an_error() -> None:
    with pytest.raises(RolloutError) as raised:
        calculate_rollout_size("invalid", 100, 100)
    assert str(raised.value) == "'invalid' is an invalid maximum threshold value: string is not a percentage"


def test_rollout_size_unparsable_percentage_is_an_error() -> None:
    with pytest.raises(RolloutError, match='^strconv.ParseFloat: parsing "ten": invalid syntax$'):
        calculate_rollout_size("ten%", 100, 100)


def test_rollout_size_overflowing_percentage_is_a_range_error() -> None:
    with pytest.raises(RolloutError, match='^strconv.ParseFloat: parsing "1e400": value out of range$'):
        calculate_rollout_size("1e400%", 100, 100)


def test_rollout_size_infinite_percentage_falls_back_to_default() -> None:
    # upstream: int(math.Ceil(+Inf)) is out of range in Go and ends up below zero
    assert calculate_rollout_size("Inf%", 100, 7) == 7
