"""`inventory.relevance`: heartbeats and condition timestamps are noise unless eligibility moves."""

from datetime import UTC, datetime, timedelta

from inventory.relevance import changed
from placement.scheduler.fleet.types import AgentCondition, AgentStatus, MemberCluster
from placement.scheduler.ocm import types

NOW = datetime(2026, 11, 25, 12, 0, tzinfo=UTC)
AVAILABLE = "ManagedClusterConditionAvailable"


def ocm(status: str, at: datetime) -> types.ManagedCluster:
    condition = {"type": AVAILABLE, "status": status, "reason": "R", "lastTransitionTime": at.isoformat()}
    return types.ManagedCluster("c1", labels={"env": "prod"}, conditions=(condition,))


def member(heartbeat: datetime, healthy: str = "True", healthy_since: datetime = NOW) -> MemberCluster:
    agent = AgentStatus(
        "MemberAgent",
        (AgentCondition("Joined", "True", heartbeat), AgentCondition("Healthy", healthy, healthy_since)),
        heartbeat,
    )
    return MemberCluster("m1", labels={"env": "prod"}, agent_status=(agent,))


def test_an_ocm_condition_timestamp_is_noise_its_status_is_not() -> None:
    before = ocm("True", NOW - timedelta(hours=1))
    assert not changed(before, ocm("True", NOW), NOW)
    assert changed(before, ocm("Unknown", NOW), NOW)


def test_a_live_members_heartbeat_is_noise() -> None:
    assert not changed(member(NOW - timedelta(minutes=1)), member(NOW), NOW)


def test_a_heartbeat_that_makes_a_stale_member_eligible_counts() -> None:
    assert changed(member(NOW - timedelta(minutes=6)), member(NOW), NOW)


def test_a_heartbeat_moving_backwards_counts() -> None:
    assert changed(member(NOW), member(NOW - timedelta(minutes=1)), NOW)


def test_an_unhealthy_agents_transition_time_counts_a_healthy_ones_does_not() -> None:
    beat = NOW - timedelta(seconds=30)
    assert not changed(member(beat, "True", NOW - timedelta(hours=1)), member(beat, "True", NOW), NOW)
    assert changed(member(beat, "False", NOW - timedelta(hours=1)), member(beat, "False", NOW), NOW)


def test_a_label_adds_and_deletes_count() -> None:
    beat = NOW - timedelta(seconds=30)
    relabelled = MemberCluster("m1", labels={"env": "dev"}, agent_status=member(beat).agent_status)
    assert changed(member(beat), relabelled, NOW)
    assert changed(None, member(beat), NOW)
    assert changed(member(beat), None, NOW)
