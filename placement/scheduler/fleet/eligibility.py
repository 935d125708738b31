"""Cluster eligibility: the ClusterEligibility filter and the PickFixed validity check.

`eligibility_reason` is the reference (one cluster, upstream reason text); `EligibilityColumns` is the
same rule over a whole inventory, used to find the ineligible clusters quickly.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from placement.scheduler.fleet.types import AGENT_HEALTHY, AGENT_JOINED, MemberCluster
from placement.scheduler.timeutil import ZERO_TIME

HEARTBEAT_TIMEOUT = timedelta(minutes=5)
HEALTH_CHECK_TIMEOUT = timedelta(minutes=5)

_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MINUTE_NS = 60 * 10**9


def _go_minutes(elapsed: timedelta) -> float:
    """Go's `Duration.Minutes()` of a duration (whole minutes plus the float remainder)."""
    nanoseconds = (elapsed // timedelta(microseconds=1)) * 1000
    whole = int(nanoseconds / _MINUTE_NS) if nanoseconds < 0 else nanoseconds // _MINUTE_NS
    return float(whole) + float(nanoseconds - whole * _MINUTE_NS) / 60e9


def eligibility_reason(cluster: MemberCluster, now: datetime) -> str | None:
    """Why `cluster` is not eligible for resource placement at `now`, or None when it is."""
    if cluster.deletion_timestamp is not None:
        return "cluster has left the fleet"
    agent = cluster.member_agent
    if agent is None:
        return "cluster is not connected to the fleet: member agent not online yet"
    since_heartbeat = now - (agent.last_received_heartbeat or ZERO_TIME)
    if since_heartbeat > HEARTBEAT_TIMEOUT:
        return (
            "cluster is not connected to the fleet: no recent heartbeat signals "
            f"(last received {_go_minutes(since_heartbeat):.2f} minutes ago)"
        )
    joined = agent.condition(AGENT_JOINED)
    if joined is None or joined.status != "True":
        return "cluster is not connected to the fleet: member agent not joined yet"
    healthy = agent.condition(AGENT_HEALTHY)
    if healthy is None:
        return "cluster is not connected to the fleet: health condition from member agent is not available"
    since_transition = now - (healthy.last_transition_time or ZERO_TIME)
    # upstream: a short-lived unhealthy report is tolerated
    if healthy.status != "True" and since_transition > HEALTH_CHECK_TIMEOUT:
        return (
            "cluster is not connected to the fleet: unhealthy for a prolonged period of time "
            f"(last transitioned {_go_minutes(since_transition):.2f} minutes ago)"
        )
    return None


def _microseconds(moment: datetime | None) -> int:
    return ((moment or ZERO_TIME) - _EPOCH) // timedelta(microseconds=1)


@dataclass(frozen=True, slots=True)
class EligibilityColumns:
    """The agent-status facts of every cluster, times as exact integer microseconds since the epoch."""

    clusters: Sequence[MemberCluster]
    static_ineligible: np.ndarray  # deleted, no agent, not joined or no Healthy condition
    heartbeat: np.ndarray
    unhealthy: np.ndarray
    healthy_transition: np.ndarray

    @classmethod
    def build(cls, clusters: Sequence[MemberCluster]) -> EligibilityColumns:
        count = len(clusters)
        static_ineligible = np.zeros(count, dtype=bool)
        heartbeat = np.zeros(count, dtype=np.int64)
        unhealthy = np.zeros(count, dtype=bool)
        transition = np.zeros(count, dtype=np.int64)
        for index, cluster in enumerate(clusters):
            agent = cluster.member_agent
            if cluster.deletion_timestamp is not None or agent is None:
                static_ineligible[index] = True
                continue
            heartbeat[index] = _microseconds(agent.last_received_heartbeat)
            joined = agent.condition(AGENT_JOINED)
            healthy = agent.condition(AGENT_HEALTHY)
            if joined is None or joined.status != "True" or healthy is None:
                static_ineligible[index] = True
                continue
            unhealthy[index] = healthy.status != "True"
            transition[index] = _microseconds(healthy.last_transition_time)
        return cls(clusters, static_ineligible, heartbeat, unhealthy, transition)

    def ineligible(self, now: datetime, candidates: np.ndarray) -> np.ndarray:
        """Mask of candidates that are not eligible at `now`."""
        now_us = _microseconds(now)
        stale = (now_us - self.heartbeat) > HEARTBEAT_TIMEOUT // timedelta(microseconds=1)
        sick = self.unhealthy & (
            (now_us - self.healthy_transition) > HEALTH_CHECK_TIMEOUT // timedelta(microseconds=1)
        )
        return candidates & (self.static_ineligible | stale | sick)

    def reasons(self, now: datetime, indices: np.ndarray) -> list[str]:
        """The upstream reason text for each (ineligible) cluster index."""
        return [eligibility_reason(self.clusters[int(i)], now) or "" for i in indices]
