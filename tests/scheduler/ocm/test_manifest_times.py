"""Timestamps in OCM manifests read as the controllers' metav1.Time decoding (Go's RFC 3339) reads them:
fractions and offsets are fine, shapes Go refuses are a manifest error, not a time."""

from datetime import UTC, datetime, timedelta, timezone

import pytest

from placement.scheduler.errors import ManifestError
from tests.scheduler.ocm.builders import cluster


def _time_added(stamp: str) -> datetime:
    taint = cluster("c1", taints=[{"key": "gpu", "effect": "NoSelect", "timeAdded": stamp}]).taints[0]
    return taint.time_added


@pytest.mark.parametrize(
    ("stamp", "moment"),
    [
        ("2024-05-01T12:00:00Z", datetime(2024, 5, 1, 12, tzinfo=UTC)),
        ("2024-05-01T12:00:00.5Z", datetime(2024, 5, 1, 12, 0, 0, 500_000, tzinfo=UTC)),
        ("2024-05-01T12:00:00,5Z", datetime(2024, 5, 1, 12, 0, 0, 500_000, tzinfo=UTC)),
        ("2024-05-01T12:00:00-00:30", datetime(2024, 5, 1, 12, tzinfo=timezone(timedelta(minutes=-30)))),
    ],
)
def test_rfc3339_times_are_read(stamp: str, moment: datetime) -> None:
    assert _time_added(stamp) == moment


@pytest.mark.parametrize(
    "stamp",
    ["2024-05-01T12:00:00.000001.5Z", "2024-05-01 12:00:00Z", "2024-05-01T12:00:00", "2024-05-01"],
)
def test_other_shapes_are_a_manifest_error(stamp: str) -> None:
    with pytest.raises(ManifestError, match="must be an RFC 3339 date-time"):
        _time_added(stamp)
