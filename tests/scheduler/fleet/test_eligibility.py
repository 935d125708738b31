"""Cluster eligibility: the 5-minute heartbeat and health windows, and the order of the checks."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

import numpy as np

from placement.scheduler.fleet.eligibility import EligibilityColumns, eligibility_reason
from placement.scheduler.fleet.inventory import FleetInventory
from placement.scheduler.fleet.types import AgentCondition, AgentStatus
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


def test_the_columns_find_the_same_clusters_with_the_same_reasons() -> None:
    unjoined = AgentStatus("MemberAgent", (AgentCondition("Joined", "False", NOW),), NOW)
    no_health = AgentStatus("MemberAgent", (AgentCondition("Joined", "True", NOW),), NOW)
    clusters = [
        member("fresh"),
        member("stale", heartbeat=NOW - timedelta(minutes=7, seconds=3)),
        replace(member("never"), agent_status=(AgentStatus("MemberAgent", ()),)),
        replace(member("leaving"), deletion_timestamp=NOW),
        replace(member("offline"), agent_status=()),
        replace(member("unjoined"), agent_status=(unjoined,)),
        replace(member("unjoined-stale"), agent_status=(replace(unjoined, last_received_heartbeat=None),)),
        replace(member("no-health"), agent_status=(no_health,)),
        member("sick", healthy="False", healthy_since=NOW - timedelta(hours=3)),
        member("briefly-sick", healthy="False", healthy_since=NOW - timedelta(minutes=1)),
        member("sick-and-stale", healthy="False", heartbeat=NOW - timedelta(minutes=6)),
    ]
    columns = FleetInventory(clusters).eligibility
    every = np.ones(len(clusters), dtype=bool)
    expected = {c.name: reason for c in clusters if (reason := eligibility_reason(c, NOW)) is not None}
    ineligible = np.flatnonzero(columns.ineligible(NOW, every))
    names = sorted(c.name for c in clusters)
    worded = _worded(columns, NOW, ineligible)
    assert dict(zip([names[i] for i in ineligible], worded, strict=True)) == expected
    assert set(expected) == set(names) - {"fresh", "briefly-sick"}


def _worded(columns: EligibilityColumns, now: datetime, indices: np.ndarray) -> list[str | None]:
    texts, codes = columns.reasons(now, indices)
    return [texts[code] if code >= 0 else None for code in codes.tolist()]


def test_reasons_are_worded_once_per_moment_and_anew_at_the_next() -> None:
    clusters = [member("fresh"), member("stale", heartbeat=NOW - timedelta(minutes=7, seconds=3))]
    columns = FleetInventory(clusters).eligibility
    stale = np.asarray([1])
    first = columns.reasons(NOW, stale)
    assert columns.reasons(NOW, stale)[0] is first[0]  # the same texts, not worded again
    [text] = _worded(columns, NOW, stale)
    assert text is not None and "7.05 minutes ago" in text
    [later] = _worded(columns, NOW + timedelta(minutes=1), stale)
    assert later is not None and "8.05 minutes ago" in later
    assert _worded(columns, NOW, np.asarray([0, 1])) == [None, text]
