"""tolerationSeconds at the ends of its range: Go's time type holds expiries Python's datetime cannot,
so the verdict is what upstream's comparison gives, never an OverflowError."""

from datetime import UTC, datetime

from placement.scheduler.ocm.taints import taint_verdict
from placement.scheduler.ocm.types import NO_SELECT, Taint, Toleration

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
GO_DURATION_SECONDS = 9_223_372_036


def test_a_negative_toleration_of_an_unstamped_taint_has_expired() -> None:
    taint = Taint(key="maintenance", effect=NO_SELECT)  # the hub never set timeAdded: Go's zero time
    verdict = taint_verdict(
        taint, [Toleration(key="maintenance", operator="Exists", toleration_seconds=-1)], False, NOW
    )
    assert not verdict.tolerated
    assert verdict.expired_at is not None and verdict.expired_at < NOW


def test_the_longest_toleration_of_a_far_future_taint_has_not_expired() -> None:
    taint = Taint(key="maintenance", effect=NO_SELECT, time_added=datetime(9999, 1, 1, tzinfo=UTC))
    toleration = Toleration(key="maintenance", operator="Exists", toleration_seconds=GO_DURATION_SECONDS)
    verdict = taint_verdict(taint, [toleration], False, NOW)
    assert verdict.tolerated and verdict.expires is not None and verdict.expires > NOW
