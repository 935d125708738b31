"""tolerationSeconds is any int64, and upstream multiplies it into a Go Duration (int64 nanoseconds) that
wraps around past about 292 years: the toleration lasts as long as the wrapped Duration says."""

from datetime import timedelta

import pytest

from placement.scheduler.ocm.schedule import schedule_placement
from placement.scheduler.ocm.types import Toleration
from tests.scheduler.ocm.builders import NOW, decision, hub, member, placement

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
# 18446744074 s is 290448384 ns past 2**64 ns: a hundred seconds more wrap to 100.290448384 s
WRAPS_TO_A_HUNDRED_SECONDS = 18_446_744_174


@pytest.mark.parametrize(
    ("seconds", "nanoseconds"),
    [
        (300, 300 * 10**9),
        (-300, -300 * 10**9),
        # whole seconds of Go's longest Duration still fit
        (9_223_372_036, 9_223_372_036 * 10**9),
        # one more wraps to about -292 years
        (9_223_372_037, -9_223_372_036_709_551_616),
        (WRAPS_TO_A_HUNDRED_SECONDS, 100_290_448_384),
        (INT64_MAX, -(10**9)),
        (INT64_MIN, 0),
        (None, None),
    ],
)
def test_duration_is_go_duration_arithmetic(seconds: int | None, nanoseconds: int | None) -> None:
    assert Toleration("gpu", "Exists", toleration_seconds=seconds).duration_nanoseconds == nanoseconds


def _report(seconds: int) -> dict[str, object]:
    added = (NOW - timedelta(seconds=60)).isoformat()
    clusters = [member("c1", taints=[{"key": "gpu", "effect": "NoSelect", "timeAdded": added}])]
    tolerations = [{"key": "gpu", "operator": "Exists", "tolerationSeconds": seconds}]
    inventory = hub(clusters, decisions=[decision("web", ["c1"])])
    result = schedule_placement(placement(tolerations=tolerations), inventory, NOW)
    report: dict[str, object] = result.to_report()
    return report


def test_a_wrapped_toleration_tolerates_and_requeues_by_the_wrapped_duration() -> None:
    report = _report(WRAPS_TO_A_HUNDRED_SECONDS)
    assert report["selected"] == ["c1"]
    assert report["requeueAfterSeconds"] == 40.290449


def test_a_toleration_that_wraps_negative_has_expired() -> None:
    report = _report(9_223_372_037)
    assert report["selected"] == [] and report["requeueAfterSeconds"] is None
