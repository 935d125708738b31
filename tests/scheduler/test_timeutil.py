"""Go durations and Kubernetes timestamps."""

from datetime import UTC, datetime, timedelta

import pytest

from placement.scheduler.timeutil import DurationError, format_time, parse_go_duration, parse_time


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("90s", timedelta(seconds=90)),
        ("1h30m", timedelta(minutes=90)),
        ("0", timedelta(0)),
        ("1.5h", timedelta(minutes=90)),
        ("250ms", timedelta(milliseconds=250)),
        ("-2m", timedelta(minutes=-2)),
    ],
)
def test_parse_go_duration(text: str, expected: timedelta) -> None:
    assert parse_go_duration(text) == expected


@pytest.mark.parametrize("text", ["", "2d", "10g", "1", "h", "1h30"])
def test_parse_go_duration_rejects_what_go_rejects(text: str) -> None:
    with pytest.raises(DurationError):
        parse_go_duration(text)


def test_times_round_trip_in_rfc3339() -> None:
    moment = parse_time("2022-01-01T00:00:00Z")
    assert moment == datetime(2022, 1, 1, tzinfo=UTC)
    assert format_time(moment) == "2022-01-01T00:00:00Z"
    assert parse_time("2022-01-01T01:00:00+01:00") == moment
    assert parse_time(None) is None
