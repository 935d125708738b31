"""A taint's timeAdded keeps its nanoseconds, as Go's time does: a toleration that runs out a hundred
nanoseconds after `now` still tolerates the taint (and requeues at once), although a datetime holds
only microseconds."""

from datetime import timedelta

import pytest

from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.timeutil import format_time, sub_microsecond_nanos
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement


def _report(time_added: str) -> dict[str, object]:
    clusters = [member("c1", taints=[{"key": "gpu", "effect": "NoSelect", "timeAdded": time_added}])]
    tolerations = [{"key": "gpu", "operator": "Exists", "tolerationSeconds": 60}]
    inventory = hub(clusters, decisions=[decision("web", ["c1"])])
    result = schedule_placement(placement(tolerations=tolerations), inventory, NOW)
    report: dict[str, object] = result.to_report()
    return report


def test_a_toleration_running_out_nanoseconds_after_now_still_tolerates() -> None:
    a_minute_ago = format_time(NOW - timedelta(seconds=60))
    report = _report(a_minute_ago.replace("Z", ".0000001Z"))
    assert report["selected"] == ["c1"]
    assert report["requeueAfterSeconds"] == 0.000001


def test_a_toleration_running_out_at_now_does_not() -> None:
    report = _report(format_time(NOW - timedelta(seconds=60)))
    assert report["selected"] == [] and report["requeueAfterSeconds"] is None


@pytest.mark.parametrize(
    ("stamp", "nanoseconds"),
    [
        ("2024-05-01T12:00:00.0000001Z", 100),
        ("2024-05-01T12:00:00.123456789+02:00", 789),
        ("2024-05-01T12:00:00.1234567891Z", 789),
        ("2024-05-01T12:00:00.5Z", 0),
        ("2024-05-01T12:00:00Z", 0),
        (None, 0),
    ],
)
def test_sub_microsecond_nanos(stamp: str | None, nanoseconds: int) -> None:
    assert sub_microsecond_nanos(stamp) == nanoseconds
