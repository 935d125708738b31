"""Cluster eligibility: the 5-minute heartbeat and health windows, and the order of the checks."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from placement.scheduler.fleet.eligibility import eligibility_reason
from tests.scheduler.fleet.builders import NOW, member


def test_heartbeat_exactly_five_minutes_old_is_still_eligible() -> None:
    assert eligibility_reason(member("a", heartbeat=NOW - timedelta(minutes=5)), NOW) is None
    late = member("a", heartbeat=NOW - timedelta(minutes=5, microseconds=1))
    assert "no recent heartbeat signals (last received 5.00 minutes ago)" in (
        eligibility_reason(late, NOW) or ""
    )


def test_short_lived_unhealthy_report_is_tolerated() -> None:
    assert (
        eligibility_reason(member("a", healthy="False", healthy_since=NOW - timedelta(minutes=4)), NOW)
        is None
    )
    sick = member("a", healthy="False", healthy_since=NOW - timedelta(minutes=12, seconds=18))
    assert eligibility_reason(sick, NOW) == (
        "cluster is not connected to the fleet: unhealthy for a prolonged period of time "
        "(last transitioned 12.30 minutes ago)"
    )


def test_deletion_and_missing_agent_come_first() -> None:
    leaving = replace(member("a"), deletion_timestamp=NOW)
    assert eligibility_reason(leaving, NOW) == "cluster has left the fleet"
    assert eligibility_reason(replace(member("a"), agent_status=()), NOW) == (
        "cluster is not connected to the fleet: member agent not online yet"
    )
